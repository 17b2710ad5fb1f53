#!/usr/bin/env bats
# xg-snapshot: snapshots of the working tree, and replay clones.

load lib/helper
load lib/snapshot

setup() {
	snapshot_setup
}

# A repository with one commit of a few files.
make_repo() {
	git init -q -b main "$repo"
	cd "$repo"
	git config user.name 'Ada Tester'
	git config user.email ada@example.org
	mkdir -p src docs
	printf 'one\n' > src/one.c
	printf 'two\n' > src/two.c
	printf 'readme\n' > README
	printf 'guide\n' > docs/guide.md
	printf '#!/bin/sh\n' > run.sh
	git add -A
	git commit -qm 'first'
}

# The tree git's own plumbing makes of the working tree: add -A in a
# throwaway copy of the index (a linked worktree's own), then write-tree.
git_tree() {
	cp "$(git rev-parse --git-path index)" "$BATS_TEST_TMPDIR/git-index"
	GIT_INDEX_FILE="$BATS_TEST_TMPDIR/git-index" git add -A 2>/dev/null
	GIT_INDEX_FILE="$BATS_TEST_TMPDIR/git-index" git write-tree
	rm -f "$BATS_TEST_TMPDIR/git-index"
}

@test "a snapshot's tree is the tree git add -A would commit" {
	make_repo
	printf 'one, edited\n' > src/one.c
	rm src/two.c
	printf 'new\n' > src/three.c
	mkdir -p lib/deep && printf 'deep\n' > lib/deep/x.c
	printf '*.log\nbuild/\n/top-only\n!keep.log\nsecret-*\n' > .gitignore
	printf 'a\n' > a.log
	printf 'b\n' > keep.log
	mkdir build && printf 'o\n' > build/out.o
	printf 'x\n' > top-only
	printf 'y\n' > src/top-only
	printf 's\n' > src/secret-key
	printf '*.tmp\n' > docs/.gitignore
	printf 't\n' > docs/draft.tmp
	printf 't\n' > draft.tmp
	snap
	assert_success
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(field .changed) $(field .deleted) $(field .untracked)" "1 1 7"
	assert_equal "$(field .complete)" true
	git fsck --no-dangling --strict
}

@test "the record names the repository, the base and what went in" {
	make_repo
	printf 'more\n' >> README
	snap
	assert_success
	assert_equal "$(field .type)" snapshot
	assert_equal "$(field .repo)" "$repo"
	assert_equal "$(field .base)" "$(git rev-parse HEAD)"
	assert_equal "$(field .files)" 5
	assert_equal "$(field '.skipped | length')" 0
	assert_equal "$(field '.elapsed_ms | type')" number
	assert_equal "$(field 'has("reason")')" false
	assert_equal "$(git cat-file -t "$(field .commit)")" commit
}

@test "the commit has HEAD as parent and the configured author" {
	make_repo
	printf 'x\n' > new.txt
	snap
	c=$(field .commit)
	assert_equal "$(git rev-parse "$c^")" "$(git rev-parse HEAD)"
	assert_equal "$(git log -1 --format='%an <%ae>|%cn <%ce>' "$c")" \
		'Ada Tester <ada@example.org>|Ada Tester <ada@example.org>'
	assert_equal "$(git log -1 --format=%s "$c")" 'xg snapshot of the working tree'
}

@test "without a configured identity the commit is by xg <xg@localhost>" {
	make_repo
	git config --unset user.name
	git config --unset user.email
	snap
	assert_success
	assert_equal "$(git log -1 --format='%an <%ae>' "$(field .commit)")" 'xg <xg@localhost>'
}

@test "an unborn branch gives a commit without a parent and a null base" {
	git init -q "$repo"
	cd "$repo"
	printf 'first file\n' > a
	snap
	assert_success
	assert_equal "$(field .base)" null
	assert_equal "$(git rev-list --parents -1 "$(field .commit)")" "$(field .commit)"
	assert_equal "$(git show "$(field .commit):a")" 'first file'
}

@test "outside a repository there is no commit and the exit is 0, or 1 with --strict" {
	mkdir "$BATS_TEST_TMPDIR/plain"
	cd "$BATS_TEST_TMPDIR/plain"
	snap
	assert_success
	assert_equal "$(field .commit)" null
	assert_equal "$(field .reason)" not-a-repository
	assert_equal "$(field .complete)" false
	snap --strict
	assert_failure 1
	assert_equal "$(field .reason)" not-a-repository
}

@test "a bare repository gives no commit" {
	git init -q --bare "$BATS_TEST_TMPDIR/bare.git"
	snap -C "$BATS_TEST_TMPDIR/bare.git"
	assert_success
	assert_equal "$(field .commit)" null
	assert_equal "$(field .reason)" bare-repository
	snap --strict -C "$BATS_TEST_TMPDIR/bare.git"
	assert_failure 1
}

@test "an index it cannot read gives no commit and says why" {
	make_repo
	printf 'not an index at all, just some bytes to fill it up\n' > .git/index
	snap
	assert_success
	assert_equal "$(field .commit)" null
	assert_equal "$(field .reason)" unreadable
	assert_equal "$(field .error)" "cannot read the index '$repo/.git/index': not an index file"
}

@test "-C runs in another directory, also from a subdirectory" {
	make_repo
	printf 'edit\n' >> README
	cd /
	snap -C "$repo/src"
	assert_success
	assert_equal "$(field .repo)" "$repo"
	assert_equal "$(git -C "$repo" show "$(field .commit):README" | tail -1)" edit
}

@test "records pass through and each request gets a snapshot after it" {
	make_repo
	other="$BATS_TEST_TMPDIR/other"
	git init -q "$other"
	printf 'o\n' > "$other/o"
	input=$(printf '%s\n' '{"type":"notice","from":"t","text":"hi"}' \
		"{\"type\":\"request\",\"text\":\"a\",\"cwd\":\"$other\"}" \
		'{"type":"request","text":"b"}' '{"type":"other","x":[1, 2]}')
	run_split xg-snapshot <<<"$input"
	assert_success
	assert_equal "$(jq -r .type <<<"$output" | tr '\n' ' ')" \
		'notice request snapshot request snapshot other '
	assert_equal "$(sed -n 1p <<<"$output")" '{"type":"notice","from":"t","text":"hi"}'
	assert_equal "$(sed -n 6p <<<"$output")" '{"type":"other","x":[1, 2]}'
	assert_equal "$(sed -n 3p <<<"$output" | jq -r .repo)" "$other"
	assert_equal "$(sed -n 5p <<<"$output" | jq -r .repo)" "$repo"
}

