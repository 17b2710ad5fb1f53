#!/usr/bin/env bats
# xg-run: the agent loop against the loopback fake provider, in each of the
# three wire kinds.  The catalog gets a provider "fake" with one model,
# fake/m, whose key is $XG_TEST_KEY; the fake provider checks it.

load lib/helper
load lib/fake-provider
load lib/signal
load lib/xg-run

setup() {
	xg_run_setup
}

teardown() {
	fake_provider_stop
}

# The record types in order, space-separated.
types() {
	printf '%s\n' "$output" | jq -r .type | tr '\n' ' '
}

# run_start comes before every other record of the run (records passed
# through or computed upstream may precede it) and run_end is last, exactly
# once each.
assert_framed() {
	local t=" $(types)" before
	[[ "$t" == *" run_start "* ]] || { echo "no run_start: $t"; return 1; }
	before=${t%% run_start *}
	for r in message tool_call tool_result usage retry todo text run_end; do
		[[ "$before " != *" $r "* ]] || { echo "$r before run_start: $t"; return 1; }
	done
	[[ "$t" == *" run_end " ]] || { echo "run_end not last: $t"; return 1; }
	[ "$(printf '%s\n' "$output" | jq -r .type | grep -c '^run_end$')" = 1 ]
	[ "$(printf '%s\n' "$output" | jq -r .type | grep -c '^run_start$')" = 1 ]
}

@test "a text reply completes the run in each wire kind" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"text": "Hello there, all done.", "usage": {"input": 100, "cached_input": 60, "output": 7}}
		EOF
		xgrun "say hello"
		assert_success
		assert_framed
		[ "$(end_field .status)" = completed ]
		[ "$(end_field .reply)" = "Hello there, all done." ]
		[ "$(end_field '.usage | "\(.input) \(.cached_input) \(.output)"')" = "100 60 7" ]
		[ "$(recs run_start | jq -r '"\(.schema) \(.model)"')" = "xg/1 fake/m" ]
		[ "$(recs message | jq -r 'select(.role == "assistant") | .text')" = "Hello there, all done." ]
		fake_log 'assert log[0]["auth"] == "ok", log[0]["auth"]; assert log[0]["kind"] == "'"$kind"'"'
		fake_log 'import json; assert "say hello" in json.dumps(log[0]["body"])'
		# The key is in no record, no message and no file of the run.
		[[ "$output$stderr" != *"$XG_TEST_KEY"* ]]
		[ -z "$(grep -rl "$XG_TEST_KEY" "$XG_HOME/state")" ]
	done
}

@test "--stream writes text deltas that add up to the reply" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"text": "One two three four five six.", "chunk": 4}
		EOF
		xgrun --stream "count"
		assert_success
		[ "$(recs text | wc -l)" -gt 3 ]
		[ "$(recs text | jq -j .text)" = "One two three four five six." ]
	done
	xgrun "count"
	[ -z "$(recs text)" ]
}

@test "the run's records go to events.ndjson and run.json holds its summary" {
	serve openai-chat <<-'EOF'
	{"text": "ok", "usage": {"input": 5, "cached_input": 0, "output": 1}}
	EOF
	xgrun "hi"
	assert_success
	id=$(recs run_start | jq -r .run)
	dir="$XG_HOME/state/runs/$id"
	[ "$(jq -r .type "$dir/events.ndjson" | tr '\n' ' ')" = "$(types)" ]
	run jq -r '"\(.id) \(.model) \(.status) \(.variant) \(.usage.input) \(.tool_calls)"' "$dir/run.json"
	assert_output "$id fake/m completed default 5 0"
	jq -e '.version | test("^[0-9a-f]{12}$")' "$dir/run.json"
	jq -e '.started and .ended and (.ms >= 0)' "$dir/run.json"
}

@test "each tool runs and its result reaches the next request, in each wire kind" {
	for kind in $KINDS; do
		printf 'line one\nline two\n' >notes.txt
		rm -f new/made.txt
		serve "$kind" <<-'EOF'
		{"tool_calls": [{"id": "t1", "name": "bash", "args": {"command": "echo from-bash; exit 3"}}]}
		{"tool_calls": [{"id": "t2", "name": "read", "args": {"path": "notes.txt"}}]}
		{"tool_calls": [{"id": "t3", "name": "write", "args": {"path": "new/made.txt", "content": "made\n"}}]}
		{"tool_calls": [{"id": "t4", "name": "edit", "args": {"path": "notes.txt", "edits": [{"old_text": "two", "new_text": "2"}]}}]}
		{"tool_calls": [{"id": "t5", "name": "todo_write", "args": {"items": [{"content": "look", "status": "completed"}, {"content": "fix", "status": "pending"}]}}]}
		{"tool_calls": [{"id": "t6", "name": "ask_user", "args": {"question": "which one?"}}]}
		{"text": "finished"}
		EOF
		xgrun "use every tool"
		assert_success
		assert_framed
		[ "$(end_field .tool_calls)" = 6 ]
		run_out=$output
		[ "$(recs tool_result | jq -r '"\(.id) \(.name) \(.ok)"' | tr '\n' ' ')" = \
		  "t1 bash false t2 read true t3 write true t4 edit true t5 todo_write true t6 ask_user true " ]
		[ "$(recs tool_result | jq -r 'select(.id == "t1") | .exit_code')" = 3 ]
		[ "$(cat new/made.txt)" = made ]
		[ "$(sed -n 2p notes.txt)" = "line 2" ]
		[ "$(recs todo | jq -c '[.items[].status]')" = '["completed","pending"]' ]
		[ "$(recs tool_result | jq 'select(.id == "t6") | .answered == false')" = true ]
		# Each result is in the request after it.
		fake_log 'import json
for i, want in enumerate(["from-bash", "line one", "made.txt", "Edited", "[x] look", "nobody", ""]):
    if want:
        assert want in json.dumps(log[i + 1]["body"]), (i, want)
assert len(log) == 7'
	done
}

@test "ask_user asks the --ask command" {
	serve openai-responses <<-'EOF'
	{"tool_calls": [{"id": "q1", "name": "ask_user", "args": {"question": "blue or green?"}}]}
	{"text": "going with it"}
	EOF
	xgrun --ask 'read q; echo "answer to: $q"' "pick a colour"
	assert_success
	[ "$(recs tool_result | jq -r .output)" = "answer to: blue or green?" ]
	fake_log 'import json; assert "answer to: blue or green?" in json.dumps(log[1]["body"])'
}

@test "parallel tool calls run in order and their results come back in order" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"tool_calls": [{"id": "p1", "name": "bash", "args": {"command": "sleep 0.2; echo one >>order"}}, {"id": "p2", "name": "bash", "args": {"command": "echo two >>order"}}, {"id": "p3", "name": "read", "args": {"path": "order"}}]}
		{"text": "done"}
		EOF
		rm -f order
		xgrun "three at once"
		assert_success
		[ "$(types)" = "run_start message usage message tool_call tool_result tool_call tool_result tool_call tool_result usage message run_end " ] ||
		[ "$(types)" = "run_start message message tool_call tool_result tool_call tool_result tool_call tool_result message run_end " ]
		[ "$(recs tool_result | jq -r .id | tr '\n' ' ')" = "p1 p2 p3 " ]
		[ "$(printf 'one\ntwo')" = "$(cat order)" ]
		fake_log 'import json
