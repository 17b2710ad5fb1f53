# bench/lib.sh: the set-up the benches share, sourced by them from the top
# of the source tree (". bench/lib.sh", after "set -eu" and the cd there).
# It defines functions and runs nothing:
#
#   bench_tmp                  $tmp, a new temporary folder; on exit the fake
#                              provider, if started, is stopped and $tmp removed
#   bench_provider SCRIPT [OPTION...]
#                              starts the loopback fake provider on a port of
#                              its choosing, playing SCRIPT, logging requests
#                              in $tmp/log, with xg-fake-provider's OPTIONs (such
#                              as --served FILE); returns once it listens, with
#                              $pid and $port set
#   bench_home                 a fresh XG_HOME in $tmp/home, and XG_SHARE_DIR
#   bench_catalog [WINDOW]     a model catalog in that XG_HOME whose one model,
#                              fake/m, is served at $port (openai-chat, a
#                              context window of WINDOW tokens, default 100000),
#                              with its key in XG_BENCH_KEY
#   bench_repo DIR             a git repository of 1,000 committed files in 20
#                              folders, one of them edited since
#   bench_read_rounds ROUNDS RUNS
#                              prints a script of rounds that read f.txt (below)
#   bench_read_work            $tmp/work, a folder with f.txt of 1 KiB in it
#
# The benches that talk to a provider start it, make a home, then a catalog:
#   bench_tmp
#   echo '{"text":"done","repeat":10}' >"$tmp/script"
#   bench_provider "$tmp/script"
#   bench_home
#   bench_catalog

pid=

bench_cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || :
	rm -rf "$tmp"
}

bench_tmp() {
	tmp=$(mktemp -d)
	trap bench_cleanup EXIT
	# A signal ends the bench through the EXIT trap, so the provider goes too.
	trap 'exit 130' INT TERM
}

bench_provider() {
	script=$1
	shift
	# The idle exit only matters if the bench dies without its EXIT trap.
	python3 bin/xg-fake-provider --script "$script" --log "$tmp/log" \
		--port-file "$tmp/port" --idle-exit 600 "$@" >/dev/null 2>&1 &
	pid=$!
	# The port file appears, whole, once the provider accepts connections.
	while [ ! -s "$tmp/port" ]; do
		kill -0 "$pid" 2>/dev/null || { echo "bench: the fake provider did not start" >&2; exit 1; }
		sleep 0.05
	done
	port=$(cat "$tmp/port")
}

bench_home() {
	export XG_HOME="$tmp/home" XG_SHARE_DIR="$PWD/share/xg"
	mkdir -p "$XG_HOME/config"
}

bench_catalog() {
	export XG_BENCH_KEY=bench
	cat >"$XG_HOME/config/models.json" <<-JSON
	{"providers": {"fake": {"kind": "openai-chat", "base_url": "http://127.0.0.1:$port/v1",
	  "key_env": "XG_BENCH_KEY", "models": {"m": {"context_window": ${1:-100000},
	  "max_output_tokens": 4096, "efforts": [], "default_effort": null}}}}}
	JSON
}

bench_repo() {
	mkdir -p "$1"
	(
		cd "$1"
		git init -q .
		i=0
		while [ $i -lt 1000 ]; do
			d=dir$((i % 20))
			mkdir -p "$d"
			printf 'file %d\nline two\n' $i >"$d/f$i.txt"
			i=$((i + 1))
		done
		git add -A
		git -c user.name=b -c user.email=b@example.com commit -qm files
		echo edit >>dir0/f0.txt
	)
}

# bench_read_rounds ROUNDS RUNS: a script of RUNS runs of ROUNDS rounds
# each, a round being a reply that asks for one read of f.txt, and each run
# ended by a text reply.
bench_read_rounds() {
	i=0
	while [ $i -lt "$2" ]; do
		echo '{"tool_calls": [{"name": "read", "args": {"path": "f.txt"}}],' \
			'"usage": {"input": 1000, "cached_input": 900, "output": 8}, "repeat": '"$1"'}'
		echo '{"text": "done"}'
		i=$((i + 1))
	done
}

bench_read_work() {
	mkdir -p "$tmp/work"
	head -c 1024 /dev/zero | tr '\0' x >"$tmp/work/f.txt"
}