@test "the request goes on, flushed, before its snapshot is taken" {
	make_repo
	# The index is a FIFO: the snapshot blocks opening it until the test
	# writes the real index in.  The request must come out before that.
	mv .git/index "$BATS_TEST_TMPDIR/index"
	mkfifo .git/index
	run python3 - "$BATS_TEST_TMPDIR/index" <<'PY'
import json, os, select, subprocess, sys
p = subprocess.Popen(["xg-snapshot"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
p.stdin.write(b'{"type":"request","text":"a"}\n')
p.stdin.flush()
r, _, _ = select.select([p.stdout], [], [], 20)
if not r:
    sys.exit("the request did not come out before the snapshot")
print(json.loads(p.stdout.readline())["type"])
with open(".git/index", "wb") as fifo, open(sys.argv[1], "rb") as real:
    fifo.write(real.read())
p.stdin.close()
for line in p.stdout:
    rec = json.loads(line)
    print(rec["type"], rec["files"])
print(p.wait())
PY
	assert_success
	assert_output $'request\nsnapshot 5\n0'
}

@test "symlinks are stored as links and the executable bit is kept" {
	make_repo
	ln -s README link
	ln -s src/one.c src/../one-link
	chmod +x run.sh
	printf '#!/bin/sh\n' > new-tool && chmod +x new-tool
	snap
	c=$(field .commit)
	assert_equal "$(git ls-tree "$c" link | cut -c1-6)" 120000
	assert_equal "$(git cat-file -p "$c:link")" README
	assert_equal "$(git ls-tree "$c" run.sh | cut -c1-6)" 100755
	assert_equal "$(git ls-tree "$c" new-tool | cut -c1-6)" 100755
	assert_equal "$(git ls-tree "$c" README | cut -c1-6)" 100644
	assert_equal "$(git rev-parse "$c^{tree}")" "$(git_tree)"
}

@test "names with spaces, newlines and bytes that are not UTF-8 go in" {
	make_repo
	printf 'a\n' > 'with space.txt'
	printf 'b\n' > "$(printf 'new\nline')"
	printf 'c\n' > "$(printf 'latin1-\351t\351')"
	mkdir "dir with space" && printf 'd\n' > "dir with space/f"
	git add "with space.txt" && git commit -qm spaces
	printf 'edited\n' > 'with space.txt'
	snap
	assert_success
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(field .untracked)" 3
}

@test "a submodule is recorded at its HEAD, as git add -A records it" {
	make_repo
	sub="$BATS_TEST_TMPDIR/sub"
	git init -q "$sub"
	git -C "$sub" -c user.name=s -c user.email=s@s commit -q --allow-empty -m s1
	git -c protocol.file.allow=always submodule -q add "$sub" sub
	git commit -qm 'add sub'
	pinned=$(git rev-parse HEAD:sub)
	snap
	assert_equal "$(git ls-tree "$(field .commit)" sub | cut -f1)" "160000 commit $pinned"
	assert_equal "$(field .changed)" 0
	git -C sub -c user.name=s -c user.email=s@s commit -q --allow-empty -m s2
	snap
	assert_success
	assert_equal "$(git ls-tree "$(field .commit)" sub | cut -f1)" \
		"160000 commit $(git -C sub rev-parse HEAD)"
	assert_equal "$(field .changed)" 1
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
}

@test "an untracked repository inside goes in as a gitlink to its HEAD" {
	make_repo
	git init -q inner
	git -C inner -c user.name=s -c user.email=s@s commit -q --allow-empty -m inner
	snap
	assert_equal "$(git ls-tree "$(field .commit)" inner | cut -f1)" \
		"160000 commit $(git -C inner rev-parse HEAD)"
}

@test "untracked files over --max-file-size are skipped, tracked ones are not" {
	make_repo
	head -c 3000 /dev/zero > big.bin
	head -c 100 /dev/zero > small.bin
	head -c 3000 /dev/zero > README
	snap --max-file-size 2k
	assert_success
	assert_equal "$(field '.skipped | map(.path + ":" + .reason) | join(",")')" big.bin:max-file-size
	assert_equal "$(field .complete)" false
	c=$(field .commit)
	assert_equal "$(git cat-file -s "$c:README")" 3000
	assert_equal "$(git cat-file -s "$c:small.bin")" 100
	run git cat-file -e "$c:big.bin"
	assert_failure
}

@test "past --max-files the other untracked files are skipped" {
	make_repo
	mkdir many
	for i in 1 2 3 4 5; do printf '%s\n' $i > many/f$i; done
	snap --max-files 3
	assert_success
	assert_equal "$(field .untracked)" 3
	assert_equal "$(field '.skipped | map(.path + ":" + .reason) | join(",")')" \
		many/f4:max-files,many/f5:max-files
	assert_equal "$(git ls-tree --name-only "$(field .commit)" many/ | tr '\n' ' ')" \
		'many/f1 many/f2 many/f3 '
	assert_equal "$(field .complete)" false
}

@test "an untracked directory met past --max-files is skipped whole" {
	make_repo
	printf 'a\n' > a-first
	mkdir later && printf 'b\n' > later/b
	snap --max-files 1
	assert_equal "$(field '.skipped | map(.path + ":" + .reason) | join(",")')" later/:max-files
}

@test "past --max-total-size the untracked files that do not fit are skipped" {
	make_repo
	head -c 600 /dev/zero > a.bin
	head -c 600 /dev/zero > b.bin
	head -c 300 /dev/zero > c.bin
	snap --max-total-size 1000
	assert_success
	assert_equal "$(field '.skipped | map(.path + ":" + .reason) | join(",")')" b.bin:max-total-size
	assert_equal "$(git ls-tree --name-only "$(field .commit)" | grep bin | tr '\n' ' ')" 'a.bin c.bin '
	assert_equal "$(field .complete)" false
}

@test "a tiny --timeout gives up on a big tree and writes nothing" {
	# How long it takes, not memory: left to the plain pass, where the
	# times are the program's own.
	! sanitized || skip "a timing test: left to the plain pass"
	make_repo
	for d in $(seq 1 40); do
		mkdir -p "t$d"
		for f in $(seq 1 50); do printf '%s\n' "$d $f" > "t$d/f$f"; done
	done
	git add -A && git commit -qm big
	for d in $(seq 1 40); do printf 'u\n' > "t$d/untracked"; done
	before=$(find .git -type f | sort | xargs sha256sum)
	snap --timeout 1ms
	assert_success
	assert_equal "$(field .commit)" null
	assert_equal "$(field .reason)" timeout
	assert_equal "$(field .complete)" false
	assert_equal "$(find .git -type f | sort | xargs sha256sum)" "$before"
	snap --strict --timeout 1ms
	assert_failure 1
	snap --timeout 30
	assert_success
	assert_equal "$(field .untracked)" 40
}

@test "it changes nothing in .git but objects, xg-untracked and xg-settings, nor any working-tree file" {
	make_repo
	git -C "$repo" tag v1
	printf 'staged\n' >> README && git add README
	printf 'unstaged\n' >> src/one.c
	rm docs/guide.md
	printf 'u\n' > untracked.txt
	printf 'build/\n' > .gitignore && mkdir build && printf 'o\n' > build/o
	ln -s README link
	state() {
		(cd .git && find . -path ./objects -prune -o ! -name xg-untracked ! -name xg-settings -print | sort)
		(cd .git && find . -path ./objects -prune -o -type f ! -name xg-untracked ! -name xg-settings -print0 |
			sort -z | xargs -0 sha256sum)
		find . -path ./.git -prune -o -print0 | sort -z |
			xargs -0 stat -c '%n %F %a %s %y %Y'
		find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum
	}
	before=$(state)
	index=$(sha256sum < .git/index)
	for i in 1 2 3; do snap; assert_success; done
	assert_equal "$(state)" "$before"
	assert_equal "$(sha256sum < .git/index)" "$index"
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert [ -f .git/xg-untracked ]
}

# A repository whose index holds racy's current stat data (a time of
# 1700000000) with the id of its old content, aaaa; the file holds bbbb.
stale_entry() {
	make_repo
	printf 'aaaa\n' > racy
	git add racy && git commit -qm racy
	old=$(git rev-parse HEAD:racy)
	printf 'bbbb\n' > racy
	touch -d @1700000000 racy
	xg-test snapshot stale-entry racy "$old"
}

@test "an entry edited in the second the index was written is read again" {
	stale_entry
	# Written in the same second as the file: git cannot trust the entry.
	touch -d @1700000000 .git/index
	assert_equal "$(git status --porcelain racy)" ' M racy'
	snap
	assert_equal "$(git show "$(field .commit):racy")" bbbb
}

@test "an entry older than the index is trusted without reading the file" {
	stale_entry
	touch -d @1700000100 .git/index
	# git trusts the stat data too: it sees no change.
	assert_equal "$(git status --porcelain racy)" ''
	snap
	assert_equal "$(git show "$(field .commit):racy")" aaaa
	assert_equal "$(field .changed)" 0
}

# xg-untracked with the blob it names for path replaced by id, and its
# checksum made good again.
forge_known() {
	local body
	body=$(sed -e '$d' -e "s|^[0-9a-f]\{40\}\( .* $1\)\$|$2\1|" .git/xg-untracked)
	{ printf '%s\n' "$body"; printf 'sha1 %s\n' "$(printf '%s\n' "$body" | sha1sum | cut -c1-40)"; } \
		> .git/xg-untracked
}

# A repository with two untracked files that a first snapshot has read,
# and a blob "forged" in its objects.
known_repo() {
	make_repo
	printf 'notes\n' > notes.txt
	mkdir -p tmp && printf 'scratch\n' > tmp/scratch
	# Past a tick of the clock files are stamped with, so that the first
	# snapshot's reference time is later than their change.
	sleep 0.1
	snap
	assert_success
	grep -q ' notes.txt$' .git/xg-untracked
	grep -q ' tmp/scratch$' .git/xg-untracked
	bytes=$(field .bytes)
	forged=$(printf 'forged\n' | git hash-object -w --stdin)
}

@test "an untracked file unchanged since the last snapshot is not read again" {
	known_repo
	forge_known notes.txt "$forged"
	snap
	# The blob comes from xg-untracked, which is how it is seen here.
	assert_equal "$(git show "$(field .commit):notes.txt")" forged
	assert_equal "$(git show "$(field .commit):tmp/scratch")" scratch
	# Its bytes count as the file's, as when it was read.
	assert_equal "$(field .bytes)" "$bytes"
	assert_equal "$(field .untracked)" 2
}

@test "an untracked file rewritten with its size and times kept is read again" {
	known_repo
	forge_known notes.txt "$forged"
	stamp=$(stat -c %Y notes.txt)
	printf 'NOTES\n' > notes.txt
	touch -d "@$stamp" notes.txt
	snap
	# Only its ctime tells, and that no program can set back.
	assert_equal "$(git show "$(field .commit):notes.txt")" NOTES
}

@test "a damaged or foreign xg-untracked is ignored, and written again" {
	known_repo
	forge_known notes.txt "$forged"
	sed -i '1s/^xg-untracked \([0-9]*\) /xg-untracked \1  /' .git/xg-untracked
	snap
	assert_equal "$(git show "$(field .commit):notes.txt")" notes
	tail -n 1 .git/xg-untracked | grep -q '^sha1 '
	# The checksum holds again.
	assert_equal "$(sed '$d' .git/xg-untracked | sha1sum | cut -c1-40)" \
		"$(tail -n 1 .git/xg-untracked | cut -c6-)"
	# A checksum that does not match, or the file of another working tree.
	forge_known notes.txt "$forged"
	printf 'x' >> .git/xg-untracked
	snap
	assert_equal "$(git show "$(field .commit):notes.txt")" notes
	forge_known notes.txt "$forged"
	body=$(sed -e '$d' -e "1s|$repo|/elsewhere|" .git/xg-untracked)
	{ printf '%s\n' "$body"; printf 'sha1 %s\n' "$(printf '%s\n' "$body" | sha1sum | cut -c1-40)"; } \
		> .git/xg-untracked
	snap
	assert_equal "$(git show "$(field .commit):notes.txt")" notes
	# One past any size a snapshot writes is not read whole (its peak
	# memory says so), and is replaced.
	truncate -s 100M .git/xg-untracked
	rss=$(python3 -c 'import resource, subprocess, sys
subprocess.run(["xg-snapshot"], stdin=subprocess.DEVNULL, stdout=open("rec", "w"), check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)')
	assert [ "$rss" -lt 90000 ]
	assert_equal "$(git show "$(jq -r .commit rec):notes.txt")" notes
	assert [ "$(stat -c %s .git/xg-untracked)" -lt 100000 ]
}

@test "a known blob git has pruned is made again from the file" {
	known_repo
	forge_known notes.txt 1234567890123456789012345678901234567890
	snap
	assert_equal "$(git show "$(field .commit):notes.txt")" notes
	git fsck --no-dangling
}

@test "a file an attribute converts is read again; one no attribute converts is known" {
	known_repo
	git config filter.up.clean 'tr a-z A-Z'
	# A file with CRLF endings, and one without a CR.
	printf 'notes\r\n' > notes.txt
	printf 'lf\n' > lf.txt
	for rule in text text=auto eol=lf crlf ident filter=up working-tree-encoding=UTF-16; do
		# Known again while no attribute names it.
		rm -f .gitattributes
		sleep 0.1
		snap
		forge_known notes.txt "$forged"
		forge_known lf.txt "$forged"
		grep -q "^$forged .* notes.txt\$" .git/xg-untracked
		forge_known tmp/scratch "$forged"
		printf '*.txt %s\n*.png binary\n' "$rule" > .gitattributes
		snap
		assert_success
		commit=$(field .commit)
		# Its stat data is as known, yet its content is read again, and
		# converted: its CR gone where a rule says line endings.
		case $rule in
		filter=up) want=NOTESR ;;
		ident | working-tree-encoding=*) want=notesR ;;
		*) want=notes ;;
		esac
		assert_equal "$(git show "$commit:notes.txt" | tr '\r' R)" "$want"
		# One the attributes leave alone is taken from what is known.
		assert_equal "$(git show "$commit:tmp/scratch")" forged
		# A converted file is not kept for the next one.
		run grep -c ' notes.txt$' .git/xg-untracked
		assert_output 0
		grep -q ' tmp/scratch$' .git/xg-untracked
		# Line endings are converted only where there is a CR: a file
		# without one is its own blob, known and kept; under any other
		# rule it is read again.
		case $rule in
		text | text=auto | eol=lf | crlf)
			assert_equal "$(git show "$commit:lf.txt")" forged
			grep -q ' lf.txt$' .git/xg-untracked ;;
		*)
			want=lf
			[[ $rule != filter=up ]] || want=LF
			assert_equal "$(git show "$commit:lf.txt")" "$want"
			run grep -c ' lf.txt$' .git/xg-untracked
			assert_output 0 ;;
		esac
	done
	# What a line-ending rule kept is read again once a rule converts
	# more; what no rule converted, once one converts line endings.
	printf '*.txt text\n' > .gitattributes
	sleep 0.1
	snap
	forge_known lf.txt "$forged"
	grep -q "^$forged .* 0 lf.txt\$" .git/xg-untracked
	printf '*.txt filter=up\n' > .gitattributes
	snap
	assert_equal "$(git show "$(field .commit):lf.txt")" LF
	# An attribute unset converts nothing; core.autocrlf converts all
	# but those.
	printf '*.txt -text\n' > .gitattributes
	snap
	sleep 0.1
	snap
	forge_known notes.txt "$forged"
	grep -q "^$forged .* 1 notes.txt\$" .git/xg-untracked
	forge_known tmp/scratch "$forged"
	git config core.autocrlf input
	snap
	assert_equal "$(git show "$(field .commit):notes.txt")" forged
	assert_equal "$(git show "$(field .commit):tmp/scratch")" scratch
	git config --unset core.autocrlf
	printf '*.txt text\n' > .gitattributes
	snap
	assert_equal "$(git show "$(field .commit):notes.txt")" notes
}

