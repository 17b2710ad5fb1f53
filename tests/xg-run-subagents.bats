#!/usr/bin/env bats
# xg-run's subagents (man 1 xg-run, Subagents): spawn_subagent and
# wait_subagents, child runs as xg-run processes, their records, profiles
# and keys; each child's own stall clock kept by its parent; the parent's
# rule paused while it waits; and no child outliving its parent, however
# the parent ends.  Against the loopback fake provider, whose "when" and
# "unless" steps give the parent and each child their own replies.  Some
# tests put a stand-in child beside a copy of xg-run (lone/), a script that
# keeps quiet (and may ignore SIGTERM), so only the parent's watch can end it.

load lib/helper
load lib/fake-provider
load lib/signal
load lib/xg-run

setup() {
	xg_run_setup
	unset XG_STALL XG_RETRY XG_WORK_SLICE
	RUNS="$XG_HOME/state/runs"
}

teardown() {
	if [ -n "${pid:-}" ]; then
		kill -KILL "$pid" 2>/dev/null || true
	fi
	fake_provider_stop
}

# The subagent records of $output, event $1, one compact line each.
sub_recs() {
	recs subagent | jq -c --arg e "$1" 'select(.event == $e)'
}

# Whether process $1 is gone (or only a zombie nobody has reaped yet).
gone() {
	[ ! -d "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# A copy of xg-run in lone/ with a stand-in child beside it: it writes
# run_start to its run's events, its environment and the key it was handed
# to files there, then sleeps, ignoring SIGTERM when IGNORE_TERM is set.
lone_child() {
	mkdir -p "$BATS_TEST_TMPDIR/lone"
	cp "$XG_SRCDIR/bin/xg-run" "$BATS_TEST_TMPDIR/lone/xg-run-parent"
	cat >"$BATS_TEST_TMPDIR/lone/xg-run" <<-'EOF'
	#!/bin/sh
	while [ $# -gt 0 ]; do
		case $1 in
		--run-id) id=$2; shift ;;
		--parent) parent=$2; shift ;;
		--) break ;;
		esac
		shift
	done
	d="$XG_HOME/state/runs/$id"
	mkdir -p "$d"
	cat <&3 >"$d/key"
	env >"$d/env"
	echo "$parent" >"$d/parent"
	[ -n "$IGNORE_TERM" ] && trap '' TERM
	echo $$ >"$d/pid"
	printf '{"type":"run_start","run":"%s"}\n' "$id" >>"$d/events.ndjson"
	touch "started-$id"
	exec sleep 60
	EOF
	chmod +x "$BATS_TEST_TMPDIR/lone/xg-run"
}

