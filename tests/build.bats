#!/usr/bin/env bats
# The build: the banned-function list, install and uninstall, and the
# README's commands.

load lib/helper

@test "a banned function is a compile error" {
	for f in 'strcpy(d, s)' 'strcat(d, s)' 'sprintf(d, "%s", s)' 'strtok(d, s)' \
		'va_list ap; vsprintf(d, s, ap)' 'gets(d)'; do
		printf '#include "xg.h"\nvoid f(char *d, const char *s);\nvoid f(char *d, const char *s) { %s; }\n' "$f" >t.c
		run cc -D_GNU_SOURCE -I"$XG_SRCDIR/lib" -c t.c -o t.o
		assert_failure
		assert_output --regexp 'sorry_[a-z]+_is_a_banned_function'
	done
	printf '#include "xg.h"\nvoid f(char *d, const char *s);\nvoid f(char *d, const char *s) { snprintf(d, 4, "%%s", s); }\n' >t.c
	run cc -D_GNU_SOURCE -I"$XG_SRCDIR/lib" -c t.c -o t.o
	assert_success
}

# A copy of the source tree in DIR: what git tracks and what it would.
copy_tree() {
	git -C "$XG_SRCDIR" ls-files -z --cached --others --exclude-standard | (cd "$XG_SRCDIR" && xargs -0 tar cf -) | (mkdir -p "$1" && cd "$1" && tar xf -)
}

# The same with the objects make check built (their times kept, so make
# finds them current): what a rebuild does is the test, not a whole build.
copy_tree_built() {
	copy_tree "$1"
	(cd "$XG_SRCDIR" && { find lib cmd tests/helper -name '*.[od]'; echo lib/libxg.a; echo .build-flags; } |
		tar cf - -T -) | (cd "$1" && tar xpf -)
}

@test "make install honours PREFIX and DESTDIR, and uninstall removes it all" {
	root=$BATS_TEST_TMPDIR/root
	# In a copy: PREFIX is built into the programs, so another PREFIX
	# rebuilds them, which must not happen under the tests that run them.
	# It reaches one object alone: that one is compiled again, and the
	# programs linked.
	src=$BATS_TEST_TMPDIR/src
	copy_tree_built "$src"
	# shellcheck disable=SC2086
	run make -C "$src" $XG_MAKEFLAGS -j2 install DESTDIR="$root" PREFIX=/opt/xg
	assert_success
	assert_equal "$(grep -c -- ' -c -o ' <<<"$output")" 1
	assert_output --partial " -c -o lib/path.o "
	strings "$src/lib/path.o" | grep -qx /opt/xg/share/xg
	shopt -s nullglob
	for p in "$src"/bin/*; do
		[ -x "$root/opt/xg/bin/${p##*/}" ] || fail "${p##*/} not installed"
	done
	[ -f "$root/opt/xg/share/man/man7/xg.7" ] || fail "xg.7 not installed"
	[ -f "$root/opt/xg/share/man/man5/xg-records.5" ] || fail "xg-records.5 not installed"
	[ -d "$root/opt/xg/share/xg" ] || fail "share/xg not installed"
	[ -f "$root/opt/xg/share/bash-completion/completions/xg" ] || fail "bash completion not installed"
	[ -f "$root/opt/xg/share/man/man1/xg-log.1" ] || fail "xg-log.1 not installed"
	# Each program's completion by its name, where bash-completion and
	# fish look for it (fish's under the prefix, when it is not a system's).
	[ "$(readlink "$root/opt/xg/share/bash-completion/completions/xg-log")" = xg ] ||
		fail "xg-log's bash completion not linked"
	[ -f "$root/opt/xg/share/fish/vendor_completions.d/xg.fish" ] || fail "fish completion not installed"
	[ -L "$root/opt/xg/share/fish/vendor_completions.d/xg-log.fish" ] ||
		fail "xg-log's fish completion not linked"
	[ -f "$root/opt/xg/share/zsh/site-functions/_xg" ] || fail "zsh completion not installed"
	[ -f "$root/opt/xg/share/xg/prompts/manifest" ] || fail "the default variant not installed"
	# Whatever the umask and the modes in the tree, the modes are install's:
	# 755 for the programs and what the demo runs, 644 for the rest.
	demo=$root/opt/xg/share/xg/demo
	run find "$root" -type f ! -perm 644 ! -path '*/bin/*' ! -path "$demo/run"
	assert_output ""
	run find "$root/opt/xg/bin" "$demo/run" -type f ! -perm 755
	assert_output ""
	# The demo ships whole: installed, it runs on the installed programs.
	run env PATH="$root/opt/xg/bin:$PATH" "$demo/run" 3>&-
	assert_success
	assert_line "plan: plan_ready"
	assert_line "12 passed, 0 failed"
	# shellcheck disable=SC2086
	run make -s -C "$src" $XG_MAKEFLAGS uninstall DESTDIR="$root" PREFIX=/opt/xg
	assert_success
	run find "$root" -type f
	assert_output ""
}

