# What the xg-snapshot test files share: an environment where git and
# libgit2 read no person's or machine's configuration, the snapshot run
# with its records in $output, and a field of the record.

# Sets HOME and git's variables for the test; $repo is where the test's
# repository goes (not made here).
snapshot_setup() {
	export HOME="$BATS_TEST_TMPDIR/home-dir"
	export XDG_CONFIG_HOME="$HOME/.config"
	export GIT_CONFIG_NOSYSTEM=1
	unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL
	unset GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
	mkdir -p "$HOME"
	repo="$BATS_TEST_TMPDIR/repo"
}

snap() {
	run_split xg-snapshot "$@" < /dev/null
}

field() {
	jq -r "$1" <<<"$output"
}
