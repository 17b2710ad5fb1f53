#!/usr/bin/env bats
# xg-run --settings: the policies a run follows, at their defaults exactly
# (design.md B5, B10: 15 and 30 minutes, 8 retries in about four minutes,
# 320 calls, 60 minutes, 8 slices), and what XG_STALL, XG_RETRY,
# XG_WORK_SLICE, --work-slice and config.json change, each named as the
# part's "from".  Nothing is run: no provider, no request.

load lib/helper

setup() {
	unset XG_STALL XG_RETRY XG_WORK_SLICE
	mkdir -p "$XG_HOME/config"
}

settings() {
	run_split xg-run --settings "$@" </dev/null
}

# The settings record's field at a jq path.
get() {
	jq -c "select(.type == \"settings\") | $1" <<<"$output"
}

@test "the defaults are the design's numbers, each from the default" {
	settings
	assert_success
	assert_equal "$(jq -s length <<<"$output")" 1
	assert_equal "$(get .stall)" \
		'{"value":{"reply_ms":900000,"tool_ms":1800000,"grace_ms":300000,"beat_ms":30000},"from":"default"}'
	assert_equal "$(get .work_slice)" \
		'{"value":{"off":false,"max_tool_calls":320,"max_ms":3600000,"max_slices":8},"from":"default"}'
	assert_equal "$(get .compaction)" \
		'{"value":{"reserve":"max_output_tokens","reserve_floor_tokens":8192,"reserve_max_window_share":0.25,"keep_max_tokens":20000,"keep_window_share":0.1},"from":"default"}'
	assert_equal "$(get .retry.from)" '"default"'
	assert_equal "$(get '.retry.value | del(.waits_ms)')" \
		'{"attempts":8,"base_ms":2000,"cap_ms":60000,"idle_ms":300000,"connect_ms":30000,"budget_ms":240000}'
}

@test "by default 8 retries wait about four minutes in all, and the budget is four minutes" {
	settings
	assert_success
	# The waits are 2, 4, 8, 16, 32 s, then the 60 s cap three times, each
	# drawn from 80% to 120% of its backoff and never past the cap.
	least=$(python3 -c 'print(round(sum(min(0.8 * min(2000 * 2**i, 64000), 60000) for i in range(8))))')
	most=$(python3 -c 'print(round(sum(min(1.2 * min(2000 * 2**i, 64000), 60000) for i in range(8))))')
	assert_equal "$least" 203200
	assert_equal "$most" 254400
	assert_equal "$(get .retry.value.waits_ms)" "{\"least\":$least,\"most\":$most}"
	assert_equal "$(get .retry.value.budget_ms)" 240000
	# The delays the provider really draws fall within the bounds printed.
	run xg-test provider --policy
	assert_success
	total=$(jq '.delays_ms | add' <<<"$output")
	[ "$total" -ge "$least" ] && [ "$total" -le "$most" ]
}

@test "XG_STALL sets the windows it names, the rest stay, and says where they came from" {
	XG_STALL=reply=20m,beat=5s settings
	assert_success
	assert_equal "$(get .stall)" \
		'{"value":{"reply_ms":1200000,"tool_ms":1800000,"grace_ms":300000,"beat_ms":5000},"from":"XG_STALL"}'
}

@test "config.json's stall sets the windows when XG_STALL does not, and XG_STALL wins" {
	printf '{"stall": "tool=45m,grace=1m"}\n' >"$XG_HOME/config/config.json"
	settings
	assert_success
	assert_equal "$(get .stall)" \
		'{"value":{"reply_ms":900000,"tool_ms":2700000,"grace_ms":60000,"beat_ms":30000},"from":"config.json: field '"'stall'"'"}'
	XG_STALL=reply=1h settings
	assert_equal "$(get .stall)" \
		'{"value":{"reply_ms":3600000,"tool_ms":1800000,"grace_ms":300000,"beat_ms":30000},"from":"XG_STALL"}'
}