@test "an object is rebuilt when a header it includes changes, and only then" {
	src=$BATS_TEST_TMPDIR/src
	copy_tree_built "$src"
	# shellcheck disable=SC2086
	make -s -C "$src" $XG_MAKEFLAGS -j2 bin/xg-classify-plan >/dev/null
	# shellcheck disable=SC2086
	run make -C "$src" $XG_MAKEFLAGS bin/xg-classify-plan
	refute_output --partial "plan.c"
	touch "$src/lib/plan/plan.h"
	# shellcheck disable=SC2086
	run make -C "$src" $XG_MAKEFLAGS bin/xg-classify-plan
	assert_output --partial "-o lib/plan/plan.o"
	assert_output --partial "cmd/xg-classify-plan.c"
	assert_output --partial "-o lib/run/loop.o"
	refute_output --partial "-o lib/choices/"
}

@test "make lint names a breach of each rule" {
	src=$BATS_TEST_TMPDIR/src
	mkdir -p "$src"
	cp -R "$XG_SRCDIR/lib" "$XG_SRCDIR/cmd" "$XG_SRCDIR/tests" "$src/"
	printf '#include "run/internal.h"\n' >> "$src/lib/plan/plan.c"
	printf '#include "plan/plan.h"\n' >> "$src/lib/json.c"
	printf '#include "dispatch/dispatch.h"\n' >> "$src/lib/plan/plan.c"
	printf '#include "plan/plan.h"\n' >> "$src/lib/dispatch/run.c"
	seq 900 | sed 's|^|// |' >> "$src/lib/buf.c"
	printf 'static void f(char *d) { strcpy(d, "x"); }\n' >> "$src/lib/plan/plan.c"
	run env XG_SRCDIR="$src" sh "$src/tests/lint"
	assert_failure
	assert_output --partial "lib/plan/plan.c: 'run/internal.h' is private to lib/run/"
	assert_output --partial "lib/json.c: the core includes the subsystem header 'plan/plan.h'"
	assert_output --partial "include each other in a cycle"
	assert_output --partial "lib/buf.c: "
	assert_output --partial "strcpy"
}

# A copy of the source with its objects, for lint to read (their times
# kept, so nothing looks newer than it is).
copy_built() {
	mkdir -p "$1"
	cp -Rp "$XG_SRCDIR/lib" "$XG_SRCDIR/cmd" "$XG_SRCDIR/tests" "$1/"
}

# Compiles one file of the copy in $1 as make would, for its symbols.
compile_in() {
	(cd "$1" && cc -D_GNU_SOURCE -DXG_VERSION='"0"' -DXG_SHAREDIR='"/"' -Ilib -c -o "${2%.c}.o" "$2")
}

@test "make lint fails on a circle between two files of a room, naming the call" {
	src=$BATS_TEST_TMPDIR/src
	copy_built "$src"
	run env XG_SRCDIR="$src" sh "$src/tests/lint"
	assert_success
	# out.c is the bottom of lib/run/; loop.c, the top, calls it.
	printf 'void *xg_run_planted(void);\nvoid *xg_run_planted(void) { return (void *)&xg_run; }\n' \
		>> "$src/lib/run/out.c"
	compile_in "$src" lib/run/out.c
	run env XG_SRCDIR="$src" sh "$src/tests/lint"
	assert_failure
	assert_output --partial "lint: the files of lib/run/ call each other in a circle:"
	assert_output --partial "lint: lib/run/out.c calls loop.c (xg_run), which the layers of run put above it"
}

@test "make lint fails on a call up a room's layers, and on a map in another order" {
	src=$BATS_TEST_TMPDIR/src
	copy_built "$src"
	# gate.c is the bottom of lib/tools/, todo.c near its top and calling
	# only result.c: no circle, but upward.
	printf 'void *xg_tool_planted(void);\nvoid *xg_tool_planted(void) { return (void *)&xg_tool_todo_write_peek; }\n' \
		>> "$src/lib/tools/gate.c"
	compile_in "$src" lib/tools/gate.c
	sed -i 's/^ \*   proc\.c /X&/; s/^ \*   sandbox\.c / *   proc.c /; s/^X \*   proc\.c / *   sandbox.c /' \
		"$src/lib/tools/internal.h"
	run env XG_SRCDIR="$src" sh "$src/tests/lint"
	assert_failure
	assert_output --partial "lint: lib/tools/gate.c calls todo.c (xg_tool_todo_write_peek), which the layers of tools put above it"
	assert_output --partial "lint: lib/tools/internal.h: its map names '"
	refute_output --partial "circle"
}

