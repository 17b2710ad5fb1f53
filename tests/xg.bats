#!/usr/bin/env bats
# xg, the dispatcher.

load helper

setup() {
	mkdir -p extra
	printf '#!/bin/sh\nprintf "[%%s]" "$@"; echo; exit 7\n' >extra/xg-hello
	chmod +x extra/xg-hello
	PATH="$PWD/extra:$PATH"
}

@test "xg FOO runs xg-FOO with the arguments, and exits with its status" {
	run xg hello 'two words' '' -x --y=z
	assert_equal "$status" 7
	assert_output "[two words][][-x][--y=z]"
}

@test "an unknown command is exit 2 with a message" {
	run_split xg no-such-thing
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg: 'no-such-thing' is not an xg command; 'xg commands' lists them"
}

@test "a command name with a slash is not looked up as a path" {
	run_split xg ../extra/hello
	assert_equal "$status" 2
}

@test "no command is exit 2 with the usage" {
	run_split xg
	assert_equal "$status" 2
	assert_regex "$stderr" "usage: xg command"
}

@test "xg commands lists what PATH and xg's own directory hold" {
	run xg commands
	assert_success
	assert_line hello
}

@test "the programs beside xg come before PATH" {
	mkdir -p tree
	cp "$XG_SRCDIR/bin/xg" tree/
	printf '#!/bin/sh\necho mine\n' >tree/xg-hello
	chmod +x tree/xg-hello
	run tree/xg hello
	assert_success
	assert_output mine
}

@test "the example in xg(1) runs" {
	[ -x "$XG_SRCDIR/bin/xg-classify-plan" ] || skip "xg-classify-plan is not built"
	run sh -c "printf 'Nothing to plan.\n' | xg classify-plan"
	assert_success
	assert_output --partial '"outcome":"no_plan"'
}