b = json.dumps(log[1]["body"])
assert b.index("p1") < b.index("p2") < b.index("p3")'
	done
}

@test "edit refusals change nothing and tell the model why" {
	printf 'same\nsame\nother\n' >f.txt
	cp f.txt before.txt
	serve anthropic-messages <<-'EOF'
	{"tool_calls": [{"id": "e1", "name": "edit", "args": {"path": "f.txt", "edits": [{"old_text": "same", "new_text": "x"}]}}, {"id": "e2", "name": "edit", "args": {"path": "f.txt", "edits": [{"old_text": "other", "new_text": "y"}, {"old_text": "absent", "new_text": "z"}]}}]}
	{"text": "could not"}
	EOF
	xgrun "edit badly"
	assert_success
	cmp f.txt before.txt
	[ "$(recs tool_result | jq -r '"\(.ok) \(.reason) \(.failed_edit)"' | tr '\n' ' ')" = "false not_unique 0 false not_found 1 " ]
	[ "$(recs tool_result | jq 'select(.id == "e1") | .output | test("nothing was changed")')" = true ]
}

@test "write and edit refuse paths that escape the workspace" {
	mkdir ws outside
	ln -s ../outside ws/link
	echo keep >outside/f
	serve openai-chat <<-'EOF'
	{"tool_calls": [{"id": "w1", "name": "write", "args": {"path": "../escaped.txt", "content": "x"}}, {"id": "w2", "name": "write", "args": {"path": "link/new.txt", "content": "x"}}, {"id": "w3", "name": "edit", "args": {"path": "link/f", "edits": [{"old_text": "keep", "new_text": "lost"}]}}, {"id": "w4", "name": "write", "args": {"path": "/tmp/xg-run-escape-test", "content": "x"}}]}
	{"text": "refused"}
	EOF
	cd ws
	xgrun "escape"
	assert_success
	cd ..
	[ "$(recs tool_result | jq -r .ok | sort -u)" = false ]
	[ ! -e escaped.txt ] && [ ! -e outside/new.txt ] && [ ! -e /tmp/xg-run-escape-test ]
	[ "$(cat outside/f)" = keep ]
}

@test "--gate refuses calls with its reason and lets the rest run" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"tool_calls": [{"id": "g1", "name": "bash", "args": {"command": "touch ran-rm"}}, {"id": "g2", "name": "bash", "args": {"command": "git --version >/dev/null && touch ran-git"}}]}
		{"text": "ok"}
		EOF
		rm -f ran-rm ran-git
		xgrun --gate 'if .name == "bash" and (.args.command | startswith("git ") | not) then "bash is only for git" else true end' "gate"
		assert_success
		[ ! -e ran-rm ] && [ -e ran-git ]
		[ "$(recs tool_result | jq 'select(.id == "g1") | .ok == false and .refused and (.output | contains("bash is only for git"))')" = true ]
		fake_log 'import json; assert "bash is only for git" in json.dumps(log[1]["body"])'
	done
}

@test "a --gate filter that does not compile is exit 78 before any request" {
	serve openai-chat <<-'EOF'
	{"text": "never"}
	EOF
	xgrun --gate 'if .name ==' "gate"
	assert_failure 78
	assert_framed
	[ "$(end_field .status)" = failed ]
	[ ! -s "$FAKE_LOG" ]
	# The conversation it would have started was not: nothing to resume.
	conv=$(end_field .conversation)
	[ -n "$conv" ] && [ "$conv" != null ]
	[ ! -e "$XG_HOME/state/conversations/$conv.jsonl" ]
}

@test "requests are append-only: each is the one before plus new items" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"text": "looking", "reasoning": "first think", "signature": "sig-1", "tool_calls": [{"id": "a1", "name": "bash", "args": {"command": "echo a"}}]}
		{"tool_calls": [{"id": "a2", "name": "bash", "args": {"command": "echo b"}}, {"id": "a3", "name": "todo_write", "args": {"items": [{"content": "x", "status": "in_progress"}]}}]}
		{"text": "done"}
		EOF
		xgrun "append only"
		assert_success
		fake_log '
import json
key = {"openai-chat": "messages", "anthropic-messages": "messages", "openai-responses": "input"}[log[0]["kind"]]
assert len(log) == 3
# Whole bodies, untouched: cache hints (Anthropic cache_control) included.
if log[0]["kind"] == "anthropic-messages":
    assert all(r["body"]["cache_control"] == {"type": "ephemeral"} for r in log), log[0]["body"]
for a, b in zip(log, log[1:]):
    A, B = a["body"], b["body"]
    assert set(A) == set(B), (set(A), set(B))
    for k in A:
        if k == key:
            continue
        assert json.dumps(A[k]) == json.dumps(B[k]), k
    assert len(B[key]) > len(A[key])
    for i, item in enumerate(A[key]):
        assert json.dumps(item) == json.dumps(B[key][i]), (i, item, B[key][i])
'
	done
}

@test "a run resumes its conversation with --conversation and request.conversation" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"tool_calls": [{"id": "r1", "name": "bash", "args": {"command": "echo remembered-output"}}]}
		{"text": "first answer"}
		{"text": "second answer"}
		{"text": "third answer"}
		EOF
		xgrun "first question"
		assert_success
		conv=$(recs run_start | jq -r .conversation)
		[ -f "$CONVS/$conv.jsonl" ]
		xgrun --conversation "$conv" "second question"
		assert_success
		[ "$(recs run_start | jq -r .conversation)" = "$conv" ]
		run_split xg-run --model fake/m <<<"{\"type\":\"request\",\"text\":\"third question\",\"conversation\":\"$conv\"}"
		assert_success
		[ "$(recs run_start | jq -r .conversation)" = "$conv" ]
		fake_log '
import json
b = json.dumps(log[3]["body"])
order = ["first question", "remembered-output", "first answer", "second question", "second answer", "third question"]
pos = [b.index(s) for s in order]
assert pos == sorted(pos), pos
# The second run starts from the first one: its request extends the last of the first.
key = {"openai-chat": "messages", "anthropic-messages": "messages", "openai-responses": "input"}[log[0]["kind"]]
assert len(log[2]["body"][key]) > len(log[1]["body"][key])'
		[ "$(jq -r 'select(.type == "message") | .role' "$CONVS/$conv.jsonl" | tr '\n' ' ')" = \
		  "user assistant assistant user assistant user assistant " ]
	done
}

