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
	{ bash_step 'env'; echo '{"text": "ok"}'; } | serve openai-chat
	xgrun "show the environment"
	assert_success
	out=$(c1_output)
	[[ "$out" == *PATH=* ]]
	refute_keys "$out" "the tool's environment"
	run grep -E '^(XG_TEST_KEY|OPENAI_API_KEY|ANTHROPIC_API_KEY|OPENROUTER_API_KEY|XG_HOME)=' <<<"$out"
	assert_failure
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
	{ bash_step 'sh probe.sh'; echo '{"text": "ok"}'; } | serve openai-chat
	xgrun "look at your parent"
	assert_success
	out=$(c1_output)
	refute_keys "$out" "xg-run's environment"
	[[ "$out" =~ ^(0|unreadable)\ xg-run$ ]] || fail "the probe saw: $out"
	if [ -f env.txt ]; then refute_keys "$(cat env.txt)" "/proc/PID/environ"; fi
}
