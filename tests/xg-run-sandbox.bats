#!/usr/bin/env bats
# The sandbox of bash (man 1 xg-run, Sandbox): --sandbox runs the model's
# commands under bubblewrap with the system read-only, the workspace
# writable, no network unless --sandbox=net, a PID namespace of their own,
# and xg's configuration and state out of sight; plan mode's bash runs in
# it with the workspace read-only; a sandbox asked for that cannot run is
# exit 78.  Against the loopback fake provider.  The tests that need a
# working bwrap skip, saying why, where it cannot run (CI installs it:
# make deps).

load lib/helper
load lib/fake-provider
load lib/xg-run

setup() {
	xg_run_setup
	unset XG_SANDBOX
}

# What a test made outside its own folder, removed whatever its end.
teardown() {
	fake_provider_stop
	[ -z "${listener:-}" ] || kill $listener 2>/dev/null || true
	[ -z "${made:-}" ] || rm -rf $made
}

# Skips the test unless bwrap can make its namespaces here.
need_bwrap() {
	command -v bwrap >/dev/null ||
		skip "bubblewrap is not installed (apt-get install bubblewrap)"
	bwrap --die-with-parent --unshare-pid --unshare-net --ro-bind / / --dev /dev \
		--proc /proc --tmpfs /tmp -- /bin/sh -c : 2>/dev/null ||
		skip "bwrap cannot make its namespaces here (user namespaces are off)"
}

# bash_run COMMAND XG-RUN-OPTION...: the model runs COMMAND with bash and
# then ends; $out is what the command printed.
bash_run() {
	local c=$1
	shift
	serve openai-chat < <(jq -cn --arg c "$c" \
		'{tool_calls: [{id: "c1", name: "bash", args: {command: $c}}]}'; echo '{"text": "ok"}')
	xgrun "$@" "run it"
	out=$(recs tool_result | jq -r 'select(.id == "c1") | .output')
}

@test "--sandbox: the system is read-only and the workspace writable" {
	need_bwrap
	bash_run 'touch /usr/xg-sandbox-probe || echo "no /usr"; echo made >made.txt; echo wrote' --sandbox
	assert_success
	[[ "$out" == *"Read-only file system"* ]] || fail "the write to /usr was not refused: $out"
	[[ "$out" == *"no /usr"* ]]
	[ ! -e /usr/xg-sandbox-probe ]
	[ "$(cat made.txt)" = made ]
}

@test "--sandbox: /tmp is the command's own" {
	need_bwrap
	echo outside >"$BATS_TEST_TMPDIR/../xg-sandbox-tmp-$$"
	bash_run "ls /tmp; cat $BATS_TEST_TMPDIR/../xg-sandbox-tmp-$$ || echo unseen; echo x >/tmp/mine" --sandbox
	rm -f "$BATS_TEST_TMPDIR/../xg-sandbox-tmp-$$"
	assert_success
	[[ "$out" == *unseen* ]] || fail "the outer /tmp was seen: $out"
}

# Connects to the fake provider's port from inside the command (FAKE_PORT
# is in its environment): "connected", or the error.
CONNECT='python3 -c "import os, socket; socket.create_connection((\"127.0.0.1\", int(os.environ[\"FAKE_PORT\"])), 5); print(\"connected\")" 2>&1 | tail -n 1'

@test "--sandbox: no network; --sandbox=net has it" {
	need_bwrap
	bash_run "$CONNECT"
	assert_success
	[ "$out" = connected ] || fail "the probe cannot connect even outside the sandbox: $out"
	bash_run "$CONNECT" --sandbox
	assert_success
	[[ "$out" == *"Errno"* ]] || fail "the sandboxed command reached the network: $out"
	bash_run "$CONNECT" --sandbox=net
	assert_success
	[ "$out" = connected ]
}

