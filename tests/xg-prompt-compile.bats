#!/usr/bin/env bats
# xg-prompt-compile: the pack, budgets and cuts, determinism, variants and
# their versions, which version a conversation compiles on, and the
# project instructions (AGENTS.md) a pack carries.

load lib/helper
load lib/fake-provider

setup() {
	SMALL="$BATS_TEST_TMPDIR/small"
	cp -R "$FIXTURES/prompt/small" "$SMALL"
}

teardown() {
	fake_provider_stop
}

# The pack record of a compile fed "$1" (records) with options "${@:2}".
pack() {
	printf '%s\n' "$1" | xg-prompt-compile "${@:2}" | jq -c 'select(.type == "pack")'
}

default_version() {
	xg-prompt-compile </dev/null | jq -r .version
}

STABLE='["identity","role","personality","autonomy","permission","steering","writing","todo","work-slice","skills","reporting"]'

@test "The default pack holds the stable sections in order, and reporting last" {
	run xg-prompt-compile </dev/null
	assert_success
	run jq -c '[.sections[].name]' <<<"$output"
	assert_output "$STABLE"
}

@test "The system prompt is the sections joined by blank lines" {
	run xg-prompt-compile --model openai/gpt-5 </dev/null
	assert_success
	# jq counts characters as code points, as the budgets do.
	run jq '(.sections | map(.chars) | add) + 2 * ((.sections | length) - 1) == (.system | length)' <<<"$output"
	assert_output true
	run xg-prompt-compile --text </dev/null
	assert_line --index 0 --regexp '^You are xg, a coding agent'
	assert_output --partial $'# Your role\n\nA request names a result'
	[ "$(printf '%s\n' "$output" | grep -n '^# Your role' | cut -d: -f1)" -lt \
	  "$(printf '%s\n' "$output" | grep -n '^# Reporting' | cut -d: -f1)" ]
}

@test "Plan mode adds the plan section after the same stable prefix" {
	normal=$(xg-prompt-compile --mode normal </dev/null)
	plan=$(xg-prompt-compile --mode plan </dev/null)
	run jq -c '[.sections[].name]' <<<"$plan"
	assert_output "${STABLE%]},\"plan\"]"
	assert_equal "$(jq -r .mode <<<"$plan")" plan
	assert_equal "$(jq -r .stable_sha256 <<<"$plan")" "$(jq -r .stable_sha256 <<<"$normal")"
	run jq -r '.system | startswith($n)' --arg n "$(jq -r .system <<<"$normal")" <<<"$plan"
	assert_output true
	run jq -r .system <<<"$plan"
	assert_output --partial '<proposed_plan>'
	assert_output --partial '<plan_blocked>'
	run jq -r .system <<<"$normal"
	refute_output --partial '<proposed_plan>'
}

@test "A request's mode picks plan mode, and --mode wins over it" {
	run pack '{"type":"request","text":"x","mode":"plan"}'
	assert_equal "$(jq -r .mode <<<"$output")" plan
	run pack '{"type":"request","text":"x","mode":"plan"}' --mode normal
	assert_equal "$(jq -r .mode <<<"$output")" normal
	assert_equal "$(jq -r '.sections[-1].name' <<<"$output")" reporting
}

@test "Any mode name compiles: the stable prefix and that mode's sections" {
	printf 'review     review.txt      100  dynamic  review\n' >> "$SMALL/manifest"
	echo 'Review the change; do not edit files.' > "$SMALL/review.txt"
	xg-prompt-compile save small "$SMALL" >/dev/null
	normal=$(pack '' --variant small --mode normal)
	run pack '{"type":"request","text":"x","mode":"review"}' --variant small
	assert_success
	assert_equal "$(jq -r .mode <<<"$output")" review
	assert_equal "$(jq -c '[.sections[].name]' <<<"$output")" '["identity","long","reporting","review"]'
	assert_equal "$(jq -r .stable_sha256 <<<"$output")" "$(jq -r .stable_sha256 <<<"$normal")"
	run jq -r .system <<<"$output"
	assert_output --regexp $'\n\nReview the change; do not edit files\\.$'
	refute_output --partial 'Plan before acting'
	# A mode no manifest line names gets the stable prefix alone.
	run pack '' --variant small --mode audit_2
	assert_equal "$(jq -r .mode <<<"$output")" audit_2
	assert_equal "$(jq -c '[.sections[].name]' <<<"$output")" '["identity","long","reporting"]'
	assert_equal "$(jq -r .system <<<"$output")" "$(jq -r .system <<<"$normal")"
	# The shipped variant has sections for normal and plan only.
	run pack '{"type":"request","text":"x","mode":"review"}'
	assert_equal "$(jq -c '[.sections[].name]' <<<"$output")" "$STABLE"
	# The longest mode name xg-choices accepts is accepted here too.
	long="m$(printf '%063d' 0)"
	run xg-prompt-compile --mode "$long" </dev/null
	assert_success
	assert_equal "$(jq -r .mode <<<"$output")" "$long"
}

@test "A request xg-choices starts in any mode compiles in that mode" {
	unset OPENAI_API_KEY ANTHROPIC_API_KEY OPENROUTER_API_KEY
	export LLAMACPP_BASE_URL=http://127.0.0.1:8080/v1	# a local server configured
	run_split bash -c 'set -o pipefail; printf "%s\n" "{\"type\":\"request\",\"text\":\"x\",\"mode\":\"review\"}" |
		xg-choices start --mode review | xg-prompt-compile'
	assert_success
	run jq -c 'select(.type == "pack") | [.mode, (.model != null), [.sections[].name] == $s]' \
		--argjson s "$STABLE" <<<"$output"
	assert_output '["review",true,true]'
}

@test "Identity names the model only when it is known" {
	run xg-prompt-compile --text </dev/null
	assert_line --index 0 --regexp '^You are xg, a coding agent run from the command line\. '
	refute_output --partial 'based on'
	run pack '' --model openai/gpt-5
	assert_equal "$(jq -r .model <<<"$output")" openai/gpt-5
	run jq -r '.system | split("\n")[0]' <<<"$output"
	assert_output --partial ", based on openai/gpt-5. "
	run pack ''
	assert_equal "$(jq -r .model <<<"$output")" null
}

@test "The model comes from --model, else the model record, else the request" {
	req='{"type":"request","text":"x","model":"req/m"}'
	rec='{"type":"model","provider":"rec","id":"rec/m","effort":"low","source":"mode"}'
	run pack "$req"
	assert_equal "$(jq -r .model <<<"$output")" req/m
	run pack "$req"$'\n'"$rec"
	assert_equal "$(jq -r .model <<<"$output")" rec/m
	run pack "$rec"$'\n'"$req"
	assert_equal "$(jq -r .model <<<"$output")" rec/m
	run pack "$req"$'\n'"$rec" --model flag/m
	assert_equal "$(jq -r .model <<<"$output")" flag/m
	run jq -r .system <<<"$output"
	assert_output --partial 'based on flag/m'
}

@test "Records pass through unchanged and in order, the pack last" {
	in=$'{"type":"request","text":"x",  "mode":"normal","extra":[1, 2]}\n{"type":"snapshot","commit":null}\n{"type":"unknown","z":1}'
	run bash -c 'printf "%s\n" "$1" | xg-prompt-compile' _ "$in"
	assert_success
	assert_equal "$(printf '%s\n' "$output" | head -3)" "$in"
	assert_equal "$(printf '%s\n' "$output" | wc -l)" 4
	assert_equal "$(printf '%s\n' "$output" | tail -1 | jq -r .type)" pack
}

