#!/usr/bin/env bats
# xg, the dispatcher: xg FOO runs xg-FOO; xg run, plan and resume run the
# pipeline of a run, print it (--dry-run) or render it for a person; help,
# version and the completions.

load lib/helper

setup() {
	# xg reads what is piped to it: no test gives it the runner's input.
	exec </dev/null
	mkdir -p extra
	printf '#!/bin/sh\nprintf "[%%s]" "$@"; echo; exit 7\n' >extra/xg-hello
	chmod +x extra/xg-hello
	PATH="$PWD/extra:$PATH"
}

# A tree holding a copy of xg, the real upstream stages and a stub xg-run
# that keeps its standard input and arguments (in $STUB/stdin and
# $STUB/args) and acts as $STUB_MODE says: this checks what xg assembles,
# whatever xg-run does.  xg runs xg-run alone; the upstream stages are for
# the --dry-run line, which sh runs.  xg-snapshot is the real one once it is built, else
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
	# bash, not sh: dash cannot close a descriptor past 9.
	cat >"$TREE/xg-run" <<-'EOF'
	#!/bin/bash
	printf '%s\n' "$@" >"$STUB/args"
	if [ "${STUB_MODE:-}" = cue ]; then
		# What the cue is, and the programs xg has started, are noted
		# before the cue is closed.
		cue=$(readlink "/proc/$$/fd/$XG_RUN_SENT_FD")
		printf '%s %s\n' "$XG_RUN_SENT_FD" "$cue" >"$STUB/cue"
		read -r -a kids <"/proc/$PPID/task/$PPID/children"
		for k in "${kids[@]}"; do
			read -r comm <"/proc/$k/comm" && echo "$comm"
		done >"$STUB/kids"
		eval "exec $XG_RUN_SENT_FD>&-"
		cat >"$STUB/stdin"
		echo '{"type":"run_end","status":"completed"}'
		exit 0
	fi
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
	pass)
		cat "$STUB/stdin"
		echo '{"type":"run_end","status":"completed"}' ;;
	message)
		echo '{"type":"message","role":"assistant","text":"First."}'
		echo '{"type":"message","role":"user","text":"A question."}'
		echo '{"type":"message","role":"assistant","text":"From the message."}'
		echo '{"type":"run_end","status":"completed","reply":""}' ;;
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

