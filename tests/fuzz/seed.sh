#!/bin/sh
# Makes the seed corpora of the fuzz targets from the fixtures (make fuzz):
# tests/fuzz/work/TARGET/seed/, one file per seed, made afresh each time.
set -eu
cd "$(dirname "$0")/../.."
w=tests/fuzz/work
rm -rf "$w"/*/seed

seed() {	# seed TARGET FILE...
	t=$1
	shift
	mkdir -p "$w/$t/seed" "$w/$t/corpus"
	for f in "$@"; do
		[ -f "$f" ] && cp "$f" "$w/$t/seed/$(basename "$f")"
	done
	return 0
}

seed sse-openai-responses tests/fixtures/wire/openai-responses-*.sse
seed sse-openai-chat tests/fixtures/wire/openai-chat-*.sse tests/fixtures/wire/ollama-*.sse \
	tests/fixtures/wire/llamacpp-*.sse tests/fixtures/wire/sse-*.sse
seed sse-anthropic-messages tests/fixtures/wire/anthropic-*.sse
seed plan tests/fixtures/classify-plan/*.txt
seed config share/xg/models.json tests/fixtures/choices/share/models.json
# The record reader and the conversation loader read NDJSON: each JSON
# fixture as one line, and a conversation as xg writes one.
mkdir -p "$w/rec/seed" "$w/conversation/seed" "$w/choices/seed"
for f in tests/fixtures/provider/*.json tests/fixtures/wire/*.expect.json; do
	jq -c . "$f" >"$w/rec/seed/$(basename "$f").ndjson"
done
cat >"$w/conversation/seed/conversation.jsonl" <<'EOC'
{"type":"conversation","schema":"xg/1","id":"f","created":"2026-12-01T00:00:00.000Z","cwd":"/tmp"}
{"type":"message","role":"user","text":"hello","at":"2026-12-01T00:00:00.000Z"}
{"type":"message","role":"assistant","text":"","model":"fake/m","effort":null,"tool_calls":[{"id":"c1","name":"bash","args":{"command":"ls"}}],"at":"2026-12-01T00:00:01.000Z"}
{"type":"tool_result","id":"c1","name":"bash","ok":true,"output":"a\nb","at":"2026-12-01T00:00:02.000Z"}
{"type":"model_change","from":"fake/m","to":"fake/n","reason":"fallback","at":"2026-12-01T00:00:03.000Z"}
{"type":"compaction","summary":"s","at":"2026-12-01T00:00:04.000Z"}
{"type":"message","role":"assistant","text":"done","model":"fake/n","effort":"low","at":"2026-12-01T00:00:05.000Z"}
EOC
cp "$w/conversation/seed/conversation.jsonl" "$w/rec/seed/"
# choices: an even first byte is choices.json, an odd one auth.json.
printf '0{"normal": {"model": "openai/gpt-5", "effort": "low", "updatedAt": "2026-12-01T00:00:00.000Z"}, "plan": {"model": "anthropic/claude", "effort": null, "updatedAt": "2026-12-01T00:00:00.000Z"}}\n' \
	>"$w/choices/seed/choices.json"
printf '1{"openai": {"key": "fake-key-for-fuzzing-1", "updatedAt": "2026-12-01T00:00:00.000Z"}}\n' \
	>"$w/choices/seed/auth.json"
mkdir -p "$w/rec/corpus" "$w/conversation/corpus" "$w/choices/corpus"
