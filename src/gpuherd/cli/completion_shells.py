"""The shells' side of Tab completion: the script each shell sources (`gpuherd completion
SHELL` prints it) and how the candidates are written for it; and, for every shell, the words
of a job's command (`submit python train.py <Tab>`) completed as the shell completes a
command's words, never as gpuherd's options.

These classes replace click's own for bash, zsh and fish (add_completion_class): importing
this module registers them. completion_cmd says what the candidates are.
"""

from __future__ import annotations

import click
from click.shell_completion import (
    BashComplete,
    CompletionItem,
    FishComplete,
    ShellComplete,
    ZshComplete,
    _resolve_context,
    _resolve_incomplete,
    add_completion_class,
)

SHELLS = ("bash", "zsh", "fish")


class _CommandWordsAsTyped(ShellComplete):
    """Once a job's command has begun (`submit python train.py`, or `submit -- ...`), what
    follows is its own words, which `submit` takes as they are (its options come before the
    command): Tab completes a path there, as the shell would for the command. click offered
    gpuherd's options (`--na<Tab>` -> `--name`) and their values (`--after <Tab>` -> job
    ids), which became part of the job's command."""

    def get_completions(self, args: list[str], incomplete: str) -> list[CompletionItem]:
        # (click's own steps, ShellComplete.get_completions, with the command's words first)
        ctx = _resolve_context(self.cli, self.ctx_args, self.prog_name, args)
        if (words := command_words(ctx)) is not None:
            return words.shell_complete(ctx, incomplete)
        obj, incomplete = _resolve_incomplete(ctx, args, incomplete)
        if isinstance(obj, click.Option) and not obj.is_flag and args and args[-1] in obj.opts:
            # An option still missing its value fails click's parse, which leaves every
            # parameter unset: read the words before it again, so that its candidates know
            # the command's own jobs (`move 3 --swap <Tab>` offered 3).
            earlier = _resolve_context(self.cli, self.ctx_args, self.prog_name, args[:-1])
            ctx = earlier if earlier.command is ctx.command else ctx
        return obj.shell_complete(ctx, incomplete)


def command_words(ctx: click.Context) -> click.Argument | None:
    """The argument that takes a command's words as they are, where they have begun: of a
    command that ends its options at its first argument (allow_interspersed_args off: `submit`),
    the argument of any number of words that holds one already. `run` and `sweep` take their
    options after their FILE or TEMPLATE too, so those stay theirs."""
    if ctx.allow_interspersed_args or isinstance(ctx.command, click.Group):
        return None
    for param in ctx.command.get_params(ctx):
        if isinstance(param, click.Argument) and param.nargs == -1 and ctx.params.get(param.name):
            return param
    return None


class _Fish(_CommandWordsAsTyped, FishComplete):
    """click's fish completion, in the form click 8.4.2 gave it back: 8.4.0 and 8.4.1 print a
    script that fish cannot read (github.com/pallets/click/issues/3502). Script and answers
    are both ours, so they agree whatever click is installed; and a description may hold a
    comma (the script splits at the first one only)."""

    source_template = """\
function %(complete_func)s;
    set -l response (env %(complete_var)s=fish_complete COMP_WORDS=(commandline -cp) \
COMP_CWORD=(commandline -t) %(prog_name)s);

    for completion in $response;
        set -l metadata (string split --max 1 "," -- $completion);

        if test $metadata[1] = "dir";
            __fish_complete_directories $metadata[2];
        else if test $metadata[1] = "file";
            __fish_complete_path $metadata[2];
        else if test $metadata[1] = "plain";
            echo $metadata[2];
        end;
    end;
end;

complete --no-files --command %(prog_name)s --arguments "(%(complete_func)s)";
"""

    def format_completion(self, item: CompletionItem) -> str:
        # One line each: fish reads the answer a line at a time, a tab before the description.
        described = f"\t{' '.join(item.help.split())}" if item.help else ""
        return f"{item.type},{item.value}{described}"


class _Bash(_CommandWordsAsTyped, BashComplete):
    """click's bash completion, but a value is put on the command line as one word, as typed
    (`my\\ sweep`): bash inserts a reply as it is, so a sweep named `my sweep` became two
    arguments, `lr*` a glob of the files there and `it's` an open quote. `read -r` keeps a
    backslash in a value; a plain word (an id, a state list's commas) is left unescaped.

    In a word begun with a quote (`"my<Tab>`, `'my<Tab>`) bash puts the reply after that
    quote and closes it: there the value is written as that quote wants it (`"my sweep"`,
    `'it'\\''s'`, `"a\\$b"`), where `printf %q`'s `my\\ sweep` kept its backslash (`"my\\
    sweep"`, a sweep named so). The script finds the quote the word is open in, and how many
    characters came before it (`ab"c<Tab>`: bash replaces only the `c`)."""

    source_template = r"""%(complete_func)s() {
    local IFS=$'\n'
    local response typed=${COMP_WORDS[COMP_CWORD]} quote='' start=0 seen=0 i=0 c type value out

    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD \
%(complete_var)s=bash_complete $1)

    while (( i < ${#typed} )); do
        c=${typed:i:1}
        i=$((i + 1))
        if [[ -z $quote && $c == [\"\'] ]]; then
            quote=$c
            start=$seen
            continue
        elif [[ $c == "$quote" ]]; then
            quote=''
            continue
        elif [[ $c == '\' && $quote != "'" ]]; then
            if [[ -z $quote || ${typed:i:1} == [\"\\\$\`] ]]; then
                i=$((i + 1))
            fi
        fi
        seen=$((seen + 1))
    done

    for completion in $response; do
        IFS=',' read -r type value <<< "$completion"

        if [[ $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o dirnames
        elif [[ $type == 'file' ]]; then
            COMPREPLY=()
            compopt -o default
        elif [[ $type == 'plain' ]]; then
            if [[ -n $quote ]]; then
                out=''
                for (( i = start; i < ${#value}; i++ )); do
                    c=${value:i:1}
                    case $quote$c in
                        "''") out+="'\''" ;;
                        \"[\"\\\$\`]) out+="\\$c" ;;
                        '"!') out+='"\!"' ;;
                        *) out+=$c ;;
                    esac
                done
                value=$out
            elif [[ $value == *[^A-Za-z0-9_,.:=@%%+/-]* ]]; then
                printf -v value '%%q' "$value"
            fi
            COMPREPLY+=("$value")
        fi
    done

    return 0
}

%(complete_func)s_setup() {
    complete -o nosort -F %(complete_func)s %(prog_name)s
}

%(complete_func)s_setup;
"""


class _Zsh(_CommandWordsAsTyped, ZshComplete):
    """click's zsh completion, with a job's command's words completed as paths."""


for _shell in (_Bash, _Zsh, _Fish):
    add_completion_class(_shell)
