#!/usr/bin/env bats
# What issue 17 left for xg-run and its readers: a damaged line in the
# middle of a conversation gets a notice, an SSE event over its ceiling is
# exit 65 (xg(7), a reply too large), and wrong-typed fields of the model
# record name the field.  Against the loopback fake provider.

load lib/helper
load lib/fake-provider
load lib/xg-run

setup() {
	xg_run_setup
}

teardown() {
	fake_provider_stop
}

@test "a damaged line in the middle of a conversation is skipped with a notice naming it" {
	serve openai-chat <<-'EOF2'
	{"text": "first answer"}
	{"text": "second answer"}
	EOF2
	xgrun --conversation c1 "first question"
	assert_success
	[ -z "$(recs notice)" ]
	# A torn append that a later one followed: a line that is not JSON.
	lines_before=$(wc -l <"$CONVS/c1.jsonl")
	printf '{"type":"message","role":"user","te\n' >>"$CONVS/c1.jsonl"
	echo '{"type":"message","role":"user","text":"typed later","at":"2026-12-01T00:00:00.000Z"}' >>"$CONVS/c1.jsonl"
	xgrun --conversation c1 "second question"
	assert_success
	assert_equal "$(recs notice | jq -r .text)" \
		"line $((lines_before + 1)) of conversation c1 is not a JSON object (a damaged entry); it is skipped"
	[[ "$stderr" == *"line $((lines_before + 1)) of conversation c1"* ]]
	# The rest of the history went out whole.
	fake_log 'm = log[1]["body"]["messages"]; t = [x.get("content") for x in m]; assert "first answer" in str(t) and "typed later" in str(t), t'
}

@test "two damaged lines are counted, the first named; a clean conversation has no notice" {
	serve openai-chat <<-'EOF2'
	{"text": "a"}
	{"text": "b"}
	{"text": "c"}
	EOF2
	xgrun --conversation c2 "one"
	assert_success
	n=$(wc -l <"$CONVS/c2.jsonl")
	printf 'not json\n[1, 2]\n' >>"$CONVS/c2.jsonl"
	xgrun --conversation c2 "two"
	assert_success
	assert_equal "$(recs notice | jq -r .text)" \
		"2 lines of conversation c2, the first line $((n + 1)), are not JSON objects (damaged entries); they are skipped"
	sed -i '/^not json$/d; /^\[1, 2\]$/d' "$CONVS/c2.jsonl"
	xgrun --conversation c2 "three"
	assert_success
	[ -z "$(recs notice)" ]
}

@test "an SSE event over 16 MiB ends the run with 69, the provider's, saying so, and is not retried" {
	python3 - "$BATS_TEST_TMPDIR/big.sse" <<-'PY'
	import json, sys
	piece = "x" * (17 << 20)
	with open(sys.argv[1], "w") as f:
	    f.write("data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": piece}}]}) + "\n\n")
	    f.write("data: [DONE]\n\n")
	PY
	serve openai-chat <<-EOF2
	{"raw_file": "$BATS_TEST_TMPDIR/big.sse"}
	EOF2
	xgrun "say a lot"
	assert_failure 69
	[ "$(end_field .status)" = failed ]
	[[ "$(end_field .reason)" == *"larger than $((16 << 20)) bytes"* ]] || fail "reason: $(end_field .reason)"
	[ -z "$(recs retry)" ]
	fake_log 'assert len(log) == 1, len(log)'
}

@test "a model record whose id or provider is not a string is exit 65 naming the field" {
	serve openai-chat </dev/null
	for field in id provider; do
		rec=$(jq -cn --arg f "$field" '{type: "model", provider: "fake", id: "fake/m", effort: null, source: "flag"} | .[$f] = 7')
		run_split xg-run <<<"{\"type\":\"request\",\"text\":\"x\"}
$rec"
		assert_failure 65
		[[ "$stderr" == *"field '$field' of the model record is a number, not a string"* ]] ||
			fail "$field: $stderr"
		[[ "$stderr" != *"no model to run on"* ]]
	done
	fake_log 'assert len(log) == 0'
}

@test "xg-choices start names the request's line in each error about it" {
	mkdir -p "$XG_HOME/config"
	notice='{"type":"notice","from":"t","text":"first"}'
	for req in '{"type":"request","text":"x","mode":"BAD"}|65|request on line 2: '"'BAD'"' is not a mode name' \
		'{"type":"request","text":"x","conversation":"../x"}|65|request on line 2: '"'../x'"' is not a conversation id' \
		'{"type":"request","text":"x","account":"../x"}|65|(request.account on line 2) is not an account name' \
		'{"type":"request","text":"x","account":5}|65|request on line 2: '"'account'"' must be a string' \
		'{"type":"request","text":"x","model":"nope/none"}|78|request on line 2: cannot start on nope/none'; do
		input=${req%%|*}
		rest=${req#*|}
		code=${rest%%|*}
		want=${rest#*|}
		run_split xg-choices start <<<"$notice
$input"
		assert_failure "$code"
		[[ "$stderr" == *"$want"* ]] || fail "for $input: $stderr"
	done
}

@test "a record line holding a NUL byte is exit 65 naming the line and the byte (make fuzz found libjq leak on it)" {
	printf '{"type":"notice","from":"t","text":"first"}\n{\0""\n' >in.ndjson
	run_split xg-choices start <in.ndjson
	assert_failure 65
	assert_equal "$stderr" "xg-choices: standard input: line 2: not JSON: a NUL byte at byte 2, which JSON text cannot hold"
	mkdir -p "$CONVS"
	printf '%s\n' '{"type":"conversation","schema":"xg/1","id":"c3","created":"2026-12-01T00:00:00.000Z","cwd":"/"}' >"$CONVS/c3.jsonl"
	printf '{\0""\n' >>"$CONVS/c3.jsonl"
	run_split xg-test lib conv-scan c3
	assert_success
	[ "${#lines[@]}" = 1 ]
}