@test "A pack follows each request's model at once, while the input is still open" {
	# The input stays open until the pack has been read back: a compile
	# that waited for the end of its input would never answer (the reader
	# gives up after 20 s and the test fails).
	run python3 - <<'PY'
import json, select, subprocess, sys
p = subprocess.Popen(["xg-prompt-compile"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def until_pack():
    seen = []
    while True:
        r, _, _ = select.select([p.stdout], [], [], 20)
        if not r:
            sys.exit("no pack while the input was open; saw %r" % seen)
        line = p.stdout.readline()
        if not line:
            sys.exit("output ended early; saw %r" % seen)
        rec = json.loads(line)
        seen.append(rec["type"])
        if rec["type"] == "pack":
            return seen, rec
def send(*recs):
    for r in recs:
        p.stdin.write((json.dumps(r) + "\n").encode())
    p.stdin.flush()
send({"type": "request", "text": "one", "mode": "normal"}, {"type": "model", "id": "a/first"})
seen, pack = until_pack()
print(" ".join(seen), pack["mode"], pack["model"])
send({"type": "request", "text": "two", "mode": "plan"}, {"type": "model", "id": "a/second"})
seen, pack = until_pack()
print(" ".join(seen), pack["mode"], pack["model"])
send({"type": "snapshot", "commit": None})
p.stdin.close()
print(" ".join(json.loads(l)["type"] for l in p.stdout), p.wait())
PY
	assert_success
	assert_line --index 0 "request model pack normal a/first"
	assert_line --index 1 "request model pack plan a/second"
	# Both requests are served: nothing more at the end but what passed.
	assert_line --index 2 "snapshot 0"
}

@test "A request no model record follows gets its pack at the end" {
	in=$'{"type":"request","text":"x","mode":"normal"}\n{"type":"model","id":"a/m"}\n{"type":"request","text":"y","mode":"plan"}\n{"type":"note"}'
	run bash -c 'printf "%s\n" "$1" | xg-prompt-compile | jq -r "[.type, .mode // \"\", .model // \"\"] | join(\" \")"' _ "$in"
	assert_success
	assert_output $'request normal \nmodel  \npack normal a/m\nrequest plan \nnote  \npack plan a/m'
}

@test "The stable_sha256 is the SHA-256 of the stable prefix" {
	sha=$(xg-prompt-compile --model openai/gpt-5 </dev/null | jq -r .stable_sha256)
	# In normal mode the default variant's system prompt is the stable prefix.
	want=$(xg-prompt-compile --text --model openai/gpt-5 </dev/null |
		head -c -1 | sha256sum | cut -d' ' -f1)
	assert_equal "$sha" "$want"
	other=$(xg-prompt-compile --model anthropic/claude </dev/null | jq -r .stable_sha256)
	[ "$other" != "$sha" ]
}

@test "Compiling is deterministic across runs and working directories" {
	req='{"type":"request","text":"x","mode":"plan","model":"openai/gpt-5"}'
	a=$(pack "$req")
	b=$(pack "$req")
	mkdir -p "$BATS_TEST_TMPDIR/elsewhere/deeper"
	c=$(cd "$BATS_TEST_TMPDIR/elsewhere/deeper" && pack "$req")
	d=$(cd / && pack "$req")
	[ -n "$a" ]
	assert_equal "$b" "$a"
	assert_equal "$c" "$a"
	assert_equal "$d" "$a"
}

@test "The text option prints only the system prompt" {
	run_split xg-prompt-compile --text --mode plan --model m/x <<<'{"type":"request","text":"x"}'
	assert_success
	want=$(pack '' --mode plan --model m/x | jq -r .system)
	assert_equal "$output" "$want"
	refute_output --partial '"type"'
}

@test "A section over its budget is cut at a paragraph boundary, with a notice" {
	run_split xg-prompt-compile --variant "nosuch" </dev/null
	assert_equal "$status" 65
	v=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	run xg-prompt-compile --variant small </dev/null
	assert_success
	assert_equal "$(printf '%s\n' "$output" | wc -l)" 2
	run jq -r 'select(.type == "notice") | .text' <<<"$output"
	assert_output "section 'long' is 94 characters, over its budget of 60: cut at a paragraph boundary to 50"
	p=$(xg-prompt-compile --variant "small@$v" </dev/null | tail -1)
	run jq -c '.sections[] | select(.name == "long")' <<<"$p"
	assert_output '{"name":"long","chars":50,"budget":60,"cut":true,"kind":"stable"}'
	run jq -r .system <<<"$p"
	assert_output $'You are xg.\n\nFirst paragraph, twenty-nine.\n\nSecond one, fifteen\n\nReport the outcome first.'
	run jq -c '[.sections[] | select(.name != "long") | .cut]' <<<"$p"
	assert_output '[false,false]'
}

@test "A section whose first paragraph is over its budget is cut to nothing" {
	printf 'One single paragraph that is longer than the sixty characters it may hold.\n' > "$SMALL/long.txt"
	xg-prompt-compile save small "$SMALL" >/dev/null
	run xg-prompt-compile --variant small </dev/null
	run jq -c 'select(.type == "pack") | .sections[1]' <<<"$output"
	assert_output '{"name":"long","chars":0,"budget":60,"cut":true,"kind":"stable"}'
}

@test "Reporting over its budget is never cut: exit 78 with both numbers" {
	printf '%0150d\n' 0 > "$SMALL/reporting.txt"
	run_split xg-prompt-compile save small "$SMALL"
	assert_equal "$status" 78
	assert_equal "$stderr" "xg-prompt-compile: $SMALL/manifest:4: section 'reporting' is 150 characters, over its budget of 100; it is never cut"
	XG_SHARE_DIR="$BATS_TEST_TMPDIR/share"
	mkdir -p "$XG_SHARE_DIR"
	cp -R "$SMALL" "$XG_SHARE_DIR/prompts"
	run_split xg-prompt-compile --mode plan </dev/null
	assert_equal "$status" 78
	assert_output ""
	assert_regex "$stderr" "section 'reporting' is 150 characters, over its budget of 100"
}

@test "Reporting must be the last stable section" {
	printf 'extra  extra.txt  50  stable  all\n' >> "$SMALL/manifest"
	echo extra > "$SMALL/extra.txt"
	run_split xg-prompt-compile save small "$SMALL"
	assert_equal "$status" 78
	assert_equal "$stderr" "xg-prompt-compile: $SMALL/manifest:7: stable section 'extra' comes after 'reporting', which must be last"
}

@test "A broken manifest is exit 78 naming the file and the line" {
	m="$SMALL/manifest"
	check() {
		cp "$FIXTURES/prompt/small/manifest" "$m"
		sed -i "$1" "$m"
		run_split xg-prompt-compile save small "$SMALL"
		assert_equal "$status" 78
		assert_equal "$stderr" "xg-prompt-compile: $m:$2"
	}
	check '3s/ 60 / sixty /' "3: bad budget 'sixty': expected 1 to 1000000 characters"
	check '3s/ 60 / 0 /' "3: bad budget '0': expected 1 to 1000000 characters"
	check '2s/stable/steady/' "2: bad kind 'steady': expected 'stable' or 'dynamic'"
	check '5s/plan$/Review/' "5: bad mode 'Review' for a dynamic section"
	check '5s/plan$/-x/' "5: bad mode '-x' for a dynamic section"
	check '2s/ all$/ plan/' "2: bad mode 'plan' for a stable section"
	check '4s/ all$//' "4: expected 5 fields (name file budget kind mode), found 4"
	check '6s/^note /plan /' "6: section 'plan' is already on line 5"
	check '2s/identity.txt/..\/x/' "2: bad file name '../x'"
	check '3s/long.txt/missing.txt/' "3: cannot read section file 'missing.txt': No such file or directory"
	rm "$m"
	run_split xg-prompt-compile save small "$SMALL"
	assert_equal "$status" 78
	assert_equal "$stderr" "xg-prompt-compile: cannot read manifest '$m': No such file or directory"
}

@test "A broken shipped variant fails every compile with exit 78" {
	XG_SHARE_DIR="$BATS_TEST_TMPDIR/share"
	mkdir -p "$XG_SHARE_DIR"
	cp -R "$SMALL" "$XG_SHARE_DIR/prompts"
	rm "$XG_SHARE_DIR/prompts/plan.txt"
	run_split xg-prompt-compile <<<'{"type":"request","text":"x"}'
	assert_equal "$status" 78
	assert_equal "$stderr" "xg-prompt-compile: $XG_SHARE_DIR/prompts/manifest:5: cannot read section file 'plan.txt': No such file or directory"
}

@test "Every shipped section is non-empty and within its budget" {
	run xg-prompt-compile show default
	assert_success
	n=$(jq '.sections | length' <<<"$output")
	[ "$n" -eq 22 ]
	run jq -r '.sections[] | select((.text | rtrimstr("\n") | length) > .budget or (.text | test("\\S") | not)) | .name' <<<"$output"
	assert_output ""
	# Nothing is cut even for a long model name, in either mode.
	for mode in normal plan; do
		run pack '' --mode "$mode" --model provider/a-rather-long-model-name-for-testing
		assert_equal "$(jq '[.sections[] | select(.cut)] | length' <<<"$output")" 0
	done
}

@test "The default pack carries the templates the other programs fill in" {
	run pack ''
	run jq -r '.templates | keys | join(" ")' <<<"$output"
	assert_output "checkpoint compaction completion-check goal-budget-limit goal-continuation goal-objective-updated plan-repair slice-continue slice-end subagent"
	run pack ''
	run jq -r '.templates["goal-continuation"]' <<<"$output"
	assert_output --partial $'<objective>\n{{objective}}\n</objective>'
	run pack ''
	run jq -r '.templates["slice-continue"]' <<<"$output"
	assert_output --partial '{{?next}}'
}

@test "The default templates use only the values the man page lists" {
	names='[scan("\\{\\{[?/]?([a-z]+)\\}\\}") | .[0]] | unique | join(" ")'
	run jq -r ".templates | to_entries[] | \"\(.key): \(.value | $names)\"" \
		< <(xg-prompt-compile </dev/null)
	assert_output - <<-'EOF'
	plan-repair: problems
	goal-continuation: objective review
	goal-budget-limit: limit objective
	goal-objective-updated: objective
	completion-check: 
	compaction: 
	checkpoint: plan request todo
	slice-end: limit
	slice-continue: next
	subagent: 
	EOF
	# The stable prefix's only value is the model.
	run jq -r "[.sections[] | select(.kind == \"stable\") | .text] | add | $names" \
		< <(xg-prompt-compile show default)
	assert_output model
}

@test "Templates render placeholders, and data is escaped" {
	run xg-test prompt render 'a{{?m}}, on {{m}}{{/m}}; {{x}}.' '{"m":"M","x":"X"}'
	assert_output 'a, on M; X.'
	run xg-test prompt render 'a{{?m}}, on {{m}}{{/m}}; {{x}}.' '{"m":""}'
	assert_output 'a; .'
	run xg-test prompt escape 'do <b>this</b> & </objective>'
	assert_output 'do &lt;b&gt;this&lt;/b&gt; &amp; &lt;/objective&gt;'
}

@test "The SHA-256 matches the standard test vectors, with and without the CPU's SHA instructions" {
	local portable
	for portable in "" --portable; do
		run xg-test prompt sha256 $portable <<<''
		assert_output 01ba4719c80b6fe911b091a7c05124b64eeece964e09c058ef8f9805daca546b
		run xg-test prompt sha256 $portable < /dev/null
		assert_output e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
		run bash -c "printf abc | xg-test prompt sha256 $portable"
		assert_output ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
		run bash -c "printf abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq | xg-test prompt sha256 $portable"
		assert_output 248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1
		run bash -c "printf a | xg-test prompt sha256 $portable 1000000"
		assert_output cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0
	done
}

@test "The SHA-256 agrees with sha256sum at every block boundary, both ways" {
	# Where the CPU has SHA-NI the default uses it and --portable does not;
	# lengths on each side of the 56-byte padding limit and the 64-byte
	# block, and some of many blocks.
	local data="$BATS_TEST_TMPDIR/data" n want
	head -c 70000 /dev/urandom >"$data"
	for n in 0 1 55 56 57 63 64 65 119 120 127 128 129 1000 4096 65537 70000; do
		want=$(head -c $n "$data" | sha256sum | cut -d' ' -f1)
		run bash -c "head -c $n '$data' | xg-test prompt sha256"
		assert_output "$want"
		run bash -c "head -c $n '$data' | xg-test prompt sha256 --portable"
		assert_output "$want"
	done
}

@test "A bad mode is a usage error as an option, bad request fields are data errors" {
	run_split xg-prompt-compile --mode 'Re view' </dev/null
	assert_equal "$status" 2
	assert_regex "$stderr" "'Re view' is not a mode name \\(1 to 64 of \\[a-z0-9_-\\], starting with a letter\\)"
	run_split xg-prompt-compile --mode "a$(printf '%064d' 0)" </dev/null
	assert_equal "$status" 2
	for bad in '"Review"' '"9lives"' '"-x"' '""' "\"a$(printf '%064d' 0)\""; do
		run_split xg-prompt-compile <<<$'{"type":"snapshot"}\n{"type":"request","text":"x","mode":'"$bad}"
		assert_equal "$status" 65
		assert_equal "$stderr" "xg-prompt-compile: standard input:2: field 'mode' is '$(jq -r . <<<"$bad")', which is not a mode name (1 to 64 of [a-z0-9_-], starting with a letter)"
	done
	run_split xg-prompt-compile <<<'{"type":"request","text":"x","mode":["plan"]}'
	assert_equal "$status" 65
	assert_equal "$stderr" "xg-prompt-compile: standard input:1: field 'mode' of a request record is an array, not a string"
	run_split xg-prompt-compile <<<'{"type":"request","text":"x","variant":7}'
	assert_equal "$status" 65
	assert_equal "$stderr" "xg-prompt-compile: standard input:1: field 'variant' of a request record is a number, not a string"
	run_split xg-prompt-compile <<<'{"type":"request","text":"x","variant":"small@"}'
	assert_equal "$status" 65
	assert_equal "$stderr" "xg-prompt-compile: standard input:1: field 'variant' is 'small@', not NAME or NAME@VERSION"
	run_split xg-prompt-compile <<<'{"type":"request","text":"x","conversation":"../x"}'
	assert_equal "$status" 65
	assert_equal "$stderr" "xg-prompt-compile: standard input:1: field 'conversation' is '../x', which is not a conversation id (1 to 128 of [A-Za-z0-9._-], not starting with '.' or '-')"
	[ ! -e "$XG_HOME/state" ]
}

@test "The default variant is listed, read-only, with the shipped files' version" {
	v=$(default_version)
	assert_regex "$v" '^[0-9a-f]{12}$'
	run xg-prompt-compile variants
	assert_success
	assert_output "{\"type\":\"variant\",\"name\":\"default\",\"head\":\"$v\",\"versions\":1,\"readonly\":true}"
	run xg-prompt-compile versions default
	assert_output "{\"type\":\"version\",\"variant\":\"default\",\"version\":\"$v\",\"head\":true,\"readonly\":true,\"parent\":null,\"created\":null,\"tunedFor\":null,\"note\":null}"
	run_split xg-prompt-compile save default "$SMALL"
	assert_equal "$status" 77
	assert_regex "$stderr" "variant 'default' is read-only"
	run_split xg-prompt-compile head default "$v"
	assert_equal "$status" 77
}

@test "A version is named by its files, wherever they are" {
	cp -RL "$XG_SHARE_DIR/prompts" "$BATS_TEST_TMPDIR/copy"
	run xg-prompt-compile save mine "$BATS_TEST_TMPDIR/copy"
	assert_success
	assert_equal "$(jq -r .version <<<"$output")" "$(default_version)"
	echo >> "$BATS_TEST_TMPDIR/copy/todo.md"
	run xg-prompt-compile save mine "$BATS_TEST_TMPDIR/copy"
	[ "$(jq -r .version <<<"$output")" != "$(default_version)" ]
}

@test "Save makes a version whose parent is the head, and moves the head" {
	run xg-prompt-compile save small "$SMALL" --tuned-for openai/gpt-5 --note first
	assert_success
	v1=$(jq -r .version <<<"$output")
	run jq -c '[.variant, .head, .readonly, .parent, .tunedFor, .note]' <<<"$output"
	assert_output '["small",true,false,null,"openai/gpt-5","first"]'
	assert_regex "$(xg-prompt-compile head small | jq -r .created)" '^20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T'
	echo 'More.' >> "$SMALL/plan.txt"
	v2=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	[ "$v2" != "$v1" ]
	run xg-prompt-compile head small
	assert_equal "$(jq -r '[.version, .parent] | join(" ")' <<<"$output")" "$v2 $v1"
	d="$XG_HOME/data/variants/small"
	assert_equal "$(cat "$d/HEAD")" "$v2"
	assert_equal "$(cat "$d/versions/$v2/plan.txt")" $'Plan before acting.\nMore.'
	run jq -c . "$d/versions/$v1/meta.json"
	assert_output --regexp '^\{"parent":null,"created":"[^"]+","tunedFor":"openai/gpt-5","note":"first"\}$'
	run xg-prompt-compile versions small
	assert_equal "$(jq -r '"\(.version) \(.head)"' <<<"$output" | tr '\n' ' ')" "$v1 false $v2 true "
	run xg-prompt-compile variants
	assert_line --index 1 "{\"type\":\"variant\",\"name\":\"small\",\"head\":\"$v2\",\"versions\":2,\"readonly\":false}"
}

@test "Saving the files of an existing version moves the head back to it" {
	v1=$(xg-prompt-compile save small "$SMALL" --note first | jq -r .version)
	cp "$SMALL/plan.txt" "$BATS_TEST_TMPDIR/plan.txt"
	echo 'More.' >> "$SMALL/plan.txt"
	xg-prompt-compile save small "$SMALL" >/dev/null
	cp "$BATS_TEST_TMPDIR/plan.txt" "$SMALL/plan.txt"
	run_split xg-prompt-compile save small "$SMALL" --note again
	assert_success
	assert_equal "$(jq -r '[.version, .note, .head] | join(" ")' <<<"$output")" "$v1 first true"
	assert_equal "$stderr" "xg-prompt-compile: small@$v1 already holds these files: no new version; it keeps the tunedFor and note it was saved with (--tuned-for and --note are not applied)"
	assert_equal "$(xg-prompt-compile versions small | wc -l)" 2
	run_split xg-prompt-compile save small "$SMALL"
	assert_success
	assert_equal "$stderr" "xg-prompt-compile: small@$v1 already holds these files: no new version; it keeps the tunedFor and note it was saved with"
	assert_equal "$(jq -r .note <<<"$output")" first
	# A new version says nothing.
	echo 'Other.' >> "$SMALL/plan.txt"
	run_split xg-prompt-compile save small "$SMALL" --note new
	assert_success
	assert_equal "$stderr" ""
}

@test "A variant's HEAD that names no version of it is exit 78 naming the file" {
	v=$(xg-prompt-compile save mine "$SMALL" --tuned-for openai/gpt-5 | jq -r .version)
	h="$XG_HOME/data/variants/mine/HEAD"
	repair="'xg-prompt-compile head mine VERSION' repairs it"
	check() {
		for cmd in "versions mine" "head mine" "show mine" "variants"; do
			run_split xg-prompt-compile $cmd
			assert_equal "$status" 78
			assert_equal "$stderr" "xg-prompt-compile: $1"
			assert_output ""
		done
		run_split xg-prompt-compile --variant mine </dev/null
		assert_equal "$status" 78
		assert_equal "$stderr" "xg-prompt-compile: $1"
		# a conversation is not pinned to a broken head
		run_split xg-prompt-compile <<<'{"type":"request","text":"x","variant":"mine","conversation":"h1"}'
		assert_equal "$status" 78
		[ ! -e "$XG_HOME/state/conversations/h1.jsonl" ]
	}
	echo garbage > "$h"
	check "'$h' names version 'garbage', which does not exist; $repair"
	: > "$h"
	check "'$h' is empty; $repair"
	printf '%s\n%s\n' "$v" "$v" > "$h"
	check "'$h' does not hold a version id; $repair"
	printf 'not/a version\n' > "$h"
	check "'$h' does not hold a version id; $repair"
	# Saving on a broken head is refused: its parent would be unknown.
	echo 'More.' >> "$SMALL/plan.txt"
	run_split xg-prompt-compile save mine "$SMALL"
	assert_equal "$status" 78
	assert_equal "$stderr" "xg-prompt-compile: '$h' does not hold a version id; $repair"
	# The repair the message names works.
	run xg-prompt-compile head mine "$v"
	assert_success
	assert_equal "$(jq -r '[.version, .head] | join(" ")' <<<"$output")" "$v true"
	run pack '' --variant mine
	assert_success
	assert_equal "$(jq -r .version <<<"$output")" "$v"
}

@test "A version's broken meta.json is exit 78 naming the file and the line" {
	v=$(xg-prompt-compile save small "$SMALL" --tuned-for openai/gpt-5 | jq -r .version)
	m="$XG_HOME/data/variants/small/versions/$v/meta.json"
	check() {
		for cmd in "versions small" "head small" "show small@$v"; do
			run_split xg-prompt-compile $cmd
			assert_equal "$status" 78
			assert_equal "$stderr" "xg-prompt-compile: $1"
		done
		# The compile fails rather than lose the tunedFor notice.
		run_split xg-prompt-compile --variant small --model anthropic/claude </dev/null
		assert_equal "$status" 78
		assert_equal "$stderr" "xg-prompt-compile: $1"
		assert_output ""
	}
	# (not a missing comma: libjq 1.6 leaks a value on that error, which
	# a SANITIZE build reports)
	printf '{"parent": null,\n "tunedFor": "openai/gpt-5",,\n "note": null}\n' > "$m"
	check "cannot parse '$m': Expected value before ',' at line 2, column 29"
	printf '["openai/gpt-5"]\n' > "$m"
	check "'$m' must hold a JSON object, not an array"
	printf '{"parent":null,"created":"2026-11-30T10:00:00.000Z","tunedFor":5,"note":null}\n' > "$m"
	check "'$m': field 'tunedFor' is a number, not a string"
	rm "$m"
	check "'$m' is missing"
	# Well-formed again, the notice is back.
	printf '{"parent":null,"created":"2026-11-30T10:00:00.000Z","tunedFor":"openai/gpt-5","note":null}\n' > "$m"
	run xg-prompt-compile --variant small --model anthropic/claude </dev/null
	assert_success
	assert_line --index 0 --partial "small@$v is tuned for openai/gpt-5; this run uses anthropic/claude"
}

@test "Head restores or reverts to an existing version" {
	v1=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	echo 'More.' >> "$SMALL/plan.txt"
	v2=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	run xg-prompt-compile head small "$v1"
	assert_success
	assert_equal "$(jq -r '[.version, .head] | join(" ")' <<<"$output")" "$v1 true"
	assert_equal "$(xg-prompt-compile --variant small </dev/null | tail -1 | jq -r .version)" "$v1"
	run xg-prompt-compile head small "$v2"
	assert_equal "$(xg-prompt-compile head small | jq -r .version)" "$v2"
	run_split xg-prompt-compile head small 0123456789ab
	assert_equal "$status" 65
	assert_equal "$stderr" "xg-prompt-compile: no version '0123456789ab' of variant 'small'"
	run_split xg-prompt-compile head nosuch
	assert_equal "$status" 65
	assert_equal "$stderr" "xg-prompt-compile: no variant 'nosuch'"
}

@test "Show gives a version's sections and texts" {
	v=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	run xg-prompt-compile show "small@$v"
	assert_success
	run jq -c '.sections[] | [.name, .file, .budget, .kind, .mode]' <<<"$output"
	assert_line --index 0 '["identity","identity.txt",200,"stable","all"]'
	assert_line --index 4 '["note","note.txt",100,"dynamic","-"]'
	run bash -c "xg-prompt-compile show small@$v | jq -j '.sections[2].text'"
	assert_output "$(cat "$SMALL/reporting.txt")"
	run_split xg-prompt-compile show 'small@bad/version'
	assert_equal "$status" 65
	assert_regex "$stderr" "is not a variant reference"
}

@test "A conversation's first compile pins the version it used" {
	v=$(default_version)
	run pack '{"type":"request","text":"x","conversation":"c1"}'
	assert_equal "$(jq -r .version <<<"$output")" "$v"
	f="$XG_HOME/state/conversations/c1.jsonl"
	run jq -c 'select(.type == "variant_change") | del(.at)' "$f"
	assert_output "{\"type\":\"variant_change\",\"to\":\"default@$v\",\"reason\":\"first compile\"}"
	# the shipped version is kept, so the pin survives an upgrade
	[ -f "$XG_HOME/data/variants/default/versions/$v/meta.json" ]
	cmp "$XG_HOME/data/variants/default/versions/$v/role.md" "$XG_SHARE_DIR/prompts/role.md"
	pack '{"type":"request","text":"y","conversation":"c1"}' >/dev/null
	assert_equal "$(grep -c variant_change "$f")" 1
}

@test "A conversation that does not exist yet starts at its first compile" {
	f="$XG_HOME/state/conversations/new-one.jsonl"
	[ ! -e "$f" ]
	mkdir "$BATS_TEST_TMPDIR/proj"
	cd "$BATS_TEST_TMPDIR/proj"
	run pack '{"type":"request","text":"x","conversation":"new-one"}'
	assert_success
	run jq -c 'del(.created, .at)' "$f"
	assert_output - <<-EOF
	{"type":"conversation","schema":"xg/1","id":"new-one","cwd":"$BATS_TEST_TMPDIR/proj"}
	{"type":"variant_change","to":"default@$(default_version)","reason":"first compile"}
	EOF
	# --text compiles the same way, and pins too.
	run_split xg-prompt-compile --text <<<'{"type":"request","text":"x","conversation":"new-two"}'
	assert_success
	assert_equal "$(grep -c variant_change "$XG_HOME/state/conversations/new-two.jsonl")" 1
}

@test "A head moved after the conversation pinned its version is shown, not followed" {
	v1=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	req='{"type":"request","text":"x","variant":"small","conversation":"c2"}'
	pack "$req" >/dev/null
	echo 'More.' >> "$SMALL/plan.txt"
	v2=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	run bash -c 'printf "%s\n" "$1" | xg-prompt-compile' _ "$req"
	assert_success
	run jq -r 'select(.type == "notice") | .text | select(startswith("head"))' <<<"$output"
	assert_output "head of variant 'small' moved to $v2; this conversation stays on small@$v1"
	run pack "$req"
	assert_equal "$(jq -r .version <<<"$output")" "$v1"
	# A conversation without a variant follows the head as it was when pinned.
	run pack '{"type":"request","text":"x","variant":"small","conversation":"c3"}'
	assert_equal "$(jq -r .version <<<"$output")" "$v2"
}

@test "A conversation on the shipped prompts keeps its version after an upgrade" {
	XG_SHARE_DIR="$BATS_TEST_TMPDIR/share"
	mkdir -p "$XG_SHARE_DIR"
	cp -RL "$XG_SRCDIR/share/xg/prompts" "$XG_SHARE_DIR/prompts"
	old=$(default_version)
	before=$(pack '{"type":"request","text":"x","conversation":"up"}')
	printf '\nA new paragraph from the upgrade.\n' >> "$XG_SHARE_DIR/prompts/todo.md"
	new=$(default_version)
	[ "$new" != "$old" ]
	run bash -c 'printf "%s\n" "$1" | xg-prompt-compile' _ '{"type":"request","text":"x","conversation":"up"}'
	assert_success
	assert_line --index 1 "{\"type\":\"notice\",\"from\":\"xg-prompt-compile\",\"text\":\"head of variant 'default' moved to $new; this conversation stays on default@$old\"}"
	assert_equal "$(printf '%s\n' "$output" | tail -1)" "$before"
	# A new conversation starts on the new prompts.
	run pack '{"type":"request","text":"x","conversation":"fresh"}'
	assert_equal "$(jq -r .version <<<"$output")" "$new"
	run xg-prompt-compile versions default
	assert_equal "$(jq -r '"\(.version) \(.head)"' <<<"$output" | tr '\n' ' ')" "$old false $new true "
}

@test "Select appends the person's choice, which the next compile uses" {
	v1=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	d=$(default_version)
	pack '{"type":"request","text":"x","conversation":"c4"}' >/dev/null
	run xg-prompt-compile select c4 "small@$v1"
	assert_success
	assert_output "{\"type\":\"variant_change\",\"from\":\"default@$d\",\"to\":\"small@$v1\",\"reason\":\"selected\",\"conversation\":\"c4\"}"
	run jq -c 'select(.type == "variant_change") | del(.at)' "$XG_HOME/state/conversations/c4.jsonl"
	assert_line --index 1 "{\"type\":\"variant_change\",\"from\":\"default@$d\",\"to\":\"small@$v1\",\"reason\":\"selected\"}"
	run pack '{"type":"request","text":"x","conversation":"c4"}'
	assert_equal "$(jq -r '[.variant, .version] | join("@")' <<<"$output")" "small@$v1"
	run_split xg-prompt-compile select c4 small@0123456789ab
	assert_equal "$status" 65
	run_split xg-prompt-compile select c4 small
	assert_equal "$status" 2
	run_split xg-prompt-compile select 'bad/id' "small@$v1"
	assert_equal "$status" 65
	assert_equal "$(grep -c variant_change "$XG_HOME/state/conversations/c4.jsonl")" 2
}

@test "The version is the request's, then the conversation's, then the head" {
	v1=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	echo 'More.' >> "$SMALL/plan.txt"
	v2=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	d=$(default_version)
	# the head
	assert_equal "$(pack '{"type":"request","text":"x","variant":"small"}' | jq -r .version)" "$v2"
	assert_equal "$(pack '' | jq -r '[.variant, .version] | join("@")')" "default@$d"
	# the conversation's selection over the head
	xg-prompt-compile select c5 "small@$v1" >/dev/null
	assert_equal "$(pack '{"type":"request","text":"x","conversation":"c5"}' | jq -r .version)" "$v1"
	assert_equal "$(pack '{"type":"request","text":"x","variant":"small","conversation":"c5"}' | jq -r .version)" "$v1"
	assert_equal "$(grep -c variant_change "$XG_HOME/state/conversations/c5.jsonl")" 1
	# an explicit NAME@VERSION over the conversation's selection
	xg-prompt-compile select c6 "small@$v1" >/dev/null
	assert_equal "$(pack "{\"type\":\"request\",\"text\":\"x\",\"variant\":\"small@$v2\",\"conversation\":\"c6\"}" | jq -r .version)" "$v2"
	xg-prompt-compile select c7 "small@$v1" >/dev/null
	run pack '{"type":"request","text":"x","conversation":"c7"}' --variant "default@$d"
	assert_equal "$(jq -r '[.variant, .version] | join("@")' <<<"$output")" "default@$d"
	# a request naming another variant bare gets that variant's head
	xg-prompt-compile select c8 "small@$v1" >/dev/null
	assert_equal "$(pack '{"type":"request","text":"x","variant":"default","conversation":"c8"}' | jq -r .version)" "$d"
}

@test "A version the request names is the person's pick: the conversation moves there and stays" {
	v1=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	echo 'More.' >> "$SMALL/plan.txt"
	v2=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	d=$(default_version)
	f="$XG_HOME/state/conversations/pick.jsonl"
	changes() { jq -c 'select(.type == "variant_change") | del(.at)' "$f"; }
	pack '{"type":"request","text":"x","conversation":"pick"}' >/dev/null
	# As xg run --variant small@V1 writes the request.
	run bash -c 'printf "%s\n" "$1" | xg-prompt-compile' _ \
		"{\"type\":\"request\",\"text\":\"x\",\"variant\":\"small@$v1\",\"conversation\":\"pick\"}"
	assert_success
	run jq -r 'select(.type == "notice") | .text | select(startswith("conversation"))' <<<"$output"
	assert_output "conversation 'pick' moves from default@$d to small@$v1, as the request asks; its later runs stay on small@$v1"
	run changes
	assert_output - <<-EOF
	{"type":"variant_change","to":"default@$d","reason":"first compile"}
	{"type":"variant_change","from":"default@$d","to":"small@$v1","reason":"requested"}
	EOF
	# The next run that names no version stays there: no move, and the
	# head (v2) is shown, not followed.
	run bash -c 'printf "%s\n" "$1" | xg-prompt-compile' _ '{"type":"request","text":"y","conversation":"pick"}'
	assert_success
	assert_equal "$(printf '%s\n' "$output" | jq -r 'select(.type == "pack") | "\(.variant)@\(.version)"')" "small@$v1"
	assert_equal "$(printf '%s\n' "$output" | jq -r 'select(.type == "notice") | .text | select(startswith("section") | not)')" \
		"head of variant 'small' moved to $v2; this conversation stays on small@$v1"
	# Naming the selection again, or its variant bare (whose head is v2),
	# moves nothing and appends nothing.
	assert_equal "$(pack "{\"type\":\"request\",\"text\":\"x\",\"variant\":\"small@$v1\",\"conversation\":\"pick\"}" | jq -r .version)" "$v1"
	assert_equal "$(pack '{"type":"request","text":"x","variant":"small","conversation":"pick"}' | jq -r .version)" "$v1"
	assert_equal "$(changes | wc -l)" 2
	# --variant is the same pick; another variant bare picks its head.
	pack '{"type":"request","text":"x","conversation":"pick"}' --variant "small@$v2" >/dev/null
	pack '{"type":"request","text":"x","variant":"default","conversation":"pick"}' >/dev/null
	run changes
	assert_line --index 2 "{\"type\":\"variant_change\",\"from\":\"small@$v1\",\"to\":\"small@$v2\",\"reason\":\"requested\"}"
	assert_line --index 3 "{\"type\":\"variant_change\",\"from\":\"small@$v2\",\"to\":\"default@$d\",\"reason\":\"requested\"}"
	assert_equal "$(pack '{"type":"request","text":"x","conversation":"pick"}' | jq -r .version)" "$d"
	# A version that is not there moves nothing.
	run_split xg-prompt-compile <<<'{"type":"request","text":"x","variant":"small@0123456789ab","conversation":"pick"}'
	assert_equal "$status" 65
	assert_equal "$(changes | wc -l)" 4
}

@test "A version tuned for another model gives a notice" {
	v=$(xg-prompt-compile save small "$SMALL" --tuned-for openai/gpt-5 | jq -r .version)
	run xg-prompt-compile --variant small --model anthropic/claude </dev/null
	run jq -r 'select(.type == "notice") | .text' <<<"$output"
	assert_line "small@$v is tuned for openai/gpt-5; this run uses anthropic/claude"
	run xg-prompt-compile --variant small --model openai/gpt-5 </dev/null
	refute_output --partial 'tuned for'
	run xg-prompt-compile --variant small </dev/null
	refute_output --partial 'tuned for'
	run_split xg-prompt-compile --text --variant small --model anthropic/claude </dev/null
	assert_success
	assert_regex "$stderr" "tuned for openai/gpt-5"
	refute_output --partial 'tuned for'
}

@test "A conversation pinned to a version that is gone is exit 78" {
	mkdir -p "$XG_HOME/state/conversations"
	printf '%s\n' '{"type":"conversation","schema":"xg/1","id":"c6"}' \
		'{"type":"variant_change","to":"small@0123456789ab","at":"2026-11-30T10:00:00.000Z"}' \
		> "$XG_HOME/state/conversations/c6.jsonl"
	run_split xg-prompt-compile <<<'{"type":"request","text":"x","conversation":"c6"}'
	assert_equal "$status" 78
	assert_regex "$stderr" "no variant 'small'"
	xg-prompt-compile save small "$SMALL" >/dev/null
	run_split xg-prompt-compile <<<'{"type":"request","text":"x","conversation":"c6"}'
	assert_equal "$status" 78
	assert_regex "$stderr" "conversation 'c6' is on small@0123456789ab, which cannot be found"
}

@test "The man page's examples run" {
	run xg-prompt-compile --text --model openai/gpt-5
	assert_success
	assert_line --index 0 --partial 'based on openai/gpt-5'
	run bash -c "printf '%s\n' '{\"type\":\"request\",\"text\":\"fix the tests\",\"mode\":\"plan\"}' |
		xg-prompt-compile | jq -r 'select(.type == \"pack\") | .sections[].name'"
	assert_output "$(jq -r '.[]' <<<"$STABLE")"$'\nplan'
	cd "$BATS_TEST_TMPDIR"
	cp -RL "$XG_SHARE_DIR/prompts" mine
	printf '\nKeep replies short.\n' >> mine/role.md
	v=$(xg-prompt-compile save terse mine --note 'shorter role' | jq -r .version)
	run xg-prompt-compile select 20261130-105624-3f9a1c2b "terse@$v"
	assert_success
	run xg-prompt-compile versions terse
	assert_equal "$(jq -r .version <<<"$output")" "$v"
}

# ---- project instructions ----

# The tail of a pack's system prompt from its project section on.
project_text() {
	jq -r '.system | .[index("# Project instructions"):]'
}

@test "Project instructions: the person's file, then the repository's from its root down to the workspace" {
	git init -q repo
	mkdir -p repo/sub/deeper "$XG_HOME/config"
	before=$(cd repo/sub && pack '')
	before_plan=$(cd repo/sub && pack '' --mode plan)
	printf 'Root rule: use tabs.\n' > repo/AGENTS.md
	printf 'Sub rule: run make check.\n\n' > repo/sub/AGENTS.md
	printf 'Mine: be brief.\n' > "$XG_HOME/config/AGENTS.md"
	# Above the work tree's top: not the project's.
	printf 'Not this project.\n' > AGENTS.md
	export HOME="$BATS_TEST_TMPDIR"
	r=$(cd repo && pwd -P)
	cd repo/sub
	run pack ''
	assert_success
	run jq -c '.sections[-1] | [.name, .kind, .cut, .budget, [.files[] | [.path, .file, .bytes, .chars, .cut]]]' <<<"$output"
	assert_output "[\"project\",\"dynamic\",false,32768,[[\"~/home/config/AGENTS.md\",\"$XG_HOME/config/AGENTS.md\",16,15,false],[\"../AGENTS.md\",\"$r/AGENTS.md\",21,20,false],[\"AGENTS.md\",\"$r/sub/AGENTS.md\",27,25,false]]]"
	p=$(pack '')
	run project_text <<<"$p"
	assert_output - <<-'EOF'
	# Project instructions

	Instructions for working here, from AGENTS.md files: the person's own file first, when they have one, which holds in every project; then the repository's, from its root down to the working directory. Each file stands between <file> tags giving its path relative to the working directory, and what it says covers the directory it sits in and everything under it. Where two files disagree, the one deeper in the tree wins, and what the person asks in the conversation wins over them all.

	<file path="~/home/config/AGENTS.md">
	Mine: be brief.
	</file>

	<file path="../AGENTS.md">
	Root rule: use tabs.
	</file>

	<file path="AGENTS.md">
	Sub rule: run make check.
	</file>
	EOF
	# After the stable prefix, which stays the same: the same prefix and
	# hash as without the files, and the sections' sizes still add up.
	assert_equal "$(jq -r .stable_sha256 <<<"$p")" "$(jq -r .stable_sha256 <<<"$before")"
	run jq -r --arg b "$(jq -r .system <<<"$before")" \
		'.system | startswith($b + "\n\n# Project instructions\n\n")' <<<"$p"
	assert_output true
	run jq '(.sections | map(.chars) | add) + 2 * ((.sections | length) - 1) == (.system | length)' <<<"$p"
	assert_output true
	# In plan mode, before the mode's sections.
	run pack '' --mode plan
	assert_equal "$(jq -c '[.sections[].name]' <<<"$output")" "${STABLE%]},\"project\",\"plan\"]"
	assert_equal "$(jq -r .stable_sha256 <<<"$output")" "$(jq -r .stable_sha256 <<<"$before_plan")"
	# Deeper down the paths say how far up each file is; the request's cwd
	# is the workspace wherever the program runs.
	run bash -c 'cd deeper && xg-prompt-compile </dev/null | jq -r ".sections[-1].files[].path"'
	assert_output $'~/home/config/AGENTS.md\n../../AGENTS.md\n../AGENTS.md'
	run bash -c 'cd / && printf "%s\n" "$1" | xg-prompt-compile | jq -c "select(.type == \"pack\")"' _ \
		"{\"type\":\"request\",\"text\":\"x\",\"cwd\":\"$r/sub\"}"
	assert_equal "$output" "$p"
}

@test "Outside a repository only the workspace's own AGENTS.md is read" {
	mkdir -p outer/inner
	printf 'Outer.\n' > outer/AGENTS.md
	printf 'Inner.\n' > outer/inner/AGENTS.md
	cd outer/inner
	run pack ''
	assert_equal "$(jq -c '[.sections[-1].files[].path]' <<<"$output")" '["AGENTS.md"]'
	run project_text <<<"$output"
	assert_output --partial $'<file path="AGENTS.md">\nInner.\n</file>'
	refute_output --partial 'Outer.'
}

@test "Without AGENTS.md there is no project section and the pack is as it was" {
	git init -q repo
	mkdir repo/sub
	req='{"type":"request","text":"x","model":"m/x"}'
	a=$(pack "$req")
	b=$(cd repo/sub && pack "$req")
	c=$(cd / && pack "{\"type\":\"request\",\"text\":\"x\",\"model\":\"m/x\",\"cwd\":\"$PWD/repo\"}")
	assert_equal "$b" "$a"
	assert_equal "$c" "$a"
	run jq -c '[keys, [.sections[].name] == $s]' --argjson s "$STABLE" <<<"$a"
	assert_output '[["mode","model","sections","stable_sha256","system","templates","type","variant","version"],true]'
	# The system prompt is the stable sections' texts and nothing else.
	want=$(xg-prompt-compile show default | jq -r '[.sections[] | select(.kind == "stable") | .text
		| gsub("\\{\\{\\?model\\}\\}(?<a>.*?)\\{\\{/model\\}\\}"; .a) | gsub("\\{\\{model\\}\\}"; "m/x")
		| sub("\\s+\\z"; "")] | join("\n\n")')
	assert_equal "$(jq -r .system <<<"$a")" "$want"
	# A file with nothing but space adds nothing either.
	printf '\n  \n' > repo/AGENTS.md
	assert_equal "$(cd repo/sub && pack "$req")" "$a"
}

@test "Project instructions over their budget are cut with a notice, never silently" {
	mkdir -p "$XG_HOME/config" ws
	python3 -c 'print("\n\n".join("Rule %d: %s" % (i, "x" * 90) for i in range(400)))' \
		> "$XG_HOME/config/AGENTS.md"
	printf 'Workspace rule.\n' > ws/AGENTS.md
	cd ws
	run xg-prompt-compile </dev/null
	assert_success
	n=$(printf '%s\n' "$output" | jq -r 'select(.type == "notice") | .text')
	m=$(( $(wc -c < "$XG_HOME/config/AGENTS.md") - 1 ))
	assert_regex "$n" "^project instructions are [0-9]+ characters, over their budget of 32768: '$XG_HOME/config/AGENTS.md' is cut at a paragraph boundary to [0-9]+ of its $m characters; left out: 'AGENTS.md'\$"
	kept=$(sed -E 's/.* to ([0-9]+) of .*/\1/' <<<"$n")
	p=$(printf '%s\n' "$output" | jq -c 'select(.type == "pack")')
	run jq -c '.sections[-1] | [.cut, .chars <= 32768, .chars > 32000, [.files[] | [.chars, .cut]]]' <<<"$p"
	assert_output "[true,true,true,[[$kept,true],[0,true]]]"
	run jq '(.sections | map(.chars) | add) + 2 * ((.sections | length) - 1) == (.system | length)' <<<"$p"
	assert_output true
	# Cut between whole paragraphs, and the model is told what is missing.
	run project_text <<<"$p"
	refute_output --partial 'Workspace rule.'
	assert_output --regexp $'\n\n\\[Cut here for length: project instructions hold at most 32768 characters in all\\. The rest of this file, and any AGENTS\\.md files after it on the way down to the working directory, are left out; read them from disk when they bear on the work\\.\\]\n</file>$'
	printf '%s\n' "$p" | python3 -c '
import json, sys
system = json.loads(sys.stdin.read())["system"]
text = open(sys.argv[1]).read().rstrip()
head = "<file path=\"%s\">\n" % sys.argv[1]
kept = system[system.index(head) + len(head):system.index("\n\n[Cut here")]
assert len(kept) == int(sys.argv[2]), (len(kept), sys.argv[2])
assert text.startswith(kept) and text[len(kept):].startswith("\n\nRule "), kept[-40:]
' "$XG_HOME/config/AGENTS.md" "$kept"
	# A file too big to read whole is read as far as it needs to be.
	rm "$XG_HOME/config/AGENTS.md"
	python3 -c 'print("\n\n".join("Rule %d: %s" % (i, "y" * 200) for i in range(2000)))' > AGENTS.md
	run xg-prompt-compile </dev/null
	assert_success
	assert_regex "$(jq -r 'select(.type == "notice") | .text' <<<"$output")" \
		"^project instructions are more than [0-9]+ characters, over their budget of 32768: 'AGENTS.md' is cut at a paragraph boundary to [0-9]+ characters of its $(wc -c < AGENTS.md) bytes\$"
}

@test "A project file that cannot be read or is not a regular file is a notice, not a failure" {
	git init -q repo
	mkdir -p repo/AGENTS.md repo/sub/deeper "$XG_HOME/config"
	mkfifo repo/sub/AGENTS.md
	ln -s AGENTS.md repo/sub/deeper/AGENTS.md.loop
	ln -s AGENTS.md.loop repo/sub/deeper/AGENTS.md
	ln -s nowhere "$XG_HOME/config/AGENTS.md"
	r=$(cd repo && pwd -P)
	cd repo/sub/deeper
	run_split timeout 20 xg-prompt-compile </dev/null
	assert_success
	out=$output
	run jq -r 'select(.type == "notice") | .text' <<<"$out"
	assert_output - <<-EOF
	project instructions '$r/AGENTS.md' are not a regular file; going on without them
	project instructions '$r/sub/AGENTS.md' are not a regular file; going on without them
	cannot read project instructions '$r/sub/deeper/AGENTS.md': Too many levels of symbolic links; going on without them
	EOF
	assert_equal "$(printf '%s\n' "$out" | jq -c 'select(.type == "pack") | [.sections[].name] == $s' --argjson s "$STABLE")" true
	# A workspace that is not a directory is told the same way; a cwd
	# that is not a string is bad input.
	run_split xg-prompt-compile <<<'{"type":"request","text":"x","cwd":"/nonexistent/dir"}'
	assert_success
	assert_equal "$(jq -r 'select(.type == "notice") | .text' <<<"$output")" \
		"cannot use '/nonexistent/dir' as the workspace: No such file or directory; no project instructions"
	run_split xg-prompt-compile <<<'{"type":"request","text":"x","cwd":["a"]}'
	assert_equal "$status" 65
	assert_equal "$stderr" "xg-prompt-compile: standard input:1: field 'cwd' of a request record is an array, not a string"
}

@test "Project instructions that are not valid UTF-8 get U+FFFD, as all text does" {
	printf '\xef\xbb\xbfCaf\xe9 au lait; \xff\xfe twice.\n' > AGENTS.md
	run pack ''
	run jq -c '[(.system | contains("<file path=\"AGENTS.md\">\nCaf\ufffd au lait; \ufffd\ufffd twice.\n</file>")),
		(.system | contains("\ufeff")), .sections[-1].files[0].bytes]' <<<"$output"
	assert_output '[true,false,27]'
}

@test "xg-run reads the workspace's project instructions once a run; an edit reaches the next run" {
	export XG_TEST_KEY=test-secret-4d7a FAKE_PROVIDER_KEY=test-secret-4d7a
	git init -q repo
	mkdir repo/sub
	printf 'Root rule.\n' > repo/AGENTS.md
	printf 'Sub rule.\n' > repo/sub/AGENTS.md
	fake_provider_start <<-'EOF'
	{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "echo 'Edited mid-run.' >> AGENTS.md"}}]}
	{"text": "done"}
	{"text": "again"}
	EOF
	fake_catalog openai-chat
	# No pack upstream: xg-run compiles it, for the request's cwd.
	run_split xg-run --model fake/m <<<"{\"type\":\"request\",\"text\":\"go\",\"cwd\":\"$PWD/repo/sub\"}"
	assert_success
	assert_equal "$(cat repo/sub/AGENTS.md)" $'Sub rule.\nEdited mid-run.'
	conv=$(printf '%s\n' "$output" | jq -r 'select(.type == "run_start") | .conversation')
	run_split xg-run --model fake/m --conversation "$conv" <<<"{\"type\":\"request\",\"text\":\"more\",\"cwd\":\"$PWD/repo/sub\"}"
	assert_success
	fake_log '
