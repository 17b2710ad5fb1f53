#!/usr/bin/env bats
# xg-classify-plan: ADR-0077's outcome table, the code rules, record mode,
# exit statuses and limits.

load lib/helper

F="$FIXTURES/classify-plan"

# classify FIXTURE [options]: runs the program on a fixture file.
classify() {
	local f=$1
	shift
	run_split xg-classify-plan "$@" "$F/$f"
}

# --- the outcome table -----------------------------------------------------

@test "One complete block is plan_ready with its text less the blank lines around it" {
	classify plan-ready.txt
	assert_success
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"  1. Add `--json` to the option table.\n  2. Print one record a line.","problems":[]}'
	assert_equal "$stderr" ""
}

@test "One complete plan_blocked block is blocked with its text" {
	classify blocked.txt
	assert_success
	assert_output '{"type":"plan","outcome":"blocked","blocked":"Which database should the cache use? ask_user got no answer.","problems":[]}'
}

@test "Text without any outcome tag is no_plan" {
	classify no-plan.txt
	assert_success
	assert_output '{"type":"plan","outcome":"no_plan","problems":[]}'
}

@test "A block that never closes is invalid as unbalanced_tag" {
	classify unclosed.txt
	assert_output '{"type":"plan","outcome":"invalid","problems":[{"code":"unbalanced_tag","message":"The <proposed_plan> tag on line 1 opens a block that is never closed.","line":1}]}'
}

@test "A closing tag with no open block is invalid as unbalanced_tag" {
	classify stray-close.txt
	assert_output '{"type":"plan","outcome":"invalid","problems":[{"code":"unbalanced_tag","message":"The </plan_blocked> tag on line 2 closes no open block.","line":2}]}'
}

@test "A block opened inside another is invalid as unbalanced_tag" {
	classify nested.txt
	assert_output '{"type":"plan","outcome":"invalid","problems":[{"code":"unbalanced_tag","message":"The <proposed_plan> tag on line 3 opens a block inside the <proposed_plan> block opened on line 1.","line":3}]}'
}

@test "A closing tag of the other kind neither closes the block nor passes" {
	classify mismatched.txt
	assert_output '{"type":"plan","outcome":"invalid","problems":[{"code":"unbalanced_tag","message":"The </plan_blocked> tag on line 3 does not close the <proposed_plan> block opened on line 1.","line":3},{"code":"unbalanced_tag","message":"The <proposed_plan> tag on line 1 opens a block that is never closed.","line":1}]}'
}

@test "A block of only white space is invalid as empty_block" {
	classify empty-block.txt
	assert_output '{"type":"plan","outcome":"invalid","problems":[{"code":"empty_block","message":"The <proposed_plan> block on line 2 is empty.","line":2}]}'
}

@test "Two plan blocks are invalid as duplicate_block" {
	classify duplicate.txt
	assert_output '{"type":"plan","outcome":"invalid","problems":[{"code":"duplicate_block","message":"The reply has 2 <proposed_plan> blocks, the second on line 4; one is allowed.","line":4}]}'
}

@test "A plan block and a blocked block together are invalid as conflicting_blocks" {
	classify conflicting.txt
	assert_output '{"type":"plan","outcome":"invalid","problems":[{"code":"conflicting_blocks","message":"The reply has both a <proposed_plan> block (line 1) and a <plan_blocked> block (line 4); one outcome is allowed.","line":4}]}'
}

@test "A plan_clarification tag is invalid as legacy_clarification even beside a good plan" {
	classify legacy.txt
	assert_output '{"type":"plan","outcome":"invalid","problems":[{"code":"legacy_clarification","message":"The <plan_clarification> tag on line 4 is no longer accepted: ask with ask_user, or end with a <plan_blocked> block.","line":4}]}'
}

@test "An empty reply and a reply of only white space are invalid as empty_reply" {
	local empty='{"type":"plan","outcome":"invalid","problems":[{"code":"empty_reply","message":"The reply is empty."}]}'
	classify empty.txt
	assert_success
	assert_output "$empty"
	classify whitespace.txt
	assert_output "$empty"
}

