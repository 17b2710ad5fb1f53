#!/bin/sh
# What the dispatcher adds to a run: "xg run --json TEXT", which starts
# xg-run alone, fed the request, against sh(1) feeding xg-run the same
# request (the printf of the "xg run --dry-run" line), in a 1,000-file git
# repository, N times (default 30), with a stand-in xg-run that reads its
# records and exits (so only the dispatcher counts):
#   xg_ms        xg run --json, start to exit
#   sh_ms        sh -c "printf ... | xg-run", start to exit
#   dry_run_ms   xg run --dry-run alone
#   xg_rss_kib   the peak resident set of the largest process of xg run
# as medians, with the minimum and maximum.
# Run from the source tree: sh bench/dispatch.sh
set -eu
cd "$(dirname "$0")/.."
make -s all tests/bin/xg-test >/dev/null
driver="$PWD/tests/bin/xg-test"
N=${N:-30}
. bench/lib.sh
bench_tmp
bench_home
# A model to choose with no key and no network, as in bench/choices.sh:
# the stand-in xg-run below never connects to it.  The upstream stages are
# there for the --dry-run line.
unset XG_ACCOUNT OPENAI_API_KEY ANTHROPIC_API_KEY OPENROUTER_API_KEY
export LLAMACPP_BASE_URL=http://127.0.0.1:8080/v1
mkdir -p "$tmp/tree" "$tmp/repo"
cp bin/xg "$tmp/tree/"
for p in xg-snapshot xg-choices xg-prompt-compile; do ln -s "$PWD/bin/$p" "$tmp/tree/$p"; done
printf '#!/bin/sh\nexec cat >/dev/null\n' >"$tmp/tree/xg-run"
chmod +x "$tmp/tree/xg-run"
export PATH="$tmp/tree:$PATH"
(
	cd "$tmp/repo"
	git init -q .
	i=0
	while [ $i -lt 1000 ]; do
		mkdir -p "d$((i % 20))"
		echo "file $i" >"d$((i % 20))/f$i.txt"
		i=$((i + 1))
	done
	git add -A && git -c user.name=b -c user.email=b@b commit -qm init
)
cd "$tmp/repo"
cmd=$(xg run --dry-run 'fix the failing test')
cmd="${cmd% | xg-snapshot | *} | xg-run"
python3 - "$N" "$cmd" "$driver" <<'PY'
import json, os, statistics, subprocess, sys, time
n, cmd, driver = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def timed(argv):
    t = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return (time.monotonic() - t) * 1000
def show(name, xs, unit="ms"):
    print("%-12s median %7.2f %s  (min %.2f, max %.2f, n=%d)" % (
        name, statistics.median(xs), unit, min(xs), max(xs), len(xs)))
xg = ["xg", "run", "--json", "fix the failing test"]
for _ in range(3):
    timed(xg)
show("xg_ms", [timed(xg) for _ in range(n)])
show("sh_ms", [timed(["sh", "-c", cmd]) for _ in range(n)])
show("dry_run_ms", [timed(["xg", "run", "--dry-run", "fix the failing test"]) for _ in range(n)])
# Through xg-test run: a child forked from this Python process would start
# with Python's pages resident and report those as its peak.
rss = []
for _ in range(n):
    p = subprocess.run([driver, "run"] + xg, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rss.append(json.loads(p.stderr.decode().strip().splitlines()[-1])["maxrss_kib"])
show("xg_rss_kib", rss, "KiB")
PY
