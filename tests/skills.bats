#!/usr/bin/env bats
# Skills (xg-prompt-compile(1), xg(1) skills): where they are found and
# which of one name wins, the section a pack lists them in and its budget,
# a front matter that leaves a skill out, $NAME in a request, and the bytes
# a provider gets (the cached prefix the same with a skill or without).

load lib/helper
load lib/fake-provider
load lib/xg-run

teardown() {
	fake_provider_stop
}

# skill DIR NAME DESCRIPTION [BODY]: DIR/SKILL.md with that front matter.
skill() {
	mkdir -p "$1"
	printf -- '---\nname: %s\ndescription: %s\n---\n%s\n' "$2" "$3" "${4:-Steps of $2.}" > "$1/SKILL.md"
}

# The pack record of a compile fed "$1" (records) with options "${@:2}".
pack() {
	printf '%s\n' "$1" | xg-prompt-compile "${@:2}" | jq -c 'select(.type == "pack")'
}

notices() {
	printf '%s\n' "$output" | jq -r 'select(.type == "notice") | .text'
}

# A repository with a workspace two levels down, and the person's config.
repo_setup() {
	git init -q repo
	mkdir -p repo/sub/ws "$XG_HOME/config/skills"
	R=$(cd repo && pwd -P)
	OWN="$XG_HOME/config/skills"
}

@test "Skills are found in the person's folder and in .agents/skills from the repository's root down to the workspace" {
	repo_setup
	skill "$OWN/mine" mine "The person's own."
	skill repo/.agents/skills/root root "At the root."
	skill repo/sub/.agents/skills/middle middle "In between."
	skill repo/sub/ws/.agents/skills/here here "In the workspace."
	# Above the repository: not the project's.
	skill .agents/skills/outside outside "Not this project."
	cd repo/sub/ws
	run_split xg-prompt-compile skills
	assert_success
	assert_equal "$stderr" ""
	run jq -c '[.type, .name, .from, .path, .file, .description]' <<<"$output"
	assert_output - <<-EOF
	["skill","here","project",".agents/skills/here/SKILL.md","$R/sub/ws/.agents/skills/here/SKILL.md","In the workspace."]
	["skill","middle","project","$R/sub/.agents/skills/middle/SKILL.md","$R/sub/.agents/skills/middle/SKILL.md","In between."]
	["skill","mine","person","$OWN/mine/SKILL.md","$OWN/mine/SKILL.md","The person's own."]
	["skill","root","project","$R/.agents/skills/root/SKILL.md","$R/.agents/skills/root/SKILL.md","At the root."]
	EOF
	# Outside a repository only the workspace's own folder is read.
	mkdir -p "$BATS_TEST_TMPDIR/plain/.agents/skills"
	cd "$BATS_TEST_TMPDIR/plain"
	skill .agents/skills/p p "Plain."
	skill "$BATS_TEST_TMPDIR/.agents/skills/above" above "Above."
	run xg-prompt-compile skills
	assert_equal "$(jq -r .name <<<"$output" | tr '\n' ' ')" "mine p "
}

@test "Of two skills of one name the person's wins, then the one deeper in the tree, each said once" {
	repo_setup
	skill "$OWN/release" release "Mine."
	skill repo/.agents/skills/release release "The project's."
	skill repo/.agents/skills/tests tests "Root tests."
	skill repo/sub/ws/.agents/skills/tests tests "Workspace tests."
	# A folder's name is not the skill's: the front matter's is.
	skill repo/sub/ws/.agents/skills/zz-other tests "Same name, later folder."
	cd repo/sub/ws
	run xg-prompt-compile skills
	assert_success
	assert_equal "$(notices)" "$(cat <<-EOF
	skill 'tests' is the project's '$R/sub/ws/.agents/skills/tests/SKILL.md'; '$R/sub/ws/.agents/skills/zz-other/SKILL.md', of the same name, is left out
	skill 'release' is the person's own '$OWN/release/SKILL.md'; '$R/.agents/skills/release/SKILL.md', of the same name, is left out
	skill 'tests' is the project's '$R/sub/ws/.agents/skills/tests/SKILL.md'; '$R/.agents/skills/tests/SKILL.md', of the same name, is left out
	EOF
	)"
	run jq -r 'select(.type == "skill") | "\(.name) \(.description)"' <<<"$output"
	assert_output $'release Mine.\ntests Workspace tests.'
	# The pack says the same once, and lists the winners.
	run xg-prompt-compile </dev/null
	assert_equal "$(notices | wc -l)" 3
	assert_equal "$(printf '%s\n' "$output" | jq -c 'select(.type == "pack") | [.sections[-1].skills[] | [.name, .from, .cut]]')" \
		'[["release","person",false],["tests","project",false]]'
}

