#!/usr/bin/env bats
# A full state disk: an append that fails part way takes its bytes back,
# so the runs index, a conversation and a run's events never keep a torn
# line; a run that fails on it is listed as it ended; xg-log says when it
# cannot append.  The disk is a small tmpfs, which needs root to mount.

load lib/helper
load lib/fake-provider

setup() {
	exec </dev/null
	export XG_TEST_KEY=k
	DISK="$BATS_TEST_TMPDIR/disk"
	mkdir -p "$DISK"
	local why
	if ! why=$(mount -t tmpfs -o size=1m tmpfs "$DISK" 2>&1); then
		skip "a full disk is a tmpfs this test mounts, and mount was refused: $why"
	fi
	MOUNTED=1
	PAGE=$(getconf PAGESIZE)
}

teardown() {
	fake_provider_stop
	[ -z "${RUNPID:-}" ] || kill -KILL "$RUNPID" 2>/dev/null || true
	[ -z "${MOUNTED:-}" ] || umount "$DISK" || umount -l "$DISK"
}

# fill: the disk's free pages all go to one file.  A tmpfs gives a file
# its space a page at a time, so what is left is the room at the end of
# each file's last page.
fill() {
	head -c 64m /dev/zero >"$DISK/filler" 2>/dev/null || true
	[ "$(stat -f -c %a "$DISK")" = 0 ] || fail "the disk did not fill"
}

unfill() {
	rm -f "$DISK/filler"
}

# pad FILE ROOM TEMPLATE: appends one line, TEMPLATE with its "@" made
# as long as it takes, so that FILE's last page has ROOM bytes left.
pad() {
	python3 - "$1" "$2" "$3" "$PAGE" <<-'EOF'
	import os, sys
	path, room, template, page = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
	size = os.path.getsize(path) if os.path.exists(path) else 0
	want = (page - room - size - len(template)) % page
	with open(path, "a") as f:
	    f.write(template.replace("@", "x" * want) + "\n")
	EOF
}

# whole FILE: every line of FILE is a JSON object, and the last one ends.
whole() {
	python3 - "$1" <<-'EOF'
	import json, sys
	data = open(sys.argv[1], "rb").read()
	assert data.endswith(b"\n"), "%s ends in a torn line: %r" % (sys.argv[1], data[-60:])
	for n, line in enumerate(data.split(b"\n")[:-1], 1):
	    assert isinstance(json.loads(line), dict), "%s line %d is not an object" % (sys.argv[1], n)
	EOF
}

@test "a locked append that finds the disk full leaves the file as it was, and exits 74" {
	printf '{"n":1}\n' >"$DISK/log"
	pad "$DISK/log" 10 '{"pad":"@"}'
	cp "$DISK/log" before
	fill
	run_split xg-test lib append "$DISK/log" <<<'{"n":2,"text":"longer than the room left"}'
	assert_equal "$status" 74
	assert_regex "$stderr" "cannot append to '.*/log': No space left on device"
	cmp before "$DISK/log"
	unfill
	xg-test lib append "$DISK/log" <<<'{"n":2}'
	whole "$DISK/log"
	assert_equal "$(tail -n 1 "$DISK/log")" '{"n":2}'
}

@test "a conversation append that finds the disk full leaves no torn entry" {
	export XG_HOME="$DISK/home"
	echo '{"type":"message","role":"user","text":"one"}' | xg-test lib conv-append c1
	conv="$XG_HOME/state/conversations/c1.jsonl"
	pad "$conv" 10 '{"type":"message","role":"user","text":"@"}'
	fill
	run_split xg-test lib conv-append c1 <<<'{"type":"message","role":"user","text":"two, which does not fit"}'
	assert_failure
	assert_regex "$stderr" "No space left on device"
	whole "$conv"
	unfill
	echo '{"type":"message","role":"user","text":"three"}' | xg-test lib conv-append c1
	whole "$conv"
	run_split xg-test lib conv-last-model c1
	refute_regex "$stderr" "torn|damaged"
}

@test "a run that meets a full disk leaves no torn line, is listed as failed, and xg-log exits 74 until it can append" {
	export XG_HOME="$DISK/home"
	state="$XG_HOME/state"
	fake_provider_start <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "touch started; while [ ! -f go ]; do sleep 0.05; done; seq 1 5000"}}]}
	{"text": "not asked: the run failed before"}
	EOF
	fake_catalog openai-chat
	mkdir -p "$state" ws && cd ws
	# An index already there, its last page all but full, so the run's
	# line is cut short by the disk.
	printf '%s\n' '{"type":"run","run":"20261101-100000-aaaaaaaa","status":"completed","started":"2026-11-01T10:00:00.000Z","request":"first"}' >"$state/runs.ndjson"
	pad "$state/runs.ndjson" 16 '{"type":"run","run":"20261102-100000-bbbbbbbb","status":"completed","started":"2026-11-02T10:00:00.000Z","request":"@"}'
	xg-run --model fake/m 'fill the disk' >../out.ndjson 2>../err.txt 3>&- &
	RUNPID=$!
	for i in $(seq 1 200); do [ -e started ] && break; sleep 0.05; done
	[ -e started ] || fail "the tool never started"
	fill
	touch go
	rc=0
	wait "$RUNPID" || rc=$?
	RUNPID=
	cd ..
	assert_equal "$rc" 74
	assert_equal "$(jq -r 'select(.type == "run_end") | .status' out.ndjson)" failed
	id=$(jq -r 'select(.type == "run_start") | .run' out.ndjson)
	conv=$(jq -r 'select(.type == "run_start") | .conversation' out.ndjson)
	# Each of the three appends met the full disk part way, and took its
	# bytes back.
	grep -q "cannot append to '.*runs.ndjson'" err.txt
	grep -q "cannot append to '.*conversations/$conv.jsonl'" err.txt
	grep -q "cannot append to '.*runs/$id/events.ndjson': No space left on device" err.txt
	whole "$state/runs.ndjson"
	whole "$state/conversations/$conv.jsonl"
	whole "$state/runs/$id/events.ndjson"
	# While the disk is full, xg-log cannot add the run's line: it lists
	# what it has and says so with 74.
	run_split xg-log --json
	assert_equal "$status" 74
	assert_regex "$stderr" "cannot append to '.*runs.ndjson'"
	assert_equal "$(jq -r 'select(.request == "fill the disk") | .status' <<<"$output")" failed
	whole "$state/runs.ndjson"
	unfill
	run_split xg-log --json
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(jq -r '.request[:12] + " " + .status' <<<"$output" | paste -sd, -)" \
		"fill the dis failed,xxxxxxxxxxxx completed,first completed"
	whole "$state/runs.ndjson"
	# The run's line is in now, once.
	run_split xg-log --json
	assert_success
	assert_equal "$(wc -l <<<"$output")" 3
	assert_equal "$(ls -A "$state/runs.live")" ""
}
