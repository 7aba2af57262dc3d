"""`gpuherd.GPUTask`: GPU Task Scheduler's base class, for its task files to import from
gpuherd once GPU Task Scheduler is gone: `from gpuherd import GPUTask` in place of `from
gpu_task_scheduler.gpu_task import GPUTask`. Without it, every such file failed at its first
line (`No module named 'gpu_task_scheduler'`) unless GPU Task Scheduler stayed installed,
where the docs said its classes ran as they were.

Not a `gpu_task_scheduler` package of gpuherd's own: installed beside the real one, it would
shadow it. The job's worker runs any class with a `main()` (worker._run_task_class); this
base gives what GPU Task Scheduler's did: `_config`, `_work_dir`, an empty `required_env()`.
Only the standard library here: the job imports it with the user's module, after
CUDA_VISIBLE_DEVICES is set (worker.py)."""

from __future__ import annotations

from typing import Any


class GPUTask:
    """A point's code, as GPU Task Scheduler ran it: created with the point's parameters
    (`self._config`, global_config merged in) and its result folder (`self._work_dir`); its
    `required_env()` variables set before the job imports the module; then `main()` called,
    whose return value is the point's metrics (a dict), as a task function's is.

        from gpuherd import GPUTask

        class MyGPUTask(GPUTask):
            def main(self):
                ...  # self._config["method"], files written under self._work_dir
    """

    def __init__(self, config: dict[str, Any], work_dir: str) -> None:
        self._config = config
        self._work_dir = work_dir

    def required_env(self) -> dict[str, Any]:
        """Environment variables the point needs besides CUDA_VISIBLE_DEVICES (set by the
        job); none unless overridden. Values as text or not (`{"SEED": 7}`): each is set as
        its text (worker._run_task_class)."""
        return {}

    def main(self) -> Any:
        """The point's code: to be overridden. GPU Task Scheduler's did nothing, so a class
        that forgot it ran every point as a success that did nothing."""
        raise NotImplementedError(
            f"{type(self).__name__} has no main() of its own: define main(self) in it, the "
            "code each point runs (GPUTask's is only the place for it)"
        )
