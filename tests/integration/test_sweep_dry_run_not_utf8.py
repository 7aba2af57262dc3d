"""`sweep --dry-run` refuses bytes that are not UTF-8 as the daemon refuses a submission of
them, in one line: expanded in the CLI, the points' folder names failed to hash them, and
the dry run ended in a traceback (UnicodeEncodeError in core/sweep_names.folder_name)."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd


def test_a_dry_run_of_values_not_utf8_is_refused_in_one_line(herd: Herd, tmp_path: Path) -> None:
    spec = tmp_path / "sweep.yaml"
    spec.write_text('command: echo {x}\ngrid:\n  x: ["ok", "\\udcff"]\n')
    for args in (["echo {x}", "-p", "x", "a\udcff"], [str(spec)]):
        refused = herd.cli("sweep", *args, "--dry-run", check=False)
        assert refused.returncode == 1, refused.stderr
        assert refused.stderr.startswith("gpuherd: error: sweep: grids.0.x."), refused.stderr
        assert "holds bytes that are not UTF-8" in refused.stderr
        assert "Traceback" not in refused.stderr and refused.stderr.count("\n") == 1
    listed = herd.cli("sweep", "echo {x}", "-p", "x", "a", "b", "--dry-run")
    assert listed.stdout == "echo a\necho b\n"