# The request record among them.
stub_request() {
	jq -c 'select(.type == "request")' "$STUB/stdin"
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

@test "xg help prints the usage and the commands" {
	run_split xg help
	assert_success
	assert_line --index 0 --regexp '^usage: xg run \[--json\] '
	assert_line '   or: xg help [command]'
	assert_line --regexp '^  -o, --reply file +write the final reply alone to file$'
	assert_line "The commands ('xg help COMMAND' tells of one):"
	for c in commands goal help hello plan resume run version; do
		assert_line "  $c"
	done
	run xg --help
	assert_success
	assert_line --index 0 --regexp '^usage: xg run '
}

@test "xg help VERB and xg VERB --help print that verb's usage" {
	run_split xg help run
	assert_success
	assert_line --index 0 --regexp '^usage: xg run \[--json\] .* \[-o file\] text$'
	refute_output --partial '   or:'
	assert_line --regexp '^      --gate filter +'
	assert_line 'Run an agent on a request.'
	help=$output
	run xg run --help
	assert_success
	assert_equal "$output" "$help"
	run xg help resume
	assert_line --index 0 --regexp '^usage: xg resume .* \[conversation\] text$'
	assert_line --index 1 '   or: xg resume'
	run xg help version
	assert_success
	assert_line --index 0 'usage: xg version'
	refute_output --partial -- '--model'
}

@test "xg help COMMAND runs xg-COMMAND --help" {
	run xg help hello
	assert_equal "$status" 7
	assert_output "[--help]"
	[ -x "$XG_SRCDIR/bin/xg-snapshot" ] || skip "xg-snapshot is not built"
	run xg help snapshot
	assert_success
	assert_equal "$output" "$(xg-snapshot --help)"
}

@test "xg help with an unknown command or two operands is exit 2" {
	run_split xg help no-such-thing
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg: 'no-such-thing' is not an xg command; 'xg commands' lists them"
	run_split xg help run plan
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg: 'help' takes one command at most"
}

@test "xg version and xg --version print the version" {
	run_split xg version
	assert_success
	assert_output --regexp '^xg \(xg\) [0-9]+\.[0-9]+\.[0-9]+$'
	v=$output
	run xg --version
	assert_success
	assert_equal "$output" "$v"
	run_split xg version 2
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg: 'version' takes no operand"
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
	assert_output "printf '{\"type\":\"request\",\"text\":\"fix the failing test\",\"mode\":\"normal\",\"cwd\":\"$PWD\"}\\n' | xg-snapshot | xg-choices start | xg-prompt-compile | xg-run"
	[ ! -e "$STUB/stdin" ] || fail "--dry-run ran xg-run"
}

@test "the options go into the request, and plan sets its mode" {
	stub_tree
	run_split xg plan --dry-run --model fake/m --effort high --account work \
		--variant terse@abc --conversation c-1 'do it'
	assert_success
	sh -c "$output" >/dev/null
	run jq -c 'select(.type == "request")' "$STUB/stdin"
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

@test "xg run gives xg-run the request alone, the one the dry-run line's stages pass on" {
	stub_tree
	cmd=$(xg run --dry-run --model llamacpp/gpt-oss-20b "$TRICKY")
	sh -c "$cmd" >sh.out
	stub_request >sh.request
	# The rest of what the stages gave: a model and a pack, which xg-run
	# alone makes itself.
	run jq -r .type "$STUB/stdin"
	assert_line model
	assert_line pack
	# printf alone writes the request as xg feeds it.
	sh -c "${cmd% | xg-snapshot | *}" >printf.out
	xg run --json --model llamacpp/gpt-oss-20b "$TRICKY" >xg.out
	run diff printf.out "$STUB/stdin"
	assert_success
	run diff sh.request <(stub_request)
	assert_success
	run diff sh.out xg.out
	assert_success
	run cat "$STUB/args"
	assert_output ""
}

@test "xg starts xg-run alone, with the cue its phase row waits for" {
	stub_tree
	STUB_MODE=cue run xg run --json 'look'
	assert_success
	run cat "$STUB/cue"
	assert_regex "$output" '^[0-9]+ pipe:\[[0-9]+\]$'
	run cat "$STUB/kids"
	assert_output xg-run
	# Not in the shell form: the variable is for the xg-run xg starts.
	run xg run --dry-run 'look'
	refute_output --partial XG_
}

@test "a closed standard input, output or error reads and writes as /dev/null" {
	stub_tree
	# Once, the input pipe was made on a closed descriptor 0 and lost at
	# exec: xg-run got no request.
	STUB_MODE=pass run bash -c 'xg run --json --model llamacpp/gpt-oss-20b hi <&-'
	assert_success
	assert_line --index 0 --partial '"type":"request","text":"hi"'
	STUB_MODE=pass run bash -c 'xg run --json --model llamacpp/gpt-oss-20b hi <&- >&- 2>&-'
	assert_success
	assert_output ""
	grep -q '"text":"hi"' "$STUB/stdin"
}

@test "the records xg-run writes pass through untouched" {
	stub_tree
	STUB_MODE=render run xg run --json 'hi'
	assert_success
	assert_line --index 0 '{"type":"run_start","schema":"xg/1","run":"r1","conversation":"c-42"}'
	assert_line --index 6 '{"type":"run_end","status":"completed","reply":"All done.","tool_calls":1,"ms":30}'
	assert_equal "${#lines[@]}" 7
}

@test "--reply writes the reply alone, and the records still come out with --json" {
	stub_tree
	export STUB_MODE=render
	xg run --json 'hi' >want.ndjson
	xg run --json --reply reply.txt 'hi' | cat >got.ndjson
	run diff want.ndjson got.ndjson
	assert_success
	run cat reply.txt
	assert_output "All done."
	assert_equal "$(tail -c 1 reply.txt | od -An -c | tr -d ' ')" '\n'
	# -o is the same, with --json too, and the file is replaced.
	xg run --json -o reply.txt 'hi' >got.ndjson
	run diff want.ndjson got.ndjson
	assert_success
	run cat reply.txt
	assert_output "All done."
	[ "$(stat -c %a reply.txt)" = "$(printf '%o' $((0666 & ~$(umask))))" ] ||
		fail "reply.txt has mode $(stat -c %a reply.txt)"
}

@test "--reply falls back on the last assistant message, and is empty without a reply" {
	stub_tree
	STUB_MODE=message xg run -o reply.txt 'hi' >/dev/null
	run cat reply.txt
	assert_output "From the message."
	echo 'an old reply' >reply.txt
	xg run -o reply.txt 'hi' >/dev/null
	[ -f reply.txt ] && [ ! -s reply.txt ] || fail "reply.txt: $(cat reply.txt)"
	run ls
	refute_output --partial tmp
}

@test "--reply writes the file on a terminal too" {
	stub_tree
	export STUB_MODE=render
	run script -qec "xg run -o reply.txt 'hi'" /dev/null
	assert_success
	assert_output --partial 'All done.'
	run cat reply.txt
	assert_output "All done."
}

@test "--reply: - is standard output, a FIFO is written through, a symlink followed, a file keeps its mode" {
	stub_tree
	export STUB_MODE=render
	run_split xg run --json -o - 'hi'
	assert_success
	assert_equal "${lines[-1]}" "All done."
	[ ! -e ./- ] || fail "a file named - was made"
	# A FIFO stays a FIFO: its reader gets the reply.
	mkfifo pipe
	cat pipe >from-pipe &
	reader=$!
	xg run --json -o pipe 'hi' >/dev/null
	wait "$reader"
	[ -p pipe ] || fail "the FIFO was replaced"
	assert_equal "$(cat from-pipe)" "All done."
	# A symlink is followed: its target gets the reply, the link stays.
	mkdir real
	echo old >real/target.txt
	chmod 640 real/target.txt
	ln -s real/target.txt link.txt
	xg run --json -o link.txt 'hi' >/dev/null
	[ -L link.txt ] || fail "the symlink was replaced"
	assert_equal "$(cat real/target.txt)" "All done."
	assert_equal "$(stat -c %a real/target.txt)" 640
	# A link to a file not there yet makes the file.
	ln -s real/new.txt dangling.txt
	xg run --json -o dangling.txt 'hi' >/dev/null
	[ -L dangling.txt ] && assert_equal "$(cat real/new.txt)" "All done."
}

@test "--reply to a directory that is not there is exit 74 before anything runs" {
	stub_tree
	run_split xg run -o no/such/dir/reply.txt 'hi'
	assert_equal "$status" 74
	assert_equal "$stderr" "xg: cannot write the reply to 'no/such/dir/reply.txt': No such file or directory"
	[ ! -e "$STUB/stdin" ] || fail "a run started"
	run_split xg run --dry-run -o reply.txt 'hi'
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg: --reply is xg's own work, not part of the pipeline --dry-run prints"
}

@test "--gate and --ask go to xg-run, on a terminal after --stream" {
	stub_tree
	xg run --json --gate '.name != "bash"' --ask 'cat answers.txt' 'hi' >/dev/null
	run cat "$STUB/args"
	assert_output $'--gate\n.name != "bash"\n--ask\ncat answers.txt'
	xg plan --ask 'echo yes' 'hi' >/dev/null
	run cat "$STUB/args"
	assert_output $'--ask\necho yes'
	run script -qec "xg resume --gate true hi" /dev/null
	assert_equal "$status" 65
	conversation c-1 "$PWD"
	run script -qec "xg resume --gate true c-1 hi" /dev/null
	assert_success
	run cat "$STUB/args"
	assert_output $'--stream\n--gate\ntrue'
}

@test "the dry-run line has no % and no \$, and sh gives xg-run what xg does" {
	stub_tree
	gate='if .name == "bash" then "no $HOME, 100%" else true end'
	ask="printf '%s\\n' \"\$1\""
	cmd=$(xg run --dry-run --gate "$gate" --ask "$ask" "$TRICKY")
	[[ "$cmd" != *'%'* ]] || fail "a % would be a newline in a crontab: $cmd"
	[[ "$cmd" != *'$'* ]] || fail "a \$ would be expanded by make: $cmd"
	assert_regex "$cmd" "^printf '[^']*' \\| xg-snapshot \\| xg-choices start \\| xg-prompt-compile \\| xg-run --gate "
	sh -c "$cmd" >sh.out
	stub_request >sh.request
	cp "$STUB/args" sh.args
	xg run --json --gate "$gate" --ask "$ask" "$TRICKY" >xg.out
	run diff sh.request <(stub_input)
	assert_success
	run diff sh.args "$STUB/args"
	assert_success
	run cat sh.args
	assert_output "--gate
$gate
--ask
$ask"
	# cron hands what is left of the line to sh, each % made a newline.
	printf '%s\n' "$cmd" | sed 's/%/\n/g' >cron.sh
	sh cron.sh >cron.out
	run diff sh.out cron.out
	assert_success
}

@test "--dry-run cannot print a --gate or --ask with a newline on one line" {
	stub_tree
	run_split xg run --dry-run --gate $'.name\n== "bash"' 'hi'
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg: --dry-run prints one line, and --gate holds a newline"
}

@test "xg run exits with xg-run's status" {
	stub_tree
	for code in 0 1 65 69 75 77 78; do
		STUB_MODE=exit=$code run_split xg run --json 'hi'
		assert_equal "$status" "$code"
		assert_output '{"type":"run_end","status":"failed"}'
		# What went wrong is said once, by xg.
		assert_equal "$stderr" "xg: failed"
	done
}

@test "xg-run killed by a signal is 128 plus its number" {
	stub_tree
	STUB_MODE=kill run xg run --json 'hi'
	assert_equal "$status" 137
}

@test "a missing xg-run, or for --dry-run any stage, is exit 70 naming it, and nothing runs" {
	mkdir -p lone
	cp "$XG_SRCDIR/bin/xg" lone/
	PATH="$PWD/lone:/usr/bin:/bin" run_split lone/xg run --json 'hi'
	assert_equal "$status" 70
	assert_equal "$stderr" "xg: cannot find 'xg-run' beside xg or in PATH"
	ln -s "$XG_SRCDIR/bin/xg-run" lone/xg-run
	PATH="$PWD/lone:/usr/bin:/bin" run_split lone/xg run --dry-run 'hi'
	assert_equal "$status" 70
	assert_equal "$stderr" "xg: cannot find 'xg-snapshot' beside xg or in PATH"
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
	run_split python3 - <<-'EOF'
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
	assert_equal "$stderr" "xg: interrupted (user)"
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
	# The terminal's echo of ^C may come before or after the record.
	text = out.decode().replace("\r", "").replace("^C", "")
	sys.stdout.write("\n".join(l for l in text.split("\n") if l))
	sys.exit(os.waitstatus_to_exitcode(st))
	EOF
	assert_equal "$status" 130
	# The record, and on the terminal's standard error xg's one line.
	assert_line '{"type":"run_end","status":"interrupted","stop":"user","signal":"INT"}'
	assert_equal "$(grep -cx 'xg: interrupted (user)' <<<"$output")" 1
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

# The text of the request xg-run was given.
request_text() {
	jq -r 'select(.type == "request") | .text' "$STUB/stdin"
}

@test "text piped to xg run goes with the request, in a block of its own" {
	stub_tree
	printf 'line 1\nline 2\n\n' | xg run --json 'why does this fail?' >/dev/null
	run request_text
	assert_output "why does this fail?

Standard input, piped to xg with this request:
<stdin>
line 1
line 2
</stdin>"
	printf 'from a file\n' >in.txt
	xg run --json 'and this?' <in.txt >/dev/null
	run request_text
	assert_output --partial $'and this?\n\nStandard input, piped to xg with this request:\n<stdin>\nfrom a file\n</stdin>'
}

@test "nothing piped, an empty pipe or /dev/null adds nothing to the request" {
	stub_tree
	xg run --json 'plain' </dev/null >/dev/null
	run request_text
	assert_output plain
	: | xg run --json 'plain too' >/dev/null
	run request_text
	assert_output 'plain too'
}

@test "a pipe that has data in time is read to its end, however long its writer takes" {
	stub_tree
	{ echo first; sleep 1; echo second; } | xg run --json 'both?' >/dev/null
	run request_text
	assert_output --partial $'<stdin>\nfirst\nsecond\n</stdin>'
}

@test "a pipe kept open with no data is left alone after half a second" {
	stub_tree
	mkfifo held
	exec 5<>held
	start=$(date +%s%N)
	run_split timeout 20 xg run --json 'hi' <&5
	end=$(date +%s%N)
	exec 5>&-
	assert_success
	assert_output '{"type":"run_end","status":"completed"}'
	run request_text
	assert_output hi
	ms=$(( (end - start) / 1000000 ))
	[ "$ms" -ge 450 ] && [ "$ms" -lt 5000 ] || fail "the run took $ms ms"
	assert_equal "$stderr" ""
	# With a person at the terminal's stderr, xg says it left it unread.
	exec 5<>held
	run timeout 20 script -qec "xg run --json hi <held" /dev/null
	exec 5>&-
	assert_success
	assert_output --partial "xg: nothing came on standard input within 500 ms; it is left unread"
}

@test "piped text over 1 MiB is cut on a whole character, with a notice" {
	stub_tree
	{ head -c 1048575 /dev/zero | tr '\0' a; printf '\303\251'; head -c 1000 /dev/zero; } >big
	run_split xg run --json 'long' <big
	assert_success
	assert_equal "$stderr" "xg: standard input is longer than 1 MiB: only its first 1048576 bytes are sent with the request"
	run jq -r 'select(.type == "request") | .text' "$STUB/stdin"
	assert_line --index 1 "Standard input, piped to xg with this request (its first 1048576 bytes; the rest was not read):"
	assert_line --index 3 "$(head -c 1048575 big)"
	assert_line --index 4 '</stdin>'
	run jq -c 'select(.type == "notice" and .from == "xg")' "$STUB/stdin"
	assert_output '{"type":"notice","from":"xg","text":"standard input is longer than 1 MiB: only its first 1048576 bytes are sent with the request"}'
	# On a terminal the notice is rendered, once, and not said on stderr.
	STUB_MODE=pass run script -qec "xg run long <big" /dev/null
	assert_success
	assert_equal "$(grep -c 'longer than 1 MiB' <<<"$output")" 1
	assert_line --partial 'note: standard input is longer than 1 MiB'
}

@test "piped text holding a NUL byte is exit 65, and nothing runs" {
	stub_tree
	run_split xg run --json 'binary' < <(printf 'a\0b')
	assert_equal "$status" 65
	assert_equal "$stderr" "xg: standard input holds a NUL byte: only text is sent with a request"
	[ ! -e "$STUB/stdin" ] || fail "a run started"
}

@test "xg run needs a non-empty text, and joins its words into one" {
	run_split xg run
	assert_equal "$status" 2
	stub_tree
	xg run --json 'two  spaced' words >/dev/null
	assert_equal "$(jq -r 'select(.type == "request") | .text' "$STUB/stdin")" "two  spaced words"
	xg run --json two words >/dev/null
	assert_equal "$(jq -r 'select(.type == "request") | .text' "$STUB/stdin")" "two words"
	run_split xg run ''
	assert_equal "$status" 2
	run_split xg run --conversation ../x hi
	assert_equal "$status" 2
}

# conversation ID DIR [TIME [REQUEST]]: a conversation started in DIR, last
# written at TIME, whose first request is REQUEST.
conversation() {
	local f="$XG_HOME/state/conversations/$1.jsonl"
	mkdir -p "$XG_HOME/state/conversations"
	jq -cn --arg id "$1" --arg cwd "$2" \
		'{type: "conversation", schema: "xg/1", id: $id, created: "2026-01-01T00:00:00.000Z", cwd: $cwd}' >"$f"
	if [ -n "${4:-}" ]; then
		jq -cn --arg t "$4" '{type: "message", role: "user", text: $t, at: "2026-01-01T00:00:01.000Z"}' >>"$f"
		echo '{"type":"message","role":"assistant","text":"Done.","at":"2026-01-01T00:00:02.000Z"}' >>"$f"
	fi
	[ -z "${3:-}" ] || touch -d "$3" "$f"
}

# The conversation and text of the request xg-run was given.
resumed() {
	jq -r 'select(.type == "request") | [.conversation, .mode, .text] | join(" ")' "$STUB/stdin"
}

@test "xg resume TEXT goes on with the newest conversation of this directory" {
	stub_tree
	mkdir -p here elsewhere
	conversation older "$PWD/here" '2026-01-01 10:00'
	conversation newest-by-name "$PWD/here" '2026-01-02 10:00'
	conversation another "$PWD/here" '2026-01-02 10:00'
	conversation newer-elsewhere "$PWD/elsewhere" '2026-01-05 10:00'
	conversation no-cwd "" '2026-01-06 10:00'
	cd here
	xg resume --json 'go on' >/dev/null
	run resumed
	assert_output "newest-by-name normal go on"
}

@test "two directories with a conversation each: resume from each goes on with its own" {
	stub_tree
	mkdir -p a b
	ln -s a via-link
	conversation conv-a "$PWD/a" '2026-01-01 10:00'
	conversation conv-b "$PWD/b" '2026-01-02 10:00'
	(cd a && xg resume --json 'in a' >/dev/null)
	run resumed
	assert_output "conv-a normal in a"
	(cd b && xg resume --json 'in b' >/dev/null)
	run resumed
	assert_output "conv-b normal in b"
	# The same directory by another path is the same workspace.
	(cd via-link && xg resume --json 'by the link' >/dev/null)
	run resumed
	assert_output "conv-a normal by the link"
}

@test "xg resume ID TEXT names the conversation, wherever it was started" {
	stub_tree
	conversation c-7 /somewhere/else
	xg resume --json c-7 'again' >/dev/null
	run resumed
	assert_output "c-7 normal again"
	run_split xg resume 20261130-105624-0000c008 'again'
	assert_equal "$status" 65
	assert_regex "$stderr" "^xg: there is no conversation or run '20261130-105624-0000c008'"
}

@test "xg resume ID without a text is a usage error, never a request" {
	stub_tree
	conversation c-7 "$PWD"
	run_split xg resume c-7
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg: 'c-7' is a conversation or run id, not a text to send: give the text after it"
	# One shaped as xg makes them, even when it does not exist.
	run_split xg resume 20261130-105624-3f9a1c2b
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg: '20261130-105624-3f9a1c2b' is a conversation or run id"
	run_split xg resume --conversation c-7
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg: 'resume' needs a text to send"
	[ ! -e "$STUB/stdin" ] || fail "a run started: $(cat "$STUB/stdin")"
	# A word that is neither is a text for the newest conversation here.
	xg resume --json continue >/dev/null
	run resumed
	assert_output "c-7 normal continue"
}

@test "xg resume with no conversation in this directory is exit 65" {
	stub_tree
	conversation elsewhere /somewhere/else
	run_split xg resume 'again'
	assert_equal "$status" 65
	assert_equal "$stderr" "xg: there is no conversation to resume in '$PWD'; 'xg run TEXT' starts one"
}

@test "xg resume alone lists this directory's conversations, newest first" {
	stub_tree
	mkdir -p other
	for i in $(seq 10 21); do
		conversation "c-$i" "$PWD" "2026-01-$i 10:00" "request $i"$'\n'"second line"
	done
	conversation c-other "$PWD/other" '2026-02-01 10:00' 'not here'
	conversation c-long "$PWD" '2026-01-22 10:00' \
		"$(printf 'a%.0s' $(seq 1 100))"$'\e[31m'
	run_split xg resume
	assert_success
	assert_equal "${#lines[@]}" 10
	assert_line --index 0 "c-long	2026-01-22 10:00	$(printf 'a%.0s' $(seq 1 72))..."
	assert_line --index 1 "c-21	2026-01-21 10:00	request 21..."
	assert_line --index 9 "c-13	2026-01-13 10:00	request 13..."
	refute_output --partial c-other
	assert_equal "$stderr" ""
	[ ! -e "$STUB/stdin" ] || fail "xg resume alone ran a pipeline"
	cd other
	run_split xg resume
	assert_success
	assert_output "c-other	2026-02-01 10:00	not here"
	mkdir -p ../empty && cd ../empty
	run_split xg resume
	assert_success
	assert_output ""
	assert_equal "$stderr" "xg: no conversation was started in '$PWD'; 'xg run TEXT' starts one"
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

@test "the renderer shows a blocked plan as a warning, never as a plan" {
	run xg-test render <<-'EOF'
	{"type":"plan","outcome":"blocked","blocked":"The repository has no build files.\nI need to know the target.","problems":[]}
	{"type":"plan","outcome":"plan_ready","plan":"1. Do it.","problems":[]}
	{"type":"run_end","status":"completed","reply":"","tool_calls":0,"ms":5}
	EOF
	assert_success
	assert_output "xg: warning: no plan: the planning is blocked: The repository has no build files....
plan: plan_ready
xg: completed; 0 tool calls, 5 ms"
	run xg-test render --color <<-'EOF'
	{"type":"plan","outcome":"blocked","blocked":"no target","problems":[]}
	{"type":"run_end","status":"completed","reply":"","tool_calls":0,"ms":5}
	EOF
	assert_line --index 0 $'\e[1;33mxg: warning: no plan: the planning is blocked: no target\e[0m'
}

@test "the renderer shows the reply of a run that streamed nothing, and why it failed" {
	run xg-test render <<-'EOF'
	{"type":"run_end","status":"failed","reason":"no credentials for openai","reply":"","tool_calls":0,"ms":5}
	EOF
	assert_output "xg: failed: no credentials for openai; 0 tool calls, 5 ms"
	# One that failed before its first request has only its reason.
	run xg-test render <<-'EOF'
	{"type":"run_end","status":"failed","reason":"no model to run on: none is set.\n  Store a key.","reply":"","tool_calls":0,"requests":0,"ms":5,"usage":{"input":0,"output":0}}
	EOF
	assert_output "xg: failed: no model to run on: none is set.
  Store a key."
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
	assert_output "note: the workspace is not in a git repository: no snapshot is taken, so 'xg log diff' and replay have nothing of this run
All done.
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

# The examples of xg(1), one command a line, as the page shows them; a
# block the page marks as not run by the tests (tests/lib/examples.py) is
# left out.
examples() {
	awk '/^\.Sh EXAMPLES/ { f = 1; next } /^\.Sh/ { f = 0 }
		f && /^\.\\" not run by the tests/ { skip = 1; next }
		f && /^\.Bd -literal/ { b = !skip; next } f && /^\.Ed/ { b = 0; skip = 0; next }
		f && b' "$XG_SRCDIR/man/xg.1" | sed 's/\\e/\\/g'
}

@test "the examples in xg(1) run" {
	stub_tree
	export STUB_MODE=render
	conversation c-1 "$PWD" '' 'the first request'
	echo 'tidy the README' >task.txt
	echo 'cc: error: no such file parse.c' >build.log
	n=0
	while IFS= read -r example; do
		case "$example" in
		*classify-plan*) [ -x "$XG_SRCDIR/bin/xg-classify-plan" ] || continue ;;
		esac
		rm -f "$STUB/stdin" "$STUB/args"
		run sh -c "$example" </dev/null
		[ "$status" -eq 0 ] || fail "'$example' exited $status: $output"
		case "$example" in
		*--dry-run*) assert_output --regexp "^printf .* \\| xg-run\$" ;;
		"xg resume") assert_output --regexp "^c-1	.*	the first request\$" ;;
		"cat build.log | xg run"*)
			run jq -r 'select(.type == "request") | .text' "$STUB/stdin"
			assert_output --partial $'<stdin>\ncc: error: no such file parse.c\n</stdin>' ;;
		*--gate*) run cat "$STUB/args"
			assert_output $'--gate\n.name != "bash"' ;;
		"xg run"* | "xg plan"* | "xg resume"*)
			[ -s "$STUB/stdin" ] || fail "'$example' ran no pipeline" ;;
		*classify-plan*) assert_output --partial '"outcome":"no_plan"' ;;
		*commands) assert_line run ;;
		esac
		n=$((n + 1))
	done < <(examples)
	[ "$n" -ge 10 ] || fail "only $n examples ran"
	run tail -n 1 plan.ndjson
	assert_output --partial '{"type":"run_end","status":"completed"'
	run cat summary.txt
	assert_output "All done."
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
	# In a repository with a change and a new file, a skill named in the
	# request (a notice, and its text attached) and a project instruction.
	out=$PWD
	git init -q repo
	cd repo
	printf 'one\n' >a.txt
	mkdir -p .agents/skills/tidy
	printf -- '---\nname: tidy\ndescription: Tidy up.\n---\nSort the imports.\n' >.agents/skills/tidy/SKILL.md
	git add -A
	git -c user.name=t -c user.email=t@example.com commit -qm one
	printf 'two\n' >a.txt
	printf 'new\n' >b.txt
	printf 'Keep it short.\n' >AGENTS.md
	sh -c "$(xg run --dry-run --model fake/m "$TRICKY \$tidy")" >"$out/sh.out"
	xg run --json --model fake/m "$TRICKY \$tidy" >"$out/xg.out"
	grep -q '"type":"run_end"' "$out/xg.out" || fail "no run_end: $(cat "$out/xg.out")"
	cd "$out"
	steady sh.out >sh.steady
	steady xg.out >xg.steady
	run diff sh.steady xg.steady
	assert_success
	run jq -r 'select(.type == "run_end") | "\(.status) \(.reply)"' xg.out
	assert_output "completed Done: nothing to change."
	run fake_log 'print(len(log))'
	assert_output 2
	run fake_log 'print(log[0]["body"] == log[1]["body"], "Sort the imports." in json.dumps(log[0]["body"]), "Keep it short." in json.dumps(log[0]["body"]))'
	assert_output "True True True"
	# The same snapshot, git's own tree of the work tree, and the same
	# conversation, pinned to the version it ran on.
	want=$(cd repo && GIT_INDEX_FILE=$out/index sh -c 'git add -A && git write-tree')
	for f in sh.out xg.out; do
		commit=$(jq -r 'select(.type == "run_start") | .snapshot' "$f")
		assert_equal "$(git -C repo rev-parse "$commit^{tree}")" "$want"
		conv=$(jq -r 'select(.type == "run_start") | .conversation' "$f")
		jq -c 'del(.id, .created, .at, .run)' "$XG_HOME/state/conversations/$conv.jsonl" >"$f.conv"
	done
	run diff sh.out.conv xg.out.conv
	assert_success
	run jq -r .type sh.out.conv
	assert_output $'conversation\nvariant_change\nmessage\nmessage'
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

