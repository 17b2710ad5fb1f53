#!/usr/bin/env bats
# xg, the dispatcher: xg FOO runs xg-FOO; xg run, plan and resume run the
# pipeline of a run, print it (--dry-run) or render it for a person.

load lib/helper

setup() {
	mkdir -p extra
	printf '#!/bin/sh\nprintf "[%%s]" "$@"; echo; exit 7\n' >extra/xg-hello
	chmod +x extra/xg-hello
	PATH="$PWD/extra:$PATH"
}

# A tree holding a copy of xg, the real upstream stages and a stub xg-run
# that keeps its standard input and arguments (in $STUB/stdin and
# $STUB/args) and acts as $STUB_MODE says: this checks what xg assembles,
# whatever xg-run does.  xg-snapshot is the real one once it is built, else
# a stand-in that passes records through.  The tree comes first in PATH, so
# the programs sh would run are those xg runs.
stub_tree() {
	TREE="$BATS_TEST_TMPDIR/tree"
	STUB="$BATS_TEST_TMPDIR/stub"
	# A local server configured, so the real xg-choices has a model to start.
	export LLAMACPP_BASE_URL=http://127.0.0.1:8080/v1
	mkdir -p "$TREE" "$STUB"
	cp "$XG_SRCDIR/bin/xg" "$TREE/"
	for p in xg-choices xg-prompt-compile; do
		ln -s "$XG_SRCDIR/bin/$p" "$TREE/$p"
	done
	if [ -x "$XG_SRCDIR/bin/xg-snapshot" ]; then
		ln -s "$XG_SRCDIR/bin/xg-snapshot" "$TREE/xg-snapshot"
	else
		printf '#!/bin/sh\nexec cat\n' >"$TREE/xg-snapshot"
		chmod +x "$TREE/xg-snapshot"
	fi
	cat >"$TREE/xg-run" <<-'EOF'
	#!/bin/sh
	printf '%s\n' "$@" >"$STUB/args"
	cat >"$STUB/stdin"
	case "${STUB_MODE:-}" in
	exit=*) echo '{"type":"run_end","status":"failed"}'; exit "${STUB_MODE#exit=}" ;;
	kill) kill -KILL $$ ;;
	wait)
		trap 'echo "{\"type\":\"run_end\",\"status\":\"interrupted\",\"stop\":\"user\",\"signal\":\"TERM\"}"; kill $!; exit 143' TERM
		trap 'echo "{\"type\":\"run_end\",\"status\":\"interrupted\",\"stop\":\"user\",\"signal\":\"INT\"}"; kill $!; exit 130' INT
		sleep 60 & : >"$STUB/ready"; wait $! ;;
	render)
		echo '{"type":"run_start","schema":"xg/1","run":"r1","conversation":"c-42"}'
		echo '{"type":"text","text":"All "}'
		echo '{"type":"text","text":"done."}'
		echo '{"type":"message","role":"assistant","text":"All done."}'
		echo '{"type":"tool_call","id":"t1","name":"bash","args":{"command":"make check"}}'
		echo '{"type":"tool_result","id":"t1","ok":true,"output":"","ms":20}'
		echo '{"type":"run_end","status":"completed","reply":"All done.","tool_calls":1,"ms":30}' ;;
	*) echo '{"type":"run_end","status":"completed"}' ;;
	esac
	EOF
	chmod +x "$TREE/xg-run"
	export STUB
	PATH="$TREE:$PATH"
}

# The records xg-run was given, without the fields that change from one
# run to the next.
stub_input() {
	jq -c 'del(.elapsed_ms)' "$STUB/stdin"
}

TRICKY="it's \$HOME and \`date\` \"quoted\" \\n a backslash \\
a second  line	with a tab; % %s & | > \$(rm -rf /) '\\''"

@test "xg FOO runs xg-FOO with the arguments, and exits with its status" {
	run xg hello 'two words' '' -x --y=z
	assert_equal "$status" 7
	assert_output "[two words][][-x][--y=z]"
}

@test "an unknown command is exit 2 with a message" {
	run_split xg no-such-thing
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg: 'no-such-thing' is not an xg command; 'xg commands' lists them"
}

