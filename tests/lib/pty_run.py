"""pty_run.py CMD ARG...: runs CMD on a new pseudo-terminal (its standard
input, output and error), and writes everything it wrote there to our
standard output, byte for byte (carriage returns and escapes kept); exits
with its status.  For tests of what a person's terminal shows."""
import os
import pty
import signal
import sys

pid, fd = pty.fork()
if pid == 0:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
_, st = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(st))