@test "what converts is decided as git decides it: the last rule to say, the deepest file, the index's" {
	known_repo
	mkdir -p sub/deep
	printf 'a\n' > sub/a.txt
	printf 'b\n' > sub/deep/b.png
	printf 'c\n' > sub/deep/c.TXT
	printf 'd\n' > sub/deep/d.md
	# Each with a CR, which any rule of line endings would convert.
	for f in notes.txt sub/a.txt sub/deep/b.png sub/deep/c.TXT sub/deep/d.md; do
		sed -i 's/$/\r/' "$f"
	done
	sleep 0.1
	snap
	forged=$(printf 'forged\n' | git hash-object -w --stdin)
	# Top down, the last line to say wins: *.txt converts, except under
	# sub/ where it is unset again; an image is binary, whatever * says.
	printf '* text=auto\n*.png binary\n' > .gitattributes
	printf '*.txt -text\ndeep/*.md eol=lf\n' > sub/.gitattributes
	# The deeper file says last; *.txt does not name c.TXT.
	printf 'd.md -eol -text\n' > sub/deep/.gitattributes
	for f in notes.txt sub/a.txt sub/deep/b.png sub/deep/c.TXT sub/deep/d.md; do
		forge_known "$f" "$forged"
	done
	snap
	assert_success
	forged_in() { [[ $(git show "$(field .commit):$1") == forged ]]; }
	! forged_in notes.txt
	forged_in sub/a.txt
	forged_in sub/deep/b.png
	! forged_in sub/deep/c.TXT
	forged_in sub/deep/d.md
	# A .gitattributes the index has and the tree does not is libgit2's
	# to read: it still counts.
	rm .gitattributes sub/.gitattributes sub/deep/.gitattributes
	snap
	grep -q ' sub/a.txt$' .git/xg-untracked
	printf 'a.txt text\n' > sub/.gitattributes
	git add sub/.gitattributes && git commit -qm attributes
	rm sub/.gitattributes
	forge_known sub/a.txt "$forged"
	forge_known notes.txt "$forged"
	snap
	assert_equal "$(git show "$(field .commit):sub/a.txt")" a
	assert_equal "$(git show "$(field .commit):notes.txt")" forged
}

