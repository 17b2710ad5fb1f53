#!/usr/bin/env bats
# xg-goal (man 1 xg-goal): a goal's state in its conversation, its rounds
# through xg-run with a hidden continuation message, the goal tools, the
# completion claim and its check, the brakes and the caps, and a driver
# interrupted, killed, refused and resumed from cron.  Against the
# loopback fake provider: every reply, the check's included, is a step of
# its script.

load lib/helper
load lib/fake-provider
load lib/signal
load lib/xg-run

setup() {
	xg_run_setup
	export XG_LOCK_TIMEOUT=300
	unset XG_COMPLETION_CHECK
}

teardown() {
	fake_provider_stop
}

# xggoal ARGS: xg-goal on fake/m, stdin closed off.
xggoal() {
	run_split xg-goal "$@" </dev/null
}

# The goal records' field $1, space-separated.
goals() {
	recs goal | jq -r "$1" | tr '\n' ' '
}

# The conversation's goal entries' field $1, space-separated.
entries() {
	jq -r "select(.type == \"goal\") | $1" "$CONVS/${2:-g1}.jsonl" | tr '\n' ' '
}

# The steps of a round that writes a file, then ends its reply.
work_round() {
	printf '{"tool_calls": [{"id": "w%s", "name": "write", "args": {"path": "%s", "content": "x\\n"}}]}\n' "$1" "$2"
	printf '{"text": "Wrote %s."}\n' "$2"
}

# The steps of a round that claims completion, then ends its reply.
claim_round() {
	printf '{"tool_calls": [{"id": "c%s", "name": "update_goal", "args": {"status": "complete", "evidence": "%s"}}]}\n' "$1" "$2"
	printf '{"text": "The goal is met."}\n'
}

# The requests of the rounds (the claim check's, which offer no tools, left
# out): in the fake provider's log.
ROUNDS='
import json
rounds = [e for e in log if e["body"].get("tools")]
checks = [e for e in log if not e["body"].get("tools")]
'

@test "set drives rounds until a claim the check accepts: the goal is complete" {
	serve <<-EOF
	$(work_round 1 a.txt)
	$(claim_round 2 "a.txt written, cat shows it")
	{"text": "done: the write of a.txt succeeded and nothing else was asked"}
	EOF
	xggoal set --model fake/m --conversation g1 "write a.txt"
	assert_success
	[ -f a.txt ]
	[ "$(goals .event)" = "set round round " ]
	[ "$(goals .status)" = "active active complete " ]
	[ "$(goals .rounds)" = "0 1 2 " ]
	[ "$(recs goal | tail -1 | jq -c '[.claim, .verdict, .reason]')" = \
	  '["a.txt written, cat shows it","done","the write of a.txt succeeded and nothing else was asked"]' ]
	[ "$(recs goal | head -1 | jq -c '.limits')" = '{"rounds":30,"hours":8}' ]
	[ "$(recs goal_check | jq -c '[.checked, .verdict, .accepted]')" = '[true,"done",true]' ]
	# Two rounds, so two run_ends; the last says the goal is complete.
	[ "$(recs run_end | jq -r .status | tr '\n' ' ')" = "completed completed " ]
	# Each round's run.json names the goal's status after it and the round.
	for r in $(recs run_start | jq -r .run); do
		jq -c .goal "$XG_HOME/state/runs/$r/run.json"
	done >goal-of-runs
	[ "$(cat goal-of-runs | tr '\n' ' ')" = '{"status":"active","round":1} {"status":"complete","round":2} ' ]
	# The runs index has each round as settled: xg-log reads the newer line.
	run xg-log --json
	assert_success
	[ "$(printf '%s\n' "$output" | jq -c '.goal' | tr '\n' ' ')" = \
	  '{"status":"complete","round":2} {"status":"active","round":1} ' ]
	[ "$(printf '%s\n' "$output" | jq -r .status | tr '\n' ' ')" = "completed completed " ]
	# What each round was asked: the objective, not the hidden text.
	[ "$(printf '%s\n' "$output" | jq -r .request | tr '\n' ' ')" = "goal: write a.txt goal: write a.txt " ]
	# The state is in the conversation, and get reads it back.
	[ "$(entries .event)" = "set round round " ]
	xggoal get --conversation g1
	assert_success
	[ "$(printf '%s\n' "$output" | jq -c '[.status, .rounds, .objective, .driver]')" = \
	  '["complete",2,"write a.txt",null]' ]
	# The check was a request of its own: its own system prompt, no tools,
	# the objective and the claim in it, and the hidden message left out.
	fake_log "$ROUNDS"'
assert len(rounds) == 4 and len(checks) == 1, (len(rounds), len(checks))
c = checks[0]["body"]
assert c["messages"][0]["content"].startswith("You review a claim"), c["messages"][0]
text = c["messages"][1]["content"]
assert "<objective>\nwrite a.txt\n</objective>" in text
assert "a.txt written, cat shows it" in text
assert "[tool result write, ok]" in text
assert "This message starts the next round" not in text
'
}

@test "each round's message is hidden, kept in the conversation and never shown" {
	serve <<-EOF
	$(work_round 1 a.txt)
	$(claim_round 2 "a.txt is there")
	{"text": "done: it is"}
	EOF
	xggoal set --model fake/m --conversation g1 "make a.txt & <keep> it"
	assert_success
	[ "$(jq -c 'select(.type == "message" and .role == "user") | [.hidden, .kind]' "$CONVS/g1.jsonl" | tr '\n' ' ')" = \
	  '[true,"goal-continuation"] [true,"goal-continuation"] ' ]
	# The objective is data: escaped and wrapped.
	[[ "$(recs message | jq -r 'select(.role == "user") | .text' | head -20)" == *"<objective>"$'\n'"make a.txt &amp; &lt;keep&gt; it"$'\n'"</objective>"* ]]
	# xg's renderer shows a person none of it, but the goal's progress.
	printf '%s\n' "$output" >records.ndjson
	run xg-test render <records.ndjson
	assert_success
	refute_output --partial "This message starts the next round"
	refute_output --partial "<objective>"
	assert_output --partial "Wrote a.txt."
	assert_output --partial "xg: goal complete after 2 rounds: it is"
}

