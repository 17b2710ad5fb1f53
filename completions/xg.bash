# bash completion for xg and the xg programs (xg(1)).  Everything is read
# from the installed programs when completing: the commands from
# "xg commands", a program's verbs and options from the usage lines of its
# --help, model ids and efforts from "xg-choices models", accounts from
# "xg-choices accounts", variants from "xg-prompt-compile variants",
# conversations and runs from xg-log, skills after a "$" in a request's
# text from "xg-prompt-compile skills".  A program that is not installed is
# not offered.  Source it, or install it as
# $(PREFIX)/share/bash-completion/completions/xg, with a link to it named
# after each program (bash-completion loads a command's file by its name,
# so "xg-run --<TAB>" works before xg was ever completed).

# The conversations: all of them, newest first (xg-log), else this
# directory's (xg resume).
_xg_conversations() {
	{ xg-log conversations -n 0 2>/dev/null || xg resume 2>/dev/null; } | cut -d' ' -f1 | cut -f1
}

# The skills of this directory, for a word ending in "$NAME": the word
# with each skill's name in place of NAME.
_xg_skills() {
	local cur=$1 pre=${1%\$*} IFS=$'\n'
	COMPREPLY=($(xg-prompt-compile skills 2>/dev/null |
		sed -n 's/^{"type":"skill","name":"\([^"]*\)".*/\1/p' |
		awk -v p="$pre\$" -v w="$cur" 'index(p $0, w) == 1 { print p $0 }'))
}

# The --help of program $1 (xg: of its verb $2).
_xg_help() {
	if [[ $1 == xg && -n $2 ]]; then
		xg help "$2" 2>/dev/null
	else
		"$1" --help 2>/dev/null
	fi
}

# Its usage lines, one a line, without "usage:" and "or:".
_xg_usage() {
	_xg_help "$@" | sed -n 's/^usage: //p; s/^   or: //p'
}

# The verbs of program $1: the second word of its usage lines, when that is
# a plain word.
_xg_verbs() {
	_xg_usage "$1" | awk '$2 ~ /^[a-z][a-z-]*$/ && $2 != "command" { print $2 }' | sort -u
}

# The options of program $1 (of its verb $2, or of no verb when it has
# verbs $3), and the options that take a value, from its usage lines: into
# "opts" and "args".
_xg_options() {
	local lines
	lines=$(_xg_usage "$1" "$2")
	if [[ $1 != xg && -n $2 ]]; then
		lines=$(awk -v v="$2" '$2 == v' <<<"$lines")
	elif [[ $1 != xg && -n $3 ]]; then
		lines=$(awk -v vs="$3" 'BEGIN { n = split(vs, a, "\n"); for (i = 1; i <= n; i++) v[a[i]] = 1 }
			!($2 in v)' <<<"$lines")
	fi
	opts=$(grep -oE -- '(^|[[ ])--?[A-Za-z][-A-Za-z0-9]*' <<<"$lines" | tr -d '[ ')
	if [[ $1 == xg || -z $3 ]]; then
		# The option table of its help, which has the long names of
		# short options too (one table for all verbs, elsewhere).
		local table
		table=$(_xg_help "$1" "$2" | grep -E -- '^ +(-[A-Za-z], )?--[A-Za-z]')
		opts+=$'\n'$(grep -oE -- '--[A-Za-z][-A-Za-z0-9]*' <<<"$table")
		lines+=$'\n'$(grep -oE -- '--[A-Za-z][-A-Za-z0-9]* [a-z]+ ' <<<"$table")
	fi
	opts=$(sort -u <<<"$opts"$'\n--help')
	args=$(grep -oE -- '--?[A-Za-z][-A-Za-z0-9]* [a-z][a-z]*' <<<"$lines" | cut -d' ' -f1 | sort -u)
}

# Completes the value of option $2 of program $1.
_xg_option_value() {
	local cur=$3
	case $2 in
	--model)
		COMPREPLY=($(compgen -W "$(xg-choices models 2>/dev/null |
			sed -n 's/^{"type":"catalog_model","id":"\([^"]*\)".*/\1/p')" -- "$cur")) ;;
	--conversation)
		COMPREPLY=($(compgen -W "$(_xg_conversations)" -- "$cur")) ;;
	--effort)
		COMPREPLY=($(compgen -W "$(xg-choices models 2>/dev/null |
			sed -n 's/.*"efforts":\[\([^]]*\)\].*/\1/p' | tr -d '"' | tr ',' '\n' | sort -u)" -- "$cur")) ;;
	--mode)
		COMPREPLY=($(compgen -W "normal plan" -- "$cur")) ;;
	--variant)
		COMPREPLY=($(compgen -W "$(xg-prompt-compile variants 2>/dev/null |
			sed -n 's/.*"name":"\([^"]*\)".*/\1/p')" -- "$cur")) ;;
	--by)
		COMPREPLY=($(compgen -W "model day account workspace" -- "$cur")) ;;
	--status)
		COMPREPLY=($(compgen -W "completed interrupted slice_complete failed killed running
			needs_person unfinished stalled user" -- "$cur")) ;;
	--workspace)
		COMPREPLY=($(compgen -d -- "$cur")) ;;
	--account)
		COMPREPLY=($(compgen -W "$(xg-choices accounts 2>/dev/null |
			sed -n 's/.*"name":"\([^"]*\)".*/\1/p')" -- "$cur")) ;;
	-C)
		COMPREPLY=($(compgen -d -- "$cur")) ;;
	-o | --reply | --*file* | --*dir*)
		COMPREPLY=($(compgen -f -- "$cur")) ;;
	*)
		COMPREPLY=() ;;
	esac
}

