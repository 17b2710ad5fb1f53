#!/usr/bin/env bats
# xg-fake-provider, the scripted model people test their own automation
# with: its options, the script read again when it changes, each wire
# kind's text, tool call, error and delay steps as xg-run takes them, the
# request log, and the idle exit only when asked.

load lib/helper
load lib/fake-provider
load lib/xg-run

setup() {
	exec </dev/null
	xg_run_setup
	PIDS=()
}

teardown() {
	fake_provider_stop
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}

# A TCP port of 127.0.0.1 that was free a moment ago.
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# start ARG...: xg-fake-provider in the background, $pid its process id.
start() {
	xg-fake-provider "$@" </dev/null >server.out 2>&1 3>&- &
	pid=$!
	PIDS+=("$pid")
}

# wait_for FILE: until FILE is there and not empty (10 s at most).
wait_for() {
	local i
	for i in $(seq 1 200); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	fail "no $1: $(cat server.out)"
}

# The path a wire kind posts to.
path_of() {
	case $1 in
	openai-chat) echo chat/completions ;;
	openai-responses) echo responses ;;
	anthropic-messages) echo messages ;;
	esac
}

# http METHOD URL [BODY]: the status on the first line, then the body; a
# connection refused is status 0.  The key is $FAKE_PROVIDER_KEY.
http() {
	python3 - "$@" <<-'EOF'
	import os, sys, urllib.request, urllib.error
	method, url = sys.argv[1:3]
	data = sys.argv[3].encode() if len(sys.argv) > 3 else None
	headers = {"content-type": "application/json"}
	if os.environ.get("FAKE_PROVIDER_KEY"):
	    headers["authorization"] = "Bearer " + os.environ["FAKE_PROVIDER_KEY"]
	req = urllib.request.Request(url, data=data, method=method, headers=headers)
	try:
	    with urllib.request.urlopen(req, timeout=10) as r:
	        status, body = r.status, r.read()
	except urllib.error.HTTPError as e:
	    status, body = e.code, e.read()
	except OSError:
	    status, body = 0, b""
	print(status)
	print(body.decode())
	EOF
}

