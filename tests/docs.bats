#!/usr/bin/env bats
# The guides' examples, run as they are written: each block of docs/*.md
# marked "<!-- tested: NAME -->" is taken as it is, against the loopback
# fake provider, in a home of its own.  A key block gets the provider's URL
# pointed at the fake one (in the user's catalog); a server block has its
# server line (the one ending in '&') left out and the server's address
# replaced by the fake one's.  The parallel block runs 20 runs on one shared
# XG_HOME and every conversation and the index must come out whole.  The
# blocks of testing.md start xg-fake-provider themselves, on a free port in
# place of the guide's fixed one, and must leave no server behind.

load lib/helper
load lib/fake-provider

setup() {
	exec </dev/null
	export HOME="$BATS_TEST_TMPDIR/h"
	unset XG_HOME XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME LLAMACPP_BASE_URL OLLAMA_BASE_URL
	mkdir -p "$HOME/.config/xg" project
	cd project && git init -q && echo hi >README && git add README &&
		git -c user.name=t -c user.email=t@t commit -qm readme
}

teardown() {
	fake_provider_stop
	local p
	for p in $(servers_left); do kill "$p" 2>/dev/null || true; done
}

# The process ids of the xg-fake-provider servers a block started (those
# working in this test's directory).
servers_left() {
	local p
	for p in $(procs_with xg-fake-provider); do
		case $(readlink "/proc/$p/cwd" 2>/dev/null) in "$BATS_TEST_TMPDIR"*) echo "$p" ;; esac
	done
	return 0
}

# The block of docs/$1 marked "tested: $2", one line a line.
block() {
	python3 - "$XG_SRCDIR/docs/$1" "$2" <<-'EOF'
	import sys
	lines = open(sys.argv[1]).read().split("\n")
	mark = "<!-- tested: %s -->" % sys.argv[2]
	i = lines.index(mark)
	assert lines[i + 1].startswith("```"), "no block after " + mark
	end = lines.index("```", i + 2)
	print("\n".join(lines[i + 2:end]))
	EOF
}

# Runs block $1 of getting-started.md against the fake provider; $2 is
# the provider whose URL a key block points at it, or "server".
run_start_block() {
	fake_provider_start <<-'EOF'
	{"text": "It is a tiny project.", "repeat": 5, "usage": {"input": 100, "output": 7}}
	EOF
	local text
	text=$(block getting-started.md "$1")
	[ -n "$text" ] || fail "no block '$1'"
	if [ "$2" = server ]; then
		text=$(sed -E '/&$/d; s/127\.0\.0\.1:(8080|11434|8000)/127.0.0.1:'"$FAKE_PORT"'/g' <<<"$text")
	else
		printf '{"providers": {"%s": {"base_url": "%s"}}}\n' "$2" "$FAKE_URL" >"$HOME/.config/xg/models.json"
	fi
	run_split sh -ec "$text"
}

# What the fake provider was asked: path and auth, one request a line.
asked() { fake_log 'for r in log: print(r["path"], r["auth"])'; }

@test "getting started: an OpenAI key, as the guide says" {
	export FAKE_PROVIDER_KEY=sk-your-key
	run_start_block openai openai
	assert_success
	# Its standard output a pipe: the reply alone.
	assert_output "It is a tiny project."
	assert_equal "$(asked)" "/v1/responses ok"
	run xg-log --json
	assert_equal "$(jq -r '[.status, .model] | join(" ")' <<<"$output")" "completed openai/gpt-5.1"
}

@test "getting started: the reply in a file, the records with --json, as the guide says" {
	export FAKE_PROVIDER_KEY=sk-your-key OPENAI_API_KEY=sk-your-key
	xg-choices set --mode normal --model openai/gpt-5.1
	run_start_block pipe openai
	assert_success
	# The file holds the reply alone; standard output, the status jq read.
	assert_equal "$(cat answer.txt)" "It is a tiny project."
	assert_output completed
	# Standard error: the first run's last line, once, and nothing else.
	assert_regex "$stderr" "^xg: completed; 0 tool calls, [0-9.]+ m?s, tokens 100 in, 7 out; conversation [0-9-]+[0-9a-f]+\$"
}

@test "getting started: an Anthropic key, as the guide says" {
	export FAKE_PROVIDER_KEY=sk-ant-your-key
	run_start_block anthropic anthropic
	assert_success
	assert_equal "$(asked)" "/v1/messages ok"
}

@test "getting started: an OpenRouter key, as the guide says" {
	export FAKE_PROVIDER_KEY=sk-or-your-key
	run_start_block openrouter openrouter
	assert_success
	assert_equal "$(asked)" "/v1/chat/completions ok"
	run xg-log --json
	assert_equal "$(jq -r .model <<<"$output")" openrouter/anthropic/claude-sonnet-4.5
}

@test "getting started: llama.cpp's server, Ollama and vLLM, as the guide says" {
	for b in llama.cpp ollama vllm; do
		run_start_block "$b" server
		[ "$status" -eq 0 ] || fail "the $b block exited $status: $stderr"
		fake_provider_stop
	done
	run xg-log --json -n 0
	assert_equal "$(jq -r '.status + " " + .model' <<<"$output" | sort | paste -sd, -)" \
		"completed llamacpp/gpt-oss-20b,completed ollama/qwen3-coder:30b,completed vllm/Qwen/Qwen3-Coder-30B-A3B-Instruct"
}

