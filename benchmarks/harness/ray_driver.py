"""Ray driver, run by the Ray venv's Python: one local Ray with 4 fake GPUs, driven over stdin.

Each request is a JSON line; each answer is a JSON line on stdout. Jobs are tasks with
num_gpus=1, num_cpus=0 that run the shell line with the CUDA_VISIBLE_DEVICES Ray sets.
`quit` calls ray.shutdown(), which stops the Ray this driver started (never `ray stop`).
Standalone on purpose: it runs in another interpreter than the harness.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def main() -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever Ray prints must not mix with the answers
    t = time.perf_counter()
    import ray

    ray.init(
        num_gpus=4,
        include_dashboard=False,
        log_to_driver=False,
        _temp_dir=os.environ["BENCH_RAY_TMP"],
    )

    def run_line(line: str) -> int:
        return subprocess.run(line, shell=True).returncode

    tasks = {
        "default": ray.remote(num_gpus=1, num_cpus=0)(run_line),
        "reuse": ray.remote(num_gpus=1, num_cpus=0, max_calls=0)(run_line),
    }
    answer(out, {"init": time.perf_counter() - t, "pid": os.getpid()})
    for raw in sys.stdin:
        req = json.loads(raw)
        if req["op"] == "quit":
            break
        task = tasks[req.get("mode", "reuse")]
        t0 = time.time()
        refs = [task.remote(line) for line in req["lines"]]
        submitted = time.time()
        codes = ray.get(refs)
        answer(
            out,
            {"t0": t0, "submitted": submitted, "t1": time.time(), "failed": sum(map(bool, codes))},
        )
    ray.shutdown()
    answer(out, {"bye": True})


def answer(out: object, value: dict[str, object]) -> None:
    print(json.dumps(value), file=out, flush=True)  # type: ignore[call-overload]


if __name__ == "__main__":
    main()
