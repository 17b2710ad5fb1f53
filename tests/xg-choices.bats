#!/usr/bin/env bats
# xg-choices: the catalog, accounts and keys, saved choices, resolution and
# the start model of a conversation, the models a server serves.  The
# fixture catalog (tests/fixtures/choices/share) has providers alpha and
# beta, which need XG_TEST_ALPHA_KEY and XG_TEST_BETA_KEY, and local, which
# needs none and is picked by itself only once configured.

load lib/helper
load lib/fake-provider

setup() {
	unset OPENAI_API_KEY ANTHROPIC_API_KEY OPENROUTER_API_KEY XG_TEST_ALPHA_KEY XG_TEST_BETA_KEY
	unset LLAMACPP_BASE_URL OLLAMA_BASE_URL XG_TEST_LOCAL_URL FAKE_PROVIDER_KEY
	export XG_SHARE_DIR="$FIXTURES/choices/share"
	CONFIG="$XG_HOME/config"
	ACCT="$CONFIG/accounts/default"
	CONVS="$XG_HOME/state/conversations"
}

teardown() { fake_provider_stop; }

choices() { mkdir -p "$ACCT"; cat > "$ACCT/choices.json"; }
user_catalog() { mkdir -p "$CONFIG"; cat > "$CONFIG/models.json"; }
conversation() { mkdir -p "$CONVS"; cat > "$CONVS/$1.jsonl"; }

# Sets the fixture keys named in a comma list ("alpha,beta", "none").
keys() {
	unset XG_TEST_ALPHA_KEY XG_TEST_BETA_KEY
	case ",$1," in *,alpha,*) export XG_TEST_ALPHA_KEY=alpha-secret ;; esac
	case ",$1," in *,beta,*) export XG_TEST_BETA_KEY=beta-secret ;; esac
}

# Prints "k=v" for the given fields of the records of type $1 in $output,
# one line per record, with null for a missing or null field.
fields() {
	python3 -c '
import json, sys
t = sys.argv[1]
for line in sys.stdin:
    if not line.strip():
        continue
    r = json.loads(line)
    if r.get("type") != t:
        continue
    out = []
    for f in sys.argv[2:]:
        v = r
        for part in f.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        out.append("%s=%s" % (f, "null" if v is None else (v if isinstance(v, str) else json.dumps(v))))
    print(" ".join(out))
' "$@" <<<"$output"
}

# The command line takes the modes normal and plan only; a choices.json
# and a request may name others.  resolve_mode MODE [-v] resolves MODE: by
# resolve for those two, else by start on a request of that mode.
resolve_mode() {
	case $1 in
	normal | plan) run_split xg-choices resolve ${2:-} --mode "$1" ;;
	*) run_split xg-choices start ${2:-} <<<"{\"type\":\"request\",\"mode\":\"$1\"}" ;;
	esac
}

# Counts the records of type $1 in $output.
count() { python3 -c 'import json,sys; print(sum(1 for l in sys.stdin if l.strip() and json.loads(l).get("type")==sys.argv[1]))' "$1" <<<"$output"; }

saved_choices() {
	choices <<-'EOF'
	{
	  "plan": {"model": "beta/b1", "effort": "high", "updatedAt": "2026-11-01T00:00:00.000Z"},
	  "normal": {"model": "alpha/a1", "effort": "low", "updatedAt": "2026-10-01T00:00:00.000Z"},
	  "review": {"model": "alpha/a2", "effort": "minimal", "updatedAt": "2026-11-20T00:00:00.000Z"},
	  "old": {"model": "beta/b2", "updatedAt": "2026-09-01T00:00:00.000Z"},
	  "fast": {"model": "alpha/a2", "effort": null, "updatedAt": "2026-08-01T00:00:00.000Z"},
	  "deep": {"model": "alpha/a2", "effort": "high", "updatedAt": "2026-07-01T00:00:00.000Z"}
	}
	EOF
}

# ---- the catalog ----

@test "the shipped catalog names each provider's API kind, base URL and key variable" {
	export XG_SHARE_DIR="$XG_SRCDIR/share/xg"
	run_split xg-choices models
	assert_success
	run python3 -c '
import json, sys
seen = {}
for l in sys.stdin:
    r = json.loads(l)
    seen[r["provider"]] = (r["kind"], r["base_url"], r["key_env"], r.get("dialect"), r["authenticated"], r["auth"])
for p in sorted(seen):
    print(p, *seen[p])
' <<<"$output"
	assert_output - <<-'EOF'
	anthropic anthropic-messages https://api.anthropic.com/v1 ANTHROPIC_API_KEY None False None
	llamacpp openai-chat http://127.0.0.1:8080/v1 None llama.cpp True none
	ollama openai-chat http://127.0.0.1:11434/v1 None ollama True none
	openai openai-responses https://api.openai.com/v1 OPENAI_API_KEY None False None
	openrouter openai-chat https://openrouter.ai/api/v1 OPENROUTER_API_KEY openrouter False None
	EOF
}

@test "every shipped model has a context window, an output limit and a default effort it accepts" {
	export XG_SHARE_DIR="$XG_SRCDIR/share/xg"
	run_split xg-choices models
	assert_success
	run python3 -c '
import json, sys
n = 0
for l in sys.stdin:
    r = json.loads(l); n += 1
    assert r["id"] == r["provider"] + "/" + r["name"], r
    assert r["context_window"] > r["max_output_tokens"] > 0, r["id"]
    e, d = r["efforts"], r["default_effort"]
    assert (d in e) if e else d is None, r["id"]
print(n >= 15)
' <<<"$output"
	assert_output True
}

@test "models says per model whether the account is authenticated, and how" {
	export XG_TEST_ALPHA_KEY=alpha-secret
	run_split xg-choices models
	assert_success
	run fields catalog_model id authenticated auth
	assert_output - <<-'EOF'
	id=alpha/a1 authenticated=true auth=env
	id=alpha/a2 authenticated=true auth=env
	id=beta/b1 authenticated=false auth=null
	id=beta/b2 authenticated=false auth=null
	id=local/l1 authenticated=true auth=none
	EOF
}

@test "the user's models.json adds providers and models, overrides fields and removes models" {
	user_catalog <<-'EOF'
	{"providers": {
	  "vllm": {"kind": "openai-chat", "base_url": "http://10.0.0.5:8000/v1", "key_env": null,
	           "models": {"qwen": {"context_window": 32768, "max_output_tokens": 4096,
	                               "efforts": [], "default_effort": null}}},
	  "local": {"base_url": "http://127.0.0.1:7777/v1"},
	  "alpha": {"models": {"a2": null, "a1": {"default_effort": "high"}}}
	}}
	EOF
	run_split xg-choices models
	assert_success
	run fields catalog_model id base_url default_effort
	assert_output - <<-'EOF'
	id=alpha/a1 base_url=https://alpha.example/v1 default_effort=high
	id=beta/b1 base_url=https://beta.example/v1 default_effort=high
	id=beta/b2 base_url=https://beta.example/v1 default_effort=null
	id=local/l1 base_url=http://127.0.0.1:7777/v1 default_effort=null
	id=vllm/qwen base_url=http://10.0.0.5:8000/v1 default_effort=null
	EOF
}

@test "a user models.json that is not JSON is exit 78 naming the file and the line" {
	user_catalog <<-'EOF'
	{"providers": {
	  "local": {"base_url": "http://x/v1",}
	}}
	EOF
	run_split xg-choices models
	assert_failure 78
	assert_output ''
	[[ "$stderr" == *"$CONFIG/models.json"* ]]
	[[ "$stderr" == *"line 2"* ]]
}

@test "a user provider with an unknown API kind is exit 78 naming the provider and the field" {
	user_catalog <<<'{"providers": {"vllm": {"kind": "grpc", "base_url": "http://x/v1", "models": {}}}}'
	run_split xg-choices resolve
	assert_failure 78
	[[ "$stderr" == *"$CONFIG/models.json"*"provider 'vllm'"*"'kind'"* ]]
}

@test "a model whose default effort it does not accept is left out, and using it is exit 78" {
	user_catalog <<<'{"providers": {"alpha": {"models": {"a2": {"default_effort": "high"}}}}}'
	run_split xg-choices models
	assert_success
	[[ "$stderr" == *"'$CONFIG/models.json' line 1: model 'alpha/a2': 'default_effort' must be one of its 'efforts', so the model is left out"* ]]
	run fields catalog_model id
	refute_line id=alpha/a2
	assert_line id=alpha/a1
	keys alpha
	run_split xg-choices start --model alpha/a2 </dev/null
	assert_failure 78
	run fields model id reason
	assert_output "id=null reason='$CONFIG/models.json' line 1: model 'alpha/a2': 'default_effort' must be one of its 'efforts', so the model is left out"
}

