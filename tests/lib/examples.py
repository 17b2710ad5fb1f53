"""The EXAMPLES of a man page, run as a person would type them.

    python3 examples.py PAGE DIR

tests/man-examples.bats runs it for every page, in a sandbox made for it
(DIR: a scratch directory for the outputs; the current directory is the
sandbox's workspace).  The examples are the .Dl lines and .Bd -literal
blocks of the page's EXAMPLES section, after mdoc's escapes are undone:

  - In a block whose lines start with "$ ", each such line is a command;
    an indented line after it goes on with it; any other lines until the
    next "$ " are its output, which must match exactly.
  - In a block without "$ ", and on a .Dl line, every line is a command (a
    line that is indented, or that follows one ending in '|' or '\\', goes
    on with the one before); their output is not checked.

Every command must exit 0.  They run in order in one bash, so a variable
set by one is there for the next.  A block (or .Dl) right after the
comment line '.\\" not run by the tests' is skipped; the page must then say
why in the comment's own words after it.

Prints one line per failure and exits 1 when there was one.
"""
import os
import subprocess
import sys

ESCAPES = [("\\(dq", '"'), ("\\(aq", "'"), ("\\(ga", "`"), ("\\(ti", "~"),
           ("\\(ha", "^"), ("\\-", "-"), ("\\&", ""), ("\\e", "\\")]


def unescape(s):
    out, i = [], 0
    while i < len(s):
        for k, v in ESCAPES:
            if s.startswith(k, i):
                out.append(v)
                i += len(k)
                break
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def blocks(path):
    """(line, [lines]) for each example of the page's EXAMPLES."""
    found, cur, inside, skip = [], None, False, False
    for n, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        if line.startswith(".Sh "):
            inside = line == ".Sh EXAMPLES"
            continue
        if not inside:
            continue
        if line.startswith('.\\" not run by the tests'):
            skip = True
        elif line.startswith(".Dl "):
            if not skip:
                found.append((n - 1, [unescape(line[4:])]))
            skip = False
        elif line.startswith(".Bd -literal"):
            cur = (n, [])
        elif line == ".Ed" and cur is not None:
            if not skip:
                found.append(cur)
            cur, skip = None, False
        elif cur is not None:
            cur[1].append(unescape(line))
    return found


def steps(first, lines):
    """(line, command, expected output or None) of one example."""
    out = []
    if any(l.startswith("$ ") for l in lines):
        for k, l in enumerate(lines):
            if l.startswith("$ "):
                out.append([first + 1 + k, l[2:], []])
            elif out and l[:1] in (" ", "\t") and not out[-1][2]:
                out[-1][1] += "\n" + l
            elif out:
                out[-1][2].append(l)
        return [(n, c, e) for n, c, e in out]
    for k, l in enumerate(lines):
        if out and (l[:1] in (" ", "\t") or out[-1][1].rstrip().endswith(("|", "\\"))):
            out[-1][1] += "\n" + l
        elif l.strip():
            out.append([first + 1 + k, l, None])
    return [(n, c, None) for n, c, e in out]


def main():
    page, scratch = sys.argv[1], sys.argv[2]
    todo = [s for b in blocks(page) for s in steps(*b)]
    if not todo:
        print("%s: no examples" % page)
        return 1
    script = ["exec </dev/null"]
    for i, (n, cmd, want) in enumerate(todo):
        script.append("{ %s\n} >%s/out.%d 2>%s/err.%d; echo $? >%s/rc.%d"
                      % (cmd, scratch, i, scratch, i, scratch, i))
    subprocess.run(["bash", "-c", "\n".join(script)], check=False)
    bad = 0
    name = os.path.basename(page)
    for i, (n, cmd, want) in enumerate(todo):
        try:
            rc = int(open("%s/rc.%d" % (scratch, i)).read())
        except (OSError, ValueError):
            rc = None
        got = open("%s/out.%d" % (scratch, i), errors="replace").read() if rc is not None else ""
        err = open("%s/err.%d" % (scratch, i), errors="replace").read() if rc is not None else ""
        one = cmd.split("\n")[0]
        if rc != 0:
            print("%s:%d: '%s' exited %s: %s" % (name, n, one, rc, err.strip()[:400]))
            bad += 1
        elif want is not None and want and got.rstrip("\n").split("\n") != want:
            print("%s:%d: '%s' printed\n%s\nnot\n%s" % (name, n, one, got.rstrip("\n"),
                                                     "\n".join(want)))
            bad += 1
    print("%s: %d examples, %d failed" % (name, len(todo), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