@test "Every problem of a reply is listed, in the order found" {
	printf '<proposed_plan>a</proposed_plan><plan_blocked>b</plan_blocked>\n<proposed_plan> </proposed_plan></proposed_plan>\n' >reply
	run_split xg-classify-plan reply
	assert_output '{"type":"plan","outcome":"invalid","problems":[{"code":"empty_block","message":"The <proposed_plan> block on line 2 is empty.","line":2},{"code":"unbalanced_tag","message":"The </proposed_plan> tag on line 2 closes no open block.","line":2},{"code":"duplicate_block","message":"The reply has 2 <proposed_plan> blocks, the second on line 2; one is allowed.","line":2},{"code":"conflicting_blocks","message":"The reply has both a <proposed_plan> block (line 1) and a <plan_blocked> block (line 1); one outcome is allowed.","line":1}]}'
}

@test "At most 32 problems are listed" {
	for i in $(seq 100); do printf '</plan_blocked>\n'; done >reply
	run_split xg-classify-plan reply
	assert_success
	assert_equal "$(grep -o '"code":' <<<"$output" | wc -l)" 32
	assert_output --partial '"line":32}]}'
}

# --- tags count only outside code ----------------------------------------

@test "Tags inside a backtick fence are text" {
	classify fence-backtick.txt
	assert_output '{"type":"plan","outcome":"no_plan","problems":[]}'
}

@test "Tags inside a tilde fence are text" {
	classify fence-tilde.txt
	assert_output '{"type":"plan","outcome":"no_plan","problems":[]}'
}

@test "A fence may be indented three spaces but not four" {
	classify fence-indent-3.txt
	assert_output '{"type":"plan","outcome":"no_plan","problems":[]}'
	classify fence-indent-4.txt
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"x","problems":[]}'
}

@test "A fence may carry an info string, with backticks only after tildes" {
	classify fence-info.txt
	assert_output '{"type":"plan","outcome":"no_plan","problems":[]}'
	classify fence-info-backtick.txt
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"x","problems":[]}'
}

@test "A shorter fence does not close a longer one and a longer fence does" {
	classify fence-longer.txt
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"x","problems":[]}'
}

@test "A fence of the other character does not close a fence" {
	classify fence-other-char.txt
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"y","problems":[]}'
}

@test "A fence line with text after it does not close a fence" {
	classify fence-close-text.txt
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"x","problems":[]}'
}

@test "An unclosed fence runs to the end of the reply" {
	classify fence-unclosed.txt
	assert_output '{"type":"plan","outcome":"invalid","problems":[{"code":"unbalanced_tag","message":"The <proposed_plan> tag on line 1 opens a block that is never closed.","line":1}]}'
	classify fence-unclosed-after.txt
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"1. Step.","problems":[]}'
}

@test "Tags inside inline code spans are text" {
	classify inline-span.txt
	assert_output '{"type":"plan","outcome":"no_plan","problems":[]}'
}

@test "A span of several backticks closes only at a run of as many" {
	classify inline-double.txt
	assert_output '{"type":"plan","outcome":"no_plan","problems":[]}'
}

@test "A backtick run without a match is literal" {
	classify unmatched-backtick.txt
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"1. Step.","problems":[]}'
}

@test "A code span does not reach over a blank line" {
	classify span-paragraph.txt
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"1. Step.","problems":[]}'
}

@test "A backtick after a backslash opens no span" {
	classify escaped-backtick.txt
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"1. Step.","problems":[]}'
}

@test "A closing tag quoted in code inside a real block does not close it" {
	classify close-in-code.txt
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"1. Mention `</proposed_plan>` in the docs.\n2. Add the example:\n```\n<proposed_plan>\nx\n</proposed_plan>\n```","problems":[]}'
}

@test "Tags need not stand on their own lines" {
	classify inline-tags.txt
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"Add the flag.","problems":[]}'
}