# ---- accounts ----

@test "the current account is --account, else XG_ACCOUNT, else the account file, else default" {
	keys alpha
	mkdir -p "$CONFIG"
	while read -r flag env file want; do
		rm -f "$CONFIG/account"
		[ "$file" = - ] || printf '%s\n' "$file" > "$CONFIG/account"
		args=()
		[ "$flag" = - ] || args=(--account "$flag")
		if [ "$env" = - ]; then unset XG_ACCOUNT; else export XG_ACCOUNT="$env"; fi
		run_split xg-choices resolve "${args[@]}"
		assert_success
		run fields model account
		assert_output "account=$want"
	done <<-'EOF'
	work home side work
	- home side home
	- - side side
	- - - default
	EOF
}

@test "accounts lists the accounts that exist and marks the current one" {
	mkdir -p "$CONFIG/accounts/work" "$CONFIG/accounts/home" "$CONFIG/accounts/.hidden"
	export XG_ACCOUNT=home
	run_split xg-choices accounts
	assert_success
	run fields account name current
	assert_output - <<-'EOF'
	name=home current=true
	name=work current=false
	EOF
	export XG_ACCOUNT=fresh
	run_split xg-choices accounts
	run fields account name current
	assert_output - <<-'EOF'
	name=home current=false
	name=work current=false
	name=fresh current=true
	EOF
}

@test "an account name that is not valid is a usage error from --account and 78 from XG_ACCOUNT" {
	run_split xg-choices resolve --account ../x
	assert_failure 2
	XG_ACCOUNT=../x run_split xg-choices resolve
	assert_failure 78
	[[ "$stderr" == *"XG_ACCOUNT"* ]]
}

# ---- credentials ----

@test "auth stores the key from standard input in a private auth.json, and the provider is authenticated" {
	run_split xg-choices auth alpha <<<"alpha-stored-key"
	assert_success
	assert_output ''
	[ "$(stat -c %a "$ACCT/auth.json")" = 600 ]
	[ "$(stat -c %a "$ACCT")" = 700 ]
	grep -q '"alpha-stored-key"' "$ACCT/auth.json"
	run_split xg-choices models
	run fields catalog_model id authenticated auth
	assert_line 'id=alpha/a1 authenticated=true auth=auth.json'
	assert_line 'id=beta/b1 authenticated=false auth=null'
	run_split xg-choices auth beta <<<"beta-stored-key"
	grep -q '"alpha-stored-key"' "$ACCT/auth.json"
	grep -q '"beta-stored-key"' "$ACCT/auth.json"
	run_split xg-choices auth --remove alpha
	assert_success
	! grep -q alpha-stored-key "$ACCT/auth.json"
	[ "$(stat -c %a "$ACCT/auth.json")" = 600 ]
}

@test "auth and auth --remove sweep away the temporary files a killed auth left, keys and all" {
	mkdir -p "$ACCT"
	chmod 700 "$ACCT"
	printf '{"alpha": {"key": "left-behind-key-1"}}\n' >"$ACCT/auth.json.tmpAbC123"
	printf '{"alpha": {"key": "left-behind-key-2"}}\n' >"$ACCT/auth.json.tmpXyZ789"
	echo keep >"$ACCT/choices.json.tmpQrS456"
	run_split xg-choices auth alpha <<<"alpha-stored-key"
	assert_success
	[ -z "$(find "$ACCT" -name 'auth.json.tmp*')" ] || fail "left: $(ls "$ACCT")"
	[ -e "$ACCT/choices.json.tmpQrS456" ]
	printf '{"alpha": {"key": "left-behind-key-3"}}\n' >"$ACCT/auth.json.tmpDeF000"
	run_split xg-choices auth --remove alpha
	assert_success
	[ -z "$(find "$ACCT" -name 'auth.json.tmp*')" ] || fail "left: $(ls "$ACCT")"
	! grep -rq left-behind-key "$ACCT"
}

@test "auth never takes the key from the command line, and a closed standard input is a usage error" {
	run_split bash -c 'exec xg-choices auth alpha <&-'
	assert_failure 2
	[[ "$stderr" == *"standard input"* ]]
	run_split xg-choices auth alpha some-key </dev/null
	assert_failure 2
	run_split xg-choices auth alpha </dev/null
	assert_failure 65
	[ ! -e "$ACCT/auth.json" ]
}

@test "auth on a terminal asks for the key with the echo off; it never shows, and it is kept" {
	run_split python3 "$XG_SRCDIR/tests/lib/pty_type.py" "not shown" type:typed-secret-42 \
		xg-choices auth alpha
	assert_success
	[[ "$output" == "alpha key (typing is not shown): "* ]] || fail "$output"
	[[ "$output" != *typed-secret-42* ]] || fail "the key showed: $output"
	assert_equal "$stderr" $'echo while asked: off\necho after: on'
	assert_equal "$(jq -r .alpha.key "$ACCT/auth.json")" typed-secret-42
	[ "$(stat -c %a "$ACCT/auth.json")" = 600 ]
	# A pipe still works as before, with no question asked.
	run_split xg-choices auth beta <<<"piped-secret"
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(jq -r .beta.key "$ACCT/auth.json")" piped-secret
}

@test "auth on a terminal puts the echo back when a signal ends it, and keeps nothing" {
	for sig in INT TERM HUP; do
		run_split python3 "$XG_SRCDIR/tests/lib/pty_type.py" "not shown" "signal:$sig" \
			xg-choices auth alpha
		assert_equal "$status" "$((128 + $(kill -l "$sig")))"
		assert_equal "$stderr" $'echo while asked: off\necho after: on'
	done
	run_split python3 "$XG_SRCDIR/tests/lib/pty_type.py" "not shown" "type:two words" \
		xg-choices auth alpha
	assert_failure 65
	[[ "$output" == *"space or a control character"* ]]
	[[ "$output" != *"two words"* ]]
	[ ! -e "$ACCT/auth.json" ]
}

@test "auth refuses a provider that is not in the catalog" {
	run_split xg-choices auth gamma <<<"k"
	assert_failure 78
	[[ "$stderr" == *"'gamma'"* ]]
}

@test "an auth.json that group or others can read is refused with exit 77 and how to fix it" {
	mkdir -p "$ACCT"
	printf '{"alpha": {"key": "leaky-key"}}\n' > "$ACCT/auth.json"
	for mode in 640 604 644; do
		chmod "$mode" "$ACCT/auth.json"
		run_split xg-choices models
		assert_failure 77
		[[ "$stderr" == *"$ACCT/auth.json"*"chmod 600"* ]]
		run_split xg-choices auth beta <<<"another"
		assert_failure 77
		echo '{"type":"request","text":"x"}' | {
			run_split xg-choices start --model alpha/a1
			assert_failure 77
			assert_line --index 0 '{"type":"request","text":"x"}'
			run fields model id reason
			[[ "$output" == "id=null reason="* ]]
		}
	done
	[[ "$(cat "$ACCT/auth.json")" == *leaky-key* ]]
	chmod 600 "$ACCT/auth.json"
	run_split xg-choices resolve --mode normal
	assert_success
	run fields model id
	assert_output id=alpha/a1
}

@test "a key planted in the environment and in auth.json appears in no output" {
	canary=xg-canary-9f2c1d7e5b
	export XG_TEST_ALPHA_KEY="$canary-env"
	printf '%s\n' "$canary-stored" | xg-choices auth beta
	saved_choices
	conversation c1 <<<'{"type":"conversation","schema":"xg/1","id":"c1","created":"2026-11-30T00:00:00.000Z","cwd":"/"}'
	all="$BATS_TEST_TMPDIR/all"
	: > "$all"
	{
		xg-choices --help
		xg-choices models
		xg-choices accounts
		xg-choices get
		xg-choices resolve -v --mode plan
		xg-choices start -v --conversation c1 </dev/null
		xg-choices start --model beta/b1 --effort nonsense </dev/null
		xg-choices start --model alpha/zz </dev/null
		xg-choices set --mode plan --model beta/b1 --effort wrong
		printf 'bad key with spaces %s\n' "$canary-argv" | xg-choices auth alpha
		printf '%s\n' "$canary-new" | xg-choices auth alpha
		xg-choices auth gamma </dev/null
		chmod 644 "$ACCT/auth.json"
		xg-choices models
		xg-choices start </dev/null
		XG_TEST_ALPHA_KEY= xg-choices resolve -v
		chmod 600 "$ACCT/auth.json"
		printf '{"beta": {"key": "%s-broken"' "$canary" > "$ACCT/auth.json"
		XG_TEST_ALPHA_KEY= xg-choices resolve -v
	} >>"$all" 2>&1 || true
	[ -s "$all" ]
	run grep -c "$canary" "$all"
	assert_output 0
	run grep -rl "$canary" "$CONVS" "$ACCT/choices.json"
	assert_output ''
}