@test "--sandbox: the run's processes are out of sight in /proc" {
	need_bwrap
	bash_run 'for f in /proc/[0-9]*/comm; do cat "$f"; done | sort -u; echo "pids $(ls -d /proc/[0-9]* | wc -l)"; echo "parent $PPID"' --sandbox
	assert_success
	[[ "$out" != *xg-run* ]] || fail "xg-run is visible: $out"
	[[ "$out" == *"parent 1"* ]] || fail "the shell's parent is not the namespace's first process: $out"
	pids=$(sed -n 's/^pids //p' <<<"$out")
	[ "$pids" -le 6 ] || fail "$pids processes are visible"
}

@test "--sandbox: xg's configuration and state directories are empty" {
	need_bwrap
	mkdir -p "$XG_HOME/config"
	echo '{"key": "probe"}' >"$XG_HOME/config/secret-probe.json"
	bash_run "find '$XG_HOME/config' '$XG_HOME/state' -mindepth 1 | wc -l; cat '$XG_HOME/config/models.json' || echo hidden" --sandbox
	assert_success
	[ "$(head -n 1 <<<"$out")" = 0 ] || fail "the directories show files: $out"
	[[ "$out" == *hidden* ]]
	[[ "$out" != *providers* ]]
}

@test "--sandbox: the person's skills are there to read, read-only, and nothing else of the configuration" {
	need_bwrap
	mkdir -p "$XG_HOME/config/skills/release"
	printf -- '---\nname: release\ndescription: how to release\n---\nRun make dist.\n' \
		>"$XG_HOME/config/skills/release/SKILL.md"
	echo '{"key": "probe"}' >"$XG_HOME/config/secret-probe.json"
	bash_run "cat '$XG_HOME/config/skills/release/SKILL.md'; ls '$XG_HOME/config'; cat '$XG_HOME/config/secret-probe.json' 2>/dev/null || echo hidden; touch '$XG_HOME/config/skills/x' 2>/dev/null || echo read-only" --sandbox
	assert_success
	[[ "$out" == *"Run make dist."* ]] || fail "the skill is not there: $out"
	[[ "$out" == *hidden* && "$out" == *read-only* ]] || fail "$out"
	[[ "$out" != *'"key"'* ]]
	[ ! -e "$XG_HOME/config/skills/x" ]
}

@test "XG_SANDBOX and config.json's sandbox turn it on; --sandbox=off turns it off" {
	need_bwrap
	XG_SANDBOX=on bash_run 'touch /usr/xg-sandbox-probe 2>&1 || true'
	assert_success
	[[ "$out" == *"Read-only file system"* ]]
	echo '{"sandbox": "on"}' >"$XG_HOME/config/config.json"
	bash_run "$CONNECT"
	assert_success
	[[ "$out" == *Errno* ]] || fail "config.json's sandbox was not on: $out"
	bash_run 'echo "$(ls /proc | grep -c "^[0-9]")"' --sandbox=off
	assert_success
	[ "$out" -gt 6 ] || fail "--sandbox=off still ran in the sandbox"
}

@test "a sandbox setting that is not on, net or off is exit 78 naming where it came from" {
	serve openai-chat </dev/null
	XG_SANDBOX=yes xgrun "go"
	assert_failure 78
	[[ "$stderr" == *"XG_SANDBOX: 'yes' is not a sandbox"* ]]
	echo '{"sandbox": true}' >"$XG_HOME/config/config.json"
	xgrun "go"
	assert_failure 78
	[[ "$stderr" == *"config.json: field 'sandbox' must be"* ]]
	run_split xg-run --model fake/m --sandbox=yes "go"
	assert_failure 2
	[[ "$stderr" == *"--sandbox takes on, net or off, not 'yes'"* ]]
	fake_log 'assert len(log) == 0'
}