@test "make lint fails on a lib file without its opening comment" {
	src=$BATS_TEST_TMPDIR/src
	copy_built "$src"
	sed -i '1i #include <stdio.h>' "$src/lib/plan/plan.c" "$src/lib/buf.c"
	run env XG_SRCDIR="$src" sh "$src/tests/lint"
	assert_failure
	assert_line "lint: lib/plan/plan.c: does not open with the comment that maps it"
	assert_line "lint: lib/buf.c: does not open with the comment that maps it"
}

@test "make lint fails on a core file that lib/README does not list, and on a room it has no line for" {
	src=$BATS_TEST_TMPDIR/src
	copy_built "$src"
	printf '/*\n * A planted file.\n */\nint xg_planted;\n' > "$src/lib/planted.c"
	compile_in "$src" lib/planted.c
	mkdir "$src/lib/newroom"
	printf '/*\n * A planted room.\n */\nint xg_newroom;\n' > "$src/lib/newroom/a.c"
	run env XG_SRCDIR="$src" sh "$src/tests/lint"
	assert_failure
	assert_output --regexp "lint: lib/README: the line for 'core' names '[a-z0-9 ]*'; lib/ holds '[a-z0-9 ]* planted [a-z0-9 ]*'"
	assert_line "lint: lib/README: no line for the room 'newroom' among the files of each room"
}

@test "the README's first use prints what it shows" {
	want=$(awk '/^    \$ printf .* \| xg-classify-plan$/ { getline; sub(/^    /, ""); print; exit }' "$XG_SRCDIR/README.md")
	[ -n "$want" ] || fail "the README has no first use"
	run sh -c "printf 'Looked around: this already exists.\n' | xg-classify-plan"
	assert_success
	assert_output "$want"
}

@test "the README's quick start: make demo first, then a key or a local server, with commands that work" {
	quick=$(sed -n '/^## Quick start/,/^## /p' "$XG_SRCDIR/README.md")
	grep -q '^    make demo ' <<<"$quick" || fail "the quick start does not begin with make demo"
	grep -q 'OPENAI_API_KEY' <<<"$quick" || fail "the quick start does not name the key variables"
	grep -q 'a few minutes' "$XG_SRCDIR/README.md" || fail "the README does not say how long make check takes"
	# The models.json lines, as the README gives them, in the config directory.
	mkdir -p "$XG_HOME/config"
	awk '/^    \{"providers"/ { on = 1 } on && /^$/ { exit } on { sub(/^    /, ""); print }' \
		<<<"$quick" >"$XG_HOME/config/models.json"
	[ -s "$XG_HOME/config/models.json" ] || fail "the quick start has no models.json lines"
	# Every xg-choices command it shows, in order, with a key in keyfile.
	printf 'sk-test-9c1e\n' >keyfile
	n=0
	while read -r cmd; do
		run_split sh -c "$cmd" </dev/null
		[ "$status" -eq 0 ] || fail "'$cmd' exited $status: $stderr"
		n=$((n + 1))
	done < <(grep -o '`xg-choices set [^`]*`' <<<"$quick" | tr -d '`'; sed -n 's/^    \(xg-choices .*\)/\1/p' <<<"$quick")
	[ "$n" -ge 4 ] || fail "only $n xg-choices commands ran"
	run xg-choices models
	assert_success
	run jq -r 'select(.id == "openai/gpt-5.1" or .id == "local/qwen2.5-coder-7b") | "\(.id) \(.authenticated) \(.auth)"' <<<"$output"
	assert_output $'openai/gpt-5.1 true auth.json\nlocal/qwen2.5-coder-7b true none'
	run xg-choices resolve --mode normal
	assert_success
	assert_equal "$(jq -r .id <<<"$output")" local/qwen2.5-coder-7b
	run grep -c sk-test-9c1e "$XG_HOME/config/accounts/default/auth.json"
	assert_output 1
}

@test "no program loads libcurl or libgit2 before main" {
	# Each is loaded when a request is made or a snapshot taken
	# (lib/curl.h, lib/snapshot/git.h); with the libraries they need,
	# loaded before main they would cost every process's start.
	for p in "$XG_SRCDIR"/bin/*; do
		[ "$(head -c 4 "$p")" = $'\x7fELF' ] || continue # a script (xg-fake-provider)
		needed=$(readelf -d "$p" | awk '/NEEDED/ { print $NF }')
		[[ $needed != *libcurl* ]] || fail "${p##*/} links libcurl"
		[[ $needed != *libgit2* ]] || fail "${p##*/} links libgit2"
	done
	# The snapshot's stand-in for mbedTLS's CA file reader is there for
	# the libgit2 it loads to find.
	readelf -W --dyn-syms "$XG_SRCDIR/bin/xg-snapshot" | grep -q ' mbedtls_x509_crt_parse_file$'
}