# ---- saved choices ----

@test "set saves the mode's model, effort and time, and get prints the saved choices" {
	run_split xg-choices set --mode plan --model beta/b1 --effort low
	assert_success
	assert_output ''
	run_split xg-choices set --mode normal --model alpha/a2
	assert_success
	run_split xg-choices get
	assert_success
	run fields choice account mode model effort
	assert_output - <<-'EOF'
	account=default mode=plan model=beta/b1 effort=low
	account=default mode=normal model=alpha/a2 effort=null
	EOF
	run_split xg-choices get
	run fields choice updatedAt
	assert_line --index 0 --regexp '^updatedAt=20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z$'
	run_split xg-choices get --mode plan
	assert_success
	run count choice
	assert_output 1
	run_split xg-choices get --account other --mode plan
	assert_failure 1
	assert_output ''
}

@test "set, get and resolve take the modes normal and plan only, and say which was meant" {
	for c in "set --mode nromal --model alpha/a1" "get --mode nromal" "resolve --mode normla"; do
		run_split xg-choices $c
		assert_failure 2
		[[ "$stderr" == "xg-choices: '"*"' is not a mode: the modes are normal and plan; did you mean 'normal'?"* ]] ||
			fail "$c: $stderr"
	done
	run_split xg-choices set --mode pln --model alpha/a1
	assert_failure 2
	[[ "$stderr" == *"did you mean 'plan'?"* ]]
	run_split xg-choices set --mode review --model alpha/a1
	assert_failure 2
	[[ "$stderr" == *"'review' is not a mode: the modes are normal and plan"$'\n'* ]]
	[ ! -e "$ACCT/choices.json" ]
	# start, a stage, takes any mode name, as the other stages do.
	keys alpha
	run_split xg-choices start --mode review </dev/null
	assert_success
}

@test "set without --mode saves normal's choice, as --help says" {
	run_split xg-choices --help
	[[ "$output" == *"--mode mode"*"default normal"* ]]
	run_split xg-choices set --model alpha/a2 --effort low
	assert_success
	run_split xg-choices get --json
	run fields choice mode model effort
	assert_output 'mode=normal model=alpha/a2 effort=low'
	run_split xg-choices set --effort low
	assert_failure 2
	[[ "$stderr" == *"'set' needs --model"* ]]
}

@test "models, get and accounts draw a table on a terminal, and give records in a pipe or with --json" {
	user_catalog <<<'{"providers": {"alpha": {"models": {"a1": {"price": {"input": 1.25, "output": 10}}}}}}'
	keys alpha
	xg-choices set --mode normal --model alpha/a1 --effort low
	xg-choices set --mode plan --model beta/b1
	xg-choices --account work set --model alpha/a2
	run python3 "$XG_SRCDIR/tests/lib/pty_run.py" xg-choices models
	assert_success
	assert_equal "$(tr -d '\r' <<<"$output")" "$(cat <<-'EOF'
	MODEL     READY                           WINDOW  EFFORTS           PRICE IN/OUT
	alpha/a1  yes (XG_TEST_ALPHA_KEY)         100k    low medium* high  $1.25/$10.00
	alpha/a2  yes (XG_TEST_ALPHA_KEY)         50k     minimal low*      -
	beta/b1   no key (XG_TEST_BETA_KEY)       200k    low high*         -
	beta/b2   no key (XG_TEST_BETA_KEY)       200k    -                 -
	local/l1  local, XG_TEST_LOCAL_URL unset  8k      -                 -
	A key: 'xg-choices auth PROVIDER' (it asks for it), or the provider's variable.
	EOF
	)"
	run env TZ=UTC python3 "$XG_SRCDIR/tests/lib/pty_run.py" xg-choices get
	assert_success
	run tr -d '\r' <<<"$output"
	assert_line --index 0 'MODE    MODEL     EFFORT  SAVED'
	assert_line --index 1 --regexp '^normal  alpha/a1  low     20[0-9]{2}-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]$'
	assert_line --index 2 --regexp '^plan    beta/b1   -       20'
	assert_equal "${#lines[@]}" 3
	run python3 "$XG_SRCDIR/tests/lib/pty_run.py" xg-choices accounts
	assert_equal "$(tr -d '\r' <<<"$output")" $'*  default\n   work'
	# The same verbs in a pipe, and with --json on a terminal: records.
	for verb in models get accounts; do
		run_split xg-choices $verb
		assert_success
		jq -e -s 'length > 0 and all(.type)' <<<"$output" >/dev/null || fail "$verb: $output"
		run python3 "$XG_SRCDIR/tests/lib/pty_run.py" xg-choices $verb --json
		assert_success
		tr -d '\r' <<<"$output" | jq -e -s 'length > 0 and all(.type)' >/dev/null ||
			fail "$verb --json: $output"
	done
	run python3 "$XG_SRCDIR/tests/lib/pty_run.py" xg-choices models --json
	assert_equal "$(tr -d '\r' <<<"$output" | jq -r 'select(.id == "alpha/a1") | .price.input')" 1.25
}

@test "get on a terminal with nothing saved says how to save a choice" {
	run python3 "$XG_SRCDIR/tests/lib/pty_run.py" xg-choices get
	assert_success
	assert_output --partial "no model choice saved yet: 'xg-choices set --model ID' saves one"
}

@test "set checks the model against the catalog and the effort against the model" {
	saved_choices
	cp "$ACCT/choices.json" "$BATS_TEST_TMPDIR/before"
	run_split xg-choices set --mode plan --model alpha/nope
	assert_failure 78
	[[ "$stderr" == *"'alpha/nope'"*"not offered"* ]]
	run_split xg-choices set --mode plan --model beta/b1 --effort medium
	assert_failure 78
	[[ "$stderr" == *"low, high"* ]]
	run_split xg-choices set --mode plan --model beta/b2 --effort low
	assert_failure 78
	run_split xg-choices set --mode plan
	assert_failure 2
	run_split xg-choices set --mode Plan --model beta/b1
	assert_failure 2
	cmp "$ACCT/choices.json" "$BATS_TEST_TMPDIR/before"
}

@test "twenty concurrent sets leave a valid choices.json holding one of them" {
	xg-choices set --mode normal --model alpha/a1
	for i in $(seq 1 20); do
		if [ $((i % 2)) = 0 ]; then m=beta/b1 e=low; else m=alpha/a1 e=high; fi
		xg-choices set --mode plan --model "$m" --effort "$e" &
	done
	wait
	run python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
print(sorted(c), (c["plan"]["model"], c["plan"]["effort"]) in [("beta/b1", "low"), ("alpha/a1", "high")])
' "$ACCT/choices.json"
	assert_output "['normal', 'plan'] True"
	run ls "$ACCT"
	refute_output --partial tmp
}

@test "a broken choices.json is exit 78 naming the file and the line, and no command rewrites it" {
	mkdir -p "$ACCT"
	printf '{\n  "plan": {"model": "beta/b1",\n  "effort": "high"\n' > "$ACCT/choices.json"
	cp "$ACCT/choices.json" "$BATS_TEST_TMPDIR/before"
	run_split xg-choices get
	assert_failure 78
	[[ "$stderr" == *"$ACCT/choices.json"*"line 4"* ]]
	export XG_TEST_ALPHA_KEY=k
	run_split xg-choices resolve
	assert_failure 78
	run_split xg-choices set --mode normal --model alpha/a1
	assert_failure 78
	echo '{"type":"request","text":"x"}' | {
		run_split xg-choices start
		assert_failure 78
		assert_line --index 0 '{"type":"request","text":"x"}'
	}
	cmp "$ACCT/choices.json" "$BATS_TEST_TMPDIR/before"
}

@test "a choices.json entry of the wrong shape is exit 78 naming the mode and the field" {
	choices <<<'{"plan": {"model": "beta/b1", "updatedAt": "yesterday"}}'
	run_split xg-choices get
	assert_failure 78
	[[ "$stderr" == *"mode 'plan'"*"'updatedAt'"* ]]
	choices <<<'{"plan": {"model": "b1"}}'
	run_split xg-choices resolve
	assert_failure 78
	[[ "$stderr" == *"mode 'plan'"*"'model'"* ]]
}

# ---- resolution ----

