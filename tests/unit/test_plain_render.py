"""`ls` and `show` as people read them: plain text, aligned, cut to the terminal, never markup."""

from __future__ import annotations

import io
from typing import Any

import pytest

from gpuherd.cli import ls_table, plain, render
from gpuherd.core.text import clean_lines, one_line


def terminal(width: int = 200, styled: bool = False) -> plain.Terminal:
    term = plain.Terminal(io.StringIO())
    term.width, term.styled = width, styled
    return term


def job(job_id: int, state: str = "queued", command: str = "true", **extra: Any) -> dict[str, Any]:
    return {
        "id": job_id,
        "name": None,
        "state": state,
        "outcome": None,
        "exit_code": None,
        "signal": None,
        "gpus": [],
        "gpus_requested": 1,
        "priority": 0,
        "command": command,
        "started_at": None,
        "ended_at": None,
        "reason": None,
        **extra,
    }


def ls_output(
    jobs: list[dict[str, Any]], more: int = 0, filtered: bool = False, all_jobs: bool = False
) -> str:
    term = terminal()
    term.write(ls_table.job_lines(jobs, more, filtered, term, all_jobs=all_jobs))
    assert isinstance(term.stream, io.StringIO)
    return term.stream.getvalue()


def test_columns_are_aligned_two_spaces_apart_without_trailing_blanks() -> None:
    lines = plain.table(
        terminal(), ["ID", "STATE", "CMD"], [["1", "queued", "true"], ["12", "ok", ""]]
    )
    assert lines == ["ID  STATE   CMD", "1   queued  true", "12  ok"]


def test_a_wide_table_cuts_the_shrinkable_column_to_the_terminal() -> None:
    rows = [["1", "running", "python train.py --lr 0.1 --epochs 100 --data /very/long/path"]]
    lines = plain.table(terminal(width=40), ["ID", "STATE", "COMMAND"], rows, shrink=(2,))
    assert lines[1] == "1   running  python train.py --lr 0.1 -…"
    assert plain.cells(lines[1]) == 40


def test_columns_not_named_to_shrink_stay_whole_and_a_cut_one_keeps_ten_columns() -> None:
    rows = [["a-long-name-of-a-job", "python train.py --lr 0.1"]]
    lines = plain.table(terminal(width=30), ["NAME", "COMMAND"], rows, shrink=(1,))
    assert lines[1] == "a-long-name-of-a-job  python tr…"  # 32 columns: wider than 30


def test_wide_characters_count_double() -> None:
    assert plain.cells("训练") == 4
    assert plain.cut("训练模型", 5) == "训练…"
    lines = plain.table(terminal(), ["NAME", "X"], [["训练", "1"], ["ab", "2"]])
    assert lines == ["NAME  X", "训练  1", "ab    2"]


def test_wrap_counts_columns_as_the_terminal_shows_them() -> None:
    assert plain.wrap("train the model now", 9) == ["train the", "model now"]  # as textwrap
    # Two columns each: 4 characters fill a line of 8; a word wider than a line is split.
    assert plain.wrap("训练完成 结果已保存到共享目录", 8) == [
        "训练完成",
        "结果已保",
        "存到共享",
        "目录",
    ]
    # Combining characters take none (été, its accents as such), and stay with their letter.
    assert plain.wrap("e\u0301te\u0301 e\u0301te\u0301", 7) == ["e\u0301te\u0301 e\u0301te\u0301"]
    assert plain.wrap("e\u0301te\u0301", 2) == ["e\u0301t", "e\u0301"]


def test_wrap_indents_the_lines_after_the_first_and_may_keep_a_long_word_whole() -> None:
    said = "GPU 0 is reserved for job 2, held: 训练训练训练"
    assert plain.wrap(said, 14, indent="  ", break_long_words=False) == [
        "GPU 0 is",
        "  reserved for",
        "  job 2, held:",
        "  训练训练训练",
    ]
    assert plain.wrap("训练", 1) == ["训", "练"]  # a line narrower than a character still ends
    assert plain.wrap("", 10) == []


def test_text_is_never_markup_and_control_characters_cannot_garble() -> None:
    command = "echo [red]hi[/red] [/] \x1b[31mred\x1b[0m\tdone\nnext"
    lines = plain.table(terminal(), ["COMMAND"], [[command]])
    assert lines[1] == "echo [red]hi[/red] [/] red done next"


def test_styles_only_on_a_terminal() -> None:
    rows: list[list[plain.Cell]] = [["1", ("failed", "red")]]
    assert "\x1b" not in "".join(plain.table(terminal(), ["ID", "STATE"], rows))
    styled = plain.table(terminal(styled=True), ["ID", "STATE"], rows)
    assert styled == ["\x1b[1mID\x1b[0m  \x1b[1mSTATE\x1b[0m", "1   \x1b[31mfailed\x1b[0m"]


def test_the_environment_decides_styles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    piped = plain.Terminal(io.StringIO())
    assert not piped.styled
    assert piped.width == plain.PIPED_WIDTH
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert plain.Terminal(io.StringIO()).styled
    monkeypatch.setenv("NO_COLOR", "1")  # no style at all, bold neither: it wins
    assert not plain.Terminal(io.StringIO()).styled


