#!/bin/sh
# xg-log on a history of 100,000 runs: the list reads the runs index from
# its end, so "xg-log -n 20" should cost what 20 lines cost, whatever the
# history's length.  Target: well under 100 ms a run, process start
# included.  "xg-log usage" reads every line, for contrast.
#
#   sh bench/log.sh [runs] [lines]
set -eu
cd "$(dirname "$0")/.."
runs=${1:-50}
lines=${2:-100000}
bin=$PWD/bin/xg-log
[ -x "$bin" ] || { echo "bench/log.sh: build first (make)" >&2; exit 1; }
. bench/lib.sh
bench_tmp
bench_home
mkdir -p "$XG_HOME/state/runs"

# An index of $lines runs as xg-run writes them, a minute apart.
python3 - "$XG_HOME/state/runs.ndjson" "$lines" <<-'PY'
import json, sys, time
path, n = sys.argv[1], int(sys.argv[2])
t0 = time.time() - n * 60
with open(path, "w") as out:
    for i in range(n):
        t = time.gmtime(t0 + i * 60)
        stamp = time.strftime("%Y%m%d-%H%M%S", t)
        out.write(json.dumps({
            "type": "run", "run": "%s-%08x" % (stamp, i), "conversation": "c-%d" % (i // 5),
            "parent": None, "workspace": "/home/ada/src/project%d" % (i % 7),
            "account": "default", "started": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", t),
            "ended": time.strftime("%Y-%m-%dT%H:%M:%S.500Z", t), "ms": 30500,
            "status": "completed", "stop": None, "reason": None, "exit": 0, "mode": "normal",
            "model": "openai/gpt-5.1", "effort": "medium", "variant": "default@bbddbd7a3442",
            "snapshot": "7e9ff1fb90b8b82cd4a43e0f1027c7622e8c4436",
            "usage": {"input": 41200 + i % 1000, "cached_input": 36000, "output": 2100},
            "cost": 0.0321, "tool_calls": 6, "requests": 7, "slices": 1,
            "request": "make the failing test pass, case %d" % i}, separators=(",", ":")) + "\n")
PY
size=$(wc -c <"$XG_HOME/state/runs.ndjson")

# Milliseconds per run of "$@", averaged over $runs runs.
per_run() {
	start=$(date +%s%N)
	i=0
	while [ $i -lt "$runs" ]; do "$@" </dev/null >/dev/null; i=$((i + 1)); done
	end=$(date +%s%N)
	awk "BEGIN { printf \"%.2f\", ($end - $start) / 1e6 / $runs }"
}

"$bin" -n 20 | head -1 >/dev/null
echo "index: $lines runs, $((size / 1048576)) MiB"
echo "xg-log -n 20:            $(per_run "$bin" -n 20) ms a run (target: well under 100)"
echo "xg-log -n 20 --json:     $(per_run "$bin" -n 20 --json) ms a run"
echo "xg-log --status failed:  $(runs=3 per_run "$bin" --status failed) ms a run (no match: every line read)"
echo "xg-log usage --by model: $(runs=3 per_run "$bin" usage --by model) ms a run (every line read)"