@test "resolve takes the newest saved selection field by field (table)" {
	saved_choices
	while read -r mode keyset id effort choice from; do
		keys "$keyset"
		resolve_mode "$mode"
		assert_success
		run fields model id effort source choice effort_from mode
		assert_output "id=$id effort=$effort source=mode choice=$choice effort_from=$from mode=$mode"
	done <<-'EOF'
	plan    alpha,beta beta/b1  high    plan   plan
	plan    alpha      alpha/a1 low     normal normal
	normal  beta       beta/b1  high    plan   plan
	review  alpha      alpha/a2 minimal review review
	review  beta       beta/b1  high    plan   plan
	ask     alpha      alpha/a1 low     normal normal
	old     beta       beta/b2  null    old    default
	fast    alpha      alpha/a2 low     fast   normal
	deep    alpha      alpha/a2 low     deep   normal
	EOF
}

@test "resolve falls back to the model's default effort when no candidate's effort fits" {
	saved_choices
	user_catalog <<<'{"providers": {"alpha": {"models": {"a2": {"efforts": ["medium", "max"], "default_effort": "max"}}}}}'
	keys alpha
	resolve_mode review
	assert_success
	run fields model id effort effort_from
	assert_output "id=alpha/a2 effort=max effort_from=default"
}

@test "resolve skips a saved model the catalog no longer offers" {
	saved_choices
	user_catalog <<<'{"providers": {"beta": {"models": {"b1": null}}}}'
	keys alpha,beta
	run_split xg-choices resolve -v --mode plan
	assert_success
	run fields model id skipped
	assert_output 'id=alpha/a1 skipped=[{"mode": "plan", "id": "beta/b1", "reason": "'"'"'beta/b1'"'"' is not offered by the catalog"}]'
	[[ "$stderr" == *"skipped beta/b1"*"not offered"* ]]
}

@test "with -v the record says which saved choices were skipped and why" {
	saved_choices
	keys beta
	resolve_mode review -v
	assert_success
	run python3 -c 'import json,sys; r=[json.loads(l) for l in sys.stdin if "\"model\"" in l][0]; [print(s["mode"], s["id"], "XG_TEST_ALPHA_KEY" in s["reason"]) for s in r["skipped"]]' <<<"$output"
	assert_output - <<-'EOF'
	review alpha/a2 True
	normal alpha/a1 True
	EOF
	resolve_mode review
	run fields model skipped
	assert_output 'skipped=null'
}

@test "with nothing saved resolve uses the catalog's first usable model and says so" {
	keys beta
	run_split xg-choices resolve
	assert_success
	run fields model id effort choice
	assert_output 'id=beta/b1 effort=high choice=null'
	[[ "$stderr" == *"no usable saved model"*"beta/b1"* ]]
}

@test "with no usable model resolve writes id null with a reason: 77 for saved models without a key, else 78" {
	saved_choices
	run_split xg-choices resolve --mode plan
	assert_failure 77
	run fields model id reason exit
	assert_output "id=null reason=no model can be used for account 'default': account 'default' has no credentials for provider 'beta' (set XG_TEST_BETA_KEY, or run 'xg-choices auth beta') exit=77"
	rm "$ACCT/choices.json"
	run_split xg-choices resolve
	assert_failure 78
	run fields model id exit
	assert_output 'id=null exit=78'
	[[ "$stderr" == *"no model is configured for account 'default'"* ]]
	user_catalog <<<'{"providers": {"local": null, "alpha": null, "beta": null}}'
	run_split xg-choices resolve
	assert_failure 78
	run fields model id reason
	assert_output 'id=null reason=the model catalog offers no model'
}

# ---- the start model of a conversation ----

history_on() { # conversation id, then the model and effort of its last assistant message
	conversation "$1" <<-EOF
	{"type":"conversation","schema":"xg/1","id":"$1","created":"2026-11-01T00:00:00.000Z","cwd":"/tmp"}
	{"type":"message","at":"2026-11-01T00:00:01.000Z","role":"user","text":"hello"}
	{"type":"message","at":"2026-11-01T00:00:02.000Z","role":"assistant","text":"hi","model":"$2","effort":"$3"}
	{"type":"message","at":"2026-11-01T00:00:03.000Z","role":"user","text":"the model is gone"}
	EOF
}

@test "start picks the model by the five cases (table)" {
	saved_choices
	history_on on-a2 alpha/a2 minimal
	history_on on-b1 beta/b1 low
	conversation bare <<<'{"type":"conversation","schema":"xg/1","id":"bare","created":"2026-11-01T00:00:00.000Z","cwd":"/"}'
	# request fields (JSON) | keys | flags | source id effort replaced.id
	while IFS='|' read -r req keyset flags want; do
		keys "$keyset"
		run_split xg-choices start $flags <<<"{\"type\":\"request\",\"text\":\"go\"$req}"
		run fields model source id effort replaced.id
		assert_output "$want"
	done <<-'EOF'
	,"model":"beta/b2"|beta||source=flag id=beta/b2 effort=null replaced.id=null
	,"model":"alpha/a1","conversation":"on-b1"|alpha,beta||source=flag id=alpha/a1 effort=low replaced.id=null
	|alpha|--model alpha/a2 --effort minimal|source=flag id=alpha/a2 effort=minimal replaced.id=null
	,"model":"alpha/a1"|beta|--model beta/b1|source=flag id=beta/b1 effort=low replaced.id=null
	|alpha||source=mode id=alpha/a1 effort=low replaced.id=null
	,"mode":"plan"|alpha,beta||source=mode id=beta/b1 effort=high replaced.id=null
	,"conversation":"never-seen"|alpha||source=mode id=alpha/a1 effort=low replaced.id=null
	,"conversation":"bare","mode":"review"|alpha||source=mode id=alpha/a2 effort=minimal replaced.id=null
	,"conversation":"on-b1"|beta||source=history id=beta/b1 effort=low replaced.id=null
	,"conversation":"on-b1","mode":"review"|beta||source=history id=beta/b1 effort=low replaced.id=null
	|beta|--conversation on-a2|source=fallback id=beta/b1 effort=high replaced.id=alpha/a2
	EOF
}

@test "an explicit model that is not authenticated or not offered gets id null, a reason, and 77 or 78" {
	run_split xg-choices start --model beta/b1 <<<'{"type":"request","text":"go"}'
	assert_failure 77
	assert_line --index 0 '{"type":"request","text":"go"}'
	run fields model source id requested reason
	assert_output "source=flag id=null requested=beta/b1 reason=account 'default' has no credentials for provider 'beta' (set XG_TEST_BETA_KEY, or run 'xg-choices auth beta')"
	run_split xg-choices start <<<'{"type":"request","text":"go","model":"beta/b9"}'
	assert_failure 78
	run fields model id requested
	assert_output 'id=null requested=beta/b9'
	keys beta
	run_split xg-choices start --model beta/b1 --effort medium </dev/null
	assert_failure 78
	[[ "$stderr" == *"does not accept effort 'medium'"* ]]
}

@test "a fallback is appended to the conversation, leaves choices.json alone and gives one notice" {
	saved_choices
	history_on c7 alpha/a2 minimal
	cp "$ACCT/choices.json" "$BATS_TEST_TMPDIR/before"
	keys beta
	run_split xg-choices start <<<'{"type":"request","text":"go","conversation":"c7","mode":"plan"}'
	assert_success
	run count notice
	assert_output 1
	run_split xg-choices start <<<'{"type":"request","text":"go","conversation":"c7","mode":"plan"}' 
	cmp "$ACCT/choices.json" "$BATS_TEST_TMPDIR/before"
	run python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
c = [json.loads(l) for l in lines if json.loads(l)["type"] == "model_change"]
print(len(lines), len(c), c[0]["from"], c[0]["to"], c[0]["effort"], "XG_TEST_ALPHA_KEY" in c[0]["reason"], "at" in c[0])
' "$CONVS/c7.jsonl"
	assert_output '5 1 alpha/a2 beta/b1 high True True'
}

@test "the fallback's notice names the replaced model and the one used" {
	saved_choices
	history_on c8 alpha/a2 minimal
	keys beta
	run_split xg-choices start --conversation c8 </dev/null
	assert_success
	run fields notice from text
	[[ "$output" == "from=xg-choices text=conversation c8 ran on alpha/a2 (minimal)"*"continues on beta/b1 (high)"* ]]
	run_split xg-choices start --conversation c8 </dev/null
	run count notice
	assert_output 0
	run_split xg-choices start --conversation c8 </dev/null
	run fields model source id
	assert_output 'source=history id=beta/b1'
}

