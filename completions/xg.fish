# fish completion for the xg programs: options come from --help.
for prog in xg xg-snapshot xg-choices xg-prompt-compile xg-run xg-classify-plan xg-goal
	complete -c $prog -a '(__fish_complete_path)'
	complete -c $prog -l help -d 'print the help and exit'
	complete -c $prog -l version -d 'print the version and exit'
end
