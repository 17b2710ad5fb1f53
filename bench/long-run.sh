#!/bin/sh
# Long-run figures (issue 13): xg-run alone through a scripted tool run of
# ROUNDS rounds (default 200) against the loopback fake provider, which
# answers at once; each round is one reply asking for one read of a 1 KiB
# file, and the last reply ends the run.  N runs (default 3) of ROUNDS
# rounds and N of 10 rounds, and for them:
#   round_ms@10, round_ms@ROUNDS   the harness's own time for one round:
#                     the gap between two requests arriving at the fake
#                     provider, less the provider's own time for a reply
#                     (measured apart, as a client's full exchange with
#                     the fake provider with a request of the same size),
#                     the median over rounds 2-11 and over the last ten
#   peak_rss_kib@10, peak_rss_kib@ROUNDS   peak resident set at the end
#                     of a run of 10 and of ROUNDS rounds
# as medians over the runs, with the minimum and maximum, and the growth
# from round 10 to the last as a ratio.  The work slices are off, so only
# the rounds are measured.  It prints figures and asserts nothing.
# Run from the source tree: sh bench/long-run.sh
set -eu
cd "$(dirname "$0")/.."
make -s all tests/bin/xg-test >/dev/null
N=${N:-3}
ROUNDS=${ROUNDS:-200}
. bench/lib.sh
bench_tmp
# N runs of 10 rounds, then N of ROUNDS, each after one more run that warms
# the page cache.
{
	bench_read_rounds 10 $((N + 1))
	bench_read_rounds "$ROUNDS" $((N + 1))
} >"$tmp/script"
bench_provider "$tmp/script"
bench_home
bench_catalog 1000000
export XG_WORK_SLICE=off
bench_read_work
python3 - "$PWD" "$tmp" "$N" "$ROUNDS" "$port" <<'PY'
import json, os, socket, subprocess, sys, time, urllib.request
src, tmp, n, rounds, port = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
driver = [src + "/tests/bin/xg-test", "run", src + "/bin/xg-run", "--model", "fake/m"]

def one(logstart):
    p = subprocess.run(driver + ["read f.txt, again and again"], cwd=tmp + "/work",
                       stdin=subprocess.DEVNULL, capture_output=True)
    stats = json.loads(p.stderr.decode().strip().splitlines()[-1])
    end = [json.loads(l) for l in p.stdout.decode().splitlines() if '"run_end"' in l][0]
    assert end["status"] == "completed", end
    log = [json.loads(l) for l in open(tmp + "/log")][logstart:]
    return [(b["t"] - a["t"]) * 1000 for a, b in zip(log, log[1:])], stats["maxrss_kib"], len(log)

def provider_ms(port, body):
    # A client's whole exchange with the fake provider for one tool-call
    # reply: what the provider costs a round.  The script is used up by
    # then, so its 418 is served; the reply steps stream a few hundred
    # bytes, about as much.
    t = []
    for _ in range(20):
        t0 = time.perf_counter()
        try:
            urllib.request.urlopen(urllib.request.Request(
                "http://127.0.0.1:%s/v1/chat/completions" % port, data=body,
                headers={"content-type": "application/json"})).read()
        except urllib.error.HTTPError as e:
            e.read()
        t.append((time.perf_counter() - t0) * 1000)
    return sorted(t)[len(t) // 2]

def med(v):
    v = sorted(v)
    return v[len(v) // 2]

def show(name, v, unit):
    v = sorted(v)
    print(json.dumps({"cmd": "xg-run", "what": name, "median": round(med(v), 2),
                      "min": round(v[0], 2), "max": round(v[-1], 2), "unit": unit, "runs": len(v)}))

res, used = {}, 0
for r in (10, rounds):
    first, gaps, rss = used, [], []
    for i in range(n + 1):
        g, m, k = one(used)
        used += k
        if i:  # the first run warms the page cache
            gaps.append(g); rss.append(m)
    res[r] = (gaps, rss, first)
# The provider's time at round 10 and at the last round, each with a
# request of that round's size, from the first run of ROUNDS rounds.
gaps, _, first = res[rounds]
log = [json.loads(l) for l in open(tmp + "/log")]
prov = [provider_ms(port, json.dumps(log[first + k]["body"]).encode()) for k in (10, rounds - 1)]
early = [med(g[1:11]) - prov[0] for g in gaps]
late = [med(g[-10:]) - prov[1] for g in gaps]
show("round_ms@10", early, "ms")
show("round_ms@%d" % rounds, late, "ms")
show("provider_ms@10", [prov[0]], "ms")
show("provider_ms@%d" % rounds, [prov[1]], "ms")
show("peak_rss_kib@10", res[10][1], "KiB")
show("peak_rss_kib@%d" % rounds, res[rounds][1], "KiB")
print(json.dumps({"cmd": "xg-run", "what": "growth 10->%d" % rounds,
                  "round_ms": round(med(late) / med(early), 2) if med(early) > 0 else None,
                  "peak_rss_kib": round(med(res[rounds][1]) / med(res[10][1]), 2)}))
PY