@test "--port listens on the port given, and --port-file says it" {
	printf '{"text": "Hi."}\n' >s.ndjson
	port=$(free_port)
	start --script s.ndjson --port "$port" --port-file port --models /dev/null
	# /dev/null is not JSON: exit 65 before listening.
	wait "$pid" || st=$?
	assert_equal "$st" 65
	grep -q "^xg-fake-provider: --models: " server.out || fail "$(cat server.out)"
	printf '["m1", "m2"]\n' >models.json
	start --script s.ndjson --port "$port" --port-file port --models models.json
	wait_for port
	assert_equal "$(cat port)" "$port"
	run http GET "http://127.0.0.1:$port/v1/models"
	assert_line --index 0 200
	assert_equal "$(sed 1d <<<"$output" | jq -r '.data[].id' | paste -sd, -)" m1,m2
	# A fixed port alone is enough to be told nothing: no port file needed.
	kill "$pid"
	wait "$pid" || true
	start --script s.ndjson --port "$port"
	for i in $(seq 1 100); do
		[ "$(http GET "http://127.0.0.1:$port/v1/models" | head -n 1)" = 200 ] && break
		sleep 0.05
	done
	run http POST "http://127.0.0.1:$port/v1/chat/completions" '{"model": "m", "stream": true}'
	assert_line --index 0 200
	assert_output --partial '"content": "Hi."'
	# A port another server holds is exit 74, naming it.
	run_split xg-fake-provider --script s.ndjson --port "$port"
	assert_equal "$status" 74
	assert_regex "$stderr" "^xg-fake-provider: cannot listen on 127\\.0\\.0\\.1:$port: "
}

@test "bad usage is exit 2 with the usage; a missing or broken script is 66 or 65, naming the line" {
	printf '{"text": "Hi."}\n' >s.ndjson
	for args in "" "--port-file p" "--script s.ndjson" "--script s.ndjson --port 70000" \
		"--script s.ndjson --port-file p --idle-exit 0" "--script s.ndjson --port-file p extra" \
		"--script"; do
		# shellcheck disable=SC2086
		run_split xg-fake-provider $args
		[ "$status" -eq 2 ] || fail "'$args' exited $status: $stderr"
		assert_regex "$stderr" $'^xg-fake-provider: [^\n]+\nusage: xg-fake-provider --script file '
	done
	run_split xg-fake-provider --script nowhere.ndjson --port-file p
	assert_equal "$status" 66
	assert_equal "$stderr" "xg-fake-provider: --script: no such file: 'nowhere.ndjson'"
	printf '{"text": "Hi."}\n\n{"text": oops}\n' >bad.ndjson
	run_split xg-fake-provider --script bad.ndjson --port-file p
	assert_equal "$status" 65
	assert_regex "$stderr" "^xg-fake-provider: --script: bad\\.ndjson:3: not JSON"
	printf '["text"]\n' >bad.ndjson
	run_split xg-fake-provider --script bad.ndjson --port-file p
	assert_equal "$status" 65
	assert_equal "$stderr" "xg-fake-provider: --script: bad.ndjson:1: a step is a JSON object"
	[ ! -e p ] || fail "a port file was written"
	run xg-fake-provider --help
	assert_success
	assert_line --regexp '^      --models file +a file of JSON: the models GET \.\.\./v1/models lists$'
	refute_output --partial "JSON array"
}

@test "the script is read again when it changes, replaced or rewritten, and starts over" {
	fake_provider_start <<-'EOF'
	{"text": "first one"}
	{"text": "never served"}
	EOF
	fake_catalog openai-chat
	script="$BATS_TEST_TMPDIR/fake/script.ndjson"
	xgrun 'one'
	assert_equal "$(end_field .reply)" "first one"
	# Replaced by a rename, as a test should write it.
	printf '{"text": "second script"}\n{"text": "and its second step"}\n' >"$script.tmp"
	mv "$script.tmp" "$script"
	xgrun 'two'
	assert_equal "$(end_field .reply)" "second script"
	xgrun 'three'
	assert_equal "$(end_field .reply)" "and its second step"
	# Rewritten in place, the same size: the modification time tells.
	printf '{"text": "third script"}\n' >"$script"
	xgrun 'four'
	assert_equal "$(end_field .reply)" "third script"
	# Broken: a 500 naming the line, until it is fixed.
	printf '{"text": "ok"}\n{"text": \n' >"$script.tmp"
	mv "$script.tmp" "$script"
	run http POST "$FAKE_URL/chat/completions" '{"model": "m"}'
	assert_line --index 0 500
	assert_output --partial "xg-fake-provider: $script:2: not JSON"
	printf '{"text": "mended"}\n' >"$script.tmp"
	mv "$script.tmp" "$script"
	xgrun 'five'
	assert_equal "$(end_field .reply)" "mended"
	# Used up: a 418.
	run http POST "$FAKE_URL/chat/completions" '{"model": "m"}'
	assert_line --index 0 418
	assert_output --partial "the script is used up"
	assert_equal "$(fake_log 'print(" ".join(str(r["step"]) for r in log))')" "1 1 2 1 None 1 None"
}

@test "each wire kind: a text step, a tool call step, then the reply" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"text": "Looking.", "tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "echo from-the-tool"}}]}
		{"text": "The tool said from-the-tool.", "usage": {"input": 30, "output": 6}}
		EOF
		xgrun 'what does the tool say'
		[ "$status" -eq 0 ] || fail "$kind: exit $status: $stderr"
		assert_equal "$(recs tool_result | jq -r '[.name, .output] | join(" ")')" "bash from-the-tool"
		assert_equal "$(end_field .reply)" "The tool said from-the-tool."
		assert_equal "$(end_field .usage.output)" 11
		# The second request carried the tool's result back.
		fake_log 'print(len(log), log[0]["kind"], log[1]["kind"])' >got
		assert_equal "$(cat got)" "2 $kind $kind"
		grep -q from-the-tool <<<"$(fake_log 'import json; print(json.dumps(log[1]["body"]))')" ||
			fail "$kind: the tool's output is not in the second request"
	done
}

@test "each wire kind: an error step is its status and message, in the kind's own form" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"status": 401, "message": "this key is not known here"}
		{"status": 400, "message": "the request is wrong", "repeat": 2}
		EOF
		xgrun 'hello'
		[ "$status" -eq 77 ] || fail "$kind: exit $status, not 77: $stderr"
		assert_equal "$(end_field .provider_error)" auth
		assert_regex "$(end_field .reason)" "HTTP 401: this key is not known here"
		path=$(path_of "$kind")
		run http POST "$FAKE_URL/$path" '{"model": "m"}'
		assert_line --index 0 400
		body=$(sed 1d <<<"$output")
		if [ "$kind" = anthropic-messages ]; then
			assert_equal "$(jq -c . <<<"$body")" \
				'{"type":"error","error":{"type":"invalid_request_error","message":"the request is wrong"}}'
		else
			assert_equal "$(jq -c .error <<<"$body")" \
				'{"message":"the request is wrong","type":"invalid_request_error","code":null}'
		fi
		# A body of the script's own is sent as it is.
		printf '{"status": 503, "body": "down for a while", "content_type": "text/plain"}\n' \
			>"$BATS_TEST_TMPDIR/fake/script.ndjson"
		run http POST "$FAKE_URL/$path" '{"model": "m"}'
		assert_equal "$output" $'503\ndown for a while'
	done
}

