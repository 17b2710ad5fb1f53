#!/usr/bin/env bats
# lib/provider against recorded streams and the loopback fake provider.
# Timings here are generous on purpose: nothing asserts how fast anything is
# (bench/provider.sh measures that).

load lib/helper
load lib/fake-provider

setup() {
	REQ="$FIXTURES/provider/request.json"
	unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy no_proxy NO_PROXY
	unset FAKE_PROVIDER_KEY
	export XG_TEST_KEY=sk-test-key
	# Tiny waits, so retries take milliseconds.
	export XG_RETRY=base=1,cap=20
}

teardown() {
	fake_provider_stop
}

simple() {
	printf '{"model":"m","messages":[{"role":"user","text":"%s"}]}\n' "${1:-hi}"
}

# Prints the field of every event of a type, one a line: events TYPE FIELD
events() {
	python3 -c "import json,sys
for l in sys.stdin:
    e = json.loads(l)
    if e['type'] == '$1':
        v = e.get('$2')
        print(v if isinstance(v, str) else json.dumps(v, sort_keys=True))"
}

text_of() {
	python3 -c "import json,sys
print(''.join(json.loads(l)['text'] for l in sys.stdin if json.loads(l)['type'] == 'text'))"
}

@test "every recorded stream decodes the same whole, byte by byte and split at every offset" {
	run xg-test sse check "$FIXTURES"/wire/*.sse
	assert_success
	refute_output --partial FAIL
	n=$(ls "$FIXTURES"/wire/*.sse | wc -l)
	[ "$(grep -c '^ok ' <<<"$output")" -eq "$n" ]
	[ "$n" -ge 22 ]
}

@test "the replay check fails when a stream decodes to something else than its expectation" {
	cp "$FIXTURES/wire/openai-chat-toolcalls.sse" "$BATS_TEST_TMPDIR/openai-chat-x.sse"
	sed 's/"Paris"/"Lyon"/' "$FIXTURES/wire/openai-chat-toolcalls.expect.json" \
		>"$BATS_TEST_TMPDIR/openai-chat-x.expect.json"
	run xg-test sse check "$BATS_TEST_TMPDIR/openai-chat-x.sse"
	assert_failure
	assert_output --partial 'FAIL'
	assert_output --partial '"city":"Lyon"'
}

@test "each wire kind encodes a request as its snapshot" {
	for kind in openai-chat openai-responses anthropic-messages; do
		run xg-test provider --encode "$kind" http://127.0.0.1:9/v1 <"$REQ"
		assert_success
		diff -u "$FIXTURES/provider/encode-$kind.json" \
			<(python3 -m json.tool --sort-keys <<<"$output")
	done
	for dialect in openai openrouter; do
		run xg-test provider --encode --dialect "$dialect" openai-chat http://127.0.0.1:9/v1 <"$REQ"
		assert_success
		diff -u "$FIXTURES/provider/encode-openai-chat-$dialect.json" \
			<(python3 -m json.tool --sort-keys <<<"$output")
	done
}

@test "what goes on the wire is the encoded request, with the key in a header only" {
	for kind in openai-chat openai-responses anthropic-messages; do
		fake_provider_start <<<'{"text":"ok"}'
		run xg-test provider "$kind" "$FAKE_URL" <"$REQ"
		assert_success
		fake_log 'print(json.dumps(log[0]["body"], sort_keys=True, indent=4))' >"$BATS_TEST_TMPDIR/sent.json"
		diff -u "$FIXTURES/provider/encode-$kind.json" "$BATS_TEST_TMPDIR/sent.json"
		! grep -q sk-test-key "$FAKE_LOG"
		fake_provider_stop
	done
}

@test "requests carry xg's user agent, ask for an event stream and do not wait for 100-continue" {
	fake_provider_start <<<'{"text":"ok"}'
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	assert_success
	run fake_log 'h = log[0]["headers"]; print(h["user-agent"], h["accept"], "expect" in h, h["authorization"])'
	assert_output "xg/0.1.0 text/event-stream False <redacted>"
	run fake_log 'print(log[0]["path"])'
	assert_output /v1/chat/completions
}

@test "the Anthropic kind sends its version header and the key as x-api-key" {
	export FAKE_PROVIDER_KEY=sk-test-key
	fake_provider_start <<<'{"text":"ok"}'
	run xg-test provider anthropic-messages "$FAKE_URL" < <(simple)
	assert_success
	run fake_log 'h = log[0]["headers"]; print(h["anthropic-version"], h["x-api-key"], "authorization" in h, log[0]["auth"])'
	assert_output "2023-06-01 <redacted> False ok"
}

@test "text streams end to end in each wire kind with usage and finish" {
	for kind in openai-chat openai-responses anthropic-messages; do
		fake_provider_start <<<'{"text":"Hello there, world — ünïcode ok","chunk":3,"usage":{"input":120,"cached_input":100,"output":7,"reasoning":2}}'
		run xg-test provider "$kind" "$FAKE_URL" < <(simple)
		assert_success
		[ "$(text_of <<<"$output")" = "Hello there, world — ünïcode ok" ]
		[ "$(grep -c '"type":"text"' <<<"$output")" -ge 5 ]
		[ "$(events finish reason <<<"$output")" = stop ]
		[ "$(tail -n 1 <<<"$output")" = '{"type":"finish","reason":"stop"}' ]
		run python3 -c "import json,sys
u = [json.loads(l) for l in sys.argv[1].splitlines() if json.loads(l)['type'] == 'usage'][0]
print(u['input'], u['cached_input'], u['output'])" "$output"
		assert_output "120 100 7"
		fake_provider_stop
	done
}

@test "parallel tool calls arrive whole with parsed arguments in each wire kind" {
	calls='[{"id":"call_a1","name":"bash","args":{"cmd":"ls -l","n":[1,2]}},{"id":"call_b2","name":"read","args":{"path":"ä/b.txt"}}]'
	for kind in openai-chat openai-responses anthropic-messages; do
		fake_provider_start <<<"{\"text\":\"Two calls.\",\"tool_calls\":$calls,\"chunk\":4}"
		run xg-test provider "$kind" "$FAKE_URL" < <(simple)
		assert_success
		run events tool_call args <<<"$output"
		assert_output "$(printf '%s\n%s' '{"cmd": "ls -l", "n": [1, 2]}' '{"path": "\u00e4/b.txt"}')"
		fake_provider_stop
	done
	for kind in openai-chat openai-responses anthropic-messages; do
		fake_provider_start <<<"{\"tool_calls\":$calls}"
		run xg-test provider "$kind" "$FAKE_URL" < <(simple)
		assert_success
		run events tool_call id <<<"$output"
		assert_output "$(printf 'call_a1\ncall_b2')"
		fake_provider_stop
	done
}

@test "llama.cpp and Ollama streams decode through the chat client" {
	calls='[{"id":"xK9aBcD1234eFgH5678","name":"bash","args":{"cmd":"ls"}},{"id":"yL0","name":"read","args":{"path":"a"}}]'
	for dialect in llama.cpp ollama; do
		fake_provider_start <<<"{\"reasoning\":\"Thinking it over.\",\"text\":\"<b>x</b>\",\"tool_calls\":$calls,\"dialect\":\"$dialect\",\"usage\":{\"input\":50,\"cached_input\":30,\"output\":9}}"
		run xg-test provider --dialect "$dialect" openai-chat "$FAKE_URL" < <(simple)
		assert_success
		[ "$(events reasoning text <<<"$output" | tr -d '\n')" = "Thinking it over." ]
		[ "$(text_of <<<"$output")" = "<b>x</b>" ]
		run events tool_call id <<<"$output"
		assert_output "$(printf 'xK9aBcD1234eFgH5678\nyL0')"
		run fake_log 'b = log[0]["body"]; print("max_tokens" in b or "max_completion_tokens" in b, "prompt_cache_key" in b)'
		assert_output "False False"
		fake_provider_stop
	done
	# llama.cpp's usage comes from its timings object.
	fake_provider_start <<<'{"text":"t","dialect":"llama.cpp","usage":{"input":50,"cached_input":30,"output":9}}'
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	assert_line '{"type":"usage","input":50,"cached_input":30,"cache_write":0,"output":9,"reasoning":0}'
}

@test "a chat stream that ends with [DONE] but no finish_reason is truncated, and retried" {
	fake_provider_start <<<'{"text":"The first half","chunk":5,"finish_reason":false}
{"text":"The whole reply."}'
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	assert_success
	[ "$(events retry reason <<<"$output")" = truncated ]
	[ "$(events retry partial <<<"$output")" = true ]
	[ "$(events retry message <<<"$output")" = "the provider's stream ended with [DONE] but no finish_reason" ]
	# What the first attempt gave is dropped; the second is the reply.
	[ "$(sed -n '/"type":"retry"/,$p' <<<"$output" | tail -n +2 | text_of)" = "The whole reply." ]
	assert_line '{"type":"finish","reason":"stop"}'
	# Past the retries it is a truncated reply, never a finished one, in
	# llama.cpp's dialect too.
	fake_provider_stop
	fake_provider_start <<<'{"text":"half","dialect":"llama.cpp","finish_reason":false,"repeat":3}'
	XG_RETRY=attempts=2,base=1,cap=5 run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	[ "$status" -eq 69 ]
	refute_line --partial '"type":"finish"'
	assert_line --partial '{"type":"error","class":"truncated",'
	run fake_log 'print(len(log))'
	assert_output 3
}

@test "a chat stream without [DONE] is complete once its finish reason came" {
	fake_provider_start <<<'{"text":"fine","done":false}'
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	assert_success
	assert_line '{"type":"finish","reason":"stop"}'
	run fake_log 'print(len(log))'
	assert_output 1
}

@test "an Anthropic thinking block comes back with its signature and is sent back verbatim" {
	fake_provider_start <<<'{"reasoning":"Let me think.","signature":"EqQBsig==","text":"Done."}
{"text":"again"}'
	run xg-test provider anthropic-messages "$FAKE_URL" < <(simple)
	assert_success
	assert_line '{"type":"reasoning_block","text":"Let me think.","signature":"EqQBsig=="}'
	printf '%s\n' '{"model":"m","messages":[{"role":"user","text":"hi"},{"role":"assistant","text":"Done.","reasoning":[{"text":"Let me think.","signature":"EqQBsig=="}]},{"role":"user","text":"more"}]}' >"$BATS_TEST_TMPDIR/req2.json"
	run xg-test provider anthropic-messages "$FAKE_URL" <"$BATS_TEST_TMPDIR/req2.json"
	assert_success
	run fake_log 'print(json.dumps(log[1]["body"]["messages"][1]["content"][0], sort_keys=True))'
	assert_output '{"signature": "EqQBsig==", "thinking": "Let me think.", "type": "thinking"}'
}

@test "a run's second request is the first one plus new messages, byte for byte, cache hints included" {
	for kind in openai-chat openai-responses anthropic-messages; do
		fake_provider_start <<<'{"text":"one"}
{"text":"two"}'
		printf '%s\n' '{"model":"m","system":"S","cache_key":"conv-9","messages":[{"role":"user","text":"first"}]}' >"$BATS_TEST_TMPDIR/r1.json"
		printf '%s\n' '{"model":"m","system":"S","cache_key":"conv-9","messages":[{"role":"user","text":"first"},{"role":"assistant","text":"one"},{"role":"user","text":"second"}]}' >"$BATS_TEST_TMPDIR/r2.json"
		xg-test provider "$kind" "$FAKE_URL" <"$BATS_TEST_TMPDIR/r1.json" >/dev/null
		xg-test provider "$kind" "$FAKE_URL" <"$BATS_TEST_TMPDIR/r2.json" >/dev/null
		run fake_log '
key = "input" if "input" in log[0]["body"] else "messages"
a, b = log[0]["body"], log[1]["body"]
same = all(json.dumps(a[k]) == json.dumps(b[k]) for k in a if k != key) and set(a) == set(b)
print(same and len(a[key]) < len(b[key]) and json.dumps(b[key][:len(a[key])]) == json.dumps(a[key]))'
		assert_output True
		case $kind in
		anthropic-messages)
			# Automatic caching (top level) and the system's stable
			# prefix; no message carries a marker.
			run fake_log 'b = log[1]["body"]; print(b["cache_control"]["type"], b["system"][0]["cache_control"]["type"], "cache_control" in json.dumps(b["messages"]))'
			assert_output "ephemeral ephemeral False" ;;
		openai-responses)
			run fake_log 'print(log[0]["body"]["prompt_cache_key"], log[1]["body"]["prompt_cache_key"])'
			assert_output "conv-9 conv-9" ;;
		esac
		fake_provider_stop
	done
}

@test "a request on a fresh client reuses one connection for all its requests" {
	fake_provider_start <<<'{"text":"same socket","repeat":5}'
	run xg-test provider --stats --repeat 5 openai-responses "$FAKE_URL" < <(simple)
	assert_success
	[ "$(grep -c '"type":"finish"' <<<"$output")" -eq 5 ]
	run events stats new_connections <<<"$output"
	assert_output "$(printf '1\n0\n0\n0\n0')"
	run fake_log 'print(len(log), len({r["conn"] for r in log}), [r["on_conn"] for r in log], len({r["peer_port"] for r in log}))'
	assert_output "5 1 [1, 2, 3, 4, 5] 1"
}

@test "an error response keeps the connection for the retry" {
	fake_provider_start <<<'{"status":500}
{"text":"ok"}'
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	assert_success
	run fake_log 'print(len(log), len({r["conn"] for r in log}))'
	assert_output "2 1"
}

@test "a retry sends the request's bytes again, byte for byte, in each wire kind" {
	# The body is let go once an answer begins (an error's body, a stream
	# cut short) and made again for the retry.
	for kind in openai-chat openai-responses anthropic-messages; do
		fake_provider_start <<<'{"status":500,"body":{"error":{"message":"boom","type":"server_error"}}}
{"text":"This reply is cut off halfway through.","chunk":4,"reset_after":700}
{"text":"ok"}'
		run xg-test provider "$kind" "$FAKE_URL" < <(simple)
		assert_success
		run fake_log 'print(len(log), len({r["sha256"] for r in log}))'
		assert_output "3 1"
		fake_provider_stop
	done
}

@test "a long history goes out in parts from where it is kept, byte for byte the whole body, retries and keys too" {
	# Past 64 KiB of messages kept from the last request, the body is sent
	# as its own bytes around the kept ones: the first request (nothing
	# kept yet) is one piece, the rest are parts, and every one of them
	# must be the same bytes.  A key in a message is replaced in each.
	for kind in openai-chat openai-responses anthropic-messages; do
		fake_provider_start <<<'{"text":"one"}
{"status":500,"body":{"error":{"message":"boom","type":"server_error"}}}
{"text":"ok","repeat":2}'
		python3 - "$XG_TEST_KEY" >"$BATS_TEST_TMPDIR/long.json" <<-'PY'
		import json, sys
		msgs = []
		for i in range(40):
		    msgs.append({"role": "user", "text": "line %d " % i + "x" * 3000})
		    msgs.append({"role": "assistant", "text": "seen %d" % i})
		msgs.append({"role": "user", "text": "the key is " + sys.argv[1] + ", keep it"})
		print(json.dumps({"model": "m", "system": "S", "messages": msgs}))
		PY
		run xg-test provider --repeat 3 "$kind" "$FAKE_URL" <"$BATS_TEST_TMPDIR/long.json"
		assert_success
		run fake_log 'import os; print(len(log), len({r["sha256"] for r in log}), len(json.dumps(log[0]["body"])) > 120000, any(os.environ["XG_TEST_KEY"] in json.dumps(r["body"]) for r in log), all("the key is" in json.dumps(r["body"]) for r in log))'
		assert_output "4 1 True False True"
		fake_provider_stop
	done
}

@test "429 with retry-after waits what the server asked, then succeeds" {
	export XG_RETRY=base=1,cap=60000
	fake_provider_start <<<'{"status":429,"headers":{"retry-after":"1"},"body":{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}}
{"text":"after the wait"}'
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	assert_success
	assert_line --index 0 "{\"type\":\"retry\",\"attempt\":1,\"of\":8,\"delay_ms\":1000,\"reason\":\"rate_limit\",\"message\":\"HTTP 429: Rate limit reached\",\"partial\":false,\"provider\":\"openai-chat\",\"host\":\"127.0.0.1:$FAKE_PORT\"}"
	[ "$(text_of <<<"$output")" = "after the wait" ]
}

@test "retry-after-ms, an HTTP date and OpenAI and Anthropic rate-limit reset headers set the wait" {
	export XG_RETRY=base=1
	reset=$(python3 -c 'import datetime as d; print((d.datetime.now(d.timezone.utc) + d.timedelta(seconds=4)).isoformat(timespec="seconds").replace("+00:00", "Z"))')
	when=$(python3 -c 'import email.utils,time; print(email.utils.formatdate(time.time() + 8, usegmt=True))')
	fake_provider_start <<STEPS
{"status":429,"headers":{"anthropic-ratelimit-requests-reset":"$reset","anthropic-ratelimit-tokens-reset":"2000-01-01T00:00:00Z"}}
{"status":429,"headers":{"retry-after":"$when"}}
{"status":429,"headers":{"retry-after-ms":"37","retry-after":"9"}}
{"status":429,"headers":{"x-ratelimit-reset-requests":"120ms","x-ratelimit-reset-tokens":"644ms"}}
{"text":"ok"}
STEPS
	run xg-test provider anthropic-messages "$FAKE_URL" < <(simple)
	assert_success
	run events retry delay_ms <<<"$output"
	delays=($output)
	[ "${#delays[@]}" -eq 4 ]
	[ "${delays[0]}" -gt 100 ] && [ "${delays[0]}" -le 4000 ]
	[ "${delays[1]}" -gt 100 ] && [ "${delays[1]}" -le 8000 ]
	[ "${delays[2]}" -eq 37 ]
	[ "${delays[3]}" -eq 644 ]
}

@test "no wait is longer than the cap, whatever the server asks within the budget" {
	export XG_RETRY=base=1,cap=300
	fake_provider_start <<<'{"status":503,"headers":{"retry-after":"200"}}
{"status":429,"headers":{"retry-after-ms":"90000"}}
{"text":"ok"}'
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	assert_success
	run events retry delay_ms <<<"$output"
	assert_output "$(printf '300\n300')"
}

@test "without hints the waits grow exponentially with jitter up to the cap" {
	export XG_RETRY=attempts=6,base=4,cap=50
	fake_provider_start <<<'{"status":500,"repeat":6}
{"text":"ok"}'
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	assert_success
	run events retry delay_ms <<<"$output"
	python3 -c "import sys
d = [int(x) for x in sys.argv[1].split()]
want = [4, 8, 16, 32, 50, 50]
assert len(d) == 6, d
for got, base in zip(d, want):
    assert 0.8 * min(base, 50) - 1 <= got <= min(1.2 * base, 50), (d, want)" "$output"
}

@test "500 then success delivers only the successful attempt's events" {
	fake_provider_start <<<'{"status":500,"body":{"error":{"message":"boom","type":"server_error"}}}
{"text":"recovered"}'
	run xg-test provider openai-responses "$FAKE_URL" < <(simple)
	assert_success
	assert_line --index 0 --partial '"type":"retry","attempt":1,"of":8'
	assert_line --index 0 --partial '"reason":"server"'
	[ "$(text_of <<<"$output")" = recovered ]
}

@test "a connection reset in the middle of a stream is retried and reported as partial" {
	fake_provider_start <<<'{"text":"This reply is cut off halfway through.","chunk":4,"reset_after":700}
{"text":"Whole reply."}'
	run xg-test provider anthropic-messages "$FAKE_URL" < <(simple)
	assert_success
	assert_line --partial '"type":"retry","attempt":1,"of":8'
	assert_line --partial '"reason":"network"'
	assert_line --partial '"partial":true'
	# Text came before the reset; after the retry report comes the second
	# attempt, whole.
	[ -n "$(sed -n '1,/"type":"retry"/p' <<<"$output" | sed '$d' | text_of)" ]
	[ "$(sed -n '/"type":"retry"/,$p' <<<"$output" | tail -n +2 | text_of)" = "Whole reply." ]
	run fake_log 'print(len(log))'
	assert_output 2
}

@test "a stream silent past the idle timeout is retried" {
	export XG_RETRY=base=1,cap=20,idle=1500
	fake_provider_start <<<'{"text":"stalled reply","stall":6,"stall_after":50}
{"text":"prompt reply"}'
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	assert_success
	assert_line --index 0 --partial '"reason":"timeout","message":"no bytes from the provider for 1500 ms"'
	[ "$(sed -n '/"type":"retry"/,$p' <<<"$output" | tail -n +2 | text_of)" = "prompt reply" ]
}

@test "eight failures in a row are retried eight times, then the final error is reported" {
	export XG_RETRY=base=1,cap=5
	fake_provider_start <<<'{"status":502,"body":"<html>bad gateway</html>","content_type":"text/html","repeat":20}'
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	[ "$status" -eq 69 ]
	assert_line --index 7 "{\"type\":\"retry\",\"attempt\":8,\"of\":8,\"delay_ms\":5,\"reason\":\"server\",\"message\":\"HTTP 502: <html>bad gateway</html>\",\"partial\":false,\"provider\":\"openai-chat\",\"host\":\"127.0.0.1:$FAKE_PORT\"}"
	assert_line --index 8 '{"type":"error","class":"server","message":"HTTP 502: <html>bad gateway</html>","status":502,"transient":true,"exit":69}'
	run events retry attempt <<<"$output"
	assert_output "$(seq 1 8)"
	run fake_log 'print(len(log))'
	assert_output 9
}

@test "a rate limit that outlasts the retries ends with exit 75" {
	export XG_RETRY=attempts=2,base=1,cap=5
	fake_provider_start <<<'{"status":429,"repeat":5}'
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	[ "$status" -eq 75 ]
	assert_line --partial '"class":"rate_limit"'
	run fake_log 'print(len(log))'
	assert_output 3
}

@test "errors that are not transient are not retried and map to their exit codes" {
	ctx=$(tr -d '\n' <"$FIXTURES/wire/openai-error-400-context-length-exceeded.json")
	while read -r code class want body; do
		fake_provider_start <<<"{\"status\":${code},\"body\":${body}}"
		run xg-test provider openai-chat "$FAKE_URL" < <(simple)
		[ "$status" -eq "$want" ]
		assert_line --partial "\"class\":\"$class\""
		assert_line --partial '"transient":false'
		refute_line --partial '"type":"retry"'
		run fake_log 'print(len(log))'
		assert_output 1
		fake_provider_stop
	done <<CASES
401 auth 77 {"error":{"message":"Invalid key","type":"invalid_request_error","code":"invalid_api_key"}}
403 auth 77 {"type":"error","error":{"type":"permission_error","message":"no"}}
429 usage_limit 75 {"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}
402 usage_limit 75 {"error":{"message":"Insufficient credits","code":402}}
400 context_overflow 65 $ctx
400 context_overflow 65 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}
400 context_overflow 65 {"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}
404 not_found 78 {"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}
400 bad_request 70 {"error":{"message":"Unsupported parameter","type":"invalid_request_error"}}
CASES
}

@test "a word in an error's message does not outweigh its code, type or status" {
	export XG_RETRY=off
	cases=$BATS_TEST_TMPDIR/cases
	cat >"$cases" <<'CASES'
400 bad_request 70 {"error":{"message":"Invalid 'max_output_tokens': the context window is too small","type":"invalid_request_error","param":"max_output_tokens","code":"integer_below_min_value"}}
400 bad_request 70 {"type":"error","error":{"type":"invalid_request_error","message":"This request breaks the usage limit policy of the organization"}}
400 bad_request 70 {"error":{"message":"context length exceeded is not a valid stop sequence"}}
429 rate_limit 75 {"error":{"message":"Too many requests for the context window you asked","type":"requests","code":"rate_limit_exceeded"}}
500 server 69 {"type":"error","error":{"type":"api_error","message":"the prompt is too long to log"}}
429 rate_limit 75 {"error":{"message":"try later","type":"server_error"}}
503 overloaded 69 {"error":{"message":"maximum context length is being reconfigured"}}
401 auth 77 {"error":{"message":"usage limit keys need a new login, you exceeded your current quota of logins"}}
400 usage_limit 75 {"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}
400 usage_limit 75 {"type":"error","error":{"type":"invalid_request_error","message":"You have reached your specified API usage limits. You will regain access on 2026-12-01 at 00:00 UTC."}}
400 context_overflow 65 {"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again"}}
400 context_overflow 65 {"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","code":400}
CASES
	while read -r code class want body; do
		printf '{"status":%s,"body":%s}\n' "$code" "$body"
	done <"$cases" >"$BATS_TEST_TMPDIR/steps"
	fake_provider_start <"$BATS_TEST_TMPDIR/steps"
	while read -r code class want body; do
		run xg-test provider openai-chat "$FAKE_URL" < <(simple)
		echo "case: $code $body"
		[ "$status" -eq "$want" ]
		assert_line --partial "\"class\":\"$class\""
	done <"$cases"
	run fake_log 'print(len(log))'
	assert_output 12
}

@test "transient error classes are retried: overloaded, server, protocol, in-stream errors" {
	overloaded=$(cat "$FIXTURES/wire/anthropic-error-529-overloaded.json")
	fake_provider_start <<STEPS
{"status":529,"body":$overloaded}
{"garbage":"<html>captive portal</html>"}
{"text":"partial","stream_error":{"type":"overloaded_error","message":"Overloaded"}}
{"text":"fine"}
STEPS
	run xg-test provider anthropic-messages "$FAKE_URL" < <(simple)
	assert_success
	run events retry reason <<<"$output"
	assert_output "$(printf 'overloaded\nprotocol\noverloaded')"
	fake_provider_stop
	fake_provider_start <<'STEPS'
{"text":"x","stream_error":{"code":"server_error","message":"try again"}}
{"text":"y","stream_error":{"code":500,"message":"llama.cpp failed","type":"server_error"},"dialect":"llama.cpp"}
{"text":"ok"}
STEPS
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	assert_success
	run events retry reason <<<"$output"
	assert_output "$(printf 'server\nserver')"
}

@test "an error inside a stream that is not transient ends the request at once" {
	fake_provider_start <<<'{"text":"x","stream_error":{"code":"context_length_exceeded","message":"Your input exceeds the context window"}}'
	run xg-test provider openai-responses "$FAKE_URL" < <(simple)
	[ "$status" -eq 65 ]
	assert_line --partial '"class":"context_overflow"'
	refute_line --partial '"type":"retry"'
}

@test "tool input past the 16 MiB ceiling ends the request at once, not retried" {
	# Seventeen events of 1 MiB of arguments each: every event is under
	# the ceiling, the call they build is not.
	python3 - "$BATS_TEST_TMPDIR/big.sse" <<'PY'
import json, sys
piece = "x" * (1 << 20)
with open(sys.argv[1], "w") as f:
    def ev(name, obj):
        f.write("event: %s\ndata: %s\n\n" % (name, json.dumps(obj)))
    ev("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 1, "output_tokens": 1}}})
    ev("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}})
    for _ in range(17):
        ev("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}})
    ev("content_block_stop", {"type": "content_block_stop", "index": 0})
    ev("message_stop", {"type": "message_stop"})
PY
	fake_provider_start <<STEPS
{"raw_file":"$BATS_TEST_TMPDIR/big.sse","repeat":3}
STEPS
	run xg-test provider anthropic-messages "$FAKE_URL" < <(simple)
	[ "$status" -eq 69 ]
	assert_line --partial '"class":"protocol"'
	assert_line --partial '"transient":false'
	assert_line --partial "tool call arguments larger than $((16 << 20)) bytes"
	refute_line --partial '"type":"retry"'
	refute_line --partial '"type":"tool_call"'
	run fake_log 'print(len(log))'
	assert_output 1
}

@test "the sent hook runs before the first event, even when the reply comes before the body is out" {
	# A server that answers at once and only then reads the request: the
	# reply's events reach the client while 8 MiB of body are still
	# going out.  xg-run starts its snapshot from this hook and takes it
	# by the first event, so the hook must come first.  (fd 3 is bats'
	# own: the server in the background must not hold it.)
	python3 - "$BATS_TEST_TMPDIR/port" "$FIXTURES/wire/openai-chat-text.sse" 3>&- <<-'PY' &
	import os, socket, sys
	s = socket.socket()
	s.bind(("127.0.0.1", 0))
	s.listen(1)
	with open(sys.argv[1] + ".new", "w") as f:
	    f.write(str(s.getsockname()[1]))
	os.rename(sys.argv[1] + ".new", sys.argv[1])
	s.settimeout(30)
	c, _ = s.accept()
	c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" +
	          open(sys.argv[2], "rb").read())
	got = b""
	while b"\r\n\r\n" not in got:
	    got += c.recv(65536)
	head, body = got.split(b"\r\n\r\n", 1)
	n = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0])
	while len(body) < n:
	    body += c.recv(1 << 20)
	c.close()
	PY
	for _ in $(seq 100); do [ -f "$BATS_TEST_TMPDIR/port" ] && break; sleep 0.05; done
	simple "$(head -c $((8 << 20)) /dev/zero | tr '\0' x)" >"$BATS_TEST_TMPDIR/big.json"
	run xg-test provider --sent openai-chat "http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/port")/v1" \
		<"$BATS_TEST_TMPDIR/big.json"
	wait
	assert_success
	assert_equal "$(jq -r .type <<<"$output" | uniq | head -2 | tr '\n' ' ')" "sent text "
	[ "$(grep -c '"type":"sent"' <<<"$output")" -eq 1 ]
}

# A port nothing listens on: bound, then closed.
closed_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

@test "a connection refused on this machine gets two quick retries, then exit 69 naming the URL" {
	port=$(closed_port)
	export XG_RETRY=attempts=8,base=1,cap=20
	run xg-test provider --name llamacpp openai-chat "http://user:pw-51c9@127.0.0.1:$port/v1?key=q-77e2" < <(simple)
	[ "$status" -eq 69 ]
	[ "$(events retry attempt <<<"$output" | tr '\n' ' ')" = "1 2 " ]
	[ "$(events retry of <<<"$output" | tr '\n' ' ')" = "2 2 " ]
	[ "$(events retry reason <<<"$output" | sort -u)" = network ]
	[ "$(events retry provider <<<"$output" | sort -u)" = llamacpp ]
	[ "$(events retry host <<<"$output" | sort -u)" = "127.0.0.1:$port" ]
	[ "$(events error message <<<"$output")" = "http://127.0.0.1:$port/v1 refused the connection: is the server running?" ]
	# The user info and the query are not shown: they can hold secrets.
	[[ "$output" != *pw-51c9* && "$output" != *q-77e2* ]]
	# The policy's own waits: 250 ms, then 500 ms, under a second in all.
	unset XG_RETRY
	run xg-test provider openai-chat "http://localhost:$port/v1" < <(simple)
	[ "$status" -eq 69 ]
	run events retry delay_ms <<<"$output"
	assert_output "$(printf '250\n500')"
	# XG_RETRY still has the last word: fewer retries, shorter waits.
	XG_RETRY=attempts=1,cap=3 run xg-test provider openai-chat "http://[::1]:$port/v1" < <(simple)
	[ "$status" -eq 69 ]
	run events retry delay_ms <<<"$output"
	assert_output 3
	XG_RETRY=off run xg-test provider openai-chat "http://127.0.0.1:$port/v1" < <(simple)
	[ "$status" -eq 69 ]
	refute_line --partial '"type":"retry"'
}

@test "loopback, private and link-local addresses are near; other hosts are not" {
	run xg-test provider --where 127.0.0.1 127.9.8.7 ::1 '[::1]' localhost LocalHost. api.localhost \
		0.0.0.0 :: 10.0.0.1 10.255.255.255 172.16.0.1 172.31.255.254 192.168.1.20 \
		fc00::1 fd12:3456::7 169.254.10.1 fe80::1 'fe80::1%eth0' ::ffff:192.168.0.9
	assert_success
	[ "$(jq -r .near <<<"$output" | sort -u)" = true ]
	run xg-test provider --where 8.8.8.8 11.0.0.1 172.15.255.255 172.32.0.1 192.169.0.1 \
		169.255.0.1 100.64.0.1 2001:db8::1 fec0::1 ::2 ::ffff:8.8.8.8 api.openai.com \
		notlocalhost localhost.example.com gpu1
	assert_success
	[ "$(jq -r .near <<<"$output" | sort -u)" = false ]
	# What messages name of a base URL: the host with its port, and the URL
	# without user info, query or fragment.
	run xg-test provider --where 'http://me:secret@[::1]:8080/v1?key=k#top' https://api.openai.com/v1
	assert_line --index 0 '{"host":"[::1]:8080","hostname":"::1","shown":"http://[::1]:8080/v1","near":true}'
	assert_line --index 1 '{"host":"api.openai.com","hostname":"api.openai.com","shown":"https://api.openai.com/v1","near":false}'
}

@test "XG_RETRY=off makes one attempt, and a malformed XG_RETRY is warned about and ignored" {
	fake_provider_start <<<'{"status":500,"repeat":3}'
	XG_RETRY=off run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	[ "$status" -eq 69 ]
	refute_line --partial '"type":"retry"'
	XG_RETRY='attempts=1,base=1,cap=1,bogus=3' run_split xg-test provider openai-chat "$FAKE_URL" < <(simple)
	[ "$status" -eq 69 ]
	[[ $stderr == *"XG_RETRY: unknown or out-of-range 'bogus=3'"* ]]
	run events retry attempt <<<"$output"
	assert_output 1
}

@test "the proxy environment is honoured" {
	fake_provider_start <<<'{"text":"via the proxy"}'
	http_proxy="http://127.0.0.1:$FAKE_PORT" run xg-test provider openai-chat http://provider.invalid/v1 < <(simple)
	assert_success
	[ "$(text_of <<<"$output")" = "via the proxy" ]
	run fake_log 'print(log[0]["path"])'
	assert_output http://provider.invalid/v1/chat/completions
}

@test "the key is never printed: not in events, errors, traces or the fake provider's log" {
	canary=sk-canary-7f3a9c1e5b2d4f60
	export XG_TEST_KEY=$canary FAKE_PROVIDER_KEY=$canary XG_TRACE=1
	fake_provider_start <<'STEPS'
{"text":"hello"}
{"status":401,"echo_key":true}
{"status":500,"body":{"error":{"message":"upstream said sk-canary-7f3a9c1e5b2d4f60 is odd"}}}
{"text":"x","stream_error":{"message":"stream saw sk-canary-7f3a9c1e5b2d4f60","type":"invalid_request_error"}}
STEPS
	all="$BATS_TEST_TMPDIR/all-output"
	for kind in openai-chat anthropic-messages; do
		run xg-test provider "$kind" "$FAKE_URL" < <(simple)
		printf '%s\n%s\n' "$output" "$stderr" >>"$all"
	done
	XG_RETRY=off run xg-test provider openai-responses "$FAKE_URL" < <(simple)
	printf '%s\n%s\n' "$output" "$stderr" >>"$all"
	XG_RETRY=off run xg-test provider openai-responses "$FAKE_URL" < <(simple)
	printf '%s\n%s\n' "$output" "$stderr" >>"$all"
	# A wrong key is echoed by the server's 401 message.
	XG_TEST_KEY=sk-wrong-canary-11 run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	[ "$status" -eq 77 ]
	printf '%s\n%s\n' "$output" "$stderr" >>"$all"
	cat "$FAKE_LOG" "$BATS_TEST_TMPDIR/fake/server.out" >>"$all"
	# The key was sent, and the trace was on...
	run fake_log 'print(sorted({r["auth"] for r in log}))'
	assert_output "['ok', 'wrong']"
	grep -q 'trace: > [Aa]uthorization: <redacted>' "$all"
	grep -q 'trace: > x-api-key: <redacted>' "$all"
	grep -q 'bad key <redacted>' "$all"
	grep -q 'upstream said <redacted> is odd' "$all"
	grep -q 'stream saw <redacted>' "$all"
	grep -q 'Incorrect API key provided: <redacted>' "$all"
	# ...and never shown.
	! grep -q "$canary" "$all"
	! grep -q sk-wrong-canary-11 "$all"
}

@test "the XG_RETRY example of man 7 xg retries twice" {
	grep -q 'XG_RETRY=attempts=2,cap=5000' "$XG_SRCDIR/man/xg.7"
	fake_provider_start <<<'{"status":500,"headers":{"retry-after-ms":"1"},"repeat":5}'
	XG_RETRY=attempts=2,cap=5000 run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	[ "$status" -eq 69 ]
	run events retry attempt <<<"$output"
	assert_output "$(printf '1\n2')"
}

@test "an event stream that ends before its first byte is truncated, and retried" {
	fake_provider_start <<<'{"raw":""}
{"text":"ok"}'
	run xg-test provider openai-responses "$FAKE_URL" < <(simple)
	assert_success
	run events retry reason <<<"$output"
	assert_output truncated
}

@test "a host name that does not resolve gets two quick retries, then exit 69 saying so" {
	export XG_RETRY=attempts=8,base=1,cap=20
	run xg-test provider openai-chat "http://no-such-host.invalid/v1" < <(simple)
	[ "$status" -eq 69 ]
	[ "$(events retry attempt <<<"$output" | tr '\n' ' ')" = "1 2 " ]
	[[ "$(events retry message <<<"$output" | head -n 1)" == "cannot resolve the host of http://no-such-host.invalid/v1 ("* ]]
	[[ "$(events error message <<<"$output")" == *"is there a network?"* ]]
}

@test "a silent server is given up within the budget, its first attempt's silence included" {
	# The idle timeout is longer than the whole budget: the first attempt
	# may be silent for the budget and no more, and then no retry fits.
	export XG_RETRY=base=1,cap=20,idle=30s,budget=1500
	fake_provider_start <<<'{"text":"stalled","stall":20,"stall_after":0,"repeat":3}'
	run xg-test provider openai-chat "$FAKE_URL" < <(simple)
	[ "$status" -eq 69 ]
	assert_line --partial '"message":"no bytes from the provider for 1500 ms"'
	run fake_log 'print(len(log))'
	assert_output 1
}

@test "a malformed request is refused before anything is sent, naming the message" {
	fake_provider_start <<<'{"text":"never"}'
	for kind in openai-chat openai-responses anthropic-messages; do
		run xg-test provider "$kind" "$FAKE_URL" <<<'{"model":"m","messages":[{"role":"user","text":"a"},{"role":"tool","output":"x"}]}'
		[ "$status" -eq 65 ]
		assert_output '{"type":"error","class":"request","message":"request: messages[1]: missing field '"'id'"'","transient":false,"exit":65}'
	done
	run fake_log 'print(len(log))'
	assert_output 0
}

@test "by default 8 retries wait about four minutes in all, none over 60 s, and the idle timeout is 300 s" {
	unset XG_RETRY
	run xg-test provider --policy
	assert_success
	python3 -c "import json,sys
p = json.loads(sys.argv[1])
assert (p['attempts'], p['idle_ms'], p['cap_ms']) == (8, 300000, 60000), p
d = p['delays_ms']
assert len(d) == 8 and max(d) <= 60000 and d[:5] == sorted(d[:5]), d
assert 190000 <= sum(d) <= 260000, sum(d)" "$output"
	XG_RETRY=attempts=3,idle=5000,connect=100,,cap=7 run xg-test provider --policy
	assert_output '{"attempts":3,"base_ms":2000,"cap_ms":7,"idle_ms":5000,"connect_ms":100,"delays_ms":[7,7,7]}'
}

# xg-test provider-abort raises SIGINT itself, from inside the poll or sleep
# call the wait is about to block in: after the wait has checked the abort
# flag for the last time, the moment a check-then-sleep wait misses.
@test "a SIGINT that comes just as a retry wait begins cuts the wait short" {
	# The wait would be the cap, 60 s; a wait that is not cut short is
	# killed long before that.
	unset XG_RETRY
	fake_provider_start <<<'{"status":503,"headers":{"retry-after":"200"}}
{"text":"never asked for"}'
	run_split timeout 30 env --default-signal=INT xg-test provider-abort --at wait openai-chat "$FAKE_URL" < <(simple)
	[ "$status" -ne 124 ] || fail "the retry wait ran on after the signal"
	[ "$status" -eq 69 ]
	assert_line --index 0 '{"type":"retry","attempt":1,"delay_ms":60000,"reason":"overloaded"}'
	assert_line --index 1 --partial '"type":"error","class":"overloaded"'
	assert_line --index 2 --partial '{"type":"signal","raised":true,'
	run fake_log 'print(len(log))'
	assert_output 1
}

@test "a SIGINT that comes just as a stalled stream is polled ends the transfer at once" {
	fake_provider_start <<<'{"text":"A reply long enough to come in several pieces before the stall.","stall":60,"stall_after":600}
{"text":"never asked for"}'
	run_split timeout 30 env --default-signal=INT xg-test provider-abort --at stream openai-chat "$FAKE_URL" < <(simple)
	[ "$status" -ne 124 ] || fail "the transfer ran on after the signal"
	[ "$status" -eq 69 ]
	assert_line --index 0 --partial '"type":"text"'
	# Ended by the abort itself, not by an idle timeout run down to 1 ms,
	# and not retried.
	assert_line --partial '{"type":"error","class":"timeout","message":"the request was aborted",'
	refute_line --partial '"type":"retry"'
	assert_line --partial '{"type":"signal","raised":true,'
	run fake_log 'print(len(log))'
	assert_output 1
}

@test "a provider once aborted gives up its later requests at once" {
	fake_provider_start <<<'{"status":503,"headers":{"retry-after":"200"}}
{"text":"never asked for"}'
	unset XG_RETRY
	run_split timeout 30 env --default-signal=INT xg-test provider-abort --at wait --again openai-chat "$FAKE_URL" < <(simple)
	[ "$status" -ne 124 ] || fail "a request after the abort ran on"
	[ "$status" -eq 69 ]
	refute_line --partial '"type":"text"'
	assert_line --index 3 '{"type":"error","class":"timeout","message":"the request was aborted","transient":true,"exit":69}'
	# Nothing was sent the second time.
	run fake_log 'print(len(log))'
	assert_output 1
}
