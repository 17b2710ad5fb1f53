#!/usr/bin/env bats
# xg say (man 1 xg, Steering a run): a message handed to the run that holds
# a conversation, taken before its next request as the person's message.
# Against the loopback fake provider; the message is sent from inside the
# run by a scripted bash call (so it comes while a tool runs), or from the
# test while the reply is on its way.  The fake provider's log shows each
# request to be the one before plus new items, the message among them.

load lib/helper
load lib/fake-provider
load lib/xg-run

setup() {
	xg_run_setup
	unset XG_WORK_SLICE XG_STALL
}

teardown() {
	fake_provider_stop
}

# say_step ID ARGS: a scripted reply whose bash call runs "xg say ARGS" (a
# tool's environment has no XG_HOME of its own: the run keeps its paths
# from the model).
say_step() {
	local id=$1
	shift
	jq -nc --arg id "$id" --arg c "XG_HOME='$XG_HOME' xg say $*" \
		'{tool_calls: [{id: $id, name: "bash", args: {command: $c}}]}'
}

# The messages waiting in conversation $1's inbox, by name.
waiting() {
	ls "$XG_HOME/state/steer/$1" | grep -vxE 'lock|open' || true
}

# The Python every log check starts with: each request's items, their
# strings, and whether a request is the one before plus new items.
LOGLIB='
import json
key = {"openai-chat": "messages", "anthropic-messages": "messages", "openai-responses": "input"}[log[0]["kind"]]
def items(r): return r["body"][key]
def dump(x): return json.dumps(x)
def strings(x):
    if isinstance(x, str): yield x
    elif isinstance(x, list):
        for v in x: yield from strings(v)
    elif isinstance(x, dict):
        for v in x.values(): yield from strings(v)
def extends(a, b):
    A, B = a["body"], b["body"]
    if set(A) != set(B): return False
    if any(dump(A[k]) != dump(B[k]) for k in A if k != key): return False
    return len(B[key]) > len(A[key]) and all(dump(x) == dump(B[key][i]) for i, x in enumerate(A[key]))
def new(i): return list(strings(items(log[i])[len(items(log[i - 1])):]))
'

@test "a message sent while a tool runs goes with the next request, after the result, in each wire kind" {
	printf 'wrap up now: "quoted", $HOME, ünïcode\nand a second line' >msg.txt
	for kind in $KINDS; do
		serve "$kind" <<-EOF
		$(say_step b1 --conversation "c-$kind" '< msg.txt; echo said')
		{"text": "wrapping up"}
		EOF
		xgrun --conversation "c-$kind" "do the work"
		assert_success
		[ "$(end_field .reply)" = "wrapping up" ]
		# xg say printed nothing in a pipe, and exited 0.
		recs tool_result | jq -e '.ok and .output == "said"'
		# One steer record, with the text byte for byte, after the result.
		[ "$(recs steer | jq -r .text)" = "$(cat msg.txt)" ]
		recs steer | jq -e '(.sent | test("^20")) and (has("next_run") | not)'
		[ "$(printf '%s\n' "$output" | jq -r 'select(.type == "tool_result" or .type == "steer" or (.type == "message" and .role == "user")) | .type' | tr '\n' ' ')" = "message tool_result steer message " ]
		# The conversation keeps it as the person's: no kind, not hidden.
		jq -e -s --rawfile m msg.txt 'map(select(.type == "message" and .role == "user")) | .[1] | .text == $m and (has("kind") | not) and (has("hidden") | not)' "$CONVS/c-$kind.jsonl"
		fake_log "$LOGLIB"'
m = open("msg.txt").read()
assert len(log) == 2, len(log)
assert extends(log[0], log[1])
n = new(1)
assert m in n and n.index(m) > n.index("said"), n
'
		# The inbox is closed (its marker no longer held) and empty.
		flock -n "$XG_HOME/state/steer/c-$kind/open" true
		[ -z "$(waiting "c-$kind")" ]
	done
}

@test "two messages are taken in order, and the requests still extend each other" {
	serve <<-EOF
	$(say_step b1 --conversation c1 "'first: stop adding features' && XG_HOME='$XG_HOME' xg say --conversation c1 'second: write the report'")
	{"tool_calls": [{"id": "b2", "name": "bash", "args": {"command": "true"}}]}
	{"text": "reported"}
	EOF
	xgrun --conversation c1 "build it"
	assert_success
	[ "$(recs steer | jq -r .text | tr '\n' '|')" = "first: stop adding features|second: write the report|" ]
	fake_log "$LOGLIB"'
assert len(log) == 3
assert extends(log[0], log[1]) and extends(log[1], log[2])
n = new(1)
assert n.index("first: stop adding features") < n.index("second: write the report"), n
assert "first: stop adding features" not in new(2)
'
}

