#!/usr/bin/env bats
# The completions of completions/, driven in each shell: bash through
# COMP_WORDS and its function (and bash-completion's loader, which finds a
# program's file by its name), zsh with compadd caught, fish with
# complete -C.  They offer verbs where verbs belong, the catalog's models,
# the conversations and runs there are, the values of --mode, --effort,
# --variant, --account, --by and --status, the skills after a "$" in a
# request's text, and no program not installed.

load lib/helper

setup() {
	exec </dev/null
	COMPS="$XG_SRCDIR/completions"
	export LLAMACPP_BASE_URL=http://127.0.0.1:8080/v1
	mkdir -p "$XG_HOME/config" ws
	cat >"$XG_HOME/config/models.json" <<-'EOF'
	{"providers": {"fake": {"kind": "openai-chat", "base_url": "http://127.0.0.1:9/v1", "key_env": null,
	  "models": {"m": {"efforts": ["low", "xhigh"], "default_effort": "low"}}}}}
	EOF
	# One conversation here, and one run in the index.
	mkdir -p "$XG_HOME/state/conversations" "$XG_HOME/state/runs/20261130-105624-3f9a1c2b"
	printf '%s\n' '{"type":"conversation","schema":"xg/1","id":"20261130-105624-9c1e07aa","created":"2026-11-30T10:56:24.000Z","cwd":"'"$PWD/ws"'"}' \
		'{"type":"message","role":"user","text":"hi","at":"2026-11-30T10:56:24.000Z"}' \
		>"$XG_HOME/state/conversations/20261130-105624-9c1e07aa.jsonl"
	printf '%s\n' '{"type":"run","run":"20261130-105624-3f9a1c2b","conversation":"20261130-105624-9c1e07aa","started":"2026-11-30T10:56:24.000Z","status":"completed","request":"hi"}' \
		>"$XG_HOME/state/runs.ndjson"
	cd ws
}

# PATH without xg-goal (every other program of the build linked into a
# folder of its own; every folder that holds an xg-goal left out, an
# installed one too), and back with it.
goal_uninstalled() {
	local d="$BATS_TEST_TMPDIR/nogoal" bin p kept=""
	bin=$(dirname "$(command -v xg-goal)")
	mkdir -p "$d"
	for p in "$bin"/xg*; do
		[ "${p##*/}" = xg-goal ] || ln -sf "$p" "$d/"
	done
	SAVED_PATH=$PATH
	while read -r p; do
		[ -n "$p" ] && [ ! -e "$p/xg-goal" ] && kept="$kept:$p"
	done < <(printf '%s\n' "$PATH" | tr ':' '\n')
	PATH="$d$kept"
	! command -v xg-goal >/dev/null
}

goal_installed() {
	PATH=$SAVED_PATH
}

# bash: the candidates for the last of the words, one a line.
bash_complete() {
	bash --norc --noprofile -c 'source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _xg_complete
		printf "%s\n" "${COMPREPLY[@]}"' bash "$COMPS/xg.bash" "$@" | sort
}

# zsh: the same, with compadd and _files caught.  Under SANITIZE=1 a
# program that LeakSanitizer checks at its exit can hang in a subshell of
# zsh's (its stop-the-world tracer waits for ever); what is tested here is
# the shell code, and every other test checks the programs for leaks.
zsh_complete() {
	command -v zsh >/dev/null || skip "zsh is not installed (make deps installs it)"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 zsh -f -c 'compadd() { if [[ $1 == -a ]]; then print -l -- ${(P)2}; else [[ $1 == -- ]] && shift; print -l -- "$@"; fi }
		_files() { print -- "<files>" }
		f=$1; shift; words=("$@"); CURRENT=$#; source $f' zsh "$COMPS/_xg" "$@" | sort
}

# fish: the candidates for a command line.
fish_complete() {
	command -v fish >/dev/null || skip "fish is not installed (make deps installs it)"
	fish --no-config -c 'source $argv[1]; complete -C $argv[2]' "$COMPS/xg.fish" "$1" | cut -f1 | sort
}

lines() { printf '%s\n' "$@" | sort; }

