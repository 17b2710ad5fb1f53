#!/bin/sh
# Provider client figures (issue 6):
#   1. SSE parse throughput, framing only (target >= 300 MB/s), and the whole
#      decoder with its JSON parsing, for comparison;
#   2. the time from a request's start to its first byte on the wire against
#      the loopback fake provider (target under 1 ms after the first
#      connection): encode + libcurl's pretransfer time as the client sees
#      it, and the time until the fake provider had read the whole request.
# Run from the source tree after "make all tests/bin/xg-test" (make bench
# builds "all" only).
set -eu
cd "$(dirname "$0")/.."
make -s all tests/bin/xg-test >/dev/null
W=tests/fixtures/wire
MB=${MB:-256}
N=${N:-200}

echo "-- SSE throughput ($MB MB fed in 16 KiB reads)"
for f in $W/openai-chat-text.sse $W/openai-responses-toolcalls.sse $W/anthropic-toolcalls.sse; do
	tests/bin/xg-test sse bench "$f" "$MB"
done

echo "-- request start to first byte on the wire ($N requests on one client)"
. bench/lib.sh
bench_tmp
echo "{\"text\":\"ok\",\"repeat\":$N}" >"$tmp/script"
bench_provider "$tmp/script"
printf '%s\n' '{"model":"m","system":"You are a benchmark.","messages":[{"role":"user","text":"hi"}]}' |
	XG_TEST_KEY=bench tests/bin/xg-test provider --stats --repeat "$N" openai-chat \
	"http://127.0.0.1:$port/v1" >"$tmp/out"
python3 - "$tmp/out" "$tmp/log" <<'PY'
import json, sys
stats = [json.loads(l) for l in open(sys.argv[1]) if '"type":"stats"' in l]
log = [json.loads(l) for l in open(sys.argv[2])]
client = [s["encode_us"] + s["pretransfer_us"] for s in stats]
server = [r["t"] * 1e6 - s["start_wall_us"] for r, s in zip(log, stats)]
ttfb = [s["first_byte_us"] for s in stats]
def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]
def show(name, v):
    first, rest = v[0], v[1:]
    print(json.dumps({"what": name, "first_us": round(first), "then_median_us": round(q(rest, .5)),
                      "then_p90_us": round(q(rest, .9)), "then_max_us": round(max(rest))}))
print(json.dumps({"what": "connections", "requests": len(stats),
                  "new_connections": sum(s["new_connections"] for s in stats)}))
show("start_to_first_byte_sent (client: encode + pretransfer)", client)
show("start_to_request_read (fake provider has the whole request)", server)
show("response_first_byte (includes the Python fake provider)", ttfb)
PY
