"""`gpuherd run` reading the commands typed at its terminal draws no progress bar there: the
bar's redraws (ten a second) cleared the line being typed, so each key vanished as it was
typed. A run whose commands come from a file keeps its bar on the terminal."""

from __future__ import annotations

from conftest import GPUHERD_BIN, Runs, on_a_terminal

BAR = "━".encode()


def test_commands_typed_at_the_terminal_stay_in_view(runs: Runs) -> None:
    keys = [bytes([key]) for key in b"echo hi\n"] + [b"\x04"]
    args = [GPUHERD_BIN, "run", "--fake-gpus", "1", "--output-dir", str(runs.root / "out")]
    status, seen = on_a_terminal(args, runs.env, runs.cwd, timeout=60, keys=keys)
    text = seen.decode(errors="replace")
    assert status == 0, text
    assert BAR not in seen, text  # no bar, and so no redraw to clear what is typed
    assert "\x1b[2K" not in text, text
    assert "echo hi\r\n[0] started on GPU 0: echo hi\r\n" in text, text
    assert text.endswith(f"1 succeeded, 0 failed; logs in {runs.root / 'out'}\r\n"), text


def test_a_run_of_a_job_file_still_draws_its_bar_on_the_terminal(runs: Runs) -> None:
    (runs.cwd / "jobs.txt").write_text("sleep 0.5\n")
    status, seen = on_a_terminal(
        [GPUHERD_BIN, "run", "--fake-gpus", "1", "jobs.txt"], runs.env, runs.cwd, typed=True
    )
    assert status == 0, seen
    assert BAR in seen, seen