# The text of every user message the fake provider was sent, in its last
# request (openai-chat).
sent_user_text() {
	fake_log 'b = log[-1]["body"]
for m in b["messages"]:
    if m["role"] == "user":
        c = m["content"]
        print(c if isinstance(c, str) else "".join(p.get("text", "") for p in c))'
}

@test "with xg-run, piped text reaches the model with the request" {
	need_xg_run <<-'EOF'
	{"text": "It fails for want of parse.c."}
	EOF
	printf 'cc: error: parse.c: No such file\n' | xg run --json --model fake/m 'why does this fail?' >out
	run jq -r 'select(.type == "run_end") | .status' out
	assert_output completed
	run sent_user_text
	assert_output "why does this fail?

Standard input, piped to xg with this request:
<stdin>
cc: error: parse.c: No such file
</stdin>"
}

@test "with xg-run, a pipe kept open and idle does not hold the run, nor reach the model" {
	need_xg_run <<-'EOF'
	{"text": "Hello."}
	EOF
	mkfifo held
	exec 5<>held
	run timeout 20 xg run --json --model fake/m 'just this' <&5
	exec 5>&-
	assert_success
	run sent_user_text
	assert_output "just this"
}

@test "with xg-run, resume in each of two directories goes on with its own conversation" {
	need_xg_run <<-'EOF'
	{"text": "A one."}
	{"text": "B one."}
	{"text": "A two."}
	{"text": "B two."}
	EOF
	mkdir -p a b
	(cd a && xg run --json --model fake/m 'first in a' >../a1.out)
	(cd b && xg run --json --model fake/m 'first in b' >../b1.out)
	conv_a=$(jq -r 'select(.type == "run_end") | .conversation' a1.out)
	conv_b=$(jq -r 'select(.type == "run_end") | .conversation' b1.out)
	[ "$conv_a" != "$conv_b" ] || fail "one conversation for both"
	(cd a && xg resume --json --model fake/m 'second in a' >../a2.out)
	run jq -r 'select(.type == "run_end") | .conversation' a2.out
	assert_output "$conv_a"
	run sent_user_text
	assert_output $'first in a\nsecond in a'
	(cd b && xg resume --json --model fake/m 'second in b' >../b2.out)
	run jq -r 'select(.type == "run_end") | .conversation' b2.out
	assert_output "$conv_b"
	run sent_user_text
	assert_output $'first in b\nsecond in b'
	cd a
	run xg resume
	assert_success
	assert_output --regexp "^$conv_a	[0-9-]+ [0-9:]+	first in a\$"
}