@test "an edited tracked file unchanged since the last snapshot is not read again" {
	make_repo
	printf 'one, edited\n' > src/one.c
	printf 'two, edited\n' > src/two.c
	sleep 0.1
	snap
	assert_success
	assert_equal "$(field .changed)" 2
	bytes=$(field .bytes)
	grep -q ' src/one.c$' .git/xg-untracked
	forged=$(printf 'forged\n' | git hash-object -w --stdin)
	forge_known src/one.c "$forged"
	snap
	assert_equal "$(git show "$(field .commit):src/one.c")" forged
	assert_equal "$(git show "$(field .commit):src/two.c")" 'two, edited'
	assert_equal "$(field .bytes)" "$bytes"
	assert_equal "$(field .changed)" 2
	# Rewritten with its size and times kept: its ctime tells.
	stamp=$(stat -c %Y src/one.c)
	printf 'ONE, EDITED\n' > src/one.c
	touch -d "@$stamp" src/one.c
	snap
	assert_equal "$(git show "$(field .commit):src/one.c")" 'ONE, EDITED'
	# An attribute that converts it: read again, however known (its
	# line endings convert only with a CR there).
	printf 'ONE, EDITED\r\n' > src/one.c
	sleep 0.1
	snap
	forge_known src/one.c "$forged"
	forge_known src/two.c "$forged"
	# two.c, without a CR, is its own blob under the same rule.
	printf '*.c text eol=lf\n' > src/.gitattributes
	snap
	assert_equal "$(git show "$(field .commit):src/one.c")" 'ONE, EDITED'
	assert_equal "$(git show "$(field .commit):src/two.c")" forged
	grep -q "^$forged .* 0 src/two.c\$" .git/xg-untracked
	# Put back as the index has it, it is no change at all.
	git checkout -- src/one.c src/two.c
	rm src/.gitattributes
	snap
	assert_equal "$(field .changed)" 0
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git rev-parse 'HEAD^{tree}')"
}

# snap_traced: a snapshot, with $loaded what the dynamic loader loaded.
snap_traced() {
	run_split env LD_DEBUG=files xg-snapshot "$@" < /dev/null
	loaded=$(grep -o 'file=[^ ]*' <<<"$stderr" | sort -u | tr '\n' ' ')
}

# The fields of the record that do not depend on the time it was taken.
same_fields() {
	jq -c '{repo, base, files, bytes, changed, deleted, untracked, skipped, complete}' <<<"$output"
}

@test "a repository as the last snapshot found it is snapshot without libgit2, to the same tree" {
	make_repo
	printf 'one, edited\n' > src/one.c
	rm docs/guide.md
	printf 'new\n' > new.txt
	printf '*.log\n' > .gitignore && printf 'l\n' > x.log
	snap_traced
	assert_success
	[[ $loaded == *libgit2* ]] || fail "the first snapshot did not load libgit2: $loaded"
	assert [ -f .git/xg-settings ]
	first=$(same_fields)
	tree=$(git rev-parse "$(field .commit)^{tree}")
	snap_traced
	assert_success
	[[ $loaded != *libgit2* ]] || fail "libgit2 was loaded: $loaded"
	assert_equal "$(same_fields)" "$first"
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$tree"
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(git log -1 --format='%an <%ae>|%cn <%ce>|%P' "$(field .commit)")" \
		"Ada Tester <ada@example.org>|Ada Tester <ada@example.org>|$(git rev-parse HEAD)"
	# A change in the tree is taken the same way, its objects written
	# where git reads them.
	printf 'two, edited\n' > src/two.c
	snap_traced
	[[ $loaded != *libgit2* ]] || fail "libgit2 was loaded: $loaded"
	assert_equal "$(git show "$(field .commit):src/two.c")" 'two, edited'
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	git fsck --strict --no-dangling
	# Without the file it is libgit2's again, to the same record.
	rm .git/xg-settings
	snap_traced
	[[ $loaded == *libgit2* ]] || fail "libgit2 was not loaded: $loaded"
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
}

@test "a changed configuration or environment is read by libgit2 again" {
	make_repo
	printf 'x\n' > scratch.tmp
	snap
	assert_equal "$(git show "$(field .commit):scratch.tmp")" x
	git config user.name 'Bea Other'
	snap_traced
	[[ $loaded == *libgit2* ]] || fail "libgit2 was not loaded: $loaded"
	assert_equal "$(git log -1 --format=%an "$(field .commit)")" 'Bea Other'
	snap_traced
	[[ $loaded != *libgit2* ]] || fail "libgit2 was loaded: $loaded"
	assert_equal "$(git log -1 --format=%an "$(field .commit)")" 'Bea Other'
	# The global configuration, where HOME says it is.
	printf '*.tmp\n' > "$HOME/ignores"
	printf '[core]\n\texcludesFile = ~/ignores\n' > "$HOME/.gitconfig"
	snap
	assert_equal "$(git ls-tree --name-only "$(field .commit)" scratch.tmp)" ''
	snap_traced
	[[ $loaded != *libgit2* ]] || fail "libgit2 was loaded: $loaded"
	assert_equal "$(git ls-tree --name-only "$(field .commit)" scratch.tmp)" ''
	HOME=$BATS_TEST_TMPDIR snap_traced
	[[ $loaded == *libgit2* ]] || fail "another HOME did not load libgit2: $loaded"
	assert_equal "$(git show "$(field .commit):scratch.tmp")" x
	# A GIT_ variable may choose other files: libgit2 reads them.
	GIT_CONFIG_GLOBAL=/dev/null snap_traced
	[[ $loaded == *libgit2* ]] || fail "a GIT_ variable did not load libgit2: $loaded"
	# An include names files the fingerprint does not follow.
	printf '[user]\n\tname = Included\n' > "$HOME/more"
	printf '[include]\n\tpath = ~/more\n' >> "$HOME/.gitconfig"
	for i in 1 2; do
		snap_traced
		[[ $loaded == *libgit2* ]] || fail "an include did not load libgit2: $loaded"
	done
	assert_equal "$(git log -1 --format=%an "$(field .commit)")" 'Bea Other'
	git config --unset user.name
	snap
	assert_equal "$(git log -1 --format=%an "$(field .commit)")" Included
}

@test "HEAD is followed without libgit2: new commits, packed refs, a detached HEAD, an unborn branch" {
	make_repo
	snap
	git commit -q --allow-empty -m second
	snap_traced
	[[ $loaded != *libgit2* ]] || fail "libgit2 was loaded: $loaded"
	assert_equal "$(field .base)" "$(git rev-parse HEAD)"
	assert_equal "$(git rev-parse "$(field .commit)^")" "$(git rev-parse HEAD)"
	git pack-refs --all
	assert [ ! -e .git/refs/heads/main ]
	snap_traced
	[[ $loaded != *libgit2* ]] || fail "libgit2 was loaded: $loaded"
	assert_equal "$(field .base)" "$(git rev-parse HEAD)"
	git checkout -q --detach HEAD~1
	snap_traced
	[[ $loaded != *libgit2* ]] || fail "libgit2 was loaded: $loaded"
	assert_equal "$(field .base)" "$(git rev-parse HEAD)"
	git checkout -q --orphan fresh
	snap_traced
	[[ $loaded != *libgit2* ]] || fail "libgit2 was loaded: $loaded"
	assert_equal "$(field .base)" null
	assert_equal "$(git rev-list --count "$(field .commit)")" 1
	# A HEAD this cannot read is libgit2's to read.
	git checkout -q main
	git symbolic-ref HEAD refs/worktree/odd
	snap_traced
	[[ $loaded == *libgit2* ]] || fail "libgit2 was not loaded: $loaded"
	assert_equal "$(field .base)" null
}

@test "line-ending rules leave a file without a CR as it is, without libgit2; one with CRs is converted" {
	make_repo
	printf '*.c text eol=lf\n*.md text=auto\n*.bat eol=crlf\n' > .gitattributes
	git add .gitattributes && git commit -qm attributes
	snap
	printf 'one, edited\n' > src/one.c
	printf 'new\n' > new.md
	printf 'echo\n' > run.bat
	snap_traced
	assert_success
	[[ $loaded != *libgit2* ]] || fail "libgit2 was loaded: $loaded"
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	printf 'one\r\nedited\r\n' > src/one.c
	printf 'new\r\n' > new.md
	printf 'echo\r\n' > run.bat
	snap_traced
	[[ $loaded == *libgit2* ]] || fail "libgit2 was not loaded: $loaded"
	assert_equal "$(git show "$(field .commit):src/one.c")" "$(printf 'one\nedited')"
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
}

