#!/usr/bin/env bats
# xg as porcelain (man 1 xg, Output): in a file or a pipe, standard output
# gets the final reply alone and standard error the run's lines, each once,
# plain; --json gives the records; a failure is said once, by xg, in a pipe
# and on a terminal; and the small things a newcomer hits first.  Against
# the loopback fake provider.

load lib/helper
load lib/fake-provider
load lib/xg-run

setup() {
	exec </dev/null
	xg_run_setup
	mkdir ws && cd ws || return 1
	git init -q
}

teardown() {
	fake_provider_stop
}

# Runs xg on a pseudo-terminal: $output is all it wrote there.
on_tty() {
	run python3 "$XG_SRCDIR/tests/lib/pty_run.py" "$@"
}

@test "xg run in a pipe: the reply alone on standard output, the lines on standard error once" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "echo hi"}}]}
	{"text": "All done.\nIn two lines."}
	EOF
	run_split xg run --model fake/m 'do it'
	assert_success
	assert_output $'All done.\nIn two lines.'
	# Standard error: the tool's line and the last line, once each, plain.
	assert_equal "${#stderr_lines[@]}" 2
	assert_regex "${stderr_lines[0]}" '^> bash: echo hi \(ok, [0-9.]+ m?s\)$'
	assert_regex "${stderr_lines[1]}" '^xg: completed; 1 tool call, [0-9.]+ m?s, tokens [0-9]+ in, [0-9]+ out; conversation [0-9]{8}-[0-9]{6}-[0-9a-f]{8}$'
	[[ "$stderr" != *$'\033'* && "$stderr" != *$'\r'* ]] || fail "escapes on stderr: $stderr"
}

@test "the reply on standard output ends with one newline; -q leaves standard error empty" {
	serve <<<'{"text": "Just this.", "repeat": 2}'
	xg run --model fake/m 'say it' >out 2>err
	assert_equal "$(od -An -c out | tr -s ' ' | sed 's/^ //')" 'J u s t t h i s . \n'
	run_split xg run -q --model fake/m 'say it'
	assert_success
	assert_output "Just this."
	assert_equal "$stderr" ""
}

@test "xg run --json gives the records, in a pipe and on a terminal, and nothing on standard error" {
	serve <<<'{"text": "Recorded.", "repeat": 2}'
	run_split xg run --json --model fake/m 'say it'
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(jq -r .type <<<"$output" | head -n 1)" run_start
	assert_equal "$(jq -r .type <<<"$output" | tail -n 1)" run_end
	assert_equal "$(jq -r 'select(.type == "run_end") | .reply' <<<"$output")" Recorded.
	on_tty xg run --json --model fake/m 'say it'
	assert_success
	tr -d '\r' <<<"$output" | grep -v '^$' | jq -e -s 'map(.type) | first == "run_start" and last == "run_end"'
}

@test "xg plan in a pipe writes the plan alone, its outcome on standard error" {
	serve <<<'{"text": "I looked.\n<proposed_plan>\n1. Add the flag.\n2. Test it.\n</proposed_plan>"}'
	run_split xg plan --model fake/m 'plan the flag'
	assert_success
	assert_output $'1. Add the flag.\n2. Test it.'
	assert_equal "${stderr_lines[0]}" "plan: plan_ready"
	assert_regex "${stderr_lines[1]}" '^xg: completed; 0 tool calls'
}

@test "xg resume in a pipe writes its reply, and takes a run's id for its conversation" {
	serve <<-'EOF'
	{"text": "First."}
	{"text": "Second."}
	{"text": "Third."}
	EOF
	run_split xg run --model fake/m 'start'
	assert_output First.
	run=$(xg-log --json -n 1 | jq -r .run)
	conv=$(xg-log --json -n 1 | jq -r .conversation)
	run_split xg resume --model fake/m 'go on'
	assert_success
	assert_output Second.
	# A run's id names its conversation; the words are joined.
	run_split xg resume --model fake/m "$run" go on again
	assert_success
	assert_output Third.
	assert_equal "$(xg-log --json -n 1 | jq -r '.conversation + " " + .request')" "$conv go on again"
	# An id of neither kind says where each kind is listed.
	run_split xg resume 20991231-000000-deadbeef 'go on'
	assert_equal "$status" 65
	assert_equal "$stderr" "xg: there is no conversation or run '20991231-000000-deadbeef': 'xg resume' lists this directory's conversations, 'xg log conversations' all of them, and 'xg log' the runs"
}