@test "a run in a git repository records its snapshot's commit" {
	git init -q repo
	echo a >repo/a.txt
	git -C repo add a.txt
	git -C repo -c user.name=t -c user.email=t@example.com commit -qm one
	echo changed >repo/a.txt
	serve openai-chat <<-'EOF'
	{"text": "seen"}
	EOF
	cd repo
	xgrun "snap"
	assert_success
	commit=$(recs run_start | jq -r .snapshot)
	[ "$(git cat-file -p "$commit:a.txt")" = changed ]
	[ "$(git status --porcelain)" = " M a.txt" ]
	id=$(recs run_start | jq -r .run)
	[ "$(jq -r .snapshot "$XG_HOME/state/runs/$id/run.json")" = "$commit" ]
}

@test "a run on another model than the conversation's appends a model_change" {
	serve anthropic-messages <<-'EOF'
	{"text": "on m"}
	{"text": "on m2"}
	EOF
	python3 - "$XG_HOME/config/models.json" <<-'PY'
	import json, sys
	c = json.load(open(sys.argv[1]))
	m = c["providers"]["fake"]["models"]
	m["m2"] = dict(m["m"])
	json.dump(c, open(sys.argv[1], "w"))
	PY
	xgrun "first"
	conv=$(recs run_start | jq -r .conversation)
	run_split xg-run --model fake/m2 --conversation "$conv" "second" </dev/null
	assert_success
	[ "$(recs model_change | jq -r '"\(.from) \(.to)"')" = "fake/m fake/m2" ]
	[ "$(jq -r 'select(.type == "model_change") | "\(.from) \(.to)"' "$CONVS/$conv.jsonl")" = "fake/m fake/m2" ]
	fake_log 'assert log[1]["body"]["model"] == "m2"'
}

@test "the request's cwd is the workspace, and commands never see the providers' keys" {
	mkdir -p work/sub
	serve openai-chat <<-'EOF'
	{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "pwd; echo \"key=${XG_TEST_KEY:-unset}\""}}, {"id": "c2", "name": "write", "args": {"path": "made.txt", "content": "x"}}]}
	{"text": "ok"}
	EOF
	run_split xg-run --model fake/m <<<"{\"type\":\"request\",\"text\":\"where\",\"cwd\":\"$PWD/work/sub\"}"
	assert_success
	[ "$(recs tool_result | jq -r 'select(.id == "c1") | .output')" = "$(cd work/sub && pwd -P)
key=unset" ]
	[ -f work/sub/made.txt ]
	[ "$(recs run_start | jq -r .cwd)" = "$(cd work/sub && pwd -P)" ]
}

@test "records of the pipeline are used and unknown ones pass through" {
	serve openai-chat <<-'EOF'
	{"text": "piped"}
	EOF
	printf '%s\n' '{"type":"request","text":"from a pipe","mode":"normal"}' '{"type":"custom","x":1}' |
		xg-choices start --model fake/m | xg-prompt-compile >upstream.ndjson
	run_split xg-run -v <upstream.ndjson
	assert_success
	assert_framed
	[ "$(recs custom)" = '{"type":"custom","x":1}' ]
	[[ "$(types)" == "custom run_start "* ]]
	[ -z "$(recs request)$(recs pack)$(recs model)" ]
	[[ "$stderr" != *"no model record"* && "$stderr" != *"no pack record"* ]]
	# Without them, -v says what it computed.
	xgrun -v "alone"
	[[ "$stderr" == *"no model record"* && "$stderr" == *"no pack record"* ]]
}

@test "the first request goes out once request, model and pack are in, before the input ends" {
	serve openai-chat <<-'EOF'
	{"tool_calls": [{"id": "t1", "name": "bash", "args": {"command": "touch tool-ran; echo ran"}}]}
	{"text": "done"}
	EOF
	printf '%s\n' '{"type":"request","text":"early","mode":"normal"}' |
		xg-choices start --model fake/m | xg-prompt-compile >upstream.ndjson
	# The input stays open until the request has reached the provider; a
	# run that waited for its end would never send it (the test gives up
	# after 20 s).  Until the input ends no tool runs and nothing of the
	# run is written; then a snapshot and a record of another kind come.
	run python3 - "$FAKE_LOG" <<'PY'
import os, sys
from runpipe import read_for, read_to_end, requested, start, wait_for
p = start(["xg-run"])
p.stdin.write(open("upstream.ndjson", "rb").read())
p.stdin.flush()
wait_for(requested(sys.argv[1]), "no request while the input was open")
early = read_for(p, 0.3)
print("early:", b"run_start" in early or b"tool_" in early, os.path.exists("tool-ran"))
p.stdin.write(b'{"type":"snapshot","commit":"0123456789abcdef0123456789abcdef01234567"}\n')
p.stdin.write(b'{"type":"late","x":[1, 2]}\n')
p.stdin.close()
out = early + read_to_end(p, "the run did not end")
print("status:", p.wait())
sys.stdout.write(out.decode())
PY
	assert_success
	assert_line --index 0 "early: False False"
	assert_line --index 1 "status: 0"
	output=$(printf '%s\n' "$output" | tail -n +3)
	assert_framed
	# The late record passes through untouched, before run_start.
	[[ "$(types)" == *"late run_start "* ]]
	printf '%s\n' "$output" | grep -qFx '{"type":"late","x":[1, 2]}'
	[ "$(recs run_start | jq -r .snapshot)" = 0123456789abcdef0123456789abcdef01234567 ]
	[ "$(recs tool_result | jq -r .output)" = ran ]
	[ "$(end_field .status)" = completed ]
}

@test "XG_RUN_SENT_FD is closed once the first request is out, and no tool has it" {
	serve openai-chat <<-'EOF'
	{"tool_calls": [{"id": "t1", "name": "bash", "args": {"command": "echo \"[${XG_RUN_SENT_FD-none}]\" $(ls /proc/self/fd)"}}], "stall": 3, "stall_after": 0}
	{"text": "done"}
	EOF
	printf '%s\n' '{"type":"request","text":"cue","mode":"normal"}' |
		xg-choices start --model fake/m | xg-prompt-compile >upstream.ndjson
	# The cue is held while the run waits for its model and pack, and
	# closed when the request is out: well before the reply's first byte,
	# which the provider holds back for three seconds.
	run python3 - <<'PY'
import os, select, sys
from runpipe import read_to_end, start_cued
p, r = start_cued(["xg-run"], "XG_RUN_SENT_FD")
lines = open("upstream.ndjson", "rb").read().splitlines(True)
p.stdin.write(lines[0])
p.stdin.flush()
held = not select.select([r], [], [], 0.3)[0]
p.stdin.write(b"".join(lines[1:]))
p.stdin.flush()
closed = bool(select.select([r], [], [], 1.5)[0]) and os.read(r, 1) == b""
print("held:", held, "closed:", closed)
p.stdin.close()
out = read_to_end(p, "the run did not end")
print("status:", p.wait())
sys.stdout.write(out.decode())
PY
	assert_success
	assert_line --index 0 "held: True closed: True"
	assert_line --index 1 "status: 0"
	output=$(printf '%s\n' "$output" | tail -n +3)
	[ "$(end_field .status)" = completed ]
	run jq -r 'select(.type == "tool_result") | .output' <<<"$output"
	assert_regex "$output" '^\[none\] 0 1 2 3$'
}