@test "with xg-run, --reply holds the model's reply" {
	need_xg_run <<-'EOF'
	{"text": "The answer\nis 42."}
	EOF
	xg run --json --model fake/m -o answer.txt 'what is it?' >out
	run cat answer.txt
	assert_output $'The answer\nis 42.'
	run jq -r 'select(.type == "run_end") | .reply' out
	assert_output $'The answer\nis 42.'
}

@test "with xg-run, --gate refuses a tool call the filter refuses" {
	need_xg_run <<-'EOF'
	{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "touch ran"}}]}
	{"text": "Refused, then."}
	EOF
	xg run --json --model fake/m --gate 'if .name == "bash" then "no commands, 100% sure" else true end' \
		'make a file' >out
	[ ! -e ran ] || fail "the gate let bash run"
	run jq -r 'select(.type == "tool_result") | "\(.ok) \(.output)"' out
	assert_output --partial "false"
	assert_output --partial "no commands, 100% sure"
}

@test "with xg-run, a failure is said once: on a terminal, in a pipe, with --json; a stage alone says it" {
	need_xg_run </dev/null
	git init -q
	reason="no model to run on: 'nosuch/model' is not offered by the catalog ('xg-choices models' lists the models it offers)"
	run script -qec "xg run --model nosuch/model hi" /dev/null
	assert_failure
	out=$(tr -d '\r' <<<"$output")
	assert_equal "$(grep -c "'nosuch/model' is not offered by the catalog" <<<"$out")" 1
	assert_regex "$out" "xg: failed: no model to run on: 'nosuch/model' is not offered by the catalog"
	# In a pipe: nothing on standard output, xg's one line on standard error.
	run_split xg run --model nosuch/model hi
	assert_equal "$status" 78
	assert_output ""
	assert_equal "$stderr" "xg: failed: $reason"
	# With --json: the records, and the same one line.
	run_split xg run --json --model nosuch/model hi
	assert_equal "$status" 78
	assert_equal "$stderr" "xg: failed: $reason"
	run jq -r 'select(.type == "run_end") | .reason' <<<"$output"
	assert_output "$reason"
	# The stages run alone, as the --dry-run line runs them, each say it.
	line=$(xg run --dry-run --model nosuch/model hi)
	run_split sh -c "$line"
	assert_failure
	assert_equal "$stderr" "xg-choices: request on line 1: cannot start on nosuch/model: 'nosuch/model' is not offered by the catalog ('xg-choices models' lists the models it offers)
xg-run: $reason"
	# A prompt that does not compile: the cause goes with the failure.
	reason="cannot compile the prompt: no variant 'nosuch'"
	run_split xg run --model fake/m --variant nosuch hi
	assert_equal "$status" 65
	assert_equal "$stderr" "xg: failed: $reason"
	run_split xg run --json --model fake/m --variant nosuch hi
	assert_equal "$stderr" "xg: failed: $reason"
	assert_equal "$(jq -r 'select(.type == "run_end") | .reason' <<<"$output")" "$reason"
	run_split xg-run --model fake/m --variant nosuch hi
	assert_equal "$stderr" "xg-run: $reason"
	# A catalog problem is a notice, shown once.
	jq '.providers.fake.models.bad = {"context_window": "big"}' "$XG_HOME/config/models.json" >models.json
	mv models.json "$XG_HOME/config/models.json"
	run_split xg run --model fake/m --variant nosuch hi
	assert_equal "$(grep -c "fake/bad" <<<"$stderr")" 1
}

