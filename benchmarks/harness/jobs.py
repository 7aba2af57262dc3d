"""The jobs every tool runs, and the check that each ran exactly once on a slot of its own.

Jobs record themselves; the tools' own logs are never read.

* W1 (throughput): trivial `sh` one-liners that append `S tool id $CUDA_VISIBLE_DEVICES` and then
  `E tool id $CUDA_VISIBLE_DEVICES` to the run's record file with shell builtins only (as cheap
  as `true` plus two appends). Appends with O_APPEND land in one global order, so replaying
  the file shows which jobs were running at the same time without any clock.
* W2, W3 (timing): `bash -c` one-liners that take `$EPOCHREALTIME` (a builtin, no fork) when
  they start and just before they exit and append one line `tool id $CUDA_VISIBLE_DEVICES
  start end`.

A job with an empty CUDA_VISIBLE_DEVICES (xargs and the 4-thread floor hand out slots, not
GPUs, and the Debian task-spooler is a CPU-only build) is checked against the slot count only.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

SLOTS = 4


@dataclass(frozen=True)
class Work:
    """One batch of jobs for one tool: the lines to run and where they record themselves."""

    workload: str
    tool: str
    lines: tuple[str, ...]
    record: Path

    @property
    def n(self) -> int:
        return len(self.lines)

    @property
    def marker(self) -> str:
        """What each finished job's last record line starts with (to count finished jobs)."""
        return "E " if self.workload == "W1" else ""


def trivial_lines(tool: str, n: int, record: Path) -> tuple[str, ...]:
    return tuple(
        f'echo "S {tool} {i} $CUDA_VISIBLE_DEVICES" >> {record}; '
        f'echo "E {tool} {i} $CUDA_VISIBLE_DEVICES" >> {record}'
        for i in range(n)
    )


def stamped_lines(tool: str, seconds: list[float], record: Path) -> tuple[str, ...]:
    return tuple(
        "bash -c 's=$EPOCHREALTIME; "
        + (f"sleep {s:.3f}; " if s > 0 else "")
        + f'echo "{tool} {i} $CUDA_VISIBLE_DEVICES $s $EPOCHREALTIME" >> {record}\''
        for i, s in enumerate(seconds)
    )


def w2_lengths(n: int = 40, seed: int = 9) -> list[float]:
    rng = random.Random(seed)
    return [round(rng.uniform(0.2, 2.0), 2) for _ in range(n)]


def w3_lengths(n: int = 200, seed: int = 3) -> list[float]:
    """Short jobs of varied length, so the four GPUs free up at different moments."""
    rng = random.Random(seed)
    return [round(rng.uniform(0.02, 0.08), 3) for _ in range(n)]


def lower_bound(lengths: list[float], slots: int = SLOTS) -> float:
    return max(sum(lengths) / slots, max(lengths))


def in_order_makespan(lengths: list[float], slots: int = SLOTS) -> float:
    """Makespan of a zero-overhead scheduler that starts jobs in submission order."""
    free = [0.0] * slots
    for length in lengths:
        i = min(range(slots), key=free.__getitem__)
        free[i] += length
    return max(free)


# ---- reading and checking the records -------------------------------------------------------


@dataclass(frozen=True)
class Stamp:
    id: int
    gpu: str
    start: float
    end: float


def read_stamps(record: Path) -> list[Stamp]:
    out = []
    text = record.read_text() if record.exists() else ""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 5:
            out.append(Stamp(int(parts[1]), parts[2], float(parts[3]), float(parts[4])))
        elif len(parts) == 4:  # empty CUDA_VISIBLE_DEVICES
            out.append(Stamp(int(parts[1]), "", float(parts[2]), float(parts[3])))
    return out


def _once(ids: list[int], n: int) -> list[str]:
    counts = Counter(ids)
    missing = [i for i in range(n) if counts[i] == 0]
    twice = sorted(i for i, c in counts.items() if c > 1)
    problems = []
    if missing:
        problems.append(f"{len(missing)} of {n} jobs never ran (e.g. {missing[:3]})")
    if twice:
        problems.append(f"{len(twice)} jobs ran more than once (e.g. {twice[:3]})")
    return problems


def _gpu_problem(gpu: str) -> str | None:
    if gpu == "":
        return None
    if gpu not in {"0", "1", "2", "3"}:
        return f"a job got CUDA_VISIBLE_DEVICES={gpu!r}, not one of the GPUs 0-3"
    return None


def check_events(record: Path, n: int) -> list[str]:
    """W1: replay the S/E lines in file order; a GPU may hold one job, the machine four."""
    text = record.read_text() if record.exists() else ""
    starts: list[int] = []
    running: dict[int, str] = {}
    per_gpu: Counter[str] = Counter()
    problems: list[str] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        kind, job, gpu = parts[0], int(parts[2]), parts[3] if len(parts) > 3 else ""
        if kind == "S":
            starts.append(job)
            if (why := _gpu_problem(gpu)) and why not in problems:
                problems.append(why)
            if gpu and per_gpu[gpu] >= 1:
                problems.append(f"job {job} started on GPU {gpu} while job(s) ran there")
            if len(running) >= SLOTS:
                problems.append(f"job {job} started while {len(running)} jobs ran on 4 slots")
            running[job] = gpu
            per_gpu[gpu] += 1
        elif kind == "E" and job in running:
            per_gpu[running.pop(job)] -= 1
    return _once(starts, n) + _first(problems)


def check_stamps(record: Path, n: int) -> list[str]:
    """W2, W3: no two jobs whose [start, end] overlap shared a GPU; at most 4 ran at once."""
    stamps = read_stamps(record)
    problems = _once([s.id for s in stamps], n)
    by_gpu: dict[str, list[Stamp]] = defaultdict(list)
    for s in stamps:
        if (why := _gpu_problem(s.gpu)) and why not in problems:
            problems.append(why)
        by_gpu[s.gpu].append(s)
    clashes = []
    for gpu, runs in by_gpu.items():
        if not gpu:
            continue
        runs.sort(key=lambda s: s.start)
        clashes += [
            f"jobs {a.id} and {b.id} overlapped on GPU {gpu}"
            for a, b in itertools.pairwise(runs)
            if b.start < a.end
        ]
    events = sorted([(s.start, 1) for s in stamps] + [(s.end, -1) for s in stamps])
    level = peak = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    if peak > SLOTS:
        clashes.append(f"{peak} jobs ran at once on 4 slots")
    return problems + _first(clashes)


def _first(problems: list[str], keep: int = 3) -> list[str]:
    if len(problems) <= keep:
        return problems
    return [*problems[:keep], f"... and {len(problems) - keep} more"]


def handoff_gaps(stamps: list[Stamp]) -> list[float]:
    """Exit of a job -> start of the next on the freed GPU, in ms.

    Per GPU when the tool names GPUs; otherwise each start is paired with the earliest
    earlier end not yet paired (slots as a pool). The first four starts have no predecessor.
    """
    if stamps and all(s.gpu for s in stamps):
        gaps = []
        by_gpu: dict[str, list[Stamp]] = defaultdict(list)
        for s in stamps:
            by_gpu[s.gpu].append(s)
        for runs in by_gpu.values():
            runs.sort(key=lambda s: s.start)
            gaps += [(b.start - a.end) * 1000 for a, b in itertools.pairwise(runs)]
        return gaps
    ends = sorted(s.end for s in stamps)
    starts = sorted(s.start for s in stamps)[SLOTS:]
    gaps, j = [], 0
    for start in starts:
        if j < len(ends) and ends[j] <= start:
            gaps.append((start - ends[j]) * 1000)
            j += 1
    return gaps