@test "every request of a three-round goal is the one before plus new items" {
	for kind in openai-chat anthropic-messages openai-responses; do
		rm -rf "$XG_HOME/state"
		serve "$kind" <<-EOF
		$(work_round 1 a.txt)
		$(work_round 2 b.txt)
		$(claim_round 3 "a.txt and b.txt exist")
		{"text": "done: both files were written"}
		EOF
		xggoal set --model fake/m --conversation g1 "write a.txt and b.txt"
		assert_success
		[ "$(goals .rounds | awk '{print $NF}')" = 3 ]
		fake_log "$ROUNDS"'
key = {"openai-chat": "messages", "anthropic-messages": "messages", "openai-responses": "input"}[log[0]["kind"]]
assert len(rounds) == 6, len(rounds)
for a, b in zip(rounds, rounds[1:]):
    A, B = a["body"], b["body"]
    assert set(A) == set(B), (set(A), set(B))
    for k in A:
        if k != key:
            assert json.dumps(A[k]) == json.dumps(B[k]), k
    assert len(B[key]) > len(A[key])
    for i, item in enumerate(A[key]):
        assert json.dumps(item) == json.dumps(B[key][i]), (i, item, B[key][i])
names = [t.get("name") or t.get("function", {}).get("name") for t in rounds[0]["body"]["tools"]]
assert names[-2:] == ["get_goal", "update_goal"], names
'
	done
}

@test "the goal tools are offered only while the conversation has a goal" {
	serve <<-'EOF'
	{"text": "plain"}
	{"text": "still plain"}
	{"text": "after the clear"}
	EOF
	xgrun --conversation g1 "hello"
	assert_success
	xggoal set --no-run --conversation g1 "an objective"
	assert_success
	[ "$(goals .status)" = "active " ]
	xgrun --conversation g1 "hello again"
	assert_success
	xggoal clear --conversation g1
	assert_success
	[ "$(goals .event)" = "clear " ]
	xgrun --conversation g1 "and again"
	assert_success
	fake_log '
def names(e):
    return [t.get("name") or t.get("function", {}).get("name") for t in e["body"].get("tools", [])]
assert "update_goal" not in names(log[0]) and "get_goal" not in names(log[0]), names(log[0])
assert names(log[1])[-2:] == ["get_goal", "update_goal"], names(log[1])
assert "update_goal" not in names(log[2]), names(log[2])
assert not any(n == "create_goal" for e in log for n in names(e))
'
	xggoal get --conversation g1
	assert_failure 1
	assert_regex "$stderr" "has no goal"
}

@test "get on a terminal is one status line; in a pipe and with --json, the record" {
	xggoal set --no-run --conversation g1 --rounds 5 --hours 0.5 "$(printf 'first objective, which goes on for long enough to be cut at sixty characters\nsecond line')"
	assert_success
	run python3 "$XG_SRCDIR/tests/lib/pty_run.py" xg-goal get --conversation g1
	assert_success
	assert_equal "$(tr -d '\r' <<<"$output")" \
		"paused  round 0 of 5  0s of 0.5h  no driver  g1: first objective, which goes on for long enough to be cut at ..."
	run python3 "$XG_SRCDIR/tests/lib/pty_run.py" xg-goal get --json --conversation g1
	assert_success
	assert_equal "$(tr -d '\r' <<<"$output" | jq -c '[.type, .status, .rounds]')" '["goal","paused",0]'
	xggoal get --conversation g1
	assert_equal "$(jq -c '[.type, .status, .rounds]' <<<"$output")" '["goal","paused",0]'
}

@test "get, pause, edit and clear work on the newest conversation of this directory" {
	xggoal set --no-run --conversation g1 --rounds 5 --hours 0.5 "first objective"
	assert_success
	# Recorded but not driven: it shows as paused.
	xggoal get
	assert_success
	[ "$(printf '%s\n' "$output" | jq -c '[.conversation, .status, .limits, .driver]')" = \
	  '["g1","paused",{"rounds":5,"hours":0.5},null]' ]
	[ "$(entries .status)" = "active " ]
	xggoal pause
	assert_success
	[ "$(goals .status)" = "paused " ]
	xggoal edit "second objective"
	assert_success
	[ "$(goals '.event + ":" + .objective')" = "edit:second objective " ]
	xggoal set --no-run --conversation g1 "third"
	assert_failure 2
	assert_regex "$stderr" "has a goal already \\(paused\\); --replace replaces it"
	xggoal set --no-run --conversation g1 --replace "third"
	assert_success
	[ "$(goals '.status + ":" + .objective')" = "active:third " ]
	xggoal clear
	assert_success
	[ "$(entries .event)" = "set pause edit set clear " ]
	xggoal pause
	assert_failure 1
}

@test "an objective is checked: blank, over 4000 characters or not UTF-8 is exit 2" {
	xggoal set --no-run "   "
	assert_failure 2
	assert_regex "$stderr" "the objective is empty"
	xggoal set --no-run "$(head -c 4001 /dev/zero | tr '\0' a)"
	assert_failure 2
	assert_regex "$stderr" "longer than 4000 characters"
	xggoal set --no-run --conversation g1 "$(head -c 4000 /dev/zero | tr '\0' a)"
	assert_success
	xggoal set --no-run --replace --conversation g1 "$(printf 'bad \377 byte')"
	assert_failure 2
	assert_regex "$stderr" "not valid UTF-8"
	xggoal set --no-run --rounds 0 "x"
	assert_failure 2
	xggoal set --no-run --hours -1 "x"
	assert_failure 2
	xggoal get extra
	assert_failure 2
	[ ! -e "$CONVS/g1.jsonl" ] || [ "$(entries .event)" = "set " ]
}