@test "Every fixture's CRLF twin classifies exactly as the LF reply" {
	local f lf crlf n=0
	for f in "$F"/*.txt; do
		sed 's/$/\r/' "$f" >twin
		lf=$(xg-classify-plan "$f")
		crlf=$(xg-classify-plan twin)
		assert_equal "$crlf" "$lf"
		n=$((n + 1))
	done
	[ "$n" -ge 30 ]
	# The twin really had CRs, and the text came out with LF alone.
	sed 's/$/\r/' "$F/plan-ready.txt" >twin
	grep -q $'\r' twin
	run_split xg-classify-plan twin
	assert_output --partial '"plan":"  1. Add `--json` to the option table.\n  2. Print'
	refute_output --partial '\r'
}

@test "A lone CR is text, not a line end" {
	printf '<proposed_plan>\r1. Step.\r</proposed_plan>' >reply
	run_split xg-classify-plan reply
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"\r1. Step.\r","problems":[]}'
}

@test "Invalid UTF-8 is classified on its bytes and written as valid UTF-8" {
	classify invalid-utf8.txt
	assert_success
	assert_output "{\"type\":\"plan\",\"outcome\":\"plan_ready\",\"plan\":\"Caf$(printf '\357\277\275') $(printf '\303\251')t$(printf '\357\277\275')\",\"problems\":[]}"
	printf '%s\n' "$output" | iconv -f UTF-8 -t UTF-8 >/dev/null
}

@test "NUL bytes in a reply are text" {
	printf '<proposed_plan>a\0b</proposed_plan>' >reply
	run_split xg-classify-plan reply
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"a\u0000b","problems":[]}'
}

@test "Many unmatched backtick runs of different lengths still classify" {
	python3 -c '
import sys
for n in range(1, 81):
    sys.stdout.write("`" * n + " x ")
sys.stdout.write("<proposed_plan>y</proposed_plan>\n")' >reply
	run_split xg-classify-plan reply
	assert_output '{"type":"plan","outcome":"plan_ready","plan":"y","problems":[]}'
}

# --- record mode -----------------------------------------------------------

@test "Records pass through with their bytes and order, and the plan record comes last" {
	printf '%s\n' '{"type":"run_start","run":"r1"}' \
		'{ "type" : "tool_call",  "id":"t1","z":1,"a":2 }' \
		'{"type":"unknown","text":"caf\u00e9 ü"}' \
		'{"type":"run_end","status":"completed","reply":"<plan_blocked>\nNeed a key.\n</plan_blocked>"}' >in
	run_split xg-classify-plan --records in
	assert_success
	assert_equal "$output" "$(cat in; echo '{"type":"plan","outcome":"blocked","blocked":"Need a key.","problems":[]}')"
}

@test "Records mode takes the last run_end's reply over any assistant message" {
	printf '%s\n' '{"type":"message","role":"assistant","text":"<proposed_plan>m1</proposed_plan>"}' \
		'{"type":"run_end","reply":"<proposed_plan>e1</proposed_plan>"}' \
		'{"type":"run_end","reply":"<proposed_plan>e2</proposed_plan>"}' \
		'{"type":"message","role":"assistant","text":"<proposed_plan>m2</proposed_plan>"}' >in
	run_split xg-classify-plan --records in
	assert_line --index 4 '{"type":"plan","outcome":"plan_ready","plan":"e2","problems":[]}'
	assert_equal "${#lines[@]}" 5
}

@test "Without a run_end, records mode takes the last assistant message's text" {
	printf '%s\n' '{"type":"message","role":"assistant","text":"<proposed_plan>m1</proposed_plan>"}' \
		'{"type":"message","role":"assistant","text":"<proposed_plan>m2</proposed_plan>"}' \
		'{"type":"message","role":"user","text":"<proposed_plan>u</proposed_plan>"}' \
		'{"type":"message","text":"<proposed_plan>none</proposed_plan>"}' >in
	run_split xg-classify-plan --records <in
	assert_success
	assert_line --index 4 '{"type":"plan","outcome":"plan_ready","plan":"m2","problems":[]}'
}

@test "A run_end without a reply, or with null, is an empty reply" {
	printf '%s\n' '{"type":"message","role":"assistant","text":"<proposed_plan>m</proposed_plan>"}' \
		'{"type":"run_end","status":"failed","reason":"no key"}' >in
	run_split xg-classify-plan --records in
	assert_line --index 2 '{"type":"plan","outcome":"invalid","problems":[{"code":"empty_reply","message":"The reply is empty."}]}'
	printf '%s\n' '{"type":"run_end","reply":null}' | xg-classify-plan --records --status -q || rc=$?
	assert_equal "${rc:-0}" 12
}

@test "A reply field that is not a string is exit 65 naming the line and field" {
	printf '%s\n' '{"type":"run_start"}' '{"type":"run_end","reply":["x"]}' >in
	run_split xg-classify-plan --records in
	assert_failure 65
	assert_equal "$stderr" "xg-classify-plan: 'in': line 2: field 'reply' of a run_end record must be a string, found an array"
	printf '%s\n' '{"type":"message","role":"assistant","text":7}' >in
	run_split xg-classify-plan --records in
	assert_failure 65
	assert_equal "$stderr" "xg-classify-plan: 'in': line 1: field 'text' of a message record must be a string, found a number"
}

@test "Records without a reply pass through and exit 65" {
	printf '%s\n' '{"type":"run_start"}' '{"type":"message","role":"user","text":"plan it"}' >in
	run_split xg-classify-plan --records in
	assert_failure 65
	assert_equal "$output" "$(cat in)"
	assert_equal "$stderr" "xg-classify-plan: 'in': no run_end record and no assistant message to classify"
}

@test "A record line that is not JSON is exit 65 naming the line" {
	printf '%s\n' '{"type":"run_start"}' 'not json' >in
	run_split xg-classify-plan --records in
	assert_failure 65
	assert_equal "$output" '{"type":"run_start"}'
	assert_output --partial 'run_start'
	[[ "$stderr" == "xg-classify-plan: 'in': line 2: not JSON"* ]]
}

@test "Records mode with -q writes nothing at all" {
	printf '%s\n' '{"type":"run_start"}' '{"type":"run_end","reply":"done"}' >in
	run_split xg-classify-plan --records -q in
	assert_success
	assert_output ''
	run_split xg-classify-plan --records -q --status in
	assert_failure 10
	assert_output ''
}

@test "Records mode honours XG_MAX_LINE for its lines" {
	printf '{"type":"run_end","reply":"%s"}\n' "$(head -c 300 /dev/zero | tr '\0' a)" >in
	XG_MAX_LINE=100 run_split xg-classify-plan --records in
	assert_failure 65
	assert_equal "$stderr" "xg-classify-plan: 'in': line 1 is longer than the limit of 100 bytes (XG_MAX_LINE)"
}

# --- exit statuses, options, input ----------------------------------------

@test "With --status the exit code is the outcome" {
	classify plan-ready.txt --status
	assert_success
	classify no-plan.txt --status
	assert_failure 10
	assert_output '{"type":"plan","outcome":"no_plan","problems":[]}'
	classify blocked.txt --status
	assert_failure 11
	classify duplicate.txt --status
	assert_failure 12
	classify empty.txt --status
	assert_failure 12
}

@test "Without --status every outcome exits 0" {
	local f
	for f in plan-ready.txt no-plan.txt blocked.txt duplicate.txt empty.txt; do
		classify "$f"
		assert_success
		assert_output --partial '"type":"plan"'
	done
}

@test "-q writes nothing and --status still tells" {
	classify blocked.txt -q
	assert_success
	assert_output ''
	assert_equal "$stderr" ""
	classify blocked.txt -q --status
	assert_failure 11
	assert_output ''
	classify nested.txt --quiet --status
	assert_failure 12
}

@test "A reply over --max-bytes is exit 65 and one at it is classified" {
	head -c 1025 /dev/zero | tr '\0' a >big
	run_split xg-classify-plan --max-bytes 1k big
	assert_failure 65
	assert_output ''
	assert_equal "$stderr" "xg-classify-plan: 'big': the reply is longer than the limit of 1024 bytes"
	head -c 1024 big | xg-classify-plan --max-bytes=1024 >out
	assert_equal "$(cat out)" '{"type":"plan","outcome":"no_plan","problems":[]}'
	printf '{"type":"run_end","reply":"%s"}\n' "$(cat big)" >in
	run_split xg-classify-plan --records --max-bytes 1k <in
	assert_failure 65
	assert_equal "$stderr" "xg-classify-plan: standard input: line 1: field 'reply' is longer than the limit of 1024 bytes"
}

@test "A reply of several MiB on a pipe is read whole, and one over the limit is refused" {
	python3 -c '
import sys
sys.stdout.write("<proposed_plan>\n" + "step `x` done\n" * 300000 + "last\n</proposed_plan>\n")' >big
	run_split sh -c 'cat big | xg-classify-plan'
	assert_success
	# 46 bytes up to the text, 15 a line (LF written as \n), "last", 16 after.
	assert_equal "${#output}" $((46 + 300000 * 15 + 4 + 16))
	assert_output --partial '"plan":"step `x` done\nstep'
	assert_output --partial 'done\nlast","problems":[]}'
	run_split sh -c 'cat big | xg-classify-plan --max-bytes 4M'
	assert_failure 65
	assert_equal "$stderr" "xg-classify-plan: standard input: the reply is longer than the limit of 4194304 bytes"
}

@test "A bad --max-bytes is a usage error" {
	run_split xg-classify-plan --max-bytes lots "$F/no-plan.txt"
	assert_failure 2
	assert_equal "${stderr_lines[0]}" "xg-classify-plan: option '--max-bytes' needs a non-negative number (with k, M or G), not 'lots'"
	run_split xg-classify-plan --max-bytes 0 "$F/no-plan.txt"
	assert_failure 2
}

@test "The reply is read from a file operand, from standard input, and from -" {
	local want='{"type":"plan","outcome":"blocked","blocked":"Which database should the cache use? ask_user got no answer.","problems":[]}'
	run_split xg-classify-plan "$F/blocked.txt"
	assert_output "$want"
	run_split xg-classify-plan <"$F/blocked.txt"
	assert_output "$want"
	run_split xg-classify-plan - <"$F/blocked.txt"
	assert_output "$want"
}

@test "A missing file is exit 74 naming it" {
	run_split xg-classify-plan missing.txt
	assert_failure 74
	assert_output ''
	assert_equal "$stderr" "xg-classify-plan: cannot open 'missing.txt': No such file or directory"
}

@test "Two file operands are a usage error" {
	run_split xg-classify-plan "$F/blocked.txt" "$F/no-plan.txt"
	assert_failure 2
	assert_equal "${stderr_lines[0]}" "xg-classify-plan: too many operands: one file at most"
}

@test "With no file and a closed standard input it is a usage error" {
	# Not through run: its command substitution could reuse descriptor 0.
	local rc=0
	xg-classify-plan <&- >out 2>err || rc=$?
	assert_equal "$rc" 2
	assert_equal "$(cat out)" ""
	assert_equal "$(head -n 1 err)" "xg-classify-plan: no reply: name a file, or give it on standard input"
}

@test "With no file and a terminal on standard input it does not wait" {
	command -v script >/dev/null || skip "script(1) is not installed"
	run timeout 10 script -qec "xg-classify-plan" /dev/null </dev/null
	assert_failure 2
	assert_output --partial "no reply: name a file, or give it on standard input"
}

@test "A full standard output is exit 74" {
	[ -w /dev/full ] || skip "no /dev/full"
	local rc=0
	xg-classify-plan "$F/blocked.txt" >/dev/full 2>err || rc=$?
	assert_equal "$rc" 74
	assert_equal "$(cat err)" "xg-classify-plan: cannot write standard output: No space left on device"
}

@test "--version names the program and the version" {
	run_split xg-classify-plan --version
	assert_success
	assert_output --regexp '^xg-classify-plan \(xg\) [0-9]+\.[0-9]+\.[0-9]+$'
}

# --- the manual -------------------------------------------------------------

@test "The usage of --help is the manual's SYNOPSIS" {
	local page usage
	page=$(mandoc -Tascii "$XG_SRCDIR/man/xg-classify-plan.1" | col -b |
		sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | sed '1d;$d' | tr -s ' \n' ' ' | sed 's/^ //;s/ $//')
	usage=$(xg-classify-plan --help | sed -n 's/^usage: //p;s/^   or: //p' | tr -s ' \n' ' ' | sed 's/ $//')
	assert_equal "$usage" "$page"
}

@test "The manual's EXAMPLES print what the page shows" {
	# Each "$ command" line of a literal block in EXAMPLES runs in a
	# shell; the lines after it up to the next command are its output.
	local page=$XG_SRCDIR/man/xg-classify-plan.1 got want n=0
	sed -n '/^\.Sh EXAMPLES/,/^\.Sh SEE ALSO/p' "$page" |
		sed -n '/^\.Bd -literal/,/^\.Ed/p' | grep -v '^\.[BE]d' |
		sed 's/\\e/\\/g' >examples
	while IFS= read -r line; do
		if [[ "$line" == '$ '* ]]; then
			printf '%s\n' "${line#\$ }" >>script.sh
			n=$((n + 1))
		else
			printf '%s\n' "$line" >>want
		fi
	done <examples
	[ "$n" -ge 5 ]
	got=$(sh script.sh)
	assert_equal "$got" "$(cat want)"
}

# --- the library ------------------------------------------------------------

@test "The record line is byte for byte the record libjq writes, for any bytes" {
	# xg-test plan builds the record as a jv (xg_plan_record) and dumps it
	# with libjq; xg-classify-plan writes its own line.  Fixtures first,
	# then replies of random pieces: tags, fences, backslashes, control
	# characters and every kind of bad UTF-8.
	local f
	for f in "$F"/*.txt; do
		assert_equal "$(xg-classify-plan "$f")" "$(xg-test plan <"$f")"
	done
	python3 - <<'PY'
import random, subprocess, sys
random.seed(77)
pieces = [b"<proposed_plan>", b"</proposed_plan>", b"<plan_blocked>", b"</plan_blocked>",
          b"`", b"```\n", b"~~~\n", b"\n", b"\r\n", b"\t", b" ", b"\\", b'"', b"\x00",
          b"\x01", b"\x1f", b"\x7f", b"ab", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80",
          b"\xc0\x80", b"\xc1", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf5",
          b"\xe2\x82", b"\xff", b"\x80", b"\xc3"]
# Inside a block, no tags or fences, so most of those replies are plan_ready
# and their text goes through the escaping.
inside = [p for p in pieces if b"plan" not in p and p not in (b"```\n", b"~~~\n")]
bad = ready = 0
for t in range(150):
    if t % 2:
        body = b"".join(random.choice(inside) for _ in range(random.randint(1, 80)))
        body = b"<proposed_plan>x" + body + b"x</proposed_plan>"
    else:
        body = b"".join(random.choice(pieces) for _ in range(random.randint(1, 80)))
    a = subprocess.run(["xg-classify-plan"], input=body, capture_output=True).stdout
    b = subprocess.run(["xg-test", "plan"], input=body, capture_output=True).stdout
    ready += b'"outcome":"plan_ready"' in a
    if a != b:
        bad += 1
        print(repr(body), a, b, file=sys.stderr)
print("plan_ready", ready, "mismatches", bad, file=sys.stderr)
sys.exit(1 if bad or ready < 50 else 0)
PY
}

@test "A file that may not be read is exit 77" {
	[ "$(id -u)" -eq 0 ] || true
	printf 'text\n' >secret
	chmod 000 secret
	if cat secret >/dev/null 2>&1; then skip "running with permission to read anything"; fi
	run_split xg-classify-plan secret
	assert_equal "$status" 77
	assert_equal "$stderr" "xg-classify-plan: cannot open 'secret': Permission denied"
}
