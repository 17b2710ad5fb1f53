#!/usr/bin/env bats
# xg-run's stall watch (man 1 xg-run, The stall watch): a silent model and a
# long tool each end the run interrupted, stalled; heartbeats and their
# fields; XG_STALL; and the retry budget of XG_RETRY against a silent
# server.  The windows are shrunk to seconds; no test waits out a default.

load lib/helper
load lib/fake-provider
load lib/xg-run

setup() {
	xg_run_setup
	unset XG_STALL XG_RETRY XG_WORK_SLICE
}

teardown() {
	fake_provider_stop
}

@test "a model silent for the reply window ends the run interrupted, stalled" {
	serve <<<'{"text": "never seen", "stall": 60, "stall_after": 0}'
	SECONDS=0
	XG_STALL=reply=1s,beat=10m xgrun "say something"
	assert_failure 1
	# Far sooner than the provider's idle timeout (300 s) or the stall.
	[ "$SECONDS" -lt 30 ]
	assert_equal "$(end_field .status)" interrupted
	assert_equal "$(end_field .stop)" stalled
	end_field .reason | grep -q 'nothing from the model for 1 s'
	# A stall is not a provider failure: nothing was retried.
	assert_equal "$(recs retry)" ""
}

@test "a tool inside the tool window too long is stopped with its group and the run stalls" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "echo $$ >pid; echo started; exec sleep 60"}}]}
	{"text": "never asked"}
	EOF
	SECONDS=0
	XG_STALL=tool=1s,reply=1m xgrun "run it"
	assert_failure 1
	[ "$SECONDS" -lt 30 ]
	assert_equal "$(end_field .stop)" stalled
	end_field .reason | grep -q 'inside bash (b1) for 1 s'
	# Its result is kept, with what it printed, and the command is gone.
	assert_equal "$(recs tool_result | jq -r .id)" b1
	recs tool_result | jq -e '.output | test("started")'
	[ -s pid ]
	[ ! -e "/proc/$(cat pid)" ]
	# Complete work is in the conversation: the call and its result.
	conv=$(end_field .conversation)
	jq -e -s 'map(select(.type == "tool_result" and .id == "b1")) | length == 1' "$CONVS/$conv.jsonl"
	assert_equal "$(fake_log 'print(len(log))')" 1
}

@test "heartbeats name the phase, the tools and their age, and are no event of the clock" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "s1", "name": "bash", "args": {"command": "sleep 1.5"}}]}
	{"text": "done"}
	EOF
	XG_STALL=beat=200ms xgrun "sleep"
	assert_success
	beats=$(recs heartbeat | jq -c 'select(.phase == "tool")')
	[ "$(printf '%s\n' "$beats" | wc -l)" -ge 3 ]
	first=$(printf '%s\n' "$beats" | head -n1)
	run_id=$(end_field .run)
	jq -e --arg r "$run_id" '.run == $r and .slice == 1 and .children == [] and
		(.active_tools | length) == 1 and .active_tools[0].name == "bash" and
		.active_tools[0].id == "s1" and .active_tools[0].detail == "sleep 1.5" and
		.oldest_tool_ms == .active_tools[0].ms' <<<"$first"
	# The beats do not reset the quiet they report: it only grows.
	printf '%s\n' "$beats" | jq -s -e '[.[].quiet_ms] as $q | $q == ($q | sort) and $q[-1] > $q[0]'
	printf '%s\n' "$beats" | jq -s -e '[.[].oldest_tool_ms] as $o | $o == ($o | sort)'
	# Records and the run's events get them; the conversation does not.
	grep -q '"type":"heartbeat"' "$XG_HOME/state/runs/$run_id/events.ndjson"
	conv=$(end_field .conversation)
	run ! grep -q heartbeat "$CONVS/$conv.jsonl"
}

@test "a heartbeat during a retry's wait says which retry and how soon" {
	serve <<-'EOF'
	{"status": 503, "body": "busy"}
	{"text": "back"}
	EOF
	XG_STALL=beat=100ms XG_RETRY=base=1500,cap=1500 xgrun "hello"
	assert_success
	recs heartbeat | jq -s -e 'map(select(.phase == "retry")) | length >= 2 and
		(.[0].retry.attempt == 1) and (.[0].retry.of == 8) and
		(.[0].retry.in_ms > 0) and (.[0].retry.in_ms <= 1500)'
	recs heartbeat | jq -s -e 'map(select(.phase == "retry") | .retry.in_ms) as $w | $w == ($w | sort | reverse)'
}

