# fish completion for xg and the xg programs (xg(1)), read from the
# installed programs when completing, as the bash one does: the commands
# from "xg commands", a program's verbs and options from the usage lines
# of its --help, model ids and efforts from "xg-choices models", accounts,
# variants, conversations and runs from the programs that keep them,
# skills after a "$" in a request's text from "xg-prompt-compile skills".
# A program that is not installed is not offered.  Installed where fish
# looks for a command's completions by its name (vendor_completions.d),
# with a link named after each program.

# The usage lines of program $argv[1] (xg: of its verb $argv[2]).
function __xg_usage
    if test "$argv[1]" = xg -a -n "$argv[2]"
        xg help $argv[2] 2>/dev/null
    else if command -q $argv[1]
        command $argv[1] --help 2>/dev/null
    end | string replace -rf '^(usage:|   or:) ' ''
end

# The conversations: all of them (xg-log), else this directory's.
function __xg_conversations
    begin
        xg-log conversations -n 0 2>/dev/null; or xg resume 2>/dev/null
    end | string replace -r '[ \t].*' ''
end

# The candidates for the word being completed.
function __xg_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    set -l prog (basename $words[1])
    set -l verb
    set -l first 2
    set -l n (count $words)
    if test $prog = xg
        if test $n -eq 1
            if string match -q -- '-*' $cur
                printf '%s\n' --help --version
            else
                xg commands 2>/dev/null
            end
            return
        end
        set first 3
        switch $words[2]
            case help
                test $n -eq 2; and xg commands 2>/dev/null
                return
            case commands version
                return
            case run plan resume compact skills
                set verb $words[2]
            case '*'
                set prog xg-$words[2]
        end
    end
    set -l verbs
    if test $prog != xg
        set verbs (__xg_usage $prog | string split -f2 ' ' | string match -r '^[a-z][a-z-]*$' | sort -u)
        if test (count $verbs) -gt 0
            if test $n -eq (math $first - 1); and not string match -q -- '-*' $cur
                printf '%s\n' $verbs
                return
            end
            contains -- "$words[$first]" $verbs; and set verb $words[$first]
        end
    end
    set -l lines (__xg_usage $prog $verb)
    if test $prog != xg -a -n "$verb"
        set lines (string match -- "* $verb*" $lines)
    end
    set -l opts (string match -ar -- '(?:^|[[ ])(--?[A-Za-z][-A-Za-z0-9]*)' $lines | string match -r -- '^--?[A-Za-z].*' | sort -u) --help
    set -l args (string match -ar -- '(--?[A-Za-z][-A-Za-z0-9]*) [a-z]+' $lines | string match -r -- '^--?[A-Za-z][-A-Za-z0-9]*$')
    test $prog = xg; and set -a opts --reply; and set -a args --reply
    set -l prev $words[-1]
    if test $n -ge $first; and contains -- $prev $args
        switch $prev
            case --model
                xg-choices models 2>/dev/null | string replace -rf '^\{"type":"catalog_model","id":"([^"]*)".*' '$1'
            case --conversation
                __xg_conversations
            case --effort
                xg-choices models 2>/dev/null | string replace -rf '.*"efforts":\[([^]]*)\].*' '$1' | string split , | string trim -c '"' | sort -u
            case --mode
                printf '%s\n' normal plan
            case --variant
                xg-prompt-compile variants 2>/dev/null | string replace -rf '.*"name":"([^"]*)".*' '$1'
            case --by
                printf '%s\n' model day account workspace
            case --status
                printf '%s\n' completed interrupted slice_complete failed killed running needs_person unfinished stalled user
            case --workspace
                __fish_complete_directories $cur
            case --account
                xg-choices accounts 2>/dev/null | string replace -rf '.*"name":"([^"]*)".*' '$1'
            case -C
                __fish_complete_directories $cur
            case -o --reply '--*file*' '--*dir*'
                __fish_complete_path $cur
        end
        return
    end
    if string match -q -- '-*' $cur
        printf '%s\n' $opts
        return
    end
    if test $prog = xg; and contains -- "$verb" run plan resume; and string match -q -- '*$*' $cur
        # A skill after the "$": the word with its name.
        set -l pre (string replace -r '\$[^$]*$' '' -- $cur)
        for name in (xg-prompt-compile skills 2>/dev/null | string replace -rf '^\{"type":"skill","name":"([^"]*)".*' '$1')
            string match -q -- "$cur*" "$pre\$$name"; and printf '%s\n' "$pre\$$name"
        end
        return
    end
    switch "$prog:$verb"
        case xg:resume xg:compact
            test $n -eq 2; and xg resume 2>/dev/null | string split -f1 \t
        case xg:run xg:plan xg:skills
        case xg-log:show xg-log:diff
            test $n -eq $first; and xg-log -n 50 2>/dev/null | string split -f1 ' '
        case 'xg-log:*' 'xg-goal:*'
        case '*'
            __fish_complete_path $cur
    end
end

for prog in xg (for c in (xg commands 2>/dev/null); command -q xg-$c; and echo xg-$c; end)
    complete -c $prog -f -a '(__xg_complete)'
end