@test "a message that comes before a reply that asks for no tool sends the run round once more" {
	serve <<-'EOF'
	{"text": "all done", "stall": 2, "stall_after": 0}
	{"text": "done, and wrapped up as you asked"}
	EOF
	xg-run --model fake/m --conversation c1 "do it" </dev/null >out.ndjson 2>err.txt &
	pid=$!
	# Once the first request is out, the run holds the inbox open.
	for i in $(seq 1 200); do
		[ -s "$FAKE_LOG" ] && break
		sleep 0.05
	done
	# On a terminal it says where the message went.
	run script -qec "xg say --conversation c1 'also: wrap up'" /dev/null
	assert_success
	assert_output --regexp $'^sent to run [0-9a-f-]+, which holds conversation c1\r?$'
	wait "$pid"
	output=$(cat out.ndjson)
	[ "$(end_field .status)" = completed ]
	[ "$(end_field .reply)" = "done, and wrapped up as you asked" ]
	[ "$(recs steer | jq -r .text)" = "also: wrap up" ]
	fake_log "$LOGLIB"'
assert len(log) == 2
assert extends(log[0], log[1])
n = new(1)
assert "all done" in n and n[-1] == "also: wrap up", n
'
}

@test "with no run holding the conversation xg say exits 69 and writes nothing" {
	mkdir -p "$XG_HOME/state"
	find "$XG_HOME" | sort >before
	run_split xg say --conversation nobody 'hello?'
	assert_equal "$status" 69
	assert_equal "$stderr" "xg: no run holds conversation nobody; nothing was sent"
	# No conversation here at all.
	run_split xg say 'hello?'
	assert_equal "$status" 69
	assert_regex "$stderr" "^xg: no conversation was started in '.*', so no run holds one\$"
	run_split xg say --run 20261205-000000-00000000 'hello?'
	assert_equal "$status" 69
	assert_equal "$stderr" "xg: there is no run '20261205-000000-00000000'"
	find "$XG_HOME" | sort >after
	diff before after
}

@test "after the run has ended xg say exits 69, and the next run gets nothing" {
	serve <<-'EOF'
	{"text": "one"}
	{"text": "two"}
	EOF
	xgrun --conversation c1 "first"
	assert_success
	run_id=$(recs run_start | jq -r .run)
	run_split xg say --conversation c1 'too late'
	assert_equal "$status" 69
	assert_equal "$stderr" "xg: no run holds conversation c1; nothing was sent"
	run_split xg say --run "$run_id" 'too late'
	assert_equal "$status" 69
	assert_equal "$stderr" "xg: run '$run_id' has ended; nothing was sent"
	# This directory's newest conversation, as xg resume finds it.
	run_split xg say 'too late'
	assert_equal "$status" 69
	assert_equal "$stderr" "xg: no run holds conversation c1; nothing was sent"
	[ -z "$(waiting c1)" ]
	xgrun --conversation c1 "second"
	assert_success
	[ -z "$(recs steer)" ]
	! grep -q 'too late' "$FAKE_LOG"
}

@test "a run killed outright leaves a marker no message is written to" {
	serve <<-'EOF'
	{"text": "slow", "stall": 30, "stall_after": 0}
	EOF
	xg-run --model fake/m --conversation c1 "do it" </dev/null >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 1 200); do
		[ -s "$FAKE_LOG" ] && break
		sleep 0.05
	done
	[ -e "$XG_HOME/state/steer/c1/open" ]
	kill -KILL "$pid"
	wait "$pid" || true
	[ -e "$XG_HOME/state/steer/c1/open" ]
	run_split xg say --conversation c1 'anyone?'
	assert_equal "$status" 69
	[ -z "$(waiting c1)" ]
}