@test "a resumed conversation keeps the newer of its last model_change and its last assistant message" {
	keys alpha,beta
	conversation c9 <<-'EOF'
	{"type":"conversation","schema":"xg/1","id":"c9","created":"2026-11-01T00:00:00.000Z","cwd":"/"}
	{"type":"message","at":"2026-11-01T00:00:02.000Z","role":"assistant","text":"a","model":"alpha/a1","effort":"high"}
	{"type":"model_change","at":"2026-11-01T00:00:03.000Z","from":"alpha/a1","to":"beta/b1","effort":"low","reason":"person"}
	{"type":"message","at":"2026-11-01T00:00:04.000Z","role":"user","text":"mentions \"model\":\"alpha/a2\""}
	{"type":"variant_change","at":"2026-11-01T00:00:05.000Z","to":"default@abc"}
	EOF
	run_split xg-choices start --conversation c9 </dev/null
	run fields model source id effort
	assert_output 'source=history id=beta/b1 effort=low'
	echo '{"type":"message","at":"2026-11-01T00:00:06.000Z","role":"assistant","text":"b","model":"alpha/a2","effort":"minimal"}' >> "$CONVS/c9.jsonl"
	run_split xg-choices start --conversation c9 </dev/null
	run fields model source id effort
	assert_output 'source=history id=alpha/a2 effort=minimal'
}

@test "a torn last line of the conversation is ignored with a notice" {
	keys alpha,beta
	history_on c10 beta/b1 low
	printf '{"type":"model_change","at":"2026-11-01T00:00:09.000Z","from":"beta/b1","to":"alpha/a1","eff' >> "$CONVS/c10.jsonl"
	run_split xg-choices start --conversation c10 </dev/null
	recs=$output
	assert_success
	run fields model source id
	assert_output 'source=history id=beta/b1'
	output=$recs
	run fields notice from text
	assert_output "from=xg-choices text=the last line of conversation c10 is torn (an append that did not finish); it is ignored"
	[[ "$stderr" == *"torn"* ]]
}

@test "parallel starts of a conversation on an unusable model record one fallback" {
	saved_choices
	history_on r1 alpha/a2 minimal
	keys beta
	# Hold the conversation's lock so that every start reads the old model
	# before any of them can append.
	hold_lock "$CONVS/r1.jsonl" 30
	pids=()
	for i in $(seq 16); do
		xg-choices start --conversation r1 </dev/null >"$BATS_TEST_TMPDIR/out.$i" 2>/dev/null &
		pids+=($!)
	done
	sleep 0.5
	release_lock
	for p in "${pids[@]}"; do wait "$p"; done
	run grep -c '"type":"model_change"' "$CONVS/r1.jsonl"
	assert_output 1
	output=$(cat "$BATS_TEST_TMPDIR"/out.*)
	run fields model source id effort
	run sort <<<"$output"
	run uniq -c <<<"$output"
	assert_output - <<-'EOF'
	      1 source=fallback id=beta/b1 effort=high
	     15 source=history id=beta/b1 effort=high
	EOF
	output=$(cat "$BATS_TEST_TMPDIR"/out.*)
	run count notice
	assert_output 1
}

@test "an effort asked for without a model applies to the started model when it accepts it" {
	saved_choices
	history_on on-b1 beta/b1 low
	keys alpha,beta
	# request fields (JSON) | flags | source id effort effort_from
	while IFS='|' read -r req flags want; do
		run_split xg-choices start $flags <<<"{\"type\":\"request\",\"text\":\"go\"$req}"
		assert_success
		recs=$output
		run fields model source id effort effort_from
		assert_output "$want"
		output=$recs
		run count notice
		assert_output 0
	done <<-'EOF'
	,"effort":"high"||source=mode id=alpha/a1 effort=high effort_from=request.effort
	|--effort medium|source=mode id=alpha/a1 effort=medium effort_from=--effort
	,"effort":"low"|--effort high --mode plan|source=mode id=beta/b1 effort=high effort_from=--effort
	,"conversation":"on-b1","effort":"high"||source=history id=beta/b1 effort=high effort_from=request.effort
	EOF
}

@test "an effort the started model does not accept is not applied, and a notice says why" {
	saved_choices
	keys alpha
	run_split xg-choices start <<<'{"type":"request","effort":"ultra"}'
	assert_success
	recs=$output
	run fields model source id effort effort_from
	assert_output 'source=mode id=alpha/a1 effort=low effort_from=normal'
	output=$recs
	run fields notice text
	assert_output "text=effort 'ultra' (request.effort) was not applied: model alpha/a1 does not accept it (it accepts: low, medium, high); it runs at low"
	[[ "$stderr" == *"was not applied"* ]]
	run_split xg-choices start --effort minimal --mode review </dev/null
	assert_success
	run fields model id effort
	assert_output 'id=alpha/a2 effort=minimal'
	run_split xg-choices start --effort high --mode review </dev/null
	assert_success
	recs=$output
	run fields model id effort
	assert_output 'id=alpha/a2 effort=minimal'
	output=$recs
	run fields notice text
	[[ "$output" == "text=effort 'high' (--effort) was not applied: model alpha/a2 does not accept it"* ]]
}

@test "with no usable model start writes id null and exits 77, and the records still flow" {
	saved_choices
	history_on c11 alpha/a2 minimal
	user_catalog <<<'{"providers": {"local": null}}'
	input='{"type":"request","text":"go","conversation":"c11"}
{"type":"snapshot","commit":null}
{"type":"whatever","x":[1,2]}'
	run_split xg-choices start <<<"$input"
	assert_failure 77
	assert_line --index 0 '{"type":"request","text":"go","conversation":"c11"}'
	assert_line --index 2 '{"type":"snapshot","commit":null}'
	assert_line --index 3 '{"type":"whatever","x":[1,2]}'
	run fields model id source replaced.id reason
	[[ "$output" == "id=null source=fallback replaced.id=alpha/a2 reason=no model can be used for account 'default': account 'default' has no credentials for provider 'alpha'"* ]]
	run grep -c model_change "$CONVS/c11.jsonl"
	assert_output 0
}

@test "with no usable saved selection start uses the catalog's first usable model with a notice" {
	saved_choices
	user_catalog <<<'{"providers": {"local": {}}}'
	history_on c12 alpha/a2 minimal
	run_split xg-choices start --conversation c12 </dev/null
	assert_success
	run count notice
	assert_output 1
	run_split xg-choices start --conversation c13 </dev/null
	run fields notice text
	[[ "$output" == *"no usable saved model for mode 'normal'; using local/l1"* ]]
	run_split tail -n 1 "$CONVS/c12.jsonl"
	run fields model_change from to effort
	assert_output 'from=alpha/a2 to=local/l1 effort=null'
	run_split xg-choices start --conversation c12 </dev/null
	run fields model source id
	assert_output 'source=history id=local/l1'
}

@test "start passes every record through unchanged and in order" {
	keys alpha
	printf '%s\n' '{"type":"snapshot", "commit" : "abc"}' '{"type":"request","text":"one"}' \
		'{"zzz":1,"type":"x"}' '{"type":"request","text":"two","mode":"plan"}' > "$BATS_TEST_TMPDIR/in"
	run_split xg-choices start < "$BATS_TEST_TMPDIR/in"
	assert_success
	run python3 -c 'import json,sys; [print(json.loads(l)["type"]) for l in sys.stdin]' <<<"$output"
	assert_output - <<-'EOF'
	snapshot
	request
	notice
	model
	x
	request
	notice
	model
	EOF
	run_split xg-choices start < "$BATS_TEST_TMPDIR/in"
	run grep -v -e '"type":"model"' -e '"type":"notice"' <<<"$output"
	assert_output "$(cat "$BATS_TEST_TMPDIR/in")"
}

@test "start with no request on its input writes one model record from its options" {
	keys alpha
	run_split xg-choices start --mode review </dev/null
	assert_success
	run count model
	assert_output 1
	run_split bash -c 'exec xg-choices start --model alpha/a1 --effort high <&-'
	assert_success
	run fields model source id effort
	assert_output 'source=flag id=alpha/a1 effort=high'
}

@test "a request with a field of the wrong kind is exit 65 naming the line and the field" {
	run_split xg-choices start <<<$'{"type":"x"}\n{"type":"request","mode":7}'
	assert_failure 65
	[[ "$stderr" == *"line 2"*"'mode'"* ]]
	run_split xg-choices start <<<'{"type":"request","conversation":"../etc"}'
	assert_failure 65
	run_split xg-choices start --conversation ../etc </dev/null
	assert_failure 2
}

