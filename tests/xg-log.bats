#!/usr/bin/env bats
# xg-log: the runs index every run appends to (also a failed run's, and a
# killed run's, found by its live marker), the list and its filters, show
# against the terminal's rendering, diff, usage with and without prices,
# conversations, prune.

load lib/helper
load lib/fake-provider

STATE() { printf '%s' "$XG_HOME/state"; }

setup() {
	exec </dev/null
	export XG_TEST_KEY=k
}

teardown() {
	fake_provider_stop
	[ -z "${RUNPID:-}" ] || kill -KILL "$RUNPID" 2>/dev/null || true
}

# A git workspace in ./ws with one commit; the tests run from it.
workspace() {
	mkdir -p ws && cd ws || return 1
	git init -q && echo a >a && git add a &&
		git -c user.name=t -c user.email=t@t commit -qm a
}

# price JSON: the catalog's model fake/m gets that price.
priced() {
	python3 - "$XG_HOME/config/models.json" "$1" <<-'EOF'
	import json, sys
	path, price = sys.argv[1:]
	c = json.load(open(path))
	c["providers"]["fake"]["models"]["m"]["price"] = json.loads(price)
	json.dump(c, open(path, "w"))
	EOF
}

# index: the index's lines, one JSON a line.
index() { cat "$(STATE)/runs.ndjson"; }

@test "every run that ends appends one line to the index, with what it ran and what it cost" {
	fake_provider_start <<-'EOF'
	{"text": "Hello", "usage": {"input": 1000, "cached_input": 800, "output": 50}}
	EOF
	fake_catalog openai-chat
	priced '{"input": 2, "cached_input": 0.5, "output": 10}'
	workspace
	run_split xg-run --model fake/m $'say hello\nand more'
	assert_success
	[ "$(index | wc -l)" -eq 1 ] || fail "$(index)"
	run jq -c '[.type, .status, .exit, .model, .workspace, .request, .usage, .tool_calls, .parent, .variant != null, .snapshot != null, .conversation != null]' "$(STATE)/runs.ndjson"
	assert_output '["run","completed",0,"fake/m","'"$PWD"'","say hello",{"input":1000,"cached_input":800,"output":50},0,null,true,true,true]'
	# 200 of input at 2, 800 cached at 0.5, 50 of output at 10, per million.
	assert_equal "$(jq .cost "$(STATE)/runs.ndjson")" 0.0013
	id=$(jq -r .run "$(STATE)/runs.ndjson")
	assert_equal "$(jq .cost "$(STATE)/runs/$id/run.json")" 0.0013
	assert_equal "$(grep '"type":"run_end"' "$(STATE)/runs/$id/events.ndjson" | jq .cost)" 0.0013
	# The run's live marker is gone once its line is in.
	assert_equal "$(ls -A "$(STATE)/runs.live")" ""
}