_xg_complete() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local prog=${COMP_WORDS[0]##*/} first=1 verb="" verbs="" opts args i w
	COMPREPLY=()

	# "xg COMMAND ...": xg's own verbs, or the program xg-COMMAND.
	if [[ $prog == xg ]]; then
		if ((COMP_CWORD == 1)); then
			if [[ $cur == -* ]]; then
				COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
			else
				COMPREPLY=($(compgen -W "$(xg commands 2>/dev/null)" -- "$cur"))
			fi
			return
		fi
		case ${COMP_WORDS[1]} in
		run | plan | resume | compact | commands | help | version | skills) verb=${COMP_WORDS[1]}; first=2 ;;
		*) prog=xg-${COMP_WORDS[1]}; first=2 ;;
		esac
	fi
	if [[ $prog == xg ]]; then
		case $verb in
		help)
			((COMP_CWORD == 2)) &&
				COMPREPLY=($(compgen -W "$(xg commands 2>/dev/null)" -- "$cur"))
			return ;;
		commands | version) return ;;
		esac
	else
		# A program's verb is the first word after its name, when it
		# has verbs.
		verbs=$(_xg_verbs "$prog")
		if [[ -n $verbs ]]; then
			if ((COMP_CWORD == first)) && [[ $cur != -* ]]; then
				COMPREPLY=($(compgen -W "$verbs" -- "$cur"))
				return
			fi
			w=${COMP_WORDS[first]}
			grep -qx -- "$w" <<<"$verbs" && verb=$w
		fi
	fi
	_xg_options "$prog" "$verb" "$verbs"
	if ((COMP_CWORD > first)) && grep -qx -- "$prev" <<<"$args"; then
		_xg_option_value "$prog" "$prev" "$cur"
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	# Operands: a skill after a "$" in a request's text, a conversation
	# for "xg resume", nothing else for a request's text, files for the
	# rest.
	case $prog:$verb:$cur in
	xg:run:*\$* | xg:plan:*\$* | xg:resume:*\$*)
		_xg_skills "$cur"
		return ;;
	esac
	case $prog:$verb in
	xg:resume | xg:compact)
		for ((i = first; i < COMP_CWORD; i++)); do
			w=${COMP_WORDS[i]}
			[[ $w != -* ]] && ! grep -qx -- "${COMP_WORDS[i-1]}" <<<"$args" && return
		done
		COMPREPLY=($(compgen -W "$(xg resume 2>/dev/null | cut -f1)" -- "$cur")) ;;
	xg:run | xg:plan | xg:skills) ;;
	xg-log:show | xg-log:diff)
		# The run, once: the last runs' short ids, as xg-log's rows show them.
		for ((i = first + 1; i < COMP_CWORD; i++)); do
			[[ ${COMP_WORDS[i]} != -* ]] && return
		done
		COMPREPLY=($(compgen -W "$(xg-log -n 50 2>/dev/null | cut -d' ' -f1)" -- "$cur")) ;;
	xg-log:* | xg-goal:*) ;;
	*) COMPREPLY=($(compgen -f -- "$cur")) ;;
	esac
}

# xg, and the xg programs "xg commands" finds.
_xg_programs() {
	local c
	echo xg
	for c in $(xg commands 2>/dev/null); do
		type -P "xg-$c" >/dev/null && echo "xg-$c"
	done
}
complete -F _xg_complete $(_xg_programs)
unset -f _xg_programs