@test "plan mode's bash cannot write the workspace" {
	need_bwrap
	echo keep >p.txt
	bash_run 'echo lost >p.txt; touch new.txt; echo "rc $?"' --mode plan
	assert_success
	[ "$(cat p.txt)" = keep ]
	[ ! -e new.txt ]
	[[ "$out" == *"Read-only file system"* ]]
	[[ "$out" == *"rc 1"* ]]
}

@test "xg plan's bash cannot write the workspace either" {
	need_bwrap
	echo keep >p.txt
	serve openai-chat < <(echo '{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "echo lost >p.txt; touch new.txt"}}]}'; echo '{"text": "<proposed_plan>\n1. x\n</proposed_plan>"}')
	run_split xg plan --json --model fake/m "plan it"
	assert_success
	[ "$(cat p.txt)" = keep ]
	[ ! -e new.txt ]
	[[ "$(recs tool_result | jq -r .output)" == *"Read-only file system"* ]]
}

@test "--sandbox without bwrap is exit 78 saying what to install, and nothing is run" {
	mkdir nobwrap
	ln -s "$(command -v python3)" nobwrap/python3
	serve openai-chat < <(echo '{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "echo ran >ran.txt"}}]}'; echo '{"text": "ok"}')
	run_split env PATH="$PWD/nobwrap" "$XG_SRCDIR/bin/xg-run" --model fake/m --sandbox "go" </dev/null
	assert_failure 78
	[[ "$stderr" == *"--sandbox asks for the sandbox, which cannot run"* ]]
	[[ "$stderr" == *"apt-get install bubblewrap"* ]]
	[ "$(end_field .status)" = failed ]
	[ ! -e ran.txt ]
	fake_log 'assert len(log) == 0'
}

@test "a bwrap that cannot make its namespaces is exit 78 saying what to enable" {
	mkdir fakebin
	printf '#!/bin/sh\necho "bwrap: No permissions to creating new namespace" >&2\nexit 1\n' >fakebin/bwrap
	chmod +x fakebin/bwrap
	serve openai-chat </dev/null
	run_split env PATH="$PWD/fakebin:$PATH" xg-run --model fake/m --sandbox=net "go" </dev/null
	assert_failure 78
	[[ "$stderr" == *"cannot make its namespaces here: bwrap: No permissions"* ]]
	[[ "$stderr" == *"kernel.unprivileged_userns_clone=1"* ]]
}

@test "plan mode without bwrap runs bash unsandboxed with a notice; --sandbox there is 78" {
	mkdir fakebin
	printf '#!/bin/sh\nexit 1\n' >fakebin/bwrap
	chmod +x fakebin/bwrap
	serve openai-chat < <(echo '{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "echo hi"}}]}'; echo '{"text": "<proposed_plan>\n1. x\n</proposed_plan>"}')
	run_split env PATH="$PWD/fakebin:$PATH" xg-run --model fake/m --mode plan "go" </dev/null
	assert_success
	[[ "$(recs notice | jq -r .text)" == *"plan mode: bash runs without the sandbox"* ]]
	[ "$(recs tool_result | jq -r .output)" = hi ]
	run_split env PATH="$PWD/fakebin:$PATH" xg-run --model fake/m --mode plan --sandbox "go" </dev/null
	assert_failure 78
}

@test "an explore run gets bash in the sandbox, with the workspace read-only, and says so to its parent" {
	need_bwrap
	echo "a note" >note.txt
	bash_run 'cat note.txt; touch made-it && echo wrote' --profile explore
	assert_success
	[ "$out" = "$(printf 'a note\ntouch: cannot touch '"'"'made-it'"'"': Read-only file system')" ] ||
		[[ "$out" == "a note"*"Read-only file system"* ]]
	[ ! -e made-it ]
	assert_equal "$(fake_log 'print(sorted(t["function"]["name"] for t in log[0]["body"]["tools"]))')" "['bash', 'read']"
	# The parent is told the child's tools as the child will have them.
	serve <<-'EOF'
	{"when": "PARENT-MARK", "tool_calls": [{"id": "s1", "name": "spawn_subagent", "args": {"brief": "BRIEF-E: look", "profile": "explore"}}, {"id": "w1", "name": "wait_subagents", "args": {}}]}
	{"when": "BRIEF-E", "unless": "PARENT-MARK", "text": "E-DONE"}
	{"when": "PARENT-MARK", "text": "ok"}
	EOF
	xgrun "PARENT-MARK: look around"
	assert_success
	recs tool_result | jq -s -e 'map(select(.id == "s1"))[0].output | test("Read-only: .* with the tools: bash, read\\. Its bash runs in a sandbox")'
}

