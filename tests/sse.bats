#!/usr/bin/env bats
# The SSE parser (lib/provider/sse.c) on hand-made streams; the recorded
# provider streams are replayed in provider.bats.

load lib/helper

sse_events() {
	printf "$1" >"$BATS_TEST_TMPDIR/in.sse"
	run xg-test sse events ${2:+--max "$2"} "$BATS_TEST_TMPDIR/in.sse"
}

@test "the framing fixture gives the events the WHATWG rules give" {
	run xg-test sse events "$FIXTURES/wire/sse-framing-edgecases.sse"
	assert_success
	python3 -c "import json,sys
got = json.loads(sys.argv[1])
want = json.load(open(sys.argv[2]))
assert got['events'] == want['expected_events'], got
assert got['tail'] is True" "$output" "$FIXTURES/wire/sse-framing-edgecases.expect.json"
}

@test "LF, CRLF and CR line endings give the same events" {
	sse_events 'event: a\ndata: 1\ndata: 2\n\ndata: 3\n\n'
	lf=$output
	sse_events 'event: a\r\ndata: 1\r\ndata: 2\r\n\r\ndata: 3\r\n\r\n'
	[ "$output" = "$lf" ]
	sse_events 'event: a\rdata: 1\rdata: 2\r\rdata: 3\r\r'
	[ "$output" = "$lf" ]
	assert_output '{"events":[{"event":"a","data":"1\n2","id":null},{"event":null,"data":"3","id":null}],"tail":false}'
}

@test "a BOM is skipped at the start of the stream only" {
	sse_events '\357\273\277data: a\n\n\357\273\277data: b\n\ndata: c\n\n'
	assert_output '{"events":[{"event":null,"data":"a","id":null},{"event":null,"data":"c","id":null}],"tail":false}'
}

@test "comments, unknown fields and events without data are not dispatched" {
	sse_events ': hello\nfoo: bar\n\nevent: lonely\n\ndata\n\ndata:x\n\n'
	assert_output '{"events":[{"event":null,"data":"","id":null},{"event":null,"data":"x","id":null}],"tail":false}'
}

@test "the last event id carries over to later events" {
	sse_events 'id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n'
	assert_output '{"events":[{"event":null,"data":"a","id":"7"},{"event":null,"data":"b","id":"7"},{"event":null,"data":"c","id":""}],"tail":false}'
}

@test "an unterminated last event is dropped" {
	sse_events 'data: a\n\ndata: b\n'
	assert_output '{"events":[{"event":null,"data":"a","id":null}],"tail":true}'
}

@test "an event larger than the ceiling is an error, a smaller one is not" {
	big=$(head -c 3000 /dev/zero | tr '\0' x)
	sse_events "data: $big\n\ndata: after\n\n" 2048
	assert_failure
	assert_output --partial '"error":"event larger than 2048 bytes"'
	refute_output --partial after
	sse_events "data: $big\n\ndata: after\n\n" 4096
	assert_success
	assert_output --partial '"data":"after"'
	# Many data lines, each small, add up to the ceiling too.
	sse_events "$(for i in $(seq 1 40); do printf 'data: %s\\n' "${big:0:100}"; done)\n" 2048
	assert_failure
	assert_output --partial 'event larger than 2048 bytes'
	# So does a line that never ends.
	sse_events "data: $big" 2048
	assert_failure
}

# Writes a stream of one wire kind to stdout whose events are each n bytes
# or so, and whose pieces add up past them:
#   grow_stream KIND WHAT PIECE-BYTES PIECES
# WHAT is args, reasoning or signature.  (A field that comes whole in one
# event, such as a redacted thinking block's data, meets the event's own
# ceiling first.)
grow_stream() {
	python3 - "$@" <<'PY'
import json, sys
kind, what, size, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
piece = "x" * size
def ev(obj, name=None):
    head = "event: %s\n" % name if name else ""
    sys.stdout.write(head + "data: " + json.dumps(obj) + "\n\n")
if kind == "openai-chat":
    ev({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a":"'}}]}}]})
    for _ in range(count):
        ev({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}}]})
    ev({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}}]})
    ev({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    sys.stdout.write("data: [DONE]\n\n")
elif kind == "openai-responses":
    if what == "args":
        ev({"type": "response.output_item.added", "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""}})
        for _ in range(count):
            ev({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": piece})
        ev({"type": "response.output_item.done", "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f"}})
    else:
        for _ in range(count):
            ev({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "delta": piece})
        ev({"type": "response.output_item.done", "item": {"type": "reasoning", "id": "rs_1"}})
    ev({"type": "response.completed", "response": {"status": "completed"}})
else:
    ev({"type": "message_start", "message": {"usage": {"input_tokens": 1, "output_tokens": 1}}}, "message_start")
    block = {"args": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
             "reasoning": {"type": "thinking", "thinking": ""},
             "signature": {"type": "thinking", "thinking": "hm"}}[what]
    ev({"type": "content_block_start", "index": 0, "content_block": block}, "content_block_start")
    delta = {"args": {"type": "input_json_delta", "partial_json": piece},
             "reasoning": {"type": "thinking_delta", "thinking": piece},
             "signature": {"type": "signature_delta", "signature": piece}}[what]
    for _ in range(count):
        ev({"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta")
    ev({"type": "content_block_stop", "index": 0}, "content_block_stop")
    ev({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}, "message_delta")
    ev({"type": "message_stop"}, "message_stop")
PY
}

@test "tool arguments and thinking that grow past the ceiling fail the stream, not transient, in every wire kind" {
	while read -r kind what label; do
		grow_stream "$kind" "$what" 1000 3 >"$BATS_TEST_TMPDIR/s.sse"
		run xg-test sse decode --max 2048 "$kind" "$BATS_TEST_TMPDIR/s.sse"
		echo "case: $kind $what"
		[ "$status" -eq 69 ]
		assert_line --partial '"class":"protocol"'
		assert_line --partial '"transient":false'
		assert_line --partial "provider stream: $label larger than 2048 bytes"
		refute_output --partial '"type":"tool_call"'
		refute_output --partial '"type":"reasoning_block"'
		refute_output --partial '"type":"finish"'
		# Under the ceiling the same stream decodes whole.
		run xg-test sse decode --max 8192 "$kind" "$BATS_TEST_TMPDIR/s.sse"
		assert_success
		assert_line --partial '"type":"finish"'
	done <<'CASES'
openai-chat args tool call arguments
openai-responses args tool call arguments
openai-responses reasoning reasoning
anthropic-messages args tool call arguments
anthropic-messages reasoning a thinking block
anthropic-messages signature a thinking signature
CASES
}