@test "a stall setting that does not parse is a notice first, and the defaults stand" {
	XG_STALL=reply=soon settings
	assert_success
	assert_equal "$(jq -r -s '.[0].type + " " + .[0].from' <<<"$output")" "notice xg-run"
	jq -e -s '.[0].text | test("XG_STALL: .reply=soon. is not a duration")' <<<"$output"
	assert_equal "$(get .stall.from)" '"default"'
	assert_equal "$(get .stall.value.reply_ms)" 900000
	printf '{"stall": 15}\n' >"$XG_HOME/config/config.json"
	settings
	jq -e -s '.[0].text | test("config.json: field .stall. is a string")' <<<"$output"
	assert_equal "$(get .stall.from)" '"default"'
}

@test "XG_RETRY changes the retry policy and its waits, or turns retries off" {
	XG_RETRY=attempts=3,base=1s,cap=3s,budget=10s settings
	assert_success
	# 1 s, 2 s, then 4 s cut to the 3 s cap: 0.8 + 1.6 + 3 and 1.2 + 2.4 + 3.
	assert_equal "$(get .retry)" \
		'{"value":{"attempts":3,"base_ms":1000,"cap_ms":3000,"idle_ms":300000,"connect_ms":30000,"budget_ms":10000,"waits_ms":{"least":5400,"most":6600}},"from":"XG_RETRY"}'
	XG_RETRY=off settings
	assert_equal "$(get '[.retry.value.attempts, .retry.value.waits_ms.most, .retry.from]')" '[0,0,"XG_RETRY"]'
	# A part that does not parse is ignored, the rest applies, as a run does.
	XG_RETRY=attempts=2,bogus=1 settings
	assert_equal "$(get .retry.value.attempts)" 2
	jq -e -s '.[0].type == "notice" and (.[0].text | test("bogus=1"))' <<<"$output"
}

@test "XG_WORK_SLICE and --work-slice set the slices, the option winning, and off is off" {
	XG_WORK_SLICE=maxToolCalls=10,maxMinutes=1.5 settings
	assert_success
	assert_equal "$(get .work_slice)" \
		'{"value":{"off":false,"max_tool_calls":10,"max_ms":90000,"max_slices":8},"from":"XG_WORK_SLICE"}'
	XG_WORK_SLICE=maxToolCalls=10 settings --work-slice maxSlices=2
	assert_equal "$(get .work_slice)" \
		'{"value":{"off":false,"max_tool_calls":320,"max_ms":3600000,"max_slices":2},"from":"--work-slice"}'
	XG_WORK_SLICE=off settings
	assert_equal "$(get '[.work_slice.value.off, .work_slice.from]')" '[true,"XG_WORK_SLICE"]'
	XG_WORK_SLICE=maxSlices=none settings
	assert_equal "$(get .work_slice.from)" '"default"'
	assert_equal "$(get .work_slice.value.max_slices)" 8
	jq -e -s '.[0].type == "notice" and (.[0].text | test("^XG_WORK_SLICE: maxSlices"))' <<<"$output"
}

@test "--settings runs nothing: no provider, no model, no input read, no run recorded" {
	# No catalog, no key: a run would fail at once.  The input is not JSON:
	# a run would refuse it.
	run_split xg-run --settings <<<'not a record'
	assert_success
	assert_equal "$(jq -r .type <<<"$output")" settings
	[ ! -e "$XG_HOME/state/runs" ]
	[ ! -e "$XG_HOME/state/conversations" ]
	run_split xg-run --settings 'a request'
	assert_failure 2
	run_split xg-run --settings --compact --conversation c1
	assert_failure 2
}

@test "on a terminal the settings are a short table, durations as a person writes them" {
	run python3 "$XG_SRCDIR/tests/lib/pty_run.py" env XG_STALL=tool=45m xg-run --settings
	assert_success
	assert_line --regexp '^stall +reply 15m, tool 45m, grace 5m, beat 30s +XG_STALL'
	assert_line --regexp '^retry +8 retries, base 2s, cap 1m, idle 5m, connect 30s, budget 4m +default'
	assert_line --regexp '^work slice +320 tool calls or 1h, 8 slices +default'
	assert_line --regexp '^compaction +reserve the output limit, at least 8192, at most 1/4 window +default'
}