@test "two subagents run at once, and the parent gets both reports and their records" {
	serve <<-'EOF'
	{"when": "PARENT-MARK", "tool_calls": [{"id": "s1", "name": "spawn_subagent", "args": {"brief": "BRIEF-A: look at a.txt", "profile": "explore", "name": "a"}}, {"id": "s2", "name": "spawn_subagent", "args": {"brief": "BRIEF-B: say hello", "profile": "worker", "name": "b"}}, {"id": "w1", "name": "wait_subagents", "args": {}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "text": "A-REPLY: nothing to see", "stall": 3, "stall_after": 0}
	{"when": "BRIEF-B", "unless": "PARENT-MARK", "text": "B-REPLY: hello"}
	{"when": "PARENT-MARK", "text": "both are back"}
	EOF
	xgrun "PARENT-MARK: split the work"
	assert_success
	parent=$(end_field .run)
	assert_equal "$(end_field .reply)" "both are back"
	# spawned, spawned, then ended twice, each naming the tree.
	assert_equal "$(recs subagent | jq -r '"\(.event) \(.name) \(.profile)"' | head -n2 | tr '\n' ,)" "spawned a explore,spawned b worker,"
	assert_equal "$(sub_recs ended | jq -r .name | sort | tr '\n' ,)" "a,b,"
	sub_recs ended | jq -e --arg p "$parent" 'select(.parent == $p and .status == "completed" and .stop == null and .exit == 0)' >/dev/null
	[ "$(sub_recs ended | jq -s 'map(select(.status == "completed")) | length')" -eq 2 ]
	# Both ended records come before the wait's result.
	printf '%s\n' "$output" | jq -s -e '(map(.type == "tool_result" and .id == "w1") | index(true)) as $w | [to_entries[] | select(.value.type == "subagent" and .value.event == "ended") | .key] | length == 2 and all(. < $w)'
	# Each child is a run of its own, naming its parent.
	for child in $(sub_recs spawned | jq -r .run); do
		jq -e --arg p "$parent" '.parent == $p and .status == "completed"' "$RUNS/$child/run.json"
		jq -e -s --arg p "$parent" '.[0].type == "run_start" and .[0].parent == $p' "$RUNS/$child/events.ndjson"
	done
	jq -e '.parent == null' "$RUNS/$parent/run.json"
	# The spawn results name the tools; the read-only one says so first
	# (bash it has only where the sandbox runs: xg-run-sandbox.bats).
	recs tool_result | jq -e -s 'map(select(.id == "s1"))[0] | (.tools - ["bash"]) == ["read"] and (.output | startswith("Read-only: a started"))'
	recs tool_result | jq -e -s 'map(select(.id == "s2"))[0] | (.tools | index("bash")) and (.tools | index("spawn_subagent") | not)'
	# The wait returned both replies, as a plain tool result.
	recs tool_result | jq -e -s 'map(select(.id == "w1"))[0] | (.output | test("A-REPLY: nothing to see") and test("B-REPLY: hello")) and (.subagents | map(.status) == ["completed", "completed"])'
	# They ran at once: b asked the model while a's reply was still stalled.
	fake_log '
ta = [r["t"] for r in log if "BRIEF-A" in json.dumps(r["body"]) and "PARENT-MARK" not in json.dumps(r["body"])][0]
tb = [r["t"] for r in log if "BRIEF-B" in json.dumps(r["body"]) and "PARENT-MARK" not in json.dumps(r["body"])][0]
assert tb < ta + 3, (ta, tb)'
	# Each child was offered its profile's tools, and told it is one.
	fake_log '
import json
kids = [r["body"] for r in log if "PARENT-MARK" not in json.dumps(r["body"])]
names = lambda b: sorted(t["function"]["name"] for t in b["tools"])
a = [b for b in kids if "BRIEF-A" in json.dumps(b)][0]
assert [n for n in names(a) if n != "bash"] == ["read"], names(a)
sys_a = a["messages"][0]["content"]
assert "explore profile" in sys_a and "first line of your reply" in sys_a, sys_a[-600:]
assert "Working as a subagent" in sys_a
parents = [r["body"] for r in log if "PARENT-MARK" in json.dumps(r["body"])]
assert {"spawn_subagent", "wait_subagents"} <= set(names(parents[0]))
# The parent'"'"'s second request is its first plus new items, byte for byte.
A, B = parents
assert len(parents) == 2 and set(A) == set(B)
for k in A:
    if k != "messages":
        assert json.dumps(A[k]) == json.dumps(B[k]), k
assert [json.dumps(m) for m in B["messages"][:len(A["messages"])]] == [json.dumps(m) for m in A["messages"]]
assert len(B["messages"]) > len(A["messages"])'
}

@test "a child that stalls is stopped alone; its sibling finishes and the parent goes on with both" {
	serve <<-'EOF'
	{"when": "PARENT-MARK", "tool_calls": [{"id": "s1", "name": "spawn_subagent", "args": {"brief": "BRIEF-A: wedge", "profile": "explore", "name": "a"}}, {"id": "s2", "name": "spawn_subagent", "args": {"brief": "BRIEF-B: answer", "profile": "explore", "name": "b"}}, {"id": "w1", "name": "wait_subagents", "args": {}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "text": "never", "stall": 60, "stall_after": 0}
	{"when": "BRIEF-B", "unless": "PARENT-MARK", "text": "B-REPLY"}
	{"when": "PARENT-MARK", "text": "went on without a"}
	EOF
	XG_STALL=reply=2s,tool=2s,grace=5s xgrun "PARENT-MARK: try"
	assert_success
	assert_equal "$(end_field .reply)" "went on without a"
	sub_recs ended | jq -e -s 'map(select(.name == "a"))[0] | .status == "interrupted" and .stop == "stalled"'
	sub_recs ended | jq -e -s 'map(select(.name == "b"))[0] | .status == "completed"'
	recs tool_result | jq -e -s 'map(select(.id == "w1"))[0] | (.subagents | map("\(.name) \(.status) \(.stop)") == ["a interrupted stalled", "b completed null"]) and (.output | test("B-REPLY"))'
}

@test "the parent's rule is paused through a healthy wait longer than its tool window" {
	serve <<-'EOF'
	{"when": "PARENT-MARK", "tool_calls": [{"id": "s1", "name": "spawn_subagent", "args": {"brief": "BRIEF-A: three naps", "profile": "worker", "name": "a"}}, {"id": "w1", "name": "wait_subagents", "args": {}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "tool_calls": [{"id": "n1", "name": "bash", "args": {"command": "sleep 1"}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "tool_calls": [{"id": "n2", "name": "bash", "args": {"command": "sleep 1"}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "tool_calls": [{"id": "n3", "name": "bash", "args": {"command": "sleep 1"}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "text": "A rested"}
	{"when": "PARENT-MARK", "text": "waited"}
	EOF
	XG_STALL=tool=2s,reply=8s,beat=250ms xgrun "PARENT-MARK: wait long"
	assert_success
	assert_equal "$(end_field .status)" completed
	recs tool_result | jq -e -s 'map(select(.id == "w1"))[0] | .ms > 2500 and (.output | test("A rested"))'
	# Its heartbeats meanwhile: waiting on the child, with the child's phase.
	recs heartbeat | jq -e -s 'map(select(.phase == "waiting_subagents")) | length > 2 and any(.[]; .children[0].name == "a" and .active_tools[0].name == "wait_subagents" and .oldest_tool_ms > 2000)'
}

@test "a child that ignores its stop past the grace is killed, and the parent's rule is back" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "s1", "name": "spawn_subagent", "args": {"brief": "wedge", "profile": "worker", "name": "deaf"}}, {"id": "w1", "name": "wait_subagents", "args": {}}]}
	{"text": "never asked"}
	EOF
	lone_child
	IGNORE_TERM=1 XG_STALL=reply=1s,tool=1s,grace=2s run_split "$BATS_TEST_TMPDIR/lone/xg-run-parent" --model fake/m "go" </dev/null
	assert_failure 1
	child=$(sub_recs spawned | jq -r .run)
	assert_equal "$(end_field .stop)" stalled
	end_field .reason | grep -q 'inside wait_subagents'
	sub_recs ended | jq -e '.status == "interrupted" and .stop == "stalled" and .exit == 137'
	gone "$(cat "$RUNS/$child/pid")"
}

@test "the parent keeps each child's clock from its records, and ends a quiet child itself" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "s1", "name": "spawn_subagent", "args": {"brief": "wedge", "profile": "explore", "name": "quiet"}}, {"id": "w1", "name": "wait_subagents", "args": {}}]}
	{"text": "went on"}
	EOF
	lone_child
	XG_STALL=reply=1s,tool=1m,grace=10s run_split "$BATS_TEST_TMPDIR/lone/xg-run-parent" --model fake/m "go" </dev/null
	assert_success
	child=$(sub_recs spawned | jq -r .run)
	sub_recs ended | jq -e '.status == "interrupted" and .stop == "stalled" and (.reason | test("nothing from it for 1 s")) and .exit == 143'
	gone "$(cat "$RUNS/$child/pid")"
	assert_equal "$(end_field .reply)" "went on"
}

@test "a child gets its key through a pipe: no key variable, no XG_HOME for its tools" {
	serve <<-'EOF'
	{"when": "PARENT-MARK", "tool_calls": [{"id": "s1", "name": "spawn_subagent", "args": {"brief": "BRIEF-A: env", "profile": "worker"}}, {"id": "w1", "name": "wait_subagents", "args": {"names": ["agent-1"]}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "tool_calls": [{"id": "e1", "name": "bash", "args": {"command": "env >child-tool.env"}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "text": "A-DONE"}
	{"when": "PARENT-MARK", "text": "ok"}
	EOF
	# (the fake provider's own copy of the key is not the child's to hide)
	run_split env -u FAKE_PROVIDER_KEY xg-run --model fake/m "PARENT-MARK: keys" </dev/null
	assert_success
	# The fake provider takes only the right key: every request had it.
	assert_equal "$(fake_log 'print(sorted(set(r["auth"] for r in log)))')" "['ok']"
	assert_equal "$(fake_log 'print(len(log))')" 4
	[ -s child-tool.env ]
	run ! grep -E '^(XG_TEST_KEY|XG_HOME|XG_KEY_FD)=' child-tool.env
	run ! grep -q "$XG_TEST_KEY" child-tool.env
	run ! grep -rq "$XG_TEST_KEY" "$RUNS"
}

@test "the stand-in child reads the key from descriptor 3 and finds no key variable" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "s1", "name": "spawn_subagent", "args": {"brief": "look", "profile": "explore", "name": "k"}}]}
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "for i in $(seq 200); do ls started-* >/dev/null 2>&1 && exit 0; sleep 0.05; done; exit 1"}}]}
	{"text": "left it running"}
	EOF
	lone_child
	run_split "$BATS_TEST_TMPDIR/lone/xg-run-parent" --model fake/m "go" </dev/null
	assert_success
	child=$(sub_recs spawned | jq -r .run)
	assert_equal "$(cat "$RUNS/$child/key")" "$XG_TEST_KEY"
	grep -q '^XG_KEY_FD=3$' "$RUNS/$child/env"
	assert_equal "$(cat "$RUNS/$child/parent")" "$(recs run_start | jq -r .run)"
	# A child still running when its parent ends is ended with it.
	sub_recs ended | jq -e '.status == "interrupted" and .stop == "user" and (.reason | test("ended with its parent"))'
	gone "$(cat "$RUNS/$child/pid")"
	rm -f "$RUNS/$child/key"
	run ! grep -q '^XG_TEST_KEY=' "$RUNS/$child/env"
}

