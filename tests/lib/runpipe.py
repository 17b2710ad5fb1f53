"""
Helpers for the tests of tests/xg-run.bats that drive xg-run through a pipe
left open: start it, wait for something to happen (giving up after 20 s,
which fails the test), and read what it writes.

As a program, it runs signal_open (tests/lib/signal.bash):

    python3 runpipe.py signal SIG request|run PAUSE ARGV... <records
"""
import os
import select
import signal
import subprocess
import sys
import time


def start(argv, stdin=subprocess.PIPE):
    """xg-run with its output a pipe, its messages dropped (valgrind's
    would mix in), and SIGINT at its default even when the suite runs
    with it ignored."""
    return subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def start_cued(argv, var):
    """argv started as start does, with the write end of a new pipe as its
    descriptor 9, which the environment variable var names, as xg hands a
    cue to the xg-run it starts; returns the process and the pipe's read
    end, which only the test holds."""
    mine, theirs = os.pipe()
    os.dup2(theirs, 9)
    os.close(theirs)
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=dict(os.environ, **{var: "9"}),
                         pass_fds=(9,),
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(9)
    return p, mine


def wait_for(ready, what, timeout=20):
    """Waits until ready() is true; else the test fails saying what."""
    deadline = time.time() + timeout
    while not ready():
        if time.time() > deadline:
            sys.exit(what)
        time.sleep(0.01)


def requested(log):
    """Whether the fake provider has logged a request."""
    return lambda: os.path.exists(log) and os.path.getsize(log) > 0


def run_made():
    """Whether xg-run has made its run's directory: its signal handlers
    are in place by then."""
    runs = os.path.join(os.environ["XG_HOME"], "state", "runs")
    return lambda: os.path.isdir(runs) and len(os.listdir(runs)) > 0


def read_for(p, seconds):
    """What p writes in the next few seconds."""
    out, end = b"", time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select([p.stdout], [], [], max(0, end - time.time()))
        if r:
            out += os.read(p.stdout.fileno(), 65536)
    return out


def read_to_end(p, what, timeout=20):
    """Everything p writes, to its end; the test fails saying what if the
    end does not come in time (p is killed)."""
    out, end = b"", time.time() + timeout
    while True:
        r, _, _ = select.select([p.stdout], [], [], max(0, end - time.time()))
        if not r:
            p.kill()
            sys.exit(what)
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            return out
        out += chunk


def signal_open(argv, data, ready, what, pause, sig):
    """Starts argv, writes it data and leaves its input open, so that only
    the signal may end it; once ready() (the test fails saying what if it
    does not come) and pause seconds more, sends it sig.  Prints its exit
    status, then what it wrote."""
    p = start(argv)
    p.stdin.write(data)
    p.stdin.flush()
    wait_for(ready, what)
    time.sleep(pause)
    p.send_signal(sig)
    out = read_to_end(p, "the run did not end after the signal")
    print(p.wait(timeout=20))
    sys.stdout.write(out.decode())


if __name__ == "__main__":
    if len(sys.argv) < 6 or sys.argv[1] != "signal" or sys.argv[3] not in ("request", "run"):
        sys.exit("usage: runpipe.py signal SIG request|run PAUSE ARGV...")
    sig, when, pause, argv = sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5:]
    if when == "request":
        ready, what = requested(os.environ["FAKE_LOG"]), "no request"
    else:
        ready, what = run_made(), "no run directory"
    signal_open(argv, sys.stdin.buffer.read(), ready, what, pause, getattr(signal, "SIG" + sig))