@test "a claim the check turns down keeps the goal active, and the next round is told why" {
	serve <<-EOF
	$(claim_round 1 "the tests pass")
	{"text": "continue: no test run is in the transcript; run make check"}
	$(work_round 2 ran.txt)
	$(claim_round 3 "make check passed, see the write of ran.txt")
	{"text": "done: the run is shown"}
	EOF
	xggoal set --model fake/m --conversation g1 "make the tests pass"
	assert_success
	[ "$(goals .status)" = "active active active complete " ]
	[ "$(goals .verdict)" = "null continue null done " ]
	[ "$(recs goal | sed -n 2p | jq -r .reason)" = "no test run is in the transcript; run make check" ]
	# The round after the refusal carries the reason, as data; the one
	# after that no longer does.
	msgs=$(recs message | jq -c 'select(.role == "user") | .text')
	[ "$(printf '%s\n' "$msgs" | sed -n 1p | jq -r . | grep -c '<review>')" = 0 ]
	[[ "$(printf '%s\n' "$msgs" | sed -n 2p | jq -r .)" == *"<review>"$'\n'"no test run is in the transcript; run make check"$'\n'"</review>"* ]]
	[ "$(printf '%s\n' "$msgs" | sed -n 3p | jq -r . | grep -c '<review>')" = 0 ]
	fake_log "$ROUNDS"'
assert len(checks) == 2, len(checks)
'
}

@test "a check that fails, answers unreadably or is switched off accepts the claim, saying why" {
	export XG_RETRY=off
	for how in error garbage twolines empty off; do
		rm -rf "$XG_HOME/state"
		case $how in
		error) check='{"status": 500, "body": {"error": {"message": "boom", "type": "server_error"}}}' ;;
		garbage) check='{"text": "Looks complete to me."}' ;;
		twolines) check='{"text": "done: yes\nreally"}' ;;
		empty) check='{"text": "continue:   "}' ;;
		off) check='{"text": "continue: never asked"}' ;;
		esac
		serve <<-EOF
		$(claim_round 1 "all done")
		$check
		EOF
		if [ "$how" = off ]; then
			XG_COMPLETION_CHECK=off xggoal set --model fake/m --conversation g1 "x"
		else
			xggoal set --model fake/m --conversation g1 "x"
		fi
		assert_success
		[ "$(goals .status)" = "active complete " ]
		[ "$(recs goal_check | jq -c '[.checked, .verdict, .accepted]')" = '[false,null,true]' ]
		note=$(recs notice | jq -r 'select(.from == "xg-run") | .text')
		case $how in
		error) [[ "$note" == *"the completion check failed (provider 'fake': server: HTTP 500: boom)"* ]] ;;
		off) [[ "$note" == *"XG_COMPLETION_CHECK=off"* ]]
		     fake_log "$ROUNDS"'
assert len(checks) == 0, len(checks)
' ;;
		*) [[ "$note" == *"could not be read as \"done: ...\" or \"continue: ...\""* ]] ;;
		esac
		[[ "$note" == *"the goal's completion claim is accepted" ]]
	done
}

@test "a blocker is accepted only when the same one is reported in three rounds in a row" {
	block() {
		printf '{"tool_calls": [{"id": "b%s", "name": "update_goal", "args": {"status": "blocked", "blocker": "%s"}}]}\n' "$1" "$2"
		printf '{"text": "Blocked on it."}\n'
	}
	serve <<-EOF
	{"tool_calls": [{"id": "p1", "name": "update_goal", "args": {"status": "paused"}}, {"id": "w1", "name": "write", "args": {"path": "a.txt", "content": "a"}}]}
	{"text": "Tried to pause."}
	$(block 2 "I need the deploy key")
	$(block 3 "i need  the DEPLOY key")
	$(block 4 "the network is down")
	$(block 5 "The  Network is down")
	$(block 6 "the network is down")
	EOF
	xggoal set --model fake/m --conversation g1 "deploy it"
	assert_failure 1
	[ "$(goals .status)" = "active active active active active active blocked " ]
	[ "$(goals .rounds | awk '{print $NF}')" = 6 ]
	# A model cannot pause.
	[[ "$(recs tool_result | jq -r 'select(.id == "p1") | .output')" == "update_goal: only the person pauses a goal"* ]]
	[ "$(recs tool_result | jq -r 'select(.goal_update) | .goal_update | "\(.streak)\(.accepted)"' | tr '\n' ' ')" = \
	  "1false 2false 1false 2false 3true " ]
	[ "$(recs run_end | tail -1 | jq -c '[.status, .stop, .exit]')" = '["interrupted","needs_person",1]' ]
	[[ "$(recs goal | tail -1 | jq -r .reason)" == *"3 rounds in a row: the network is down" ]]
}

