"""Tab where a word is typed as the shell reads it: `run`'s options that take a path (their
value not given yet made run's own checks refuse the line, and Tab offered nothing); a sweep
name begun with a quote in bash (`"my<Tab>`); and the words of submit's command, which are
the job's, not gpuherd's options. Asked as the shells ask it (test_completion's helpers)."""

from __future__ import annotations

import os
import shlex
import shutil

import pytest
from test_completion import complete, in_shell, values

from conftest import Herd

FISH = pytest.mark.skipif(  # (CI installs fish: there a missing one fails the test)
    shutil.which("fish") is None and not os.environ.get("CI"), reason="fish is not installed"
)


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("gpuherd run --yielder ", "file"),
        ("gpuherd run --yielder ya", "file"),
        ("gpuherd run --gpus 0 1 --yielder ", "file"),
        ("gpuherd run --gpu-file ", "file"),
        ("gpuherd run --output-dir ", "dir"),
        ("gpuherd run --times-from ", "dir"),
        ("gpuherd run --job_file jo", "file"),  # gpu-hog's: the FILE argument
        ("gpuherd run --job_yielder ", "file"),
        ("gpuherd run --fake-gpus st", "file"),  # its JSON state file (a count is typed)
        ("gpuherd daemon start --fake-gpus st", "file"),
    ],
)
def test_run_options_that_take_a_path_complete_one(herd: Herd, line: str, kind: str) -> None:
    """`run --yielder <Tab>` offered nothing: run's check that a file follows refused the
    line as typed so far, and completion gave up without a word."""
    typed = "" if line.endswith(" ") else line.rsplit(" ", 1)[1]
    for shell in ("bash", "zsh", "fish"):
        found, proc = complete(herd, line, shell)
        assert (found, proc.returncode, proc.stderr) == ([(kind, typed, "")], 0, "")


def test_run_still_completes_its_options_after_a_file_option(herd: Herd) -> None:
    assert values(herd, "gpuherd run --yielder --gpu-") == ["--gpu-file"]  # (no file given)
    assert values(herd, "gpuherd run --yielder y.py --gpu-") == ["--gpu-file"]
    assert values(herd, "gpuherd run jobs.txt --output-") == ["--output-dir"]
    assert values(herd, "gpuherd daemon start --fake-gpus 2 --exec") == ["--executor"]


@FISH
def test_fish_completes_the_path_after_run_yielder(herd: Herd) -> None:
    (herd.home.parent / "yielder.py").write_text("")
    script = f"gpuherd completion fish | source; cd '{herd.home.parent}'; "
    proc = in_shell(
        herd, ["fish", "--no-config"], script + 'complete -C "gpuherd run --yielder yi"'
    )
    assert (proc.returncode, proc.stderr, proc.stdout) == (0, "", "yielder.py\n")


QUOTED = [  # the word typed, as bash completes it (its reply, the quote closed), the name
    ('"my', '"my sweep"', "my sweep"),
    ("'my", "'my sweep'", "my sweep"),
    ('m"y', 'm"y sweep"', "my sweep"),  # (bash puts the reply after the quote)
    ('"it', '"it\'s"', "it's"),
    ("'it", "'it'\\''s'", "it's"),
    ('"a', '"a\\$b"', "a$b"),
    ("'a", "'a$b'", "a$b"),
    ('"hi', '"hi"\\!"x"', "hi!x"),  # (history's `!` in double quotes, even after a \\)
    ('"b', '"b\\\\s"', "b\\s"),
    ("'b", "'b\\s'", "b\\s"),
    ("my", "my\\ sweep", "my sweep"),  # without a quote, as before
    ("it", "it\\'s", "it's"),
    ("a", "a\\$b", "a$b"),
]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_writes_a_sweep_name_for_the_quote_the_word_began_with(
    shared_daemon: Herd,
) -> None:
    """`sweep status "my<Tab>` became `"my\\ sweep"`: inside quotes bash keeps the backslash
    (`no sweep named 'my\\\\ sweep'`). Each line bash makes is read back by bash as the name."""
    herd = shared_daemon
    for name in {name for _, _, name in QUOTED}:
        herd.cli("sweep", "true {x}", "-p", "x", "1", "--name", name, "--gpus", "0")
    lines = ["source <(gpuherd completion bash)"]
    for typed, _, _ in QUOTED:
        quote = next((c for c in typed if c in "\"'"), "")
        before, _, word = typed.partition(quote) if quote else ("", "", typed)
        # As bash calls it on Tab: the word as typed in COMP_WORDS, the text after its open
        # quote as the word; readline puts the reply there and closes the quote.
        lines += [
            f"COMPREPLY=(); COMP_WORDS=(gpuherd sweep status {shlex.quote(typed)}); COMP_CWORD=3",
            f"_gpuherd_completion gpuherd {shlex.quote(word)} status",
            f'for reply in "${{COMPREPLY[@]}}"; do printf "%s%s%s\\n" '
            f'{shlex.quote(before + quote)} "$reply" {shlex.quote(quote)}; done',
        ]
    proc = in_shell(herd, ["bash", "--norc", "--noprofile"], "\n".join(lines))
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.splitlines() == [completed for _, completed, _ in QUOTED]
    words = "\n".join(f"printf '%s\\n' {completed}" for _, completed, _ in QUOTED)
    read = in_shell(herd, ["bash", "--norc", "--noprofile"], words)
    assert read.stdout.splitlines() == [name for _, _, name in QUOTED]


@pytest.mark.parametrize(
    "line",
    [
        "gpuherd submit python train.py --na",  # click offered --name
        "gpuherd submit python train.py --after ",  # and job ids
        "gpuherd submit --hold echo hi --name ",
        "gpuherd submit -n x -- echo --after ",
        "gpuherd submit echo -",
    ],
)
def test_the_words_of_submits_command_complete_as_paths(shared_daemon: Herd, line: str) -> None:
    """Submit takes every word after its command's first as the command's (`submit --hold
    echo hi --name foo` runs `echo hi --name foo`): Tab there completes a path, as the shell
    does for the command's own words, never one of gpuherd's options."""
    shared_daemon.submit("--hold", "--", "true")
    typed = "" if line.endswith(" ") else line.rsplit(" ", 1)[1]
    for shell in ("bash", "zsh", "fish"):
        found, proc = complete(shared_daemon, line, shell)
        assert (found, proc.returncode, proc.stderr) == ([("file", typed, "")], 0, "")


def test_submits_options_before_the_command_and_runs_and_sweeps_after_theirs(
    shared_daemon: Herd,
) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", "--", "true")
    assert values(herd, "gpuherd submit --na") == ["--name"]
    assert str(job) in values(herd, "gpuherd submit -n x --after ")
    assert values(herd, "gpuherd submit -n x --hold --pri") == ["--priority"]
    # run and sweep take their options after the FILE or TEMPLATE too
    assert values(herd, "gpuherd run jobs.txt --output-") == ["--output-dir"]
    assert values(herd, "gpuherd sweep echo{x} --na") == ["--name"]
    assert str(job) in values(herd, "gpuherd sweep x.yaml --after ")


@FISH
def test_fish_offers_no_gpuherd_option_among_submits_command(shared_daemon: Herd) -> None:
    script = (
        'gpuherd completion fish | source; complete -C "gpuherd submit python train.py --na"; '
        'complete -C "gpuherd submit --na"'
    )
    proc = in_shell(shared_daemon, ["fish", "--no-config"], script)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "--name\tA name to find the job by.\n"
