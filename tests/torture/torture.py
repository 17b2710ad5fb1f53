#!/usr/bin/env python3
"""torture: xg's state under SIGKILL and contention (make torture; a small
version runs in make check through tests/torture.bats).

    torture.py [--runs N] [--workers W] [--writers K] [--seed S] [--keep]

Part one kills runs.  W workers each start N/W runs of xg-run, one after
another, on conversations of their own (three each, in turn), against the
loopback fake provider, whose script makes the model call bash (a command
that starts a background sleeper, then a short one) or reply; each run is
killed with SIGKILL at a random moment between 0 and 1.5 s, or left to end.
Then:
  - every conversation is read: each line a JSON object (a torn last line
    aside, and a torn line a later append followed, which is counted), and
    every tool_result after the assistant message that called it;
  - every conversation is resumed by a run left alone, which must complete,
    and the request it sent must be a valid exchange: every tool message
    answers a call made before it, and every call is answered before the
    next message;
  - every runs/ID/run.json that exists parses, as does every line of every
    events.ndjson but a torn last one;
  - no process of any tool is left (looked for in /proc after a grace of
    two seconds, which the keeper's one-second look fits in).
Part two: K concurrent writers of one account's choices.json (the store
xg-choices set uses, each its own mode) and K concurrent appenders to one
conversation; then
choices.json holds every mode and the conversation every entry, whole.

Prints one line of figures per part as JSON and exits 1 at the first fault,
naming it.  XG_HOME is a fresh temporary directory (kept with --keep).
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARK = "313.25"		# the background sleeper's argument: found in /proc


def fail(what):
    print("torture: " + what, file=sys.stderr)
    sys.exit(1)


class Provider:
    """The fake provider on a long script of tool calls and replies."""

    def __init__(self, home, steps):
        self.dir = tempfile.mkdtemp(dir=home)
        script = os.path.join(self.dir, "script.ndjson")
        with open(script, "w") as f:
            for s in steps:
                f.write(json.dumps(s) + "\n")
        self.log = os.path.join(self.dir, "log.ndjson")
        port_file = os.path.join(self.dir, "port")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(SRC, "bin/xg-fake-provider"), "--script", script,
             "--log", self.log, "--port-file", port_file, "--idle-exit", "600"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(400):
            if os.path.exists(port_file) and os.path.getsize(port_file):
                break
            time.sleep(0.05)
        else:
            fail("the fake provider did not start")
        with open(port_file) as f:
            self.url = "http://127.0.0.1:%s/v1" % f.read().strip()

    def requests(self):
        with open(self.log) as f:
            return [json.loads(l) for l in f if l.strip()]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def catalog(home, url):
    os.makedirs(os.path.join(home, "config"), exist_ok=True)
    with open(os.path.join(home, "config", "models.json"), "w") as f:
        json.dump({"providers": {"fake": {
            "kind": "openai-chat", "base_url": url, "key_env": "XG_TORTURE_KEY",
            "models": {"m": {"context_window": 1000000, "max_output_tokens": 4096,
                             "efforts": [], "default_effort": None}}}}}, f)


def script_steps(n, rng):
    steps = []
    for i in range(n):
        if rng.random() < 0.7:
            steps.append({"tool_calls": [{"id": "t%d" % i, "name": "bash", "args": {
                "command": "sleep %s & sleep 0.%d; echo step %d" % (MARK, rng.randint(0, 3), i)}}],
                "delay_ms": rng.randint(0, 20)})
        else:
            steps.append({"text": "reply %d" % i, "delay_ms": rng.randint(0, 20)})
    return steps


def run_env(home):
    env = dict(os.environ)
    env.update({"XG_HOME": home, "XG_SHARE_DIR": os.path.join(SRC, "share/xg"),
                "XG_TORTURE_KEY": "torture-fake-key-0000", "NO_COLOR": "1",
                "XG_RETRY": "attempts=0", "XG_LOCK_TIMEOUT": "20000"})
    for k in ("XG_ACCOUNT", "XG_SANDBOX", "XG_TRACE", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
              "OPENROUTER_API_KEY", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
              "ALL_PROXY", "all_proxy"):
        env.pop(k, None)
    return env


def worker(w, runs, home, ws, rng, counts, lock):
    env = run_env(home)
    for i in range(runs):
        conv = "w%d-c%d" % (w, i % 3)
        p = subprocess.Popen(["xg-run", "--model", "fake/m", "--conversation", conv,
                              "go on, round %d" % i], cwd=ws, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        at = rng.uniform(0, 1.5)
        try:
            rc = p.wait(timeout=at)
            key = "ended"
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
            rc = p.wait()
            key = "killed"
        with lock:
            counts[key] += 1
            if key == "ended" and rc not in (0, 1, 69, 75):
                counts["odd_exit"].append(rc)


def conv_lines(path):
    """The entries of a conversation, and how many lines were damaged."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    torn_last = lines[-1] != b""
    lines = lines[:-1] if not torn_last else lines[:-1]
    entries, damaged = [], 0
    for n, l in enumerate(lines, 1):
        try:
            v = json.loads(l)
            if not isinstance(v, dict):
                raise ValueError
            entries.append(v)
        except ValueError:
            damaged += 1
    return entries, damaged


def check_conversation(path):
    entries, damaged = conv_lines(path)
    if not entries or entries[0].get("type") != "conversation":
        fail("%s: no header" % path)
    called = set()
    results = 0
    for e in entries:
        if e.get("type") == "message" and e.get("role") == "assistant":
            for c in e.get("tool_calls") or []:
                called.add(c.get("id"))
        if e.get("type") == "tool_result":
            results += 1
            if e.get("id") not in called:
                fail("%s: the tool result %s comes before its call" % (path, e.get("id")))
    return damaged, results