@test "three rounds in a row without a tool call block the goal" {
	serve <<-'EOF'
	{"text": "Thinking about it."}
	{"text": "Still thinking."}
	{"text": "Nothing to do."}
	{"text": "never asked"}
	EOF
	xggoal set --model fake/m --conversation g1 "do something"
	assert_failure 1
	[ "$(goals .status)" = "active active active blocked " ]
	[ "$(goals .activity)" = "null none none none " ]
	[ "$(recs goal | tail -1 | jq -r .reason)" = "3 rounds in a row made no tool call" ]
	[ "$(recs run_end | jq -c '[.status, .stop]' | tr '\n' ' ')" = \
	  '["completed",null] ["completed",null] ["interrupted","needs_person"] ' ]
	[ "$(recs run_end | tail -1 | jq -r .reason)" = "3 rounds in a row made no tool call" ]
	# The last run's run.json says so too.
	run_id=$(recs run_start | tail -1 | jq -r .run)
	[ "$(jq -c '[.status, .stop, .goal]' "$XG_HOME/state/runs/$run_id/run.json")" = \
	  '["interrupted","needs_person",{"status":"blocked","round":3}]' ]
	[ "$(fake_log 'print(len(log))')" = 3 ]
}

@test "three rounds in a row whose every command failed block the goal; one success resets the count" {
	fails() {
		printf '{"tool_calls": [{"id": "f%s", "name": "bash", "args": {"command": "exit 3"}}]}\n' "$1"
		printf '{"text": "It failed."}\n'
	}
	serve <<-EOF
	$(fails 1)
	$(fails 2)
	$(work_round 3 ok.txt)
	$(fails 4)
	$(fails 5)
	$(fails 6)
	{"text": "never asked"}
	EOF
	xggoal set --model fake/m --conversation g1 "build it"
	assert_failure 1
	[ "$(goals .activity)" = "null failed failed some failed failed failed " ]
	[ "$(goals .status | awk '{print $NF}')" = blocked ]
	[ "$(recs goal | tail -1 | jq -r .reason)" = "3 rounds in a row had only failed tool calls" ]
}

@test "a provider error that outlasts the retries blocks the goal; a usage limit is usage_limited, exit 75" {
	export XG_RETRY=off
	serve <<-EOF
	$(work_round 1 a.txt)
	{"status": 503, "body": {"error": {"message": "down for maintenance", "type": "server_error"}}}
	EOF
	xggoal set --model fake/m --conversation g1 "x"
	assert_failure 1
	[ "$(goals .status)" = "active active blocked " ]
	[[ "$(recs goal | tail -1 | jq -r .reason)" == *"down for maintenance"* ]]
	[ "$(recs run_end | tail -1 | jq -c '[.status, .stop, .exit]')" = '["interrupted","needs_person",1]' ]

	serve <<-'EOF'
	{"status": 429, "body": {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}}
	EOF
	xggoal resume --conversation g1 --model fake/m
	assert_failure 75
	[ "$(goals '.event + ":" + .status')" = "resume:active round:usage_limited " ]
	[ "$(recs run_end | jq -c '[.status, .provider_error, .exit]')" = '["failed","usage_limit",75]' ]
	xggoal get --conversation g1
	[ "$(printf '%s\n' "$output" | jq -r .status)" = usage_limited ]
}

@test "at the round cap the goal is budget_limited and gets exactly one wrap-up round" {
	serve <<-EOF
	$(work_round 1 a.txt)
	$(work_round 2 b.txt)
	$(work_round 3 wrap.txt)
	{"text": "never asked"}
	EOF
	xggoal set --model fake/m --conversation g1 --rounds 2 "write many files"
	assert_failure 1
	[ "$(goals '.event + ":" + .status')" = \
	  "set:active round:active round:active status:budget_limited round:budget_limited " ]
	[ "$(recs goal | sed -n 4p | jq -r .reason)" = "the goal reached its cap of 2 rounds" ]
	[ "$(recs goal | tail -1 | jq -c '[.rounds, .wrap_up]')" = '[3,true]' ]
	[ "$(recs message | jq -r 'select(.role == "user") | .kind' | tr '\n' ' ')" = \
	  "goal-continuation goal-continuation goal-budget-limit " ]
	[[ "$(recs message | jq -r 'select(.kind == "goal-budget-limit") | .text')" == *"used its budget (2 rounds), so this is its last round"* ]]
	[ "$(recs run_end | tail -1 | jq -c '[.status, .stop]')" = '["interrupted","unfinished"]' ]
	[ "$(fake_log 'print(len(log))')" = 6 ]
	# Its budget is used: resume needs more of it.
	xggoal resume --conversation g1
	assert_failure 1
	assert_regex "$stderr" "has used its budget \\(3 of 2 rounds"
	[ "$(fake_log 'print(len(log))')" = 6 ]
}

@test "at the hours cap the goal is budget_limited and gets exactly one wrap-up round" {
	serve <<-EOF
	$(work_round 1 a.txt)
	$(work_round 2 wrap.txt)
	{"text": "never asked"}
	EOF
	# A cap of 3.6 ms: the first round takes longer.
	xggoal set --model fake/m --conversation g1 --hours 0.000001 "x"
	assert_failure 1
	[ "$(goals '.event + ":" + .status')" = \
	  "set:active round:active status:budget_limited round:budget_limited " ]
	[ "$(recs goal | sed -n 3p | jq -r .reason)" = "the goal reached its cap of 1e-06 hours" ]
	[ "$(recs message | jq -r 'select(.role == "user") | .kind' | tr '\n' ' ')" = \
	  "goal-continuation goal-budget-limit " ]
	[ "$(fake_log 'print(len(log))')" = 4 ]
}

@test "after an edit the next round carries the updated objective" {
	serve <<-EOF
	$(work_round 1 a.txt)
	$(work_round 2 b.txt)
	$(claim_round 3 "b.txt written")
	{"text": "done: shown"}
	EOF
	xggoal set --no-run --conversation g1 "write a.txt"
	xggoal edit --conversation g1 "write b.txt <now>"
	assert_success
	xggoal resume --conversation g1 --model fake/m
	assert_success
	[ "$(recs message | jq -r 'select(.role == "user") | .kind' | tr '\n' ' ')" = \
	  "goal-objective-updated goal-continuation goal-continuation " ]
	[[ "$(recs message | jq -r 'select(.kind == "goal-objective-updated") | .text')" == *"changed the goal's objective"*"<objective>"$'\n'"write b.txt &lt;now&gt;"$'\n'"</objective>"* ]]
	[ "$(goals .objective | tr ' ' '\n' | grep -c a.txt)" = 0 ]
	[ "$(entries .event)" = "set edit resume round round round " ]
}