@test "The skills section follows the project instructions, after the same stable prefix" {
	repo_setup
	cd repo/sub/ws
	before=$(pack '')
	before_plan=$(pack '' --mode plan)
	printf 'Use tabs.\n' > AGENTS.md
	skill "$OWN/zeta" zeta "Last by name."
	skill .agents/skills/alpha alpha "First by name, in the workspace."
	p=$(pack '')
	assert_equal "$(jq -r .stable_sha256 <<<"$p")" "$(jq -r .stable_sha256 <<<"$before")"
	assert_equal "$(jq -c '[.sections[-2:][] | .name]' <<<"$p")" '["project","skills"]'
	run jq -c '.sections[-1] | [.kind, .budget, .cut, .chars == (.chars | floor)]' <<<"$p"
	assert_output '["dynamic",8000,false,true]'
	run jq -r --arg b "$(jq -r .system <<<"$before")" '.system | startswith($b + "\n\n# Project instructions\n\n")' <<<"$p"
	assert_output true
	run jq -r '.system | .[index("# Skills\n\nThe skills found"):]' <<<"$p"
	assert_output - <<-EOF
	# Skills

	The skills found for this workspace, by name: what each is for, then its SKILL.md. The person's own hold in every project; the others come from the .agents/skills folders of the repository, from its root down to the working directory. A path outside the working directory is absolute: read that file with bash (cat), as the read tool stays inside the working directory.

	- alpha: First by name, in the workspace. (SKILL.md: .agents/skills/alpha/SKILL.md)
	- zeta: Last by name. (SKILL.md: $OWN/zeta/SKILL.md)
	EOF
	run jq '(.sections | map(.chars) | add) + 2 * ((.sections | length) - 1) == (.system | length)' <<<"$p"
	assert_output true
	# In plan mode, before the mode's sections.
	run pack '' --mode plan
	assert_equal "$(jq -c '[.sections[-3:][] | .name]' <<<"$output")" '["project","skills","plan"]'
	assert_equal "$(jq -r .stable_sha256 <<<"$output")" "$(jq -r .stable_sha256 <<<"$before_plan")"
	# The guidance on using skills is the variant's, in the stable prefix,
	# with or without skills.
	run jq -r '.system' <<<"$before"
	assert_output --partial 'The first time you use a skill in a conversation, tell the person'
	refute_output --partial '# Skills'$'\n\nThe skills found'
}