@test "at scale: 20 runs under GNU parallel on one shared XG_HOME leave every conversation and the index whole" {
	parallel --version 2>/dev/null | grep -q 'GNU parallel' || skip "GNU parallel is not installed (make deps installs it)"
	mkdir -p "$HOME/.parallel" && touch "$HOME/.parallel/will-cite"
	export XG_HOME="$BATS_TEST_TMPDIR/shared"
	fake_provider_start <<-'EOF'
	{"text": "Done.", "repeat": 20, "usage": {"input": 50, "output": 5}, "delay_ms": 20}
	EOF
	mkdir -p "$XG_HOME/config"
	printf '{"providers": {"fake": {"kind": "openai-chat", "base_url": "%s", "key_env": null, "models": {"m": {}}}}}\n' \
		"$FAKE_URL" >"$XG_HOME/config/models.json"
	xg-choices set --mode normal --model fake/m
	mkdir tasks
	for i in $(seq 1 20); do echo "task number $i" >"tasks/t$i.md"; done
	cmd=$(block scale.md parallel)
	run_split sh -ec "$cmd"
	assert_success
	# Every job exited 0, each wrote its reply and its records.
	assert_equal "$(awk 'NR > 1 && $7 != 0' xg.joblog)" ""
	assert_equal "$(ls tasks/*.reply | wc -l)" 20
	assert_equal "$(cat tasks/*.reply | sort -u)" "Done."
	# The index: 20 whole lines, 20 runs, each completed, each request its task's.
	index="$XG_HOME/state/runs.ndjson"
	assert_equal "$(wc -l <"$index")" 20
	[ "$(tail -c 1 "$index" | od -An -c | tr -d ' ')" = '\n' ] || fail "the index ends in a torn line"
	assert_equal "$(jq -r .run "$index" | sort -u | wc -l)" 20
	assert_equal "$(jq -r .status "$index" | sort -u)" completed
	assert_equal "$(jq -r .request "$index" | sort | paste -sd, -)" "$(seq 1 20 | sed 's/^/task number /' | sort | paste -sd, -)"
	# The conversations: 20 files, each a header, the prompt's version pinned
	# at its first compile, the request and the reply, every line whole JSON.
	convs=("$XG_HOME"/state/conversations/*.jsonl)
	assert_equal "${#convs[@]}" 20
	for c in "${convs[@]}"; do
		jq -e . "$c" >/dev/null || fail "$c is not whole JSON lines"
		assert_equal "$(jq -r '.type + ":" + (.role // "")' "$c" | paste -sd, -)" "conversation:,variant_change:,message:user,message:assistant"
	done
	run xg-log -n 0
	assert_equal "${#lines[@]}" 20
}

# A TCP port of 127.0.0.1 that was free a moment ago.
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# Block $1 of testing.md, its fixed port 8399 replaced by $PORT (tests run
# side by side), and the shipped data's place kept through env -i.
testing_block() {
	block testing.md "$1" | sed "s/8399/$PORT/g; s/env -i /env -i XG_SHARE_DIR=\"\$XG_SHARE_DIR\" /"
}

@test "testing: a Makefile target tested against the scripted model, as the guide says" {
	PORT=$(free_port)
	run_split sh -ec "$(testing_block home)"
	assert_success
	testing_block makefile >Makefile
	mkdir -p test
	testing_block review-script >test/review.ndjson
	git add Makefile && git -c user.name=t -c user.email=t@t commit -qm 'the review target'
	run_split make -s check-review
	[ "$status" -eq 0 ] || fail "make check-review exited $status: $stderr"
	assert_equal "$(cat review.txt)" "Looks right: one file changed, and its test with it."
	# The model was asked about the commit, which came through the pipe.
	grep -q 'the review target' test/requests.ndjson || fail "the commit is not in the request"
	assert_equal "$(servers_left)" ""
	# Another reply, and the test says the target no longer does what it should.
	printf '{"text": "This commit breaks the build."}\n' >test/review.ndjson
	run_split make -s check-review
	assert_failure
	assert_equal "$(servers_left)" ""
	# So does a model that fails: the target's status is the test's.
	printf '{"status": 401, "message": "this key is not known"}\n' >test/review.ndjson
	run_split make -s check-review
	assert_failure
	assert_equal "$(servers_left)" ""
}

@test "testing: a cron job tested against the scripted model, as the guide says" {
	PORT=$(free_port)
	run_split sh -ec "$(testing_block home)"
	assert_success
	testing_block nightly >nightly.sh
	run_split sh -ec "$(testing_block nightly-test)"
	[ "$status" -eq 0 ] || fail "the cron job's test exited $status: $stderr"
	assert_equal "$(jq -r 'select(.type == "run_end") | .exit' test/log/nightly.ndjson | paste -sd' ')" "0 77"
	assert_equal "$(jq -r 'select(.type == "run_end") | .reply' test/log/nightly.ndjson | head -n 1)" \
		"Two commits: a review target, and its test."
	assert_equal "$(jq -r 'select(.type == "message" and .role == "user") | .text' test/log/nightly.ndjson | head -n 1 | head -c 33)" \
		"sum up these commits for the team"
	assert_equal "$(servers_left)" ""
	# The day's commits came through the pipe, with the request.
	jq -r 'select(.type == "message" and .role == "user") | .text' test/log/nightly.ndjson |
		grep -q '^    readme$' || fail "the commits are not in the request"
}
