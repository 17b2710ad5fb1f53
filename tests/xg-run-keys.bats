#!/usr/bin/env bats
# Keys never reach a tool, a record or a request (man 1 xg-run, Keys):
# what a tool's commands see of the environment, what the run's own
# process shows of it, the redaction of every known key, a key variable
# that is refused, and the modes of the run's directory.  Against the
# loopback fake provider; every key here is a fake one, and the tests
# assert its absence rather than print it.

load lib/helper
load lib/fake-provider
load lib/xg-run

setup() {
	xg_run_setup
	export XG_TEST_KEY=fake-key-for-tests-9c1e27b4
	export FAKE_PROVIDER_KEY=$XG_TEST_KEY
	export OPENAI_API_KEY=fake-openai-key-5f0d33a1
}

teardown() {
	fake_provider_stop
}

# bash_step COMMAND: a script step that has the model run COMMAND.
bash_step() {
	jq -cn --arg c "$1" '{tool_calls: [{id: "c1", name: "bash", args: {command: $c}}]}'
}

# The output of the tool call c1 in the run's records.
c1_output() {
	recs tool_result | jq -r 'select(.id == "c1") | .output'
}

# xg-run on fake/m, without the fake provider's own copy of the key.
xgrun() {
	run_split env -u FAKE_PROVIDER_KEY xg-run --model fake/m "$@" </dev/null
}

# Fails when $1 holds either fake key.
refute_keys() {
	case "$1" in
	*"$XG_TEST_KEY"* | *"$OPENAI_API_KEY"*) fail "a key is in: ${2:-the text}" ;;
	esac
}

@test "a tool's commands see no key variable and no XG_HOME" {
	serve openai-chat < <(bash_step 'env'; echo '{"text": "ok"}')
	xgrun "show the environment"
	assert_success
	out=$(c1_output)
	[[ "$out" == *PATH=* ]]
	refute_keys "$out" "the tool's environment"
	run grep -E '^(XG_TEST_KEY|OPENAI_API_KEY|ANTHROPIC_API_KEY|OPENROUTER_API_KEY|XG_HOME)=' <<<"$out"
	assert_failure
}

@test "the variable that keeps GnuTLS idle stays out of a tool's environment, unless the caller set it" {
	# xg-run sets GNUTLS_NO_IMPLICIT_INIT for the GnuTLS that comes in
	# with libcurl and is never used (lib/curl.h); a tool's programs get
	# the environment they would have had.
	serve openai-chat < <(bash_step 'env'; echo '{"text": "ok"}')
	xgrun "show the environment"
	assert_success
	run grep -c '^GNUTLS_NO_IMPLICIT_INIT=' <<<"$(c1_output)"
	assert_output 0
	serve openai-chat < <(bash_step 'env'; echo '{"text": "ok"}')
	GNUTLS_NO_IMPLICIT_INIT=0 xgrun "show the environment"
	assert_success
	run grep '^GNUTLS_NO_IMPLICIT_INIT=' <<<"$(c1_output)"
	assert_output GNUTLS_NO_IMPLICIT_INIT=0
}

@test "xg-run's own environment, as /proc shows it, holds no key once read" {
	cat >probe.sh <<-'EOF'
	p=$$
	while [ "$p" -gt 1 ] && [ "$(cat /proc/$p/comm)" != xg-run ]; do
		p=$(cut -d' ' -f4 /proc/$p/stat)
	done
	if tr '\0' '\n' </proc/$p/environ >env.txt 2>/dev/null; then
		n=$(grep -c -E '^(XG_TEST_KEY|OPENAI_API_KEY)=.' env.txt)
	else
		n=unreadable
	fi
	echo "$n $(cat /proc/$p/comm)"
	EOF
	serve openai-chat < <(bash_step 'sh probe.sh'; echo '{"text": "ok"}')
	xgrun "look at your parent"
	assert_success
	out=$(c1_output)
	refute_keys "$out" "xg-run's environment"
	[[ "$out" =~ ^(0|unreadable)\ xg-run$ ]] || fail "the probe saw: $out"
	if [ -f env.txt ]; then refute_keys "$(cat env.txt)" "/proc/PID/environ"; fi
}

# A probe for a tool: every process of xg's (xg, xg-goal, xg-run, ...)
# has its environment read as /proc shows it; prints "N read, M hold it"
# (the key is given as its sha256, so the probe never holds it in clear).
environ_probe() {
	cat >probe.sh <<-EOF
	want=$(printf %s "$XG_TEST_KEY" | sha256sum | cut -c1-64)
	n=0 m=0
	for d in /proc/[0-9]*; do
		case "\$(cat \$d/comm 2>/dev/null)" in xg|xg-*) ;; *) continue ;; esac
		{ tr '\0' '\n' <\$d/environ >e.txt; } 2>/dev/null || continue
		n=\$((n + 1))
		sed -n 's/^[A-Z_]*=//p' e.txt | while read -r v; do printf %s "\$v" | sha256sum; done |
			grep -q "^\$want" && m=\$((m + 1))
	done
	rm -f e.txt
	echo "\$n read, \$m hold it"
	EOF
}

