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

@test "make install honours PREFIX and DESTDIR, and uninstall removes it all" {
	root=$BATS_TEST_TMPDIR/root
	# In a copy: PREFIX is built into the programs, so another PREFIX
	# rebuilds them, which must not happen under the tests that run them.
	src=$BATS_TEST_TMPDIR/src
	copy_tree "$src"
	# shellcheck disable=SC2086
	run make -s -C "$src" $XG_MAKEFLAGS -j2 install DESTDIR="$root" PREFIX=/opt/xg
	assert_success
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
	run find "$root" -type f ! -perm 644 ! -path '*/bin/*' ! -path "$demo/run" ! -path "$demo/fake-provider"
	assert_output ""
	run find "$root/opt/xg/bin" "$demo/run" "$demo/fake-provider" -type f ! -perm 755
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
	copy_tree "$src"
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
		needed=$(readelf -d "$p" | awk '/NEEDED/ { print $NF }')
		[[ $needed != *libcurl* ]] || fail "${p##*/} links libcurl"
		[[ $needed != *libgit2* ]] || fail "${p##*/} links libgit2"
	done
	# The snapshot's stand-in for mbedTLS's CA file reader is there for
	# the libgit2 it loads to find.
	readelf -W --dyn-syms "$XG_SRCDIR/bin/xg-snapshot" | grep -q ' mbedtls_x509_crt_parse_file$'
}