# The processes running "sleep 3171", from /proc.
sleepers() {
	local pid args
	while read -r pid args; do
		[ "$args" = "sleep 3171" ] && echo "$pid"
	done < <(procs)
	return 0
}

@test "a sandboxed command dies with its run" {
	need_bwrap
	serve openai-chat < <(echo '{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "sleep 3171 & echo started >started; wait"}}]}'; echo '{"text": "ok"}')
	xg-run --model fake/m --sandbox "go" </dev/null >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 600); do [ -s started ] && break; sleep 0.1; done
	[ -s started ]
	kill -9 "$pid"
	wait "$pid" || true
	for i in $(seq 100); do
		left=$(sleepers)
		[ -z "$left" ] && break
		sleep 0.1
	done
	[ -z "$left" ] || fail "left running: $left"
}

@test "xg run and xg plan pass --sandbox on to xg-run" {
	run xg run --dry-run --sandbox=net "do it"
	assert_success
	[[ "$output" == *"| xg-run '--sandbox=net'" ]] || fail "the pipeline does not pass it: $output"
	run xg plan --dry-run --sandbox "plan it"
	assert_success
	[[ "$output" == *"| xg-run '--sandbox=on'" ]] || fail "the pipeline does not pass it: $output"
	run xg run --dry-run "do it"
	assert_success
	[[ "$output" != *--sandbox* ]]
}

# Each escape a root shell would try, as one command: STEP ok or STEP
# refused, one line each.
escapes() {
	local ws=$1 outside=$2
	cat <<-SH
	try() { n=\$1; shift; if "\$@" >/dev/null 2>&1; then echo "\$n ok"; else echo "\$n refused"; fi; }
	try umount umount '$XG_HOME/config'
	try auth cat '$XG_HOME/config/accounts/default/auth.json'
	try remount mount -o remount,rw /
	try outside touch '$outside/escaped'
	try remount-ws mount -o remount,rw '$ws'
	try bind mount --bind '$outside' '$ws/in'
	try mknod mknod '$ws/blk' b 8 0
	try sysctl sh -c 'cat /proc/sys/vm/swappiness > /proc/sys/vm/swappiness'
	try sys sh -c 'echo 1 > /sys/kernel/mm/ksm/run'
	try userns unshare -Ur sh -c 'mount -o remount,rw /'
	try caps sh -c 'grep -q "^CapEff:.*[1-9a-f]" /proc/self/status'
	SH
}

@test "as root, the sandbox keeps every escape out: mounts, devices, the kernel's settings, the keys" {
	need_bwrap
	outside=$(mktemp -d /var/tmp/xg-escape-XXXXXX)
	made=$outside
	mkdir -p "$XG_HOME/config/accounts/default" in
	printf '{"openai": {"key": "%s"}}\n' "$XG_TEST_KEY" >"$XG_HOME/config/accounts/default/auth.json"
	chmod 600 "$XG_HOME/config/accounts/default/auth.json"
	for mode in normal plan; do
		bash_run "$(escapes "$PWD" "$outside")" --sandbox --mode "$mode"
		assert_success
		for step in umount auth remount outside remount-ws bind mknod sysctl sys userns caps; do
			[[ "$out" == *"$step refused"* ]] ||
				fail "as uid $(id -u), in $mode mode, '$step' was not refused: $out"
		done
		[[ "$out" != *"$XG_TEST_KEY"* ]] || fail "the key was read"
		[ ! -e "$outside/escaped" ] && [ ! -e blk ] && [ -z "$(ls in)" ]
	done
}

