#!/usr/bin/env bats
# xg-run's work slices (man 1 xg-run, Work slices): a small policy through
# XG_WORK_SLICE or --work-slice, the stop-and-report request at a boundary,
# the checkpoint, the continuation in place, and each way the run settles
# slice_complete instead.  Against the loopback fake provider.

load lib/helper
load lib/fake-provider
load lib/signal
load lib/xg-run

setup() {
	export XG_TEST_KEY=test-secret-51ce
	export FAKE_PROVIDER_KEY=$XG_TEST_KEY
	unset XG_WORK_SLICE
}

teardown() {
	fake_provider_stop
}

# The checkpoints' field $1, space-separated.
checkpoints() {
	recs checkpoint | jq -r "$1" | tr '\n' ' '
}

# The kinds of the user messages, space-separated (null for the request).
user_kinds() {
	recs message | jq -r 'select(.role == "user") | .kind' | tr '\n' ' '
}

# Every request is the one before plus new items, byte for byte.
assert_append_only() {
	fake_log '
import json
key = {"openai-chat": "messages", "anthropic-messages": "messages", "openai-responses": "input"}[log[0]["kind"]]
for a, b in zip(log, log[1:]):
    A, B = a["body"], b["body"]
    assert set(A) == set(B), (set(A), set(B))
    for k in A:
        if k != key:
            assert json.dumps(A[k]) == json.dumps(B[k]), k
    assert len(B[key]) > len(A[key])
    for i, item in enumerate(A[key]):
        assert json.dumps(item) == json.dumps(B[key][i]), (i, item, B[key][i])
'
}

@test "a full slice reports, writes its checkpoint and continues in place" {
	for kind in openai-chat anthropic-messages openai-responses; do
		rm -f a.txt b.txt
		serve "$kind" <<-'EOF'
		{"tool_calls": [{"id": "t1", "name": "todo_write", "args": {"items": [{"content": "make a", "status": "completed"}, {"content": "make b", "status": "pending"}]}}, {"id": "w1", "name": "write", "args": {"path": "a.txt", "content": "a\n"}}, {"id": "b1", "name": "bash", "args": {"command": "exit 3"}}]}
		{"text": "Slice one: made a; b is next."}
		{"tool_calls": [{"id": "w2", "name": "write", "args": {"path": "b.txt", "content": "b\n"}}, {"id": "t2", "name": "todo_write", "args": {"items": [{"content": "make a", "status": "completed"}, {"content": "make b", "status": "completed"}]}}, {"id": "b2", "name": "bash", "args": {"command": "cat b.txt"}}]}
		{"text": "Slice two: made b.", "tool_calls": [{"id": "w3", "name": "write", "args": {"path": "c.txt", "content": "no"}}]}
		{"text": "never asked"}
		EOF
		XG_WORK_SLICE=maxToolCalls=3,maxSlices=4 xgrun "make a and b"
		assert_failure 1
		[ "$(end_field .status)" = slice_complete ]
		[ "$(end_field .slices)" = 2 ]
		[ "$(end_field .requests)" = 4 ]
		[ "$(end_field .reason)" = "every todo item is done" ]
		[ "$(end_field .reply)" = "Slice two: made b." ]
		[ "$(user_kinds)" = "null slice-end slice-continue slice-end " ]
		# One checkpoint a slice, from the evidence.
		[ "$(checkpoints .slice)" = "1 2 " ]
		[ "$(checkpoints .outcome)" = "continue all_done " ]
		[ "$(checkpoints .tool_calls)" = "3 3 " ]
		[ "$(recs checkpoint | head -1 | jq -c '[.kind, .done, .next, .files, .commands]')" = \
		  '["slice",["make a"],["make b"],["a.txt"],[{"command":"exit 3","exit_code":3}]]' ]
		[ "$(recs checkpoint | tail -1 | jq -c '[.done, .next, .files, .commands]')" = \
		  '[["make a","make b"],[],["b.txt"],[{"command":"cat b.txt","exit_code":0}]]' ]
		[ "$(recs notice | jq -r .text | head -1)" = "work slice 1 ended after 3 tool calls; slice 2 continues with: make b" ]
		[ "$(recs notice | wc -l)" = 2 ]
		# The report is asked for with its limit, and the continuation
		# names the next open item.
		[[ "$(recs message | jq -r 'select(.kind == "slice-end") | .text' | head -1)" == *"reached 3 tool calls"* ]]
		[[ "$(recs message | jq -r 'select(.kind == "slice-continue") | .text')" == *"Your next open todo item is: make b"* ]]
		# The report's own tool call is refused, and nothing is run.
		[ "$(recs tool_result | jq -r 'select(.id == "w3") | .refused')" = true ]
		[ ! -e c.txt ]
		[ -e a.txt ] && [ -e b.txt ]
		# One run, one prefix: every request extends the one before.
		[ "$(recs run_start | wc -l)" = 1 ]
		assert_append_only
		fake_log 'assert len(log) == 4, len(log)'
		id=$(recs run_start | jq -r .run)
		[ "$(jq -r '"\(.status) \(.slices)"' "$XG_HOME/state/runs/$id/run.json")" = "slice_complete 2" ]
	done
}