# The steps of a round whose command waits until the test creates the
# file go (or a signal ends it).
waiting_round() {
	printf '{"tool_calls": [{"id": "s%s", "name": "bash", "args": {"command": "while [ ! -f go ]; do sleep 0.05; done; echo went"}}]}\n' "$1"
	printf '{"text": "Waited."}\n'
}

# The pid of $pid's child that is its round's xg-run, from /proc.
round_pid() {
	local c
	for c in $(cat "/proc/$pid/task/$pid/children"); do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = xg-run ] && echo "$c"
	done
}

@test "SIGINT pauses the goal at its round's end; resume finishes it" {
	serve <<-EOF
	{"tool_calls": [{"id": "s1", "name": "bash", "args": {"command": "while [ ! -f go ]; do sleep 0.05; done"}}]}
	$(claim_round 2 "went")
	{"text": "done: it went"}
	EOF
	bg_start --pipe env --default-signal=INT xg-goal set --model fake/m --conversation g1 "wait, then go"
	wait_until 'grep -q "\"type\":\"tool_call\"" out.ndjson' "the round's command did not start"
	kill -INT "$pid"
	reap
	[ "$rc" = 130 ]
	[ "$(goals .status)" = "active paused " ]
	[ "$(recs goal | tail -1 | jq -r .reason)" = "paused by SIGINT" ]
	[ "$(recs run_end | jq -c '[.status, .stop]')" = '["interrupted","user"]' ]
	[ "$(entries .status)" = "active paused " ]
	# Nothing runs it now; resume carries it on.
	xggoal get --conversation g1
	[ "$(printf '%s\n' "$output" | jq -r .status)" = paused ]
	xggoal resume --conversation g1 --model fake/m
	assert_success
	[ "$(goals '.event + ":" + .status')" = "resume:active round:complete " ]
	[ "$(entries .event)" = "set round resume round " ]
}

@test "a pause from elsewhere stops the driver after its round" {
	serve <<-EOF
	$(waiting_round 1)
	{"text": "never asked"}
	EOF
	bg_start --pipe xg-goal set --model fake/m --conversation g1 "wait, then go"
	wait_until 'grep -q "\"type\":\"tool_call\"" out.ndjson' "the round's command did not start"
	xggoal get --conversation g1
	[ "$(printf '%s\n' "$output" | jq -c '[.status, .driver]')" = "[\"active\",$pid]" ]
	xggoal pause --conversation g1
	assert_success
	touch go
	reap
	[ "$rc" = 1 ]
	[ "$(goals '.event + ":" + .status')" = "set:active round:paused " ]
	[ "$(recs run_end | jq -c '[.status, .stop]')" = '["interrupted","unfinished"]' ]
	[ "$(entries .event)" = "set pause round " ]
	[ "$(fake_log 'print(len(log))')" = 2 ]
}

@test "a second driver is refused with 75 naming the holder" {
	serve <<-EOF
	$(waiting_round 1)
	$(claim_round 2 "went")
	{"text": "done: it went"}
	EOF
	bg_start --pipe xg-goal set --model fake/m --conversation g1 "wait, then go"
	wait_until 'grep -q "\"type\":\"tool_call\"" out.ndjson' "the round's command did not start"
	xggoal resume --conversation g1 --model fake/m
	assert_failure 75
	assert_regex "$stderr" "goal.lock' is locked by process $pid \\(xg-goal\\)"
	assert_regex "$stderr" "has a driver already"
	xggoal set --no-run --replace --conversation g1 "another"
	assert_failure 75
	touch go
	reap
	[ "$rc" = 0 ]
	[ "$(entries .event)" = "set round round " ]
}

@test "a driver killed outright leaves its goal paused, and resume finishes it" {
	serve <<-EOF
	{"tool_calls": [{"id": "s1", "name": "bash", "args": {"command": "while [ ! -f go ]; do sleep 0.05; done"}}]}
	$(claim_round 2 "went")
	{"text": "done: it went"}
	EOF
	bg_start --pipe xg-goal set --model fake/m --conversation g1 "wait, then go"
	wait_until 'grep -q "\"type\":\"tool_call\"" out.ndjson' "the round's command did not start"
	child=$(round_pid)
	[ -n "$child" ]
	kill -KILL "$pid"
	reap
	[ "$rc" = 137 ]
	# Its round's xg-run goes with it (its parent-death signal).
	wait_until "[ ! -d /proc/$child ]" "the round's xg-run outlived its driver"
	[ "$(entries .status)" = "active " ]
	xggoal get --conversation g1
	assert_success
	[ "$(printf '%s\n' "$output" | jq -c '[.status, .driver]')" = '["paused",null]' ]
	xggoal resume --conversation g1 --model fake/m
	assert_success
	[ "$(goals '.event + ":" + .status')" = "resume:active round:complete " ]
	# The killed round's call has its result in the next request, so the
	# history is still a valid exchange.
	fake_log 'assert any(m.get("role") == "tool" and m.get("tool_call_id") == "s1" for m in log[1]["body"]["messages"]), log[1]["body"]["messages"]'
}

