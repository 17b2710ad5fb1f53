#!/bin/sh
# Peer figures (issue 18; not run by make bench or in CI): xg run, xg-run
# and the peers installed from npm into a temporary folder
#   codex    @openai/codex                   (model_providers.fake, Responses)
#   pi       @mariozechner/pi-coding-agent   (a models.json provider, Chat)
#   claude   @anthropic-ai/claude-code       (ANTHROPIC_BASE_URL, Messages)
# through the same scripted scenarios against the loopback fake provider,
# N times each (default 5) after one run that warms the page cache.  Each
# is pointed at the fake provider through its documented base-URL setting,
# with a home of its own in the temporary folder.  The scenarios, chosen
# with SCENARIOS (default "turn tools"):
#   turn    bench/start.sh's and bench/run.sh's: one turn, "say done", in a
#           1,000-file git repository, answered with text.  For each
#             first_request_ms   process start to its first model request
#                                fully received (requests that are not the
#                                turn's, such as a peer's title or quota
#                                probes, count too)
#             turn_ms, peak_rss_kib   the whole run, and its largest process
#   tools   bench/rounds.sh's, with each program's own shell tool: ROUNDS
#           rounds (default 20, at most 999) in an empty folder, each a
#           reply that calls the tool once (xg's bash, codex's exec_command,
#           pi's bash, claude's Bash) to run printf of the round's mark,
#           NAME-round-007 say, then a text reply.  A reply is chosen by the
#           marks the request carries back, so a request that is not the
#           scenario's (a title, a probe) takes none of its steps; a tool
#           whose output does not come back is asked for again, and a run
#           that has not ended in 120 s is stopped and reported with the
#           rounds it did.  Each program runs its tools unattended: xg as it
#           is, codex with --dangerously-bypass-approvals-and-sandbox, pi as
#           it is (it asks nothing), claude with --allowedTools=Bash (its
#           --dangerously-skip-permissions refuses to run as root).  For each
#             wall_ms        the whole run
#             gap_ms         the harness's time for one round, the tool's
#                            own run included: from the fake provider's
#                            writing the last byte of a reply to its having
#                            read the whole of the next request, the median
#                            of a run's ROUNDS gaps
#             peak_rss_kib   the largest process of the run
# as medians over the runs, and each peer's figures as multiples of xg
# run's.  A peer that cannot be installed or run, or whose scenario does not
# come to its end, is reported with a line saying why.  Needs npm and the
# npm registry; PEERS="codex pi" picks some; PEERS_DIR=DIR reuses an
# installation.  Run from the source tree: sh bench/peers.sh
set -eu
cd "$(dirname "$0")/.."
make -s all tests/bin/xg-test >/dev/null
N=${N:-5}
PEERS=${PEERS:-codex pi claude}
SCENARIOS=${SCENARIOS:-turn tools}
ROUNDS=${ROUNDS:-20}
# The marks have three digits.
[ "$ROUNDS" -ge 1 ] && [ "$ROUNDS" -le 999 ] || { echo "bench/peers.sh: ROUNDS is 1 to 999" >&2; exit 1; }
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
# The tool rounds of each program, NAME being its name with "_" for a
# space: the prompt names NAME-round-000, the reply to a request that carries
# back NAME-round-K-1 but not yet NAME-round-K calls the tool to print
# NAME-round-K, and one that carries back NAME-round-ROUNDS gets the last
# reply.  The command holds the mark's parts, never the mark itself, and
# each round's call has an id of its own (given an id it has seen, claude
# sends the same request again, for ever).  Every other request, in every wire
# kind, gets a text reply.  The fake provider tries the steps in turn, each
# a search of the request; that time is in wall_ms, not in gap_ms.
python3 - "$ROUNDS" >"$tmp/script" <<'PY'
import json, sys
rounds = int(sys.argv[1])
usage = {"input": 1000, "cached_input": 900, "output": 8}
shell = {"xg_run": ("bash", "command"), "xg-run": ("bash", "command"),
         "codex": ("exec_command", "cmd"), "pi": ("bash", "command"), "claude": ("Bash", "command")}
step = lambda s: print(json.dumps(dict(s, usage=usage, repeat=100000)))
# First, so that a request of the turn scenario is matched at once.
step({"unless": "-round-000", "text": "Done: nothing to change."})
for name, (tool, key) in shell.items():
    for k in range(1, rounds + 1):
        step({"when": "%s-round-%03d" % (name, k - 1), "unless": "%s-round-%03d" % (name, k),
              "tool_calls": [{"id": "call_%03d" % k, "name": tool,
                              "args": {key: "printf '%s-round-%%03d\\n' %d" % (name, k)}}]})
    step({"when": "%s-round-%03d" % (name, rounds), "text": "Done: %d rounds." % rounds})
step({"text": "Done: nothing to change."})
PY
bench_provider "$tmp/script" --served "$tmp/served"
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
mkdir -p "$tmp/work"
python3 - "$PWD/tests/bin/xg-test" "$PWD/bin" "$repo" "$tmp" "$N" "$port" "$peers" "$PEERS" \
	"$SCENARIOS" "$ROUNDS" <<'PY'