@test "each request field of the wrong kind is exit 65 naming the line and the field, even one an option overrides" {
	for f in model effort variant account mode conversation cwd; do
		run_split xg-choices start <<<$'{"type":"x"}\n{"type":"request","'"$f"'":7}'
		assert_failure 65
		[[ "$stderr" == *"request on line 2: '$f' must be a string, not a number"* ]] ||
			{ echo "$f: $stderr"; false; }
	done
	run_split xg-choices start --model alpha/a1 <<<'{"type":"request","model":7}'
	assert_failure 65
	[[ "$stderr" == *"line 1: 'model'"* ]]
}

@test "an unknown command or operand is a usage error" {
	run_split xg-choices frobnicate
	assert_failure 2
	run_split xg-choices
	assert_failure 2
	run_split xg-choices get extra
	assert_failure 2
}

@test "the examples of the man page run as written" {
	export XG_SHARE_DIR="$XG_SRCDIR/share/xg"
	export HOME="$BATS_TEST_TMPDIR/h"
	mkdir -p "$HOME/.secrets"
	echo example-anthropic-key > "$HOME/.secrets/anthropic"
	# The local llama.cpp server the examples name.
	fake_provider_start </dev/null
	export LLAMACPP_BASE_URL="$FAKE_URL"
	python3 - "$XG_SRCDIR/man/xg-choices.1" > "$BATS_TEST_TMPDIR/examples" <<-'PY'
	import sys
	lines = open(sys.argv[1]).read().split("\n")
	at = lines.index(".Sh EXAMPLES")
	out, block = [], None
	for l in lines[at + 1:]:
	    if l.startswith(".Sh"):
	        break
	    if l.startswith(".Dl "):
	        out.append(l[4:])
	    elif l.startswith(".Bd -literal"):
	        block = []
	    elif l == ".Ed":
	        out.append("\n".join(block)); block = None
	    elif block is not None:
	        block.append(l)
	for cmd in out:
	    sys.stdout.write(cmd.replace("\\e", "\\").replace("\\-", "-") + "\0")
	PY
	n=0
	while IFS= read -r -d '' example; do
		if [[ "$example" == *jq* ]] && ! command -v jq >/dev/null; then
			continue
		fi
		run_split bash -c "$example"
		[ "$status" = 0 ] || fail "example failed ($status): $example: $stderr"
		n=$((n + 1))
		case "$example" in
		*resolve*) [[ "$output" == *'"id":"anthropic/claude-opus-4-5"'*'"effort":"high"'* ]] ;;
		*conversation*) [[ "$output" == *'"source":"mode"'* ]] ;;
		*--probe*) assert_equal "$output" '"fake-model": {}' ;;
		*llamacpp*) [[ "$output" == *'"id":"llamacpp/gpt-oss-20b"'* ]] ;;
		esac
	done < "$BATS_TEST_TMPDIR/examples"
	[ "$n" -ge 6 ]
}

@test "set gives up with exit 75 when another set holds the lock too long" {
	saved_choices
	cp "$ACCT/choices.json" "$BATS_TEST_TMPDIR/before"
	hold_lock "$ACCT/choices.json.lock" 30
	XG_LOCK_TIMEOUT=100 run_split xg-choices set --mode plan --model alpha/a1
	release_lock
	assert_failure 75
	[[ "$stderr" == *"choices.json.lock"*"process $holder"* ]]
	cmp "$ACCT/choices.json" "$BATS_TEST_TMPDIR/before"
}

@test "auth gives up with exit 75 when another writer holds the keys' lock too long" {
	mkdir -p "$ACCT"
	hold_lock "$ACCT/auth.json.lock" 30
	XG_LOCK_TIMEOUT=100 run_split xg-choices auth alpha <<<"alpha-locked-key"
	release_lock
	assert_failure 75
	[[ "$stderr" == *"auth.json.lock"*"process $holder"* ]]
	[[ "$stderr" != *alpha-locked-key* ]]
	[ ! -e "$ACCT/auth.json" ]
}

@test "a fallback whose conversation stays locked still writes its model record, and exits 75" {
	saved_choices
	history_on c14 alpha/a2 minimal
	keys beta
	hold_lock "$CONVS/c14.jsonl" 30
	XG_LOCK_TIMEOUT=100 run_split xg-choices start --conversation c14 </dev/null
	release_lock
	assert_failure 75
	run fields model source id
	assert_output 'source=fallback id=beta/b1'
	run grep -c model_change "$CONVS/c14.jsonl"
	assert_output 0
}

# ---- nothing configured ----

# The shipped catalog, a fresh XG_HOME, no key and no local server.
shipped_nothing() {
	export XG_SHARE_DIR="$XG_SRCDIR/share/xg"
	unset OPENAI_API_KEY ANTHROPIC_API_KEY OPENROUTER_API_KEY LLAMACPP_BASE_URL OLLAMA_BASE_URL
}

# Asserts that $1 gives both ways forward: a key, and the three lines of
# models.json for a local server, shown literally.
ways_forward() {
	[[ "$1" == *"no model is configured for account 'default'"* ]] || fail "no cause in: $1"
	[[ "$1" == *"xg-choices auth openai < keyfile"* ]] || fail "no auth in: $1"
	[[ "$1" == *OPENAI_API_KEY*ANTHROPIC_API_KEY* ]] || fail "no key variables in: $1"
	[[ "$1" == *"add to '$CONFIG/models.json':"* ]] || fail "no file in: $1"
	[[ "$1" == *'    {"providers": {"llamacpp": {"models": {
      "MODEL": {}
    }}}}'* ]] || fail "no models.json lines in: $1"
	[[ "$1" == *"xg-choices models --probe llamacpp"*LLAMACPP_BASE_URL* ]] || fail "no probe in: $1"
}

@test "with nothing configured start and resolve end at once with exit 78 and the two ways forward" {
	shipped_nothing
	SECONDS=0
	run_split xg-choices start <<<'{"type":"request","text":"say hello"}'
	assert_failure 78
	[ "$SECONDS" -lt 3 ]
	assert_line --index 0 '{"type":"request","text":"say hello"}'
	ways_forward "$stderr"
	reason=$(python3 -c 'import json,sys; r=json.loads(sys.stdin.read().splitlines()[1]); print(r["id"], r["exit"]); print(r["reason"])' <<<"$output")
	[[ "$reason" == "None 78"* ]]
	ways_forward "$reason"
	run_split xg-choices resolve
	assert_failure 78
	ways_forward "$stderr"
	run_split xg-choices models
	run fields catalog_model id authenticated configured
	assert_line 'id=llamacpp/gpt-oss-20b authenticated=true configured=false'
}

@test "a local server is picked by itself only once models.json names it or its URL variable is set" {
	shipped_nothing
	# Named by models.json: the models it gives come first.
	user_catalog <<<'{"providers": {"llamacpp": {"models": {"tiny": {}}}}}'
	run_split xg-choices start </dev/null
	assert_success
	recs=$output
	run fields model id base_url context_window max_output_tokens effort source
	assert_output 'id=llamacpp/tiny base_url=http://127.0.0.1:8080/v1 context_window=32768 max_output_tokens=4096 effort=null source=mode'
	output=$recs
	run fields notice text
	assert_output "text=account 'default' has no usable saved model for mode 'normal'; using llamacpp/tiny, the first model of the catalog it can use"
	rm "$CONFIG/models.json"
	# The provider's base_url_env: a URL without a path keeps the catalog's.
	LLAMACPP_BASE_URL=http://10.9.8.7:8081 run_split xg-choices start </dev/null
	assert_success
	run fields model id base_url
	assert_output 'id=llamacpp/gpt-oss-20b base_url=http://10.9.8.7:8081/v1'
	OLLAMA_BASE_URL=http://gpu2:11434/v1 run_split xg-choices models
	run fields catalog_model id base_url configured
	assert_line 'id=ollama/gpt-oss:20b base_url=http://gpu2:11434/v1 configured=true'
	assert_line 'id=llamacpp/gpt-oss-20b base_url=http://127.0.0.1:8080/v1 configured=false'
	LLAMACPP_BASE_URL=localhost:8080 run_split xg-choices models
	assert_success
	[[ "$stderr" == *"provider 'llamacpp': LLAMACPP_BASE_URL is set but is not an http:// or https:// URL"* ]]
	# A saved choice, or an explicit model, names it: used as any other.
	xg-choices set --mode normal --model llamacpp/qwen3-coder-30b-a3b
	run_split xg-choices start </dev/null
	assert_success
	run fields model id source choice
	assert_output 'id=llamacpp/qwen3-coder-30b-a3b source=mode choice=normal'
	rm "$ACCT/choices.json"
	run_split xg-choices start --model ollama/gpt-oss:20b </dev/null
	assert_success
	run fields model id source
	assert_output 'id=ollama/gpt-oss:20b source=flag'
}

