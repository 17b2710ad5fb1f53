#!/usr/bin/env bats
# xg-run's compaction (man 1 xg-run, COMPACTION), against the fake
# provider in each wire kind, with a model whose context window is tiny:
# 8000 tokens less a reserve of 1000, so a reported input of 7600 tokens
# compacts before the next request, and 800 tokens of history are kept.
# The fake provider's log is where cache stability is proved: each
# request is the one before plus new items, byte for byte, but for the
# first, the summary request and the one right after it.

load lib/helper
load lib/fake-provider
load lib/xg-run

setup() {
	xg_run_setup
	# About 100 tokens a read, so a few turns fill what is kept.
	for i in 1 2 3 4 5 6 7 8; do
		echo "line $i of the notes, with words enough to take some room in the context"
	done >notes.txt
}

teardown() {
	fake_provider_stop
}

# step ID USAGE: a scripted reply that reads notes.txt, reporting USAGE
# input tokens.
read_step() {
	printf '{"tool_calls": [{"id": "%s", "name": "read", "args": {"path": "notes.txt"}}], "usage": {"input": %s, "output": 20}}\n' "$1" "$2"
}

todo_step() {
	printf '{"tool_calls": [{"id": "%s", "name": "todo_write", "args": {"items": [{"content": "%s", "status": "in_progress"}, {"content": "report", "status": "pending"}]}}], "usage": {"input": 5000, "output": 20}}\n' "$1" "$2"
}

# The Python every log check starts with: the request items of each
# logged request, the compaction requests, the checkpoint's texts.
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
def is_summary_request(r): return "The conversation is about to be compacted" in dump(items(r))
def checkpoints(r): return [s for s in strings(items(r)) if s.startswith("Checkpoint after compaction")]
def extends(a, b):
    A, B = a["body"], b["body"]
    if set(A) != set(B): return False
    if any(dump(A[k]) != dump(B[k]) for k in A if k != key): return False
    return len(B[key]) > len(A[key]) and all(dump(x) == dump(B[key][i]) for i, x in enumerate(A[key]))
'

@test "a long run compacts in the middle and every other request extends the one before, in each wire kind" {
	for kind in $KINDS; do
		{
			todo_step t1 "read the notes"
			for i in $(seq 2 24); do read_step "r$i" 5000; done
			read_step r25 7600
			echo '{"text": "SUMMARY-ONE: the notes were read 24 times.", "usage": {"input": 4000, "cached_input": 3000, "output": 30}}'
			for i in $(seq 27 51); do read_step "r$i" 5200; done
			echo '{"text": "all read"}'
		} >script.ndjson
		serve "$kind" <script.ndjson
		small_catalog "$kind" 8000 1000
		xgrun "read the notes fifty times"
		assert_success
		[ "$(end_field .status)" = completed ]
		[ "$(end_field .tool_calls)" = 50 ]
		[ "$(recs compaction | wc -l)" = 1 ]
		recs compaction | jq -e '.reason == "context" and .tokens_before > 7000 and .kept > 0 and .summarised > 0'
		# The summary request's usage counts in the run's.
		[ "$(recs usage | jq -s 'map(select(.for == "compaction")) | length')" = 1 ]
		recs run_end | jq -e '.usage.cached_input == 3000'
		conv=$(recs run_start | jq -r .conversation)
		fake_log "$LOGLIB"'
assert len(log) == 52, len(log)
assert [i for i, r in enumerate(log) if is_summary_request(r)] == [25]
s = log[25]
# The summary request carries the older messages as the last request had them.
assert all(dump(x) == dump(items(log[24])[i]) for i, x in enumerate(items(s)[:-1]))
assert len(items(s)) < len(items(log[24]))
for i in range(1, 52):
    if i in (25, 26): continue
    assert extends(log[i - 1], log[i]), i
assert not extends(log[24], log[26])
# The checkpoint: none before, then one, the same bytes on every request,
# right after the summary; it restates the request and the todo list.
assert all(not checkpoints(r) for r in log[:26])
cps = [checkpoints(r) for r in log[26:]]
assert all(len(c) == 1 and c[0] == cps[0][0] for c in cps), cps
cp = cps[0][0]
assert "read the notes fifty times" in cp and "[~] read the notes" in cp and "[ ] report" in cp, cp
b = dump(items(log[26]))
assert b.index("SUMMARY-ONE") < b.index("Checkpoint after compaction") < b.index("SUMMARY-ONE") + 200
assert dump(items(log[26])).count("<summary>") == 1
# What was summarised is gone; what was kept is there as it was.
assert "\"r3\"" not in b and "\"r25\"" in b
'
		# The conversation holds the summary, never the checkpoint.
		jq -e -s 'map(select(.type == "compaction")) | length == 1 and (.[0] | .summary == "SUMMARY-ONE: the notes were read 24 times." and .kept > 0 and .tokens_before > 7000 and (.at | test("^20")))' "$CONVS/$conv.jsonl"
		! grep -q "Checkpoint after compaction" "$CONVS/$conv.jsonl"
		[[ "$output" != *"Checkpoint after compaction"* ]]

		# The next run starts from the summary, and gets no checkpoint.
		cp "$FAKE_LOG" before.ndjson
		serve "$kind" <<-'EOF'
		{"text": "resumed"}
		EOF
		xgrun --conversation "$conv" "go on"
		assert_success
		[ -z "$(recs compaction)" ]
		fake_log "$LOGLIB"'
assert len(log) == 1
b = dump(items(log[0]))
assert b.count("<summary>") == 1 and b.index("SUMMARY-ONE") < b.index("\"r25\"")
assert not checkpoints(log[0])
assert "\"r3\"" not in b and "\"r25\"" in b and "\"r51\"" in b and "go on" in b
# It is the last request of the run before, byte for byte, up to and
# including the summary; the checkpoint right after it is what differs.
import os
last = [json.loads(l) for l in open("before.ndjson") if l.strip()][-1]
da, db = dump(last["body"]), dump(log[0]["body"])
n = len(os.path.commonprefix([da, db]))
end = da.index("</summary>") + len("</summary>")
assert n > end and da.count("</summary>") == 1, (n, end, da[n - 80:n + 80])
assert "Checkpoint after compaction" in da[n:] and "Checkpoint after compaction" not in db
'
	done
}