@test "no xg process holds the key in its environment as a tool reads it: xg, xg-goal, xg-run" {
	environ_probe
	serve openai-chat < <(bash_step 'sh probe.sh'; echo '{"text": "ok"}')
	run_split env -u FAKE_PROVIDER_KEY xg run --json --model fake/m "look around" </dev/null
	assert_success
	out=$(c1_output)
	[[ "$out" =~ ^[2-9]\ read,\ 0\ hold\ it$ ]] || fail "under xg run the probe saw: $out"
	serve openai-chat < <(bash_step 'sh probe.sh'
		echo '{"tool_calls": [{"id": "g", "name": "update_goal", "args": {"status": "complete", "evidence": "probed"}}]}'
		echo '{"text": "done"}'; echo '{"text": "done: probed"}')
	run_split env -u FAKE_PROVIDER_KEY xg-goal set --model fake/m "look around" </dev/null
	out=$(c1_output)
	[[ "$out" =~ ^[2-9]\ read,\ 0\ hold\ it$ ]] || fail "under xg-goal the probe saw: $out"
}

@test "the redactor replaces every secret of eight bytes or more, and no shorter one" {
	run xg-test lib redact fake-secret-aaaa short7x <<<"a fake-secret-aaaa b short7x fake-secret-aaaafake-secret-aaaa"
	assert_success
	assert_output "a <redacted> b short7x <redacted><redacted>"
}

@test "a key a tool met reaches no record, conversation or request, only <redacted>" {
	stored=fake-stored-key-0e7d41c9
	mkdir -p "$XG_HOME/config/accounts/default"
	printf '{"anthropic": {"key": "%s"}}\n' "$stored" >"$XG_HOME/config/accounts/default/auth.json"
	chmod 600 "$XG_HOME/config/accounts/default/auth.json"
	printf 'one %s two %s three %s\n' "$XG_TEST_KEY" "$OPENAI_API_KEY" "$stored" >secret.txt
	serve openai-chat < <(
		jq -cn '{tool_calls: [{id: "c1", name: "read", args: {path: "secret.txt"}}]}'
		bash_step 'cat secret.txt' | sed 's/"c1"/"c2"/'
		jq -cn --arg k "$XG_TEST_KEY" '{text: ("done " + $k)}'
		echo '{"text": "again"}'
	)
	XG_TRACE=1 xgrun "read the secret"
	assert_success
	conv=$(recs run_start | jq -r .conversation)
	[[ "$(c1_output)" == *"one <redacted> two <redacted> three <redacted>"* ]]
	[[ "$(recs tool_result | jq -r 'select(.id == "c2") | .output')" == *"one <redacted> two <redacted>"* ]]
	[[ "$(recs text | jq -r .text)" == *"done <redacted>"* ]] || [[ "$output" == *"done <redacted>"* ]]
	all="$output$stderr$(cat "$XG_HOME"/state/runs/*/events.ndjson "$CONVS/$conv.jsonl" "$FAKE_LOG")"
	[[ "$all" == *"<redacted>"* ]]
	refute_keys "$all" "the records, the trace, the conversation or the requests"
	case "$all" in *"$stored"*) fail "the stored key leaked" ;; esac
	# A later run on the conversation sends nothing the history could hold.
	xgrun --conversation "$conv" "again"
	assert_success
	refute_keys "$(cat "$FAKE_LOG")" "the request log"
}

@test "a key in an error body is redacted before the body is cut, and across the trace's chunks" {
	body="$(printf 'x%.0s' $(seq 190))$XG_TEST_KEY and the rest"
	jq -cn --arg b "$body" '{raw: $b, status: 400, content_type: "text/plain", stall: 0.3, stall_after: 195}' >script.ndjson
	serve openai-chat <script.ndjson
	XG_TRACE=1 XG_RETRY=off xgrun "fail"
	assert_failure
	all="$output$stderr$(cat "$XG_HOME"/state/runs/*/events.ndjson)"
	[[ "$all" == *"xxxx<redacted>"* ]]
	case "$all" in *"${XG_TEST_KEY:0:10}"* | *"${XG_TEST_KEY: -10}"*) fail "a part of the key leaked" ;; esac
}

@test "a key variable holding a control character is refused with exit 77, its value never shown" {
	serve openai-chat <<<'{"text": "never"}'
	XG_TEST_KEY=$'fake-key-for-tests\r\nX-Injected: 1' xgrun "inject"
	assert_failure 77
	[[ "$stderr" == *"the key in XG_TEST_KEY holds a space or a control character at byte 19"* ]] ||
		fail "$stderr"
	[[ "$output$stderr" != *X-Injected* ]] || fail "the value was shown"
	fake_log 'assert len(log) == 0'
}

