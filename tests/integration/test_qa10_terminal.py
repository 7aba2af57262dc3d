"""What a terminal gets: tables and `show` where its encoding lacks a job's characters,
`--watch` on a dumb one, and bash's Tab completion of names that are not plain words.

Under a Latin-1 locale a CJK name prints as `?`s, one column each where the characters took
two: the table must be laid out by what is printed, or the columns after it move. A C
locale where Python's UTF-8 coercion is off (`PYTHONIOENCODING=ascii:surrogateescape` is
what such a stream is) must print `?` too, not end in a UnicodeEncodeError traceback. A
dumb terminal (TERM=dumb) cannot redraw in place: `ls -w` appends each reading there. Bash
puts a completion on the command line as it is: a sweep named `two words` must come escaped,
or it is two arguments. CSV rows end in a newline alone, as sacct -P's: a \\r ended up on
the last field a shell script read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from test_completion import PATIENT

from conftest import GPUHERD_BIN, Herd, on_a_terminal


def _held(herd: Herd, name: str) -> int:
    return herd.submit("--hold", "--name", name, "--", "true")


def test_table_columns_stay_aligned_when_characters_print_as_question_marks(
    shared_daemon: Herd,
) -> None:
    herd = shared_daemon
    _held(herd, "qa10a-\u65e5\u672c\u8a9e\u30c6\u30ad")  # 16 columns in UTF-8, 11 as ?s
    _held(herd, "qa10a-ab")
    latin1 = {**herd.env, "PYTHONIOENCODING": "latin-1"}
    for args in (("--columns", "id,name,folder"), ()):
        shown = herd.cli("ls", "--all", "--name", "qa10a-*", *args, env=latin1)
        lines = shown.stdout.splitlines()
        assert "qa10a-?????" in shown.stdout, shown.stdout
        after_name = {line.index("qa10a-") + 11 for line in lines[1:]}  # the longest name
        assert len(after_name) == 1, shown.stdout
        column = after_name.pop()
        header_next = lines[0].index("FOLDER" if args else "GPUS")
        assert column + 2 == header_next, shown.stdout
        assert all(line[column : column + 2] == "  " for line in lines[1:]), shown.stdout
        assert all(line[column + 2] != " " for line in lines[1:]), shown.stdout


def test_an_ascii_locale_without_utf8_coercion_prints_question_marks(
    shared_daemon: Herd,
) -> None:
    herd = shared_daemon
    job = _held(herd, "qa10-snow \u2603")
    ascii_c = {**herd.env, "PYTHONIOENCODING": "ascii:surrogateescape"}
    for args in (("show", str(job)), ("ls", "--all", "--name", "qa10-snow*")):
        shown = herd.cli(*args, env=ascii_c, check=False)
        assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
        assert "qa10-snow ?" in shown.stdout, shown.stdout


def test_watch_at_a_dumb_terminal_appends_every_reading(shared_daemon: Herd) -> None:
    herd = shared_daemon
    _held(herd, "qa10w-watched")
    # Ctrl-C after 7 s: readings at 0, 2, 4 and 6 s, one at least past a slow start.
    watch = [GPUHERD_BIN, "ls", "-w", "--name", "qa10w-*", "--columns", "id,prio"]
    args = ["timeout", "-s", "INT", "7", *watch]
    _, seen = on_a_terminal(args, herd.env, herd.home.parent, term="dumb")
    assert seen.count(b"ID  PRIO") >= 2, seen  # rich's Live drew one, and never another
    assert b"\x1b[" not in seen, seen  # no cursor move, no style


def test_bash_completes_a_name_that_is_no_plain_word_as_one_word(shared_daemon: Herd) -> None:
    herd = shared_daemon
    for name in ("qa10 two words", "qa10*", "qa10's"):
        herd.cli("sweep", "true {x}", "-p", "x", "1", "--name", name, "--hold")
    (herd.home.parent / "qa10.txt").touch()  # what an unquoted `qa10*` globs to
    # Each reply as bash would insert it, then the arguments the shell makes of it.
    script = """
        source <(gpuherd completion bash)
        COMP_WORDS=(gpuherd sweep status qa10); COMP_CWORD=3
        _gpuherd_completion gpuherd qa10 status
        for reply in "${COMPREPLY[@]}"; do eval "set -- $reply"; echo "$#:$1"; done
        COMPREPLY=(); COMP_WORDS=(gpuherd ls --state failed,k); COMP_CWORD=3
        _gpuherd_completion gpuherd failed,k --state
        echo "${COMPREPLY[*]}"
    """
    path = f"{Path(GPUHERD_BIN).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", script],
        env={**herd.env, "PATH": path, **PATIENT},  # (10 s to answer)
        cwd=herd.home.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.splitlines()
    assert sorted(words[:-1]) == ["1:qa10 two words", "1:qa10's", "1:qa10*"], proc.stdout
    assert words[-1] == "failed,killed"  # a plain word stays as it is, commas and all


def test_a_sweep_of_one_point_is_described_in_the_singular(shared_daemon: Herd) -> None:
    herd = shared_daemon
    herd.cli("sweep", "true {x}", "-p", "x", "1", "--name", "qa10-single", "--hold")
    env = {**herd.env, "_GPUHERD_COMPLETE": "zsh_complete", **PATIENT}  # (10 s to answer)
    env |= {"COMP_WORDS": "gpuherd sweep status qa10-si", "COMP_CWORD": "3"}
    answer = subprocess.run(
        [GPUHERD_BIN], env=env, capture_output=True, text=True, timeout=60
    ).stdout.splitlines()
    assert answer == ["plain", "qa10-single", "1 point: 1 held"], answer


def test_csv_rows_end_in_a_newline_alone(shared_daemon: Herd) -> None:
    herd = shared_daemon
    herd.cli("sweep", "true {x}", "-p", "x", "1", "2", "--name", "qa10-csv", "--hold")

    def csv_bytes(*args: str) -> bytes:  # (Herd.cli's text mode would turn \r\n into \n)
        run = [sys.executable, "-m", "gpuherd", *args]
        return subprocess.run(run, env=herd.env, capture_output=True, check=True).stdout

    for out in (
        csv_bytes("ls", "--all", "--csv", "--columns", "id,stderr", "--sweep", "qa10-csv"),
        csv_bytes("sweep", "status", "qa10-csv", "--csv"),
    ):
        assert out.count(b"\n") == 3 and b"\r" not in out, out  # header, two rows