@test "a second compaction in the run rebuilds the checkpoint from the todo list of that moment" {
	for kind in $KINDS; do
		{
			todo_step t1 "first list"
			for i in 2 3 4 5; do read_step "a$i" 5000; done
			read_step a6 7600
			echo '{"text": "SUMMARY-ONE"}'
			todo_step t2 "second list"
			for i in 2 3 4 5; do read_step "b$i" 5000; done
			read_step b6 7600
			echo '{"text": "SUMMARY-TWO"}'
			echo '{"text": "done"}'
		} >script.ndjson
		serve "$kind" <script.ndjson
		small_catalog "$kind" 8000 1000
		xgrun "two compactions"
		assert_success
		[ "$(recs compaction | wc -l)" = 2 ]
		fake_log "$LOGLIB"'
assert len(log) == 15, len(log)
assert [i for i, r in enumerate(log) if is_summary_request(r)] == [6, 13]
one = [checkpoints(r) for r in log[7:13]]
two = [checkpoints(r) for r in log[14:]]
assert all(c == one[0] and len(c) == 1 for c in one), one
assert all(c == two[0] and len(c) == 1 for c in two), two
assert one[0] != two[0]
assert "first list" in one[0][0] and "second list" not in one[0][0]
assert "second list" in two[0][0] and "first list" not in two[0][0]
for r in log[14:]:
    b = dump(items(r))
    assert "SUMMARY-TWO" in b and "SUMMARY-ONE" not in b
for i in range(8, 13):
    assert extends(log[i - 1], log[i]), i
'
	done
}

@test "a context_overflow answer compacts and the request goes once more, in each wire kind" {
	for kind in $KINDS; do
		{
			for i in 1 2 3 4 5 6; do read_step "o$i" 3000; done
			echo '{"overflow": true}'
			echo '{"text": "SUMMARY-OVERFLOW"}'
			echo '{"text": "done after all"}'
		} >script.ndjson
		serve "$kind" <script.ndjson
		small_catalog "$kind" 8000 1000
		xgrun "overflow"
		assert_success
		[ "$(end_field .reply)" = "done after all" ]
		recs compaction | jq -e '.reason == "overflow"'
		fake_log "$LOGLIB"'
assert len(log) == 9, len(log)
assert is_summary_request(log[7])
b = dump(items(log[8]))
assert "SUMMARY-OVERFLOW" in b and len(items(log[8])) < len(items(log[6]))
# Nothing armed the checkpoint: no todo list, no plan.
assert not checkpoints(log[8])
'
	done
}