@test "spawn_subagent and wait_subagents name the field they refuse, and at most 4 run at once" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "x1", "name": "spawn_subagent", "args": {"profile": "explore"}}, {"id": "x2", "name": "spawn_subagent", "args": {"brief": "b", "profile": "admin"}}, {"id": "x3", "name": "spawn_subagent", "args": {"brief": "b", "profile": "explore", "name": "a b"}}, {"id": "x4", "name": "wait_subagents", "args": {"names": ["nobody"]}}, {"id": "x5", "name": "wait_subagents", "args": {"timeout": "soon"}}]}
	{"tool_calls": [{"id": "c1", "name": "spawn_subagent", "args": {"brief": "b", "profile": "explore", "name": "one"}}, {"id": "c2", "name": "spawn_subagent", "args": {"brief": "b", "profile": "explore", "name": "one"}}, {"id": "c3", "name": "spawn_subagent", "args": {"brief": "b", "profile": "explore"}}, {"id": "c4", "name": "spawn_subagent", "args": {"brief": "b", "profile": "explore"}}, {"id": "c5", "name": "spawn_subagent", "args": {"brief": "b", "profile": "explore"}}, {"id": "c6", "name": "spawn_subagent", "args": {"brief": "b", "profile": "explore"}}, {"id": "c7", "name": "wait_subagents", "args": {"timeout": 0}}]}
	{"text": "enough"}
	EOF
	lone_child
	run_split "$BATS_TEST_TMPDIR/lone/xg-run-parent" --model fake/m "go" </dev/null
	assert_success
	out() { recs tool_result | jq -r --arg i "$1" 'select(.id == $i) | "\(.ok) \(.output)"'; }
	out x1 | grep -q "^false spawn_subagent: 'brief' must be a non-empty string"
	out x2 | grep -q "^false spawn_subagent: 'profile' must be explore or worker, not 'admin'"
	out x3 | grep -q "^false spawn_subagent: 'name' must be"
	out x4 | grep -q "^false wait_subagents: 'names' holds 'nobody'"
	out x5 | grep -q "^false wait_subagents: 'timeout' must be a number"
	out c2 | grep -q "^false refused: a subagent of that name exists already"
	[ "$(recs tool_result | jq -r 'select(.id | test("^c[3-5]$")) | .ok' | sort -u)" = true ]
	out c6 | grep -q "^false refused: 4 subagents are running"
	recs tool_result | jq -s -e 'map(select(.id == "c7"))[0] | .ok and (.subagents | map(.status) | unique == ["running"])'
	[ "$(sub_recs spawned | wc -l)" -eq 4 ]
	[ "$(sub_recs ended | wc -l)" -eq 4 ]
}

