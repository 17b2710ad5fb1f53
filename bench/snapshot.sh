#!/bin/sh
# Measures xg-snapshot against git's own plumbing doing the same work, side
# by side in one run: a repository of 10,000 tracked files of 10 KiB
# (about 100 MB) in 100 directories, with 20 files edited, 5 deleted and
# 200 untracked files (150 in a new directory, 50 spread over old ones).
# Before every timed command the edited and untracked files get new
# contents, so each snapshot hashes and writes new objects, as a turn does.
#
#   sh bench/snapshot.sh [rounds]      (default 11; XG_BENCH_DIR keeps the tree)
#
# git's side: copy .git/index to a temporary file, GIT_INDEX_FILE=... git
# add -A, git write-tree, git commit-tree.  Prints both medians and xg's time
# as a fraction of git's (the target is at most 0.5).
#
# Then the unchanged case: nothing is touched between one snapshot and the
# next, and xg-snapshot is timed against `git status` on the same tree (its
# lstat walk and untracked scan; target at most 1.0).
#
# Last, a repository as real ones are: 4,800 files of 2 KiB of source,
# text and images in 60 directories, with a .gitattributes of text and eol
# rules (and binary for images), 300 untracked files of the same kinds,
# unchanged since the last snapshot, then with 50 tracked files edited
# too; xg-snapshot against `git status` again (target at most 1.0 each).
#
#   sh bench/snapshot.sh [rounds] attributes    runs only this last part
set -eu

