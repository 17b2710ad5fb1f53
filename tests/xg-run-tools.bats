#!/usr/bin/env bats
# The tools xg-run offers the model and the jq tool gate (lib/tools/tools.c,
# lib/tools/gate.c), through the test driver (xg-test tools), which runs one
# call and prints {"gate":..., "result":...} on one line.

load lib/helper

setup() {
	WS="$BATS_TEST_TMPDIR/ws"
	OUT="$BATS_TEST_TMPDIR/outside"
	RUN="$BATS_TEST_TMPDIR/run"
	mkdir -p "$WS" "$OUT"
	cd "$WS" || exit 1
}

# Runs one tool call in the workspace; $output is the driver's JSON line.
# The driver exits 0 whatever the tool's result (so a sanitizer's report,
# which changes the status, fails the test), unless ANY_STATUS is set.
tool() {
	run_split timeout 120 xg-test tools --workspace "$WS" --run-dir "$RUN" "$@"
	if [ -z "${ANY_STATUS:-}" ] && [ "$status" -ne 0 ]; then
		printf 'xg-test tools exited %s:\n%s\n' "$status" "$stderr" >&2
		return 1
	fi
}

# A field of the last result, as jq -r prints it.
field() {
	jq -r ".result.$1" <<<"$output"
}

# Whether a process has gone (a zombie waiting for a reaper counts as gone).
# /proc rather than ps, which a fresh Debian machine may lack.
gone() {
	local st
	st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 0
	[ -z "$st" ] || [ "$st" = Z ]
}

