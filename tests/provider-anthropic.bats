#!/usr/bin/env bats
# The Anthropic encoder's prompt-cache markers over a long run: every request
# is the one before plus new messages, byte for byte, and none carries more
# than the API's four cache_control breakpoints.  Encoding only (--encode):
# nothing is sent.

load lib/helper

# Writes the requests of a run of $1 turns into $BATS_TEST_TMPDIR/req-N.json,
# one per model call, each the whole conversation so far.  Turns vary: text
# only, thinking with a signature, one tool call, a wide turn of 12 parallel
# calls (more than 20 blocks), a failing tool, a plain reply and then a new
# user message (as a resumed conversation adds).
write_run() {
	python3 - "$1" "$BATS_TEST_TMPDIR" <<-'PY'
	import json, sys
	turns, out = int(sys.argv[1]), sys.argv[2]
	req = {"model": "claude-x", "system": "You are xg. Stable part.\n# Dynamic part", "system_stable": 24,
	       "effort": "low", "max_output": 16000,
	       "tools": [{"name": "bash", "description": "run", "parameters": {"type": "object"}},
	                 {"name": "read", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}],
	       "messages": [{"role": "user", "text": "start the work"}]}
	n = 0
	def emit():
	    global n
	    with open("%s/req-%03d.json" % (out, n), "w") as f:
	        json.dump(req, f)
	    n += 1
	emit()
	for t in range(turns):
	    m = req["messages"]
	    width = 12 if t % 7 == 3 else (0 if t % 5 == 4 else 1 + t % 3)
	    a = {"role": "assistant", "text": "turn %d \u00e9\u4e2d \"q\"" % t}
	    if t % 2:
	        a["reasoning"] = [{"text": "thinking %d" % t, "signature": "sig-%d" % t}]
	    if width:
	        a["tool_calls"] = [{"id": "c%d_%d" % (t, i), "name": "bash", "args": {"command": "echo %d" % i}}
	                           for i in range(width)]
	    m.append(a)
	    for i in range(width):
	        m.append({"role": "tool", "id": "c%d_%d" % (t, i), "name": "bash",
	                  "output": "out %d/%d\n" % (t, i), "ok": i != 2})
	    if not width:
	        m.append({"role": "user", "text": "and now part %d" % t})
	    emit()
	PY
}

@test "a long Anthropic run: each request is the one before plus new messages, byte for byte" {
	write_run 60
	for f in "$BATS_TEST_TMPDIR"/req-*.json; do
		xg-test provider --encode anthropic-messages http://127.0.0.1:9/v1 <"$f" >"${f%.json}.body" ||
			{ echo "encoding $f failed"; return 1; }
	done
	run python3 - "$BATS_TEST_TMPDIR" <<-'PY'
	import glob, json, sys
	bodies = [open(f, "rb").read().rstrip(b"\n") for f in sorted(glob.glob(sys.argv[1] + "/req-*.body"))]
	assert len(bodies) == 61, len(bodies)
	dec = json.JSONDecoder()
	def split(raw):
	    # The raw bytes before the messages array, the array, and after it.
	    s = raw.decode("utf-8")
	    i = s.index('"messages":') + len('"messages":')
	    _, j = dec.raw_decode(s, i)
	    return s[:i], s[i:j], s[j:]
	def markers(v):
	    if isinstance(v, dict):
	        return ("cache_control" in v) + sum(markers(x) for x in v.values())
	    if isinstance(v, list):
	        return sum(markers(x) for x in v)
	    return 0
	wide = 0
	for k, raw in enumerate(bodies):
	    b = json.loads(raw)
	    assert markers(b) <= 4, (k, markers(b))
	    assert b["cache_control"] == {"type": "ephemeral"}, k
	    assert b["system"][0]["cache_control"] == {"type": "ephemeral"}, k
	    assert markers(b["messages"]) == 0, k
	    if k == 0:
	        continue
	    (pa, ma, ta), (pb, mb, tb) = split(bodies[k - 1]), split(raw)
	    assert pa == pb, (k, pa, pb)
	    assert ta == tb, (k, ta, tb)
	    assert mb.startswith(ma[:-1] + ","), (k, ma[-200:], mb[:len(ma) + 50][-250:])
	    if len(json.loads(mb)) - len(json.loads(ma)) >= 2:
	        added = json.loads(mb)[len(json.loads(ma)):]
	        wide = max(wide, sum(len(m["content"]) for m in added))
	print("ok", len(bodies), wide)
	PY
	assert_success
	# The run had a turn of more than 20 new blocks, and all 61 requests passed.
	[[ "$output" =~ ^ok\ 61\ ([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -gt 20 ]
}

@test "an Anthropic request carries automatic caching and marks only the system's stable prefix" {
	printf '%s\n' '{"model":"m","system":"STABLE rest","system_stable":6,"messages":[{"role":"user","text":"hi"},{"role":"assistant","text":"x","tool_calls":[{"id":"a","name":"bash","args":{}}]},{"role":"tool","id":"a","output":"o"}]}' >"$BATS_TEST_TMPDIR/r.json"
	run xg-test provider --encode anthropic-messages http://127.0.0.1:9/v1 <"$BATS_TEST_TMPDIR/r.json"
	assert_success
	run jq -c '[.cache_control, [.system[] | [.text, .cache_control]], ([.messages[].content[] | select(has("cache_control"))] | length)]' <<<"$output"
	assert_output '[{"type":"ephemeral"},[["STABLE",{"type":"ephemeral"}],[" rest",null]],0]'
}
