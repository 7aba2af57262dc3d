"""gpuherd side by side with the tools users would pick instead (issue 9).

    python benchmarks/run.py            # install the peers, run W1-W8, write RESULTS.md
    python benchmarks/run.py --quick    # gpuherd only, small sizes, a few seconds (CI smoke)

See benchmarks/README.md. Everything the run installs or writes, apart from RESULTS.md, lives
in benchmarks/.scratch/ (gitignored). Exit status 1 when a gpuherd run fails its
correctness check (every job once, one job per GPU at a time) or does not finish.
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "src"))

from harness import report, single
from harness.common import BENCH, SCRATCH, set_work, use_python
from harness.install import Peer, gpuherd_venv, install_all
from harness.tools import (
    Gpusched,
    HerdDaemon,
    HerdRun,
    HerdSweepLpt,
    Parallel,
    Python4,
    Python4Records,
    Ray,
    SimpleGpuScheduler,
    TaskSpooler,
    Tool,
    Xargs,
)
from harness.workloads import Bench, Results, Sizes, note_load, run_all

ALL = ("W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8")


def make_tools(peers: dict[str, Peer], only: set[str] | None) -> list[Tool]:
    from harness.gflow import Gflow

    tools: list[Tool] = [
        HerdRun(),
        HerdRun(on_tmpfs=True),
        HerdDaemon(),
        HerdSweepLpt(),
        Python4(),
        Python4Records(),
        Python4Records(on_tmpfs=True),
        Xargs(),
    ]
    makers = {
        "simple-gpu-scheduler": lambda p: [SimpleGpuScheduler(p)],
        "task-spooler": lambda p: [TaskSpooler(p)],
        "parallel": lambda p: [Parallel(p)],
        "ray": lambda p: [Ray(p), Ray(p, mode="default")],
        "gpusched": lambda p: [Gpusched(p)],
        "runqd": lambda p: [Gflow(p)],
    }
    for name, make in makers.items():
        if name in peers and peers[name].ok:
            tools += make(peers[name])
    return [t for t in tools if only is None or t.name in only]


def compile_gpuherd() -> None:
    """Cache gpuherd's bytecode, as installing its wheel does (pip compiles every module; the
    peers' venvs have theirs). The editable install here has none, and with
    PYTHONDONTWRITEBYTECODE set (this sandbox sets it) every CLI call would compile the whole
    package again: start-up figures would measure the compiler, not gpuherd."""
    import gpuherd

    compileall.compile_dir(Path(gpuherd.__file__).parent, quiet=1)


def use_own_venv(log: list[str]) -> None:
    """Run gpuherd (and the Python floor) from a venv of their own, as the peers run from
    theirs; without one (no PyPI), from this interpreter, and say so."""
    python, why = gpuherd_venv(log)
    if python is None:
        log.append(f"{why}: gpuherd runs from {sys.executable} instead")
    else:
        use_python(python)


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="gpuherd only, small sizes (CI smoke)")
    ap.add_argument(
        "--small",
        action="store_true",
        help="every tool at --quick sizes, figures printed, RESULTS.md untouched",
    )
    ap.add_argument("--reps", type=int, default=3, help="repetitions of W1-W3 (default 3)")
    ap.add_argument("--workloads", default=",".join(ALL), help="e.g. W1,W2")
    ap.add_argument("--tools", help="only these tool names, e.g. gpuherd-run,xargs")
    ap.add_argument(
        "--merge",
        action="store_true",
        help="keep the last full run's figures, replacing only those measured now",
    )
    ap.add_argument(
        "--report-only", action="store_true", help="rewrite RESULTS.md from the last run"
    )
    return ap.parse_args()


def main() -> int:
    args = parse_args()
    SCRATCH.mkdir(parents=True, exist_ok=True)
    small = args.quick or args.small
    if args.merge and not small and not (SCRATCH / "results.json").exists():
        # Without the full run's figures a merge would write a RESULTS.md of this run alone.
        print(
            f"--merge needs the last full run's {SCRATCH / 'results.json'} (this machine has "
            "none): run without --merge to measure everything",
            file=sys.stderr,
        )
        return 2
    # Each run works in a folder of its own: a --quick run (the test suite) must never touch
    # the daemons or records of a full run going on at the same time.
    work_dir = Path(tempfile.mkdtemp(prefix="quick-" if small else "full-", dir=SCRATCH))
    set_work(work_dir)
    saved = (work_dir if small else SCRATCH) / "results.json"
    started = time.time()
    compile_gpuherd()
    install_log: list[str] = []
    if args.quick:
        peers: dict[str, Peer] = {}
    else:
        print("installing the peers into", SCRATCH, flush=True)
        peers = install_all(install_log)
        use_own_venv(install_log)
        for line in install_log:
            print("  " + line)
    if args.report_only:
        res = report.load(saved)
    else:
        res = run(args, peers, small)
        res.extra["minutes"] = round((time.time() - started) / 60, 1)
        res.extra["reps"] = 1 if small else args.reps
        res.extra["when"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        if args.merge and not small and saved.exists():
            res = merged(report.load(saved), res)
        report.save(res, saved)
    bad = [f for f in res.failures() if " gpuherd" in f]
    if small:
        show(res)
    else:
        write_results(res, peers, args, time.time() - started)
    for f in bad:
        print("CORRECTNESS FAILURE:", f, file=sys.stderr)
    tidy(work_dir, keep_all=bool(bad), keep_records=not small and not args.report_only)
    return 1 if bad else 0


def run(args: argparse.Namespace, peers: dict[str, Peer], small: bool) -> Results:
    res = Results(log=lambda line: print(line, flush=True))
    if args.quick:
        tools: list[Tool] = [HerdRun(), HerdDaemon(), HerdSweepLpt()]
    else:
        tools = make_tools(peers, set(args.tools.split(",")) if args.tools else None)
    sizes = Sizes(w1=100, w2=8, w3=40, w2_scale=0.1) if small else Sizes()
    workloads = tuple(w.strip().upper() for w in args.workloads.split(","))
    measure(res, tools, sizes, workloads, 1 if small else args.reps, small)
    return res


def merged(old: Results, new: Results) -> Results:
    """The last run's figures with this run's in their place. W4-W8 measure each quantity
    once per run, so their tables are replaced whole (rows may have been renamed)."""
    fresh = {key for key, _ in new.figures if key[:2] in ("W4", "W5", "W6", "W7", "W8")}
    old.figures = {k: f for k, f in old.figures.items() if k[0] not in fresh}
    old.figures.update(new.figures)
    old.labels.update(new.labels)
    load = [*old.extra.get("load", []), *new.extra.get("load", [])]  # type: ignore[misc]
    what = sorted({key[:2] for key, _ in new.figures})
    rows = sorted({row for key, row in new.figures if key[:2] in ("W1", "W2", "W3")})
    redone = ", ".join(what) + (f" ({', '.join(rows)})" if rows else "")
    updated = [*old.extra.get("updated", []), f"{redone} at {new.extra.get('when')}"]  # type: ignore[misc]
    for key in ("when", "minutes", "reps"):  # the full run's, not this partial one's
        new.extra.pop(key, None)
    old.extra.update(new.extra)
    old.extra["load"] = load
    old.extra["updated"] = updated
    return old


def show(res: Results) -> None:
    print("figures:")
    for (key, row), fig in res.figures.items():
        print(f"  {key:12} {row:40} {report.fmt(fig.median)}")
    for target, value, verdict in report.targets(res):
        print(f"  target {target}: {value} -> {verdict.strip('*')}")


def tidy(work_dir: Path, keep_all: bool, keep_records: bool) -> None:
    """Drop the run's folder; keep it whole after a gpuherd failure, and after a full run
    keep the records of failed peer runs and the tools' logs."""
    if keep_all:
        print(f"records and logs kept in {work_dir}", file=sys.stderr)
    elif not keep_records:
        shutil.rmtree(work_dir, ignore_errors=True)
    else:
        for path in work_dir.iterdir():
            if path.is_dir() and path.name not in ("runs", "logs"):
                shutil.rmtree(path, ignore_errors=True)


