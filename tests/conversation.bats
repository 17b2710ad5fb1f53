#!/usr/bin/env bats
# The conversation library (lib/conversation.c) through xg-test lib's conv-*
# verbs: the header, locked appends, torn lines, reading from the end.

load lib/helper

setup() {
	CONVS="$XG_HOME/state/conversations"
}

# Checks that every line of $1 is a JSON object and prints their types.
types() {
	python3 -c '
import json, sys
for l in open(sys.argv[1]).read().split("\n")[:-1]:
    print(json.loads(l)["type"])
' "$1"
}

@test "the first append writes the header once, and every entry gets its time" {
	cd "$BATS_TEST_TMPDIR"
	echo '{"type":"message","role":"user","text":"one"}' | xg-test lib conv-append c1
	printf '%s\n' '{"type":"message","role":"assistant","text":"two","model":"a/b"}' \
		'{"type":"variant_change","to":"default@1","at":"2026-01-02T03:04:05.000Z"}' |
		xg-test lib conv-append c1
	run types "$CONVS/c1.jsonl"
	assert_output - <<-'EOF'
	conversation
	message
	message
	variant_change
	EOF
	run python3 -c '
import json, re, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
h = lines[0]
t = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"
print(h["schema"], h["id"], h["cwd"] == sys.argv[2], bool(re.match(t, h["created"])))
print([bool(re.match(t, e["at"])) for e in lines[1:]], lines[3]["at"])
' "$CONVS/c1.jsonl" "$BATS_TEST_TMPDIR"
	assert_output - <<-'EOF'
	xg/1 c1 True True
	[True, True, True] 2026-01-02T03:04:05.000Z
	EOF
}

@test "a conversation is its owner's alone: the file is 0600, the directories it creates 0700" {
	umask 022
	echo '{"type":"message","role":"user","text":"a secret"}' | xg-test lib conv-append c1
	run stat -c '%a %n' "$XG_HOME" "$XG_HOME/state" "$CONVS" "$CONVS/c1.jsonl"
	assert_output - <<-EOF
	700 $XG_HOME
	700 $XG_HOME/state
	700 $CONVS
	600 $CONVS/c1.jsonl
	EOF
}

@test "a new conversation comes into being whole: the header and its first entry, synced once, then named" {
	command -v strace >/dev/null || skip "strace is not installed"
	cd "$BATS_TEST_TMPDIR"
	# LeakSanitizer cannot run under ptrace (make check SANITIZE=1).
	echo '{"type":"message","role":"user","text":"first"}' | ASAN_OPTIONS=detect_leaks=0 \
		strace -f -qq -e trace=write,fsync,fdatasync,link,linkat,rename,renameat,renameat2 \
			-o "$BATS_TEST_TMPDIR/trace" xg-test lib conv-append c0
	run types "$CONVS/c0.jsonl"
	assert_output $'conversation\nmessage'
	run jq -rs '.[0].created <= .[1].at' "$CONVS/c0.jsonl"
	assert_output true
	# One write holds both lines, one sync, and only then the name: no
	# reader ever finds the file without its header or its first entry.
	run grep -E '(write\(|fsync|fdatasync|link|rename).*' "$BATS_TEST_TMPDIR/trace"
	[ "${#lines[@]}" = 3 ] || fail "$output"
	[[ "${lines[0]}" == *'write('*'{\"type\":\"conversation\"'* ]] || fail "$output"
	[[ "${lines[1]}" == *'fsync('* ]] || fail "$output"
	[[ "${lines[2]}" == *'link('*'c0.jsonl.new'*'c0.jsonl")'* ]] || fail "$output"
	[ "${lines[0]##* = }" = \
		"$(wc -c <"$CONVS/c0.jsonl")" ] || fail "the file was not written in one write: $output"
}

@test "an older conversation left readable by others is made private on its next append" {
	mkdir -p "$CONVS"
	chmod 755 "$CONVS"
	echo '{"type":"message","role":"user","text":"one"}' | xg-test lib conv-append c2
	chmod 644 "$CONVS/c2.jsonl"
	chmod 755 "$CONVS"
	echo '{"type":"message","role":"user","text":"two"}' | xg-test lib conv-append c2
	run stat -c '%a %n' "$CONVS" "$CONVS/c2.jsonl"
	assert_output - <<-EOF
	700 $CONVS
	600 $CONVS/c2.jsonl
	EOF
	[ "$(grep -c '"role":"user"' "$CONVS/c2.jsonl")" = 2 ]
}

@test "a scan reads the entries newest first, the header last" {
	for i in 1 2 3; do echo "{\"type\":\"message\",\"role\":\"user\",\"text\":\"$i\"}"; done |
		xg-test lib conv-append c2
	run_split xg-test lib conv-scan c2
	assert_success
	run python3 -c 'import json,sys; [print(json.loads(l).get("text", json.loads(l)["type"])) for l in sys.stdin]' <<<"$output"
	assert_output - <<-'EOF'
	3
	2
	1
	conversation
	EOF
}

@test "a scan across many blocks and very long lines visits every entry once, in reverse" {
	python3 -c '
import json
for i in range(3000):
    n = 200000 if i % 700 == 5 else 40
    print(json.dumps({"type": "message", "role": "user", "text": "%d:%s" % (i, "x" * n)}))
' | xg-test lib conv-append c3
	run_split xg-test lib conv-scan c3
	assert_success
	run python3 -c '
import json, sys
got = [json.loads(l).get("text", "H").split(":")[0] for l in sys.stdin]
print(got == [str(i) for i in reversed(range(3000))] + ["H"])
' <<<"$output"
	assert_output True
}