@test "a second context_overflow for the same request fails the run as before" {
	{
		for i in 1 2 3 4 5 6; do read_step "o$i" 3000; done
		echo '{"overflow": true}'
		echo '{"text": "SUMMARY-OVERFLOW"}'
		echo '{"overflow": true}'
	} >script.ndjson
		serve openai-chat <script.ndjson
	small_catalog openai-chat 8000 1000
	xgrun "overflow twice"
	[ "$status" -eq 65 ]
	[ "$(end_field .status)" = failed ]
	[[ "$(end_field .reason)" == *context_overflow* ]]
	fake_log 'assert len(log) == 9, len(log)'
}

@test "a big piped input with a small window is cut to a quarter of it, and every request fits the window, the summary request too" {
	# A window of 12000 tokens, 1000 of them the reserve: the request's
	# text is cut to 12000 bytes, and two reads of 10000 bytes make the
	# older history too long to summarise as it was.
	yes 'a line of a long build log, over and over' | head -c 2000000 >big.log
	yes 'a line of the notes, long enough to fill them quickly' | head -c 10000 >notes.txt
	for kind in $KINDS; do
		{
			read_step r1 5000
			read_step r2 11500
			echo '{"text": "SUMMARY-OF-THE-LOG"}'
			echo '{"text": "the log repeats one line"}'
		} >script.ndjson
		serve "$kind" <script.ndjson
		small_catalog "$kind" 12000 1000
		run_split xg run --json --model fake/m 'what does this log say?' <big.log
		assert_success
		[ "$(end_field .status)" = completed ]
		recs notice | jq -e -s 'map(select(.from == "xg-run" and (.text | test("longer than a quarter of the model.s context window")))) | length == 1'
		[ "$(recs compaction | wc -l)" = 1 ]
		conv=$(recs run_start | jq -r .conversation)
		# The conversation holds the request as it was sent: the head of
		# the piped text, the mark, and the block closed.
		jq -e -s 'map(select(.type == "message" and .role == "user"))[0].text
			| (length < 12000) and startswith("what does this log say?")
			and test("a line of a long build log") and test("\\[cut here: the request is [0-9]+ bytes")
			and endswith("\n</stdin>")' "$CONVS/$conv.jsonl"
		fake_log "$LOGLIB"'
assert len(log) == 4, len(log)
assert [i for i, r in enumerate(log) if is_summary_request(r)] == [2]
for i, r in enumerate(log):
    size = len(json.dumps(r["body"], separators=(",", ":"), ensure_ascii=False).encode())
    assert (size + 3) // 4 <= 12000, (i, size)
# The older history went as a transcript, cut in the middle, with the
# request at its head and the newest read at its end.
b = dump(items(log[2]))
assert "as a transcript" in b and "are left out here" in b, b[:300]
assert b.index("what does this log say?") < b.index("are left out here") < b.rindex("a line of the notes")
assert "SUMMARY-OF-THE-LOG" in dump(items(log[3]))
'
	done
}

# cycle PREFIX: a round of reads that fills the context, and its summary.
cycle() {
	for i in 2 3 4 5; do read_step "$1$i" 5000; done
	read_step "${1}6" 7600
	echo "{\"text\": \"SUMMARY-$1\"}"
}

@test "three compactions in a row with no progress between them end the run, interrupted with stop compaction_loop" {
	{ cycle a; cycle b; cycle c; cycle d; } >script.ndjson
	serve openai-chat <script.ndjson
	small_catalog openai-chat 8000 1000
	xgrun "read the notes forever"
	[ "$status" -eq 1 ]
	[ "$(end_field .status)" = interrupted ]
	[ "$(end_field .stop)" = compaction_loop ]
	[[ "$(end_field .reason)" == "3 compactions in a row with no successful bash, edit or write between them" ]]
	[ "$(recs compaction | wc -l)" = 3 ]
	conv=$(recs run_start | jq -r .conversation)
	# The third summary is kept, so the next run starts from it.
	[ "$(jq -r -s 'map(select(.type == "compaction")) | last | .summary' "$CONVS/$conv.jsonl")" = SUMMARY-c ]
	fake_log "$LOGLIB"'
assert len(log) == 18, len(log)
assert [i for i, r in enumerate(log) if is_summary_request(r)] == [5, 11, 17]
'
	jq -e '.status == "interrupted" and .stop == "compaction_loop"' \
		"$XG_HOME/state/runs/$(recs run_start | jq -r .run)/run.json"

	# A successful bash between the second and the third starts the count
	# again: four compactions, and the run ends as the model ends it.
	{
		cycle a; cycle b
		echo '{"tool_calls": [{"id": "w1", "name": "bash", "args": {"command": "true"}}], "usage": {"input": 3000, "output": 20}}'
		cycle c; cycle d
		echo '{"text": "done"}'
	} >script.ndjson
	serve openai-chat <script.ndjson
	small_catalog openai-chat 8000 1000
	xgrun "read the notes, and run something once"
	assert_success
	[ "$(end_field .status)" = completed ]
	[ "$(recs compaction | wc -l)" = 4 ]
}