@test "the key never reaches the index, run.json or xg-log's output" {
	fake_provider_start <<-'EOF'
	{"text": "ok"}
	EOF
	fake_catalog openai-chat
	export XG_TEST_KEY=sk-test-0123456789abcdef
	workspace
	xg-run --model fake/m 'is sk-test-0123456789abcdef a key?' >/dev/null
	assert_equal "$(jq -r .request "$(STATE)/runs.ndjson" | grep -c 0123456789abcdef)" 0
	run grep -rl 0123456789abcdef "$(STATE)/runs.ndjson" "$(STATE)"/runs/*/run.json
	assert_output ""
	run xg-log
	refute_output --partial 0123456789abcdef
}

@test "a run that fails before its first request has its line too, and no cost" {
	workspace
	run_split xg-run --model nosuch/x 'never sent'
	assert_equal "$status" 78
	run jq -c '[.status, .exit, .request, .cost, .usage.input]' "$(STATE)/runs.ndjson"
	assert_output '["failed",78,"never sent",null,0]'
	run jq -r .reason "$(STATE)/runs.ndjson"
	assert_output --partial "'nosuch/x' is not offered"
}

@test "a run killed with SIGKILL is listed as running, then found and marked killed once" {
	fake_provider_start <<-'EOF'
	{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "touch started; sleep 60"}}], "usage": {"input": 70, "output": 9}}
	EOF
	fake_catalog openai-chat
	workspace
	xg-run --model fake/m 'wait a while' >/dev/null 2>&1 3>&- &
	RUNPID=$!
	for i in $(seq 1 200); do [ -e started ] && break; sleep 0.05; done
	[ -e started ] || fail "the tool never started"
	run xg-log
	assert_success
	assert_output --regexp '^[0-9a-f]{8}  .* running +fake/m '
	id=$(ls "$(STATE)/runs.live")
	run xg-log show "$id"
	assert_line "xg-log: the run goes on"
	kill -KILL "$RUNPID"
	wait "$RUNPID" || true
	RUNPID=
	[ ! -e "$(STATE)/runs.ndjson" ] || fail "a killed run wrote its own line"
	run_split xg-log
	assert_success
	assert_output --regexp '^[0-9a-f]{8}  .* killed +fake/m +70/9  .*  wait a while$'
	run jq -c '[.status, .tool_calls, .usage.input, .usage.output, .request, .ms > 0]' "$(STATE)/runs.ndjson"
	assert_output '["killed",1,70,9,"wait a while",true]'
	assert_equal "$(ls -A "$(STATE)/runs.live")" ""
	xg-log >/dev/null
	assert_equal "$(index | wc -l)" 1
	run xg-log show "$id"
	assert_line "xg-log: the run was killed before its end"
	assert_line "! bash: touch started; sleep 60 (no result)"
}

@test "a run killed while its first request waits keeps its model, workspace, conversation and request" {
	# The reply's headers come, then nothing: no event reaches the run, so
	# it never writes run_start or a run.json before it is killed.
	fake_provider_start <<-'EOF'
	{"text": "too late", "stall": 60, "stall_after": 0}
	EOF
	fake_catalog openai-chat
	workspace
	xg-run --model fake/m --conversation c-killed $'wait for me\nand more' >/dev/null 2>&1 3>&- &
	RUNPID=$!
	for i in $(seq 1 200); do [ -s "$FAKE_LOG" ] && break; sleep 0.05; done
	[ -s "$FAKE_LOG" ] || fail "the request never reached the server"
	id=$(ls "$(STATE)/runs.live")
	[ ! -e "$(STATE)/runs/$id/run.json" ] || fail "the run wrote run.json before its first event"
	run xg-log --json
	assert_success
	run jq -c '[.status, .model, .workspace, .conversation, .request]' <<<"$output"
	assert_output '["running","fake/m","'"$PWD"'","c-killed","wait for me"]'
	kill -KILL "$RUNPID"
	wait "$RUNPID" || true
	RUNPID=
	run xg-log --json
	assert_success
	run jq -c '[.run, .status, .model, .workspace, .conversation, .request, .mode, .started != null]' <<<"$output"
	assert_output '["'"$id"'","killed","fake/m","'"$PWD"'","c-killed","wait for me","normal",true]'
	assert_equal "$(index | wc -l)" 1
	assert_equal "$(ls -A "$(STATE)/runs.live")" ""
}

@test "a run whose index lock is held too long warns, and xg-log adds its line later" {
	fake_provider_start <<-'EOF'
	{"text": "ok"}
	EOF
	fake_catalog openai-chat
	workspace
	mkdir -p "$(STATE)"
	hold_lock "$(STATE)/runs.lock" 5
	XG_LOCK_TIMEOUT=200 run_split xg-run --model fake/m 'locked out'
	assert_success
	assert_regex "$stderr" "not in the runs index yet"
	release_lock
	run xg-log --json
	assert_success
	run jq -c '[.status, .request]' <<<"$output"
	assert_output '["completed","locked out"]'
}

# Three runs of index lines, without running anything: the list's queries.
three_runs() {
	mkdir -p "$(STATE)" here
	here=$(cd here && pwd)
	cat >"$(STATE)/runs.ndjson" <<-EOF
	{"type":"run","run":"20261101-100000-aaaaaaaa","conversation":"c-1","workspace":"/elsewhere","started":"2026-11-01T10:00:00.000Z","status":"completed","model":"fake/a","usage":{"input":100,"cached_input":50,"output":10},"cost":0.5,"request":"first"}
	{"type":"run","run":"20261110-100000-bbbbbbbb","conversation":"c-2","workspace":"$here","started":"2026-11-10T10:00:00.000Z","status":"failed","model":"fake/b","usage":{"input":20000,"cached_input":0,"output":2000},"cost":null,"request":"second"}
	{"type":"run","run":"20261120-100000-cccccccc","conversation":"c-2","workspace":"$here/sub","started":"2026-11-20T10:00:00.000Z","status":"interrupted","stop":"stalled","model":"fake/a","usage":{"input":300,"cached_input":300,"output":30},"cost":1.25,"request":"third"}
	EOF
}

@test "xg-log lists runs newest first, one row each, and --json gives the index lines" {
	three_runs
	run_split env TZ=UTC xg-log
	assert_success
	w=${#here}; w=$((w + 4))	# the widest workspace: $here/sub
	assert_equal "${lines[0]}" "$(printf 'cccccccc  2026-11-20 10:00  interrupted (stalled)  fake/a      300/30  %-*s  third' "$w" "$here/sub")"
	assert_equal "${lines[1]}" "$(printf 'bbbbbbbb  2026-11-10 10:00  failed                 fake/b  20.0k/2000  %-*s  second' "$w" "$here")"
	assert_equal "${lines[2]}" "$(printf 'aaaaaaaa  2026-11-01 10:00  completed              fake/a      100/10  %-*s  first' "$w" /elsewhere)"
	assert_equal "${#lines[@]}" 3
	run xg-log --json
	assert_equal "$output" "$(tac "$(STATE)/runs.ndjson")"
	run xg-log -n 1 --json
	assert_equal "$(jq -r .request <<<"$output")" third
}

@test "xg-log's columns stay aligned with a long status, a long model and a wide workspace" {
	mkdir -p "$(STATE)"
	cat >"$(STATE)/runs.ndjson" <<-'EOF'
	{"type":"run","run":"20261101-100000-aaaaaaaa","workspace":"/w/ünïcode-dir","started":"2026-11-01T10:00:00.000Z","status":"completed","model":"fake/a","usage":{"input":1,"output":1},"request":"one"}
	{"type":"run","run":"20261102-100000-bbbbbbbb","workspace":"/w","started":"2026-11-02T10:00:00.000Z","status":"interrupted","stop":"user","model":"openrouter/anthropic/claude-sonnet-4.5","usage":{"input":123456,"output":7890},"request":"two"}
	{"type":"run","run":"20261103-100000-cccccccc","workspace":"/w","started":"2026-11-03T10:00:00.000Z","status":"interrupted","stop":"needs_person","model":null,"usage":{"input":0,"output":0},"request":"three"}
	EOF
	run_split env TZ=UTC xg-log
	assert_success
	assert_output - <<-'EOF'
	cccccccc  2026-11-03 10:00  interrupted (needs_person)  -                                               0/0  /w              three
	bbbbbbbb  2026-11-02 10:00  interrupted (user)          openrouter/anthropic/claude-sonnet-4.5  123.5k/7890  /w              two
	aaaaaaaa  2026-11-01 10:00  completed                   fake/a                                          1/1  /w/ünïcode-dir  one
	EOF
}

@test "xg-log usage shows an unknown cost as -, never \$0.0000" {
	mkdir -p "$(STATE)"
	cat >"$(STATE)/runs.ndjson" <<-'EOF'
	{"type":"run","run":"20261101-100000-aaaaaaaa","workspace":"/w","started":"2026-11-01T10:00:00.000Z","status":"failed","model":"nowhere/unpriced","usage":{"input":0,"output":0},"cost":null,"request":"one"}
	{"type":"run","run":"20261102-100000-bbbbbbbb","workspace":"/w","started":"2026-11-02T10:00:00.000Z","status":"completed","model":"nowhere/unpriced","usage":{"input":500,"output":50},"cost":null,"request":"two"}
	{"type":"run","run":"20261103-100000-cccccccc","workspace":"/w","started":"2026-11-03T10:00:00.000Z","status":"completed","model":"openrouter/anthropic/claude-sonnet-4.5","usage":{"input":1000,"output":100},"cost":0.25,"request":"three"}
	EOF
	run_split env TZ=UTC xg-log usage --by model
	assert_success
	refute_output --partial '$0.0000'
	assert_line --regexp '^nowhere/unpriced                        +2 +500 +0 +50 +0\.0% +-$'
	assert_line --regexp '^openrouter/anthropic/claude-sonnet-4\.5  +1 +1000 .*\$0\.2500$'
	assert_line --regexp '^total                                   +3 .*\$0\.2500\*$'
	run xg-log usage --by model --json
	assert_equal "$(jq -c 'select(.key == "nowhere/unpriced") | [.cost, .unpriced_runs]' <<<"$output")" "[null,1]"
	# A run that used no tokens costs nothing, priced or not: it alone is no cost known.
	run xg-log usage --by model --json --before 2026-11-02
	assert_equal "$(jq -c 'select(.key == "nowhere/unpriced") | [.runs, .cost, .unpriced_runs]' <<<"$output")" "[1,null,0]"
}

@test "xg-log filters by time, status, stop, workspace and conversation" {
	three_runs
	req() { jq -r .request | paste -sd, -; }
	assert_equal "$(xg-log --json --since 2026-11-05 | req)" "third,second"
	assert_equal "$(xg-log --json --since 2026-11-15T00:00:00Z | req)" "third"
	assert_equal "$(xg-log --json --status failed | req)" "second"
	assert_equal "$(xg-log --json --status stalled | req)" "third"
	assert_equal "$(cd here && xg-log --json --workspace . | req)" "third,second"
	assert_equal "$(xg-log --json --workspace "$here/sub" | req)" "third"
	assert_equal "$(xg-log --json --conversation c-1 | req)" "first"
	assert_equal "$(xg-log --json --since 1d | req)" ""
}

@test "a bad --since, --before or grouping is a usage error naming it" {
	three_runs
	run_split xg-log --since yesterday-ish
	assert_equal "$status" 2
	assert_regex "$stderr" "^xg-log: --since 'yesterday-ish' is not a time"
	run_split xg-log prune --before 2026-13-45
	assert_equal "$status" 2
	assert_regex "$stderr" "--before '2026-13-45' is not a time"
	run_split xg-log usage --by colour
	assert_equal "$status" 2
	assert_regex "$stderr" "--by 'colour' is not a grouping"
	run_split xg-log prune
	assert_equal "$status" 2
	assert_regex "$stderr" "prune needs --before"
}

@test "a torn last line is left out with a warning; a bad line anywhere is named once and skipped" {
	three_runs
	printf '{"type":"run","run":"20261121-1' >>"$(STATE)/runs.ndjson"
	run_split xg-log --json
	assert_success
	assert_regex "$stderr" "'.*runs.ndjson' line 4, the last, is torn"
	assert_equal "$(wc -l <<<"$output")" 3
	# The next append ends the torn line first.
	fake_provider_start <<-'EOF'
	{"text": "ok"}
	EOF
	fake_catalog openai-chat
	xg-run --model fake/m 'after the tear' >/dev/null
	run_split xg-log --json -n 1
	assert_equal "$(jq -r .request <<<"$output")" "after the tear"
	# The torn line, ended by the append after it, is a damaged line in
	# the middle now, as is a line spoilt by hand: each is named once, and
	# the runs on both sides of them are listed.
	sed -i '2s/.*/not json/' "$(STATE)/runs.ndjson"
	run_split xg-log --json
	assert_success
	assert_equal "$stderr" "xg-log: '$(STATE)/runs.ndjson' line 4 is not a run record; it is left out
xg-log: '$(STATE)/runs.ndjson' line 2 is not a run record; it is left out"
	assert_equal "$(jq -r .request <<<"$output" | paste -sd, -)" "after the tear,third,first"
}

