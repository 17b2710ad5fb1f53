#!/bin/sh
# test.sh: the tests of roman.sh, one number and its numerals a line.
# Prints each failure, then how many passed; exits 1 when one failed.
cd "$(dirname "$0")" || exit 1
passed=0 failed=0
while read -r n want; do
	got=$(sh ./roman.sh "$n")
	if [ "$got" = "$want" ]; then
		passed=$((passed + 1))
	else
		echo "FAIL: roman.sh $n printed '$got', not '$want'"
		failed=$((failed + 1))
	fi
done <<CASES
1 I
3 III
4 IV
9 IX
14 XIV
40 XL
1994 MCMXCIV
2026 MMXXVI
CASES
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