@test "xg run joins its words with spaces, as echo does" {
	serve <<<'{"text": "Hi."}'
	run_split xg run --model fake/m hello big world
	assert_success
	assert_output Hi.
	assert_equal "$(xg-log --json -n 1 | jq -r .request)" "hello big world"
}

@test "with nothing configured, the way forward is said once: in a pipe, with --json, on a terminal" {
	unset LLAMACPP_BASE_URL OLLAMA_BASE_URL
	xg run 'say hello' >out 2>err && fail "it ran"
	[ ! -s out ] || fail "standard output: $(cat out)"
	assert_equal "$(grep -c 'no provider has a key' err)" 1
	assert_equal "$(grep -c 'For a hosted model' err)" 1
	run_split xg run --json 'say hello'
	assert_equal "$status" 78
	assert_equal "$(grep -c 'no provider has a key' <<<"$stderr")" 1
	assert_equal "$(jq -r 'select(.type == "run_end") | .exit' <<<"$output")" 78
	on_tty xg run 'say hello'
	assert_equal "$status" 78
	assert_equal "$(grep -c 'no provider has a key' <<<"$output")" 1
	assert_equal "$(grep -c 'For a hosted model' <<<"$output")" 1
}

@test "XG_HOME that is a file is named, once, in a pipe and on a terminal" {
	touch "$BATS_TEST_TMPDIR/file"
	XG_HOME="$BATS_TEST_TMPDIR/file" run_split xg run 'say hello'
	assert_equal "$status" 78
	assert_output ""
	assert_equal "$stderr" "xg: cannot use XG_HOME='$BATS_TEST_TMPDIR/file': '$BATS_TEST_TMPDIR/file' is not a directory"
	XG_HOME="$BATS_TEST_TMPDIR/file" on_tty xg run 'say hello'
	assert_equal "$status" 78
	assert_equal "$(tr -d '\r' <<<"$output")" "xg: cannot use XG_HOME='$BATS_TEST_TMPDIR/file': '$BATS_TEST_TMPDIR/file' is not a directory"
	XG_HOME="$BATS_TEST_TMPDIR/file" run_split xg goal get
	assert_equal "$status" 78
	assert_regex "$stderr" "^xg: cannot use XG_HOME="
}

@test "a run outside a git repository says so once, at its start" {
	serve <<<'{"text": "Done.", "repeat": 3}'
	mkdir "$BATS_TEST_TMPDIR/plain" && cd "$BATS_TEST_TMPDIR/plain"
	run_split xg run --model fake/m 'look'
	assert_success
	assert_output Done.
	assert_equal "${stderr_lines[0]}" "note: the workspace is not in a git repository: no snapshot is taken, so 'xg log diff' and replay have nothing of this run"
	assert_equal "$(grep -c 'not in a git repository' <<<"$stderr")" 1
	on_tty xg run --model fake/m 'look'
	assert_success
	assert_equal "$(grep -c 'not in a git repository' <<<"$output")" 1
	# In a repository, and with --json, there is no such line.
	cd "$BATS_TEST_TMPDIR/ws"
	run_split xg run --model fake/m 'look'
	assert_success
	[[ "$stderr" != *"git repository"* ]] || fail "stderr: $stderr"
}

@test "a bad --sandbox value gets xg's usage, not xg-run's" {
	run_split xg run --sandbox=bogus 'do it'
	assert_equal "$status" 2
	assert_equal "${stderr_lines[0]}" "xg: --sandbox takes on, net or off, not 'bogus'"
	assert_regex "${stderr_lines[1]}" '^usage: xg run '
	[[ "$stderr" != *"--profile"* && "$stderr" != *"--run-id"* ]] || fail "xg-run's usage: $stderr"
}