@test "a signal ends a run whose input is left open after the records it needs" {
	for sig in INT TERM; do
		serve openai-chat <<-'EOF'
		{"tool_calls": [{"id": "t1", "name": "bash", "args": {"command": "touch tool-ran"}}]}
		{"text": "never"}
		EOF
		printf '%s\n' '{"type":"request","text":"open input","mode":"normal"}' |
			xg-choices start --model fake/m | xg-prompt-compile >upstream.ndjson
		# The writer never closes the input: the run waits for its end
		# before any tool, and a signal must still end it, at once;
		# and so while it still waits for the records it needs.
		run signal_open "$sig" request 0.3 xg-run <upstream.ndjson
		assert_success
		assert_line --index 0 "$([ $sig = INT ] && echo 130 || echo 143)"
		output=$(printf '%s\n' "$output" | tail -n +2)
		assert_framed
		[ "$(end_field .status)" = interrupted ]
		[ "$(end_field .stop)" = user ]
		[ ! -e tool-ran ]
		fake_provider_stop
		rm -f "$FAKE_LOG"
	done
}

@test "a signal ends a run still waiting for the records it needs" {
	serve openai-chat <<-'EOF'
	{"text": "never"}
	EOF
	# A request alone, with the input left open: the run waits for more.
	run signal_open INT run 0.3 xg-run --model fake/m <<<'{"type":"request","text":"waiting"}'
	assert_success
	assert_line --index 0 130
	output=$(printf '%s\n' "$output" | tail -n +2)
	assert_framed
	[ "$(end_field .status)" = interrupted ]
	[ "$(end_field .stop)" = user ]
	[ ! -s "$FAKE_LOG" ]
}

@test "a request field of the wrong kind is exit 65 naming the line and the field" {
	serve openai-chat <<-'EOF'
	{"text": "never"}
	EOF
	for f in model effort variant account mode conversation cwd; do
		run_split xg-run --model fake/m <<-EOF
		{"type":"custom","x":1}
		{"type":"request","text":"go","$f":7}
		EOF
		assert_failure 65
		[[ "$stderr" == *"standard input:2: field '$f' of the request is a number, not a string"* ]] ||
			{ echo "$f: $stderr"; false; }
	done
	fake_log 'assert len(log) == 0, len(log)'
}

@test "a model record's id or provider of the wrong kind is exit 65 naming the field" {
	serve openai-chat <<-'EOF'
	{"text": "never"}
	EOF
	for f in id provider; do
		model=$(jq -cn --arg f "$f" '{type: "model", id: "fake/m", provider: "fake"} | .[$f] = 7')
		run_split xg-run <<-EOF
		{"type":"request","text":"go"}
		$model
		{"type":"pack","mode":"normal","system":"x"}
		EOF
		assert_failure 65
		[[ "$stderr" == *"field '$f' of the model record is a number, not a string"* ]] ||
			{ echo "$f: $stderr"; false; }
		[[ "$stderr" != *"no model to run on"* ]]
	done
}

@test "a signal while a failed run reads the rest of its open input ends it as interrupted" {
	serve openai-chat <<-'EOF'
	{"text": "never"}
	EOF
	# An empty request text fails the run; it still passes the rest of its
	# input through, and waits for its end.
	run signal_open INT run 0.5 xg-run <<-'EOF'
	{"type":"request","text":""}
	{"type":"model","id":"fake/m","provider":"fake"}
	{"type":"pack","mode":"normal","system":"x"}
	EOF
	assert_success
	assert_line --index 0 130
	output=$(printf '%s\n' "$output" | tail -n +2)
	[ "$(end_field .status)" = interrupted ]
	[ "$(end_field .stop)" = user ]
}

@test "a signal leaves no xg-snapshot of the run behind, even one that ignores SIGTERM" {
	mkdir "$BATS_TEST_TMPDIR/lone"
	cp "$XG_SRCDIR/bin/xg-run" "$BATS_TEST_TMPDIR/lone/"
	cat >"$BATS_TEST_TMPDIR/lone/xg-snapshot" <<-EOF
	#!/bin/sh
	echo \$\$ >"$BATS_TEST_TMPDIR/snap.pid"
	trap '' TERM
	exec sleep 60
	EOF
	chmod +x "$BATS_TEST_TMPDIR/lone/xg-snapshot"
	serve openai-chat <<-'EOF'
	{"text": "slow", "delay_ms": 20000}
	EOF
	run python3 - "$BATS_TEST_TMPDIR/lone/xg-run" "$BATS_TEST_TMPDIR/snap.pid" <<'PY'
import os, signal, subprocess, sys, time
from runpipe import start, wait_for
prog, pidfile = sys.argv[1], sys.argv[2]
p = start([prog, "--model", "fake/m", "go"], stdin=subprocess.DEVNULL)
wait_for(lambda: os.path.exists(pidfile) and open(pidfile).read().strip(),
         "the snapshot did not start")
snap = int(open(pidfile).read())
time.sleep(0.3)
p.send_signal(signal.SIGTERM)
print(p.wait(timeout=20))
try:
    state = open("/proc/%d/stat" % snap).read().rsplit(")", 1)[1].split()[0]
except OSError:
    state = "gone"
print("snapshot", "ended" if state in ("gone", "Z", "X") else "running:" + state)
PY
	assert_success
	assert_output $'143\nsnapshot ended'
}

@test "a bad record after the run has started fails it with exit 65, and no tool runs" {
	serve openai-chat <<-'EOF'
	{"tool_calls": [{"id": "t1", "name": "bash", "args": {"command": "touch tool-ran"}}]}
	{"text": "never"}
	EOF
	printf '%s\n' '{"type":"request","text":"bad tail","mode":"normal"}' |
		xg-choices start --model fake/m | xg-prompt-compile >upstream.ndjson
	n=$(wc -l <upstream.ndjson)
	printf '%s\n' 'this is not json' >>upstream.ndjson
	run_split xg-run <upstream.ndjson
	assert_failure 65
	assert_framed
	[ "$(end_field .status)" = failed ]
	[[ "$(end_field .reason)" == *"line $((n + 1))"* ]]
	[ ! -e tool-ran ]
	[ -z "$(recs tool_call)" ]
}

@test "alone, xg-run runs xg-snapshot for the snapshot, and goes on without one it cannot find" {
	git init -q repo
	echo a >repo/a.txt
	git -C repo add a.txt
	git -C repo -c user.name=t -c user.email=t@example.com commit -qm one
	serve openai-chat <<-'EOF'
	{"text": "seen", "repeat": 2}
	EOF
	cd repo
	xgrun -v "snap"
	assert_success
	[[ "$stderr" == *"no snapshot record: running xg-snapshot"* ]]
	[ "$(git cat-file -t "$(recs run_start | jq -r .snapshot)")" = commit ]
	# A copy of xg-run with no xg-snapshot beside it or in PATH.
	mkdir "$BATS_TEST_TMPDIR/lone"
	cp "$XG_SRCDIR/bin/xg-run" "$BATS_TEST_TMPDIR/lone/"
	run_split env PATH=/usr/bin:/bin "$BATS_TEST_TMPDIR/lone/xg-run" --model fake/m "alone" </dev/null
	assert_success
	[[ "$stderr" == *"no snapshot: xg-snapshot is neither beside xg-run nor in PATH"* ]]
	[ "$(recs run_start | jq -r .snapshot)" = null ]
	[ "$(end_field .status)" = completed ]
}