import json, os, signal, subprocess, sys
driver, bindir, repo, tmp, n, port, peers, wanted, scenarios, rounds = sys.argv[1:11]
n, rounds, wanted, scenarios = int(n), int(rounds), wanted.split(), scenarios.split()
bin_ = peers + "/node_modules/.bin/"
# Each program: its command line before the prompt, its environment, and
# what lets it run tools unattended.
progs = {
    "xg run": ([bindir + "/xg", "run", "--json", "--model", "fake/m"], {}, []),
    "xg-run": ([bindir + "/xg-run", "--model", "fake/m"], {}, []),
    "codex": ([bin_ + "codex", "exec", "--skip-git-repo-check"], {"CODEX_HOME": tmp + "/codex"},
              ["--dangerously-bypass-approvals-and-sandbox"]),
    "pi": ([bin_ + "pi", "-p", "--provider", "fake", "--model", "m"],
           {"PI_CODING_AGENT_DIR": tmp + "/pi/agent", "HOME": tmp + "/pi"}, []),
    "claude": ([bin_ + "claude", "-p", "--model", "m"],
               {"ANTHROPIC_BASE_URL": "http://127.0.0.1:%s" % port, "ANTHROPIC_API_KEY": "bench",
                "CLAUDE_CONFIG_DIR": tmp + "/claude", "DISABLE_TELEMETRY": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"},
               ["--allowedTools=Bash"]),
}

def records(path):
    try:
        return [json.loads(l) for l in open(path)]
    except OSError:
        return []

def run(argv, extra, cwd, timeout):
    """One run through the driver: its figures (None if it failed), the
    requests it made, and why it failed."""
    before = len(records(tmp + "/log"))
    e = dict(os.environ)
    e.update(extra)
    # A session of its own, so that a run that times out goes with all its
    # processes.
    p = subprocess.Popen([driver, "run"] + argv, cwd=cwd, env=e, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None, records(tmp + "/log")[before:], "timed out after %d s" % timeout
    new = records(tmp + "/log")[before:]
    try:
        stats = json.loads(err.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, new, "no figures"
    if stats["status"] != 0 or not new:
        return None, new, "exit %s, %d requests: %s" % (
            stats["status"], len(new), err.decode()[-300:].replace("\n", " "))
    return stats, new, None

def turn(name):
    argv, extra, _ = progs[name]
    stats, new, why = run(argv + ["say done"], extra, repo, 120)
    if stats is None:
        return None, why
    return (new[0]["t"] * 1000 - stats["start_us"] / 1000, stats["ms"], stats["maxrss_kib"],
            len(new)), None

def tools(name):
    argv, extra, unattended = progs[name]
    mark = name.replace(" ", "_") + "-round-%03d"
    if name.startswith("xg"):
        extra = dict(extra, XG_WORK_SLICE="off")  # as in bench/rounds.sh
    # A tool whose output does not come back is called again, as the same
    # round, until the timeout.
    stats, new, why = run(argv + unattended + ["Print the marks, from %s on." % (mark % 0)],
                          extra, tmp + "/work", 120)
    own = [q for q in new if mark % 0 in json.dumps(q["body"])]
    last = json.dumps(own[-1]["body"]) if own else ""
    done = max([k for k in range(rounds + 1) if mark % k in last] or [0])
    if stats is not None and done < rounds:
        why = "it ended"
    if stats is None or done < rounds:
        return None, "%s; %d of %d rounds done, %d requests" % (why, done, rounds, len(new))
    served = {s["n"]: s["t"] for s in records(tmp + "/served")}
    gaps = [(b["t"] - served[a["n"]]) * 1000 for a, b in zip(own, own[1:]) if a["n"] in served]
    return (stats["ms"], med(gaps), stats["maxrss_kib"], len(new)), None

def med(v):
    return sorted(v)[len(v) // 2]

def measure(name, scenario):
    """The medians of n runs after a warm-up, or None and why not."""
    r, why = scenario(name)
    if r is None:
        return None, why
    rows = []
    for i in range(n):
        r, why = scenario(name)
        if r is not None:
            rows.append(r)
    if not rows:
        return None, why
    return [med([r[k] for r in rows]) for k in range(len(rows[0]))] + [len(rows)], None

def show_turn(name, v):
    f, t, m, q, runs = v
    print(json.dumps({"cmd": name, "first_request_ms": round(f, 1), "turn_ms": round(t, 1),
                      "peak_rss_kib": m, "requests": q, "runs": runs}))

def show_turn_vs(name, v, base):
    print(json.dumps({"cmd": name, "vs": "xg run", "first_request": round(v[0] / base[0], 1),
                      "turn": round(v[1] / base[1], 1), "peak_rss": round(v[2] / base[2], 1)}))

def show_tools(name, v):
    w, g, m, q, runs = v
    print(json.dumps({"cmd": name, "scenario": "tools", "rounds": rounds, "wall_ms": round(w, 1),
                      "gap_ms": round(g, 2), "peak_rss_kib": m, "requests": q, "runs": runs}))

def show_tools_vs(name, v, base):
    print(json.dumps({"cmd": name, "scenario": "tools", "vs": "xg run",
                      "wall": round(v[0] / base[0], 1), "gap": round(v[1] / base[1], 1),
                      "peak_rss": round(v[2] / base[2], 1)}))

kinds = {"turn": (turn, show_turn, show_turn_vs), "tools": (tools, show_tools, show_tools_vs)}
for s in scenarios:
    if s not in kinds:
        print(json.dumps({"scenario": s, "skipped": "unknown scenario"}))
for s in [s for s in kinds if s in scenarios]:
    scenario, show, show_vs = kinds[s]
    res = {}
    for name, (argv, _, _) in progs.items():
        if not name.startswith("xg") and name not in wanted:
            continue
        if not os.access(argv[0], os.X_OK):
            print(json.dumps({"peer": name, "scenario": s, "skipped": "not installed"}))
            continue
        v, why = measure(name, scenario)
        if v is None:
            print(json.dumps({"peer": name, "scenario": s, "skipped": why}))
            continue
        res[name] = v
        show(name, v)
    base = res.get("xg run")
    for name, v in res.items():
        if base and name != "xg run":
            show_vs(name, v, base)
PY