rounds=${1:-11}
only=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
xg=$here/bin/xg-snapshot
[ -x "$xg" ] || { echo "bench/snapshot.sh: build first (make)" >&2; exit 1; }
top=${XG_BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/xg-bench.XXXXXX")}
repo=$top/repo
trap '[ -n "${XG_BENCH_DIR:-}" ] || rm -rf "$top"' EXIT INT TERM

export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost

if [ -z "$only" ] && [ ! -d "$repo/.git" ]; then
	mkdir -p "$repo"
	git -C "$repo" init -q
	git -C "$repo" config user.name bench
	git -C "$repo" config user.email bench@localhost
	i=0
	while [ $i -lt 100 ]; do
		d=$(printf 'd%02d' $i)
		mkdir "$repo/$d"
		# 760320 random bytes are 10240 base64 lines of 100 bytes: 100
		# files of 10 KiB.
		head -c 760320 /dev/urandom | base64 -w 99 |
			(cd "$repo/$d" && split -b 10240 -a 2 -d - f)
		i=$((i + 1))
	done
	git -C "$repo" add -A
	git -C "$repo" commit -qm 'the tree'
	for n in 0 1 2 3 4; do
		rm "$repo/$(printf 'd%02d/f5%d' $((n * 7 + 3)) $n)"
	done
	mkdir "$repo/new"
	# Past the second the index was written, so no entry is racy.
	sleep 1
fi

chunk=$(head -c 7500 /dev/urandom | base64 -w 99)
stamp=0
# New contents for the edited and the untracked files.
refresh() {
	stamp=$((stamp + 1))
	i=0
	while [ $i -lt 20 ]; do
		f=$repo/$(printf 'd%02d/f%02d' $((i * 5)) $i)
		{ git -C "$repo" cat-file -p "HEAD:${f#$repo/}"; printf 'edit %s\n' $stamp; } > "$f"
		i=$((i + 1))
	done
	i=0
	while [ $i -lt 200 ]; do
		if [ $i -lt 150 ]; then f=$repo/new/u$i
		else f=$repo/$(printf 'd%02d/u%d' $(((i - 150) * 2)) $i); fi
		{ printf '%s %s\n' $stamp $i; printf '%s\n' "$chunk"; } > "$f"
		i=$((i + 1))
	done
}

now() { date +%s%N; }

git_plumbing() {
	cp "$repo/.git/index" "$top/index.tmp"
	GIT_INDEX_FILE=$top/index.tmp git -C "$repo" add -A
	tree=$(GIT_INDEX_FILE=$top/index.tmp git -C "$repo" write-tree)
	git -C "$repo" commit-tree -p HEAD -m 'snapshot' "$tree" > /dev/null
	rm -f "$top/index.tmp"
}

xg_snapshot() {
	"$xg" -C "$repo" < /dev/null > "$top/record"
}

# Microseconds the command takes.
still_ms() {
	t0=$(now)
	"$@"
	t1=$(now)
	echo $(((t1 - t0) / 1000))
}

git_status() {
	git -C "$repo" status > /dev/null
}

# The same after new contents for the edited and untracked files.
time_ms() {
	refresh
	still_ms "$@"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# alternate TIMER A A_FILE B B_FILE: one warm-up of each, then $rounds
# timings of each into its file, alternating which goes first.
alternate() {
	: > "$3"
	: > "$5"
	"$1" "$2" > /dev/null
	"$1" "$4" > /dev/null
	r=0
	while [ $r -lt "$rounds" ]; do
		if [ $((r % 2)) -eq 0 ]; then
			"$1" "$2" >> "$3"
			"$1" "$4" >> "$5"
		else
			"$1" "$4" >> "$5"
			"$1" "$2" >> "$3"
		fi
		r=$((r + 1))
	done
}

if [ -z "$only" ]; then
alternate time_ms git_plumbing "$top/git.us" xg_snapshot "$top/xg.us"
grep -q '"commit":"' "$top/record" || { echo "bench/snapshot.sh: no commit:" >&2; cat "$top/record" >&2; exit 1; }
g=$(median < "$top/git.us")
x=$(median < "$top/xg.us")
printf 'tree: 10000 tracked files (%s), 20 edited, 5 deleted, 200 untracked; %s rounds\n' \
	"$(du -sh --exclude=.git "$repo" | cut -f1)" "$rounds"
printf 'git plumbing (add -A, write-tree, commit-tree): median %d.%03d ms\n' $((g / 1000)) $((g % 1000))
printf 'xg-snapshot:                                    median %d.%03d ms\n' $((x / 1000)) $((x % 1000))
awk -v x="$x" -v g="$g" 'BEGIN { printf "xg-snapshot / git = %.2f (target <= 0.50)\n", x / g }'
printf 'last record: %s\n' "$(cut -c1-300 "$top/record")"

alternate still_ms git_status "$top/status.us" xg_snapshot "$top/still.us"
g=$(median < "$top/status.us")
x=$(median < "$top/still.us")
echo 'unchanged tree (nothing touched since the last snapshot):'
printf 'git status:                                     median %d.%03d ms\n' $((g / 1000)) $((g % 1000))
printf 'xg-snapshot:                                    median %d.%03d ms\n' $((x / 1000)) $((x % 1000))
awk -v x="$x" -v g="$g" 'BEGIN { printf "xg-snapshot / git status = %.2f (target <= 1.00)\n", x / g }'
fi

# The repository with attributes: each kind of file in turn, the rules
# as real projects write them.
kinds='c h md json sh png txt py'
arepo=$top/attributes
if [ ! -d "$arepo/.git" ]; then
	git init -q "$arepo"
	printf '%s\n' '*.c text eol=lf' '*.h text eol=lf' '*.sh text eol=lf' '*.py text' \
		'*.bat text eol=crlf' '*.png binary' '*.jpg binary' > "$arepo/.gitattributes"
	i=0
	while [ $i -lt 60 ]; do
		d=$arepo/$(printf 'm%02d' $i)
		mkdir "$d"
		# 80 files of 2 KiB: 163840 bytes of base64 in lines of 64.
		head -c 122880 /dev/urandom | base64 -w 63 | (cd "$d" && split -b 2048 -a 2 -d - f)
		k=0
		for f in "$d"/f*; do
			set -- $kinds
			shift $((k % 8))
			mv "$f" "$f.$1"
			k=$((k + 1))
		done
		i=$((i + 1))
	done
	git -C "$arepo" add -A
	git -C "$arepo" commit -qm 'the tree'
	mkdir "$arepo/scratch"
	i=0
	while [ $i -lt 300 ]; do
		set -- $kinds
		shift $((i % 8))
		if [ $i -lt 200 ]; then f=$arepo/scratch/u$i.$1
		else f=$arepo/$(printf 'm%02d/u%d' $((i % 60)) $i).$1; fi
		head -c 1500 /dev/urandom | base64 > "$f"
		i=$((i + 1))
	done
	sleep 1
fi
repo=$arepo
xg_snapshot
alternate still_ms git_status "$top/astatus.us" xg_snapshot "$top/astill.us"
g=$(median < "$top/astatus.us")
x=$(median < "$top/astill.us")
echo 'attributes: 4800 tracked files, .gitattributes with text and eol rules, 300 untracked, unchanged:'
printf 'git status:                                     median %d.%03d ms\n' $((g / 1000)) $((g % 1000))
printf 'xg-snapshot:                                    median %d.%03d ms\n' $((x / 1000)) $((x % 1000))
awk -v x="$x" -v g="$g" 'BEGIN { printf "xg-snapshot / git status = %.2f (target <= 1.00)\n", x / g }'

# 50 tracked files edited (each kind in turn), then left alone.
if [ ! -f "$arepo/.edited" ]; then
	i=0
	while [ $i -lt 50 ]; do
		set -- $kinds
		shift $((i % 8))
		k=$((i % 8 + 8 * (i % 10)))
		printf 'edited\n' >> "$arepo/$(printf 'm%02d/f%02d.%s' $((i + 5)) $k "$1")"
		i=$((i + 1))
	done
	printf '.edited\n' >> "$arepo/.git/info/exclude"
	touch "$arepo/.edited"
	sleep 1
fi
xg_snapshot
alternate still_ms git_status "$top/astatus.us" xg_snapshot "$top/astill.us"
g=$(median < "$top/astatus.us")
x=$(median < "$top/astill.us")
echo 'the same with 50 tracked files edited, unchanged since:'
printf 'git status:                                     median %d.%03d ms\n' $((g / 1000)) $((g % 1000))
printf 'xg-snapshot:                                    median %d.%03d ms\n' $((x / 1000)) $((x % 1000))
awk -v x="$x" -v g="$g" 'BEGIN { printf "xg-snapshot / git status = %.2f (target <= 1.00)\n", x / g }'
printf 'last record: %s\n' "$(cut -c1-300 "$top/record")"