@test "the xg-snapshot a run starts holds none of the run's connections or pipes" {
	# A stand-in beside a copy of xg-run notes its descriptors.  It starts
	# once the input ends, after the request has gone out: the provider's
	# connection is open by then.
	mkdir "$BATS_TEST_TMPDIR/lone"
	cp "$XG_SRCDIR/bin/xg-run" "$BATS_TEST_TMPDIR/lone/"
	cat >"$BATS_TEST_TMPDIR/lone/xg-snapshot" <<-EOF
	#!/usr/bin/env python3
	import os
	fds = []
	for f in sorted(os.listdir("/proc/self/fd"), key=int):
	    try:
	        fds.append(f + " -> " + os.readlink("/proc/self/fd/" + f))
	    except OSError:
	        pass  # the directory being listed
	open("$BATS_TEST_TMPDIR/fds", "w").write("\\n".join(fds) + "\\n")
	print('{"type":"snapshot","commit":"feedfacefeedfacefeedfacefeedfacefeedface"}')
	EOF
	chmod +x "$BATS_TEST_TMPDIR/lone/xg-snapshot"
	serve openai-chat <<-'EOF'
	{"text": "seen", "delay_ms": 500}
	EOF
	printf '%s\n' '{"type":"request","text":"fds","mode":"normal"}' |
		xg-choices start --model fake/m | xg-prompt-compile >upstream.ndjson
	run python3 - "$FAKE_LOG" "$BATS_TEST_TMPDIR/lone/xg-run" <<'PY'
import sys
from runpipe import read_to_end, requested, start, wait_for
p = start([sys.argv[2]])
p.stdin.write(open("upstream.ndjson", "rb").read())
p.stdin.flush()
wait_for(requested(sys.argv[1]), "no request")
p.stdin.close()
out = read_to_end(p, "the run did not end").decode()
print(p.wait())
sys.stdout.write(out)
PY
	assert_success
	assert_line --index 0 0
	output=$(printf '%s\n' "$output" | tail -n +2)
	[ "$(recs run_start | jq -r .snapshot)" = feedfacefeedfacefeedfacefeedfacefeedface ]
	# Its standard output is the pipe back to xg-run; nothing else of
	# xg-run's is a socket or a pipe.
	run grep -v '^1 -> ' "$BATS_TEST_TMPDIR/fds"
	refute_output --partial 'socket:'
	refute_output --partial 'pipe:'
}

@test "run_end is written on every failure path" {
	# No model: nothing in the catalog is usable.
	serve openai-chat </dev/null
	mkdir share
	cp -rL "$XG_SHARE_DIR/prompts" share/
	cp "$XG_HOME/config/models.json" share/models.json
	unset XG_TEST_KEY
	XG_SHARE_DIR=$PWD/share run_split xg-run "no model" </dev/null
	assert_failure 77
	assert_framed
	[ "$(end_field .status)" = failed ]
	[ "$(end_field .reason)" != null ]
	# No credentials for the named model.
	xgrun "no key"
	assert_failure 77
	assert_framed
	[[ "$(end_field .reason)" == *XG_TEST_KEY* ]]
	export XG_TEST_KEY=test-secret-4d7a
	# Bad input: not JSON, and a request without text.
	run_split xg-run --model fake/m <<<'not json'
	assert_failure 65
	assert_framed
	[[ "$stderr" == *"line 1"* ]]
	run_split xg-run --model fake/m <<<'{"type":"request","mode":"normal"}'
	assert_failure 65
	assert_framed
	[[ "$stderr" == *"'text'"* ]]
	run_split xg-run --model fake/m </dev/null
	assert_failure 65
	assert_framed
	[ ! -s "$FAKE_LOG" ]
}

@test "a provider failing past its retries is exit 69, with retry records and run_end" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"status": 500, "body": {"error": {"message": "boom"}}, "repeat": 3}
		EOF
		XG_RETRY="attempts=2,base=1,cap=5" xgrun "fail"
		assert_failure 69
		assert_framed
		[ "$(recs retry | wc -l)" = 2 ]
		[ "$(end_field .status)" = failed ]
		fake_log 'assert len(log) == 3'
	done
}

@test "retry records and a provider's failure name the provider and its host, and xg shows them" {
	serve openai-chat <<-'EOF'
	{"status": 500, "body": {"error": {"message": "boom"}}, "repeat": 3}
	EOF
	XG_RETRY="attempts=2,base=1,cap=5" xgrun "fail"
	assert_failure 69
	[ "$(recs retry | jq -r '"\(.provider) \(.host)"' | sort -u)" = "fake 127.0.0.1:$FAKE_PORT" ]
	want="provider 'fake' (127.0.0.1:$FAKE_PORT): server: HTTP 500: boom"
	[ "$(end_field .reason)" = "$want" ]
	[[ "$stderr" == *"xg-run: $want"* ]]
	run xg-test render <<<"$output"
	# Each retry line names the cause, not only its class.
	assert_line --regexp "^retry 1 of 2 in [0-9]+ ms: provider 'fake' \(127\.0\.0\.1:$FAKE_PORT\): server: HTTP 500: boom\$"
	assert_line --regexp "^retry 2 of 2 in [0-9]+ ms: provider 'fake' \(127\.0\.0\.1:$FAKE_PORT\): server: HTTP 500: boom\$"
	assert_line --partial "xg: failed: $want"
}

# A port nothing listens on: bound, then closed.
closed_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

@test "a connection refused by a server on this machine ends the run within a second, naming the provider and its URL" {
	port=$(closed_port)
	FAKE_URL="http://127.0.0.1:$port/v1" fake_catalog openai-chat
	# The policy would retry eight times; a refusal nearby gets two.
	XG_RETRY="attempts=8,base=1,cap=5" xgrun "hello"
	assert_failure 69
	assert_framed
	[ "$(recs retry | wc -l)" = 2 ]
	[ "$(recs retry | jq -r '"\(.of) \(.reason) \(.provider) \(.host)"' | sort -u)" = "2 network fake 127.0.0.1:$port" ]
	want="provider 'fake' (127.0.0.1:$port): network: http://127.0.0.1:$port/v1 refused the connection: is the server running?"
	[ "$(end_field .status)" = failed ]
	[ "$(end_field .reason)" = "$want" ]
	[[ "$stderr" == *"xg-run: $want"* ]]
	# With the default policy the two waits come to less than a second.
	xgrun "hello again"
	assert_failure 69
	[ "$(recs retry | jq -s 'map(.delay_ms) | "\(length) \(add)"' -r)" = "2 750" ]
}