# Skills of the workspace: release and relax here, tests the person's own.
skills_setup() {
	local d n
	for d in .agents/skills/release .agents/skills/relax "$XG_HOME/config/skills/tests"; do
		n=${d##*/}
		mkdir -p "$d"
		printf -- '---\nname: %s\ndescription: d\n---\n' "$n" >"$d/SKILL.md"
	done
}

@test "bash: xg offers its verbs and the xg programs installed" {
	run bash_complete xg ""
	assert_line run
	assert_line compact
	assert_line log
	assert_line choices
	# goal is xg's own verb, there whether xg-goal is or not.
	assert_line goal
	# A program on PATH is offered by the name xg knows it by.
	mkdir -p "$BATS_TEST_TMPDIR/more"
	printf '#!/bin/sh\n' >"$BATS_TEST_TMPDIR/more/xg-frob"
	chmod +x "$BATS_TEST_TMPDIR/more/xg-frob"
	run bash_complete xg ""
	refute_line frob
	PATH="$BATS_TEST_TMPDIR/more:$PATH"
	run bash_complete xg ""
	assert_line frob
}

@test "bash: a program's verbs, options and their values" {
	assert_equal "$(bash_complete xg-log "")" "$(lines conversations diff prune show usage)"
	assert_equal "$(bash_complete xg log usage --by "")" "$(lines account day model workspace)"
	run bash_complete xg-run --
	assert_line --model
	assert_line --work-slice
	assert_equal "$(bash_complete xg-run --mode "")" "$(lines normal plan)"
	run bash_complete xg run --effort x
	assert_output xhigh
	assert_equal "$(bash_complete xg-run --variant "")" default
	assert_equal "$(bash_complete xg plan --account "")" default
	run bash_complete xg run --model fake/
	assert_output fake/m
	assert_equal "$(bash_complete xg-log --status int)" interrupted
}

@test "bash: after a \$ in a request's text, the skills of this directory" {
	skills_setup
	assert_equal "$(bash_complete xg run 'do $rel')" "$(lines 'do $relax' 'do $release')"
	assert_equal "$(bash_complete xg plan '$')" "$(lines '$relax' '$release' '$tests')"
	assert_equal "$(bash_complete xg resume 20261130-105624-9c1e07aa 'then $te')" 'then $tests'
	assert_equal "$(bash_complete xg run 'no $such')" ""
	# Without a $ a request's text is not completed; xg skills has --json.
	assert_equal "$(bash_complete xg run 'rel')" ""
	run bash_complete xg skills --
	assert_line --json
}

@test "bash: conversations and runs where they belong, never files" {
	touch a-file
	assert_equal "$(bash_complete xg resume "")" 20261130-105624-9c1e07aa
	assert_equal "$(bash_complete xg compact "")" 20261130-105624-9c1e07aa
	assert_equal "$(bash_complete xg run --conversation "")" 20261130-105624-9c1e07aa
	assert_equal "$(bash_complete xg-log show "")" 3f9a1c2b
	assert_equal "$(bash_complete xg log diff "")" 3f9a1c2b
	assert_equal "$(bash_complete xg-log "" | grep -c a-file)" 0
	assert_equal "$(bash_complete xg run "")" ""
	# Where a file is the operand, files.
	assert_equal "$(bash_complete xg-classify-plan a-)" a-file
}

@test "bash: xg-goal's verbs and options once it is installed, nothing before" {
	goal_uninstalled
	assert_equal "$(bash_complete xg goal "")" ""
	goal_installed
	assert_equal "$(bash_complete xg goal "")" "$(lines clear edit get pause resume set)"
	run bash_complete xg-goal set --
	assert_line --rounds
	assert_line --hours
	assert_line --no-run
	assert_line --replace
	run bash_complete xg-goal set --model fake/
	assert_output fake/m
	assert_equal "$(bash_complete xg goal resume --conversation "")" 20261130-105624-9c1e07aa
}

@test "bash-completion loads each program's completion by its name, before xg was completed" {
	[ -f /usr/share/bash-completion/bash_completion ] || skip "bash-completion is not installed (make deps installs it)"
	dir="$BATS_TEST_TMPDIR/share/bash-completion/completions"
	mkdir -p "$dir"
	cp "$COMPS/xg.bash" "$dir/xg"
	# As make install links them.
	for p in xg-run xg-log xg-choices; do ln -s xg "$dir/$p"; done
	run env XDG_DATA_DIRS="$BATS_TEST_TMPDIR/share" bash --norc --noprofile -c '
		source /usr/share/bash-completion/bash_completion
		__load_completion xg-log && complete -p xg-log
		COMP_WORDS=(xg-log ""); COMP_CWORD=1; _xg_complete; printf "%s\n" "${COMPREPLY[@]}"'
	assert_success
	assert_line "complete -F _xg_complete xg-log"
	assert_line show
}

@test "zsh: the same verbs, values, conversations and runs" {
	goal_uninstalled
	run zsh_complete xg ""
	assert_line log
	assert_line compact
	assert_line goal
	assert_equal "$(zsh_complete xg-log "")" "$(lines conversations diff prune show usage)"
	assert_equal "$(zsh_complete xg-run --mode "")" "$(lines normal plan)"
	run zsh_complete xg run --effort ""
	assert_line xhigh
	assert_equal "$(zsh_complete xg-run --variant "")" default
	assert_equal "$(zsh_complete xg resume "")" 20261130-105624-9c1e07aa
	assert_equal "$(zsh_complete xg compact "")" 20261130-105624-9c1e07aa
	assert_equal "$(zsh_complete xg-log show "")" 3f9a1c2b
	assert_equal "$(zsh_complete xg-log usage --by "")" "$(lines account day model workspace)"
	goal_installed
	assert_equal "$(zsh_complete xg goal "")" "$(lines clear edit get pause resume set)"
	skills_setup
	assert_equal "$(zsh_complete xg run 'do $rel')" "$(lines 'do $relax' 'do $release')"
}

@test "fish: the same verbs, values, conversations and runs" {
	goal_uninstalled
	run fish_complete "xg "
	assert_line log
	assert_line compact
	assert_line goal
	assert_equal "$(fish_complete "xg-log ")" "$(lines conversations diff prune show usage)"
	assert_equal "$(fish_complete "xg-run --mode ")" "$(lines normal plan)"
	run fish_complete "xg run --effort "
	assert_line xhigh
	assert_equal "$(fish_complete "xg-run --variant ")" default
	assert_equal "$(fish_complete "xg compact ")" 20261130-105624-9c1e07aa
	assert_equal "$(fish_complete "xg log show ")" 3f9a1c2b
	assert_equal "$(fish_complete "xg goal ")" ""
	goal_installed
	assert_equal "$(fish_complete "xg goal ")" "$(lines clear edit get pause resume set)"
	skills_setup
	assert_equal "$(fish_complete "xg run '\$rel")" "$(lines "'\$relax" "'\$release")"
}
