#!/bin/sh
# roman.sh N: prints the number N in Roman numerals.
# The project of xg's demo: its test, test.sh, fails until the demo's
# scripted model fixes the table below.
n=$1
out=
for pair in 1000:M 500:D 100:C 50:L 10:X 5:V 1:I; do
	value=${pair%:*}
	while [ "$n" -ge "$value" ]; do
		out=$out${pair#*:}
		n=$((n - value))
	done
done
echo "$out"