@test "a chat reply that ends with [DONE] but no finish_reason is retried, never taken as complete" {
	serve openai-chat <<-'EOF'
	{"text": "The first half", "finish_reason": false}
	{"text": "The whole reply."}
	EOF
	XG_RETRY="base=1,cap=5" xgrun "answer"
	assert_success
	[ "$(end_field .status)" = completed ]
	[ "$(end_field .reply)" = "The whole reply." ]
	[ "$(recs retry | jq -r '"\(.reason) \(.partial)"')" = "truncated true" ]
	[ "$(recs message | jq -r 'select(.role == "assistant") | .text')" = "The whole reply." ]
	# Past its retries it is a failure, and no partial reply is kept.
	serve openai-chat <<-'EOF'
	{"text": "The first half", "finish_reason": false, "repeat": 3}
	EOF
	XG_RETRY="attempts=2,base=1,cap=5" xgrun "answer"
	assert_failure 69
	assert_framed
	[ "$(end_field .status)" = failed ]
	[ "$(end_field .reply)" = null ]
	[[ "$(end_field .reason)" == *": truncated: the provider's stream ended with [DONE] but no finish_reason" ]]
	[ -z "$(recs message | jq -r 'select(.role == "assistant")')" ]
	conv=$(recs run_start | jq -r .conversation)
	[ "$(jq -r 'select(.type == "message") | .role' "$CONVS/$conv.jsonl")" = user ]
}

@test "a provider's context overflow is exit 65 at once, in each wire kind" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"status": 400, "body": {"error": {"message": "This model's maximum context length is 128000 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}}}
		{"text": "never"}
		EOF
		XG_RETRY="base=1,cap=5" xgrun "too long"
		assert_failure 65
		assert_framed
		[ -z "$(recs retry)" ]
		[ "$(end_field .status)" = failed ]
		[ "$(end_field .exit)" = 65 ]
		[[ "$(end_field .reason)" == "provider 'fake' (127.0.0.1:$FAKE_PORT): context_overflow: HTTP 400: "* ]]
		fake_log 'assert len(log) == 1, len(log)'
	done
}

@test "a rate limit past its retries is exit 75" {
	serve openai-responses <<-'EOF'
	{"status": 429, "body": {"error": {"message": "slow down", "type": "rate_limit_exceeded"}}, "repeat": 2}
	EOF
	XG_RETRY="attempts=1,base=1,cap=5" xgrun "too fast"
	assert_failure 75
	assert_framed
	[ "$(recs retry | jq -r .reason)" = rate_limit ]
	[ "$(end_field .status)" = failed ]
}

@test "a conversation locked by another writer is exit 75 with run_end" {
	serve openai-chat <<-'EOF'
	{"text": "first"}
	{"text": "never"}
	EOF
	xgrun "first"
	conv=$(recs run_start | jq -r .conversation)
	flock "$CONVS/$conv.jsonl" sleep 5 3>&- &
	sleep 0.3
	XG_LOCK_TIMEOUT=200 xgrun --conversation "$conv" "second"
	assert_failure 75
	assert_framed
	[ "$(end_field .status)" = failed ]
	fake_log 'assert len(log) == 1'
}

@test "a run holds its conversation: a second run on it waits, then exits 75 naming the first" {
	T=$BATS_TEST_TMPDIR
	serve openai-chat <<-EOF
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "touch $T/started; while [ ! -e $T/go ]; do sleep 0.05; done"}}]}
	{"text": "first done"}
	{"text": "third done"}
	EOF
	xg-run --model fake/m --conversation c1 "first" </dev/null >"$T/out1" 2>"$T/err1" &
	first=$!
	# Up to a minute, to stop a hang only.
	for i in $(seq 600); do
		[ -e "$T/started" ] && break
		sleep 0.1
	done
	XG_LOCK_TIMEOUT=200 xgrun --conversation c1 "second"
	assert_failure 75
	assert_framed
	[ "$(end_field .status)" = failed ]
	[[ "$stderr" == *"$CONVS/c1.run.lock' is locked by process $first (xg-run)"*"XG_LOCK_TIMEOUT"* ]]
	[[ "$stderr" == *"the conversation 'c1' is in use by another run"* ]]
	touch "$T/go"
	wait "$first"
	xgrun --conversation c1 "third"
	assert_success
	[ "$(end_field .reply)" = "third done" ]
	# The second run asked nothing and wrote nothing: the turns are whole.
	fake_log 'assert len(log) == 3'
	run jq -r 'select(.type == "message") | .role + " " + (.text // "")' "$CONVS/c1.jsonl"
	refute_output --partial second
	[ "$(grep -c '^user' <<<"$output")" = 2 ]
}

@test "a wrong key is exit 77 and the key is never shown" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"text": "never"}
		EOF
		XG_TEST_KEY=wrong-key-93b1 xgrun "bad key"
		assert_failure 77
		assert_framed
		[ "$(end_field .status)" = failed ]
		[[ "$output$stderr" != *wrong-key-93b1* ]]
	done
}

@test "SIGINT during a long bash kills its process group and ends with run_end stop user, exit 130" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"tool_calls": [{"id": "s0", "name": "bash", "args": {"command": "echo quick"}}]}
		{"tool_calls": [{"id": "s1", "name": "bash", "args": {"command": "echo $$ >pgid; sleep 300 & sleep 300"}}]}
		{"text": "never"}
		EOF
		rm -f pgid out.ndjson
		signal_run INT '[ -s pgid ]' 0.1 xg-run --model fake/m "long"
		[ "$rc" = 130 ]
		assert_framed
		[ "$(end_field '"\(.status) \(.stop)"')" = "interrupted user" ]
		# What was complete is kept: the first call's result is in the conversation.
		conv=$(recs run_start | jq -r .conversation)
		grep -q '"output":"quick"' "$CONVS/$conv.jsonl"
		if kill -0 -- "-$(cat pgid)" 2>/dev/null; then echo "process group still there"; false; fi
		fake_log 'assert len(log) == 2'
	done
}

# kill_run_leaves_none MARK: SIGKILL of the run in the background ($pid);
# within 3 s no process whose command line holds MARK is left (any left
# are killed, and the test fails naming them).
kill_run_leaves_none() {
	local i left
	kill -KILL "$pid"
	wait "$pid" || true
	for i in $(seq 30); do
		[ -z "$(procs_with "$1")" ] && break
		sleep 0.1
	done
	left=$(procs_with "$1")
	if [ -n "$left" ]; then
		echo "left running: $left"
		kill -KILL $left 2>/dev/null || true
		false
	fi
}

@test "SIGKILL of xg-run while a tool runs leaves none of the tool's processes" {
	# Each sleep's argument holds the marker, so /proc finds both.
	m="300.$$$RANDOM"
	serve openai-chat <<-EOF
	{"tool_calls": [{"id": "s1", "name": "bash", "args": {"command": "sleep ${m}1 & sleep ${m}2"}}]}
	{"text": "never"}
	EOF
	rm -f out.ndjson
	bg_start xg-run --model fake/m "long"
	wait_until '[ "$(procs_with "$m" | wc -l)" -ge 2 ]' "the tool's two sleeps never started"
	kill_run_leaves_none "$m"
}

