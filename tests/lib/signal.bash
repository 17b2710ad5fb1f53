# Signalling a run, for tests/xg-run.bats: start it, wait until it is where
# the test wants it, send the signal, and collect what it did.
#
#   run signal_open SIG request|run PAUSE ARGV... <records
#	ARGV with the records written to it through a pipe that is then
#	left open, so that only the signal may end it, and its output read
#	through a pipe.  SIG goes once the fake provider has logged a
#	request ("request") or the run has made its directory ("run": its
#	handlers are in place by then), and PAUSE seconds more.  $output is
#	its exit status on a line, then what it wrote; the test fails when
#	either wait takes over 20 s (tests/lib/runpipe.py).
#
#   signal_run SIG READY PAUSE CMD...
#	CMD in the background as a shell starts it (bg_start, SIGINT at its
#	default), SIG once the shell command READY succeeds (wait_until) and
#	PAUSE seconds more; then reap.
#
# and the parts of signal_run, for the tests it does not fit:
#
#   bg_start [--pipe] CMD...	CMD in the background, standard input
#	/dev/null, its messages to err.txt and its output to out.ndjson: a
#	regular file, which xg's record writer does not flush record by
#	record, or with --pipe through cat, which it does.  $pid is CMD's.
#   wait_until READY WHAT	waits up to 10 s for the shell command READY
#	to succeed; else kills $pid and fails saying WHAT.
#   reap			waits for $pid: $rc is its exit status, $output
#	what it wrote.

signal_open() {
	python3 "$XG_SRCDIR/tests/lib/runpipe.py" signal "$@"
}

signal_run() {
	local sig=$1 ready=$2 pause=$3
	shift 3
	bg_start env --default-signal=INT "$@"
	wait_until "$ready" "not ready for SIG$sig after 10 s: $ready"
	sleep "$pause"
	kill -"$sig" "$pid"
	reap
}

bg_start() {
	if [ "$1" = --pipe ]; then
		shift
		"$@" </dev/null 2>err.txt > >(cat >out.ndjson) &
	else
		"$@" </dev/null >out.ndjson 2>err.txt &
	fi
	pid=$!
}

wait_until() {
	local i
	for i in $(seq 1 200); do
		eval "$1" && return 0
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null || true
	fail "$2"
}

reap() {
	rc=0
	wait "$pid" || rc=$?
	output=$(cat out.ndjson)
}
