# Starting and stopping the loopback fake provider from a bats test:
#
#   load lib/fake-provider
#   fake_provider_start <<'EOF'          (the script, NDJSON, on stdin)
#   {"text": "Hello"}
#   EOF
#   ... "$FAKE_URL" is http://127.0.0.1:PORT/v1, "$FAKE_LOG" the request log
#   fake_provider_stop                   (in teardown)
#
# The server is xg-fake-provider (bin/, made from cmd/xg-fake-provider.py);
# xg-fake-provider(1) describes the script's steps and the request log.
# --idle-exit ends a server a test left behind.
fake_provider_start() {
	local dir="$BATS_TEST_TMPDIR/fake" i
	mkdir -p "$dir"
	cat >"$dir/script.ndjson"
	FAKE_LOG="$dir/requests.ndjson"
	rm -f "$dir/port" "$FAKE_LOG"
	# fd 3 is bats' own: a background server must not hold it open.
	xg-fake-provider --script "$dir/script.ndjson" --log "$FAKE_LOG" \
		--port-file "$dir/port" --idle-exit 120 </dev/null >"$dir/server.out" 2>&1 3>&- &
	FAKE_PID=$!
	for i in $(seq 1 400); do
		[ -s "$dir/port" ] && break
		sleep 0.05
	done
	if [ ! -s "$dir/port" ]; then
		echo "xg-fake-provider did not start:" >&2
		cat "$dir/server.out" >&2
		return 1
	fi
	FAKE_PORT=$(cat "$dir/port")
	FAKE_URL="http://127.0.0.1:$FAKE_PORT/v1"
	export FAKE_LOG FAKE_PORT FAKE_URL FAKE_PID
}

# fake_catalog KIND: the catalog in $XG_HOME gets a provider "fake" that
# speaks KIND at the fake provider, with one model, fake/m, whose key is
# $XG_TEST_KEY.
fake_catalog() {
	mkdir -p "$XG_HOME/config"
	cat >"$XG_HOME/config/models.json" <<-EOF
	{"providers": {"fake": {"kind": "$1", "base_url": "$FAKE_URL", "key_env": "XG_TEST_KEY",
	  "models": {"m": {"context_window": 100000, "max_output_tokens": 4096,
	                   "efforts": [], "default_effort": null}}}}}
	EOF
}

fake_provider_stop() {
	if [ -n "${FAKE_PID:-}" ]; then
		kill "$FAKE_PID" 2>/dev/null || true
		wait "$FAKE_PID" 2>/dev/null || true
		FAKE_PID=
	fi
}

# Runs a Python expression over the request log: "log" is the list of
# logged requests.  fake_log 'print(len(log))'
fake_log() {
	python3 -c "import json,sys
log = [json.loads(l) for l in open('$FAKE_LOG') if l.strip()]
$1"
}