@test "a message a run had no request left for is kept in the conversation for its next run" {
	serve <<-EOF
	$(say_step b1 --conversation c1 "'late one'; kill -TERM \$PPID")
	{"text": "next run's reply"}
	EOF
	xgrun --conversation c1 "work"
	assert_equal "$status" 143
	[ "$(end_field .status)" = interrupted ]
	recs steer | jq -e '.text == "late one" and .next_run == true'
	[ "$(jq -r 'select(.type == "message" and .role == "user") | .text' "$CONVS/c1.jsonl" | tail -1)" = "late one" ]
	[ -z "$(waiting c1)" ]
	[ "$(wc -l <"$FAKE_LOG")" = 1 ]
	xgrun --conversation c1 "go on"
	assert_success
	fake_log "$LOGLIB"'
assert len(log) == 2
s = list(strings(items(log[1])))
assert s.index("late one") < s.index("go on"), s
'
}

@test "--run names the run, and its conversation is the one sent to" {
	serve <<-EOF
	$(say_step b1 --run r-steer-1 "'from a script, by run id'")
	$(say_step b2 --run r-other "'not this run'")
	{"text": "ok"}
	EOF
	xgrun --run-id r-steer-1 --conversation c1 "work"
	assert_success
	[ "$(recs steer | jq -r .text)" = "from a script, by run id" ]
	recs tool_result | jq -s -e '.[1].output | test("there is no run .r-other.")'
}

@test "the text comes from standard input without an operand, or for -" {
	serve <<-EOF
	$(say_step b1 --conversation c1 "< msg.txt && printf 'piped\\n\\n' | XG_HOME='$XG_HOME' xg say --conversation c1 -")
	{"text": "ok"}
	EOF
	printf 'from a file\n' >msg.txt
	xgrun --conversation c1 "work"
	assert_success
	[ "$(recs steer | jq -r .text | tr '\n' '|')" = "from a file|piped|" ]
}

@test "a bad command line is exit 2, an empty text too" {
	run_split xg say --conversation c1 --run r1 'x'
	assert_equal "$status" 2
	assert_regex "$stderr" "name the conversation or the run, not both"
	run_split xg say --conversation c1 ''
	assert_equal "$status" 2
	assert_regex "$stderr" "the text is empty"
	run_split xg say --conversation '../x' 'x'
	assert_equal "$status" 2
	run_split xg say --conversation c1 a b
	assert_equal "$status" 2
	run xg help say
	assert_success
	assert_line 'usage: xg say [--conversation id | --run id] [text]'
	assert_line --regexp '^ +--run id +'
}

@test "a goal's round takes a message, and the check reads it as the person's" {
	serve <<-EOF
	$(say_step b1 --conversation g1 "'GOAL-STEER: keep a.txt short'")
	{"tool_calls": [{"id": "c1", "name": "update_goal", "args": {"status": "complete", "evidence": "said"}}]}
	{"text": "The goal is met."}
	{"text": "done: the claim holds"}
	EOF
	run_split xg-goal set --model fake/m --conversation g1 "write a.txt" </dev/null
	assert_success
	[ "$(recs steer | jq -r .text)" = "GOAL-STEER: keep a.txt short" ]
	fake_log '
import json
rounds = [e for e in log if e["body"].get("tools")]
checks = [e for e in log if not e["body"].get("tools")]
assert "GOAL-STEER" in json.dumps(rounds[1]["body"]), rounds[1]
assert "[person] GOAL-STEER: keep a.txt short" in checks[0]["body"]["messages"][1]["content"]
'
}

@test "the renderer shows the message, and says when it waits for the next run" {
	run xg-test render <<-'EOF'
	{"type":"steer","text":"wrap up now\nand report","sent":"2026-12-05T20:00:00.000Z"}
	{"type":"steer","text":"one more thing","sent":"2026-12-05T20:00:01.000Z","next_run":true}
	EOF
	assert_success
	assert_line 'you: wrap up now...'
	assert_line 'you: one more thing (too late for this run: kept for the next)'
}

@test "on a terminal the row says the model is reading the message" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	unset NO_COLOR
	export TERM=xterm
	serve <<-EOF
	$(say_step b1 --conversation c1 "'wrap up'")
	{"text": "wrapped", "stall": 1.5, "stall_after": 0}
	EOF
	run python3 "$XG_SRCDIR/tests/lib/pty_run.py" xg run --model fake/m --conversation c1 "work"
	assert_success
	printf '%s' "$output" | grep -qaE 'you: .{0,8}wrap up'
	printf '%s' "$output" | grep -qaE $'\r\033\\[K\033\\[2m[|/\\\\-] waiting for the model to read your message [01] s'
}