@test "--profile explore without the sandbox offers read only, and refuses a call of any other tool" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "touch made-it"}}, {"id": "r1", "name": "read", "args": {"path": "note.txt"}}]}
	{"text": "looked"}
	EOF
	echo "a note" >note.txt
	# A bwrap that cannot run: no sandbox, so no bash either.
	mkdir fakebin
	printf '#!/bin/sh\nexit 1\n' >fakebin/bwrap
	chmod +x fakebin/bwrap
	PATH="$PWD/fakebin:$PATH" xgrun --profile explore "look"
	assert_success
	[[ "$(recs notice | jq -r .text)" == *"the explore profile gets no bash without the sandbox"* ]]
	[ ! -e made-it ]
	recs tool_result | jq -s -e 'map(select(.id == "b1"))[0] | (.ok | not) and .refused and (.output | test("profile does not offer"))'
	recs tool_result | jq -s -e 'map(select(.id == "r1"))[0] | .ok and (.output | test("a note"))'
	assert_equal "$(fake_log 'print(sorted(t["function"]["name"] for t in log[0]["body"]["tools"]))')" "['read']"
	fake_log 'assert "explore profile" in log[0]["body"]["messages"][0]["content"]'
	# Not a subagent: no subagent template, and no such profile as root.
	fake_log 'assert "Working as a subagent" not in log[0]["body"]["messages"][0]["content"]'
	run_split xg-run --profile root "x" </dev/null
	assert_failure 2
	[[ "$stderr" == *"--profile is explore or worker, not 'root'"* ]]
}

