#!/usr/bin/env bats
# The build: the banned-function list, install and uninstall.

load helper

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

@test "make install honours PREFIX and DESTDIR, and uninstall removes it all" {
	root=$BATS_TEST_TMPDIR/root
	# shellcheck disable=SC2086
	run make -s -C "$XG_SRCDIR" $XG_MAKEFLAGS install DESTDIR="$root" PREFIX=/opt/xg
	assert_success
	shopt -s nullglob
	for p in "$XG_SRCDIR"/bin/*; do
		[ -x "$root/opt/xg/bin/${p##*/}" ] || fail "${p##*/} not installed"
	done
	[ -f "$root/opt/xg/share/man/man7/xg.7" ] || fail "xg.7 not installed"
	[ -f "$root/opt/xg/share/man/man5/xg-records.5" ] || fail "xg-records.5 not installed"
	[ -d "$root/opt/xg/share/xg" ] || fail "share/xg not installed"
	[ -f "$root/opt/xg/share/bash-completion/completions/xg" ] || fail "bash completion not installed"
	# shellcheck disable=SC2086
	run make -s -C "$XG_SRCDIR" $XG_MAKEFLAGS uninstall DESTDIR="$root" PREFIX=/opt/xg
	assert_success
	run find "$root" -type f
	assert_output ""
}

@test "the README's first use prints what it shows" {
	want=$(awk '/^    \$ printf .* \| xg-classify-plan$/ { getline; sub(/^    /, ""); print; exit }' "$XG_SRCDIR/README.md")
	[ -n "$want" ] || fail "the README has no first use"
	run sh -c "printf 'Looked around: this already exists.\n' | xg-classify-plan"
	assert_success
	assert_output "$want"
}