def measure(
    res: Results,
    tools: list[Tool],
    sizes: Sizes,
    workloads: tuple[str, ...],
    reps: int,
    quick: bool,
) -> None:
    note_load(res)
    w123 = tuple(w for w in ("W1", "W2", "W3") if w in workloads)
    if w123:
        run_all(Bench(sizes, res), tools, reps, w123)
    peers = [t for t in tools if isinstance(t, TaskSpooler | Ray) and t.name != "ray-default"]
    herd_idle = None
    try:
        if "W4" in workloads or "W8" in workloads:
            print("W4: idle", flush=True)
            herd_idle = single.w4_idle(
                res, 1.0 if quick else 60.0, peers if "W4" in workloads else []
            )
        if "W8" in workloads and herd_idle is not None:
            single.w8_startup(
                res, herd_idle, 1 if quick else 10, [p for p in peers if isinstance(p, TaskSpooler)]
            )
    finally:
        single.stop(herd_idle, *[p for p in peers if isinstance(p, TaskSpooler)])
    if "W5" in workloads:
        print("W5: submit", flush=True)
        single.w5_submit(res, 500 if quick else 10_000, 3 if quick else 500, peers)
    if "W6" in workloads or "W7" in workloads:
        print("W6/W7: a big database", flush=True)
        big = single.w6_big(res, 1_000 if quick else 100_000, 1 if quick else 5)
        try:
            single.w7_daemon_tick(res, big, 16 if quick else 40)
        finally:
            big.teardown()
        single.w7_plan(res, 10_000 if quick else 100_000, 3 if quick else 20)
        single.w7_pass(res, 2_000 if quick else 100_000, 3 if quick else 20)
    note_load(res)


def write_results(
    res: Results, peers: dict[str, Peer], args: argparse.Namespace, seconds: float
) -> None:
    from harness.notes import footer, header

    text = report.render(res, header(res, peers, args, seconds), footer(res, peers))
    (BENCH / "RESULTS.md").write_text(text)
    print(f"wrote {BENCH / 'RESULTS.md'} ({seconds / 60:.1f} min)")


if __name__ == "__main__":
    sys.exit(main())