@test "a subagent keeps its parent's gate" {
	serve <<-'EOF'
	{"when": "PARENT-MARK", "tool_calls": [{"id": "s1", "name": "spawn_subagent", "args": {"brief": "BRIEF-A: make a file", "profile": "worker"}}, {"id": "w1", "name": "wait_subagents", "args": {}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "touch made-it"}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "text": "A-GATED"}
	{"when": "PARENT-MARK", "text": "ok"}
	EOF
	xgrun --gate 'if .name == "bash" then "no commands here" else true end' "PARENT-MARK: gated"
	assert_success
	[ ! -e made-it ]
	child=$(sub_recs spawned | jq -r .run)
	jq -e -s 'map(select(.type == "tool_result" and .id == "b1"))[0] | (.ok | not) and (.output | test("no commands here"))' "$RUNS/$child/events.ndjson"
}

@test "a plan-mode run may start explore subagents only" {
	serve <<-'EOF'
	{"tool_calls": [{"id": "p1", "name": "spawn_subagent", "args": {"brief": "change things", "profile": "worker"}}]}
	{"text": "No plan is needed."}
	EOF
	lone_child
	run_split "$BATS_TEST_TMPDIR/lone/xg-run-parent" --model fake/m --mode plan "go" </dev/null
	assert_success
	recs tool_result | jq -s -e 'map(select(.id == "p1"))[0] | (.ok | not) and (.output | test("plan-mode run changes nothing"))'
	assert_equal "$(recs subagent)" ""
}

@test "SIGTERM to the parent ends every child first, each with its run_end" {
	serve <<-'EOF'
	{"when": "PARENT-MARK", "tool_calls": [{"id": "s1", "name": "spawn_subagent", "args": {"brief": "BRIEF-A: wait", "profile": "explore", "name": "a"}}, {"id": "s2", "name": "spawn_subagent", "args": {"brief": "BRIEF-B: nap", "profile": "worker", "name": "b"}}, {"id": "w1", "name": "wait_subagents", "args": {}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "text": "never", "stall": 60, "stall_after": 0}
	{"when": "BRIEF-B", "unless": "PARENT-MARK", "tool_calls": [{"id": "n1", "name": "bash", "args": {"command": "echo $$ >b-tool.pid; exec sleep 60"}}]}
	EOF
	bg_start --pipe xg-run --model fake/m "PARENT-MARK: two"
	wait_until '[ -s b-tool.pid ] && [ "$(fake_log "print(len(log))")" -ge 3 ]' "the children did not start"
	kill -TERM "$pid"
	reap
	assert_equal "$rc" 143
	assert_equal "$(end_field .stop)" user
	[ "$(sub_recs ended | wc -l)" -eq 2 ]
	# Ended before the parent's run_end, which is last.
	assert_equal "$(printf '%s\n' "$output" | tail -n1 | jq -r .type)" run_end
	for child in $(sub_recs spawned | jq -r .run); do
		jq -e -s 'map(select(.type == "run_end"))[0] | .status == "interrupted" and .stop == "user"' "$RUNS/$child/events.ndjson"
	done
	for p in $(sub_recs spawned | jq -r .pid) $(cat b-tool.pid); do
		gone "$p"
	done
}

@test "no child or child's tool is left after the parent is killed with SIGKILL" {
	serve <<-'EOF'
	{"when": "PARENT-MARK", "tool_calls": [{"id": "s1", "name": "spawn_subagent", "args": {"brief": "BRIEF-A: wait", "profile": "explore", "name": "a"}}, {"id": "s2", "name": "spawn_subagent", "args": {"brief": "BRIEF-B: nap", "profile": "worker", "name": "b"}}, {"id": "w1", "name": "wait_subagents", "args": {}}]}
	{"when": "BRIEF-A", "unless": "PARENT-MARK", "text": "never", "stall": 60, "stall_after": 0}
	{"when": "BRIEF-B", "unless": "PARENT-MARK", "tool_calls": [{"id": "n1", "name": "bash", "args": {"command": "echo $$ >b-tool.pid; exec sleep 60"}}]}
	EOF
	bg_start --pipe xg-run --model fake/m "PARENT-MARK: two"
	wait_until '[ -s b-tool.pid ] && [ "$(fake_log "print(len(log))")" -ge 3 ]' "the children did not start"
	parent=$pid
	# The process tree as /proc shows it: the parent's children are ours.
	kids=$(sub_recs_from_file spawned)
	for k in $kids; do
		assert_equal "$(awk '{print $4}' "/proc/$k/stat")" "$parent"
	done
	kill -KILL "$parent"
	wait "$parent" || true
	pid=
	for k in $kids $(cat b-tool.pid); do
		for i in $(seq 1 100); do
			gone "$k" && break
			sleep 0.1
		done
		gone "$k"
	done
}

# The pids of the subagent records of event $1 written so far.
sub_recs_from_file() {
	jq -r --arg e "$1" 'select(.type == "subagent" and .event == $e) | .pid' out.ndjson
}
