"""--live's and --gpu-file's modules are imported when a Runner is made (only then: start-up
time), after its state folder and database: a Ctrl-C in that import (or a broken install)
must undo them as any other failed start does (test_run.py's
test_a_runner_that_fails_to_start_leaves_no_state_folder_nor_descriptor)."""

from __future__ import annotations

import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import pytest

from gpuherd.gpus import make_probe
from gpuherd.runner import Runner, RunOptions


class _Interrupted(types.ModuleType):
    """A module whose runner class, once asked for, raises what a Ctrl-C in its import would
    (other names, which pytest's reports may look up, are just missing)."""

    def __getattr__(self, name: str) -> Any:
        if name in ("LiveOutput", "GpuFile"):
            raise KeyboardInterrupt
        raise AttributeError(name)


@pytest.mark.parametrize(
    ("module", "option"),
    [("gpuherd.runner_live", "live"), ("gpuherd.runner_gpu_file", "gpu_file")],
)
def test_a_ctrl_c_in_an_optional_module_import_leaves_no_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, option: str
) -> None:
    private = tmp_path / "tmpdir"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    monkeypatch.setitem(sys.modules, module, _Interrupted(module))
    (tmp_path / "gpus.txt").write_text("0\n")
    out = tmp_path / "out"
    options = (
        RunOptions(output_dir=out, live=True)
        if option == "live"
        else RunOptions(output_dir=out, gpu_file=tmp_path / "gpus.txt")
    )
    gpu_probe, slots = make_probe(None, "1")
    with pytest.raises(KeyboardInterrupt):
        Runner(options, gpu_probe, slots, reporter=None)  # type: ignore[arg-type]
    assert list(private.glob("gpuherd-run-*")) == []
