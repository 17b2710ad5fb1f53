# Loaded by every tests/*.bats file (load lib/helper): bats-support,
# bats-assert, and a private XG_HOME per test so no test sees another's
# state or the person's own.
# Their files are sourced here, not through their load.bash, which runs a
# dirname for each of them, in every test: some 4% of the suite's time.
for d in /usr/lib/bats /usr/local/lib/bats /usr/lib/node_modules; do
	if [ -f "$d/bats-support/load.bash" ]; then
		for f in "$d"/bats-support/src/*.bash "$d"/bats-assert/src/*.bash; do
			# shellcheck disable=SC1090
			source "$f"
		done
		break
	fi
done

: "${XG_SRCDIR:=$(cd "$BATS_TEST_DIRNAME/.." && pwd)}"
export XG_SRCDIR
export PATH="$XG_SRCDIR/bin:$XG_SRCDIR/tests/bin:$PATH"
# Python helpers the tests import (tests/lib/runpipe.py).
export PYTHONPATH="$XG_SRCDIR/tests/lib${PYTHONPATH:+:$PYTHONPATH}"
[ -d "$XG_SRCDIR/tests/vgbin" ] && export PATH="$XG_SRCDIR/tests/vgbin:$PATH"
export XG_HOME="$BATS_TEST_TMPDIR/home"
export XG_SHARE_DIR="$XG_SRCDIR/share/xg"
export NO_COLOR=1
unset XG_ACCOUNT XG_MAX_LINE XG_LOCK_TIMEOUT XG_RETRY XG_TRACE XG_SSE_MAX_EVENT \
	OPENAI_API_KEY ANTHROPIC_API_KEY OPENROUTER_API_KEY
# The fake provider listens on loopback; a proxy from the caller's
# environment must not stand between them.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy no_proxy NO_PROXY
FIXTURES="$XG_SRCDIR/tests/fixtures"

# Each live process (a zombie counts as gone) as "PID ARGS", its arguments
# joined by spaces, read from /proc by bash alone: a loop that started a
# cut and a grep for each of some hundreds of processes took seconds a
# call while the suite runs.
procs() {
	local d st args IFS=' '
	for d in /proc/[0-9]*; do
		{ read -r st <"$d/stat"; } 2>/dev/null || continue
		st=${st##*) }
		[ "${st%% *}" = Z ] && continue
		{ mapfile -d '' args <"$d/cmdline"; } 2>/dev/null || continue
		args=("${args[@]//$'\n'/ }")
		printf '%s %s\n' "${d#/proc/}" "${args[*]}"
	done
}

# The processes whose command line holds $1.
procs_with() {
	local pid args
	while read -r pid args; do
		[[ $args == *"$1"* ]] && echo "$pid"
	done < <(procs)
	return 0
}

# Whether the programs under test are the sanitizers' build (make check
# SANITIZE=1).
sanitized() {
	case "${XG_MAKEFLAGS:-}" in *SANITIZE=1*) return 0 ;; esac
	return 1
}

# Runs "$@" with stdout and stderr kept apart: $output is stdout, $stderr
# the diagnostics.
bats_require_minimum_version 1.5.0
run_split() {
	run --separate-stderr "$@"
}

# hold_lock PATH SECONDS: another process takes the lock on PATH as xg's
# writers do, and holds it for SECONDS; this returns once it has it, with
# $holder its process id (the test fails if it has not in 10 s).
hold_lock() {
	local i
	xg-test lib hold-lock "$1" "$2" >"$BATS_TEST_TMPDIR/held" &
	holder=$!
	for i in $(seq 1 200); do
		grep -q locked "$BATS_TEST_TMPDIR/held" && return 0
		sleep 0.05
	done
	kill "$holder" 2>/dev/null || true
	fail "the lock on '$1' was not taken"
}

# release_lock: ends the holder hold_lock started, before its time.
release_lock() {
	kill "$holder"
	wait "$holder" || true
}

# Every test works in its own scratch directory.
cd "$BATS_TEST_TMPDIR" || exit 1
