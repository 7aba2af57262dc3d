"""GPU Task Scheduler task files run with `from gpuherd import GPUTask` in place of `from
gpu_task_scheduler.gpu_task import GPUTask`, GPU Task Scheduler uninstalled: its README's
config.py and my_gpu_task.py, and docs/sweeps.md's main.py, run through a real daemon. Every
such file failed at its first line, `No module named 'gpu_task_scheduler'` (gts_task.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd

CONFIG = """
config = {
    "scheduler_config": {
        "gpu": ["0", "1", "2"]
    },

    "global_config": {
        "num_run": 5,
        "num_epoch": 200,
    },

    "test_config": [
        {
            "method": ["GAN", "ALI"],
            "num_packing": [1],
            "num_zmode": [1]
        },
        {
            "method": ["WGAN"],
            "num_packing": [3],
            "num_zmode": [1, 2]
        }
    ]
}
"""

MY_GPU_TASK = """
import json
import os

from gpuherd import GPUTask


class MyGPUTask(GPUTask):
    def __init__(self, config, work_dir):  # a constructor of its own, calling GPUTask's
        super().__init__(config, work_dir)
        self.made_here = True

    def required_env(self):
        return {"GTS_FLAGS": "floatX=float32"}

    def main(self):
        seen = {
            "config": self._config,
            "flags": os.environ["GTS_FLAGS"],
            "gpu": os.environ["CUDA_VISIBLE_DEVICES"],
            "made_here": self.made_here,
        }
        with open(os.path.join(self._work_dir, "seen.json"), "w") as out:
            json.dump(seen, out)
        return {"zmode": self._config["num_zmode"]}


class Forgotten(GPUTask):  # no main() of its own
    pass
"""

MAIN = """
from config import config                    # scheduler_config, global_config, test_config
from my_gpu_task import MyGPUTask
import gpuherd

if __name__ == "__main__":                   # as every submit (python.md)
    sweep = gpuherd.sweep_from_config(config, task=MyGPUTask)   # not GPUTaskScheduler(...).start()
    print(sweep.wait())
"""

FOLDERS = [
    "method-GAN,num_packing-1,num_zmode-1",
    "method-ALI,num_packing-1,num_zmode-1",
    "method-WGAN,num_packing-3,num_zmode-1",
    "method-WGAN,num_packing-3,num_zmode-2",
]


@pytest.fixture
def gts_folder(shared_work: Path) -> Path:
    """GPU Task Scheduler's two files, as its README has them but for the import, and main.py."""
    for name, text in {"config.py": CONFIG, "my_gpu_task.py": MY_GPU_TASK, "main.py": MAIN}.items():
        (shared_work / name).write_text(text)
    return shared_work


def test_a_gts_task_file_importing_gpuherds_gputask_runs_its_points(
    shared_daemon: Herd, gts_folder: Path
) -> None:
    ran = subprocess.run(
        [sys.executable, "main.py"],
        cwd=gts_folder,
        env=shared_daemon.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (ran.returncode, ran.stdout) == (0, "True\n"), ran.stderr
    results = gts_folder / "results"
    assert sorted(p.name for p in results.iterdir()) == sorted(FOLDERS)
    for folder in FOLDERS:
        assert (results / folder / "SUCCESS").exists()
        seen = json.loads((results / folder / "seen.json").read_text())
        values = dict(pair.split("-") for pair in folder.split(","))
        assert seen["config"] == {  # global_config merged in, as GPU Task Scheduler gave it
            "num_run": 5,
            "num_epoch": 200,
            "method": values["method"],
            "num_packing": int(values["num_packing"]),
            "num_zmode": int(values["num_zmode"]),
        }
        assert (seen["flags"], seen["made_here"]) == ("floatX=float32", True)
        assert seen["gpu"] in {"0", "1", "2"}  # the config's GPUs alone


def test_a_gputask_without_main_fails_its_point_saying_so(
    shared_daemon: Herd, gts_folder: Path
) -> None:
    script = (
        "from config import config; from my_gpu_task import Forgotten; import gpuherd\n"
        "config['test_config'] = [{'method': ['GAN']}]\n"
        "print(gpuherd.sweep_from_config(config, task=Forgotten).wait())\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script],
        cwd=gts_folder,
        env=shared_daemon.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (ran.returncode, ran.stdout) == (0, "False\n"), ran.stderr
    (row,) = gpuherd.connect(shared_daemon.home, start=False).get_sweep("Forgotten").results()
    stderr = shared_daemon.cli("log", "--stderr", str(row["job_id"])).stdout
    assert (
        "NotImplementedError: Forgotten has no main() of its own: define main(self) in it"
    ) in stderr


def test_gputask_is_gpu_task_schedulers_base_and_no_package_shadows_it() -> None:
    task = gpuherd.GPUTask({"lr": 0.1}, "/tmp/run")
    assert (task._config, task._work_dir, task.required_env()) == ({"lr": 0.1}, "/tmp/run", {})
    # A gpu_task_scheduler of gpuherd's own would shadow the real one, installed beside it.
    assert not (Path(gpuherd.__file__).parent.parent / "gpu_task_scheduler").exists()