# listen PATH: a unix socket listening at PATH, in the background, until
# the test ends ($listener its process).
listen() {
	python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
open(sys.argv[1] + ".up", "w").close(); time.sleep(60)' "$1" &
	listener="$listener $!"
	for _ in $(seq 100); do [ -e "$1.up" ] && return 0; sleep 0.05; done
	fail "no socket at $1"
}

# A command that tries each socket given: NAME connected, or NAME refused.
connect_each() {
	local p c=""
	for p in "$@"; do
		c="$c python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' '$p' 2>/dev/null && echo '$p connected' || echo '$p refused';"
	done
	printf '%s' "$c"
}

@test "without the network no host socket is in reach: /run, XDG_RUNTIME_DIR, and any other place" {
	need_bwrap
	[ -w /run ] || skip "cannot make a socket under /run as uid $(id -u)"
	run_dir=$(mktemp -d /run/xg-sock-XXXXXX)
	other=$(mktemp -d /var/tmp/xg-sock-XXXXXX)
	runtime=$(mktemp -d /var/tmp/xg-rt-XXXXXX)
	made="$run_dir $other $runtime"
	listener=""
	listen "$run_dir/daemon.sock"
	listen "$other/agent.sock"
	listen "$runtime/bus"
	c=$(connect_each "$run_dir/daemon.sock" "$other/agent.sock" "$runtime/bus")
	XDG_RUNTIME_DIR=$runtime bash_run "$c"
	assert_success
	[ "$(grep -c connected <<<"$out")" = 3 ] || fail "the sockets cannot be reached outside the sandbox: $out"
	XDG_RUNTIME_DIR=$runtime bash_run "$c" --sandbox
	assert_success
	[ "$(grep -c refused <<<"$out")" = 3 ] || fail "a host socket was reached: $out"
	XDG_RUNTIME_DIR=$runtime bash_run "$c" --sandbox=net
	assert_success
	[ "$(grep -c connected <<<"$out")" = 3 ] || fail "with the network the sockets are not left alone: $out"
}

# wrap_bwrap SCRIPT: a bwrap first in PATH that runs the shell text
# SCRIPT (with "$@" the arguments xg gave) before the real one, each time
# xg starts a command under it (not its probe); $sandboxed counts those.
wrap_bwrap() {
	local real
	real=$(command -v bwrap)
	mkdir -p "$BATS_TEST_TMPDIR/wrap"
	sandboxed=$BATS_TEST_TMPDIR/sandboxed
	: >"$sandboxed"
	cat >"$BATS_TEST_TMPDIR/wrap/bwrap" <<-EOF
	#!/bin/sh
	case " \$* " in *" --json-status-fd "*)
		echo start >>'$sandboxed'
		$1 ;;
	esac
	exec '$real' "\$@"
	EOF
	chmod +x "$BATS_TEST_TMPDIR/wrap/bwrap"
}

@test "a socket gone before bwrap covers it: the sandbox is set up again, and the command runs once" {
	need_bwrap
	dir=$(mktemp -d /var/tmp/xg-gone-XXXXXX)
	made=$dir
	listener=""
	listen "$dir/s.sock"
	# Between xg's listing and bwrap's mount, as a socket that closes.
	wrap_bwrap "for a; do [ \"\$a\" != '$dir/s.sock' ] || rm -f '$dir/s.sock'; done"
	PATH="$BATS_TEST_TMPDIR/wrap:$PATH" bash_run "echo ran >>ran.txt; echo done" --sandbox
	assert_success
	[ "$(recs tool_result | jq -c '[.ok, .output]')" = '[true,"done"]' ] ||
		fail "the command did not run in a sandbox set up again: $(recs tool_result)"
	[ "$(cat ran.txt)" = ran ]
	[ "$(wc -l <"$sandboxed")" = 2 ]
}

