#!/bin/sh
# xg-choices start on a 100 MB conversation: the start model is found by
# reading the conversation from its end, so the time should not grow with
# its size.  Target: under 5 ms a run, process start included.
#
#   sh bench/choices.sh [runs]
set -eu
cd "$(dirname "$0")/.."
runs=${1:-200}
bin=$PWD/bin/xg-choices
[ -x "$bin" ] || { echo "bench/choices.sh: build first (make)" >&2; exit 1; }
. bench/lib.sh
bench_tmp
bench_home
unset XG_ACCOUNT OPENAI_API_KEY ANTHROPIC_API_KEY OPENROUTER_API_KEY
# Configured, the local server is what a start with nothing saved runs on.
export LLAMACPP_BASE_URL=http://127.0.0.1:8080/v1
conv="$XG_HOME/state/conversations"
mkdir -p "$conv"

# A conversation of 100 MiB: turns of a user message, tool results of
# a few kB and an assistant message naming its model.  $2 MiB of tool
# results follow the last assistant message.
make_conversation() {
	python3 - "$conv/$1.jsonl" "$2" <<-'PY'
	import json, sys
	path, tail_mb = sys.argv[1], float(sys.argv[2])
	out = open(path, "w")
	w = lambda e: out.write(json.dumps(e, separators=(",", ":")) + "\n")
	w({"type": "conversation", "schema": "xg/1", "id": "bench", "created": "2026-11-30T00:00:00.000Z", "cwd": "/"})
	at = "2026-11-30T00:00:00.000Z"
	size, turn, blob = 0, 0, "x" * 4000
	while size < (100 - tail_mb) * 2**20:
	    w({"type": "message", "at": at, "role": "user", "text": "turn %d: please go on" % turn})
	    for i in range(5):
	        w({"type": "tool_result", "at": at, "id": "t%d" % i, "ok": True, "output": blob})
	    w({"type": "message", "at": at, "role": "assistant", "text": "done %d" % turn,
	       "model": "llamacpp/gpt-oss-20b", "effort": "medium"})
	    size = out.tell(); turn += 1
	while size < 100 * 2**20:
	    w({"type": "tool_result", "at": at, "id": "late", "ok": True, "output": blob})
	    size = out.tell()
	PY
}

# Milliseconds per run of "$@", averaged over $runs runs.
per_run() {
	start=$(date +%s%N)
	i=0
	while [ $i -lt "$runs" ]; do "$@" </dev/null >/dev/null; i=$((i + 1)); done
	end=$(date +%s%N)
	echo "scale=3; ($end - $start) / 1000000 / $runs" | bc 2>/dev/null ||
		awk "BEGIN { printf \"%.3f\n\", ($end - $start) / 1e6 / $runs }"
}

printf '%s\n' '{"type":"conversation","schema":"xg/1","id":"small","created":"2026-11-30T00:00:00.000Z","cwd":"/"}' \
	'{"type":"message","at":"2026-11-30T00:00:00.000Z","role":"assistant","text":"hi","model":"llamacpp/gpt-oss-20b","effort":"medium"}' \
	> "$conv/small.jsonl"
make_conversation tail 0
make_conversation deep 10
size=$(du -m "$conv/tail.jsonl" | cut -f1)
"$bin" start --conversation tail </dev/null | grep -q '"source":"history"' ||
	{ echo "bench/choices.sh: the start did not come from the history" >&2; exit 1; }
echo "xg-choices start, conversation of ${size} MiB, model in the last entry: $(per_run "$bin" start --conversation tail) ms/run ($runs runs)"
echo "xg-choices start, conversation of ${size} MiB, model 10 MiB from the end: $(per_run "$bin" start --conversation deep) ms/run ($runs runs)"
echo "xg-choices start, conversation of 2 lines, for comparison:             $(per_run "$bin" start --conversation small) ms/run ($runs runs)"
echo "xg-choices start, no conversation (catalog and choices only):        $(per_run "$bin" start) ms/run ($runs runs)"
echo "the process alone, xg-choices --version:                              $(per_run "$bin" --version) ms/run ($runs runs)"