@test "one keeper holds every call's background job, and SIGKILL of xg-run ends them all" {
	m="300.$$$RANDOM"
	serve openai-chat <<-EOF
	{"tool_calls": [{"id": "s1", "name": "bash", "args": {"command": "sleep ${m}1 >/dev/null 2>&1 &"}}]}
	{"tool_calls": [{"id": "s2", "name": "bash", "args": {"command": "sleep ${m}2 >/dev/null 2>&1 &"}}]}
	{"tool_calls": [{"id": "s3", "name": "bash", "args": {"command": "true"}}]}
	{"tool_calls": [{"id": "s4", "name": "bash", "args": {"command": "sleep ${m}3"}}]}
	{"text": "never"}
	EOF
	rm -f out.ndjson
	bg_start xg-run --model fake/m "keepers $m"
	wait_until '[ "$(procs_with "sleep $m" | wc -l)" -ge 3 ]' "the three sleeps never started"
	# The first two outlived their calls; one process keeps all four
	# groups, named so in ps, a fork of this xg-run (so its command line
	# is the run's), and not its child.
	keepers=$(for p in $(procs_with "keepers $m"); do
		[ "$(cat "/proc/$p/comm")" = xg-keeper ] && echo "$p"; done)
	assert_equal "$(echo "$keepers" | wc -w)" 1
	[ "$(awk '{print $4}' "/proc/$keepers/stat")" != "$pid" ]
	kill_run_leaves_none "$m"
}

@test "SIGINT while the reply streams abandons the request and ends with exit 130" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"text": "this reply never finishes arriving", "chunk": 2, "stall": 60, "stall_after": 10}
		EOF
		signal_run INT '[ -s "$FAKE_LOG" ]' 0.2 xg-run --model fake/m --stream "stall"
		[ "$rc" = 130 ]
		assert_framed
		[ "$(end_field '"\(.status) \(.stop) \(.requests)"')" = "interrupted user 1" ]
		# The reply in flight is not kept.
		[ -z "$(recs message | jq 'select(.role == "assistant")')" ]
	done
}

@test "SIGINT during a retry wait cuts the wait short and sends no other request" {
	serve openai-chat <<-'EOF'
	{"status": 503, "headers": {"retry-after": "30"}}
	{"text": "never asked for"}
	EOF
	# Through a pipe, so each record is flushed as it is written.
	bg_start --pipe env --default-signal=INT xg-run --model fake/m "wait"
	wait_until 'grep -q "\"type\":\"retry\"" out.ndjson 2>/dev/null' "no retry record came"
	kill -INT "$pid"
	# Far less than the 30 s the provider asked for; a kill stops a hang.
	for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fail "the retry wait was not cut short"; fi
	# cat may not have written the last record yet.
	for i in $(seq 1 50); do grep -q '"type":"run_end"' out.ndjson && break; sleep 0.05; done
	reap
	[ "$rc" = 130 ]
	assert_framed
	[ "$(end_field '"\(.status) \(.stop)"')" = "interrupted user" ]
	[ "$(grep -c . "$FAKE_LOG")" = 1 ]
}

@test "SIGTERM ends the run with exit 143 after run_end" {
	serve openai-chat <<-'EOF'
	{"tool_calls": [{"id": "s1", "name": "bash", "args": {"command": "echo $$ >pgid; sleep 300"}}]}
	EOF
	signal_run TERM '[ -s pgid ]' 0 xg-run --model fake/m "long"
	[ "$rc" = 143 ]
	[ "$(end_field '"\(.status) \(.stop)"')" = "interrupted user" ]
}

@test "standard input left open by the caller never holds the run" {
	serve openai-chat <<-'EOF'
	{"text": "not waiting"}
	EOF
	run_split timeout 20 bash -c 'xg-run --model fake/m "go" < <(sleep 60)'
	assert_success
	[ "$(end_field .status)" = completed ]
	# A bash command does not read it either.
	serve openai-chat <<-'EOF'
	{"tool_calls": [{"id": "i1", "name": "bash", "args": {"command": "cat; echo read-nothing"}}]}
	{"text": "ok"}
	EOF
	run_split timeout 20 bash -c 'xg-run --model fake/m "go" < <(sleep 60)'
	assert_success
	[ "$(recs tool_result | jq -r .output)" = read-nothing ]
}

# ---- plan mode ----

@test "plan mode refuses write and edit, and a ready plan is one request" {
	for kind in $KINDS; do
		echo keep >p.txt
		serve "$kind" <<-'EOF'
		{"tool_calls": [{"id": "w1", "name": "write", "args": {"path": "p.txt", "content": "lost"}}, {"id": "w2", "name": "edit", "args": {"path": "p.txt", "edits": [{"old_text": "keep", "new_text": "lost"}]}}, {"id": "w3", "name": "read", "args": {"path": "p.txt"}}]}
		{"text": "Here it is.\n<proposed_plan>\n1. Do the thing.\n</proposed_plan>\n"}
		EOF
		xgrun --mode plan "plan it"
		assert_success
		[ "$(cat p.txt)" = keep ]
		[ "$(recs tool_result | jq -r '"\(.name) \(.ok)"' | tr '\n' ' ')" = "write false edit false read true " ]
		[ "$(recs tool_result | jq 'select(.id == "w1") | .output | contains("plan mode")')" = true ]
		[ "$(recs plan | jq -r .outcome)" = plan_ready ]
		[[ "$(recs plan | jq -r .plan)" == *"Do the thing."* ]]
		fake_log 'assert len(log) == 2'
	done
}

@test "plan mode: no_plan and blocked end plainly without a repair" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"text": "That already exists; nothing to plan."}
		{"text": "<plan_blocked>\nWhich database?\n</plan_blocked>"}
		EOF
		run_split xg-run --model fake/m <<<'{"type":"request","text":"plan","mode":"plan"}'
		assert_success
		[ "$(recs plan | jq -r .outcome)" = no_plan ]
		[ "$(end_field .status)" = completed ]
		xgrun --mode plan "plan again"
		assert_success
		[ "$(recs plan | jq -r .outcome)" = blocked ]
		fake_log 'assert len(log) == 2'
	done
}