@test "a key wins over a local server nobody configured" {
	shipped_nothing
	export ANTHROPIC_API_KEY=test-anthropic-key
	run_split xg-choices start </dev/null
	assert_success
	run fields model id
	assert_output id=anthropic/claude-opus-4-5
	[[ "$output$stderr" != *test-anthropic-key* ]]
}

@test "a model the user's models.json gives without its key is exit 77, naming the variable" {
	user_catalog <<<'{"providers": {"gamma": {"base_url": "https://gamma.example/v1", "key_env": "XG_TEST_GAMMA_KEY", "models": {"g1": {}}}}}'
	run_split xg-choices start </dev/null
	assert_failure 77
	run fields model id reason exit
	assert_output "id=null reason=no model can be used for account 'default': account 'default' has no credentials for provider 'gamma' (set XG_TEST_GAMMA_KEY, or run 'xg-choices auth gamma') exit=77"
}

# ---- model entries: defaults, and a bad entry beside good ones ----

@test "a model entry needs only what it cannot guess" {
	user_catalog <<-'EOF'
	{"providers": {"local": {"models": {
	  "tiny": {},
	  "small": {"context_window": 8192},
	  "think": {"efforts": ["low", "high"]},
	  "med": {"efforts": ["low", "medium", "high"]},
	  "none": {"efforts": [], "default_effort": null}
	}},
	"vllm": {"base_url": "http://10.0.0.5:8000/v1", "models": {"q": {}}}}}
	EOF
	run_split xg-choices models
	assert_success
	assert_equal "$stderr" ''
	run fields catalog_model id kind key_env context_window max_output_tokens efforts default_effort
	assert_output - <<-'EOF'
	id=alpha/a1 kind=openai-responses key_env=XG_TEST_ALPHA_KEY context_window=100000 max_output_tokens=8000 efforts=["low", "medium", "high"] default_effort=medium
	id=alpha/a2 kind=openai-responses key_env=XG_TEST_ALPHA_KEY context_window=50000 max_output_tokens=4000 efforts=["minimal", "low"] default_effort=low
	id=beta/b1 kind=anthropic-messages key_env=XG_TEST_BETA_KEY context_window=200000 max_output_tokens=16000 efforts=["low", "high"] default_effort=high
	id=beta/b2 kind=anthropic-messages key_env=XG_TEST_BETA_KEY context_window=200000 max_output_tokens=16000 efforts=[] default_effort=null
	id=local/l1 kind=openai-chat key_env=null context_window=8192 max_output_tokens=2048 efforts=[] default_effort=null
	id=local/tiny kind=openai-chat key_env=null context_window=32768 max_output_tokens=4096 efforts=[] default_effort=null
	id=local/small kind=openai-chat key_env=null context_window=8192 max_output_tokens=2048 efforts=[] default_effort=null
	id=local/think kind=openai-chat key_env=null context_window=32768 max_output_tokens=4096 efforts=["low", "high"] default_effort=low
	id=local/med kind=openai-chat key_env=null context_window=32768 max_output_tokens=4096 efforts=["low", "medium", "high"] default_effort=medium
	id=local/none kind=openai-chat key_env=null context_window=32768 max_output_tokens=4096 efforts=[] default_effort=null
	id=vllm/q kind=openai-chat key_env=null context_window=32768 max_output_tokens=4096 efforts=[] default_effort=null
	EOF
}

@test "a bad model entry is left out with its file, line and field, and the others still work" {
	keys alpha
	user_catalog <<-'EOF'
	{"providers": {
	  "local": {"models": {
	    "good": {},
	    "bad": {"context_window": "big"},
	    "worse": {"efforts": "high"}
	  }},
	  "vllm": {"kind": "grpc", "base_url": "http://10.0.0.5:8000/v1",
	           "models": {"q": {}}}
	}}
	EOF
	file="'$CONFIG/models.json'"
	run_split xg-choices models
	assert_success
	assert_equal "$stderr" "xg-choices: $file line 4: model 'local/bad': 'context_window' must be a positive number of tokens, so the model is left out
xg-choices: $file line 5: model 'local/worse': 'efforts' must be an array of strings (empty for a model that takes none), so the model is left out
xg-choices: $file line 7: provider 'vllm': 'kind' must be one of openai-responses, openai-chat, anthropic-messages, so its models are left out"
	run fields catalog_model id
	assert_output - <<-'EOF'
	id=alpha/a1
	id=alpha/a2
	id=beta/b1
	id=beta/b2
	id=local/l1
	id=local/good
	EOF
	# start tells each problem once, as a notice, then starts as usual.
	run_split xg-choices start <<<$'{"type":"request","text":"one"}\n{"type":"request","text":"two"}'
	assert_success
	recs=$output
	run count notice
	assert_output 5	# the three problems once, the catalog's model per request
	output=$recs
	run fields notice text
	assert_line --index 0 "text=$file line 4: model 'local/bad': 'context_window' must be a positive number of tokens, so the model is left out"
	output=$recs
	run fields model id
	assert_output $'id=alpha/a1\nid=alpha/a1'
	for id in local/bad vllm/q; do
		run_split xg-choices start --model "$id" </dev/null
		assert_failure 78
		run fields model id requested exit
		assert_output "id=null requested=$id exit=78"
	done
	[[ "$stderr" == *"cannot start on vllm/q: $file line 7: provider 'vllm': 'kind'"* ]]
	run_split xg-choices set --mode normal --model local/bad
	assert_failure 78
	[[ "$stderr" == *"cannot save local/bad: $file line 4: model 'local/bad': 'context_window'"* ]]
}

@test "a bad field over a shipped model blames the user's line; a shipped one the shipped file's" {
	user_catalog <<-'EOF'
	{
	  "providers": {
	    "beta": {
	      "models": {
	        "b1": {
	          "max_output_tokens": -5
	        }
	      }
	    }
	  }
	}
	EOF
	run_split xg-choices models
	assert_success
	assert_equal "$stderr" "xg-choices: '$CONFIG/models.json' line 6: model 'beta/b1': 'max_output_tokens' must be a positive number of tokens, so the model is left out"
	mkdir -p "$BATS_TEST_TMPDIR/share"
	sed 's/"efforts": \["minimal", "low"\]/"efforts": "minimal"/' "$FIXTURES/choices/share/models.json" \
		> "$BATS_TEST_TMPDIR/share/models.json"
	line=$(grep -n '"efforts": "minimal"' "$BATS_TEST_TMPDIR/share/models.json" | cut -d: -f1)
	XG_SHARE_DIR="$BATS_TEST_TMPDIR/share" run_split xg-choices models
	assert_success
	[[ "$stderr" == *"'$BATS_TEST_TMPDIR/share/models.json' line $line: model 'alpha/a2': 'efforts' must be"* ]]
}

@test "an unknown field is named with its line and ignored, with the field it may have meant" {
	user_catalog <<-'EOF'
	{"providers": {"local": {"models": {
	  "l2": {"context_windw": 8192}
	}}}}
	EOF
	run_split xg-choices models
	assert_success
	assert_equal "$stderr" "xg-choices: '$CONFIG/models.json' line 2: model 'local/l2': unknown field 'context_windw' is ignored (did you mean 'context_window'?)"
	run fields catalog_model id context_window
	assert_line 'id=local/l2 context_window=32768'
}

@test "a key in an escaped model name is found on its line" {
	user_catalog <<-'EOF'
	{"providers": {"local": {"models": {
	  "x": {"context_window": 1},
	  "\u0062ad": {"context_window": 0}
	}}}}
	EOF
	run_split xg-choices models
	assert_success
	[[ "$stderr" == *"line 3: model 'local/bad': 'context_window'"* ]]
}

# ---- did you mean ----

@test "an unknown model gets the closest ids of the catalog as a did you mean" {
	keys alpha,beta
	while IFS='|' read -r id want; do
		run_split xg-choices start --model "$id" </dev/null
		assert_failure 78
		run fields model reason
		assert_output "reason='$id' is not offered by the catalog $want"
		[[ "$stderr" == *"$want"* ]]
	done <<-'EOF'
	alpha/a3|(did you mean 'alpha/a1' or 'alpha/a2'?)
	alpha/b1|(did you mean 'beta/b1'?)
	b2|(did you mean 'beta/b2'?)
	Beta/B1|(did you mean 'beta/b1'?)
	nosuch/model|('xg-choices models' lists the models it offers)
	EOF
	run_split xg-choices set --mode plan --model beta/b3
	assert_failure 78
	[[ "$stderr" == *"'beta/b3' is not offered by the catalog (did you mean 'beta/b1' or 'beta/b2'?)"* ]]
}