@test "conv-last gives the newest entry of a type, and null when there is none" {
	printf '%s\n' '{"type":"model_change","from":"a/1","to":"a/2","effort":"low","reason":"x"}' \
		'{"type":"message","role":"user","text":"hi"}' \
		'{"type":"model_change","from":"a/2","to":"a/3","effort":"high","reason":"y"}' \
		'{"type":"message","role":"user","text":"again"}' | xg-test lib conv-append c4
	run_split xg-test lib conv-last c4 model_change
	assert_success
	[[ "$output" == *'"to":"a/3"'* ]]
	run_split xg-test lib conv-last c4 goal
	assert_output null
}

@test "the last model is the newer of the last model_change and the last assistant message" {
	printf '%s\n' '{"type":"message","role":"assistant","text":"a","model":"p/one","effort":"low"}' \
		'{"type":"model_change","from":"p/one","to":"p/two","effort":"high","reason":"r"}' \
		'{"type":"message","role":"user","text":"\"model\":\"p/three\""}' \
		'{"type":"message","role":"assistant","text":"no model named"}' | xg-test lib conv-append c5
	run_split xg-test lib conv-last-model c5
	assert_output '{"id":"p/two","effort":"high","entry":"model_change"}'
	echo '{"type":"message","role":"assistant","text":"b","model":"p/four"}' | xg-test lib conv-append c5
	run_split xg-test lib conv-last-model c5
	assert_output '{"id":"p/four","effort":null,"entry":"message"}'
	run_split xg-test lib conv-last-model no-such-conversation
	assert_success
	assert_output null
}

@test "a torn last line is ignored with a notice, and the next append starts a fresh line" {
	printf '%s\n' '{"type":"message","role":"assistant","text":"ok","model":"p/one"}' | xg-test lib conv-append c6
	printf '{"type":"model_change","from":"p/one","to":"p/t' >> "$CONVS/c6.jsonl"
	run_split xg-test lib conv-last-model c6
	assert_success
	assert_output '{"id":"p/one","effort":null,"entry":"message"}'
	[[ "$stderr" == *"torn"* ]]
	run_split xg-test lib conv-scan c6
	assert_success
	[ "${#lines[@]}" = 2 ]
	echo '{"type":"message","role":"user","text":"after"}' | xg-test lib conv-append c6
	run tail -n 2 "$CONVS/c6.jsonl"
	assert_line --index 0 '{"type":"model_change","from":"p/one","to":"p/t'
	[[ "${lines[1]}" == '{"type":"message","role":"user","text":"after","at":"'* ]]
	run_split xg-test lib conv-scan c6
	assert_success
	assert_equal "$stderr" ''
	[[ "${lines[0]}" == *'"text":"after"'* ]]
	[ "${#lines[@]}" = 3 ]
}

@test "a torn line longer than a read block is ignored too" {
	echo '{"type":"message","role":"assistant","text":"ok","model":"p/one"}' | xg-test lib conv-append c7
	python3 -c 'import sys; sys.stdout.write("{\"type\":\"message\",\"text\":\"" + "y" * 300000)' >> "$CONVS/c7.jsonl"
	run_split xg-test lib conv-last-model c7
	assert_output '{"id":"p/one","effort":null,"entry":"message"}'
	[[ "$stderr" == *"torn"* ]]
}

@test "twenty parallel appends are all present, one header, every line valid JSON" {
	for i in $(seq 1 20); do
		echo "{\"type\":\"message\",\"role\":\"user\",\"text\":\"n$i $(head -c 3000 /dev/zero | tr '\0' x)\"}" |
			xg-test lib conv-append c8 &
	done
	wait
	run types "$CONVS/c8.jsonl"
	assert_success
	[ "$(grep -c '^conversation$' <<<"$output")" = 1 ]
	[ "$(grep -c '^message$' <<<"$output")" = 20 ]
	run python3 -c '
import json, sys
print(sorted(int(json.loads(l)["text"].split()[0][1:]) for l in open(sys.argv[1]) if "\"role\"" in l) == list(range(1, 21)))
' "$CONVS/c8.jsonl"
	assert_output True
}

@test "an append waits for a held lock, and gives up with exit 75 naming the holder" {
	echo '{"type":"message","role":"user","text":"first"}' | xg-test lib conv-append c9
	cp "$CONVS/c9.jsonl" "$BATS_TEST_TMPDIR/before"
	hold_lock "$CONVS/c9.jsonl" 30
	export XG_LOCK_TIMEOUT=200
	run_split xg-test lib conv-append c9 <<<'{"type":"message","role":"user","text":"second"}'
	release_lock
	assert_failure 75
	[[ "$stderr" == *"$CONVS/c9.jsonl"*"locked by process $holder"*"XG_LOCK_TIMEOUT"* ]]
	cmp "$CONVS/c9.jsonl" "$BATS_TEST_TMPDIR/before"
}

@test "an append that waits less than the timeout goes through once the lock is released" {
	echo '{"type":"message","role":"user","text":"first"}' | xg-test lib conv-append c10
	hold_lock "$CONVS/c10.jsonl" 1
	export XG_LOCK_TIMEOUT=20000
	run_split xg-test lib conv-append c10 <<<'{"type":"message","role":"user","text":"second"}'
	wait "$holder"
	assert_success
	run types "$CONVS/c10.jsonl"
	assert_output - <<-'EOF'
	conversation
	message
	message
	EOF
}

@test "a conversation id that could leave the directory is refused" {
	run_split xg-test lib conv-append ../escape <<<'{"type":"message","text":"x"}'
	assert_failure
	[[ "$stderr" == *"'../escape' is not a conversation id"* ]]
	[ ! -e "$XG_HOME/state/escape.jsonl" ]
}