# Waits up to a minute for a file to appear, to stop a hang only.
wait_for_file() {
	local i
	for i in $(seq 600); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# What a command a tool runs sees of a terminal: field 7 of /proc/PID/stat
# is the controlling terminal (0 is none), and /dev/tty opens or not.
TTY_PROBE='read -r a b c d e f t g </proc/$$/stat; echo $t; (: </dev/tty) 2>/dev/null || echo no terminal'

# Runs one tool call as tool does, but under script(1), which gives the
# driver a terminal of its own; $output is then the call's output.
tool_on_terminal() {
	run script -qec "$(printf '%q ' xg-test tools --workspace "$WS" "$@")>'$BATS_TEST_TMPDIR/res'" /dev/null
	assert_success
	run jq -r .result.output "$BATS_TEST_TMPDIR/res"
}

# ---- the table ----

@test "the tool table lists each tool with a description and an object schema" {
	run xg-test tools schemas
	assert_success
	assert_equal "$(jq -r .name <<<"$output" | tr '\n' ' ')" "bash read write edit todo_write ask_user "
	assert_equal "$(jq -r 'select(.parameters.type == "object" and (.description | length) > 40 and (.parameters.required | length) >= 1) | .name' <<<"$output" | wc -l)" 6
	assert_equal "$(jq -c 'select(.name == "edit") | .parameters.required' <<<"$output")" '["path","edits"]'
	assert_equal "$(jq -c 'select(.name == "todo_write") | .parameters.properties.items.items.properties.status.enum' <<<"$output")" '["pending","in_progress","completed"]'
}

@test "an unknown tool and arguments that are not an object are results, not exits" {
	tool frobnicate '{}'
	assert_success
	assert_equal "$(field ok)" false
	assert_equal "$(field output)" "there is no tool 'frobnicate'; the tools are bash, read, write, edit, todo_write, ask_user"
	tool bash '[1]'
	assert_equal "$(field ok)" false
	assert_equal "$(field output)" "bash: the arguments must be a JSON object, found an array"
}

# ---- bash ----

@test "bash merges standard output and error in order and gives the exit code" {
	tool bash '{"command":"echo one; echo two >&2; echo three; exit 3"}'
	assert_success
	assert_equal "$(field ok)" false
	assert_equal "$(field exit_code)" 3
	assert_equal "$(field timed_out)" false
	assert_equal "$(field output)" "$(printf 'one\ntwo\nthree\n[exit code 3]')"
}

@test "bash succeeds with exit code 0 and says when there is no output" {
	tool bash '{"command":"true"}'
	assert_equal "$(field ok)" true
	assert_equal "$(field exit_code)" 0
	assert_equal "$(field output)" "(no output)"
	assert_equal "$(field timeout)" 120
}

@test "bash runs in the workspace with standard input from /dev/null" {
	run_split sh -c 'echo secret | timeout 120 xg-test tools --workspace "$1" bash "{\"command\":\"pwd; readlink /proc/self/fd/0; cat; echo end\"}"' sh "$WS"
	assert_success
	assert_equal "$(field output)" "$(printf '%s\n/dev/null\nend' "$(cd "$WS" && pwd -P)")"
}

@test "bash and the ask command do not see the variables the run hides" {
	export XG_TEST_API_KEY=sk-secret-value XG_TEST_KEEP=visible
	tool --drop-env XG_TEST_API_KEY --drop-env OTHER bash '{"command":"env"}'
	assert_regex "$(field output)" "XG_TEST_KEEP=visible"
	refute_regex "$output" "sk-secret"
	tool --drop-env XG_TEST_API_KEY --ask 'cat >/dev/null; env' ask_user '{"question":"q"}'
	assert_regex "$(field output)" "XG_TEST_KEEP=visible"
	refute_regex "$output" "sk-secret"
	tool bash '{"command":"echo $XG_TEST_API_KEY"}'
	assert_equal "$(field output)" sk-secret-value
}

@test "bash says so when the workspace is missing" {
	run_split xg-test tools --workspace "$BATS_TEST_TMPDIR/gone" bash '{"command":"true"}'
	assert_success
	assert_equal "$(field ok)" false
	assert_equal "$(field output)" "bash: cannot enter the workspace '$BATS_TEST_TMPDIR/gone': No such file or directory"
}

@test "bash runs the command in a session and process group of its own" {
	tool bash '{"command":"echo $$ $(cut -d\" \" -f5,6 /proc/$$/stat)"}'
	read -r pid pgid sid <<<"$(field output)"
	assert_equal "$pgid" "$pid"
	assert_equal "$sid" "$pid"
}

@test "bash has no controlling terminal even when the caller has one" {
	tool_on_terminal bash "{\"command\":\"$TTY_PROBE\"}"
	assert_line --index 0 0
	assert_line --index 1 "no terminal"
}

@test "long bash output keeps its last 2000 lines with a note and the full output in the run directory" {
	tool --id c7 bash '{"command":"seq 1 3000"}'
	assert_equal "$(field ok)" true
	assert_equal "$(field truncated)" true
	path=$(field full_output_path)
	assert_equal "$path" "$RUN/tool-output/bash-c7.txt"
	seq 1 3000 | cmp - "$path"
	run field output
	assert_line --index 0 1001
	assert_line --index 1999 3000
	assert_line --index 2000 "[output cut: showing the last 2000 of 3000 lines (10000 of 13893 bytes); the full output is in $path]"
	assert_equal "${#lines[@]}" 2001
}

@test "long bash output keeps at most 50 KB of whole lines" {
	tool bash '{"command":"i=0; while [ $i -lt 100 ]; do i=$((i+1)); printf \"%04d%0996d\\n\" $i 0; done"}'
	assert_equal "$(field truncated)" true
	run field output
	# 51 lines of 1001 bytes fit in 50 KB; the first shown starts a line.
	assert_equal "${#lines[@]}" 52
	assert_regex "${lines[0]}" '^0050'
	assert_equal "${#lines[0]}" 1000
	assert_regex "${lines[51]}" '^\[output cut: showing the last 51 of 100 lines \(51051 of 100100 bytes\)'
}

@test "short bash output saves no file" {
	tool bash '{"command":"seq 1 10"}'
	assert_equal "$(field truncated)" false
	assert_equal "$(field full_output_path)" null
	# Not even the folder: the file is made once the output passes what
	# the model is shown.
	[ ! -e "$RUN/tool-output" ]
	# Exactly the limit of lines, ending in a newline, is shown whole and
	# keeps no file either, though the file was opened on the way.
	tool bash '{"command":"seq 1 2000"}'
	assert_equal "$(field truncated)" false
	run ls -A "$RUN/tool-output"
	assert_output ""
}

@test "a bash timeout kills the whole process group, a child that ignores TERM too" {
	tool bash '{"command":"trap \"\" TERM; sleep 300 & echo $! >pid; echo started; wait","timeout":1}'
	assert_success
	assert_equal "$(field ok)" false
	assert_equal "$(field timed_out)" true
	assert_equal "$(field exit_code)" null
	assert_equal "$(field output)" "$(printf 'started\n[timed out after 1 s: the command and everything it started were killed]')"
	gone "$(cat pid)"
}

@test "the run's deadline stops a command before its own timeout" {
	tool --deadline 500 bash '{"command":"sleep 300 & echo $! >pid; wait"}'
	assert_equal "$(field ok)" false
	assert_equal "$(field timed_out)" true
	assert_equal "$(field timeout)" 120
	assert_equal "$(field output)" "$(printf "(no output)\n[stopped at the run's time limit: the command and everything it started were killed]")"
	gone "$(cat pid)"
}

@test "the run directory is created for the full output when it is missing" {
	run_split xg-test tools --workspace "$WS" --run-dir "$RUN/deep/er" --id x1 bash '{"command":"seq 1 2500"}'
	assert_success
	assert_equal "$(field full_output_path)" "$RUN/deep/er/tool-output/bash-x1.txt"
	seq 1 2500 | cmp - "$RUN/deep/er/tool-output/bash-x1.txt"
}

@test "bash output that is not UTF-8 reaches the model as valid UTF-8" {
	tool bash '{"command":"printf \"a\\377b\\n\""}'
	assert_equal "$(field output)" "$(printf 'a\357\277\275b')"
}

@test "a bash timeout above 600 s is lowered to 600, and a bad one is refused" {
	tool bash '{"command":"true","timeout":9999}'
	assert_equal "$(field timeout)" 600
	assert_equal "$(field output)" "$(printf '(no output)\n[the timeout was lowered to the ceiling of 600 s]')"
	tool bash '{"command":"true","timeout":-1}'
	assert_equal "$(field ok)" false
	assert_equal "$(field output)" "bash: 'timeout' must be a number of seconds above 0"
	tool bash '{"command":["ls"]}'
	assert_equal "$(field output)" "bash: 'command' must be a string"
}

@test "an interrupt kills the running command's process group and the call says so" {
	# The command's own timeout only stops a hang if the interrupt is lost.
	xg-test tools --workspace "$WS" bash '{"command":"sleep 300 & echo $! >pid; wait","timeout":100}' >res &
	driver=$!
	wait_for_file pid
	kill -INT "$driver"
	rc=0
	wait "$driver" || rc=$?
	assert_equal "$rc" 0
	run jq -r .result.aborted res
	assert_output true
	run jq -r .result.output res
	assert_output "$(printf '(no output)\n[interrupted: the command and everything it started were killed]')"
	gone "$(cat pid)"
}

@test "a background job that keeps the output open does not hold up the call" {
	tool bash '{"command":"sleep 300 & echo $! >pid; echo started"}'
	assert_equal "$(field ok)" true
	assert_equal "$(field output)" started
	kill "$(cat pid)"
}

# ---- read ----

@test "read numbers the lines and reads a window from an offset" {
	seq 1 10 | sed 's/^/line /' >f.txt
	tool read '{"path":"f.txt","offset":3,"limit":2}'
	assert_equal "$(field ok)" true
	assert_equal "$(field output)" "$(printf '     3\tline 3\n     4\tline 4\n[showing lines 3-4 of 10; continue with offset=5]')"
	assert_equal "$(field next_offset)" 5
	assert_equal "$(field lines)" 10
	tool read '{"path":"f.txt","offset":9}'
	assert_equal "$(field output)" "$(printf '     9\tline 9\n    10\tline 10')"
	assert_equal "$(field truncated)" false
	assert_equal "$(field next_offset)" null
}

@test "read keeps the first 2000 lines and says where to continue" {
	seq 1 2500 >f.txt
	tool read '{"path":"f.txt"}'
	run field output
	assert_equal "${#lines[@]}" 2001
	assert_equal "${lines[1999]}" "$(printf '  2000\t2000')"
	assert_equal "${lines[2000]}" "[showing lines 1-2000 of 2500; continue with offset=2001]"
	tool read '{"path":"f.txt","offset":2001,"limit":5000}'
	run field output
	assert_equal "${#lines[@]}" 500
	assert_equal "${lines[499]}" "$(printf '  2500\t2500')"
}

@test "read keeps at most 50 KB of whole lines" {
	i=0
	while [ $i -lt 100 ]; do i=$((i+1)); printf '%04d%0996d\n' $i 0; done >f.txt
	tool read '{"path":"f.txt"}'
	assert_equal "$(field truncated)" true
	assert_equal "$(field next_offset)" 51
	run field output
	assert_equal "${#lines[@]}" 51
	assert_equal "${lines[50]}" "[showing lines 1-50 of 100; continue with offset=51]"
}

@test "read cuts a single line longer than 50 KB and says so" {
	{ head -c 60000 /dev/zero | tr '\0' a; printf '\nshort\n'; } >f.txt
	tool read '{"path":"f.txt"}'
	run field output
	assert_equal "${#lines[@]}" 3
	assert [ "${#lines[0]}" -lt 51200 ]
	assert_regex "${lines[0]}" '^     1	aaaa'
	assert_equal "${lines[1]}" "[line 1 is longer than 50 KB and was cut; see the rest with bash, e.g. cut -c or head -c]"
	assert_equal "${lines[2]}" "[showing lines 1-1 of 2; continue with offset=2]"
}

@test "read refuses a binary file with a clear message" {
	printf 'PK\003\004\000\000binary' >a.zip
	tool read '{"path":"a.zip"}'
	assert_equal "$(field ok)" false
	assert_equal "$(field output)" "read: 'a.zip' is a binary file (12 bytes); read shows text only: inspect it with bash (e.g. file, od -c, strings)"
}

@test "read shows a CRLF file without CRs and no byte order mark" {
	printf '\357\273\277one\r\ntwo\r\n' >w.txt
	tool read '{"path":"w.txt"}'
	assert_equal "$(field output)" "$(printf '     1\tone\n     2\ttwo')"
}

@test "read says so for an empty file, a missing one, a directory and an offset past the end" {
	: >empty
	tool read '{"path":"empty"}'
	assert_equal "$(field output)" "(the file is empty)"
	tool read '{"path":"nope"}'
	assert_equal "$(field output)" "read: cannot open 'nope': No such file or directory"
	mkdir d
	tool read '{"path":"d"}'
	assert_equal "$(field output)" "read: 'd' is a directory; list it with bash (ls)"
	seq 3 >f.txt
	tool read '{"path":"f.txt","offset":9}'
	assert_equal "$(field ok)" false
	assert_equal "$(field output)" "read: offset 9 is past the end of 'f.txt', which has 3 lines"
	tool read '{"path":"f.txt","offset":0}'
	assert_equal "$(field output)" "read: 'offset' must be a line number, 1 or more"
}

# ---- write ----

@test "write creates the file and its parent directories" {
	tool write '{"path":"a/b/c.txt","content":"one\ntwo\n"}'
	assert_equal "$(field ok)" true
	assert_equal "$(field created)" true
	assert_equal "$(field output)" "Created 'a/b/c.txt' (8 bytes)"
	printf 'one\ntwo\n' | cmp - a/b/c.txt
}

@test "write replaces a file in one step, keeping its mode and leaving no temporary file" {
	printf 'old\n' >s.sh
	chmod 750 s.sh
	before=$(stat -c %i s.sh)
	tool write '{"path":"s.sh","content":"new\n"}'
	assert_equal "$(field created)" false
	assert_equal "$(cat s.sh)" new
	assert_equal "$(stat -c %a s.sh)" 750
	# A new inode: the file was renamed into place, not rewritten.
	assert [ "$(stat -c %i s.sh)" != "$before" ]
	run ls -A
	assert_output s.sh
}

@test "write through a symlink inside the workspace changes its target and keeps the link" {
	mkdir real
	printf 'x\n' >real/t.txt
	ln -s real/t.txt link
	tool write '{"path":"link","content":"y\n"}'
	assert_equal "$(field ok)" true
	assert [ -L link ]
	assert_equal "$(cat real/t.txt)" y
}

# ---- edit ----

@test "edit replaces one unique piece of text" {
	printf 'alpha\nbeta\ngamma\n' >f.txt
	tool edit '{"path":"f.txt","edits":[{"old_text":"beta","new_text":"BETA"}]}'
	assert_equal "$(field ok)" true
	assert_equal "$(field output)" "Edited 'f.txt': edits[0] at line 2"
	printf 'alpha\nBETA\ngamma\n' | cmp - f.txt
}

@test "edit applies several edits given in any order" {
	printf 'alpha\nbeta\ngamma\n' >f.txt
	tool edit '{"path":"f.txt","edits":[{"old_text":"gamma\n","new_text":"g\n"},{"old_text":"alpha\nbeta","new_text":"a\nb\nb2"}]}'
	assert_equal "$(field edits)" 2
	assert_equal "$(field output)" "Edited 'f.txt': edits[0] at line 3, edits[1] at line 1"
	printf 'a\nb\nb2\ng\n' | cmp - f.txt
}

@test "an edit whose old text is not found refuses the whole edit and names it" {
	printf 'alpha\nbeta\n' >f.txt
	cp f.txt orig
	tool edit '{"path":"f.txt","edits":[{"old_text":"alpha","new_text":"A"},{"old_text":"delta","new_text":"D"}]}'
	assert_equal "$(field ok)" false
	assert_equal "$(field failed_edit)" 1
	assert_equal "$(field reason)" not_found
	assert_equal "$(field output)" "edit: edits[1]: old_text was not found in 'f.txt'; nothing was changed (read the file again to see its text as it is)"
	cmp orig f.txt
}

@test "an edit whose old text occurs twice is refused with the count" {
	printf 'x = 1\ny = 2\nx = 1\n' >f.txt
	cp f.txt orig
	tool edit '{"path":"f.txt","edits":[{"old_text":"x = 1","new_text":"x = 3"}]}'
	assert_equal "$(field ok)" false
	assert_equal "$(field failed_edit)" 0
	assert_equal "$(field reason)" not_unique
	assert_equal "$(field matches)" 2
	assert_equal "$(field output)" "edit: edits[0]: old_text occurs 2 times in 'f.txt'; add surrounding lines to make it unique; nothing was changed"
	cmp orig f.txt
}

@test "overlapping edits are refused naming both" {
	printf 'alpha beta gamma\n' >f.txt
	cp f.txt orig
	tool edit '{"path":"f.txt","edits":[{"old_text":"alpha beta","new_text":"A"},{"old_text":"ta gam","new_text":"T"}]}'
	assert_equal "$(field ok)" false
	assert_equal "$(field failed_edit)" 1
	assert_equal "$(field reason)" overlap
	assert_equal "$(field overlaps)" 0
	assert_equal "$(field output)" "edit: edits[1] overlaps edits[0] (both change text at line 1); merge them into one edit; nothing was changed"
	cmp orig f.txt
}

@test "edits that only touch end to end are not overlapping" {
	printf 'abcdef\n' >f.txt
	tool edit '{"path":"f.txt","edits":[{"old_text":"abc","new_text":"1"},{"old_text":"def","new_text":"2"}]}'
	assert_equal "$(field ok)" true
	printf '12\n' | cmp - f.txt
}

@test "an edit with empty old text is refused" {
	printf 'a\n' >f.txt
	tool edit '{"path":"f.txt","edits":[{"old_text":"","new_text":"x"}]}'
	assert_equal "$(field output)" "edit: edits[0]: 'old_text' is empty; nothing was changed"
	tool edit '{"path":"f.txt","edits":[]}'
	assert_equal "$(field output)" "edit: 'edits' must be a non-empty array of {old_text, new_text}"
}

@test "edit keeps CRLF line endings: LFs in the edit match and become CRLF" {
	printf 'one\r\ntwo\r\nthree\r\n' >f.txt
	tool edit '{"path":"f.txt","edits":[{"old_text":"one\ntwo","new_text":"1\n2\n2b"}]}'
	assert_equal "$(field ok)" true
	printf '1\r\n2\r\n2b\r\nthree\r\n' | cmp - f.txt
}

@test "edit keeps a byte order mark" {
	printf '\357\273\277first\nsecond\n' >f.txt
	tool edit '{"path":"f.txt","edits":[{"old_text":"first","new_text":"1st"}]}'
	assert_equal "$(field ok)" true
	printf '\357\273\2771st\nsecond\n' | cmp - f.txt
}

@test "edit of a missing file says so" {
	tool edit '{"path":"nope.txt","edits":[{"old_text":"a","new_text":"b"}]}'
	assert_equal "$(field ok)" false
	assert_equal "$(field output)" "edit: cannot read 'nope.txt': No such file or directory"
}

# ---- the workspace's edge ----

@test "write and edit refuse a path with .. that leaves the workspace" {
	printf 'keep\n' >"$OUT/t.txt"
	mkdir sub
	for p in ../outside/t.txt sub/../../outside/t.txt ./sub/./../../outside/t.txt new/../../outside/t.txt; do
		tool write "{\"path\":\"$p\",\"content\":\"pwned\"}"
		assert_equal "$(field ok)" false
		assert_equal "$(field output)" "write: '$p' resolves to '$(cd "$OUT" && pwd -P)/t.txt', which is outside the workspace; write works only on files inside it"
		tool edit "{\"path\":\"$p\",\"edits\":[{\"old_text\":\"keep\",\"new_text\":\"pwned\"}]}"
		assert_equal "$(field ok)" false
	done
	assert_equal "$(cat "$OUT/t.txt")" keep
	assert [ ! -e new ]
}

@test "a path or a command holding a NUL byte is refused, and nothing is made" {
	for t in write read edit; do
		tool "$t" '{"path":"x\u0000/../../outside/w","content":"pwned","edits":[{"old_text":"a","new_text":"b"}]}'
		assert_equal "$(field ok)" false
		assert_equal "$(field output)" "$t: 'path' holds a NUL byte, which no file name can"
	done
	assert [ ! -e x ]
	assert [ ! -e "$OUT/w" ]
	tool bash '{"command":"touch made\u0000; echo pwned"}'
	assert_equal "$(field ok)" false
	assert_equal "$(field output)" "bash: 'command' holds a NUL byte, which a shell command cannot"
	assert [ ! -e made ]
}

@test "write refuses an absolute path outside the workspace" {
	tool write "{\"path\":\"$OUT/abs.txt\",\"content\":\"x\"}"
	assert_equal "$(field ok)" false
	assert [ ! -e "$OUT/abs.txt" ]
}

@test "write and edit refuse a symlink inside the workspace that points out" {
	printf 'keep\n' >"$OUT/t.txt"
	ln -s "$OUT/t.txt" link
	tool write '{"path":"link","content":"pwned"}'
	assert_equal "$(field ok)" false
	tool edit '{"path":"link","edits":[{"old_text":"keep","new_text":"pwned"}]}'
	assert_equal "$(field ok)" false
	assert_regex "$(field output)" "^edit: 'link' resolves to '.*/outside/t.txt', which is outside the workspace"
	assert_equal "$(cat "$OUT/t.txt")" keep
	assert [ -L link ]
}

@test "write refuses a new file under a symlinked directory that points out" {
	ln -s "$OUT" d
	tool write '{"path":"d/new/deeper.txt","content":"x"}'
	assert_equal "$(field ok)" false
	assert [ ! -e "$OUT/new" ]
}

@test "write refuses a dangling symlink that points out, and a link to the parent" {
	ln -s "$OUT/not-yet.txt" dangling
	tool write '{"path":"dangling","content":"x"}'
	assert_equal "$(field ok)" false
	assert [ ! -e "$OUT/not-yet.txt" ]
	ln -s .. up
	tool write '{"path":"up/outside/x.txt","content":"x"}'
	assert_equal "$(field ok)" false
	assert [ ! -e "$OUT/x.txt" ]
	ln -s "$WS/sub2/../.." up2
	tool write '{"path":"up2/x.txt","content":"x"}'
	assert_equal "$(field ok)" false
	assert [ ! -e "$BATS_TEST_TMPDIR/x.txt" ]
}

@test "read refuses a path outside the workspace too" {
	printf 'secret\n' >"$OUT/s.txt"
	ln -s "$OUT/s.txt" link
	tool read '{"path":"../outside/s.txt"}'
	assert_equal "$(field ok)" false
	tool read '{"path":"link"}'
	assert_equal "$(field ok)" false
	refute_regex "$output" secret
}

@test "paths that stay inside are allowed, however they are spelt" {
	mkdir -p sub other
	ln -s other lnk
	tool write "{\"path\":\"$WS/sub/../abs.txt\",\"content\":\"1\"}"
	assert_equal "$(field ok)" true
	assert_equal "$(field output)" "Created 'abs.txt' (1 byte)"
	tool write '{"path":"lnk/../sub/./x.txt","content":"2"}'
	assert_equal "$(field ok)" true
	assert_equal "$(cat sub/x.txt)" 2
	tool write '{"path":"lnk/y.txt","content":"3"}'
	assert_equal "$(cat other/y.txt)" 3
}

@test "the workspace may itself be reached through a symlink" {
	ln -s "$WS" "$BATS_TEST_TMPDIR/wslink"
	run_split xg-test tools --workspace "$BATS_TEST_TMPDIR/wslink" write '{"path":"in.txt","content":"x"}'
	assert_success
	assert_equal "$(field ok)" true
	assert_equal "$(cat "$WS/in.txt")" x
}

# Races the file tools (see tests/helper/tools.c), with the driver's options
# in "$@", and checks that nothing came in from outside or went out.
race_the_tools() {
	# The model's own bash can run such a loop in the background while the
	# file tools work: what was checked must be what is opened.
	mkdir d
	printf 'inside r\n' >d/r.txt
	printf 'inside a\n' >d/e.txt
	printf 'secret r\n' >"$OUT/r.txt"
	printf 'secret a\n' >"$OUT/e.txt"
	run_split timeout 120 xg-test tools "$@" --workspace "$WS" race "$OUT" 100
	assert_success
	assert_equal "$(wc -l <<<"$output")" 300
	refute_regex "$(jq -r .result.output <<<"$output")" secret
	assert_equal "$(ls -A "$OUT")" "$(printf 'e.txt\nr.txt')"
	assert_equal "$(cat "$OUT/r.txt" "$OUT/e.txt")" "$(printf 'secret r\nsecret a')"
	assert [ -d d ] && assert [ ! -L d ]
	run grep -rl secret "$WS"
	assert_failure
}

@test "a directory swapped for a symlink to outside, over and over, lets nothing in or out" {
	race_the_tools
}

@test "the same holds where the kernel has no openat2" {
	race_the_tools --no-openat2
}

@test "where the kernel has no openat2, the paths that stay inside still work" {
	mkdir -p real other
	printf 'x\n' >real/t.txt
	ln -s real/t.txt link
	ln -s "$WS/other" abs
	tool --no-openat2 write '{"path":"link","content":"y\n"}'
	assert_equal "$(field ok)" true
	assert [ -L link ]
	assert_equal "$(cat real/t.txt)" y
	tool --no-openat2 write '{"path":"abs/deep/er/z.txt","content":"z\n"}'
	assert_equal "$(field output)" "Created 'other/deep/er/z.txt' (2 bytes)"
	tool --no-openat2 read '{"path":"abs/deep/er/z.txt"}'
	assert_equal "$(field output)" "$(printf '     1\tz')"
	tool --no-openat2 edit '{"path":"link","edits":[{"old_text":"y","new_text":"w"}]}'
	assert_equal "$(field ok)" true
	assert_equal "$(cat real/t.txt)" w
	tool --no-openat2 read '{"path":"nope.txt"}'
	assert_equal "$(field output)" "read: cannot open 'nope.txt': No such file or directory"
}

# ---- todo_write ----

@test "todo_write returns the validated list" {
	tool todo_write '{"items":[{"content":"read the code","status":"completed"},{"content":"fix it","status":"in_progress"},{"content":"test","status":"pending"}]}'
	assert_equal "$(field ok)" true
	assert_equal "$(jq -c .result.items <<<"$output")" '[{"content":"read the code","status":"completed"},{"content":"fix it","status":"in_progress"},{"content":"test","status":"pending"}]'
	assert_equal "$(field output)" "$(printf '[x] read the code\n[~] fix it\n[ ] test\n1 of 3 done.')"
}

@test "todo_write refuses a bad status, empty content and a list that is not one" {
	tool todo_write '{"items":[{"content":"a","status":"pending"},{"content":"b","status":"done"}]}'
	assert_equal "$(field ok)" false
	assert_equal "$(field output)" "todo_write: items[1]: 'status' must be pending, in_progress or completed"
	assert_equal "$(field items)" null
	tool todo_write '{"items":[{"content":"  ","status":"pending"}]}'
	assert_equal "$(field output)" "todo_write: items[0]: 'content' is empty"
	tool todo_write '{"items":{"content":"a"}}'
	assert_equal "$(field output)" "todo_write: 'items' must be an array, found an object"
	tool todo_write '{"items":[]}'
	assert_equal "$(field ok)" true
	assert_equal "$(jq -c .result.items <<<"$output")" '[]'
}

# ---- ask_user ----

@test "ask_user with no ask command tells the model to proceed and state its assumption" {
	tool ask_user '{"question":"Which branch?"}'
	assert_equal "$(field ok)" true
	assert_equal "$(field answered)" false
	assert_equal "$(field output)" "Nobody is available to answer questions during this run. Proceed on your best judgement, and state in your reply what you assumed."
}

@test "ask_user gives the ask command the question on stdin and returns its stdout" {
	tool --ask "cat >'$BATS_TEST_TMPDIR/q'; echo 'use main'; echo noise >&2" ask_user '{"question":"Which branch?"}'
	assert_equal "$(field ok)" true
	assert_equal "$(field answered)" true
	assert_equal "$(field output)" "use main"
	assert_equal "$(cat "$BATS_TEST_TMPDIR/q")" "Which branch?"
}

@test "ask_user says so when the ask command fails, answers nothing or takes too long" {
	tool --ask 'exit 4' ask_user '{"question":"q"}'
	assert_equal "$(field answered)" false
	assert_equal "$(field output)" "The ask command failed (exit code 4) and gave no answer. Nobody is available to answer questions during this run. Proceed on your best judgement, and state in your reply what you assumed."
	tool --ask 'cat >/dev/null' ask_user '{"question":"q"}'
	assert_equal "$(field answered)" false
	assert_regex "$(field output)" "^The person gave no answer"
	tool --ask 'sleep 300' --ask-timeout 1 ask_user '{"question":"q"}'
	assert_equal "$(field answered)" false
	assert_regex "$(field output)" "^No answer came within 1 s\\. Nobody is available"
}

@test "ask_user bounds the answer's size" {
	tool --ask 'cat >/dev/null; head -c 100000 /dev/zero | tr "\0" a' ask_user '{"question":"q"}'
	assert_equal "$(field answered)" true
	run field output
	assert_equal "${#lines[0]}" 65536
	assert_equal "${lines[1]}" "[the answer was cut at 65536 bytes]"
}

@test "the ask command never gets a terminal" {
	tool_on_terminal --ask "cat >/dev/null; $TTY_PROBE" ask_user '{"question":"q"}'
	assert_line --index 0 0
	assert_line --index 1 "no terminal"
}

# ---- the gate ----

@test "a gate that gives true lets the call run" {
	tool --gate '.name == "bash" and (.args.command | test("^(git|make)( |$)"))' bash '{"command":"make --version >/dev/null; echo ran"}'
	assert_equal "$(jq -c .gate <<<"$output")" '{"allow":true}'
	assert_equal "$(field output)" ran
}

@test "a gate that gives false refuses with the default reason and the tool does not run" {
	tool --gate '.name == "bash" and (.args.command | test("^(git|make)( |$)"))' bash '{"command":"touch ran"}'
	assert_equal "$(jq -c . <<<"$output")" '{"gate":{"allow":false,"reason":"the tool gate refused this call"},"result":null}'
	assert [ ! -e ran ]
}

@test "a gate that gives a string refuses with it as the reason" {
	tool --gate 'if .name == "bash" then "bash is for git and make only" else true end' bash '{"command":"touch ran"}'
	assert_equal "$(jq -c .gate <<<"$output")" '{"allow":false,"reason":"bash is for git and make only"}'
	assert [ ! -e ran ]
}

@test "the gate sees the tool_call record" {
	tool --id call-7 --gate '.type == "tool_call" and .id == "call-7" and .name == "read" and .args.path == "f"' read '{"path":"f"}'
	assert_equal "$(jq -c .gate <<<"$output")" '{"allow":true}'
}

@test "a gate that gives anything else, nothing, or an error refuses and says why" {
	tool --gate '1' bash '{"command":"true"}'
	assert_equal "$(jq -r .gate.reason <<<"$output")" "the tool gate gave a number, not true, false or a reason, so the call is refused"
	tool --gate 'empty' bash '{"command":"true"}'
	assert_equal "$(jq -r .gate.reason <<<"$output")" "the tool gate gave no decision (no output), so the call is refused"
	tool --gate 'error("no network")' bash '{"command":"true"}'
	assert_equal "$(jq -r .gate.reason <<<"$output")" "the tool gate failed, so the call is refused: no network"
	tool --gate '.args.command + 1' bash '{"command":"true"}'
	assert_equal "$(jq -r .gate.allow <<<"$output")" false
	assert_regex "$(jq -r .gate.reason <<<"$output")" "^the tool gate failed, so the call is refused: string .* cannot be added"
	assert_equal "$(field ok)" null
	tool --gate '"not today" | halt_error(1)' bash '{"command":"true"}'
	assert_equal "$(jq -r .gate.reason <<<"$output")" "the tool gate halted, so the call is refused: not today"
}

@test "one compiled gate decides call after call, an error in one not spoiling the next" {
	cat >calls <<'EOF'
{"type":"tool_call","id":"1","name":"bash","args":{"command":"git status"}}
{"type":"tool_call","id":"2","name":"bash","args":{"command":"rm -rf /"}}
{"type":"tool_call","id":"3","name":"bash","args":{"command":7}}
{"type":"tool_call","id":"4","name":"read","args":{"path":"f"}}
{"type":"tool_call","id":"5","name":"bash","args":{"command":"make test"}}
EOF
	run_split xg-test tools --gate 'if .name != "bash" then true elif .args.command | test("^(git|make) ") then true else "bash is for git and make only" end' gate <calls
	assert_success
	assert_equal "$(jq -c '[.id, .allow]' <<<"$output" | tr '\n' ' ')" '["1",true] ["2",false] ["3",false] ["4",true] ["5",true] '
	assert_equal "$(jq -r 'select(.id == "2") | .reason' <<<"$output")" "bash is for git and make only"
	assert_regex "$(jq -r 'select(.id == "3") | .reason' <<<"$output")" "^the tool gate failed, so the call is refused: number \\(7\\) cannot be matched"
}

@test "the gate examples of docs/tools.md decide as they say" {
	# The filters between "Examples:" and the next paragraph, one a line.
	mapfile -t ex < <(python3 -c '
import re, sys
doc = open(sys.argv[1]).read()
part = doc[doc.index("Examples:"):doc.index("Mind that")]
for f in re.findall(r"--gate \x27(.*?)\x27", part, re.S):
    print(" ".join(f.split()))' "$XG_SRCDIR/docs/tools.md")
	assert_equal "${#ex[@]}" 3
	cat >calls <<'EOF'
{"type":"tool_call","id":"git","name":"bash","args":{"command":"git log"}}
{"type":"tool_call","id":"make","name":"bash","args":{"command":"make"}}
{"type":"tool_call","id":"rm","name":"bash","args":{"command":"rm -rf build"}}
{"type":"tool_call","id":"read","name":"read","args":{"path":"README"}}
{"type":"tool_call","id":"src","name":"edit","args":{"path":"src/a.c","edits":[]}}
{"type":"tool_call","id":"etc","name":"write","args":{"path":"Makefile","content":""}}
EOF
	decide() {
		xg-test tools --gate "$1" gate <calls | jq -r '"\(.id)=\(.allow)"' | tr '\n' ' '
	}
	assert_equal "$(decide "${ex[0]}")" "git=true make=true rm=false read=true src=true etc=true "
	assert_equal "$(decide "${ex[1]}")" "git=false make=false rm=false read=true src=false etc=false "
	assert_equal "$(decide "${ex[2]}")" "git=true make=true rm=true read=true src=true etc=false "
}

@test "a gate filter that does not compile is a configuration error with jq's message" {
	ANY_STATUS=1 tool --gate '.name ==' bash '{"command":"touch ran"}'
	assert_equal "$status" 78
	assert_output ""
	assert_regex "$stderr" "^xg-test-tools: bad gate filter: jq: error: syntax error"
	assert_regex "$stderr" "jq: 1 compile error"
	assert [ ! -e ran ]
}

@test "plan mode's gate refuses write and edit and allows the rest" {
	for t in write edit; do
		tool --plan "$t" '{"path":"x","content":"x"}'
		assert_equal "$(jq -r .gate.reason <<<"$output")" "plan mode: $t is not available while planning; read, investigate and propose the plan instead"
	done
	assert [ ! -e x ]
	tool --plan bash '{"command":"echo ok"}'
	assert_equal "$(field output)" ok
	seq 2 >f
	tool --plan read '{"path":"f"}'
	assert_equal "$(field ok)" true
}

@test "plan mode's built-in rule decides as its jq filter does" {
	for t in bash read write edit todo_write ask_user other; do
		tool --plan "$t" '{}'
		native=$(jq -c .gate <<<"$output")
		tool --plan-jq "$t" '{}'
		assert_equal "$native" "$(jq -c .gate <<<"$output")"
	done
	assert_equal "$native" '{"allow":true}'
	tool --plan-jq edit '{}'
	assert_equal "$(jq -r .gate.allow <<<"$output")" false
}

@test "plan mode's gate comes before the user's gate" {
	tool --plan --gate 'true' write '{"path":"x","content":"x"}'
	assert_equal "$(jq -r .gate.allow <<<"$output")" false
	tool --plan --gate '"no reading"' read '{"path":"x"}'
	assert_equal "$(jq -r .gate.reason <<<"$output")" "no reading"
}
