#!/bin/sh
# Start figures (issues 18 and 30): from a process's start to its first request
# having been fully received by the loopback fake provider, in a 1,000-file
# git repository with one edited file, N times each (default 15), side by
# side in one run, alternating:
#   xg run --json TEXT   the run as xg composes it (xg, then xg-run)
#   xg-run TEXT          xg-run alone
#   curl                 curl POSTing the body xg-run sent, to the same
#                        server: the limit the figures are measured against
# and the ratios xg run / curl and xg-run / curl of the medians (target
# xg run <= 1.4x curl), then what a bare fork+exec of /bin/true costs on
# the machine.  It prints figures and asserts nothing.
# Run from the source tree: sh bench/start.sh
set -eu
cd "$(dirname "$0")/.."
make -s all tests/bin/xg-test >/dev/null
command -v curl >/dev/null || { echo "bench/start.sh: needs curl" >&2; exit 1; }
N=${N:-15}
. bench/lib.sh
bench_tmp
echo "{\"text\":\"Done: nothing to change.\",\"usage\":{\"input\":1000,\"cached_input\":900,\"output\":8},\"repeat\":$((3 * N + 6))}" >"$tmp/script"
bench_provider "$tmp/script"
bench_home
bench_catalog
repo="$tmp/repo"
bench_repo "$repo"
python3 - "$PWD/tests/bin/xg-test" "$PWD/bin" "$repo" "$tmp" "$N" "$port" <<'PY'
import json, subprocess, sys, time
driver, bindir, repo, tmp, n, port = [sys.argv[1], "run"], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
logpath = tmp + "/log"
def last_t():
    return json.loads(open(logpath).readlines()[-1])["t"]
def xg(argv):
    p = subprocess.run(driver + argv + ["--model", "fake/m", "say done"], cwd=repo,
                       stdin=subprocess.DEVNULL, capture_output=True)
    stats = json.loads(p.stderr.decode().strip().splitlines()[-1])
    assert stats["status"] == 0, p.stderr.decode()
    return last_t() * 1000 - stats["start_us"] / 1000
def curl():
    p = subprocess.run(driver + ["/usr/bin/curl", "-s", "-o", "/dev/null", "-N",
                                 "-H", "content-type: application/json",
                                 "-H", "authorization: Bearer bench",
                                 "--data-binary", "@" + tmp + "/body",
                                 "http://127.0.0.1:%s/v1/chat/completions" % port],
                       stdin=subprocess.DEVNULL, capture_output=True)
    stats = json.loads(p.stderr.decode().strip().splitlines()[-1])
    assert stats["status"] == 0, p.stderr.decode()
    return last_t() * 1000 - stats["start_us"] / 1000
kinds = {"xg run": lambda: xg([bindir + "/xg", "run", "--json"]),
         "xg-run": lambda: xg([bindir + "/xg-run"]), "curl": curl}
kinds["xg-run"]()
body = json.loads(open(logpath).readlines()[-1])["body"]
open(tmp + "/body", "w").write(json.dumps(body, separators=(",", ":")))
for f in kinds.values():
    f()  # warm the page cache
v = {k: [] for k in kinds}
for i in range(n):
    for k, f in kinds.items():
        v[k].append(f())
med = {}
for k, x in v.items():
    x = sorted(x)
    med[k] = x[len(x) // 2]
    print(json.dumps({"cmd": k, "what": "first_request_ms", "median": round(med[k], 2),
                      "min": round(x[0], 2), "max": round(x[-1], 2), "runs": len(x)}))
for k in ("xg run", "xg-run"):
    print(json.dumps({"what": "%s / curl" % k, "ratio": round(med[k] / med["curl"], 2),
                      "target": 1.4 if k == "xg run" else None}))
# What a process start costs here: xg run has two on its way to the
# request (xg, then xg-run, which resolves and compiles itself and starts
# xg-snapshot once the request is out); curl has one.
t = []
for _ in range(100):
    t0 = time.perf_counter()
    subprocess.run(["/bin/true"])
    t.append((time.perf_counter() - t0) * 1000)
t.sort()
print(json.dumps({"what": "floor_ms", "fork_exec_true": round(t[len(t) // 2], 2)}))
PY
