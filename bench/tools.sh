#!/bin/sh
# What xg-run's tools cost, through the test driver (one process per call,
# so each figure includes starting it): the median wall time of N runs.
#   sh bench/tools.sh        (after make all tests/bin/xg-test)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
drv="$top/tests/bin/xg-test"
[ -x "$drv" ] || { echo "bench/tools.sh: build tests/bin/xg-test first" >&2; exit 1; }
n=${N:-31}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir ws

# median NAME ARGS...: runs the driver n times, prints the median in ms.
median() {
	name=$1
	shift
	i=0
	: >times
	while [ $i -lt "$n" ]; do
		s=$(date +%s%N)
		"$drv" tools --workspace ws --run-dir run "$@" >/dev/null
		e=$(date +%s%N)
		echo $(( (e - s) / 1000 )) >>times
		i=$((i + 1))
	done
	sort -n times | awk -v name="$name" '{ a[NR] = $1 } END {
		printf "%-44s %8.2f ms\n", name, a[int((NR + 1) / 2)] / 1000 }'
}

seq 1 100000 >ws/big.txt
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "line %d of a file to edit\n", i }' >ws/edit.txt
cp ws/edit.txt edit.orig

median "driver start, todo_write (baseline)" todo_write '{"items":[{"content":"a","status":"pending"}]}'
median "bash: true" bash '{"command":"true"}'
median "bash: 10 MB of output (tail kept, saved)" bash '{"command":"yes 0123456789abcdefghijklmnopqrstu | head -c 10000000"}'
median "read: first window of 100,000 lines" read '{"path":"big.txt"}'
median "read: offset 99,000 of 100,000 lines" read '{"path":"big.txt","offset":99000}'
median "edit: one edit in a 5.4 MB file" edit '{"path":"edit.txt","edits":[{"old_text":"line 100000 of","new_text":"line 100000 of"}]}'
median "write: 1 KB file, new directories" write '{"path":"a/b/c/d.txt","content":"'"$(printf '%01000d' 0)"'"}'
median "plan mode's built-in rule, then read" --plan read '{"path":"big.txt","limit":1}'
median "plan mode through its jq filter, then read" --plan-jq read '{"path":"big.txt","limit":1}'
median "gate: compile and decide, then read" --gate 'if .name == "bash" then (.args.command | test("^(git|make) ")) else true end' read '{"path":"big.txt","limit":1}'