@test "plan mode: an invalid reply gets one repair request, and only one" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"text": "<proposed_plan>\n1. Half a plan"}
		{"text": "<proposed_plan>\n1. The whole plan.\n</proposed_plan>"}
		{"text": "<proposed_plan></proposed_plan>"}
		{"tool_calls": [{"id": "x1", "name": "write", "args": {"path": "r.txt", "content": "x"}}]}
		{"text": "<plan_blocked></plan_blocked>"}
		{"text": "never asked"}
		EOF
		xgrun --mode plan "repairable"
		assert_success
		[ "$(recs plan | jq -r .outcome | tr '\n' ' ')" = "invalid plan_ready " ]
		[ "$(recs message | jq -r 'select(.role == "user") | .kind' | tr '\n' ' ')" = "null plan-repair " ]
		# The classifier's words go in as written: the model reads the tag's name.
		fake_log 'import json; b = json.dumps(log[1]["body"]); assert "could not be read as written: The <proposed_plan> tag on line 1 opens a block that is never closed.\\n" in b, b; assert "&lt;" not in b'
		# Invalid twice: the repair keeps the gate and is not repeated; the
		# run is completed, but no plan came of it: exit 1, and why.
		xgrun --mode plan "unrepairable"
		assert_failure 1
		assert_framed
		[ "$(recs plan | jq -r .outcome | tr '\n' ' ')" = "invalid invalid " ]
		[ ! -e r.txt ]
		[ "$(end_field .status)" = completed ]
		[ "$(end_field .exit)" = 1 ]
		[ "$(end_field .stop)" = null ]
		[[ "$(end_field .reason)" == "the reply could not be read as a plan, even after its repair: "*"plan_blocked"* ]]
		[ "$(recs message | jq -r 'select(.role == "user") | .kind' | tr '\n' ' ')" = "null plan-repair " ]
		fake_log 'assert len(log) == 5, len(log)'
	done
}

@test "the EXAMPLES of the man page run as shown" {
	serve openai-chat <<-'EOF'
	{"text": "Fixed: the test passes now."}
	{"tool_calls": [{"id": "x1", "name": "bash", "args": {"command": "rm -rf nothing"}}, {"id": "x2", "name": "bash", "args": {"command": "make --version >/dev/null && echo made"}}]}
	{"text": "tests run"}
	{"text": "<proposed_plan>\n1. Split the module.\n</proposed_plan>"}
	EOF
	# A catalog with only fake/m, so the account's default resolution picks it.
	mkdir share
	cp -rL "$XG_SHARE_DIR/prompts" share/
	cp "$XG_HOME/config/models.json" share/models.json
	export XG_SHARE_DIR=$PWD/share
	mandoc -Tascii "$XG_SRCDIR/man/xg-run.1" | col -bx |
		awk '/^EXAMPLES/ { f = 1; next } /^[A-Z]/ { f = 0 } f' >examples.txt
	python3 - examples.txt <<-'PY'
	import re, sys
	text = open(sys.argv[1]).read()
	cmds, cur = [], None
	for line in text.splitlines():
	    s = line.strip()
	    if s.startswith("$ "):
	        cur = [s[2:]]
	        cmds.append(cur)
	    elif cur is not None and s and (cur[-1].endswith("\\") or cur[-1].endswith("|")
	                                      or cur[-1].count("'") % 2 == 1):
	        cur.append(s)
	    else:
	        cur = None
	for i, c in enumerate(cmds):
	    open("example%d.sh" % (i + 1), "w").write("\n".join(c) + "\n")
	PY
	[ -f example3.sh ]
	run_split sh example1.sh </dev/null
	assert_success
	assert_output "Fixed: the test passes now."
	conv=$(jq -r .conversation "$XG_HOME"/state/runs/*/run.json)
	sed -i "s/20261130-105624-3f9a1c2b/$conv/" example2.sh
	run_split sh example2.sh </dev/null
	assert_success
	[ "$(recs tool_result | jq -r '"\(.ok) \(.output)"' | tr '\n' ' ')" = \
	  "false refused: only git and make; nothing was run true made " ]
	[ "$(recs run_start | jq -r .conversation)" = "$conv" ]
	git init -q .
	run_split sh example3.sh </dev/null
	assert_success
	[ "$(recs plan | jq -r .outcome)" = plan_ready ]
	[ "$(recs run_start | jq -r .snapshot)" != null ]
}

@test "plan mode's dynamic section is kept out of the system prompt's cached prefix" {
	serve anthropic-messages <<-'EOF'
	{"text": "nothing to plan"}
	{"text": "nothing to do"}
	EOF
	xgrun --mode plan "plan"
	assert_success
	xgrun "normal"
	assert_success
	fake_log '
s = log[0]["body"]["system"]
assert len(s) == 2 and s[0].get("cache_control") and not s[1].get("cache_control"), s
assert s[1]["text"].lstrip().startswith("# Plan mode"), s[1]["text"][:40]
n = log[1]["body"]["system"]
assert len(n) == 1 and n[0]["text"] == s[0]["text"]'
}

@test "another mode name runs as normal, with no plan gate and no plan record" {
	serve openai-chat <<-'EOF'
	{"tool_calls": [{"id": "m1", "name": "write", "args": {"path": "r.txt", "content": "x"}}]}
	{"text": "<proposed_plan>\nnot a plan run\n</proposed_plan>"}
	EOF
	xgrun --mode review "review it"
	assert_success
	[ "$(recs run_start | jq -r .mode)" = review ]
	[ -f r.txt ]
	[ -z "$(recs plan)" ]
	xgrun --mode 'Not A Mode' "x"
	assert_failure 2
}

@test "a SIGINT ignored by whoever started the run stays ignored" {
	serve openai-chat <<-'EOF'
	{"tool_calls": [{"id": "s1", "name": "bash", "args": {"command": "echo $$ >pgid; sleep 300"}}]}
	EOF
	bg_start env --ignore-signal=INT xg-run --model fake/m "long"
	wait_until '[ -s pgid ]' "the bash call did not start"
	kill -INT "$pid"
	sleep 0.5
	kill -0 "$pid"
	[ -z "$(grep run_end out.ndjson)" ]
	kill -TERM "$pid"
	reap
	[ "$rc" = 143 ]
	[ "$(end_field '"\(.status) \(.stop)"')" = "interrupted user" ]
}

@test "credentials that cannot be read end the run with the reason's exit code" {
	serve openai-chat </dev/null
	unset XG_TEST_KEY
	mkdir -p "$XG_HOME/config/accounts/default"
	printf '{"fake": ' > "$XG_HOME/config/accounts/default/auth.json"
	chmod 600 "$XG_HOME/config/accounts/default/auth.json"
	xgrun "broken auth"
	assert_failure 78
	assert_framed
	[[ "$stderr" == *auth.json* ]]
	fake_log 'assert len(log) == 0'
}

@test "a file where the state folder should be: exit 74, and one error naming the folder that cannot be made" {
	serve <<<'{"text":"never asked"}'
	rm -rf "$XG_HOME/state"
	: >"$XG_HOME/state"
	run_split xg-run --model fake/m "hello" </dev/null
	assert_equal "$status" 74
	# Said once: no run.json or index line is tried without the folder.
	assert_equal "$stderr" "xg-run: cannot create directory '$XG_HOME/state/runs': Not a directory
xg-run: cannot make the run's directory"
	assert_equal "$(printf '%s\n' "$output" | jq -r 'select(.type == "run_end") | .reason')" \
		"cannot make the run's directory"
	# Nothing was asked of the model, and the file is as it was.
	[ ! -s "$FAKE_LOG" ]
	[ -f "$XG_HOME/state" ] && [ ! -s "$XG_HOME/state" ]
}