@test "each wire kind: wait_ms holds the answer back, delay_ms spaces the events" {
	for kind in $KINDS; do
		serve "$kind" <<-'EOF'
		{"text": "late", "wait_ms": 700}
		{"text": "slowly, in pieces", "chunk": 4, "delay_ms": 60}
		{"status": 429, "wait_ms": 400, "message": "later"}
		EOF
		start_ns=$(date +%s%N)
		xgrun 'one'
		took=$((($(date +%s%N) - start_ns) / 1000000))
		assert_equal "$(end_field .reply)" late
		[ "$took" -ge 700 ] || fail "$kind: the late reply came after $took ms"
		start_ns=$(date +%s%N)
		xgrun 'two'
		took=$((($(date +%s%N) - start_ns) / 1000000))
		assert_equal "$(end_field .reply)" "slowly, in pieces"
		# Five text pieces and the events around them, 60 ms apart.
		[ "$took" -ge 300 ] || fail "$kind: the slow reply took $took ms"
		start_ns=$(date +%s%N)
		run http POST "$FAKE_URL/$(path_of "$kind")" '{"model": "m"}'
		took=$((($(date +%s%N) - start_ns) / 1000000))
		assert_line --index 0 429
		[ "$took" -ge 400 ] || fail "$kind: the error came after $took ms"
	done
}

@test "the request log: one line a request, its step, the body, and no key" {
	export FAKE_PROVIDER_KEY=sk-the-right-key-77
	fake_provider_start <<-'EOF'
	{"text": "Hello."}
	EOF
	fake_catalog anthropic-messages
	export XG_TEST_KEY=sk-a-wrong-key-88
	xgrun 'first'
	assert_equal "$status" 77
	export XG_TEST_KEY=sk-the-right-key-77
	xgrun 'second'
	assert_success
	assert_equal "$(end_field .reply)" Hello.
	run fake_log 'for r in log: print(r["n"], r["method"], r["path"], r["kind"], r["auth"], r["step"],
      r["body"]["model"], r["body"]["messages"][-1]["content"][-1]["text"], r["headers"]["x-api-key"])'
	assert_output $'1 POST /v1/messages anthropic-messages wrong None m first <redacted>\n2 POST /v1/messages anthropic-messages ok 1 m second <redacted>'
	run grep -c 'sk-the-right-key-77\|sk-a-wrong-key-88' "$FAKE_LOG"
	assert_output 0
	fake_log 'import time; assert all(abs(time.time() - r["t"]) < 60 for r in log)'
}

# A GET of .../v1/models on PORT from bash itself, at once: its status.
get_models() {
	local line
	exec 5<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&5
	read -r _ line _ <&5
	exec 5<&-
	echo "$line"
}

@test "it runs until killed, and exits 0 after --idle-exit seconds only when asked" {
	unset FAKE_PROVIDER_KEY
	printf '{"text": "Hi."}\n' >s.ndjson
	start --script s.ndjson --port-file p1
	never=$pid
	start --script s.ndjson --port-file p2 --idle-exit 3
	idle=$pid
	wait_for p1
	wait_for p2
	# A request puts the idle exit off: it comes 3 s after the last one.
	asked=$(date +%s%N)
	assert_equal "$(get_models "$(cat p2)")" 200
	for i in $(seq 1 300); do
		kill -0 "$idle" 2>/dev/null || break
		sleep 0.1
	done
	ended=$(date +%s%N)
	wait "$idle" && st=0 || st=$?
	assert_equal "$st" 0
	[ $(((ended - asked) / 1000000)) -ge 3000 ] || fail "it exited $(((ended - asked) / 1000000)) ms after a request"
	# The other, started at the same time and never asked, is still there.
	kill -0 "$never" || fail "without --idle-exit it exited"
	assert_equal "$(get_models "$(cat p1)")" 200
	# Killed, it dies of the signal.
	kill -TERM "$never"
	wait "$never" && st=0 || st=$?
	assert_equal "$st" 143
}
