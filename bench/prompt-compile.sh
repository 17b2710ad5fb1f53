#!/bin/sh
# Compile time and peak memory of the default prompt pack.
# Targets: under 3 ms wall a compile, under 4 MiB resident.
#
#   sh bench/prompt-compile.sh [runs]
set -eu
cd "$(dirname "$0")/.."
runs=${1:-200}
bin=bin/xg-prompt-compile
[ -x "$bin" ] || { echo "bench: build first (make)" >&2; exit 1; }
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export XG_HOME="$home" XG_SHARE_DIR="$PWD/share/xg"
req='{"type":"request","text":"fix the tests","mode":"normal"}'
model='{"type":"model","provider":"openai","id":"openai/gpt-5","effort":"medium","source":"mode"}'
printf '%s\n%s\n' "$req" "$model" > "$home/in"

# Warm the page cache, then time the runs as one batch.
"$bin" < "$home/in" > /dev/null
start=$(date +%s%N)
i=0
while [ $i -lt "$runs" ]; do
	"$bin" < "$home/in" > /dev/null
	i=$((i + 1))
done
end=$(date +%s%N)
per_us=$(( (end - start) / runs / 1000 ))

# Peak resident set of one compile, from GNU time when present, else from
# the kernel's accounting of a child.
if command -v /usr/bin/time > /dev/null 2>&1; then
	rss=$(/usr/bin/time -f %M "$bin" < "$home/in" 2>&1 > /dev/null | tail -1)
else
	rss=$(python3 -c 'import resource,subprocess,sys
subprocess.run([sys.argv[1]], stdin=open(sys.argv[2]), stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$bin" "$home/in")
fi
# The same with a conversation, which reads it and pins a version once.
conv='{"type":"request","text":"fix the tests","mode":"normal","conversation":"bench"}'
printf '%s\n%s\n' "$conv" "$model" > "$home/in2"
"$bin" < "$home/in2" > /dev/null
start=$(date +%s%N)
i=0
while [ $i -lt "$runs" ]; do
	"$bin" < "$home/in2" > /dev/null
	i=$((i + 1))
done
end=$(date +%s%N)
conv_us=$(( (end - start) / runs / 1000 ))

chars=$("$bin" --text --model openai/gpt-5 < /dev/null | wc -m)
printf 'prompt-compile: default pack, %s characters of system prompt\n' "$chars"
printf '  wall per compile (process start to exit, %s runs): %d.%03d ms (target < 3 ms)\n' \
	"$runs" $((per_us / 1000)) $((per_us % 1000))
printf '  with a pinned conversation:                        %d.%03d ms\n' \
	$((conv_us / 1000)) $((conv_us % 1000))
printf '  peak resident: %s KiB (target < 4096 KiB)\n' "$rss"