@test "cron: resume under env -i and flock, the key from the account" {
	serve <<-EOF
	$(work_round 1 cron.txt)
	$(claim_round 2 "cron.txt written")
	{"text": "done: written"}
	EOF
	mkdir -p "$XG_HOME/config/accounts/default"
	printf '{"fake": {"key": "%s"}}\n' "$XG_TEST_KEY" >"$XG_HOME/config/accounts/default/auth.json"
	chmod 600 "$XG_HOME/config/accounts/default/auth.json"
	xg-choices set --mode normal --model fake/m
	xggoal set --no-run --conversation g1 "write cron.txt"
	run_split env -i HOME="$HOME" PATH="$PATH" XG_HOME="$XG_HOME" XG_SHARE_DIR="$XG_SHARE_DIR" \
		flock -n "$BATS_TEST_TMPDIR/goal.lock" xg-goal resume --conversation g1
	assert_success
	printf '%s\n' "$output" >goal.ndjson
	[ "$(jq -r 'select(.type == "goal") | .status' goal.ndjson | tr '\n' ' ')" = "active active complete " ]
	[ -f cron.txt ]
	fake_log 'assert all(e["auth"] == "ok" for e in log), [e["auth"] for e in log]'
	# Once complete, the next hour's job has nothing to do.
	run_split env -i HOME="$HOME" PATH="$PATH" XG_HOME="$XG_HOME" XG_SHARE_DIR="$XG_SHARE_DIR" \
		flock -n "$BATS_TEST_TMPDIR/goal.lock" xg-goal resume --conversation g1
	assert_success
	[ "$(fake_log 'print(len(log))')" = 5 ]
}

@test "the Makefile example of xg-goal(1) works on a goal until it settles" {
	serve <<-EOF
	$(claim_round 1 "every option is documented")
	{"text": "done: the pages say so"}
	EOF
	xg-choices set --mode normal --model fake/m
	printf 'goal:\n\txg-goal set --conversation docs-goal --replace --hours 2 \\\n\t    "document every option in man/" > goal.ndjson\n' >Makefile
	run make -s goal
	assert_success
	[ "$(jq -r 'select(.type == "goal") | .status' goal.ndjson | tail -1)" = complete ]
	[ "$(jq -c 'select(.type == "goal") | .limits' goal.ndjson | head -1)" = '{"rounds":30,"hours":2}' ]
}

@test "xg goal shows the goal to a person on a terminal, and writes records with --json" {
	serve <<-EOF
	$(work_round 1 a.txt)
	$(claim_round 2 "a.txt written")
	{"text": "done: written"}
	EOF
	xg-choices set --mode normal --model fake/m
	run script -qec "xg goal set --conversation g1 'write a.txt'" /dev/null
	assert_success
	assert_output --partial "xg: goal active (set): write a.txt"
	assert_output --partial "xg: goal round 1 of 30 done; the goal goes on"
	assert_output --partial "xg: goal complete after 2 rounds: written"
	refute_output --partial "<objective>"
	run_split xg goal --json get --conversation g1
	assert_success
	[ "$(printf '%s\n' "$output" | jq -r '.type + " " + .status')" = "goal complete" ]
	run script -qec "xg goal --json get --conversation g1" /dev/null
	assert_success
	[ "$(printf '%s\n' "$output" | tr -d '\r' | jq -r .status)" = complete ]
}

@test "in a pipe xg goal writes the last round's reply alone, its lines on standard error" {
	serve <<-EOF
	$(work_round 1 a.txt)
	$(claim_round 2 "a.txt written")
	{"text": "done: written"}
	EOF
	xg-choices set --mode normal --model fake/m
	run_split xg goal set --conversation g1 'write a.txt' </dev/null
	assert_success
	# The last round's reply (the check's verdict is no round of the goal).
	assert_output "The goal is met."
	[[ "$stderr" == *"xg: goal active (set): write a.txt"* ]] || fail "stderr: $stderr"
	[[ "$stderr" == *"xg: goal complete after 2 rounds: written"* ]] || fail "stderr: $stderr"
	# Each line once, and none of the assistant's text.
	assert_equal "$(grep -c 'goal complete after' <<<"$stderr")" 1
	[[ "$stderr" != *"Wrote a.txt."* ]] || fail "the reply's text is on stderr: $stderr"
	# A goal that no round ran: nothing on standard output.
	run_split xg goal get --conversation g1 </dev/null
	assert_success
	assert_output ""
}

@test "^C on a terminal pauses the goal that xg goal shows, and xg waits for its records" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "s1", "name": "bash", "args": {"command": "touch started; while [ ! -f go ]; do sleep 0.05; done"}}]}
	{"text": "never asked"}
	EOF
	run python3 - "$FAKE_URL" <<-'EOF'
	import os, pty, signal, sys, time
	pid, fd = pty.fork()
	if pid == 0:
	    signal.signal(signal.SIGINT, signal.SIG_DFL)
	    os.execvp("xg", ["xg", "goal", "set", "--model", "fake/m", "--conversation", "g1", "wait"])
	for _ in range(200):
	    if os.path.exists("started"):
	        break
	    time.sleep(0.05)
	os.write(fd, b"\x03")
	out = b""
	while True:
	    try:
	        data = os.read(fd, 4096)
	    except OSError:
	        break
	    if not data:
	        break
	    out += data
	_, st = os.waitpid(pid, 0)
	sys.stdout.write(out.decode().replace("\r", ""))
	sys.exit(os.waitstatus_to_exitcode(st))
	EOF
	assert_equal "$status" 130
	assert_output --partial "xg: interrupted (user): stopped by SIGINT"
	assert_output --partial "xg: goal paused after 1 round: paused by SIGINT"
	[ "$(entries .status)" = "active paused " ]
	[ "$(fake_log 'print(len(log))')" = 1 ]
}