def test_ls_table_as_before_with_the_more_line() -> None:
    jobs = [
        job(
            1,
            "succeeded",
            "python3 train.py --lr 1.0",
            outcome="exit",
            exit_code=0,
            gpus=[0],
            started_at=100.0,
            ended_at=100.1,
        ),
        job(2, "queued", "python3 train.py --lr 0.3", reason="queue paused"),
        job(3, "held", "true", name="later", reason="held"),
    ]
    out = ls_output(jobs, more=4)
    assert out.splitlines() == [
        "ID  STATE      NAME   GPUS  PRIO  TIME  INFO          COMMAND",
        "1   succeeded         0     0     0.1s  exit 0        python3 train.py --lr 1.0",
        "2   queued            (1)   0           queue paused  python3 train.py --lr 0.3",
        "3   held       later  (1)   0           held          true",
        "… and 4 more waiting jobs (gpuherd ls --all)",
    ]


def test_ls_shows_a_command_of_several_lines_with_its_breaks() -> None:
    """Its lines joined with ⏎, as `config` shows a hook: with blanks, `echo "1,2" echo 3`
    read as one command. A line continued with `\\` is one, as the shell reads it."""
    jobs = [job(1, command='echo "1,2"\necho 3'), job(2, command="python t.py \\\n  --lr 1")]
    assert [line.split("  ")[-1].strip() for line in ls_output(jobs).splitlines()[1:]] == [
        'echo "1,2"⏎echo 3',
        "python t.py --lr 1",
    ]


def test_ls_of_nothing() -> None:
    assert ls_output([]) == "no jobs\n"
    assert ls_output([], filtered=True) == "no jobs match\n"
    # --all is no filter that matched nothing (it said "no jobs match").
    assert ls_output([], all_jobs=True) == "no jobs\n"


def test_ls_all_counts_every_job_the_limit_left_out() -> None:
    jobs = [job(2, "failed", "false", outcome="exit", exit_code=1)]
    out = ls_output(jobs, more=179, all_jobs=True).splitlines()
    assert out[-1] == "… and 179 more waiting (a higher --limit shows them)"


def test_ls_says_how_many_a_filtered_listing_left_out() -> None:
    jobs = [job(2, "failed", "false", outcome="exit", exit_code=1)]
    out = ls_output(jobs, more=179, filtered=True).splitlines()
    assert out[-1] == "… and 179 more waiting (a higher --limit shows them)"


def test_show_lists_the_newest_events_of_a_job_one_line_each() -> None:
    events = [{"at": 1e9, "event": "submit", "from_state": None, "to_state": "queued"}]
    events += [
        {"at": 1e9 + n, "event": "retry", "from_state": "failed", "to_state": "queued"}
        for n in range(1, 22)
    ]
    events += [
        {
            "at": 1e9 + 30,
            "event": "edit",
            "from_state": "queued",
            "to_state": "queued",
            "detail": "gpus 1 -> 2\x1b[31m",
        },
        {"at": 1e9 + 31, "event": "spawn", "from_state": None, "to_state": "", "detail": "pid 7"},
    ]
    events = [{"detail": None, **e} for e in events]
    shown = job(
        4,
        "running",
        cwd="/w",
        project=None,
        pid=7,
        attempt=22,
        retries=30,
        created_at=1e9,
        job_dir="/w/4",
        attempts=[],
        events=events,
        mem=None,
        ram=None,
    )
    term = terminal()
    render.job_detail(shown, term)
    text = term.stream.getvalue()  # type: ignore[attr-defined]
    history = text.split("history\n", 1)[1].splitlines()
    assert history[0] == "  … 4 earlier events (--json)"
    assert len(history) == 1 + render.HISTORY_SHOWN
    assert history[-2].split()[2:] == ["edit", "gpus", "1", "->", "2"]  # no escape sequence
    assert history[-1].split()[2:] == ["spawn", "pid", "7"]  # no state change: no arrow
    assert history[-3].split()[2:] == ["retry", "->", "queued"]


def test_bidi_controls_show_as_code_points_and_cannot_reorder_text() -> None:
    name = "rtl\u202eevil"  # would read "rtllive"
    assert plain.clean(name) == "rtl<U+202E>evil"
    hidden = "".join(map(chr, [0x61C, 0x200E, 0x200F, 0x202A, 0x2066, 0x2069]))
    assert plain.clean(hidden) == "<U+061C><U+200E><U+200F><U+202A><U+2066><U+2069>"
    assert plain.show_bidi("a\u2067b\tc") == "a<U+2067>b\tc"  # only the bidi controls
    out = ls_output([job(1, command="echo \u202dx", name=name, project="p")])
    assert "rtl<U+202E>evil" in out and "echo <U+202D>x" in out and "\u202e" not in out


def test_ls_cuts_a_very_long_name_and_leaves_room_for_the_command() -> None:
    command = "python train.py --lr 0.1 --epochs 100"
    out = ls_output([job(1, command=command, name="n" * 3000)]).splitlines()
    assert out[1].split()[2] == "n" * (ls_table.NAME_WIDTH - 1) + "…"
    assert out[1].endswith(command)