@test "a command name with a slash is not looked up as a path" {
	run_split xg ../extra/hello
	assert_equal "$status" 2
}

@test "no command is exit 2 with the usage" {
	run_split xg
	assert_equal "$status" 2
	assert_regex "$stderr" "usage: xg run"
}

@test "xg commands lists what PATH and xg's own directory hold" {
	run xg commands
	assert_success
	assert_line hello
	assert_line plan
	assert_line resume
	assert_equal "$(printf '%s\n' "$output" | grep -c '^run$')" 1
}

@test "the programs beside xg come before PATH" {
	mkdir -p tree
	cp "$XG_SRCDIR/bin/xg" tree/
	printf '#!/bin/sh\necho mine\n' >tree/xg-hello
	chmod +x tree/xg-hello
	run tree/xg hello
	assert_success
	assert_output mine
}

@test "xg run --dry-run prints the pipeline with the request record" {
	stub_tree
	run_split xg run --dry-run 'fix the failing test'
	assert_success
	assert_output "printf '%s\\n' '{\"type\":\"request\",\"text\":\"fix the failing test\",\"mode\":\"normal\",\"cwd\":\"$PWD\"}' | xg-snapshot | xg-choices start | xg-prompt-compile | xg-run"
	[ ! -e "$STUB/stdin" ] || fail "--dry-run ran xg-run"
}

@test "the options go into the request, and plan sets its mode" {
	stub_tree
	run_split xg plan --dry-run --model fake/m --effort high --account work \
		--variant terse@abc --conversation c-1 'do it'
	assert_success
	req=$(printf '%s\n' "$output" | sed "s/^printf '%s\\\\n' '//; s/' | xg-snapshot.*//")
	run jq -c . <<<"$req"
	assert_output "{\"type\":\"request\",\"text\":\"do it\",\"mode\":\"plan\",\"conversation\":\"c-1\",\"account\":\"work\",\"variant\":\"terse@abc\",\"model\":\"fake/m\",\"effort\":\"high\",\"cwd\":\"$PWD\"}"
}

@test "the dry-run command keeps quotes, dollars, newlines and spaces when sh runs it" {
	stub_tree
	run_split xg run --dry-run "$TRICKY"
	assert_success
	assert_equal "${#lines[@]}" 1
	sh -c "$output" >out
	run jq -r 'select(.type == "request") | .text' "$STUB/stdin"
	assert_output "$TRICKY"
}

@test "the dry-run command runs pasted into a Makefile" {
	stub_tree
	cmd=$(xg run --dry-run "$TRICKY")
	[[ "$cmd" != *'$'* ]] || fail "a \$ would be expanded by make: $cmd"
	printf 'all:\n\t%s\n' "$cmd" >Makefile
	run make -s
	assert_success
	assert_output '{"type":"run_end","status":"completed"}'
	run jq -r 'select(.type == "request") | .text' "$STUB/stdin"
	assert_output "$TRICKY"
}