# ---- notices ----

@test "each cause gives its own notice: a torn line, a fallback and an effort not applied give three" {
	saved_choices
	history_on c20 alpha/a2 minimal
	printf '{"type":"message","at":"2026-11-01T00:00:09.000Z","role":"assist' >> "$CONVS/c20.jsonl"
	keys beta
	run_split xg-choices start --effort minimal <<<'{"type":"request","text":"go","conversation":"c20"}'
	assert_success
	recs=$output
	run count notice
	assert_output 3
	output=$recs
	run fields notice text
	assert_line --index 0 "text=the last line of conversation c20 is torn (an append that did not finish); it is ignored"
	assert_line --index 1 --partial "text=conversation c20 ran on alpha/a2 (minimal), which cannot be used now"
	assert_line --index 2 "text=effort 'minimal' (--effort) was not applied: model beta/b1 does not accept it (it accepts: low, high); it runs at high"
	output=$recs
	run fields model id source
	assert_output 'id=beta/b1 source=fallback'
}

# ---- probing a server ----

@test "models --probe lists what the server serves, and the line to add for what the catalog lacks" {
	printf '%s\n' '["l1", "tiny", {"id": "big", "max_model_len": 65536}, {"id": "we\"ird"}]' \
		> "$BATS_TEST_TMPDIR/served.json"
	export FAKE_PROVIDER_MODELS="$BATS_TEST_TMPDIR/served.json"
	fake_provider_start </dev/null
	export XG_TEST_LOCAL_URL="$FAKE_URL"
	run_split xg-choices models --probe local
	assert_success
	run fields served_model id provider name offered add
	assert_output - <<-'EOF'
	id=local/l1 provider=local name=l1 offered=true add=null
	id=local/tiny provider=local name=tiny offered=false add="tiny": {}
	id=local/big provider=local name=big offered=false add="big": {"context_window": 65536}
	id=local/we"ird provider=local name=we"ird offered=false add="we\"ird": {}
	EOF
	run fake_log 'print(len(log), log[0]["method"], log[0]["path"], log[0]["auth"])'
	assert_output '1 GET /v1/models unchecked'
	# What it says to add works.
	user_catalog <<<'{"providers": {"local": {"models": {"tiny": {}}}}}'
	run_split xg-choices models --probe local
	run fields served_model id offered
	assert_line 'id=local/tiny offered=true'
}

@test "models --probe sends the provider's key, never shows it, and a refused key is exit 77" {
	export FAKE_PROVIDER_KEY=probe-secret-5e1f
	fake_provider_start </dev/null
	user_catalog <<-EOF
	{"providers": {"alpha": {"base_url": "$FAKE_URL"}, "beta": {"base_url": "$FAKE_URL"}}}
	EOF
	export XG_TEST_ALPHA_KEY=probe-secret-5e1f
	run_split xg-choices models --probe alpha
	assert_success
	run fields served_model id
	assert_output id=alpha/fake-model
	export XG_TEST_BETA_KEY=wrong-secret-77aa
	run_split xg-choices models --probe beta
	assert_failure 77
	[[ "$stderr" == *"provider 'beta' at '$FAKE_URL/models' refused the key (HTTP 401)"* ]]
	[[ "$output$stderr" != *secret* ]]
	run fake_log 'print(" ".join(l["auth"] for l in log)); print(log[1]["headers"]["x-api-key"])'
	assert_output $'ok wrong\n<redacted>'
}

@test "models --probe of a server that is not there fails at once with exit 69, naming the provider and URL" {
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	export XG_TEST_LOCAL_URL="http://127.0.0.1:$port/v1"
	SECONDS=0
	run_split xg-choices models --probe local
	assert_failure 69
	[ "$SECONDS" -lt 3 ]
	assert_output ''
	[[ "$stderr" == "xg-choices: cannot reach provider 'local' at 'http://127.0.0.1:$port/v1/models': "* ]]
	run_split xg-choices models --probe gamma
	assert_failure 78
	[[ "$stderr" == *"provider 'gamma' is not in the model catalog"* ]]
	run_split xg-choices resolve --probe local
	assert_failure 2
}

@test "models --probe of a server that answers no list of models is exit 69" {
	fake_provider_start </dev/null
	export XG_TEST_LOCAL_URL="$FAKE_URL/nothing-here"
	run_split xg-choices models --probe local
	assert_failure 69
	[[ "$stderr" == *"provider 'local' at '$FAKE_URL/nothing-here/models' answered HTTP 404"* ]]
	printf '{"not": "a list"}\n' > "$BATS_TEST_TMPDIR/served.json"
	fake_provider_stop
	FAKE_PROVIDER_MODELS="$BATS_TEST_TMPDIR/served.json" fake_provider_start </dev/null
	XG_TEST_LOCAL_URL="$FAKE_URL" run_split xg-choices models --probe local
	assert_failure 69
	[[ "$stderr" == *"did not answer with a list of models"* ]]
}

# ---- what xg-run and xg make of it ----

@test "xg-run alone with nothing configured ends at once with exit 78 and run_end says the same" {
	shipped_nothing
	cd "$BATS_TEST_TMPDIR"
	SECONDS=0
	run_split xg-run 'hi'
	assert_failure 78
	[ "$SECONDS" -lt 3 ]
	reason=$(python3 -c 'import json,sys; [print(r["reason"]) for r in map(json.loads, sys.stdin) if r["type"] == "run_end"]' <<<"$output")
	[[ "$reason" == "no model to run on: no model is configured"* ]]
	ways_forward "$reason"
}

@test "xg-run and xg run end 78 on a model that is not offered, 77 on one whose key is missing" {
	cd "$BATS_TEST_TMPDIR"
	export XG_SHARE_DIR="$XG_SRCDIR/share/xg"
	end_of() { python3 -c 'import json,sys; [print(r["status"], r["exit"], r["reason"]) for r in map(json.loads, sys.stdin) if r["type"] == "run_end"]' <<<"$output"; }
	run_split xg-run --model nosuch/model 'hi'
	assert_failure 78
	run end_of
	assert_output "failed 78 no model to run on: 'nosuch/model' is not offered by the catalog ('xg-choices models' lists the models it offers)"
	run_split xg run --json --model nosuch/model 'hi'
	assert_failure 78
	run end_of
	assert_output --partial "failed 78 no model to run on: 'nosuch/model' is not offered"
	run_split xg run --json --model openai/gpt-5.2 'hi'
	assert_failure 78
	run end_of
	assert_output --partial "(did you mean 'openai/gpt-5.1' or 'openai/gpt-5'?)"
	run_split xg run --json --model openai/gpt-5.1 'hi'
	assert_failure 77
	run end_of
	assert_output "failed 77 no model to run on: account 'default' has no credentials for provider 'openai' (set OPENAI_API_KEY, or run 'xg-choices auth openai')"
	run_split xg-run --model anthropic/claude-opus-4-5 'hi'
	assert_failure 77
}

@test "the catalogs of xg-config(5) load as the page says" {
	export XG_SHARE_DIR="$XG_SRCDIR/share/xg"
	python3 - "$XG_SRCDIR/man/xg-config.5" "$BATS_TEST_TMPDIR" <<-'PY'
	import sys
	lines = open(sys.argv[1]).read().split("\n")
	n = 0
	for i, l in enumerate(lines):
	    if l.startswith(".Bd -literal") and lines[i + 1].startswith('{"providers"'):
	        block = lines[i + 1:lines.index(".Ed", i)]
	        n += 1
	        open("%s/catalog.%d" % (sys.argv[2], n), "w").write("\n".join(block) + "\n")
	PY
	# The lines nothing-configured shows: llamacpp, its shipped models.
	user_catalog < "$BATS_TEST_TMPDIR/catalog.1"
	run_split xg-choices start </dev/null
	assert_success
	assert_equal "$stderr" ''
	run fields model id context_window
	assert_output 'id=llamacpp/MODEL context_window=32768'
	# A vLLM server, Ollama elsewhere, a model taken out.
	user_catalog < "$BATS_TEST_TMPDIR/catalog.2"
	run_split xg-choices models
	assert_success
	assert_equal "$stderr" ''
	run fields catalog_model id base_url context_window max_output_tokens configured
	assert_line 'id=vllm/qwen3-coder base_url=http://gpu1:8000/v1 context_window=131072 max_output_tokens=4096 configured=true'
	assert_line 'id=ollama/qwen3-coder:30b base_url=http://gpu2:11434/v1 context_window=262144 max_output_tokens=65536 configured=true'
	refute_line --partial 'id=openai/gpt-4.1 '
}