@test "A missing or malformed front matter leaves the skill out with one notice naming the file and line" {
	mkdir -p .agents/skills
	S="$PWD/.agents/skills"
	skill "$S/good" good "Fine."
	mkdir -p "$S"/{none,open,line,noname,nodesc,badname,long,twice,quote,empty}
	printf 'Just steps.\n' > "$S/none/SKILL.md"
	printf -- '---\nname: open\ndescription: never closed\n' > "$S/open/SKILL.md"
	printf -- '---\nname: line\nthis is no key\ndescription: x\n---\n' > "$S/line/SKILL.md"
	printf -- '---\ndescription: no name\n---\n' > "$S/noname/SKILL.md"
	printf -- '---\n# a comment\nname: nodesc\n---\n' > "$S/nodesc/SKILL.md"
	printf -- '---\ndescription: x\nname: Bad_Name\n---\n' > "$S/badname/SKILL.md"
	printf -- '---\nname: long\ndescription: %s\n---\n' "$(printf 'y%.0s' $(seq 1 1025))" > "$S/long/SKILL.md"
	printf -- '---\nname: twice\ndescription: a\ndescription: b\n---\n' > "$S/twice/SKILL.md"
	printf -- '---\nname: quote\ndescription: "not closed\n---\n' > "$S/quote/SKILL.md"
	: > "$S/empty/SKILL.md"
	# Folders without a SKILL.md, and hidden ones, are not skills at all.
	mkdir -p "$S/notes" "$S/.hidden"
	skill "$S/.hidden" hidden "Hidden."
	run xg-prompt-compile skills
	assert_success
	assert_equal "$(notices)" "$(cat <<-EOF
	$S/badname/SKILL.md:3: the name 'Bad_Name' is not 1 to 64 lower-case letters, digits and hyphens, starting with a letter or digit; the skill is left out
	$S/empty/SKILL.md:1: no front matter: a SKILL.md starts with a '---' line, then 'name:' and 'description:' lines, then '---'; the skill is left out
	$S/line/SKILL.md:3: 'this is no key' is not a 'key: value' line; the skill is left out
	$S/long/SKILL.md:4: the description is 1025 characters, more than 1024; the skill is left out
	$S/nodesc/SKILL.md:4: the front matter has no 'description'; the skill is left out
	$S/noname/SKILL.md:3: the front matter has no 'name'; the skill is left out
	$S/none/SKILL.md:1: no front matter: a SKILL.md starts with a '---' line, then 'name:' and 'description:' lines, then '---'; the skill is left out
	$S/open/SKILL.md:1: the front matter that starts here has no closing '---' line; the skill is left out
	$S/quote/SKILL.md:3: the description's quote is not closed on its line; the skill is left out
	$S/twice/SKILL.md:4: 'description' is given twice; the skill is left out
	EOF
	)"
	assert_equal "$(jq -r 'select(.type == "skill") | .name' <<<"$output")" good
	# The YAML people write: quotes, a folded block, other keys, CRLF.
	printf -- '---\r\nname: "quoted"\r\nlicense: MIT\r\nmetadata:\r\n  owner: x\r\ndescription: >\r\n  Folded over\r\n  two lines.\r\n---\r\nBody.\r\n' > "$S/line/SKILL.md"
	printf -- "---\nname: 'it''s'\ndescription: x\n---\n" > "$S/quote/SKILL.md"
	run xg-prompt-compile skills
	assert_equal "$(jq -c 'select(.type == "skill" and .name == "quoted") | .description' <<<"$output")" '"Folded over two lines."'
	assert_line --partial "$S/quote/SKILL.md:2: the name 'it's' is not 1 to 64"
}

@test "A SKILL.md that cannot be read, is not a regular file or is too big is left out with a notice" {
	mkdir -p .agents/skills/fifo .agents/skills/big .agents/skills/dir/SKILL.md
	mkfifo .agents/skills/fifo/SKILL.md
	head -c 300000 /dev/zero | tr '\0' x > .agents/skills/big/SKILL.md
	S="$PWD/.agents/skills"
	run_split timeout 20 xg-prompt-compile skills
	assert_success
	assert_equal "$(notices)" "$(cat <<-EOF
	skill '$S/big/SKILL.md' is more than 262144 bytes; it is left out
	skill '$S/dir/SKILL.md' is not a regular file; it is left out
	skill '$S/fifo/SKILL.md' is not a regular file; it is left out
	EOF
	)"
}