@test "xg compact compacts the newest conversation now, and the next run starts from its summary" {
	{
		for i in 1 2 3 4 5 6 7 8 9 10 11 12; do read_step "c$i" 3000; done
		echo '{"text": "read enough"}'
	} >script.ndjson
		serve openai-responses <script.ndjson
	xgrun "read a lot"
	assert_success
	conv=$(recs run_start | jq -r .conversation)
	serve openai-responses <<-'EOF'
	{"text": "SUMMARY-BY-HAND"}
	EOF
	small_catalog openai-responses 8000 1000
	run_split xg compact
	assert_success
	[ "$(end_field .status)" = completed ]
	[ "$(end_field .reply)" = SUMMARY-BY-HAND ]
	[ "$(recs run_start | jq -r .conversation)" = "$conv" ]
	recs compaction | jq -e '.reason == "requested" and .kept > 0'
	[ "$(tail -n 1 "$CONVS/$conv.jsonl" | jq -r '"\(.type) \(.summary)"')" = "compaction SUMMARY-BY-HAND" ]
	fake_log "$LOGLIB"'
assert len(log) == 1 and is_summary_request(log[0]) and not checkpoints(log[0])
'
	serve openai-responses <<-'EOF'
	{"text": "small now"}
	EOF
	xgrun --conversation "$conv" "go on"
	assert_success
	fake_log "$LOGLIB"'
b = dump(items(log[0]))
assert b.index("SUMMARY-BY-HAND") < b.index("\"c12\"") and "\"c1\"" not in b
'
}

@test "xg-run --compact on a conversation that fits says so and sends nothing" {
	serve openai-chat <<-'EOF'
	{"text": "short"}
	EOF
	xgrun "short one"
	conv=$(recs run_start | jq -r .conversation)
	run_split xg-run --compact --conversation "$conv"
	assert_success
	[[ "$(recs notice | jq -r .text)" == "nothing to compact"* ]]
	[ -z "$(recs compaction)" ]
	fake_log 'assert len(log) == 1'
	run_split xg-run --compact --conversation no-such-conv
	[ "$status" -eq 65 ]
	[ "$(end_field .status)" = failed ]
	run_split xg-run --compact
	[ "$status" -eq 2 ]
	run_split xg-run --compact --conversation "$conv" "a request"
	[ "$status" -eq 2 ]
	run_split xg compact no-such-conv
	[ "$status" -eq 65 ]
}

# serve_compacting STEP...: serves, in openai-chat with the tiny window,
# five reads and a sixth reporting an input past the threshold, so the
# seventh request is the summary's; then the STEPs.
serve_compacting() {
	{
		for i in 1 2 3 4 5; do read_step "f$i" 5000; done
		read_step f6 7600
		printf '%s\n' "$@"
	} >script.ndjson
	serve openai-chat <script.ndjson
	small_catalog openai-chat 8000 1000
}

@test "a summary request cut off is retried for compaction, and only the whole summary is kept" {
	serve_compacting '{"text": "SUMMARY-HALF", "finish_reason": false}' \
		'{"text": "SUMMARY-WHOLE", "usage": {"input": 4000, "cached_input": 3000, "output": 30}}' \
		'{"text": "done"}'
	XG_RETRY="base=1,cap=5" xgrun "compact once"
	assert_success
	[ "$(recs retry | jq -c '[.for, .reason, .partial]')" = '["compaction","truncated",true]' ]
	conv=$(recs run_start | jq -r .conversation)
	[ "$(jq -r 'select(.type == "compaction") | .summary' "$CONVS/$conv.jsonl")" = SUMMARY-WHOLE ]
	recs compaction | jq -e '.summary_bytes == 13'
	# The usage of the attempt that went through counts, once, in the run's.
	[ "$(recs usage | jq -c 'select(.for == "compaction") | [.input, .cached_input, .output]')" = '[4000,3000,30]' ]
	recs run_end | jq -e '.usage.cached_input == 3000'
	fake_log "$LOGLIB"'
assert len(log) == 9, len(log)
assert [i for i, r in enumerate(log) if is_summary_request(r)] == [6, 7]
b = dump(items(log[8]))
assert "SUMMARY-WHOLE" in b and "SUMMARY-HALF" not in b
'
}

