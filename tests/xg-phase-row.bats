#!/usr/bin/env bats
# The phase row of xg on a terminal (man 1 xg, The phase row): one line on
# standard error, replaced in place, naming a long tool, a wait on
# subagents, a retry's countdown and the wait for the first token; never
# in --json output, nor with --quiet or NO_COLOR.  Through a pseudo-
# terminal (tests/lib/pty_run.py), against the loopback fake provider.

load lib/helper
load lib/fake-provider
load lib/xg-run

setup() {
	xg_run_setup
	unset XG_STALL XG_RETRY XG_WORK_SLICE NO_COLOR
	export TERM=xterm
}

teardown() {
	fake_provider_stop
}

# Runs xg on a terminal: $output is all it wrote there, escapes and all.
on_tty() {
	run python3 "$XG_SRCDIR/tests/lib/pty_run.py" "$@"
}

# Whether $output shows a row (cleared in place, then dim) matching $1, an
# extended regular expression.
has_row() {
	printf '%s' "$output" | grep -qaE $'\r\033\\[K\033\\[2m'"$1"
}

@test "the row shows the wait for the first token, then the long tool and its time" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "sleep 2.5"}}], "stall": 1.5, "stall_after": 0}
	{"text": "slept"}
	EOF
	on_tty xg run --model fake/m "nap"
	assert_success
	has_row '[|/\\-] waiting for the model 1 s'
	has_row 'bash: sleep 2\.5 2 s'
	# The rendered run goes on as ever, and the row is gone at the end.
	printf '%s' "$output" | grep -qa 'slept'
	printf '%s' "$output" | grep -qa 'xg: completed'
	# No heartbeat is ever a line of its own.
	printf '%s' "$output" >shown.txt
	run ! grep -qa heartbeat shown.txt
}

@test "the row names a wait on subagents with the oldest one's age" {
	serve <<-'EOF'
	{"when": "PARENT-MARK", "tool_calls": [{"id": "s1", "name": "spawn_subagent", "args": {"brief": "BRIEF-A: slow", "profile": "explore", "name": "a"}}, {"id": "w1", "name": "wait_subagents", "args": {}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "text": "A-REPLY", "stall": 2.5, "stall_after": 0}
	{"when": "PARENT-MARK", "text": "collected"}
	EOF
	XG_STALL=beat=200ms on_tty xg run --model fake/m "PARENT-MARK: delegate"
	assert_success
	has_row 'waiting on 1 subagent \(oldest [12] s\)'
	printf '%s' "$output" | grep -qa 'collected'
}

@test "the row counts down to a retry" {
	serve <<-'EOF'
	{"status": 503, "body": "busy"}
	{"text": "back again"}
	EOF
	XG_RETRY=base=2500,cap=2500 on_tty xg run --model fake/m "hello"
	assert_success
	has_row 'retry 1 of 8 in [23] s'
	has_row 'retry 1 of 8 in 1 s'
	printf '%s' "$output" | grep -qa 'back again'
}

@test "no row in --json output, with --quiet, or in NO_COLOR's plain mode" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "sleep 1.2"}}]}
	{"text": "one"}
	{"tool_calls": [{"id": "b2", "name": "bash", "args": {"command": "sleep 1.2"}}]}
	{"text": "two"}
	{"tool_calls": [{"id": "b3", "name": "bash", "args": {"command": "sleep 1.2"}}]}
	{"text": "three"}
	EOF
	XG_STALL=beat=100ms on_tty xg run --json --model fake/m "nap"
	assert_success
	printf '%s\n' "$output" | tr -d '\r' | grep -v '^$' >json.txt
	XG_STALL=beat=100ms on_tty xg run --quiet --model fake/m "nap"
	assert_success
	printf '%s' "$output" >quiet.txt
	NO_COLOR=1 on_tty xg run --model fake/m "nap"
	assert_success
	printf '%s' "$output" >plain.txt
	# Records only, every line one (the heartbeats among them).
	jq -e -s 'map(.type) | index("heartbeat") and index("run_end")' json.txt
	grep -qa 'two' quiet.txt
	grep -qa 'three' plain.txt
	run ! grep -qa $'\033\\[K' json.txt quiet.txt plain.txt
	run ! grep -qa 'bash: sleep 1.2 [0-9]' quiet.txt plain.txt
}

@test "a run waiting for another run's hold on its conversation says so once, naming the holder" {
	serve <<<'{"text": "held, then done"}'
	mkdir -p "$XG_HOME/state/conversations"
	hold_lock "$XG_HOME/state/conversations/20261205-100000-0000abcd.run.lock" 4
	# In a pipe: one notice, before run_start, naming the holder.
	XG_LOCK_TIMEOUT=20000 run_split xg-run --model fake/m --conversation 20261205-100000-0000abcd "go" </dev/null
	assert_success
	[ "$(recs notice | jq -r .text | grep -c 'waiting for the conversation')" = 1 ]
	text=$(recs notice | jq -r .text)
	[[ "$text" == *"which process $holder (xg-test) holds; giving up after 20 s (XG_LOCK_TIMEOUT)"* ]] ||
		fail "the notice says: $text"
	[ "$(printf '%s\n' "$output" | jq -r .type | head -n 1)" = notice ]
}

@test "on a terminal the row names the hold a run waits for" {
	serve <<<'{"text": "held, then done"}'
	mkdir -p "$XG_HOME/state/conversations"
	hold_lock "$XG_HOME/state/conversations/20261205-100000-0000abcd.run.lock" 120
	# Let go once the run has said it waits (its events hold the notice),
	# and the row has had a second and more to show it.
	(
		for _ in $(seq 600); do
			grep -qs 'waiting for the conversation' "$XG_HOME"/state/runs/*/events.ndjson && break
			sleep 0.1
		done
		sleep 1.5
		kill "$holder"
	) &
	XG_LOCK_TIMEOUT=100000 on_tty xg run --conversation 20261205-100000-0000abcd --model fake/m "again"
	assert_success
	has_row "[|/\\\\-] waiting for the conversation, held by process $holder \\(xg-test\\) [123] s"
	printf '%s' "$output" | grep -qa "note: waiting for the conversation"
}

@test "before the first request is out the row names the start, not the model" {
	serve <<<'{"text": "chosen, then done"}'
	# xg finds xg-run beside itself: a tree whose xg-run is slow to start.
	mkdir tree
	cp "$XG_SRCDIR/bin/xg" tree/
	printf '#!/bin/sh\nsleep 1.6\nexec "%s/bin/xg-run" "$@"\n' "$XG_SRCDIR" >tree/xg-run
	chmod +x tree/xg-run
	on_tty tree/xg run --model fake/m "hello"
	assert_success
	has_row '[|/\\-] choosing the model and preparing the request 1 s'
	# The start is named before the wait for the model, never after it.
	printf '%s' "$output" | tr '\r' '\n' | grep -aoE 'choosing the model|waiting for the model' |
		uniq | head -n 1 | grep -qx 'choosing the model'
	printf '%s' "$output" | tr '\r' '\n' | grep -aoE 'choosing the model|waiting for the model' |
		uniq | grep -c . | grep -qx '[12]'
	printf '%s' "$output" | grep -qa 'chosen, then done'
}