@test "a damaged xg-settings is ignored, and written again" {
	make_repo
	snap
	good=$(cat .git/xg-settings)
	sed -i 's/^core 1 1 1 0$/core 0 1 1 0/' .git/xg-settings
	snap_traced
	[[ $loaded == *libgit2* ]] || fail "libgit2 was not loaded: $loaded"
	assert_equal "$(cat .git/xg-settings)" "$good"
	# One made for another repository is not this one's.
	sed -e '$d' -e "s|$repo/|/elsewhere/|" .git/xg-settings > "$BATS_TEST_TMPDIR/body"
	{ cat "$BATS_TEST_TMPDIR/body"; printf 'sha1 %s\n' "$(sha1sum < "$BATS_TEST_TMPDIR/body" | cut -c1-40)"; } \
		> .git/xg-settings
	snap_traced
	[[ $loaded == *libgit2* ]] || fail "libgit2 was not loaded: $loaded"
	assert_equal "$(cat .git/xg-settings)" "$good"
}

@test "objects git has packed are found there and not written again" {
	make_repo
	printf 'u\n' > untracked.txt
	snap
	# Kept by a tag, the snapshot's objects go into the pack.
	git tag kept "$(field .commit)"
	git gc -q --prune=now
	loose() { find .git/objects -type f ! -path '*/pack/*' ! -path '*/info/*' | awk -F/ '{ print $(NF - 1) $NF }'; }
	assert_equal "$(loose)" ''
	snap
	assert_success
	# The commit alone may be new (not in the same second): the trees and
	# blobs are in the pack.
	[[ -z $(loose) || $(loose) == "$(field .commit)" ]] || fail "written again: $(loose)"
	git cat-file -e "$(field .commit)"
	git fsck --strict --no-dangling
}