@test "a continued run's conversation replays its slice messages byte for byte" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "true"}}]}
	{"text": "reported"}
	{"text": "finished in slice two"}
	{"text": "next run"}
	EOF
	XG_WORK_SLICE=maxToolCalls=1 xgrun --conversation c1 "go"
	assert_success
	[ "$(end_field .status)" = completed ]
	[ "$(end_field .slices)" = 2 ]
	xgrun --conversation c1 "again"
	assert_success
	# The next run starts at slice 1, and its request extends the last one.
	[ "$(end_field .slices)" = 1 ]
	assert_append_only
}

@test "a slice without a successful bash, edit or write is not continued" {
	printf 'x\n' >x.txt
	serve <<-'EOF'
	{"tool_calls": [{"id": "r1", "name": "read", "args": {"path": "x.txt"}}, {"id": "b1", "name": "bash", "args": {"command": "false"}}]}
	{"text": "only looked"}
	EOF
	XG_WORK_SLICE=maxToolCalls=2 xgrun "look"
	assert_failure 1
	[ "$(end_field .status)" = slice_complete ]
	[ "$(end_field .stop)" = null ]
	[ "$(end_field .slices)" = 1 ]
	[ "$(checkpoints .outcome)" = "fruitless " ]
	[ "$(user_kinds)" = "null slice-end " ]
	[[ "$(recs notice | jq -r .text)" == *"the run stops here (the slice ran no successful bash, edit or write)"* ]]
	fake_log 'assert len(log) == 2, len(log)'
}

@test "a plan-mode reply at a boundary is not continued" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "echo look"}}]}
	{"text": "the plan so far"}
	EOF
	xgrun --mode plan --work-slice maxToolCalls=1 "plan it"
	assert_failure 1
	[ "$(end_field .status)" = slice_complete ]
	[ "$(checkpoints .outcome)" = "plan_mode " ]
	fake_log 'assert len(log) == 2, len(log)'
}

@test "the slice cap ends the run, and a continuation gives no fresh budget" {
	serve <<-'EOF'
	{"tool_calls": [{"name": "bash", "args": {"command": "true"}}], "repeat": 1}
	{"text": "report"}
	{"tool_calls": [{"name": "bash", "args": {"command": "true"}}], "repeat": 1}
	{"text": "report"}
	{"tool_calls": [{"name": "bash", "args": {"command": "true"}}], "repeat": 1}
	{"text": "report"}
	{"text": "never asked"}
	EOF
	XG_WORK_SLICE=maxToolCalls=1,maxSlices=3 xgrun "loop"
	assert_failure 1
	[ "$(end_field .status)" = slice_complete ]
	[ "$(end_field .slices)" = 3 ]
	[ "$(checkpoints .outcome)" = "continue continue slice_cap " ]
	[ "$(end_field .reason)" = "the run reached its last work slice" ]
	fake_log 'assert len(log) == 6, len(log)'
	assert_append_only
}

@test "a plan repair does not restart the slice's count" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "true"}}, {"id": "b2", "name": "bash", "args": {"command": "true"}}]}
	{"text": "<proposed_plan>\n1. Half"}
	{"tool_calls": [{"id": "b3", "name": "bash", "args": {"command": "true"}}]}
	{"text": "report"}
	EOF
	xgrun --mode plan --work-slice maxToolCalls=3 "plan"
	assert_failure 1
	[ "$(user_kinds)" = "null plan-repair slice-end " ]
	[ "$(checkpoints .tool_calls)" = "3 " ]
	[ "$(end_field .status)" = slice_complete ]
}

