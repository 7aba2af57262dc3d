"""The CPU time (user + system, of the whole process) and wall time of the everyday CLI calls
(`--help`, `ls`, `submit`, `show`, `log`, `wait`, `kill`, `daemon status`), for each source
tree given, the trees' runs interleaved (on a machine whose load comes and goes): each tree
runs its own daemon in a home of its own and its own CLI. The median and the minimum of each
are printed: the minimum is the figure other work on the machine disturbs least.

Start-up is mostly imports, so each tree is compiled first (a machine that sets
PYTHONDONTWRITEBYTECODE would otherwise compile every module at every call, which no
installed copy does). `--python`: the interpreter to run the calls with; a venv's, made
with `python -m venv --without-pip DIR` and a `.pth` naming this interpreter's
site-packages, leaves out what this sandbox's own interpreter adds to every start-up.

Run: python benchmarks/cli_start.py [--reps 15] [--python PYTHON] [--tree DIR ...]
     (a folder holding src/gpuherd, e.g. HEAD's:
      mkdir /tmp/old && git archive HEAD src | tar -x -C /tmp/old; default: this repository)
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from harness.common import compared_trees, herd_env

COMMANDS = {
    "--help": ["--help"],
    "ls": ["ls"],
    "submit -- true": ["submit", "-q", "--", "true"],
    "show 1": ["show", "1"],
    "log 1": ["log", "1"],
    "wait 1": ["wait", "1"],
    "kill 1": ["kill", "1"],
    "daemon status": ["daemon", "status"],
}


@contextmanager
def tree_daemon(python: str, tree: Path) -> Iterator[dict[str, str]]:
    """A daemon of `tree`'s code with one fake GPU in a new home, job 1 ended in it: the
    environment of that tree's `python -m gpuherd`; stopped, and the home removed, on the way
    out."""
    home = Path(tempfile.mkdtemp(prefix="cli-start-"))
    env = {**herd_env(home), "PYTHONPATH": str(tree / "src")}
    gpuherd = [python, "-m", "gpuherd"]
    subprocess.run([*gpuherd, "daemon", "start", "--fake-gpus", "1"], env=env, check=True)
    try:
        subprocess.run([*gpuherd, "submit", "-q", "--wait", "--", "echo hi"], env=env, check=True)
        yield env
    finally:
        subprocess.run([*gpuherd, "daemon", "stop", "--kill"], env=env, capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def cli(python: str, env: dict[str, str], words: list[str]) -> tuple[float, float]:
    """(CPU ms, wall ms) of `python -m gpuherd WORDS` (any exit status)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [python, "-m", "gpuherd", *words],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return (usage.ru_utime + usage.ru_stime) * 1000, wall * 1000


def main() -> None:
    args, trees = compared_trees(15)
    runs: dict[tuple[str, int], list[tuple[float, float]]] = {
        (label, t): [] for label in COMMANDS for t in range(len(trees))
    }
    with ExitStack() as stack:
        envs = [stack.enter_context(tree_daemon(args.python, tree)) for tree in trees]
        for rep in range(args.reps):
            order = list(enumerate(envs))
            for label, words in COMMANDS.items():
                for t, env in order if rep % 2 == 0 else order[::-1]:
                    runs[label, t].append(cli(args.python, env, words))
    print(f"python -m gpuherd ..., {args.reps} runs each: CPU ms median (min); wall ms median")
    for (label, t), found in runs.items():
        cpu, wall = [c for c, _ in found], [w for _, w in found]
        print(
            f"  {label:16} [{os.path.relpath(trees[t])}]: CPU {statistics.median(cpu):5.1f}"
            f" ({min(cpu):5.1f}); wall {statistics.median(wall):5.1f}"
        )


if __name__ == "__main__":
    main()