@test "a run's directory is 0700 and its files 0600" {
	serve openai-chat < <(bash_step 'seq 100000'; echo '{"text": "ok"}')
	xgrun "modes"
	assert_success
	dir=$(find "$XG_HOME/state/runs" -mindepth 1 -maxdepth 1 -type d)
	[ -n "$dir" ]
	assert_equal "$(stat -c %a "$dir")" 700
	run find "$dir" -type f ! -perm 600
	assert_output ""
	[ -s "$dir/events.ndjson" ] && [ -s "$dir/run.json" ]
}

@test "every path under XG_HOME after a run with tools is 0700 or 0600, under umask 022 and 000" {
	for mask in 022 000; do
		# config/ and its models.json are the test's own (serve writes them).
		rm -rf "$XG_HOME"; mkdir -m 700 "$XG_HOME" "$XG_HOME/config"
		serve openai-chat < <(bash_step 'seq 100000'; echo '{"text": "ok"}')
		(
			umask "$mask"
			xg-choices set --mode normal --model fake/m >/dev/null
			mkdir -p "$BATS_TEST_TMPDIR/v$mask"
			cp -R "$XG_SRCDIR/prompts" "$BATS_TEST_TMPDIR/v$mask/p"
			xg-prompt-compile save mine "$BATS_TEST_TMPDIR/v$mask/p" >/dev/null
			env -u FAKE_PROVIDER_KEY xg-run --model fake/m "modes" </dev/null >/dev/null
		)
		[ -n "$(find "$XG_HOME/state/runs" -path '*/tool-output/*' -type f)" ] ||
			fail "the run kept no tool output to check"
		[ -n "$(find "$XG_HOME/data" -type f)" ] || fail "no variant was saved"
		[ -n "$(find "$XG_HOME/config" -name choices.json)" ] || fail "no choice was saved"
		run find "$XG_HOME" -mindepth 1 ! -path "$XG_HOME/config/models.json" \
			\( \( -type d ! -perm 700 \) -o \( -type f ! -perm 600 \) \)
		assert_output ""
	done
}

@test "a subagent's brief and a kept tool output hold no key" {
	serve openai-chat < <(
		jq -cn --arg k "$XG_TEST_KEY" '{when: "PARENT-MARK", tool_calls: [
			{id: "s1", name: "spawn_subagent", args: {brief: ("BRIEF: use " + $k + " here"), profile: "explore", name: "w"}},
			{id: "w1", name: "wait_subagents", args: {}}]}'
		echo '{"when": "BRIEF", "unless": "PARENT-MARK", "text": "child done"}'
		bash_step "seq 100000; echo $XG_TEST_KEY" | jq -c '. + {when: "PARENT-MARK"}'
		echo '{"when": "PARENT-MARK", "text": "ok"}'
	)
	xgrun "PARENT-MARK: keys"
	assert_success
	brief=$(cat "$XG_HOME"/state/runs/*/subagents/w.input.ndjson)
	[[ "$brief" == *"use <redacted> here"* ]] || fail "the brief is not redacted: ${brief//$XG_TEST_KEY/KEY}"
	kept=$(cat "$XG_HOME"/state/runs/*/tool-output/*)
	[[ "$kept" == *"<redacted>"* ]] || fail "the kept output has no <redacted>"
	refute_keys "$brief$kept" "the brief or the kept output"
}

@test "the xg-snapshot a run starts gets a copy of the environment without its keys" {
	serve openai-chat <<<'{"text": "ok"}'
	mkdir "$BATS_TEST_TMPDIR/lone"
	cp "$XG_SRCDIR/bin/xg-run" "$BATS_TEST_TMPDIR/lone/"
	printf '#!/bin/sh\nenv >"%s/snap.env"\n' "$BATS_TEST_TMPDIR" >"$BATS_TEST_TMPDIR/lone/xg-snapshot"
	chmod +x "$BATS_TEST_TMPDIR/lone/xg-snapshot"
	run_split env -u FAKE_PROVIDER_KEY DB_PASSWORD=pw-9f3 CI_SECRET=sec-4e1 \
		"$BATS_TEST_TMPDIR/lone/xg-run" --model fake/m "snap" </dev/null
	assert_success
	[ -s "$BATS_TEST_TMPDIR/snap.env" ]
	grep -q '^PATH=' "$BATS_TEST_TMPDIR/snap.env"
	refute_keys "$(cat "$BATS_TEST_TMPDIR/snap.env")" "xg-snapshot's environment"
	! grep -qE 'pw-9f3|sec-4e1|^DB_PASSWORD=|^CI_SECRET=' "$BATS_TEST_TMPDIR/snap.env"
}
