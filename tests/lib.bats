#!/usr/bin/env bats
# libxg's core, through the test driver (xg-test lib): records, buffers,
# files, locks, paths and option parsing.

load lib/helper

@test "records pass through with their bytes and order, blank lines skipped, CRLF accepted" {
	printf '{"type":"a", "x":1.50}\r\n\n   \r\n{"type":"b","s":"\\u00e9"}\n{"type":"c"}' >in
	xg-test lib cat <in >out
	printf '{"type":"a", "x":1.50}\r\n{"type":"b","s":"\\u00e9"}\n{"type":"c"}\n' >want
	cmp want out
	printf '{"type":"a"}\r\n' | xg-test lib cat --rewrite >out
	printf '{"type":"a"}\n' >want
	cmp want out
}

@test "the writer writes one compact line per record" {
	printf '{ "type" : "a",\n' >/dev/null
	printf '{ "type" : "a" , "n" : [1, 2] }\n' | xg-test lib cat --rewrite >out
	run cat out
	assert_output '{"type":"a","n":[1,2]}'
}

@test "a line that is not a JSON object is exit 65 naming the line and what was found" {
	printf '{"type":"a"}\n\n[1,2]\n' >in
	run_split xg-test lib cat <in
	assert_equal "$status" 65
	assert_equal "$output" '{"type":"a"}'
	assert_equal "$stderr" "xg-test-lib: standard input: line 3: a record must be a JSON object, found an array"
}

@test "a line that is not JSON is exit 65 naming the line, without quoting it" {
	printf '{"type":"a"}\n{"type":"b","key":"sk-CANARY-1234"\n' >in
	run_split xg-test lib cat <in
	assert_equal "$status" 65
	assert_regex "$stderr" "^xg-test-lib: standard input: line 2: not JSON: "
	refute_regex "$stderr" "CANARY"
}

@test "a line over the ceiling is exit 65 naming its line number" {
	{ echo '{"type":"short"}'; printf '{"type":"long","pad":"%0200d"}\n' 0; } >in
	XG_MAX_LINE=100 run_split xg-test lib cat <in
	assert_equal "$status" 65
	assert_equal "$output" '{"type":"short"}'
	assert_equal "$stderr" "xg-test-lib: standard input: line 2 is longer than the limit of 100 bytes (XG_MAX_LINE)"
}