def check_exchange(body, conv):
    """Every tool message answers an earlier call; every call is answered
    before the next message that is not a tool's."""
    open_calls = set()
    for m in body.get("messages", []):
        role = m.get("role")
        if role == "tool":
            if m.get("tool_call_id") not in open_calls:
                fail("%s: the resumed request has a tool result without its call" % conv)
            open_calls.discard(m.get("tool_call_id"))
            continue
        if open_calls:
            fail("%s: the resumed request has calls without results: %s" % (conv, open_calls))
        for c in m.get("tool_calls") or []:
            open_calls.add(c.get("id"))


def leftovers():
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 2 and argv[0].endswith(b"sleep") and argv[1] == MARK.encode():
            found.append(int(d))
    return found


def part_one(home, a, rng):
    ws = os.path.join(home, "ws")
    os.makedirs(ws)
    prov = Provider(home, script_steps(a.runs * 12 + 100, rng))
    catalog(home, prov.url)
    counts = {"killed": 0, "ended": 0, "odd_exit": []}
    lock = threading.Lock()
    threads = []
    for w in range(a.workers):
        n = a.runs // a.workers + (1 if w < a.runs % a.workers else 0)
        t = threading.Thread(target=worker, args=(w, n, home, ws, random.Random(rng.random()),
                                                  counts, lock))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    prov.stop()
    if counts["odd_exit"]:
        fail("runs left alone exited %s" % counts["odd_exit"])
    time.sleep(2)
    left = leftovers()
    if left:
        fail("tool processes left after their runs were killed: %s" % left)
    convs = os.path.join(home, "state", "conversations")
    names = sorted(f[:-6] for f in os.listdir(convs) if f.endswith(".jsonl"))
    damaged = results = 0
    for c in names:
        d, r = check_conversation(os.path.join(convs, c + ".jsonl"))
        damaged += d
        results += r
    # Resume each one with a run left alone, on a provider that only replies.
    prov = Provider(home, [{"text": "resumed", "repeat": len(names) + 1}])
    catalog(home, prov.url)
    env = run_env(home)
    for c in names:
        p = subprocess.run(["xg-run", "--model", "fake/m", "--conversation", c, "resume"],
                           cwd=ws, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        if p.returncode != 0:
            fail("resuming %s exited %d: %s" % (c, p.returncode, p.stderr.decode()[-300:]))
    reqs = prov.requests()
    prov.stop()
    if len(reqs) != len(names):
        fail("%d resumes sent %d requests" % (len(names), len(reqs)))
    for r in reqs:
        check_exchange(r["body"], r["body"].get("prompt_cache_key", "a conversation"))
    runs_dir = os.path.join(home, "state", "runs")
    parsed = missing = 0
    for rid in os.listdir(runs_dir):
        rj = os.path.join(runs_dir, rid, "run.json")
        if not os.path.exists(rj):
            missing += 1
        else:
            try:
                with open(rj) as f:
                    json.load(f)
            except ValueError:
                fail("%s does not parse" % rj)
            parsed += 1
        ev = os.path.join(runs_dir, rid, "events.ndjson")
        if os.path.exists(ev):
            with open(ev, "rb") as f:
                lines = f.read().split(b"\n")
            for l in lines[:-1]:
                try:
                    json.loads(l)
                except ValueError:
                    fail("%s has a line that does not parse" % ev)
    print(json.dumps({"part": "kill", "runs": a.runs, "killed": counts["killed"],
                      "ended": counts["ended"], "conversations": len(names),
                      "tool_results": results, "damaged_lines": damaged,
                      "resumed": len(names), "run_json_parsed": parsed,
                      "run_json_missing": missing, "tools_left": 0}))


def part_two(home, a):
    env = run_env(home)
    procs = [subprocess.Popen(["xg-test", "lib", "choices-set", "m%d" % i, "fake/m"],
                              env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE) for i in range(a.writers)]
    procs += [subprocess.Popen(["xg-test", "lib", "conv-append", "shared"], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE) for _ in range(a.writers)]
    for i, p in enumerate(procs[a.writers:]):
        p.stdin.write((json.dumps({"type": "message", "role": "user",
                                   "text": "writer %d " % i + "x" * 5000}) + "\n").encode())
        p.stdin.close()
    for p in procs:
        if p.wait() != 0:
            fail("a concurrent writer exited %d: %s" % (p.returncode, p.stderr.read().decode()))
    with open(os.path.join(home, "config", "accounts", "default", "choices.json")) as f:
        choices = json.load(f)
    modes = {"m%d" % i for i in range(a.writers)}
    if not modes <= set(choices):
        fail("choices.json lost modes: %s" % sorted(modes - set(choices)))
    entries, damaged = conv_lines(os.path.join(home, "state", "conversations", "shared.jsonl"))
    texts = sorted(e.get("text", "").split(" ")[1] for e in entries if e.get("type") == "message")
    if damaged or texts != sorted(str(i) for i in range(a.writers)):
        fail("the shared conversation holds %s, %d damaged" % (texts, damaged))
    print(json.dumps({"part": "writers", "choices_writers": a.writers,
                      "conversation_writers": a.writers, "modes_kept": len(modes),
                      "entries_kept": len(texts)}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--writers", type=int, default=20)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    home = tempfile.mkdtemp(prefix="xg-torture-")
    print(json.dumps({"part": "start", "seed": seed, "home": home}), flush=True)
    try:
        part_one(home, a, rng)
        part_two(home, a)
    finally:
        if not a.keep:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