import json
sys0 = [json.dumps(l["body"]["messages"][0]) for l in log]
assert len(sys0) == 3, len(sys0)
assert "Root rule." in sys0[0] and "Sub rule." in sys0[0], sys0[0]
assert "<file path=\\\"../AGENTS.md\\\">" in sys0[0], sys0[0]
# The same text on every request of the run, though the file changed.
assert sys0[1] == sys0[0]
assert "Edited mid-run." not in sys0[1]
assert "Edited mid-run." in sys0[2], sys0[2]'
}

@test "xg run --variant NAME@VERSION moves the conversation, and the next run stays there" {
	export XG_TEST_KEY=test-secret-4d7a FAKE_PROVIDER_KEY=test-secret-4d7a
	v1=$(xg-prompt-compile save small "$SMALL" | jq -r .version)
	d=$(default_version)
	fake_provider_start <<-'EOF'
	{"text": "one", "repeat": 4}
	EOF
	fake_catalog openai-chat
	started() { printf '%s\n' "$output" | jq -r 'select(.type == "run_start") | "\(.variant)@\(.version)"'; }
	run_split xg run --json --model fake/m 'first'
	assert_success
	conv=$(printf '%s\n' "$output" | jq -r 'select(.type == "run_start") | .conversation')
	assert_equal "$(started)" "default@$d"
	run_split xg run --json --model fake/m --variant "small@$v1" --conversation "$conv" 'second'
	assert_success
	assert_equal "$(started)" "small@$v1"
	# The first run pinned the version it compiled on: the request moves
	# the conversation from it.
	assert_equal "$(printf '%s\n' "$output" | jq -r 'select(.type == "notice") | .text | select(startswith("conversation"))')" \
		"conversation '$conv' moves from default@$d to small@$v1, as the request asks; its later runs stay on small@$v1"
	run_split xg run --json --model fake/m --conversation "$conv" 'third'
	assert_success
	assert_equal "$(started)" "small@$v1"
	run_split xg run --json --model fake/m --variant "default@$d" --conversation "$conv" 'fourth'
	assert_success
	assert_equal "$(started)" "default@$d"
	assert_equal "$(printf '%s\n' "$output" | jq -r 'select(.type == "notice") | .text | select(startswith("conversation"))')" \
		"conversation '$conv' moves from small@$v1 to default@$d, as the request asks; its later runs stay on default@$d"
	run jq -c 'select(.type == "variant_change") | [.from, .to, .reason]' "$XG_HOME/state/conversations/$conv.jsonl"
	assert_output - <<-EOF
	[null,"default@$d","first compile"]
	["default@$d","small@$v1","requested"]
	["small@$v1","default@$d","requested"]
	EOF
}

@test "The man page's manifest example agrees with the shipped manifest" {
	run bash -c "sed -n '/^# name  *file  *budget/,/^\\.Ed/p' '$XG_SRCDIR/man/xg-prompt-compile.1' | sed '1d;\$d'"
	assert_success
	[ "${#lines[@]}" -ge 3 ]
	for l in "${lines[@]}"; do
		read -r name file budget kind mode <<<"$l"
		run awk -v n="$name" '$1 == n { print $2, $3, $4, $5 }' "$XG_SRCDIR/prompts/manifest"
		assert_output "$file $budget $kind $mode"
	done
}
