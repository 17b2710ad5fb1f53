#!/usr/bin/env bats
# Every EXAMPLES block of every man page, run as it is written (as jq's
# manual tests do), so a page cannot drift from the programs: each page in
# a sandbox of its own, with a home, a git workspace holding the files the
# examples name, the loopback fake provider as the model every mode runs
# on, a local llama.cpp server (the fake one, again), one conversation and
# one run already made.  tests/lib/examples.py says how a block is read,
# which output is checked, and how a page marks a block the tests cannot
# run (none does today).

load lib/helper
load lib/fake-provider

setup() {
	exec </dev/null
	export HOME="$BATS_TEST_TMPDIR/h" TMPDIR="$BATS_TEST_TMPDIR/tmp" EDITOR=true
	unset XG_HOME XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME
	mkdir -p "$HOME/.config/xg" "$HOME/.secrets" "$TMPDIR" scratch
	fake_provider_start <<-'EOF'
	{"text": "Done: nothing left to change.", "repeat": 200, "usage": {"input": 120, "cached_input": 100, "output": 9}}
	EOF
	export LLAMACPP_BASE_URL=$FAKE_URL
	printf '{"providers": {"fake": {"kind": "openai-chat", "base_url": "%s", "key_env": null, "models": {"m": {"price": {"input": 1, "output": 2}}}}}}\n' \
		"$FAKE_URL" >"$HOME/.config/xg/models.json"
	echo sk-ant-not-a-real-key >"$HOME/.secrets/anthropic"
	xg-choices set --mode normal --model fake/m
	xg-choices set --mode plan --model fake/m
	mkdir ws && cd ws || return 1
	printf 'hello\n' >README
	printf 'cc: error: parse.c: No such file\n' >build.log
	printf 'say what this project is\n' >task.txt
	printf 'Nothing to plan.\n' >reply.md
	git init -q && git add . && git -c user.name=t -c user.email=t@t commit -qm start
	state="$HOME/.local/state/xg"
	mkdir -p "$state/conversations"
	printf '{"type":"conversation","schema":"xg/1","id":"20261130-105624-3f9a1c2b","created":"2026-11-30T10:56:24.000Z","cwd":"%s"}\n' \
		"$PWD" >"$state/conversations/20261130-105624-3f9a1c2b.jsonl"
	chmod 600 "$state/conversations/20261130-105624-3f9a1c2b.jsonl"
	xg run 'a first run' >/dev/null
}

teardown() {
	fake_provider_stop
}

examples() {
	run python3 "$XG_SRCDIR/tests/lib/examples.py" "$XG_SRCDIR/man/$1" "$BATS_TEST_TMPDIR/scratch"
	[ "$status" -eq 0 ] || fail "$output"
	assert_output --regexp "^$1: [0-9]+ examples, 0 failed\$"
}

@test "the EXAMPLES of every other man page run too" {
	# A page added later is run here until it gets a test of its own.
	for p in "$XG_SRCDIR"/man/*.[1-9]; do
		n=${p##*/}
		grep -q '^\.Sh EXAMPLES' "$p" || continue
		grep -qF "{ examples $n; }" "$BATS_TEST_FILENAME" && continue
		examples "$n"
	done
}

@test "xg(1)'s examples run" { examples xg.1; }
@test "xg(7)'s examples run" { examples xg.7; }
@test "xg-choices(1)'s examples run" { examples xg-choices.1; }
@test "xg-classify-plan(1)'s examples run" { examples xg-classify-plan.1; }
@test "xg-fake-provider(1)'s examples run" { examples xg-fake-provider.1; }
@test "xg-log(1)'s examples run" { examples xg-log.1; }
@test "xg-prompt-compile(1)'s examples run" { examples xg-prompt-compile.1; }
@test "xg-run(1)'s examples run" { examples xg-run.1; }
@test "xg-snapshot(1)'s examples run" { examples xg-snapshot.1; }