@test "stages found beside xg but not in PATH are printed by their quoted paths" {
	stub_tree
	mkdir -p "my tree"
	cp "$TREE"/* "my tree/"
	PATH="${PATH#"$TREE:"}"
	run_split "my tree/xg" run --dry-run 'hi'
	assert_success
	assert_output --partial " | '$PWD/my tree/xg-choices' start | "
	assert_output --regexp " \| '$PWD/my tree/xg-run'\$"
	run sh -c "$output"
	assert_success
	assert_output '{"type":"run_end","status":"completed"}'
}

@test "the dry-run pipeline run by sh gives xg-run what xg run --json gives it" {
	stub_tree
	sh -c "$(xg run --dry-run --model llamacpp/gpt-oss-20b "$TRICKY")" >sh.out
	stub_input >sh.in
	xg run --json --model llamacpp/gpt-oss-20b "$TRICKY" >xg.out
	stub_input >xg.in
	grep -q '"type":"pack"' xg.in || fail "no pack reached xg-run: $(cat xg.in)"
	run diff sh.in xg.in
	assert_success
	run diff sh.out xg.out
	assert_success
	run cat "$STUB/args"
	assert_output ""
}

@test "the records xg-run writes pass through untouched" {
	stub_tree
	STUB_MODE=render run xg run --json 'hi'
	assert_success
	assert_line --index 0 '{"type":"run_start","schema":"xg/1","run":"r1","conversation":"c-42"}'
	assert_line --index 6 '{"type":"run_end","status":"completed","reply":"All done.","tool_calls":1,"ms":30}'
	assert_equal "${#lines[@]}" 7
}

@test "xg run exits with xg-run's status" {
	stub_tree
	for code in 0 1 65 69 75 77 78; do
		STUB_MODE=exit=$code run xg run --json 'hi'
		assert_equal "$status" "$code"
		assert_output '{"type":"run_end","status":"failed"}'
	done
}

@test "xg-run killed by a signal is 128 plus its number" {
	stub_tree
	STUB_MODE=kill run xg run --json 'hi'
	assert_equal "$status" 137
}

@test "a missing stage is exit 70 naming it, and nothing runs" {
	mkdir -p lone
	cp "$XG_SRCDIR/bin/xg" lone/
	PATH="$PWD/lone:/usr/bin:/bin" run_split lone/xg run --json 'hi'
	assert_equal "$status" 70
	assert_regex "$stderr" "^xg: cannot find 'xg-[a-z-]+' beside xg or in PATH"
}

@test "SIGTERM to xg reaches xg-run, whose last records and status come out" {
	stub_tree
	STUB_MODE=wait xg run --json 'hi' >out 2>err 3>&- &
	pid=$!
	for i in $(seq 1 200); do [ -e "$STUB/ready" ] && break; sleep 0.05; done
	[ -e "$STUB/ready" ] || fail "xg-run never started"
	kill -TERM "$pid"
	rc=0; wait "$pid" || rc=$?
	assert_equal "$rc" 143
	run cat out
	assert_output '{"type":"run_end","status":"interrupted","stop":"user","signal":"TERM"}'
}

@test "SIGINT sent to xg reaches xg-run, whose last records and status come out" {
	stub_tree
	# Python, not the shell, starts xg: a shell's background job would
	# start with SIGINT ignored, which xg keeps.
	run python3 - <<-'EOF'
	import os, signal, subprocess, sys, time
	# Whoever started the tests may have left SIGINT ignored (a job started
	# with & does); xg would keep that, so put it back for this run.
	p = subprocess.Popen(["xg", "run", "--json", "hi"], stdout=subprocess.PIPE,
	                     env=dict(os.environ, STUB_MODE="wait"),
	                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
	ready = os.path.join(os.environ["STUB"], "ready")
	for _ in range(200):
	    if os.path.exists(ready):
	        break
	    time.sleep(0.05)
	p.send_signal(signal.SIGINT)
	out, _ = p.communicate()
	sys.stdout.write(out.decode())
	sys.exit(p.returncode)
	EOF
	assert_equal "$status" 130
	assert_output '{"type":"run_end","status":"interrupted","stop":"user","signal":"INT"}'
}

@test "^C on a terminal interrupts xg-run, and xg waits for its last records" {
	stub_tree
	run python3 - <<-'EOF'
	import os, pty, signal, sys, time
	os.environ["STUB_MODE"] = "wait"
	pid, fd = pty.fork()
	if pid == 0:
	    signal.signal(signal.SIGINT, signal.SIG_DFL)
	    os.execvp("xg", ["xg", "run", "--json", "hi"])
	ready = os.path.join(os.environ["STUB"], "ready")
	for _ in range(200):
	    if os.path.exists(ready):
	        break
	    time.sleep(0.05)
	os.write(fd, b"\x03")
	out = b""
	while True:
	    try:
	        data = os.read(fd, 4096)
	    except OSError:
	        break
	    if not data:
	        break
	    out += data
	_, st = os.waitpid(pid, 0)
	sys.stdout.write(out.decode().replace("\r", ""))
	sys.exit(os.waitstatus_to_exitcode(st))
	EOF
	assert_equal "$status" 130
	assert_output --regexp '(^|\^C)\{"type":"run_end","status":"interrupted","stop":"user","signal":"INT"\}$'
}

@test "standard input left open by the caller never holds up a run" {
	stub_tree
	mkfifo held
	exec 5<>held
	run timeout 60 xg run --json 'hi' <&5
	exec 5>&-
	assert_success
	assert_output '{"type":"run_end","status":"completed"}'
	run jq -r 'select(.type == "request") | .text' "$STUB/stdin"
	assert_output hi
}

@test "a first stage that ends without reading a long request does not hold up xg" {
	stub_tree
	rm "$TREE/xg-snapshot"
	printf '#!/bin/sh\nexit 0\n' >"$TREE/xg-snapshot"
	chmod +x "$TREE/xg-snapshot"
	head -c 300000 /dev/zero | tr '\0' a >long.txt
	run timeout 60 xg run --json - <long.txt
	assert_success
	assert_output '{"type":"run_end","status":"completed"}'
}

@test "xg run - reads the text from standard input" {
	stub_tree
	printf 'first line\nsecond\n\n' | xg run --json - >/dev/null
	run jq -r 'select(.type == "request") | .text' "$STUB/stdin"
	assert_output "first line
second"
}

@test "xg run needs exactly one non-empty text" {
	run_split xg run
	assert_equal "$status" 2
	run_split xg run two words
	assert_equal "$status" 2
	assert_regex "$stderr" "'run' takes one text"
	run_split xg run ''
	assert_equal "$status" 2
	run_split xg run --conversation ../x hi
	assert_equal "$status" 2
}

@test "xg resume without an id goes on with the conversation written to last" {
	stub_tree
	mkdir -p "$XG_HOME/state/conversations"
	for id in older newest-by-name zz-oldest; do
		echo '{"type":"conversation","schema":"xg/1","id":"'$id'"}' \
			>"$XG_HOME/state/conversations/$id.jsonl"
	done
	touch -d '2026-01-01 10:00' "$XG_HOME/state/conversations/zz-oldest.jsonl"
	touch -d '2026-01-02 10:00' "$XG_HOME/state/conversations/newest-by-name.jsonl"
	touch -d '2026-01-03 10:00' "$XG_HOME/state/conversations/older.jsonl"
	xg resume --json 'go on' >/dev/null
	run jq -r 'select(.type == "request") | [.conversation, .mode, .text] | join(" ")' "$STUB/stdin"
	assert_output "older normal go on"
}

@test "xg resume ID TEXT names the conversation; one that does not exist is exit 65" {
	stub_tree
	mkdir -p "$XG_HOME/state/conversations"
	echo '{"type":"conversation","schema":"xg/1","id":"c-7"}' >"$XG_HOME/state/conversations/c-7.jsonl"
	xg resume --json c-7 'again' >/dev/null
	run jq -r 'select(.type == "request") | .conversation' "$STUB/stdin"
	assert_output c-7
	run_split xg resume c-8 'again'
	assert_equal "$status" 65
	assert_regex "$stderr" "^xg: there is no conversation 'c-8'"
}

@test "xg resume with no conversation at all is exit 65" {
	stub_tree
	run_split xg resume 'again'
	assert_equal "$status" 65
	assert_equal "$stderr" "xg: there is no conversation to resume"
}

@test "the renderer shows streamed text, a line per tool call, notices and the status" {
	run xg-test render <<-'EOF'
	{"type":"run_start","schema":"xg/1","run":"r1","conversation":"c-9"}
	{"type":"snapshot","commit":null}
	{"type":"notice","from":"xg-choices","text":"using llamacpp/gpt-oss-20b"}
	{"type":"text","text":"Look"}
	{"type":"text","text":"ing.\n"}
	{"type":"message","role":"assistant","text":"Looking.\n"}
	{"type":"tool_call","id":"a","name":"bash","args":{"command":"make test\nmake check"}}
	{"type":"tool_call","id":"b","name":"edit","args":{"path":"src/x.c","edits":[]}}
	{"type":"tool_result","id":"b","ok":false,"output":"old text 1 occurs twice\nmore","ms":3}
	{"type":"tool_result","id":"a","ok":true,"output":"ok","ms":1234}
	{"type":"retry","attempt":2,"of":8,"delay_ms":1500,"reason":"HTTP 503"}
	{"type":"todo","items":[{"content":"a","status":"completed"},{"content":"b","status":"pending"}]}
	{"type":"message","role":"assistant","text":"Fixed."}
	{"type":"plan","outcome":"no_plan","problems":[]}
	{"type":"usage","input":1}
	{"type":"run_end","status":"completed","reply":"Fixed.","usage":{"input":100,"cached_input":80,"output":20},"tool_calls":2,"ms":2500}
	EOF
	assert_success
	assert_output "note: using llamacpp/gpt-oss-20b
Looking.
! edit: src/x.c (failed, 3 ms): old text 1 occurs twice...
> bash: make test... (ok, 1.2 s)
retry 2 of 8 in 1.5 s: HTTP 503
todo: 1 of 2 done
Fixed.
plan: no_plan
xg: completed; 2 tool calls, 2.5 s, tokens 100 in (80 cached), 20 out; conversation c-9"
}

@test "the renderer shows the reply of a run that streamed nothing, and why it failed" {
	run xg-test render <<-'EOF'
	{"type":"run_end","status":"failed","reason":"no credentials for openai","reply":"","tool_calls":0,"ms":5}
	EOF
	assert_output "xg: failed: no credentials for openai; 0 tool calls, 5 ms"
	run xg-test render <<-'EOF'
	{"type":"run_end","status":"interrupted","stop":"user","reply":"Partial.","tool_calls":0,"ms":5}
	EOF
	assert_output "Partial.
xg: interrupted (user); 0 tool calls, 5 ms"
}

@test "the renderer drops control characters and says when no run_end came" {
	run xg-test render <<-'EOF'
	{"type":"text","text":"red \u001b[31mtext\u0007 here"}
	{"type":"tool_call","id":"z","name":"bash","args":{"command":"sleep 9"}}
	EOF
	assert_output "red [31mtext here
! bash: sleep 9 (no result)
xg: the run ended without a run_end record"
}

@test "the renderer reports a line that is not a record and reads the rest" {
	run_split xg-test render < <(printf '{"type":"text","text":"Hi"}\nnot json\n%s\n' \
		'{"type":"run_end","status":"completed"}')
	assert_success
	assert_output "Hi
xg: the run ended without a run_end record"
	assert_regex "$stderr" "standard input: line 2: not JSON"
}

@test "on a terminal xg run renders for a person and asks xg-run to stream" {
	stub_tree
	export STUB_MODE=render
	run script -qec "xg run 'hi'" /dev/null
	assert_success
	run tr -d '\r' <<<"$output"
	assert_output "All done.
> bash: make check (ok, 20 ms)
xg: completed; 1 tool call, 30 ms; conversation c-42"
	run cat "$STUB/args"
	assert_output -- "--stream"
}

@test "on a terminal --json still writes the records" {
	stub_tree
	export STUB_MODE=render
	run script -qec "xg run --json 'hi'" /dev/null
	assert_success
	assert_output --partial '{"type":"run_start"'
}

# The examples of xg(1), one command a line, as the page shows them.
examples() {
	awk '/^\.Sh EXAMPLES/ { f = 1; next } /^\.Sh/ { f = 0 }
		f && /^\.Bd -literal/ { b = 1; next } f && /^\.Ed/ { b = 0; next }
		f && b' "$XG_SRCDIR/man/xg.1" | sed 's/\\e/\\/g'
}

@test "the examples in xg(1) run" {
	stub_tree
	mkdir -p "$XG_HOME/state/conversations"
	echo '{"type":"conversation","schema":"xg/1","id":"c-1"}' >"$XG_HOME/state/conversations/c-1.jsonl"
	echo 'tidy the README' >task.txt
	n=0
	while IFS= read -r example; do
		case "$example" in
		*classify-plan*) [ -x "$XG_SRCDIR/bin/xg-classify-plan" ] || continue ;;
		esac
		rm -f "$STUB/stdin"
		run sh -c "$example"
		[ "$status" -eq 0 ] || fail "'$example' exited $status: $output"
		case "$example" in
		*--dry-run*) assert_output --regexp "^printf .* \\| xg-run\$" ;;
		"xg run"* | "xg plan"* | "xg resume"*)
			[ -s "$STUB/stdin" ] || fail "'$example' ran no pipeline" ;;
		*classify-plan*) assert_output --partial '"outcome":"no_plan"' ;;
		*commands) assert_line run ;;
		esac
		n=$((n + 1))
	done < <(examples)
	[ "$n" -ge 6 ] || fail "only $n examples ran"
	run cat plan.ndjson
	assert_output '{"type":"run_end","status":"completed"}'
}

# With the real xg-run, against the loopback fake provider.  These need
# xg-run, which is built once its branch is merged.
need_xg_run() {
	[ -x "$XG_SRCDIR/bin/xg-run" ] || skip "xg-run is not built"
	unset OPENAI_API_KEY ANTHROPIC_API_KEY OPENROUTER_API_KEY
	export XG_TEST_KEY=test-secret-4d7a FAKE_PROVIDER_KEY=test-secret-4d7a
	load lib/fake-provider
	fake_provider_start || return 1
	fake_catalog openai-chat
}

teardown() {
	if declare -F fake_provider_stop >/dev/null; then fake_provider_stop; fi
}

# The records without what differs from one run to the next: ids, times,
# the snapshot's commit.
steady() {
	jq -c 'walk(if type == "object" then del(.run, .conversation, .ms, .elapsed_ms,
		.at, .commit, .snapshot, .started, .ended, .t) else . end)' "$1"
}

@test "with xg-run, the dry-run pipeline run by sh gives the same records as xg run --json" {
	need_xg_run <<-'EOF'
	{"text": "Done: nothing to change.", "usage": {"input": 10, "output": 4}, "repeat": 2}
	EOF
	sh -c "$(xg run --dry-run --model fake/m "$TRICKY")" >sh.out
	xg run --json --model fake/m "$TRICKY" >xg.out
	grep -q '"type":"run_end"' xg.out || fail "no run_end: $(cat xg.out)"
	steady sh.out >sh.steady
	steady xg.out >xg.steady
	run diff sh.steady xg.steady
	assert_success
	run jq -r 'select(.type == "run_end") | "\(.status) \(.reply)"' xg.out
	assert_output "completed Done: nothing to change."
	run fake_log 'print(len(log))'
	assert_output 2
}

@test "with xg-run, a run's exit status and run_end come through xg" {
	need_xg_run </dev/null
	unset XG_TEST_KEY
	run_split xg run --json --model fake/m 'hi'
	assert_equal "$status" 77
	run jq -r 'select(.type == "run_end") | .status' <<<"$output"
	assert_output failed
}

@test "with xg-run, a run on a terminal shows the reply and how it ended" {
	need_xg_run <<-'EOF'
	{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "echo hi"}}]}
	{"text": "It printed hi."}
	EOF
	run script -qec "xg run --model fake/m 'run echo hi'" /dev/null
	assert_success
	run tr -d '\r' <<<"$output"
	assert_line --regexp '^> bash: echo hi \(ok, [0-9.]+ m?s\)$'
	assert_line 'It printed hi.'
	assert_line --regexp '^xg: completed; 1 tool call, '
}

@test "a bad mode, conversation id or account name gets the same words from every program" {
	mode="'Bad' is not a mode name (1 to 64 of [a-z0-9_-], starting with a letter)"
	conv="'../x' is not a conversation id (1 to 128 of [A-Za-z0-9._-], not starting with '.' or '-')"
	acct="is not an account name (1 to 64 of [A-Za-z0-9._-], not starting with '.' or '-')"
	for c in "xg-run --mode Bad x" "xg-choices get --mode Bad" "xg-prompt-compile --mode Bad"; do
		run_split $c </dev/null
		assert_equal "$status" 2
		[[ "$stderr" == "${c%% *}: $mode"* ]] || fail "$c: $stderr"
	done
	for c in "xg-run --conversation ../x x" "xg run --conversation ../x x" \
		"xg-choices start --conversation ../x"; do
		run_split $c </dev/null
		assert_equal "$status" 2
		[[ "$stderr" == "${c%% *}: $conv"* ]] || fail "$c: $stderr"
	done
	for c in "xg-choices get --account .x" "xg run --account .x x" "xg-run --account .x x"; do
		run_split $c </dev/null
		assert_failure
		[[ "$stderr" == "${c%% *}: '.x' "*"$acct"* ]] || fail "$c: $stderr"
	done
}