@test "The skills list keeps within its budget, whole entries only, and says what it left out" {
	mkdir -p .agents/skills
	for i in $(seq -w 1 80); do
		skill ".agents/skills/s$i" "s$i" "$(printf 'Skill number %s: %s' "$i" "$(printf 'w%.0s' $(seq 1 100))")"
	done
	run xg-prompt-compile </dev/null
	assert_success
	n=$(notices)
	p=$(printf '%s\n' "$output" | jq -c 'select(.type == "pack")')
	kept=$(jq '[.sections[-1].skills[] | select(.cut | not)] | length' <<<"$p")
	[ "$kept" -gt 10 ] && [ "$kept" -lt 80 ]
	run jq -c '.sections[-1] | [.cut, .chars <= 8000, .chars > 7500, (.skills | length)]' <<<"$p"
	assert_output '[true,true,true,80]'
	left=$(jq -r '[.sections[-1].skills[] | select(.cut) | "'"'"'\(.name)'"'"'"] | join(", ")' <<<"$p")
	assert_equal "$n" "the skills list is over its budget of 8000 characters: $kept of 80 skills are listed; left out: $left"
	# The model is told, and no entry is cut in the middle.
	run jq -r '.system | .[index("# Skills\n\nThe skills found"):]' <<<"$p"
	assert_line --index -1 "[Cut here for length: the skills list holds at most 8000 characters, and $((80 - kept)) more skills are left out. Their SKILL.md files are in the same folders.]"
	assert_equal "$(printf '%s\n' "$output" | grep -c '^- s')" "$kept"
	refute_output --partial "- s$(printf '%02d' $((kept + 1))):"
}

@test "\$NAME in a request brings its SKILL.md with the request; one that names no skill is a notice, sent as typed" {
	mkdir -p "$XG_HOME/config/skills"
	skill "$XG_HOME/config/skills/release" release "Cut a release." $'1. Bump.\n2. Tag.'
	mkdir ws && cd ws
	skill .agents/skills/slow-tests slow-tests "Run the slow tests."
	run pack '{"type":"request","text":"do $release, then $slow-tests and $release again; not $HOME, $1, ${x}, US$5, \\$release or $my_var; but $relase"}'
	assert_success
	run jq -c '[.named_skills, .attach]' <<<"$output"
	assert_output "[[\"release\",\"slow-tests\"],\"\\n\\nThe skill release, named in this request as \$release: its SKILL.md ($XG_HOME/config/skills/release/SKILL.md) follows.\\n<skill name=\\\"release\\\" path=\\\"$XG_HOME/config/skills/release/SKILL.md\\\">\\n---\\nname: release\\ndescription: Cut a release.\\n---\\n1. Bump.\\n2. Tag.\\n</skill>\\n\\nThe skill slow-tests, named in this request as \$slow-tests: its SKILL.md (.agents/skills/slow-tests/SKILL.md) follows.\\n<skill name=\\\"slow-tests\\\" path=\\\".agents/skills/slow-tests/SKILL.md\\\">\\n---\\nname: slow-tests\\ndescription: Run the slow tests.\\n---\\nSteps of slow-tests.\\n</skill>\"]"
	run xg-prompt-compile <<<'{"type":"request","text":"do $release, then $relase and $relase"}'
	assert_equal "$(notices)" "\$relase names no skill here, so it is sent as typed; 'xg skills' lists the skills"
	# Nothing named: no fields; a hidden request or a goal's round names none.
	run pack '{"type":"request","text":"costs $5 and $HOME"}'
	assert_equal "$(jq -c '[.attach, .named_skills]' <<<"$output")" '[null,null]'
	run pack '{"type":"request","text":"use $release","hidden":true,"kind":"goal_continuation"}'
	assert_equal "$(jq -c '[.attach, .named_skills]' <<<"$output")" '[null,null]'
	# A shell word is a skill when a skill has that name.
	skill .agents/skills/home 1 "Named one."
	run pack '{"type":"request","text":"echo $1"}'
	assert_equal "$(jq -c .named_skills <<<"$output")" '["1"]'
}

