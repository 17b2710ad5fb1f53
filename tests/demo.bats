#!/usr/bin/env bats
# The demo, share/xg/demo/run (make demo): a scripted session on the loopback
# model that shows what a person sees, passes only when every step did what
# it should, and leaves no temporary directory and no process behind.

load lib/helper

setup() {
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$TMPDIR"
	DEMO="$XG_SRCDIR/share/xg/demo"
}

# Prints what a demo left: its temporary directories, and the command line
# of any process still using one (the scripted model's log is in it).
left_behind() {
	local pid args
	ls -A "$TMPDIR"
	while read -r pid args; do
		[[ $args != *"$TMPDIR/xg-demo"* ]] || echo "$args"
	done < <(procs)
}

# A copy of the shipped data whose demo has script.ndjson changed: line N
# replaced by JSON, or JSON added at the end when N is "end".  The demo is
# then "$DEMO".
demo_with() {
	cp -RL "$XG_SRCDIR/share/xg" "$BATS_TEST_TMPDIR/share"
	DEMO="$BATS_TEST_TMPDIR/share/demo"
	python3 - "$DEMO/script.ndjson" "$1" "$2" <<-'EOF'
	import sys
	path, n, step = sys.argv[1:]
	lines = open(path).read().splitlines()
	if n == "end":
	    lines.append(step)
	else:
	    lines[int(n) - 1] = step
	open(path, "w").write("\n".join(lines) + "\n")
	EOF
}

@test "the demo runs, plans and resumes a session on a project, and says each step passed" {
	SECONDS=0
	# fd 3 is bats' own: nothing the demo starts may keep it open.
	run_split sh "$DEMO/run" 3>&-
	took=$SECONDS
	[ "$status" -eq 0 ] || fail "the demo exited $status: $stderr"
	assert_equal "$stderr" ""
	# The project's test, before, after the run and after the resume.
	assert_line "3 passed, 5 failed"
	assert_line "8 passed, 0 failed"
	assert_line "12 passed, 0 failed"
	# The run, as xg renders it: the tools, the reply, how it ended.
	assert_line "$ xg run 'make the failing test pass'"
	assert_line --regexp "^! bash: sh test.sh \(failed, [0-9.]+ m?s\): FAIL: roman.sh 4 printed 'IIII', not 'IV'"
	assert_line --regexp '^> read: roman.sh \(ok, '
	assert_line --regexp '^> edit: roman.sh \(ok, '
	assert_line "The test passes now: 8 passed, 0 failed."
	assert_line --regexp '^xg: completed; 4 tool calls, '
	# The plan, and the resume that goes on with its conversation.
	assert_line "<proposed_plan>"
	assert_line "plan: plan_ready"
	assert_line "todo: 3 of 3 done"
	assert_line --regexp '^xg: completed; 7 tool calls, '
	# The session's runs, before the history shows the first again.
	run_conv=$(sed '/^\$ xg-log$/,$d' <<<"$output" | sed -n 's/^xg: completed; .*; conversation //p')
	assert_equal "$(wc -l <<<"$run_conv")" 3
	assert_equal "$(sed -n 2p <<<"$run_conv")" "$(sed -n 3p <<<"$run_conv")"
	[ "$(sed -n 1p <<<"$run_conv")" != "$(sed -n 2p <<<"$run_conv")" ] || fail "the plan went on with the run's conversation"
	assert_line --regexp '^ 2 files changed, '
	# The history the runs left: three rows, the first run again, the sums.
	assert_line "$ xg-log"
	assert_equal "$(grep -cE '^[0-9a-f]{8}  [0-9-]{10} [0-9:]{5}  completed +demo/scripted ' <<<"$output")" 3
	assert_line --regexp '^[0-9a-f]{8}  .*  make the failing test pass$'
	assert_line --regexp '^\$ xg-log show [0-9a-f]{8}$'
	shown=$(sed -n '/^\$ xg-log show /,/^# what the runs used/p' <<<"$output")
	assert_regex "$shown" $'\n> read: roman.sh \\(ok, '
	assert_regex "$shown" $'\nxg: completed; 4 tool calls, '
	assert_line "$ xg-log usage --by model"
	assert_line --regexp '^demo/scripted +3 +63\.7k +54\.5k +4180 +85\.6% +\$0\.0601$'
	assert_line "demo: every step did what it should (11 requests to the scripted model)."
	# Not on a terminal: rendered through script(1), without colour or CRs.
	refute_output --partial $'\r'
	refute_output --partial $'\033'
	assert_equal "$(left_behind)" ""
	if [ ! -d "$XG_SRCDIR/tests/vgbin" ]; then
		[ "$took" -le 15 ] || fail "the demo took $took s"
	fi
}

@test "on a terminal, the demo shows xg's own rendering" {
	run script -qec "sh '$DEMO/run'" /dev/null 3>&-
	assert_success
	run tr -d '\r' <<<"$output"
	assert_line "$ xg plan 'roman.sh should refuse what it cannot write'"
	assert_line "plan: plan_ready"
	assert_line --regexp '^> bash: sh test.sh \(ok, '
	assert_line --partial "demo: every step did what it should"
	assert_equal "$(left_behind)" ""
}

@test "the demo fails, naming the step, when a step does not do what it should" {
	while IFS='|' read -r n step want; do
		demo_with "$n" "$step"
		run_split sh "$DEMO/run" 3>&-
		assert_equal "$status" 1
		assert_equal "$stderr" "demo: FAILED: $want"
		refute_output --partial "every step did what it should"
		assert_equal "$(left_behind)" ""
		rm -rf "$BATS_TEST_TMPDIR/share"
	done <<-'EOF'
	2|{"text": "It looks right to me."}|the test still fails after xg run
	6|{"text": "I would add a check."}|xg plan gave no plan
	end|{"text": "One more."}|xg asked the scripted model 11 times; it has 12 replies
	EOF
}

@test "the demo says python3 is what its scripted model needs, when it is missing" {
	mkdir -p nopy
	for p in sh dirname xg xg-fake-provider; do ln -s "$(command -v "$p")" "nopy/$p"; done
	run_split env PATH="$PWD/nopy" sh "$DEMO/run"
	assert_equal "$status" 1
	assert_equal "$stderr" "demo: FAILED: the scripted model (xg-fake-provider) needs python3 (on Debian: apt-get install python3)"
	assert_equal "$(left_behind)" ""
}