@test "a round that ends at a work slice's bound is followed by the next round" {
	serve <<-EOF
	{"tool_calls": [{"id": "w1", "name": "write", "args": {"path": "a.txt", "content": "a"}}]}
	{"text": "Slice report: wrote a.txt."}
	$(claim_round 2 "a.txt written")
	{"text": "done: written"}
	EOF
	XG_WORK_SLICE=maxToolCalls=1,maxSlices=1 xggoal set --model fake/m --conversation g1 "write a.txt"
	assert_success
	# Both rounds end at the bound; the claim is checked at the second's.
	[ "$(recs run_end | jq -r .status | tr '\n' ' ')" = "slice_complete completed " ]
	[ "$(recs message | jq -r 'select(.role == "user") | .kind' | tr '\n' ' ')" = \
	  "goal-continuation slice-end goal-continuation slice-end " ]
	[ "$(goals .status)" = "active active complete " ]
	# The check's transcript says the slice's end came from the harness,
	# not the person; no todo list was kept, and the check is told so.
	fake_log "$ROUNDS"'
text = checks[0]["body"]["messages"][1]["content"]
t = text.split("<transcript>\n", 1)[1]
assert "[harness] " in t and "[person] " not in t, t
assert "The agent kept no todo list for this goal." in text and "<todo>" not in text
'
}

@test "the check is sent the goal's newest todo list that was written" {
	serve <<-EOF
	{"tool_calls": [{"id": "t1", "name": "todo_write", "args": {"items": [{"content": "old & stale", "status": "pending"}]}}]}
	{"tool_calls": [{"id": "t2", "name": "todo_write", "args": {"items": [{"content": "write a.txt", "status": "completed"}, {"content": "check <it>", "status": "in_progress"}]}}, {"id": "t3", "name": "todo_write", "args": {"items": "not a list"}}]}
	$(claim_round 1 "a.txt written")
	{"text": "done: written"}
	EOF
	xggoal set --model fake/m --conversation g1 "write a.txt"
	assert_success
	fake_log "$ROUNDS"'
text = checks[0]["body"]["messages"][1]["content"]
assert "<todo>\n[x] write a.txt\n[~] check &lt;it&gt;\n</todo>" in text, text
assert "old &amp; stale" not in text.split("<transcript>")[0]
assert "kept no todo list" not in text
'
}

@test "get_goal shows the objective as data, the status and the budget used" {
	serve <<-EOF
	{"tool_calls": [{"id": "g1", "name": "get_goal", "args": {}}, {"id": "u1", "name": "update_goal", "args": {"status": "complete"}}, {"id": "u2", "name": "update_goal", "args": {"status": "finished"}}]}
	$(claim_round 2 "done")
	{"text": "done: ok"}
	EOF
	xggoal set --model fake/m --conversation g1 --rounds 7 --hours 2 "fix <b> & c"
	assert_success
	out=$(recs tool_result | jq -r 'select(.id == "g1") | .output')
	[[ "$out" == *"<objective>"$'\n'"fix &lt;b&gt; &amp; c"$'\n'"</objective>"* ]]
	[[ "$out" == *"status: active"$'\n'"round: 1 of at most 7"$'\n'"time used: 0.0 of 2 hours"* ]]
	[ "$(recs tool_result | jq -r 'select(.id == "u1") | .output')" = \
	  'update_goal: "complete" needs "evidence": each requirement of the objective and what shows it is met' ]
	[ "$(recs tool_result | jq -r 'select(.id == "u2") | .output')" = \
	  'update_goal: "status" must be "complete" or "blocked"' ]
	# A refused update claims nothing: no check after round 1.
	[ "$(recs goal_check | wc -l)" = 1 ]
}

@test "xg-run refuses a request whose hidden or goal field has the wrong kind" {
	run_split xg-run --model fake/m <<<'{"type":"request","text":"x","hidden":"yes"}'
	assert_failure 65
	assert_regex "$stderr" "standard input:1: field 'hidden' of the request is a string, not a boolean"
	run_split xg-run --model fake/m <<<'{"type":"request","text":"x","goal":3}'
	assert_failure 65
	assert_regex "$stderr" "field 'goal' of the request is a number, not an object"
	run_split xg-run --model fake/m <<<'{"type":"request","text":"x","kind":[]}'
	assert_failure 65
	assert_regex "$stderr" "field 'kind' of the request is an array, not a string"
}

@test "the check's transcript clips each entry and keeps the newest when all would not fit" {
	calls=$(for i in $(seq 1 50); do printf '{"id": "p%s", "name": "bash", "args": {"command": "echo start-%s; printf %%03000d 0"}},' "$i" "$i"; done)
	serve <<-EOF
	{"tool_calls": [${calls%,}]}
	$(claim_round 2 "printed")
	{"text": "done: printed"}
	EOF
	xggoal set --model fake/m --conversation g1 "print a lot"
	assert_success
	fake_log "$ROUNDS"'
text = checks[0]["body"]["messages"][1]["content"]
t = text.split("<transcript>\n", 1)[1]
assert len(t.encode()) <= 60000 + 200, len(t)
assert t.startswith("[earlier entries left out"), t[:100]
assert "start-50" in t and "start-1\n" not in t
assert "more bytes]" in t
assert "[tool call update_goal]" in t
'
}

@test "xg resume lists a conversation a goal started by its objective" {
	xggoal set --no-run "write a.txt please"
	assert_success
	conv=$(printf '%s\n' "$output" | jq -r .conversation)
	run xg resume
	assert_success
	assert_output --regexp "^$conv	[0-9-]+ [0-9:]+	goal: write a.txt please\$"
}