@test "a line of exactly the ceiling passes, with or without CR LF" {
	line='{"type":"x","p":"'$(printf '%081d' 0)'"}'
	[ ${#line} -eq 100 ]
	printf '%s\r\n%s\n%s' "$line" "$line" "$line" >in
	XG_MAX_LINE=100 run xg-test lib cat <in
	assert_success
	assert_equal "${#lines[@]}" 3
}

@test "a long stream of records is read whole, across read boundaries" {
	# One process writes them: a loop of bats's shell costs seconds.
	seq 1 20000 | awk '{ printf "{\"type\":\"n\",\"i\":%d}\n", $1 }' >in
	[ "$(sed -n 20000p in)" = '{"type":"n","i":20000}' ]
	xg-test lib cat <in >out
	cmp in out
}

@test "a bad XG_MAX_LINE is a configuration error" {
	XG_MAX_LINE=lots run_split xg-test lib cat </dev/null
	assert_equal "$status" 78
	assert_regex "$stderr" "XG_MAX_LINE 'lots' is not a positive number"
}

@test "a buffer refuses to grow past its ceiling and keeps what it had" {
	run xg-test lib buf 10 20
	assert_output "refused at 10, len 10"
	run xg-test lib buf 0 5000
	assert_output "len 5000"
}

@test "an atomic write replaces the file whole and leaves no temporary behind" {
	echo old >f
	echo new content | xg-test lib write-atomic "$PWD/f"
	run cat f
	assert_output "new content"
	run ls
	refute_output --partial tmp
}

@test "an atomic write into a missing directory fails with the reason and exit 74" {
	run_split xg-test lib write-atomic "$PWD/missing/f" </dev/null
	assert_equal "$status" 74
	assert_regex "$stderr" "cannot create a temporary file beside '.*/missing/f': No such file or directory"
}

@test "twenty concurrent locked appends all land whole" {
	for i in $(seq 1 20); do
		printf '{"n":%d,"pad":"%0500d"}\n' "$i" 0 | xg-test lib append "$PWD/log" &
	done
	wait
	run wc -l <log
	assert_output 20
	run sh -c 'sort -u log | wc -l'
	assert_output 20
	run sh -c "grep -c '^{\"n\":[0-9]*,\"pad\":\"0*\"}\$' log"
	assert_output 20
}

@test "a lock not had in time is exit 75 and names the holder" {
	hold_lock "$PWD/log" 5
	XG_LOCK_TIMEOUT=100 run_split xg-test lib append "$PWD/log" <<<"x"
	kill "$holder" 2>/dev/null || true
	assert_equal "$status" 75
	assert_regex "$stderr" "'.*/log' is locked by process $holder \\([^)]+\\); gave up after 100 ms"
}

@test "XG_HOME holds the config, data and state trees" {
	run xg-test lib path config choices.json
	assert_output "$XG_HOME/config/choices.json"
	run xg-test lib path data
	assert_output "$XG_HOME/data"
	run xg-test lib path state runs
	assert_output "$XG_HOME/state/runs"
}

@test "without XG_HOME the XDG trees are used, and HOME when they are unset" {
	unset XG_HOME
	XDG_CONFIG_HOME=/x/cfg run xg-test lib path config
	assert_output /x/cfg/xg
	XDG_STATE_HOME=/x/st run xg-test lib path state
	assert_output /x/st/xg
	unset XDG_DATA_HOME
	HOME=/h run xg-test lib path data
	assert_output /h/.local/share/xg
}

@test "the share tree is XG_SHARE_DIR, else beside the program" {
	XG_SHARE_DIR=/s run xg-test lib path share prompts
	assert_output /s/prompts
	unset XG_SHARE_DIR
	mkdir -p tree/bin tree/share/xg
	cp "$XG_SRCDIR/tests/bin/xg-test" tree/bin/
	run tree/bin/xg-test lib path share
	assert_output "$PWD/tree/bin/../share/xg"
}

@test "options: flags cluster, values attach or follow, operands may come first" {
	run xg-test lib opts one -qn5 two --limit=7 --size 2k -- --not-an-option -
	assert_success
	assert_output "$(printf 'quiet\nlimit=5\nlimit=7\nsize=2048\narg=one\narg=two\narg=--not-an-option\narg=-')"
}

@test "options: an unknown option or a missing value is exit 2 with the usage" {
	run_split xg-test lib --frobnicate cat
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg-test-lib: unknown option '--frobnicate'"
	assert_regex "$stderr" "usage: xg-test-lib cat"
	run_split xg-test lib cat --limit
	assert_equal "$status" 2
	assert_regex "$stderr" "option '--limit' needs a value"
	run_split xg-test lib cat --limit=ten
	assert_equal "$status" 2
	assert_regex "$stderr" "option '--limit' needs a non-negative number, not 'ten'"
	run_split xg-test lib cat --quiet=yes
	assert_equal "$status" 2
	assert_regex "$stderr" "option '--quiet' takes no value"
}

@test "--help prints the usage and every option; --version prints the version" {
	run xg-test lib --help
	assert_success
	assert_line --index 0 "usage: xg-test-lib cat [--rewrite]"
	assert_line --regexp '^  -n, --limit n +an option with a value$'
	run xg-test lib --version
	assert_success
	assert_output --regexp '^xg-test-lib \(xg\) [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "the test driver lists its sub-commands, and an unknown one is exit 2" {
	run xg-test --help
	assert_success
	assert_line --index 0 "usage: xg-test <sub-command> [<argument>...]"
	assert_line "   lib"
	assert_line "   tools"
	run_split xg-test frobnicate cat
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg-test: unknown sub-command 'frobnicate'"$'\n'"usage: xg-test "
	run_split xg-test
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg-test: a sub-command is needed"
}

@test "a write error on stdout is exit 74" {
	[ -w /dev/full ] || skip "no /dev/full"
	run_split sh -c 'xg-test lib --version >/dev/full'
	assert_equal "$status" 74
	assert_regex "$stderr" "cannot write standard output: No space left on device"
}

@test "SIGPIPE is left at its default, so a closed reader ends the program quietly" {
	seq 1 50000 | awk '{ printf "{\"type\":\"n\",\"i\":%d}\n", $1 }' >in
	run_split bash -c 'trap "" PIPE; xg-test lib cat <in | head -n 1; echo "${PIPESTATUS[0]}"'
	assert_line --index 1 141
	assert_equal "$stderr" ""
}

@test "xg_die_errno ends the message with the system's reason" {
	run_split xg-test lib die 70
	assert_equal "$status" 70
	assert_equal "$stderr" "xg-test-lib: cannot open 'nowhere': No such file or directory"
}

@test "records written to a pipe are flushed one by one, while input is still open" {
	mkfifo in
	# The writer keeps the FIFO open; the first record must come out before
	# the input ends.
	( printf '{"type":"first"}\n'; sleep 5 ) >in &
	writer=$!
	run timeout 3 sh -c 'xg-test lib cat <in | head -n 1'
	kill "$writer" 2>/dev/null || true
	assert_output '{"type":"first"}'
}

@test "running out of memory is exit 70 with a message" {
	[ ! -d "$XG_SRCDIR/tests/vgbin" ] || skip "valgrind has its own allocator"
	! sanitized || skip "ASan needs more address space than the limit"
	run_split sh -c 'ulimit -v 60000; exec xg-test lib buf 0 100000000'
	assert_equal "$status" 70
	assert_regex "$stderr" "^xg-test-lib: out of memory allocating [0-9]+ bytes$"
}

@test "xg_json_dump writes every value byte for byte as libjq does" {
	# Random values heavy in what a writer gets wrong: escapes, control
	# characters, DEL, non-ASCII, -0, big and small numbers, nesting.
	run bash -c 'python3 - <<"PY" | xg-test lib json-dump
import json, random
random.seed(20261130)
chars = ["a", " ", "\"", "\\", "/", "\n", "\t", "\r", "\b", "\f", "\x00", "\x01", "\x1f",
         "\x7f", "\x80", "\u00e9", "\u20ac", "\U0001f600", "\u2028", "\ufffd", "z" * 9]
def s():
    return "".join(random.choice(chars) for _ in range(random.randint(0, 12)))
def num():
    return random.choice([0, -0.0, 1, -1, 10**14, -(10**14), 10**15 - 1, 10**15, 10**16,
                          2**53, 2**63, 1e17, 1e100, 1e-7, 0.1, -2.25, 1e308, 5e-324,
                          123456789.125, float(random.randint(-10**6, 10**6)),
                          random.random() * 10**random.randint(-20, 20)])
def val(d=0):
    r = random.random()
    if d > 3 or r < 0.3:
        return random.choice([None, True, False, num(), num(), s(), s()])
    if r < 0.65:
        return [val(d + 1) for _ in range(random.randint(0, 4))]
    return {s(): val(d + 1) for _ in range(random.randint(0, 4))}
for i in range(3000):
    print(json.dumps(val(), ensure_ascii=random.random() < 0.5))
PY'
	assert_success
	assert_output "same 3000"
	# And the provider captures the tests replay.
	run bash -c 'cat "$1"/*.json | jq -c . | xg-test lib json-dump' _ "$FIXTURES/wire"
	assert_success
	assert_output --regexp '^same [1-9][0-9]*$'
}

@test "xg_rec_filter passes every record and calls on each of its type, or once at the end" {
	input=$'{"type":"a"}\n{"type":"request","n":1}\r\n\n{"type":"b"}\n{"type":"request","n":2}'
	run_split xg-test lib filter request <<<"$input"
	assert_success
	assert_equal "$output" "$(printf '%s\n' "$input" | grep -v '^$')"
	assert_equal "$stderr" $'request 2\nrequest 5'
	# None of its type: one call at the end, and every record still passes.
	run_split xg-test lib filter model <<<"$input"
	assert_success
	assert_equal "$stderr" "end"
	assert_equal "$(printf '%s\n' "$output" | wc -l)" 4
	# Every record, with type -; a code from the callback stops the reading
	# after the record that caused it has gone out.
	run_split xg-test lib filter - <<<$'{"type":"a"}\n{"type":"b","stop":3}\n{"type":"c"}'
	assert_failure 3
	assert_equal "$stderr" $'a 1\nb 2'
	assert_equal "$output" $'{"type":"a"}\n{"type":"b","stop":3}'
	# No input at all: the end call.
	run_split xg-test lib filter request </dev/null
	assert_success
	assert_equal "$stderr" "end"
	assert_output ""
}

@test "xg_opt_verb finds the verb of a table and says what is wrong with the operands" {
	run xg-test lib verb some a b c
	assert_success
	assert_output "some with 3"
	run xg-test lib verb few
	assert_output "few with 0"
	run_split xg-test lib verb
	assert_failure 2
	[[ "$stderr" == "xg-test-lib: a command is needed: none, one, some or few"* ]]
	run_split xg-test lib verb nosuch
	assert_failure 2
	[[ "$stderr" == "xg-test-lib: unknown command 'nosuch'"* ]]
	run_split xg-test lib verb one
	[[ "$stderr" == "xg-test-lib: 'one' takes one operand"* ]]
	run_split xg-test lib verb none x
	[[ "$stderr" == "xg-test-lib: 'none' takes no operands"* ]]
	run_split xg-test lib verb some
	[[ "$stderr" == "xg-test-lib: 'some' takes at least one operand"* ]]
	run_split xg-test lib verb few a b c
	[[ "$stderr" == "xg-test-lib: 'few' takes at most 2 operands"* ]]
}

@test "a thread's stack goes back to the system when it is joined" {
	# glibc keeps a joined thread's stack for the next one, with the pages
	# it wrote; xg_thread's are unmapped, so none of the five is left.
	run xg-test lib threads 5
	assert_success
	assert_output "5 threads, 0 stacks left"
}