@test "a repository with alternates asks libgit2 for the objects it borrows" {
	make_repo
	git clone -q --shared "$repo" "$BATS_TEST_TMPDIR/borrower"
	cd "$BATS_TEST_TMPDIR/borrower"
	git config user.name 'Ada Tester'
	git config user.email ada@example.org
	for i in 1 2; do
		snap_traced
		assert_success
		[[ $loaded == *libgit2* ]] || fail "libgit2 was not loaded: $loaded"
	done
	# Nothing of the borrowed tree is written here; the commits are (one,
	# or two when the snapshots fell in different seconds).
	local f types=
	for f in $(find .git/objects -type f ! -path '*/info/*'); do
		f=${f#.git/objects/}
		types="$types $(git cat-file -t "${f%%/*}${f#*/}")"
	done
	[[ "$types" == " commit" || "$types" == " commit commit" ]] || fail "written here:$types"
}

@test "many new files go into one pack that git accepts" {
	make_repo
	mkdir gen
	for i in $(seq 1 40); do printf 'file %s\n' "$i" > "gen/f$i"; done
	head -c 200000 /dev/urandom > gen/big.bin
	snap
	assert_success
	assert_equal "$(ls .git/objects/pack/*.pack | wc -l)" 1
	git verify-pack .git/objects/pack/*.idx
	git fsck --no-dangling --strict
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	cmp gen/big.bin <(git cat-file blob "$(field .commit):gen/big.bin")
}

@test "a conflicted path is taken from the working tree" {
	make_repo
	git checkout -qb other
	printf 'theirs\n' > README && git commit -qam theirs
	git checkout -q main
	printf 'ours\n' > README && git commit -qam ours
	run git merge -q other
	assert_failure
	printf 'resolved by hand\n' > README
	snap
	assert_success
	assert_equal "$(git show "$(field .commit):README")" 'resolved by hand'
}

@test "replay makes a shared clone whose status is the source's" {
	make_repo
	printf '.env\nnode_modules/\n*.log\n' > .gitignore
	git add .gitignore && git commit -qm ignore
	printf 'edit\n' >> README
	rm docs/guide.md
	printf 'new\n' > src/new.c
	chmod +x run.sh
	printf 'SECRET=1\n' > .env
	mkdir -p node_modules/pkg && printf 'm\n' > node_modules/pkg/index.js
	printf 'l\n' > debug.log
	printf '.env\nnode_modules/\n' > .worktreeinclude
	snap
	c=$(field .commit)
	clone="$BATS_TEST_TMPDIR/clone"
	run_split xg-snapshot replay "$c" "$clone" < /dev/null
	assert_success
	assert_equal "$(jq -r .type <<<"$output")" replay
	assert_equal "$(jq -r .dir <<<"$output")" "$clone"
	assert_equal "$(jq -r .base <<<"$output")" "$(git rev-parse HEAD)"
	assert_equal "$(jq -r '.included | join(",")' <<<"$output")" '.env,node_modules/pkg/index.js'
	assert_equal "$(git -C "$clone" status --porcelain)" "$(git status --porcelain)"
	assert_equal "$(git -C "$clone" rev-parse HEAD)" "$(git rev-parse HEAD)"
	assert_equal "$(git -C "$clone" symbolic-ref HEAD)" refs/heads/main
	assert_equal "$(cat "$clone/.env")" 'SECRET=1'
	assert [ ! -e "$clone/debug.log" ]
	# The objects are borrowed, not copied.
	assert_equal "$(cat "$clone/.git/objects/info/alternates")" "$repo/.git/objects"
	assert_equal "$(find "$clone/.git/objects" -type f ! -path '*/info/*' | wc -l)" 0
	assert_equal "$(git -C "$clone" rev-parse origin/main)" "$(git rev-parse main)"
	git -C "$clone" fsck --no-dangling
}

@test "replay --base puts HEAD and the index at another commit" {
	make_repo
	first=$(git rev-parse HEAD)
	printf 'second\n' >> README && git commit -qam second
	printf 'third\n' >> README
	snap
	clone="$BATS_TEST_TMPDIR/clone"
	run_split xg-snapshot replay --base "$first" "$(field .commit)" "$clone" < /dev/null
	assert_success
	assert_equal "$(git -C "$clone" rev-parse HEAD)" "$first"
	assert_equal "$(git -C "$clone" status --porcelain)" ' M README'
	assert_equal "$(tail -2 "$clone/README" | tr '\n' ' ')" 'second third '
}

@test "replay - takes the commit of the snapshot record it reads" {
	make_repo
	printf 'x\n' > x
	clone="$BATS_TEST_TMPDIR/clone"
	run_split bash -c "xg-snapshot < /dev/null | xg-snapshot replay - '$clone'"
	assert_success
	assert_equal "$(jq -r .type <<<"$output" | tr '\n' ' ')" 'snapshot replay '
	assert_equal "$(git -C "$clone" status --porcelain)" '?? x'
}

@test "replay refuses a directory that is not empty and leaves it alone" {
	make_repo
	snap
	mkdir -p "$BATS_TEST_TMPDIR/full" && printf 'mine\n' > "$BATS_TEST_TMPDIR/full/keep"
	run_split xg-snapshot replay "$(field .commit)" "$BATS_TEST_TMPDIR/full" < /dev/null
	assert_failure 65
	assert_equal "$stderr" "xg-snapshot: refusing '$BATS_TEST_TMPDIR/full': it exists and is not empty"
	assert_equal "$(ls "$BATS_TEST_TMPDIR/full")" keep
}

@test "a replay that fails removes what it made" {
	make_repo
	snap
	c=$(field .commit)
	# An empty directory may be used; a failure empties it again.
	mkdir "$BATS_TEST_TMPDIR/empty"
	git tag broken "$(git rev-parse HEAD)"
	printf 'not a commit\n' > .git/refs/tags/broken
	run_split xg-snapshot replay --base broken "$c" "$BATS_TEST_TMPDIR/empty" < /dev/null
	assert_failure 65
	assert [ -d "$BATS_TEST_TMPDIR/empty" ]
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/empty")" ''
	run_split xg-snapshot replay no-such-commit "$BATS_TEST_TMPDIR/new" < /dev/null
	assert_failure 65
	assert [ ! -e "$BATS_TEST_TMPDIR/new" ]
}

@test "bad options are usage errors" {
	run_split xg-snapshot --timeout soon < /dev/null
	assert_failure 2
	run_split xg-snapshot --max-files lots < /dev/null
	assert_failure 2
	run_split xg-snapshot replay onlyone < /dev/null
	assert_failure 2
	run_split xg-snapshot stray < /dev/null
	assert_failure 2
}

@test "ignore patterns match as git's own do" {
	make_repo
	cat > .gitignore <<'PATTERNS'
# a comment, then patterns of every kind
\#hash
trailing-space\ 
trailing-tab	
**/deep-any
a/**/b.txt
logs/**
[a-c]x.dat
[!a-c]y.dat
x[[:digit:]]
*.o
!keep.o
only-dir/
/anchored
nested/inner
q?z
PATTERNS
	mkdir -p s/t a/m/n logs/old only-dir nested sub/nested
	for f in '#hash' 'trailing-space ' 'trailing-tab	' s/t/deep-any a/b.txt a/m/n/b.txt \
		logs/old/l ax.dat dx.dat ay.dat dy.dat x1 xa f.o keep.o s/only-dir \
		only-dir/f anchored s/anchored nested/inner sub/nested/inner qiz qz plain; do
		printf 'x\n' > "$f"
	done
	mkdir -p build/keep && printf 'k\n' > build/keep/tracked.o
	git add -f build/keep/tracked.o && git commit -qm forced
	printf 'b/\n' >> .gitignore
	mkdir -p b && printf 'u\n' > b/u
	printf 'n\n' > build/keep/neighbour.o
	printf 'n\n' > build/keep/neighbour.c
	snap
	assert_success
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	git ls-tree -r --name-only "$(field .commit)" > "$BATS_TEST_TMPDIR/names"
	grep -qx 'build/keep/neighbour.c' "$BATS_TEST_TMPDIR/names"
	! grep -qx 'build/keep/neighbour.o' "$BATS_TEST_TMPDIR/names"
}

@test "ignore rules from info/exclude and core.excludesFile apply" {
	make_repo
	printf 'excluded-here\n' > .git/info/exclude
	mkdir -p "$XDG_CONFIG_HOME/git"
	printf 'global-*\n' > "$XDG_CONFIG_HOME/git/ignore"
	printf 'x\n' > excluded-here
	printf 'x\n' > global-one
	printf 'x\n' > kept
	snap
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(field .untracked)" 1
	printf 'other-*\n' > "$BATS_TEST_TMPDIR/ignore"
	git config core.excludesFile "$BATS_TEST_TMPDIR/ignore"
	printf 'x\n' > other-one
	snap
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(git ls-tree --name-only "$(field .commit)" | grep -c global-one)" 1
}

@test "an index of version 4 is read as well" {
	make_repo
	mkdir -p src/a/b && printf 'x\n' > src/a/b/c && git add -A && git commit -qm more
	git update-index --index-version 4
	printf 'edit\n' >> src/a/b/c
	rm src/two.c
	printf 'n\n' > src/new
	snap
	assert_success
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
}

@test "a split index is not understood and says so" {
	make_repo
	git update-index --split-index
	snap
	assert_success
	assert_equal "$(field .commit)" null
	assert_equal "$(field .reason)" unreadable
	assert_equal "$(field .error)" "cannot read the index '$repo/.git/index': a split index is not supported"
}

@test "a linked worktree is snapshot with its own index and HEAD" {
	make_repo
	git worktree add -q "$BATS_TEST_TMPDIR/wt" -b side
	cd "$BATS_TEST_TMPDIR/wt"
	printf 'side edit\n' >> README
	printf 'n\n' > only-here
	snap
	assert_success
	assert_equal "$(field .repo)" "$BATS_TEST_TMPDIR/wt"
	assert_equal "$(field .base)" "$(git rev-parse side)"
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
}

@test "with core.autocrlf the stored content is converted as git converts it" {
	make_repo
	git config core.autocrlf input
	printf 'one\r\ntwo\r\n' > crlf.txt
	printf 'a\r\n' >> README
	snap
	assert_success
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(git cat-file -p "$(field .commit):crlf.txt" | od -c | grep -c '\\r')" 0
}

@test "a clean filter driver's command runs as git add runs it, %f quoted" {
	make_repo
	git config filter.up.clean 'tr a-z A-Z'
	# The path as the command sees it goes into the content.
	git config filter.named.clean 'printf "%%s: " %f; cat'
	printf '*.up filter=up\n*.named filter=named\n' > .gitattributes
	printf 'lower case\n' > new.up
	printf 'line\n' > "it's a !.named"
	printf 'line\n' > ' -lead.named'
	snap
	assert_success
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(git show "$(field .commit):new.up")" 'LOWER CASE'
	assert_equal "$(git show "$(field .commit):it's a !.named")" "it's a !.named: line"
	git add -A && git commit -qm filtered
	printf 'edited\n' > new.up
	snap
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(git show "$(field .commit):new.up")" EDITED
	assert_equal "$(field .complete)" true
}

@test "a clean filter runs in the top of the tree, before text and eol" {
	make_repo
	git config filter.where.clean 'pwd; cat'
	printf 'sub/*.txt filter=where text eol=lf\n' > .gitattributes
	mkdir -p sub && printf 'a\r\nb\r\n' > sub/crlf.txt
	snap
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(git show "$(field .commit):sub/crlf.txt" | head -1)" "$repo"
}

@test "a failed clean filter stores the raw file unless the driver is required" {
	# The filters run as processes: the time-out is no part of this test.
	make_repo
	git config filter.lax.clean 'exit 3'
	git config filter.smudgeonly.smudge cat
	printf '*.lax filter=lax\n*.so filter=smudgeonly\n*.req filter=strict\n' > .gitattributes
	printf 'raw\n' > a.lax
	printf 'raw\n' > b.so
	snap --timeout 60s
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(git show "$(field .commit):a.lax")" raw
	# A required driver that fails: git add stops; the snapshot leaves the
	# file out and says why, the tracked one as the index has it.
	printf 'kept\n' > tracked.req && git add -A && git commit -qm req
	git config filter.strict.clean 'cat >/dev/null; exit 1'
	git config filter.strict.required true
	printf 'edited\n' > tracked.req
	printf 'new\n' > new.req
	# Older than the snapshot's second, so what it keeps of them is
	# trusted by the next one.
	sleep 1.1
	snap --timeout 60s
	assert_success
	assert_equal "$(git show "$(field .commit):tracked.req")" kept
	run git cat-file -e "$(jq -r .commit <<<"$output"):new.req"
	assert_failure
	snap --timeout 60s
	assert_equal "$(field '[.skipped[] | select(.reason == "filter-failed") | .path] | join(",")')" \
		tracked.req,new.req
	assert_equal "$(field .complete)" false
}

@test "a clean filter that outlasts the time-out gives up, and kills it" {
	make_repo
	git config filter.slow.clean "echo \$\$ > '$BATS_TEST_TMPDIR/pid'; sleep 30"
	printf '*.slow filter=slow\n' > .gitattributes
	printf 'x\n' > a.slow
	start=$(date +%s)
	snap --timeout 500ms
	assert_success
	assert_equal "$(field .reason)" timeout
	[ $(($(date +%s) - start)) -lt 5 ]
	run kill -0 "$(cat "$BATS_TEST_TMPDIR/pid")"
	assert_failure
}

# A repository with the shapes real ones have, each one git's plumbing
# and the snapshot may read differently.
shapes_repo() {
	make_repo
	# Nested ignore files: negations, directory rules, anchored patterns.
	mkdir -p a/b/c build logs/keep
	printf '*.log\n!important.log\nbuild/\n/rootonly\n' > .gitignore
	printf '!*.log\nc/\n' > a/.gitignore
	printf '*.tmp\n!keep.tmp\n' > a/b/.gitignore
	for f in x.log important.log a/x.log a/b/y.log a/b/c/z a/b/t.tmp a/b/keep.tmp \
		build/o rootonly a/rootonly logs/keep/k.log; do
		printf 'x\n' > "$f"
	done
	printf 'excluded-*\n' > .git/info/exclude
	printf 'global-*\n' > "$BATS_TEST_TMPDIR/ignore"
	git config core.excludesFile "$BATS_TEST_TMPDIR/ignore"
	printf 'x\n' > excluded-1
	printf 'x\n' > global-1
	# Attributes: text=auto and eol with CRLF content, a clean filter.
	printf '* text=auto\n*.bat eol=crlf\n*.sh eol=lf\n*.up filter=up\n' > .gitattributes
	git config filter.up.clean 'tr a-z A-Z'
	printf 'a\r\nb\r\n' > crlf.txt
	printf 'a\r\nb\r\n' > w.bat
	printf 'a\r\nb\r\n' > u.sh
	printf 'bin\0\r\n' > bin.dat
	printf 'shout\n' > loud.up
	# Names with spaces, unicode, a leading dash, quotes.
	for f in 'with space' 'ünï cödé' '-dash' "quo'te" 'dq"uote' 'back\slash'; do
		printf 'o\n' > "$f"
	done
	# A submodule.
	sub="$BATS_TEST_TMPDIR/sub"
	git init -q "$sub"
	git -C "$sub" -c user.name=s -c user.email=s@s commit -q --allow-empty -m s1
	git -c protocol.file.allow=always submodule -q add "$sub" sm 2>/dev/null
	git add -A 2>/dev/null
	git commit -qm shapes
}

@test "the tree is git's on the shapes real repositories have" {
	shapes_repo
	git update-index --index-version 4
	printf 'more\n' >> src/one.c
	printf 'c\r\nd\r\n' > crlf.txt
	printf 'edited\n' > loud.up
	printf 'p\n' > ./-dash
	printf 'new\n' > "new 'one'"
	# The submodule's worktree is dirty and its HEAD moved.
	printf 'dirty\n' > sm/untracked
	git -C sm -c user.name=s -c user.email=s@s commit -q --allow-empty -m s2
	# Intent to add: one edited since, one deleted since.
	printf 'ita\n' > ita.txt && git add -N ita.txt
	printf 'gone\n' > ita-gone.txt && git add -N ita-gone.txt && rm ita-gone.txt
	snap
	assert_success
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(field .complete)" true
	git fsck --no-dangling --strict
}

@test "with core.fileMode false no executable bit is taken from the files" {
	shapes_repo
	git config core.fileMode false
	chmod +x README
	printf 'e\n' >> src/two.c && chmod +x src/two.c
	printf '#!/bin/sh\n' > new-tool && chmod +x new-tool
	snap
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(git ls-tree "$(field .commit)" new-tool | cut -c1-6)" 100644
}

@test "a same-size edit in the second the index was written is git's too" {
	shapes_repo
	printf 'aaaa\n' > racy && git add racy
	printf 'bbbb\n' > racy
	touch -r .git/index racy
	assert_equal "$(git status --porcelain racy)" 'AM racy'
	snap
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(git show "$(field .commit):racy")" bbbb
}

@test "what lies outside a sparse checkout stays as the index has it" {
	shapes_repo
	mkdir -p docs/deep && printf 'd\n' > docs/deep/d && git add -A && git commit -qm docs
	git sparse-checkout set --cone src 2>/dev/null
	# Outside the cone: a file put back and edited, a new one; inside: edits.
	mkdir -p docs/deep lib
	printf 'edited\n' > docs/guide.md
	printf 'new\n' > lib/new
	printf 'new\n' > docs/deep/new
	printf 'edit\n' >> src/one.c
	printf 'top\n' > top-new
	snap
	assert_success
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(git show "$(field .commit):docs/guide.md")" guide
	# Again without libgit2, from what the last snapshot kept.
	snap
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	git sparse-checkout set --no-cone '/src/' '!/src/two.c' '*.md' 2>/dev/null
	printf 'again\n' > docs/guide.md
	printf 'n\n' > src/two.c
	printf 'n\n' > docs/deep/more
	snap
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
}

@test "a linked worktree of a repository with the shapes is git's too" {
	shapes_repo
	git worktree add -q "$BATS_TEST_TMPDIR/wt" -b side
	cd "$BATS_TEST_TMPDIR/wt"
	printf 'side\n' >> README
	printf 'low\n' > side.up
	printf 'x\n' > side.log
	snap
	assert_success
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(git show "$(field .commit):side.up")" LOW
}

@test "the examples of the man page work" {
	make_repo
	printf 'x\n' > new
	run bash -c 'xg-snapshot < /dev/null | jq -r .commit'
	assert_success
	assert_regex "$output" '^[0-9a-f]{40}$'
	run bash -c "printf '%s\n' '{\"type\":\"request\",\"text\":\"fix it\"}' |
		xg-snapshot --max-file-size 1M --timeout 500ms"
	assert_success
	assert_equal "$(jq -r .type <<<"$output" | tr '\n' ' ')" 'request snapshot '
	run bash -c "xg-snapshot < /dev/null | xg-snapshot replay - '$BATS_TEST_TMPDIR/turn' &&
		git -C '$BATS_TEST_TMPDIR/turn' status --short"
	assert_success
	assert_equal "$(tail -1 <<<"$output")" '?? new'
}

@test "files that became directories, and directories that became files or links" {
	make_repo
	mkdir -p keep/inner && printf 'k\n' > keep/inner/k && git add -A && git commit -qm more
	rm README && mkdir README && printf 'now a dir\n' > README/inside
	rm -r docs && printf 'now a file\n' > docs
	rm -r keep/inner && ln -s ../src keep/inner
	snap
	assert_success
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
	assert_equal "$(git ls-tree "$(field .commit)" keep/inner | cut -c1-6)" 120000
}

@test "a fifo where a tracked file was is left out and said so; untracked ones are ignored" {
	make_repo
	rm README && mkfifo README
	mkfifo untracked-fifo
	snap
	assert_success
	assert_equal "$(field '.skipped | map(.path + ":" + .reason) | join(",")')" README:special-file
	run git cat-file -e "$(field .commit):README"
	assert_failure
	run git cat-file -e "$(field .commit):untracked-fifo"
	assert_failure
}

@test "thousands of untracked files past the limit still make a valid pack" {
	make_repo
	mkdir many
	(cd many && seq 1 4000 | split -l 1 -a 4 - f)
	# The time-out is not what this test is about: a loaded machine under
	# a sanitizer may take more than two seconds for 4,000 files.
	snap --max-files 3000 --timeout 60
	assert_success
	assert_regex "$(field .commit)" '^[0-9a-f]{40}$'
	assert_equal "$(field .untracked) $(field .skipped_total) $(field '.skipped | length')" '3000 1000 1000'
	git fsck --no-dangling --strict
	assert_equal "$(git ls-tree -r --name-only "$(field .commit)" many | wc -l)" 3000
}

@test "names that sort around directory boundaries land where git puts them" {
	make_repo
	mkdir -p a a-b ab a.d/e
	for f in a/x a.c a-b/y ab/z a.d/e/f 'a b' a0; do printf '%s\n' "$f" > "$f"; done
	git add -A && git commit -qm names
	for f in a/new a.b a-a a/x.y ab/a 'a/ ' a.d/e0 a.d/e/g; do printf 'n\n' > "$f"; done
	rm a.c
	printf 'changed\n' > a-b/y
	snap
	assert_success
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" "$(git_tree)"
}

@test "an empty repository gives the empty tree; a detached HEAD is the parent" {
	git init -q "$repo"
	cd "$repo"
	snap
	assert_success
	assert_equal "$(git rev-parse "$(field .commit)^{tree}")" 4b825dc642cb6eb9a060e54bf8d69288fbee4904
	printf 'x\n' > x && git -c user.name=a -c user.email=a@a add x &&
		git -c user.name=a -c user.email=a@a commit -qm x
	git checkout -q --detach
	printf 'y\n' >> x
	snap
	assert_equal "$(field .base)" "$(git rev-parse HEAD)"
	assert_equal "$(git rev-parse "$(field .commit)^")" "$(git rev-parse HEAD)"
}

@test "core.worktree elsewhere is followed, as libgit2 reads it" {
	git init -q "$repo"
	mkdir "$BATS_TEST_TMPDIR/tree"
	git -C "$repo" config core.worktree "$BATS_TEST_TMPDIR/tree"
	printf 'x\n' > "$BATS_TEST_TMPDIR/tree/in-tree"
	printf 'y\n' > "$repo/beside-git"
	snap -C "$repo"
	assert_success
	assert_equal "$(field .repo)" "$BATS_TEST_TMPDIR/tree"
	assert_equal "$(git -C "$repo" ls-tree --name-only "$(field .commit)")" in-tree
}

@test "the pack checksum's SHA-1 agrees with sha1sum, with and without the SHA extensions" {
	head -c 1000003 /dev/urandom > "$BATS_TEST_TMPDIR/data"
	for input in /dev/null "$BATS_TEST_TMPDIR/data"; do
		want=$(sha1sum < "$input" | cut -d' ' -f1)
		assert_equal "$(xg-test snapshot sha1 < "$input")" "$want"
		assert_equal "$(xg-test snapshot sha1 --portable < "$input")" "$want"
	done
	assert_equal "$(printf abc | xg-test snapshot sha1)" a9993e364706816aba3e25717850c26c9cd0d89d
}

# Runs a command as nobody (tests run as root): in a directory every user
# may enter, with a HOME nobody can read.  Skips where that cannot be done.
as_nobody() {
	if command -v setpriv > /dev/null; then
		HOME="$shared" setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	else
		HOME="$shared" runuser -u nobody -- "$@"
	fi
}

# A directory under /tmp that nobody may enter, removed by teardown.
make_shared() {
	[ "$(id -u)" = 0 ] || skip 'needs root, to run as another user'
	command -v setpriv > /dev/null || command -v runuser > /dev/null ||
		skip 'neither setpriv nor runuser is available'
	shared=$(mktemp -d /tmp/xg-snapshot-test.XXXXXX)
	chmod 755 "$shared"
	as_nobody "$(command -v xg-snapshot)" --help > /dev/null 2>&1 ||
		skip 'nobody cannot run xg-snapshot from here'
}

teardown() {
	if [ -n "${shared:-}" ]; then
		rm -rf "$shared"
	fi
}

@test "a repository another user owns is unreadable, and says why" {
	make_shared
	repo="$shared/repo"
	make_repo
	printf 'edit\n' >> README
	run_split as_nobody "$(command -v xg-snapshot)" -C "$repo" < /dev/null
	assert_success
	assert_equal "$(field .commit)" null
	assert_equal "$(field .reason)" unreadable
	assert_equal "$(field .error)" "cannot open the repository '$repo': it is owned by another user and safe.directory does not list it"
	run_split as_nobody "$(command -v xg-snapshot)" -C "$repo" --strict < /dev/null
	assert_failure 1
	# Replay says the same, with the exit status for a permission refused.
	run_split as_nobody "$(command -v xg-snapshot)" -C "$repo" replay HEAD "$shared/clone" < /dev/null
	assert_failure 77
	assert_equal "$stderr" "xg-snapshot: cannot open the repository '$repo': it is owned by another user and safe.directory does not list it"
	assert [ ! -e "$shared/clone" ]
}

@test "replay into a directory it may not create exits 77, and 74 for other write errors" {
	make_shared
	repo="$shared/repo"
	make_repo
	printf 'a file\n' > "$BATS_TEST_TMPDIR/file"
	run_split xg-snapshot -C "$repo" replay HEAD "$BATS_TEST_TMPDIR/file/clone" < /dev/null
	assert_failure 74
	assert_equal "$stderr" "xg-snapshot: cannot use '$BATS_TEST_TMPDIR/file/clone': Not a directory"
	chown -R nobody "$repo"
	mkdir -m 755 "$shared/locked"
	run_split as_nobody "$(command -v xg-snapshot)" -C "$repo" replay HEAD "$shared/locked/clone" < /dev/null
	assert_failure 77
	assert_equal "$stderr" "xg-snapshot: cannot create directory '$shared/locked/clone': Permission denied"
	assert [ ! -e "$shared/locked/clone" ]
}

@test "a directory that is not there, or is a file, is unreadable, not 'not a repository'" {
	snap -C "$BATS_TEST_TMPDIR/nonexistent"
	assert_success
	assert_equal "$(field .commit)" null
	assert_equal "$(field .reason)" unreadable
	assert_equal "$(field .error)" "cannot open '$BATS_TEST_TMPDIR/nonexistent': No such file or directory"
	printf 'x\n' > "$BATS_TEST_TMPDIR/file"
	snap -C "$BATS_TEST_TMPDIR/file"
	assert_success
	assert_equal "$(field .reason)" unreadable
	assert_equal "$(field .error)" "cannot open '$BATS_TEST_TMPDIR/file': Not a directory"
	snap --strict -C "$BATS_TEST_TMPDIR/nonexistent"
	assert_failure 1
	assert_equal "$(field .reason)" unreadable
	# A request's cwd that is not there is told the same way.
	run_split xg-snapshot <<<'{"type":"request","cwd":"/nonexistent/dir"}'
	assert_success
	assert_equal "$(jq -r 'select(.type == "snapshot") | .error' <<<"$output")" \
		"cannot open '/nonexistent/dir': No such file or directory"
}

@test "replay of a named commit leaves standard input alone, for a loop that reads it" {
	make_repo
	printf 'edit\n' >> README
	snap
	c=$(field .commit)
	cd "$BATS_TEST_TMPDIR"
	printf '1\n2\n' | while read -r x; do
		xg-snapshot -C "$repo" replay "$c" "clone$x" > "out$x" || exit 1
	done
	assert_equal "$(jq -r .type out1 out2 | tr '\n' ' ')" 'replay replay '
	assert_equal "$(git -C clone2 status --porcelain)" ' M README'
}

@test "replay removes its clone when the record cannot be written" {
	make_repo
	snap
	c=$(field .commit)
	run_split bash -c "xg-snapshot replay '$c' '$BATS_TEST_TMPDIR/clone' < /dev/null > /dev/full"
	assert_failure 74
	assert_equal "$stderr" "xg-snapshot: cannot write standard output: No space left on device"
	assert [ ! -e "$BATS_TEST_TMPDIR/clone" ]
	# An empty directory given is kept, and emptied again.
	mkdir "$BATS_TEST_TMPDIR/empty"
	run_split bash -c "xg-snapshot replay '$c' '$BATS_TEST_TMPDIR/empty' < /dev/null > /dev/full"
	assert_failure 74
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/empty")" ''
}

@test "replay's failures of input exit 65 and say what is wrong" {
	make_repo
	clone="$BATS_TEST_TMPDIR/clone"
	run_split xg-snapshot replay - "$clone" <<<'{"type":"other"}'
	assert_failure 65
	assert_equal "$stderr" 'xg-snapshot: no snapshot record with a commit on standard input'
	run_split xg-snapshot replay 'HEAD^{tree}' "$clone" < /dev/null
	assert_failure 65
	assert_regex "$stderr" "^xg-snapshot: cannot find the snapshot 'HEAD\^\{tree\}': .+"
	run_split xg-snapshot -C "$BATS_TEST_TMPDIR" replay HEAD "$clone" < /dev/null
	assert_failure 65
	assert [ ! -e "$clone" ]
}

@test "a request whose cwd is not a string is bad input, named by line and field" {
	make_repo
	run_split xg-snapshot <<<'{"type":"note"}
{"type":"request","cwd":["a"]}'
	assert_failure 65
	assert_equal "$stderr" "xg-snapshot: standard input: line 2: field 'cwd' must be a string"
}

@test "a --timeout that falls while the pack is written is kept to, and leaves no temporary files" {
	# How long it takes, not memory: left to the plain pass, where the
	# times are the program's own.
	! sanitized || skip "a timing test: left to the plain pass"
	make_repo
	mkdir big
	for i in $(seq 1 18); do
		head -c 2000000 /dev/urandom > "big/f$i"
	done
	snap
	assert_success
	full=$(field .elapsed_ms)
	# Deadlines spread over the run: some fall while hashing, some while
	# the pack is written.  Whatever the machine's speed, a commit comes
	# within the deadline (and a little slack for the last step), or none
	# with reason "timeout"; and nothing half-written stays behind.
	for pct in 30 45 60 70 80 90 100 120; do
		for i in $(seq 1 18); do
			printf '%08d' "$pct" | dd of="big/f$i" bs=8 count=1 conv=notrunc status=none
		done
		t=$((full * pct / 100 + 1))
		snap --timeout "${t}ms"
		assert_success
		if [ "$(field .commit)" = null ]; then
			assert_equal "$(field .reason)" timeout
		else
			elapsed=$(field .elapsed_ms)
			assert [ "$elapsed" -le $((t + 60)) ]
			git cat-file -e "$(field .commit)"
		fi
		assert_equal "$(find .git/objects -name 'tmp_*')" ''
	done
	git fsck --no-dangling 2>&1
}
