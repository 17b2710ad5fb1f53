#!/bin/sh
# Peer figures (issue 18; not run by make bench or in CI): the scenario of
# bench/start.sh and bench/run.sh (one turn, "say done", in a 1,000-file
# git repository) against the loopback fake provider, N times each
# (default 5), for xg run, xg-run and the peers installed from npm into a
# temporary folder:
#   codex    @openai/codex                   (model_providers.fake, Responses)
#   pi       @mariozechner/pi-coding-agent   (a models.json provider, Chat)
#   claude   @anthropic-ai/claude-code       (ANTHROPIC_BASE_URL, Messages)
# Each is pointed at the fake provider through its documented base-URL
# setting, with a home of its own in the temporary folder.  Prints for each
#   first_request_ms   process start to its first model request fully
#                      received (requests that are not the turn's, such as
#                      a peer's title or quota probes, count too)
#   turn_ms, peak_rss_kib   the whole run, and its largest process
# as medians, and each peer's figures as multiples of xg run's.  A peer that
# cannot be installed or run is skipped with a line saying why.  Needs npm
# and the npm registry; PEERS="codex pi" picks some; PEERS_DIR=DIR reuses
# an installation.  Run from the source tree: sh bench/peers.sh
set -eu
cd "$(dirname "$0")/.."
make -s all tests/bin/xg-test >/dev/null
N=${N:-5}
PEERS=${PEERS:-codex pi claude}
. bench/lib.sh
bench_tmp
peers=${PEERS_DIR:-$tmp/npm}
if command -v npm >/dev/null; then
	for p in $PEERS; do
		case $p in
		codex) pkg=@openai/codex ;;
		pi) pkg=@mariozechner/pi-coding-agent ;;
		claude) pkg=@anthropic-ai/claude-code ;;
		*) echo "{\"peer\":\"$p\",\"skipped\":\"unknown peer\"}"; continue ;;
		esac
		[ -x "$peers/node_modules/.bin/$p" ] ||
			npm install --prefix "$peers" --no-audit --no-fund --loglevel=error "$pkg" \
				>"$tmp/npm-$p.log" 2>&1 ||
			echo "{\"peer\":\"$p\",\"skipped\":\"npm install $pkg failed\"}"
	done
else
	echo '{"skipped":"no npm: the peers are left out"}'
fi
# Replies in every wire kind: a text reply, for as many requests as come.
echo '{"text":"Done: nothing to change.","usage":{"input":1000,"cached_input":900,"output":8},"repeat":100000}' >"$tmp/script"
bench_provider "$tmp/script"
bench_home
bench_catalog
repo="$tmp/repo"
bench_repo "$repo"
# Each peer's home and settings.
mkdir -p "$tmp/codex" "$tmp/pi/agent" "$tmp/claude"
cat >"$tmp/codex/config.toml" <<TOML
model = "m"
model_provider = "fake"
[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:$port/v1"
env_key = "XG_BENCH_KEY"
wire_api = "responses"
TOML
cat >"$tmp/pi/agent/models.json" <<JSON
{"providers": {"fake": {"baseUrl": "http://127.0.0.1:$port/v1", "api": "openai-completions",
  "apiKey": "XG_BENCH_KEY", "models": [{"id": "m", "name": "m", "contextWindow": 100000,
  "maxTokens": 4096}]}}}
JSON
python3 - "$PWD/tests/bin/xg-test" "$PWD/bin" "$repo" "$tmp" "$N" "$port" "$peers" "$PEERS" <<'PY'
import json, os, subprocess, sys
driver, bindir, repo, tmp, n, port, peers, wanted = sys.argv[1:9]
n = int(n)
logpath = tmp + "/log"
bin_ = peers + "/node_modules/.bin/"
env = dict(os.environ)
cmds = {
    "xg run": ([bindir + "/xg", "run", "--json", "--model", "fake/m", "say done"], {}),
    "xg-run": ([bindir + "/xg-run", "--model", "fake/m", "say done"], {}),
    "codex": ([bin_ + "codex", "exec", "--skip-git-repo-check", "say done"],
              {"CODEX_HOME": tmp + "/codex"}),
    "pi": ([bin_ + "pi", "-p", "--provider", "fake", "--model", "m", "say done"],
           {"PI_CODING_AGENT_DIR": tmp + "/pi/agent", "HOME": tmp + "/pi"}),
    "claude": ([bin_ + "claude", "-p", "--model", "m", "say done"],
               {"ANTHROPIC_BASE_URL": "http://127.0.0.1:%s" % port, "ANTHROPIC_API_KEY": "bench",
                "CLAUDE_CONFIG_DIR": tmp + "/claude", "DISABLE_TELEMETRY": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}),
}
def lines():
    try:
        return open(logpath).readlines()
    except OSError:
        return []
def one(argv, extra):
    before = len(lines())
    e = dict(env); e.update(extra)
    try:
        p = subprocess.run([driver, "run"] + argv, cwd=repo, env=e, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    try:
        stats = json.loads(p.stderr.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, "no figures"
    new = [json.loads(l) for l in lines()[before:]]
    if stats["status"] != 0 or not new:
        return None, "exit %s, %d requests: %s" % (stats["status"], len(new),
                                                   p.stderr.decode()[-300:].replace("\n", " "))
    return (new[0]["t"] * 1000 - stats["start_us"] / 1000, stats["ms"], stats["maxrss_kib"],
            len(new)), None
med = lambda v: sorted(v)[len(v) // 2]
res = {}
for name, (argv, extra) in cmds.items():
    if not name.startswith("xg") and (name not in wanted.split() or not os.access(argv[0], os.X_OK)):
        print(json.dumps({"peer": name, "skipped": "not installed"}))
        continue
    r, why = one(argv, extra)  # warm-up
    if r is None:
        print(json.dumps({"peer": name, "skipped": why}))
        continue
    rows = []
    for i in range(n):
        r, why = one(argv, extra)
        if r is not None:
            rows.append(r)
    if not rows:
        print(json.dumps({"peer": name, "skipped": why}))
        continue
    res[name] = [med([r[k] for r in rows]) for k in range(4)]
    f, t, m, q = res[name]
    print(json.dumps({"cmd": name, "first_request_ms": round(f, 1), "turn_ms": round(t, 1),
                      "peak_rss_kib": m, "requests": q, "runs": len(rows)}))
base = res.get("xg run")
for name, v in res.items():
    if base and name != "xg run":
        print(json.dumps({"cmd": name, "vs": "xg run", "first_request": round(v[0] / base[0], 1),
                          "turn": round(v[1] / base[1], 1), "peak_rss": round(v[2] / base[2], 1)}))
PY
