#!/usr/bin/env bats
# xg-snapshot's default limits at their boundaries (design.md B3): an
# untracked file of 5 MiB and no more, 100 MiB and 10,000 untracked files
# in all, and the 2 s it gives up after.  The limit under test is the
# default; another limit is raised only where the test's own size would
# otherwise meet it first.  Big files are sparse, so they cost no disk.

load lib/helper
load lib/snapshot

setup() {
	snapshot_setup
	git init -q -b main "$repo"
	cd "$repo"
	git config user.name 'Ada Tester'
	git config user.email ada@example.org
	printf 'readme\n' > README
	git add -A
	git commit -qm 'first'
}

skipped() {
	field '.skipped | map(.path + ":" + .reason) | join(",")'
}

@test "an untracked file of exactly 5 MiB goes in, one byte more is skipped as max-file-size" {
	truncate -s $((5 * 1024 * 1024)) at-limit.bin
	truncate -s $((5 * 1024 * 1024 + 1)) past-limit.bin
	snap --timeout 60
	assert_success
	assert_equal "$(field .untracked)" 1
	assert_equal "$(skipped)" past-limit.bin:max-file-size
	assert_equal "$(git cat-file -s "$(field .commit):at-limit.bin")" 5242880
	commit=$(field .commit)
	run git cat-file -e "$commit:past-limit.bin"
	assert_failure
}

@test "10,000 untracked files go in and the 10,001st is skipped as max-files" {
	mkdir many
	# Names that sort in the order they are made: f00001 to f10001.
	(cd many && seq -f 'f%05g' 1 10001 | xargs touch)
	snap --timeout 120
	assert_success
	assert_equal "$(field .untracked)" 10000
	assert_equal "$(skipped)" many/f10001:max-files
	assert_equal "$(git ls-tree "$(field .commit):many" | wc -l)" 10000
}

@test "100 MiB of untracked files in all go in, and a byte past that is skipped as max-total-size" {
	# Twenty files of 5 MiB, each at the limit of one, fill the total
	# exactly; the one-byte file after them does not fit.
	for i in $(seq -f '%02g' 1 20); do
		truncate -s $((5 * 1024 * 1024)) "part$i.bin"
	done
	printf 'x' > zz-one-byte
	snap --timeout 300
	assert_success
	assert_equal "$(field .untracked)" 20
	assert_equal "$(skipped)" zz-one-byte:max-total-size
	assert_equal "$(git cat-file -s "$(field .commit):part20.bin")" 5242880
}

@test "by default the snapshot gives up after 2 s: a short clean filter is waited for, a 3 s one is not" {
	printf '*.slow filter=slow\n' > .gitattributes
	git add .gitattributes && git commit -qm attributes
	printf 'x\n' > a.slow
	# Sleeps well inside the two seconds, even on a loaded machine under
	# a sanitizer: its output is the stored content.
	git config filter.slow.clean 'sleep 0.2; tr x y'
	snap
	assert_success
	assert_equal "$(field .complete)" true
	assert_equal "$(git cat-file -p "$(field .commit):a.slow")" y
	# Sleeps past them: the snapshot gives up, whatever the filter does next.
	git config filter.slow.clean "echo \$\$ > '$BATS_TEST_TMPDIR/pid'; sleep 3; tr x y"
	snap
	assert_success
	assert_equal "$(field .commit)" null
	assert_equal "$(field .reason)" timeout
	# The filter was ended with the snapshot, not left to run.
	run kill -0 "$(cat "$BATS_TEST_TMPDIR/pid")"
	assert_failure
}