@test "a summary request that fails, or brings no summary, fails the run naming compaction" {
	for how in error empty; do
		case $how in
		error) summary='{"status": 500, "body": {"error": {"message": "boom", "type": "server_error"}}}' ;;
		empty) summary='{"text": "  \n ", "usage": {"input": 4000, "output": 3}}' ;;
		esac
		serve_compacting "$summary" '{"text": "never asked"}'
		XG_RETRY=off xgrun "compact and fail"
		assert_failure 69
		[ "$(end_field .status)" = failed ]
		[ "$(end_field .exit)" = 69 ]
		[ -z "$(recs compaction)" ]
		case $how in
		error) [ "$(end_field .reason)" = "compaction: provider 'fake' (127.0.0.1:$FAKE_PORT): server: HTTP 500: boom" ]
		       [ "$(end_field .provider_error)" = server ] ;;
		empty) [ "$(end_field .reason)" = "compaction: the model's reply held no summary" ]
		       [ "$(end_field .provider_error)" = null ]
		       [ "$(recs usage | jq -c 'select(.for == "compaction") | .input')" = 4000 ] ;;
		esac
		fake_log 'assert len(log) == 7, len(log)'
		conv=$(recs run_start | jq -r .conversation)
		[ -z "$(jq -c 'select(.type == "compaction")' "$CONVS/$conv.jsonl")" ]
	done
}

@test "a summary streamed slower than the reply window, never silent for it, does not stall the run" {
	serve_compacting '{"text": "SUMMARY-SLOWLY-STREAMED", "chunk": 3, "delay_ms": 500}' '{"text": "done"}'
	SECONDS=0
	XG_STALL=reply=2s,beat=10m xgrun "compact slowly"
	assert_success
	# Eight events half a second apart: longer than the window in all.
	[ "$SECONDS" -ge 3 ]
	[ "$(end_field .status)" = completed ]
	recs compaction | jq -e '.summary_bytes == 23'
}

@test "a silent summary request stalls the run, and nothing is compacted" {
	serve_compacting '{"text": "never seen", "stall": 60, "stall_after": 0}' '{"text": "never asked"}'
	SECONDS=0
	XG_STALL=reply=1s,beat=10m xgrun "compact into silence"
	assert_failure 1
	[ "$SECONDS" -lt 30 ]
	[ "$(end_field .status)" = interrupted ]
	[ "$(end_field .stop)" = stalled ]
	end_field .reason | grep -q 'nothing from the run for 1 s'
	[ -z "$(recs compaction)" ]
	[ -z "$(recs retry)" ]
	fake_log 'assert len(log) == 7, len(log)'
}

@test "a summary request during which the rest of the input proves bad stops, and nothing is compacted" {
	serve openai-chat <<-'EOF'
	{"text": "noted"}
	EOF
	xgrun "$(head -c 30000 /dev/zero | tr '\0' 'w')"
	assert_success
	conv=$(recs run_start | jq -r .conversation)
	# Resumed with the tiny window, the history compacts before the first
	# request: the summary request's first event is where the rest of the
	# input is joined, and its bad line fails the run, which stops the
	# request there, not nine seconds later at the reply's end.
	serve openai-chat <<-'EOF'
	{"text": "SUMMARY-NEVER-KEPT", "chunk": 3, "delay_ms": 1500}
	{"text": "never asked"}
	EOF
	small_catalog openai-chat 8000 1000
	run_split xg-run --conversation "$conv" <<-'EOF'
	{"type":"request","text":"go on"}
	{"type":"model","id":"fake/m","provider":"fake"}
	{"type":"pack","mode":"normal","system":"x"}
	not a record
	EOF
	[ "$status" -eq 65 ]
	[ "$(end_field .status)" = failed ]
	[ "$(end_field .ms)" -lt 4000 ]
	[[ "$(end_field .reason)" == "standard input: line 4: not JSON: "* ]]
	[ -z "$(recs compaction)" ]
	[ "$(end_field .reply)" = null ]
	fake_log "$LOGLIB"'
assert len(log) == 1 and "Summarise the conversation so far" in dump(items(log[0])), len(log)
'
	[ "$(jq -c 'select(.type == "compaction")' "$CONVS/$conv.jsonl")" = "" ]
}