@test "a provider failure on the report request settles slice_complete with the provider's exit" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "true"}}]}
	{"status": 500, "body": {"error": {"message": "boom"}}, "repeat": 2}
	EOF
	XG_RETRY="attempts=1,base=1,cap=5" XG_WORK_SLICE=maxToolCalls=1 xgrun "go"
	assert_failure 69
	[ "$(end_field .status)" = slice_complete ]
	[ "$(checkpoints .outcome)" = "provider_failure " ]
	[[ "$(end_field .reason)" == "the report request failed: "*boom* ]]
	[ "$(recs run_end | jq -r .exit)" = 69 ]
}

@test "an interrupt at a boundary still writes the checkpoint and ends as the person's stop" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "true"}}]}
	{"text": "a slow report", "delay_ms": 3000, "chunk": 1}
	EOF
	export XG_WORK_SLICE=maxToolCalls=1
	signal_run TERM '[ "$(fake_log "print(len(log))" 2>/dev/null)" = 2 ]' 0.1 \
		xg-run --model fake/m "go"
	[ "$rc" = 143 ]
	[ "$(end_field .status)" = interrupted ]
	[ "$(end_field .stop)" = user ]
	[ "$(checkpoints .outcome)" = "aborted " ]
}

@test "the clock bound ends a slice too" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "sleep 0.2"}}]}
	{"text": "report"}
	{"text": "done"}
	EOF
	# 0.001 minutes is 60 ms.
	XG_WORK_SLICE=maxMinutes=0.001 xgrun "slow"
	assert_success
	[ "$(end_field .slices)" = 2 ]
	[ "$(checkpoints .tool_calls)" = "1 " ]
	[[ "$(recs message | jq -r 'select(.kind == "slice-end") | .text')" == *"reached 0.001 minutes"* ]]
}

@test "the default slice is 320 tool calls, and off removes the boundary" {
	printf 'x\n' >x.txt
	calls=$(jq -nc '[range(321) | {id: "r\(.)", name: "read", args: {path: "x.txt"}}]')
	script() {
		printf '{"tool_calls": %s}\n{"tool_calls": [{"id": "w", "name": "write", "args": {"path": "y.txt", "content": "y"}}]}\n{"text": "done"}\n' "$calls"
	}
	script | serve
	xgrun "many"
	assert_failure 1
	[ "$(checkpoints '"\(.tool_calls) \(.outcome)"')" = "321 fruitless " ]
	script | serve
	XG_WORK_SLICE=off xgrun "many"
	assert_success
	[ "$(end_field .status)" = completed ]
	[ -z "$(recs checkpoint)" ]
	# The flag wins over the variable.
	script | serve
	XG_WORK_SLICE=maxToolCalls=1 xgrun --work-slice off "many"
	assert_success
	[ -z "$(recs checkpoint)" ]
}

@test "a malformed policy falls back to the defaults with one notice naming the fault" {
	serve <<-'EOF'
	{"tool_calls": [{"name": "bash", "args": {"command": "true"}}, {"name": "bash", "args": {"command": "true"}}]}
	{"text": "done"}
	{"tool_calls": [{"name": "bash", "args": {"command": "true"}}, {"name": "bash", "args": {"command": "true"}}]}
	{"text": "done"}
	{"tool_calls": [{"name": "bash", "args": {"command": "true"}}, {"name": "bash", "args": {"command": "true"}}]}
	{"text": "done"}
	EOF
	XG_WORK_SLICE=maxToolCalls=1,maxSlice=2 xgrun "go"
	assert_success
	[ "$(recs notice | jq -r .text)" = "XG_WORK_SLICE: 'maxSlice' is not a key (maxToolCalls, maxMinutes, maxSlices); the default work slices apply (maxToolCalls=320,maxMinutes=60,maxSlices=8)" ]
	[ -z "$(recs checkpoint)" ]
	XG_WORK_SLICE=maxToolCalls=0 xgrun "go"
	assert_success
	[ "$(recs notice | wc -l)" = 1 ]
	[[ "$(recs notice | jq -r .text)" == "XG_WORK_SLICE: maxToolCalls wants a whole number from 1, not '0';"* ]]
	xgrun --work-slice maxMinutes=soon "go"
	assert_success
	[[ "$(recs notice | jq -r .text)" == "--work-slice: maxMinutes wants a number of minutes above 0, not 'soon';"* ]]
	[ -z "$(recs checkpoint)" ]
}
