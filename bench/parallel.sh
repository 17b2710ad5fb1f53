#!/bin/sh
# Parallel figures (issue 18): RUNS runs at once (default 100) on one
# machine, of CMD (default xg-run; CMD="xg run" for xg and its xg-run),
# each one turn in a small git repository of its own against one loopback
# fake provider that streams its reply slowly enough (DELAY_MS between
# events, default 400, about 3 s a reply) for all the runs to
# overlap.  It prints
#   wall_ms         from the first start to the last exit
#   pss_kib         the largest sum of proportional set sizes over the xg
#                   processes, sampled from /proc/*/smaps_rollup every few
#                   milliseconds while they run (shared libraries' pages
#                   counted once, split over the processes mapping them),
#                   and that sum divided by RUNS (target <= 1 MiB per run)
#   processes       the xg processes alive at that peak, and pss_kib per
#                   process (the per-run figure is only fair when all the
#                   runs were alive at once)
#   failures        runs that did not exit 0 with a completed run_end
# and then the floor: RUNS processes at once that only load libcurl and
# set it up with one handle (bench/bin/curl-floor --hold), their summed
# Pss divided by RUNS.  Each process relocates libcurl's thirty libraries
# into pages of its own, so no run that loads libcurl can be below it;
# last, the runs' Pss as a ratio to that floor: at the peak per run and
# per process, and per run in the steady state, when every run waits on
# its reply and no xg-snapshot is alive (the peak may catch some that the
# last runs to start have just started).
# It asserts nothing.  Run from the source tree: sh bench/parallel.sh
set -eu
cd "$(dirname "$0")/.."
make -s all bench/bin/curl-floor >/dev/null
RUNS=${RUNS:-100}
CMD=${CMD:-xg-run}
DELAY_MS=${DELAY_MS:-400}
. bench/lib.sh
bench_tmp
echo "{\"text\":\"Done: nothing to change at all.\",\"chunk\":4,\"delay_ms\":$DELAY_MS,\"repeat\":$((RUNS + 5))}" >"$tmp/script"
bench_provider "$tmp/script"
bench_home
bench_catalog
mkdir -p "$tmp/seed"
(
	cd "$tmp/seed"
	git init -q .
	for i in 1 2 3 4 5 6 7 8 9 10; do printf 'file %d\n' $i >f$i.txt; done
	git add -A
	git -c user.name=b -c user.email=b@example.com commit -qm files
)
i=0
while [ $i -lt "$RUNS" ]; do cp -a "$tmp/seed" "$tmp/r$i"; i=$((i + 1)); done
python3 - "$PWD/bin" "$tmp" "$RUNS" "$CMD" <<'PY'
import json, os, subprocess, sys, threading, time
bindir, tmp, runs, cmd = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
argv = [bindir + "/xg", "run", "--json"] if cmd == "xg run" else [bindir + "/xg-run"]
names = ("xg", "xg-run", "xg-snapshot", "xg-choices", "xg-prompt-compi")
peak = {"pss": 0, "procs": 0}
# The same over the samples where every run is alive and nothing else is
# (no xg-snapshot a run started): the runs waiting on their replies, the
# state that lasts.
steady = {"pss": 0}
done = threading.Event()
def pss(pid):
    for line in open("/proc/%s/smaps_rollup" % pid):
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0
def sample():
    while not done.is_set():
        total, procs, own = 0, 0, 0
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                comm = open("/proc/%s/comm" % p).read().strip()
                if comm not in names:
                    continue
                total += pss(p); procs += 1; own += comm == names[1]
            except OSError:
                pass
        if total > peak["pss"]:
            peak["pss"], peak["procs"] = total, procs
        if cmd == "xg-run" and own == procs == runs and total > steady["pss"]:
            steady["pss"] = total
        time.sleep(0.005)
th = threading.Thread(target=sample); th.start()
t0 = time.perf_counter()
ps = [subprocess.Popen(argv + ["--model", "fake/m", "say done"], cwd="%s/r%d" % (tmp, i),
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
      for i in range(runs)]
fail = 0
for p in ps:
    out, err = p.communicate()
    ok = p.returncode == 0 and any('"run_end"' in l and '"completed"' in l
                                   for l in out.decode().splitlines())
    fail += not ok
wall = (time.perf_counter() - t0) * 1000
done.set(); th.join()
print(json.dumps({"cmd": cmd, "runs": runs, "wall_ms": round(wall), "pss_kib": peak["pss"],
                  "pss_mib_per_run": round(peak["pss"] / 1024 / runs, 2), "target_mib": 1,
                  "processes": peak["procs"],
                  "pss_mib_per_process": round(peak["pss"] / 1024 / max(1, peak["procs"]), 2),
                  "failures": fail}))
# The floor, measured the same way on processes that hold libcurl set up.
floor = [subprocess.Popen([bindir + "/../bench/bin/curl-floor", "--hold"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) for _ in range(runs)]
for p in floor:
    p.stdout.readline()
total = sum(pss(p.pid) for p in floor)
for p in floor:
    p.stdin.close()
    p.wait()
print(json.dumps({"floor": "libcurl set up, nothing else", "processes": runs, "pss_kib": total,
                  "pss_mib_per_process": round(total / 1024 / runs, 2)}))
# The figure issue 30 names: what a run costs against that floor, per
# run and per process (the runs' own processes only, when some others,
# such as xg-snapshot, were alive at the peak too), and per run while all
# the runs wait on their replies with nothing else alive (xg-run only).
print(json.dumps({"what": "pss / floor", "per_run": round(peak["pss"] / runs / (total / runs), 3),
                  "per_process": round(peak["pss"] / max(1, peak["procs"]) / (total / runs), 3),
                  "steady_per_run": round(steady["pss"] / total, 3) if steady["pss"] else None,
                  "target": 1.1}))
PY
