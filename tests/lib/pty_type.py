"""pty_type.py WAIT ACTION CMD ARG...: runs CMD on a new pseudo-terminal,
as pty_run.py does, and once it has written WAIT there, says on standard
error whether the terminal's echo is on ("echo while asked: on" or "off"),
then does ACTION: "type:TEXT" types TEXT and Enter, "signal:NAME" sends
the signal NAME (INT, TERM, HUP) to CMD.  At the end it writes
everything CMD wrote on the terminal to standard output, byte for byte,
says on standard error whether the echo is on again ("echo after: on"),
and exits with CMD's status (128 + the signal that killed it)."""
import os
import pty
import signal
import sys
import termios
import time

wait, action = sys.argv[1].encode(), sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.execvp(sys.argv[3], sys.argv[3:])


def echo():
    return "on" if termios.tcgetattr(fd)[3] & termios.ECHO else "off"


out = b""
acted = False
deadline = time.time() + 20
while time.time() < deadline:
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
    if not acted and wait in out:
        acted = True
        # The prompt is written before the echo goes off: give it a moment.
        time.sleep(0.2)
        print("echo while asked: " + echo(), file=sys.stderr)
        kind, _, arg = action.partition(":")
        if kind == "type":
            os.write(fd, arg.encode() + b"\n")
        else:
            os.kill(pid, getattr(signal, "SIG" + arg))
print("echo after: " + echo(), file=sys.stderr)
_, st = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
code = os.waitstatus_to_exitcode(st)
sys.exit(128 - code if code < 0 else code)