@test "with xg-run, the commands a rendered run's tools run do not inherit XG_RENDERED" {
	need_xg_run <<-'EOF'
	{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "echo \"rendered=${XG_RENDERED-unset}\""}}]}
	{"text": "Checked."}
	EOF
	run script -qec "xg run --model fake/m 'check'" /dev/null
	assert_success
	run fake_log 'print("rendered=unset" in json.dumps(log[-1]["body"]))'
	assert_output True
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

# complete_words WORD...: what the bash completion offers for the command
# line WORD..., the last word being the one completed, one a line.
complete_words() {
	bash -c 'source "$XG_SRCDIR/completions/xg.bash"
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
		_xg_complete
		[ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"' complete "$@"
}

@test "the bash completion offers xg's verbs and the programs installed" {
	run complete_words xg ''
	assert_success
	for c in commands help hello plan resume run version; do
		assert_line "$c"
	done
	[ -x "$XG_SRCDIR/bin/xg-choices" ] && assert_line choices
	assert_line goal
	run complete_words xg ru
	assert_output run
	run complete_words xg help he
	assert_output $'hello\nhelp'
	run bash -c 'source "$XG_SRCDIR/completions/xg.bash"; complete -p'
	assert_line 'complete -F _xg_complete xg'
	assert_line 'complete -F _xg_complete xg-hello'
	assert_line 'complete -F _xg_complete xg-choices'
	assert_line 'complete -F _xg_complete xg-goal'
}

@test "the bash completion offers options and verbs where they belong, not files" {
	touch reply.md run.log
	run complete_words xg run --re
	assert_output --reply
	run complete_words xg resume --co
	assert_output --conversation
	run complete_words xg run --json ''
	assert_output ''
	run complete_words xg-choices s
	assert_output $'set\nstart'
	run complete_words xg choices start --c
	assert_output --conversation
	run complete_words xg-choices set --
	assert_output $'--account\n--effort\n--help\n--mode\n--model'
	run complete_words xg-snapshot replay --
	assert_output $'--base\n--help'
	run complete_words xg run --model llamacpp/
	assert_output $'llamacpp/gpt-oss-20b\nllamacpp/qwen3-coder-30b-a3b'
	run complete_words xg run -o re
	assert_output reply.md
	complete_words xg-classify-plan r >files
	run sort files
	assert_output $'reply.md\nrun.log'
	conversation c-here "$PWD"
	conversation c-there /somewhere/else
	run complete_words xg resume ''
	assert_output c-here
	run complete_words xg resume c-here ''
	assert_output ''
}

@test "with nothing configured, a run on a terminal ends at once and shows the ways forward once" {
	[ -x "$XG_SRCDIR/bin/xg-run" ] || skip "xg-run is not built"
	unset OPENAI_API_KEY ANTHROPIC_API_KEY OPENROUTER_API_KEY LLAMACPP_BASE_URL OLLAMA_BASE_URL
	run script -qec "xg run 'say hello'" /dev/null
	out=$(tr -d '\r' <<<"$output")
	[[ "$out" == *"xg: failed: no model to run on: no model is configured"* ]] || fail "$out"
	# The lines after the first are shown too, each once.
	assert_equal "$(grep -c 'xg-choices auth openai' <<<"$out")" 1
	assert_equal "$(grep -c 'models.json' <<<"$out")" 1
	[[ "$out" != *"..."* ]] || fail "the reason was cut: $out"
	# No conversation was made, so none is named to resume.
	[[ "$out" != *"; conversation "* ]] || fail "a conversation is named: $out"
	run find "$XG_HOME/state" -name '*.jsonl'
	assert_output ""
	run xg run 'say hello' </dev/null
	assert_failure 78
}