@test "xg run: the named SKILL.md goes with the request's text, and a new skill leaves the cached prefix as it was" {
	xg_run_setup
	mkdir -p "$XG_HOME/config/skills" ws
	cd ws
	serve anthropic-messages <<-'EOF'
	{"text": "one"}
	{"text": "two"}
	{"text": "three"}
	EOF
	run_split xg run --json --model fake/m 'before any skill'
	assert_success
	skill "$XG_HOME/config/skills/release" release "Cut a release." "Bump, tag, publish."
	run_split xg run --json --model fake/m 'now with one, unnamed'
	assert_success
	run_split xg run --json --model fake/m 'cut it: $release, and $nosuch'
	assert_success
	assert_equal "$(notices)" "\$nosuch names no skill here, so it is sent as typed; 'xg skills' lists the skills"
	conv=$(printf '%s\n' "$output" | jq -r 'select(.type == "run_start") | .conversation')
	want="cut it: \$release, and \$nosuch

The skill release, named in this request as \$release: its SKILL.md ($XG_HOME/config/skills/release/SKILL.md) follows.
<skill name=\"release\" path=\"$XG_HOME/config/skills/release/SKILL.md\">
---
name: release
description: Cut a release.
---
Bump, tag, publish.
</skill>"
	# The conversation keeps the text as sent, so the next request
	# replays it byte for byte.
	assert_equal "$(jq -r 'select(.type == "message" and .role == "user") | .text' "$CONVS/$conv.jsonl")" "$want"
	WANT=$want fake_log '
import os
s0, s1, s2 = (l["body"]["system"] for l in log)
# The cached block is the same bytes with a skill or without one; the
# skills list is in the block after it.
assert len(s0) == 1 and s0[0].get("cache_control"), s0
assert len(s1) == 2 and s1[0] == s0[0] and not s1[1].get("cache_control"), s1
assert s1[1]["text"].lstrip().startswith("# Skills\n\nThe skills found"), s1[1]["text"][:40]
assert "- release: Cut a release. (SKILL.md: " in s1[1]["text"]
assert s2 == s1
user = log[2]["body"]["messages"][-1]["content"]
text = user if isinstance(user, str) else "".join(b["text"] for b in user)
assert text == os.environ["WANT"], text'
}

@test "xg-run alone brings the named SKILL.md too, compiling the pack itself" {
	xg_run_setup
	skill .agents/skills/lint lint "Run the linter." "make lint"
	serve openai-chat <<-'EOF'
	{"text": "done"}
	EOF
	xgrun 'please $lint'
	assert_success
	fake_log '
m = log[0]["body"]["messages"]
assert "- lint: Run the linter. (SKILL.md: .agents/skills/lint/SKILL.md)" in m[0]["content"], m[0]
assert m[-1]["content"].startswith("please $lint\n\nThe skill lint, named in this request as $lint"), m[-1]
assert m[-1]["content"].endswith("---\nmake lint\n</skill>"), m[-1]'
}

@test "xg skills lists name, where from and description; --json gives the records" {
	mkdir -p "$XG_HOME/config/skills"
	export HOME="$BATS_TEST_TMPDIR"
	skill "$XG_HOME/config/skills/release" release "Cut a release."
	skill .agents/skills/tests tests "Run the tests."
	mkdir -p .agents/skills/broken && printf 'no front matter\n' > .agents/skills/broken/SKILL.md
	run_split xg skills
	assert_success
	assert_output - <<-EOF
	release  ~/home/config/skills/release/SKILL.md  Cut a release.
	tests    .agents/skills/tests/SKILL.md          Run the tests.
	EOF
	assert_equal "$stderr" "xg: $PWD/.agents/skills/broken/SKILL.md:1: no front matter: a SKILL.md starts with a '---' line, then 'name:' and 'description:' lines, then '---'; the skill is left out"
	run_split xg skills --json
	assert_success
	assert_equal "$(jq -c '[.type, .name, .from]' <<<"$output")" "$(printf '%s\n' '["notice",null,"xg-prompt-compile"]' '["skill","release","person"]' '["skill","tests","project"]' | sed 's/"xg-prompt-compile"/"xg"/')"
	run_split xg skills extra
	assert_failure 2
	run_split xg help skills
	assert_success
	assert_output --partial 'xg skills [--json]'
	# None at all is said on stderr, not as a row.
	cd "$(mktemp -d)"
	rm -r "$XG_HOME/config/skills"
	run_split xg skills
	assert_success
	assert_output ""
	assert_equal "$stderr" "xg: no skills here: a skill is a folder holding a SKILL.md, in ~/.config/xg/skills or a project's .agents/skills"
}