@test "a sandbox that cannot be set up runs nothing, says bwrap's error, and is tried three times" {
	need_bwrap
	wrap_bwrap 'set -- --ro-bind /nonexistent-xg /nonexistent-xg "$@"'
	PATH="$BATS_TEST_TMPDIR/wrap:$PATH" bash_run "echo ran >>ran.txt" --sandbox
	assert_success
	[ ! -e ran.txt ]
	[ "$(wc -l <"$sandboxed")" = 3 ]
	recs tool_result | jq -e '.ok == false and (has("exit_code") | not)' >/dev/null ||
		fail "a command that never ran has a result as if it had: $(recs tool_result)"
	[[ "$out" == "bash: not run: the sandbox could not be set up: bwrap: "*"/nonexistent-xg"* ]] ||
		fail "$out"
	[ "$(grep -c bwrap <<<"$out")" = 1 ] || fail "bwrap's error is said more than once: $out"
	# A command that ran and exited 1, as bwrap does when it fails, is run once.
	wrap_bwrap :
	PATH="$BATS_TEST_TMPDIR/wrap:$PATH" bash_run "echo ran >>ran.txt; exit 1" --sandbox
	assert_success
	[ "$(cat ran.txt)" = ran ]
	[ "$(wc -l <"$sandboxed")" = 1 ]
	[ "$(recs tool_result | jq -c '[.ok, .exit_code]')" = '[false,1]' ]
}

@test "the writable folders: XG_SANDBOX_WRITABLE and config.json's sandbox.writable, in run_start" {
	need_bwrap
	cache=$(mktemp -d /var/tmp/xg-cache-XXXXXX)
	made=$cache
	mkdir -p "$BATS_TEST_TMPDIR/home/.npm"
	bash_run "touch '$cache/a' 2>&1; echo rc \$?" --sandbox
	assert_success
	[[ "$out" == *"Read-only file system"* ]] || fail "the folder was writable without being named: $out"
	[ "$(recs run_start | jq -c .sandbox)" = '{"mode":"on","read_only":false,"writable":[]}' ]
	XG_SANDBOX_WRITABLE="$cache:/nonexistent-xg" bash_run "touch '$cache/b'; echo rc \$?" --sandbox
	assert_success
	[ -e "$cache/b" ] || fail "XG_SANDBOX_WRITABLE's folder was not writable: $out"
	[ "$(recs run_start | jq -c .sandbox.writable)" = "[\"$cache\"]" ]
	[[ "$(recs notice | jq -r .text)" == *"leaves out the writable folder '/nonexistent-xg' (XG_SANDBOX_WRITABLE)"* ]]
	echo '{"sandbox": {"mode": "on", "writable": ["~/.npm"]}}' >"$XG_HOME/config/config.json"
	HOME=$BATS_TEST_TMPDIR/home bash_run "touch ~/.npm/c 2>&1 || touch $BATS_TEST_TMPDIR/home/.npm/c; echo rc \$?"
	assert_success
	[ -e "$BATS_TEST_TMPDIR/home/.npm/c" ] || fail "sandbox.writable's folder was not writable: $out"
	[ "$(recs run_start | jq -r .sandbox.mode)" = on ]
	echo '{"sandbox": {"mode": "on", "writable": ["cache"]}}' >"$XG_HOME/config/config.json"
	bash_run "true"
	assert_failure 78
	[[ "$stderr" == *"config.json: field 'sandbox.writable': 'cache' is not an absolute path"* ]]
	bash_run "true" --sandbox=off
	assert_success
	[ "$(recs run_start | jq -c .sandbox)" = '{"mode":"off","read_only":false,"writable":[]}' ]
}