@test "a round that cannot start for want of a model pauses the goal, exits as xg-run did, and resume carries on once there is one" {
	# Nothing configured: xg-run fails before its first request with 78.
	xggoal set --conversation g1 "write a.txt"
	assert_failure 78
	[ "$(recs run_end | jq -r '[.status, .exit] | @tsv')" = "$(printf 'failed\t78')" ]
	[ "$(goals .status)" = "active paused " ]
	# The round that never reached a model is no round of the caps.
	[ "$(goals .rounds)" = "0 0 " ]
	recs goal | tail -1 | jq -e '.reason | startswith("the round could not start: no model")'
	# The model's way forward, once, from xg-run; the goal is not blocked.
	[ "$(grep -c 'no model is configured' <<<"$stderr")" -ge 1 ]
	serve <<-EOF
	$(work_round 1 a.txt)
	$(claim_round 2 "a.txt written")
	{"text": "done: a.txt is there"}
	EOF
	xggoal resume --model fake/m --conversation g1
	assert_success
	[ -f a.txt ]
	[ "$(recs goal | tail -1 | jq -r '[.status, .rounds] | @tsv')" = "$(printf 'complete\t2')" ]
}

@test "a check cut off is retried for the completion check, and its usage counts in the run's" {
	serve <<-EOF
	$(claim_round 1 "all done")
	{"text": "continue: hal", "finish_reason": false}
	{"text": "done: it is shown", "usage": {"input": 300, "cached_input": 120, "output": 7}}
	EOF
	XG_RETRY="base=1,cap=5" xggoal set --model fake/m --conversation g1 "x"
	assert_success
	[ "$(goals .status)" = "active complete " ]
	[ "$(recs retry | jq -c '[.for, .reason, .partial]')" = '["completion check","truncated",true]' ]
	# What the cut-off attempt brought is dropped: the answer reads whole.
	[ "$(recs goal_check | jq -c '[.checked, .verdict, .reason, .accepted]')" = '[true,"done","it is shown",true]' ]
	[ "$(recs usage | jq -c 'select(.for == "completion check") | [.input, .cached_input, .output]')" = '[300,120,7]' ]
	[ "$(recs usage | tail -1 | jq -c .cumulative)" = "$(recs run_end | jq -c .usage)" ]
	recs run_end | jq -e '.usage.cached_input >= 120'
	fake_log "$ROUNDS"'
assert len(checks) == 2, len(checks)
'
}

@test "a silent check stalls the round, and the claim is left unsettled" {
	serve <<-EOF
	$(claim_round 1 "all done")
	{"text": "never seen", "stall": 60, "stall_after": 0}
	EOF
	SECONDS=0
	XG_STALL=reply=1s,beat=10m xggoal set --model fake/m --conversation g1 "x"
	assert_failure 1
	[ "$SECONDS" -lt 30 ]
	# The round stalled, so the goal waits, paused (xg-goal's last run_end
	# says how the goal ended, not how the round did).
	[ "$(goals .status)" = "active paused " ]
	[ "$(recs goal | tail -1 | jq -r .reason)" = "stalled: nothing from the run for 1 s" ]
	[ "$(recs run_end | jq -c '[.status, .exit]')" = '["interrupted",1]' ]
	[ -z "$(recs goal_check)" ]
	[ -z "$(recs retry)" ]
	[ "$(recs usage | jq -s 'map(select(.for == "completion check")) | length')" = 0 ]
	fake_log "$ROUNDS"'
assert len(checks) == 1, len(checks)
'
}

@test "a goal keeps the model it was set with: a resume without --model runs on it" {
	serve <<-EOF
	$(claim_round 1 "nothing to do")
	{"text": "done: nothing was asked"}
	EOF
	# A second model, first in the catalog: what a run with no model falls
	# back on.
	jq '.providers.fake.models = {"a": .providers.fake.models.m} + .providers.fake.models' \
		"$XG_HOME/config/models.json" >models.tmp && mv models.tmp "$XG_HOME/config/models.json"
	xggoal set --no-run --model fake/m --conversation g1 "look, then stop"
	assert_success
	[ "$(recs goal | jq -c .options)" = '{"model":"fake/m","effort":null,"account":null,"variant":null}' ]
	# No saved choice: without the goal's own model, the round could not start.
	xggoal resume --conversation g1
	assert_success
	[ "$(recs run_start | jq -r .model)" = fake/m ]
	[ "$(recs goal | tail -1 | jq -r .options.model)" = fake/m ]
}

@test "a round that compacts restates its hidden text in the checkpoint with the objective escaped once" {
	{
		printf '{"tool_calls": [{"id": "t1", "name": "todo_write", "args": {"items": [{"content": "fix it", "status": "in_progress"}]}}], "usage": {"input": 5000, "output": 20}}\n'
		for i in 2 3 4 5; do
			printf '{"tool_calls": [{"id": "r%s", "name": "read", "args": {"path": "notes.txt"}}], "usage": {"input": 5000, "output": 20}}\n' "$i"
		done
		printf '{"tool_calls": [{"id": "r6", "name": "read", "args": {"path": "notes.txt"}}], "usage": {"input": 7600, "output": 20}}\n'
		echo '{"text": "SUMMARY"}'
		claim_round 7 "fixed"
		echo '{"text": "done: fixed"}'
	} >script.ndjson
	for i in 1 2 3 4 5 6 7 8; do
		echo "line $i of the notes, with words enough to take some room in the context"
	done >notes.txt
	serve <script.ndjson
	small_catalog openai-chat 8000 1000
	xggoal set --model fake/m --conversation g1 "fix a & <b>"
	assert_success
	[ "$(recs compaction | wc -l)" = 1 ]
	fake_log '
import json
cps = [m["content"] for e in log for m in e["body"]["messages"]
       if isinstance(m.get("content"), str) and m["content"].startswith("Checkpoint after compaction")]
assert cps, "no checkpoint"
assert "fix a &amp; &lt;b&gt;" in cps[0], cps[0]
assert "&amp;amp;" not in cps[0] and "&amp;lt;" not in cps[0], cps[0]
'
}
