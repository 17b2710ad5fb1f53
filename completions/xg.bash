# bash completion for the xg programs: their options, read from --help.
_xg_complete() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	if [[ $cur == -* ]]; then
		local opts
		opts=$("${COMP_WORDS[0]}" --help 2>/dev/null |
			grep -oE -- '(^|[ ,])--?[A-Za-z][-A-Za-z0-9]*' | tr -d ' ,' | sort -u)
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _xg_complete xg xg-snapshot xg-choices xg-prompt-compile xg-run xg-classify-plan xg-goal