@test "a malformed XG_STALL is a notice naming it, and the defaults stand" {
	serve <<<'{"text": "fine"}'
	XG_STALL=reply=soon xgrun "hello"
	assert_success
	recs notice | jq -e -s 'map(.text) | any(test("XG_STALL: .reply=soon. is not a duration"))'
	assert_equal "$(end_field .status)" completed
	XG_STALL=nap=1s xgrun "hello"
	recs notice | jq -e -s 'map(.text) | any(test("nap=1s"))'
}

@test "config.json's stall key sets the windows when XG_STALL does not, and a bad one is named" {
	serve <<<'{"text": "never seen", "stall": 60, "stall_after": 0}'
	printf '{"stall": "reply=1s,beat=10m"}\n' >"$XG_HOME/config/config.json"
	SECONDS=0
	xgrun "say something"
	assert_failure 1
	[ "$SECONDS" -lt 30 ]
	assert_equal "$(end_field .stop)" stalled
	end_field .reason | grep -q 'nothing from the model for 1 s'
	# XG_STALL wins over it.
	serve <<<'{"text": "fine", "delay_ms": 1500}'
	XG_STALL=reply=1m xgrun "hello"
	assert_success
	assert_equal "$(end_field .status)" completed
	# Not a duration, or not a string: a notice naming the field.
	serve <<<'{"text": "fine"}'
	printf '{"stall": "reply=soon"}\n' >"$XG_HOME/config/config.json"
	xgrun "hello"
	assert_success
	recs notice | jq -e -s 'map(.text) | any(test("config.json: field .stall.: .reply=soon. is not a duration"))'
	serve <<<'{"text": "fine"}'
	printf '{"stall": 15}\n' >"$XG_HOME/config/config.json"
	xgrun "hello"
	assert_success
	recs notice | jq -e -s 'map(.text) | any(test("config.json: field .stall. is a string"))'
}

@test "the retry budget bounds a silent server: far fewer attempts than the policy's eight" {
	serve <<<'{"text": "never", "stall": 60, "stall_after": 0, "repeat": 20}'
	SECONDS=0
	XG_RETRY=idle=2000,base=100,cap=100,budget=3s xgrun "hello"
	assert_failure 69
	# Unbounded: 9 attempts of 2 s idle each, 18 s at the least.
	[ "$SECONDS" -lt 12 ]
	n=$(fake_log 'print(len(log))')
	[ "$n" -ge 2 ] && [ "$n" -le 4 ]
	[ "$(recs retry | wc -l)" -eq $((n - 1)) ]
	end_field .reason | grep -q 'no bytes from the provider'
}

@test "a retry-after past the budget ends the run with 75 at once, not an early retry" {
	serve <<-'EOF'
	{"status": 429, "headers": {"retry-after": "30"}, "body": {"error": {"message": "slow down", "type": "rate_limit_error"}}}
	{"text": "too soon"}
	EOF
	SECONDS=0
	XG_RETRY=budget=5s xgrun "hello"
	assert_failure 75
	[ "$SECONDS" -lt 10 ]
	assert_equal "$(recs retry)" ""
	assert_equal "$(fake_log 'print(len(log))')" 1
	end_field .reason | grep -q 'asks to wait 30 s, past the retry budget'
}

@test "XG_RETRY's durations take units, and a bad budget is named" {
	serve <<-'EOF'
	{"status": 503, "body": "busy"}
	{"text": "back"}
	EOF
	XG_RETRY=base=50ms,budget=2m xgrun "hello"
	assert_success
	assert_equal "$(recs retry | jq -r .delay_ms)" "$(recs retry | jq -r '.delay_ms | select(. <= 60)')"
	XG_RETRY=budget=soon xgrun "hello"
	[[ "$stderr" == *"XG_RETRY: 'budget=soon'"* ]]
}
