#!/bin/sh
# Round figures (issue 18): xg-run alone through a scripted tool run of
# ROUNDS rounds (default 200) against the loopback fake provider, which
# answers at once; each round is one reply asking for one read of a 1 KiB
# file, and the last reply ends the run.  N runs (default 3), and for them
#   gap_ms@K  for K = 10, 50, 100, ROUNDS: the harness's own time from a
#             reply's end to the next request, from the fake provider's
#             writing the last byte of reply K-1 (its --served file) to its
#             having read the whole of request K, the median of the ten
#             gaps up to round K, then the median over the runs
#   floor_ms  what the limit costs here: a bare fork+exec of /bin/true and
#             writing a request of round ROUNDS's size to a socket
# and the growth from round 10 to ROUNDS as a ratio.  Then the same with a
# bash tool running true each round, beside the bare spawn of bash -c true:
# bash_minus_read_ms@K, the bash round's gap less the read round's, against
# 1.5 times that spawn (the target).  The work slices are
# off, as in bench/long-run.sh; compaction, the stall watch and the gate
# stay as they are.  It prints figures and asserts nothing.
# Run from the source tree: sh bench/rounds.sh
set -eu
cd "$(dirname "$0")/.."
make -s all tests/bin/xg-test >/dev/null
N=${N:-3}
ROUNDS=${ROUNDS:-200}
. bench/lib.sh
bench_tmp
# N runs and one more before them, which warms the page cache.
{ bench_read_rounds "$ROUNDS" $((N + 1)); bench_bash_rounds "$ROUNDS" $((N + 1)); } >"$tmp/script"
bench_provider "$tmp/script" --served "$tmp/served"
bench_home
bench_catalog 1000000
export XG_WORK_SLICE=off
bench_read_work
python3 - "$PWD" "$tmp" "$N" "$ROUNDS" "$pid" <<'PY'
import json, os, signal, socket, subprocess, sys, threading, time
src, tmp, n, rounds, srv = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
driver = [src + "/tests/bin/xg-test", "run", src + "/bin/xg-run", "--model", "fake/m"]
def med(v):
    v = sorted(v)
    return v[len(v) // 2]

used = 0
def rounds_of(prompt):
    global used
    runs = []
    for i in range(n + 1):
        p = subprocess.run(driver + [prompt], cwd=tmp + "/work",
                           stdin=subprocess.DEVNULL, capture_output=True)
        end = [json.loads(l) for l in p.stdout.decode().splitlines() if '"run_end"' in l][0]
        assert end["status"] == "completed", end
        log = [json.loads(l) for l in open(tmp + "/log")][used:]
        served = {r["n"]: r["t"] for r in map(json.loads, open(tmp + "/served"))}
        used += len(log)
        if i:  # the first run warms the page cache
            runs.append([(r["t"], served.get(r["n"])) for r in log])
            bodies = log
    return runs, bodies

marks = sorted({10, 50, 100, rounds} & set(range(10, rounds + 1)))
def gaps(runs, tool):
    res = {}
    for k in marks:
        # gap j: from the end of reply j-1 to request j having arrived.
        g = [med([(log[j][0] - log[j - 1][1]) * 1000 for j in range(max(1, k - 10), k)]) for log in runs]
        res[k] = g
        g = sorted(g)
        print(json.dumps({"cmd": "xg-run", "tool": tool, "what": "gap_ms@%d" % k,
                          "median": round(med(g), 2), "min": round(g[0], 2), "max": round(g[-1], 2),
                          "target": 2 if tool == "read" else None, "runs": len(g)}))
    return res

runs, bodies = rounds_of("read f.txt, again and again")
res = gaps(runs, "read")
bruns, _ = rounds_of("run true, again and again")
bres = gaps(bruns, "bash")
# The provider is idle from here; stopped, it cannot disturb the floor.
os.kill(srv, signal.SIGTERM)
# The floor: fork+exec of /bin/true, and writing the last request's body
# to a connected socket (read by a thread on the other end).
t = []
for _ in range(200):
    t0 = time.perf_counter()
    subprocess.run(["/bin/true"])
    t.append((time.perf_counter() - t0) * 1000)
spawn = med(t)
t = []
for _ in range(200):
    t0 = time.perf_counter()
    subprocess.run(["bash", "-c", "true"])
    t.append((time.perf_counter() - t0) * 1000)
bash_spawn = med(t)
body = json.dumps(bodies[rounds - 1]["body"]).encode()
a, b = socket.socketpair()
def drain():
    while b.recv(1 << 20):
        pass
th = threading.Thread(target=drain); th.start()
t = []
for _ in range(50):
    t0 = time.perf_counter()
    a.sendall(body)
    t.append((time.perf_counter() - t0) * 1000)
a.close(); th.join()
for k in marks:
    d = med(bres[k]) - med(res[k])
    print(json.dumps({"cmd": "xg-run", "what": "bash_minus_read_ms@%d" % k, "median": round(d, 2),
                      "target": round(1.5 * bash_spawn, 2),
                      "ratio_to_spawn": round(d / bash_spawn, 2)}))
print(json.dumps({"what": "floor_ms", "fork_exec_true": round(spawn, 2),
                  "bash_c_true": round(bash_spawn, 2),
                  "write_request": round(med(t), 3), "request_bytes": len(body)}))
print(json.dumps({"cmd": "xg-run", "what": "growth 10->%d" % rounds,
                  "gap": round(med(res[rounds]) / med(res[10]), 2) if med(res[10]) > 0 else None,
                  "bash_gap": round(med(bres[rounds]) / med(bres[10]), 2) if med(bres[10]) > 0 else None}))
PY