def show_text(shown: dict[str, Any]) -> str:
    defaults = {
        "cwd": "/w",
        "project": None,
        "pid": None,
        "attempt": 1,
        "retries": 0,
        "created_at": 1e9,
        "job_dir": "/w/1",
        "attempts": [],
        "mem": None,
        "ram": None,
    }
    term = terminal()
    render.job_detail({**defaults, **shown}, term)
    assert isinstance(term.stream, io.StringIO)
    return term.stream.getvalue()


def test_show_says_the_detail_of_a_state_only_when_it_adds_something() -> None:
    killed = show_text(job(1, "killed", outcome="killed", started_at=1e9, ended_at=1e9 + 2))
    assert "\nstate      killed\n" in killed
    failed = show_text(job(1, "failed", outcome="exit", exit_code=3))
    assert "\nstate      failed — exit 3\n" in failed


def test_show_says_the_attempt_of_a_paused_job_is_paused() -> None:
    attempt = {"number": 2, "gpus": [0], "pid": 7, "started_at": 1e9, "outcome": None, "host": "h"}
    earlier = {**attempt, "number": 1, "outcome": "exit", "exit_code": 1}
    text = show_text(job(1, "paused", gpus=[0], pid=7, attempt=2, attempts=[earlier, attempt]))
    assert "  1: exit 1 on GPU 0" in text and "  2: paused on GPU 0" in text


def test_show_says_a_cpu_only_attempt_ran_on_no_gpu_without_a_dash() -> None:
    """It said `1: exit 0 on GPU -`, as if its GPU were not known."""
    ran = {"number": 1, "gpus": [], "pid": 7, "started_at": 1e9, "host": "h", "ended_at": 2e9}
    ended = {**ran, "outcome": "exit", "exit_code": 0, "peak_rss": 2**30, "cpu_time": 1}
    text = show_text(job(1, "succeeded", gpus_requested=0, attempts=[ended]))
    assert "  1: exit 0, pid 7, started " in text and "on GPU" not in text


def test_show_says_a_job_that_never_ran_has_no_attempt_yet() -> None:
    """It said `attempt  0 (retries allowed: 2)`, as if a run numbered 0 had been."""
    waiting = show_text(job(1, "queued", attempt=0, retries=2))
    assert "\nattempt    not run yet (retries allowed: 2)\n" in waiting
    cancelled = show_text(job(1, "cancelled", attempt=0, outcome="cancelled"))
    assert "\nattempt    none: it never ran (retries allowed: 0)\n" in cancelled


def test_terminal_titles_and_c1_controls_are_dropped_as_hooks_log_drops_them() -> None:
    # A title (OSC) showed as "]0;title" in ls; a C1 CSI (0x9b) went out raw.
    assert plain.clean("a\x1b]0;title\x07b\x1b]8;;http://x\x1b\\c\x9b31md") == "abc 31md"
    assert clean_lines("red\x1b[31m\r\nx\x1b]0;t\x07\ty\rz\x00") == "red\nx\ty\nz?"
    # A multi-line hook on one line: `config`'s table and hooks.log's header (a CR broke it).
    assert one_line("echo a\r\necho b\rc\t\x1b[1m") == "echo a⏎echo b c "


def test_show_gives_host_usage_under_each_attempt_that_ran() -> None:
    ran = {"number": 1, "gpus": [], "pid": 7, "started_at": 1e9, "host": "h", "ended_at": 2e9}
    measured = {**ran, "outcome": "exit", "exit_code": 0, "peak_rss": 3 * 2**30, "cpu_time": 133}
    text = show_text(job(1, "succeeded", outcome="exit", exit_code=0, attempts=[measured]))
    assert "  1: exit 0, pid 7" in text  # one attempt: listed for its usage line
    assert "\n     host memory: peak 3.0 GiB; CPU 2m13s\n" in text
    over = {**measured, "over_ram": True}
    text = show_text(job(1, "succeeded", attempts=[over], ram=2**30))
    assert "\n     host memory: asked 1.0 GiB, peak 3.0 GiB (more than declared); CPU" in text
    unmeasured = {**ran, "outcome": "exit", "exit_code": 1}
    text = show_text(
        job(1, "running", attempt=2, attempts=[unmeasured, {**ran, "number": 2, "ended_at": None}])
    )
    assert text.count("host memory") == 1  # the running attempt has none yet
    assert "  1: exit 1, pid 7, started" in text
    assert "\n     host memory, CPU: not measured\n" in text
    small = {**measured, "peak_rss": None, "cpu_time": 0.01}  # no larger than the daemon
    text = show_text(job(1, "succeeded", attempts=[small], ram=2**30))
    assert "\n     host memory: asked 1.0 GiB, peak too small to measure; CPU 0.0s\n" in text
    unstarted = {**ran, "outcome": "spawn_error", "pid": None}
    assert "attempts" not in show_text(job(1, "failed", attempts=[unstarted]))  # nothing ran
