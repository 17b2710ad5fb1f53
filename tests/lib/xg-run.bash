# Helpers for the tests of xg-run against the fake provider
# (load lib/fake-provider first): serve, xgrun, recs, end_field, and
# small_catalog for a model with a tiny context window.

KINDS="openai-chat openai-responses anthropic-messages"

xg_run_setup() {
	unset OPENAI_API_KEY ANTHROPIC_API_KEY OPENROUTER_API_KEY
	export XG_TEST_KEY=test-secret-4d7a
	export FAKE_PROVIDER_KEY=$XG_TEST_KEY
	CONVS="$XG_HOME/state/conversations"
}

# serve [KIND]: starts the fake provider on the script given on stdin and
# points the catalog's provider "fake" at it, speaking KIND (openai-chat).
serve() {
	fake_provider_stop
	fake_provider_start || return 1
	fake_catalog "${1:-openai-chat}"
}

# small_catalog KIND WINDOW OUTPUT: as serve's catalog, with fake/m's
# context window and output limit set (call it after serve).
small_catalog() {
	cat >"$XG_HOME/config/models.json" <<-EOF
	{"providers": {"fake": {"kind": "$1", "base_url": "$FAKE_URL", "key_env": "XG_TEST_KEY",
	  "models": {"m": {"context_window": $2, "max_output_tokens": $3,
	                   "efforts": [], "default_effort": null}}}}}
	EOF
}

# Runs xg-run on fake/m with stdin closed off.
xgrun() {
	run_split xg-run --model fake/m "$@" </dev/null
}

# The records of type $1 in $output, one compact line each.
recs() {
	printf '%s\n' "$output" | jq -c --arg t "$1" 'select(.type == $t)'
}

# A field of the run_end record.
end_field() {
	printf '%s\n' "$output" | jq -r "select(.type == \"run_end\") | $1"
}
