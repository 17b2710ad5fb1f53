#!/usr/bin/env bats
# The man pages: lint-clean, one per program, and each program's --help
# usage equal to its page's SYNOPSIS (as git's t0450 does).

load lib/helper
shopt -s nullglob

synopsis_of() {
	mandoc -Tascii "$1" | col -bx |
		awk '/^SYNOPSIS/ { f = 1; next } /^[A-Z]/ { f = 0 } f' |
		tr -s ' \n' '  ' | sed 's/^ *//; s/ *$//'
}

# The programs: cmd/NAME.c, and the scripts cmd/NAME.py (bin/NAME).
programs() {
	for c in "$XG_SRCDIR"/cmd/*.c "$XG_SRCDIR"/cmd/*.py; do
		c=${c##*/}
		echo "${c%.*}"
	done
}

usage_of() {
	"$1" --help | awk '/^usage: / { sub(/^usage: /, ""); print; next }
		/^   or: / { sub(/^   or: /, ""); print; next } /^$/ { exit }' |
		tr -s ' \n' '  ' | sed 's/^ *//; s/ *$//'
}

@test "every man page is mandoc -Tlint clean" {
	pages=("$XG_SRCDIR"/man/*.[1-9])
	[ ${#pages[@]} -gt 0 ] || fail "no man pages"
	run mandoc -Tlint -Wwarning "${pages[@]}"
	assert_success
	assert_output ""
}

@test "every program has a man page and a test file" {
	for n in $(programs); do
		[ -f "$XG_SRCDIR/man/$n.1" ] || fail "cmd/$n has no man/$n.1"
		ls "$XG_SRCDIR"/tests/"$n"*.bats >/dev/null 2>&1 || fail "cmd/$n has no tests/$n*.bats"
	done
}

@test "every program's --help usage is its man page's SYNOPSIS" {
	for n in $(programs); do
		want=$(synopsis_of "$XG_SRCDIR/man/$n.1")
		got=$(usage_of "$n")
		[ -n "$want" ] || fail "man/$n.1 has no SYNOPSIS"
		[ "$want" = "$got" ] || fail "$(printf '%s --help and its SYNOPSIS differ:\n  help: %s\n  man:  %s' "$n" "$got" "$want")"
	done
}

@test "every program prints its version and exits 0" {
	for n in $(programs); do
		run "$n" --version
		assert_success
		assert_output --regexp "^$n \\(xg\\) [0-9]+\\.[0-9]+\\.[0-9]+\$"
	done
}

@test "every program rejects an unknown option with exit 2" {
	for n in $(programs); do
		run_split "$n" --no-such-option </dev/null
		assert_equal "$status" 2
		assert_regex "$stderr" "^$n: unknown option '--no-such-option'"
	done
}

@test "no program waits on a terminal's standard input" {
	command -v script >/dev/null || skip "script(1) is not installed"
	for n in $(programs); do
		# script gives the program a terminal for stdin, kept open by a
		# sleeping writer; timeout catches a program that waits on it.
		run timeout 5 script -qec "$n" /dev/null < <(sleep 6 3>&- 2>/dev/null)
		[ "$status" -ne 124 ] || fail "$n waited on a terminal"
	done
}

@test "every status and stop the code can write is in xg-records(5)" {
	# The literals the code gives a run's, a child's or a goal's status and
	# stop: assignments, record fields, a stopped child, a goal's status.
	words=$(grep -rhoE '(->|\.)(status|stop) = "[a-z_]+"|"(status|stop)", jv_string\([^;]*|stop_child\([^,]+, [^,]+, "[a-z_]+"|snprintf\(g->status, sizeof\(g->status\), "[a-z_]+"' \
		"$XG_SRCDIR"/lib --include='*.c' | grep -oE '"[a-z_]+"' | tr -d '"' |
		grep -vxE 'status|stop' | sort -u)
	[ "$(printf '%s\n' "$words" | wc -l)" -ge 12 ] || fail "too few found: $words"
	page="$XG_SRCDIR/man/xg-records.5"
	missing=""
	for w in $words; do
		grep -qE "^\.(Qq|Dq|Cm) $w( |$)" "$page" || missing="$missing $w"
	done
	[ -z "$missing" ] || fail "not in xg-records(5):$missing"
}