@test "a damaged line in the middle of the index is named once, and every other run is listed" {
	three_runs
	sed -i '2s/.*/{"type":"run","run":"20261110-1/' "$(STATE)/runs.ndjson"
	run_split xg-log --json
	assert_success
	assert_equal "$stderr" "xg-log: '$(STATE)/runs.ndjson' line 2 is not a run record; it is left out"
	assert_equal "$(jq -r .request <<<"$output" | paste -sd, -)" "third,first"
	run_split env TZ=UTC xg-log --status completed
	assert_success
	assert_equal "${#lines[@]}" 1
	run_split xg-log usage
	assert_success
	assert_equal "$(grep -c 'line 2 is not a run record' <<<"$stderr")" 1
}

@test "xg-log show renders a run as xg did on the terminal" {
	command -v script >/dev/null || skip "script(1) is not installed"
	fake_provider_start <<-'EOF'
	{"text": "Let me look.", "tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "echo hi"}}, {"id": "c2", "name": "read", "args": {"path": "missing"}}]}
	{"text": "All done: it says hi.", "usage": {"input": 10, "output": 3}}
	EOF
	fake_catalog openai-chat
	workspace
	run script -qec "xg run --model fake/m 'look around'" /dev/null
	assert_success
	shown=$(tr -d '\r' <<<"$output")
	assert_regex "$shown" "! read: missing \(failed"
	id=$(jq -r .run "$(STATE)/runs.ndjson")
	run xg-log show "$id"
	assert_success
	assert_equal "$output" "$shown"
	# The start of its random part, as the rows show it, names it too.
	hex=${id##*-}
	run xg-log show "${hex:0:5}"
	assert_equal "$output" "$shown"
	run xg-log show --json "$id"
	assert_equal "$output" "$(cat "$(STATE)/runs/$id/events.ndjson")"
}

@test "xg-log show folds a stretch of heartbeats into one row, shows a goal's, skips hidden messages" {
	id=20261130-105624-3f9a1c2b
	mkdir -p "$(STATE)/runs/$id"
	cat >"$(STATE)/runs/$id/events.ndjson" <<-'EOF'
	{"type":"run_start","run":"20261130-105624-3f9a1c2b","conversation":"c-1"}
	{"type":"heartbeat","phase":"model","quiet_ms":5000}
	{"type":"heartbeat","phase":"model","quiet_ms":10000}
	{"type":"heartbeat","phase":"tool","quiet_ms":15000,"active_tools":[{"name":"bash","id":"b1","ms":400}]}
	{"type":"message","role":"assistant","text":"Done."}
	{"type":"message","role":"assistant","text":"Go on with the goal.","hidden":true}
	{"type":"heartbeat","phase":"model","quiet_ms":200}
	{"type":"goal","objective":"make it fast\nand small","status":"active","rounds":2}
	{"type":"run_end","status":"completed","tool_calls":0,"requests":0,"ms":20000}
	EOF
	run xg-log show 3f9a
	assert_success
	assert_equal "${lines[0]}" ".. tool, quiet 15 s"
	assert_equal "${lines[1]}" "Done."
	assert_equal "${lines[2]}" ".. model"
	assert_equal "${lines[3]}" "goal: active, round 2: make it fast"
	assert_equal "${lines[4]}" "xg: completed; 0 tool calls, 20.0 s"
	assert_equal "${#lines[@]}" 5
}

@test "xg-log show says what is wrong with a run it cannot name" {
	mkdir -p "$(STATE)/runs/20261130-105624-3f9a1c2b" "$(STATE)/runs/20261130-105624-3f9a77aa"
	run_split xg-log show 3f9a
	assert_equal "$status" 2
	assert_regex "$stderr" "'3f9a' names 2 runs"
	run_split xg-log show 0000beef
	assert_equal "$status" 66
	assert_regex "$stderr" "no run '0000beef'"
}

@test "xg-log diff shows what a run changed: against the next run's snapshot, or the working tree" {
	fake_provider_start <<-'EOF'
	{"tool_calls": [{"id": "w1", "name": "bash", "args": {"command": "echo made >made.txt"}}]}
	{"text": "made it"}
	{"text": "nothing to do"}
	EOF
	fake_catalog openai-chat
	workspace
	xg-run --model fake/m 'make a file' >/dev/null
	first=$(jq -r .run "$(STATE)/runs.ndjson")
	run xg-log diff "$first" -- --name-only
	assert_success
	assert_output "made.txt"
	# Against the next run's snapshot: a person's edit before it shows,
	# one after it does not, but for --worktree.
	echo edited >a
	xg-run --model fake/m 'look again' >/dev/null
	echo later >later.txt
	run xg-log diff "$first" -- --name-only
	assert_output $'a\nmade.txt'
	run xg-log diff --worktree "$first" -- --name-only
	assert_output $'a\nlater.txt\nmade.txt'
	# Nothing of the working tree was touched.
	assert_equal "$(git status --porcelain | sort | tr '\n' ' ')" " M a ?? later.txt ?? made.txt "
	run_split xg-log diff -v "$first" -- --name-only
	assert_regex "$stderr" "against the next run's snapshot"
}

@test "xg-log usage sums tokens and the cache-hit ratio, and the cost when prices are known" {
	three_runs
	run env TZ=UTC xg-log usage --json
	assert_success
	run jq -c '[.key, .runs, .input, .cached_input, .output, .cost, .unpriced_runs]' <<<"$output"
	assert_output '["all",3,20400,350,2040,1.75,1]'
	run env TZ=UTC xg-log usage --by model
	assert_success
	assert_line --regexp '^fake/a +2 +400 +350 +40 +87\.5% +\$1\.7500$'
	assert_line --regexp '^fake/b +1 +20\.4k|^fake/b +1 +20\.0k +0 +2000 +0\.0% +-$'
	assert_line --regexp '^total +3 .*\$1\.7500\*$'
	assert_line --partial "1 of the runs have no price"
	run env TZ=UTC xg-log usage --by day --json --since 2026-11-05
	assert_equal "$(jq -r '.key // "total"' <<<"$output" | paste -sd, -)" "2026-11-10,2026-11-20,total"
}

@test "xg-log usage prices a run from the catalog when it recorded no cost" {
	three_runs
	fake_provider_start </dev/null
	fake_catalog openai-chat
	sed -i 's|"fake/b"|"fake/m"|' "$(STATE)/runs.ndjson"
	run xg-log usage --json --by model
	assert_equal "$(jq -c 'select(.key == "fake/m") | [.cost, .unpriced_runs]' <<<"$output")" "[null,1]"
	priced '{"input": 1, "output": 100}'
	run xg-log usage --json --by model
	# 20000 in at 1 and 2000 out at 100, per million.
	assert_equal "$(jq -c 'select(.key == "fake/m") | [.cost, .unpriced_runs]' <<<"$output")" "[0.22,0]"
}

@test "a price that is not one leaves the model out, saying why" {
	fake_provider_start </dev/null
	fake_catalog openai-chat
	priced '{"input": -1, "output": 2}'
	run_split xg-choices models
	assert_regex "$stderr" "'price.input' must be a number of dollars per million tokens"
	refute_output --partial '"fake/m"'
}

@test "xg-log conversations lists them, skipping hidden messages" {
	mkdir -p "$(STATE)/conversations" w1
	w1=$(cd w1 && pwd)
	cat >"$(STATE)/conversations/c-1.jsonl" <<-EOF
	{"type":"conversation","schema":"xg/1","id":"c-1","created":"2026-11-01T10:00:00.000Z","cwd":"$w1"}
	{"type":"message","role":"user","text":"the first\nrequest","at":"2026-11-01T10:00:00.000Z"}
	{"type":"message","role":"assistant","text":"ok","at":"2026-11-01T10:00:01.000Z"}
	{"type":"message","role":"user","text":"go on with the goal","hidden":true,"at":"2026-11-01T10:01:00.000Z"}
	{"type":"message","role":"user","text":"and again","at":"2026-11-01T10:02:00.000Z"}
	EOF
	cat >"$(STATE)/conversations/c-2.jsonl" <<-EOF
	{"type":"conversation","schema":"xg/1","id":"c-2","created":"2026-11-02T10:00:00.000Z","cwd":"/elsewhere"}
	{"type":"message","role":"user","text":"other","at":"2026-11-02T10:00:00.000Z"}
	EOF
	touch -d '2026-11-01 10:02' "$(STATE)/conversations/c-1.jsonl"
	touch -d '2026-11-03 10:00' "$(STATE)/conversations/c-2.jsonl"
	run env TZ=UTC xg-log conversations
	assert_success
	assert_equal "${lines[0]}" "c-2  2026-11-03 10:00    1 turn   /elsewhere  other"
	assert_equal "${lines[1]}" "c-1  2026-11-01 10:02    2 turns  $w1  the first"
	run xg-log conversations --json --workspace w1
	run jq -c '[.id, .turns, .request, .workspace]' <<<"$output"
	assert_output '["c-1",2,"the first\nrequest","'"$w1"'"]'
}

@test "xg-log prune deletes only on request, only what started before, and says what" {
	three_runs
	for id in 20261101-100000-aaaaaaaa 20261110-100000-bbbbbbbb 20261120-100000-cccccccc; do
		mkdir -p "$(STATE)/runs/$id" && echo '{}' >"$(STATE)/runs/$id/run.json"
	done
	run xg-log prune --before 2026-11-15 --dry-run
	assert_success
	assert_line --regexp '^would prune 20261101-100000-aaaaaaaa .* completed  first$'
	assert_line --regexp '^would prune 20261110-100000-bbbbbbbb .* failed  second$'
	assert_line "would prune 2 runs started before 2026-11-15"
	assert_equal "$(index | wc -l)" 3
	[ -d "$(STATE)/runs/20261101-100000-aaaaaaaa" ]
	run xg-log prune --before 2026-11-15
	assert_success
	assert_line "pruned 2 runs started before 2026-11-15"
	assert_equal "$(jq -r .request "$(STATE)/runs.ndjson")" third
	[ ! -e "$(STATE)/runs/20261101-100000-aaaaaaaa" ] || fail "the old run's directory is left"
	[ ! -e "$(STATE)/runs/20261110-100000-bbbbbbbb" ] || fail "the old run's directory is left"
	[ -d "$(STATE)/runs/20261120-100000-cccccccc" ] || fail "a newer run was pruned"
}

@test "xg log runs xg-log" {
	three_runs
	run xg log -n 1 --json
	assert_success
	assert_equal "$(jq -r .request <<<"$output")" third
}

@test "xg-log show shows the notices an upstream stage passed to the run" {
	fake_provider_start <<-'EOF2'
	{"text": "Hi."}
	EOF2
	fake_catalog openai-chat
	printf '%s\n' '{"type":"notice","from":"xg-choices","text":"the saved model is gone; running on fake/m"}' \
		'{"type":"request","text":"hello","mode":"normal"}' | xg-run --model fake/m >/dev/null
	id=$(jq -r .run "$(STATE)/runs.ndjson")
	run xg-log show "$id"
	assert_success
	assert_line "note: the saved model is gone; running on fake/m"
	assert_line "Hi."
}

@test "an empty list is silent in a pipe, and on a terminal says whether there are no runs or none matches" {
	command -v script >/dev/null || skip "script(1) is not installed"
	run_split xg-log
	assert_success
	assert_equal "$output" ""
	assert_equal "$stderr" ""
	run script -qec "xg-log" /dev/null
	assert_success
	assert_equal "$(tr -d '\r' <<<"$output")" "xg-log: no runs yet: 'xg run TEXT' starts one"
	fake_provider_start <<-'EOF2'
	{"text": "done"}
	EOF2
	fake_catalog openai-chat
	workspace
	xg-run --model fake/m 'one run' >/dev/null
	run script -qec "xg-log --status failed" /dev/null
	assert_success
	assert_equal "$(tr -d '\r' <<<"$output")" "xg-log: no run matches"
	run script -qec "xg-log" /dev/null
	assert_line --partial 'one run'
}
