#!/bin/sh
# Round figures (issue 18): xg-run alone through a scripted tool run of
# ROUNDS rounds (default 200) against the loopback fake provider, which
# answers at once; each round is one reply asking for one read of a 1 KiB
# file, and the last reply ends the run.  N runs (default 3), and for them
#   gap_ms@K  for K = 10, 50, 100, ROUNDS: the harness's own time from a
#             reply's end to the next request, the gap between two
#             requests arriving at the fake provider less the provider's
#             own time for a reply (measured apart, as a client's whole
#             exchange with it with that round's request), the median of
#             the ten gaps up to round K, then the median over the runs
#   floor_ms  what the limit costs here: a bare fork+exec of /bin/true and
#             writing a request of round ROUNDS's size to a socket
# and the growth from round 10 to ROUNDS as a ratio.  The work slices are
# off, as in bench/long-run.sh; compaction, the stall watch and the gate
# stay as they are.  It prints figures and asserts nothing.
# Run from the source tree: sh bench/rounds.sh
set -eu
cd "$(dirname "$0")/.."
make -s all tests/bin/xg-test >/dev/null
N=${N:-3}
ROUNDS=${ROUNDS:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XG_HOME="$tmp/home" XG_SHARE_DIR="$PWD/share/xg" XG_BENCH_KEY=bench XG_WORK_SLICE=off
mkdir -p "$tmp/work"
head -c 1024 /dev/zero | tr '\0' x >"$tmp/work/f.txt"
python3 - "$PWD" "$tmp" "$N" "$ROUNDS" <<'PY'
import json, os, socket, subprocess, sys, time, urllib.request, urllib.error
src, tmp, n, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
driver = [src + "/tests/bin/xg-test", "run", src + "/bin/xg-run", "--model", "fake/m"]
step = {"tool_calls": [{"name": "read", "args": {"path": "f.txt"}}],
        "usage": {"input": 1000, "cached_input": 900, "output": 8}}
with open(tmp + "/script", "w") as f:
    for _ in range(n + 1):
        f.write(json.dumps(dict(step, repeat=rounds)) + "\n")
        f.write(json.dumps({"text": "done"}) + "\n")
srv = subprocess.Popen(["python3", src + "/share/xg/demo/fake-provider", "--script", tmp + "/script",
                        "--log", tmp + "/log", "--port-file", tmp + "/port", "--idle-exit", "600"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    while not os.path.exists(tmp + "/port") or not open(tmp + "/port").read().strip():
        time.sleep(0.05)
    port = open(tmp + "/port").read().strip()
    os.makedirs(tmp + "/home/config", exist_ok=True)
    with open(tmp + "/home/config/models.json", "w") as f:
        json.dump({"providers": {"fake": {"kind": "openai-chat",
                   "base_url": "http://127.0.0.1:%s/v1" % port, "key_env": "XG_BENCH_KEY",
                   "models": {"m": {"context_window": 1000000, "max_output_tokens": 4096,
                                    "efforts": [], "default_effort": None}}}}}, f)

    def med(v):
        v = sorted(v)
        return v[len(v) // 2]

    def provider_ms(body):
        # The script is used up by then, so its 418 is served: a few
        # hundred bytes, about as much as a tool-call reply streams.
        t = []
        for _ in range(15):
            t0 = time.perf_counter()
            try:
                urllib.request.urlopen(urllib.request.Request(
                    "http://127.0.0.1:%s/v1/chat/completions" % port, data=body,
                    headers={"content-type": "application/json"})).read()
            except urllib.error.HTTPError as e:
                e.read()
            t.append((time.perf_counter() - t0) * 1000)
        return med(t)

    used, runs = 0, []
    for i in range(n + 1):
        p = subprocess.run(driver + ["read f.txt, again and again"], cwd=tmp + "/work",
                           stdin=subprocess.DEVNULL, capture_output=True)
        end = [json.loads(l) for l in p.stdout.decode().splitlines() if '"run_end"' in l][0]
        assert end["status"] == "completed", end
        log = [json.loads(l) for l in open(tmp + "/log")][used:]
        used += len(log)
        if i:  # the first run warms the page cache
            runs.append(log)
    marks = sorted({10, 50, 100, rounds} & set(range(10, rounds + 1)))
    prov = {k: provider_ms(json.dumps(runs[0][k - 1]["body"]).encode()) for k in marks}
    res = {}
    for k in marks:
        # gap j is the time from request j to request j+1: round j's reply
        # and the harness's work after it.
        g = [med([(log[j]["t"] - log[j - 1]["t"]) * 1000 for j in range(k - 9, k + 1)]) - prov[k]
             for log in runs]
        res[k] = g
        g = sorted(g)
        print(json.dumps({"cmd": "xg-run", "what": "gap_ms@%d" % k, "median": round(med(g), 2),
                          "min": round(g[0], 2), "max": round(g[-1], 2),
                          "provider_ms": round(prov[k], 2), "target": 2, "runs": len(g)}))
finally:
    srv.terminate()
    srv.wait()
# The floor: fork+exec of /bin/true, and writing the last request's body
# to a connected socket (read by a thread on the other end).
t = []
for _ in range(200):
    t0 = time.perf_counter()
    subprocess.run(["/bin/true"])
    t.append((time.perf_counter() - t0) * 1000)
spawn = med(t)
body = json.dumps(runs[0][rounds - 1]["body"]).encode()
a, b = socket.socketpair()
import threading
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
print(json.dumps({"what": "floor_ms", "fork_exec_true": round(spawn, 2),
                  "write_request": round(med(t), 3), "request_bytes": len(body)}))
print(json.dumps({"cmd": "xg-run", "what": "growth 10->%d" % rounds,
                  "gap": round(med(res[rounds]) / med(res[10]), 2) if med(res[10]) > 0 else None}))
PY
