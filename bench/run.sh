#!/bin/sh
# Run figures (issue 7): one turn in a 1,000-file git repository with one
# edited file, against the loopback fake provider, N times (default 15), of
#   xg run --json TEXT   xg, which starts xg-run alone, fed the request
#   xg-run TEXT          xg-run alone, which snapshots, resolves the model
#                        and compiles the pack itself
# and for each:
#   first_request_ms  process start to the request arriving at the fake
#                     provider (target 15 ms)
#   turn_ms           the whole run, start to exit (target 40 ms)
#   peak_rss_kib      peak resident set of the largest process (target
#                     under 10 MiB)
# as medians, with the minimum and maximum.  For scale, the same figures of
# a program that only links libcurl and sets it up (bench/bin/curl-floor): the
# floor any process that speaks HTTP through libcurl starts from here.
# Run from the source tree: sh bench/run.sh
set -eu
cd "$(dirname "$0")/.."
make -s all tests/bin/xg-test bench/bin/curl-floor >/dev/null
N=${N:-15}
. bench/lib.sh
bench_tmp
echo "{\"text\":\"Done: nothing to change.\",\"usage\":{\"input\":1000,\"cached_input\":900,\"output\":8},\"repeat\":$((2 * N + 2))}" >"$tmp/script"
bench_provider "$tmp/script"
bench_home
bench_catalog
repo="$tmp/repo"
bench_repo "$repo"
python3 - "$PWD/tests/bin/xg-test" "$PWD/bin" "$repo" "$tmp/log" "$N" <<'PY'
import json, subprocess, sys
driver, bindir, repo, logpath, n = [sys.argv[1], "run"], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
def one(argv):
    p = subprocess.run(driver + argv + ["--model", "fake/m", "say done"], cwd=repo,
                       stdin=subprocess.DEVNULL, capture_output=True)
    stats = json.loads(p.stderr.decode().strip().splitlines()[-1])
    assert stats["status"] == 0, p.stderr.decode()
    end = [json.loads(l) for l in p.stdout.decode().splitlines() if '"run_end"' in l][0]
    assert end["status"] == "completed", end
    log = [json.loads(l) for l in open(logpath)]
    return log[-1]["t"] * 1000 - stats["start_us"] / 1000, stats["ms"], stats["maxrss_kib"]
def show(cmd, name, v, target):
    v = sorted(v)
    print(json.dumps({"cmd": cmd, "what": name, "median": round(v[len(v) // 2], 1),
                      "min": round(v[0], 1), "max": round(v[-1], 1), "target": target,
                      "runs": len(v)}))
for cmd, argv in (("xg run", [bindir + "/xg", "run", "--json"]), ("xg-run", [bindir + "/xg-run"])):
    one(argv)  # warm the page cache and the fake provider's connection handling
    first, turn, rss = [], [], []
    for i in range(n):
        f, t, m = one(argv)
        first.append(f); turn.append(t); rss.append(m)
    show(cmd, "first_request_ms", first, 15)
    show(cmd, "turn_ms", turn, 40)
    show(cmd, "peak_rss_kib", rss, 10240)
floor = [subprocess.run(driver + [bindir + "/../bench/bin/curl-floor"],
                        capture_output=True) for i in range(n)]
floor = [json.loads(p.stderr.decode().strip().splitlines()[-1]) for p in floor]
show("libcurl alone", "turn_ms", [f["ms"] for f in floor], None)
show("libcurl alone", "peak_rss_kib", [f["maxrss_kib"] for f in floor], None)
PY
