#!/usr/bin/env bats
# The SSE parser (lib/provider/sse.c) on hand-made streams; the recorded
# provider streams are replayed in provider.bats.

load helper

sse_events() {
	printf "$1" >"$BATS_TEST_TMPDIR/in.sse"
	run xg-test-sse events ${2:+--max "$2"} "$BATS_TEST_TMPDIR/in.sse"
}

@test "the framing fixture gives the events the WHATWG rules give" {
	run xg-test-sse events "$FIXTURES/wire/sse-framing-edgecases.sse"
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
