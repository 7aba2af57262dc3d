"""Fake GPUs for machines without one: `--fake-gpus 4`, `2x24GiB,1x80GiB`, or a JSON state file.

The file form lets a test (or `gpuherd fake ...`) change the GPUs while the daemon runs:

    {"gpus": [{"name": "Fake A100", "memory_total": "80GiB", "memory_used": "0GiB",
               "utilization": 0, "processes": [{"pid": 4242, "memory": "20GiB"}]},
              {"lost": true}]}

A GPU's index is its position in the list, so marking one `"lost": true` makes it vanish
from readings without renumbering the others. Every key is optional; `null` for
memory_total, memory_used or utilization means "not available", as on some real GPUs.
`"node": "n1"` (and `"host": "gpu-box-1"`, how to show it) pretends the GPU is on another
machine, as on a Ray cluster: placement then gives a job GPUs of one node only (the jobs
still run here).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from gpuherd.core.units import format_size, parse_size, plural
from gpuherd.gpus.base import GpuProcess, GpuReading, JobOnGpus, ProbeError
from gpuherd.json_parse import parse_json

DEFAULT_FAKE_MEMORY = 24 * 2**30
DEFAULT_FAKE_NAME = "Fake GPU"
_EXAMPLE = '{"gpus": [{"memory_total": "24GiB"}]}'
USAGE_FILE = "fake_gpu_usage.json"
_NO_LINKS: dict[int, int] = {}

_GPU_KEYS = frozenset(
    {
        "name",
        "uuid",
        "memory_total",
        "memory_used",
        "utilization",
        "processes",
        "lost",
        "links",
        "node",
        "host",
    }
)
_PROCESS_KEYS = frozenset({"pid", "memory"})
_T = TypeVar("_T")


@dataclass(frozen=True)
class FakeGpu:
    name: str = DEFAULT_FAKE_NAME
    memory_total: int = DEFAULT_FAKE_MEMORY


def fake_uuid(index: int) -> str:
    """A stable UUID per index, shaped like NVML's so code that records UUIDs sees one."""
    return f"GPU-fake-{index:08x}-0000-0000-0000-000000000000"


class _Invalid(ValueError):
    """A problem at one place in the state file; becomes a ProbeError naming the file."""


class FakeProbe:
    def __init__(self, source: Sequence[FakeGpu] | Path, origin: str | None = None) -> None:
        """`origin`: where the fake GPUs were asked for, if not by --fake-gpus (the
        environment variable), said after them: `fake: 4 GPUs from GPUHERD_FAKE_GPUS`."""
        self._path = source if isinstance(source, Path) else None
        self._from = f" from {origin}" if origin else ""
        self._stamp: tuple[int, int, int] | None = None
        self._readings: list[GpuReading] = []
        self._configured = 0
        self._jobs: list[JobOnGpus] = []
        if isinstance(source, Path):
            self.read()  # fail at startup on a bad file, not at the first placement
        else:
            self._readings = [
                _reading(i, gpu.name, gpu.memory_total) for i, gpu in enumerate(source)
            ]
            self._configured = len(source)
        # Lost GPUs count too: they are configured, merely absent from this reading.
        self.indices = tuple(range(self._configured))

    def observe_jobs(self, jobs: Sequence[JobOnGpus]) -> None:
        """The jobs running now; each may report the memory it "uses" on its GPUs by writing
        {"memory": "10GiB"} to $GPUHERD_JOB_DIR/fake_gpu_usage.json."""
        self._jobs = list(jobs)

    def read(self) -> list[GpuReading]:
        if self._path is not None:
            self._refresh(self._path)
        if not self._jobs:
            return list(self._readings)
        usage: dict[int, list[GpuProcess]] = {}
        reports: dict[int, list[tuple[Path, int]]] = {}  # (each file, said if too much)
        for job in self._jobs:
            path = Path(job.job_dir) / USAGE_FILE
            memory = _job_usage(path)
            if memory is not None:
                for index in job.gpus:
                    usage.setdefault(index, []).append(GpuProcess(job.pid, memory))
                    reports.setdefault(index, []).append((path, memory))
        readings = [_with_usage(r, usage.get(r.index, [])) for r in self._readings]
        for reading in readings:
            _check_usage(reading, reports.get(reading.index, []))
        return readings

    def describe(self) -> str:
        if self._path is not None:
            return f"fake: state file {self._path}{self._from}"
        return f"fake: {plural(len(self._readings), 'GPU')}{self._from}"

    def _refresh(self, path: Path) -> None:
        try:
            with path.open("rb") as f:
                # fstat of the open file, so the stamp and the text come from one version;
                # the inode catches an atomic rename that kept mtime and size.
                st = os.fstat(f.fileno())
                stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
                if stamp == self._stamp:
                    return
                raw = f.read()
        except OSError as exc:
            raise ProbeError(f"reading fake GPU state file {path}: {exc.strerror}") from exc
        if not raw.strip():  # `touch gpus.json`; JSON's words were "stops mid-value at line 1"
            raise ProbeError(f"fake GPU state file {path} is empty: write in it {_EXAMPLE}")
        try:
            readings, configured = _parse_state(parse_json(raw))
        except ValueError as exc:  # NotJson too: where the file stops being JSON, in words
            raise ProbeError(f"fake GPU state file {path}: {exc}") from exc
        self._readings, self._configured, self._stamp = readings, configured, stamp


def _job_usage(path: Path) -> int | None:
    try:
        data = json.loads(path.read_text())
        return _size(data["memory"]) if isinstance(data, dict) else None
    except (OSError, ValueError, KeyError):
        return None  # not written (yet), or half-written: no usage to report this time


def _with_usage(reading: GpuReading, jobs: list[GpuProcess]) -> GpuReading:
    if not jobs:
        return reading
    used = (reading.memory_used or 0) + sum(p.memory or 0 for p in jobs)
    return replace(reading, memory_used=used, processes=(*reading.processes, *jobs))


def _check_usage(reading: GpuReading, reports: Sequence[tuple[Path, int]]) -> None:
    """No GPU uses more memory than it has, as the state file's check says (`_parse_gpu`): a
    job's fake_gpu_usage.json that makes it so (a typo'd unit, `100GiB` on a 24 GiB GPU) fails
    the probe until it is fixed or the job ends, naming the file. It was added without a
    word, `100.0 GiB / 24.0 GiB`, and placement counted memory no GPU has."""
    used, total = reading.memory_used, reading.memory_total
    if not reports or used is None or total is None or used <= total:
        return
    said = "; ".join(f"{path} says {format_size(memory)}" for path, memory in reports)
    if besides := used - sum(memory for _, memory in reports):  # (memory_used, processes)
        said += f"; {format_size(besides)} in use besides"
    raise ProbeError(
        f"fake GPU {reading.index}: {format_size(used)} in use is more than its memory, "
        f"{format_size(total)} ({said}): write less in {'it' if len(reports) == 1 else 'them'}"
    )


def _reading(
    index: int,
    name: str,
    memory_total: int | None,
    memory_used: int | None = 0,
    utilization: int | None = 0,
    processes: tuple[GpuProcess, ...] = (),
    uuid: str | None = None,
    links: Mapping[int, int] | None = None,
    node: str | None = None,
    host: str | None = None,
) -> GpuReading:
    return GpuReading(
        index=index,
        uuid=uuid or fake_uuid(index),
        name=name,
        memory_total=memory_total,
        memory_used=memory_used,
        utilization=utilization,
        processes=processes,
        links=links or {},
        node=node,
        host=host,
    )


def _links(value: object) -> dict[int, int]:
    """{"1": 3, "2": 1}: link quality to other GPUs by index (3 = NVLink)."""
    if not isinstance(value, dict):
        raise ValueError(f'expected an object like {{"1": 3}}, got {value!r}')
    for key, quality in value.items():
        # int() took 3.5, "3" and true, and nothing capped the quality: a 4 ("NVSwitch")
        # ranked above NVLink in silence.
        if not (key.isascii() and key.isdigit()):
            raise ValueError(f'expected GPU indices as keys, like {{"1": 3}}, got {key!r}')
        if type(quality) is not int or not 0 <= quality <= 3:
            raise ValueError(
                f"to GPU {key}: expected a link quality from 0 to 3 (3 NVLink, 2 same PCIe "
                f"switch, 1 same host bridge, 0 across CPUs), got {quality!r}"
            )
    return {int(k): v for k, v in value.items()}


def _parse_state(data: object) -> tuple[list[GpuReading], int]:
    if isinstance(data, dict):  # a typo ("gpu") is named as such, before "gpus" is missed
        _check_keys(data, frozenset({"gpus"}), "the top level")
    if not isinstance(data, dict) or "gpus" not in data:
        raise _Invalid(f"expected an object like {_EXAMPLE}")
    if not isinstance(data["gpus"], list):
        # (It said "expected an object like {"gpus": ...}" of an object that was one.)
        raise _Invalid(
            f'gpus: expected a list, like [{{"memory_total": "24GiB"}}], got {data["gpus"]!r}'
        )
    entries: list[object] = data["gpus"]
    parsed = [_parse_gpu(i, entry) for i, entry in enumerate(entries)]
    readings = [r for r in parsed if r is not None]
    _check_across(readings, len(entries))
    return readings, len(entries)


def _check_across(readings: Sequence[GpuReading], count: int) -> None:
    """What no single GPU's entry shows wrong: a link to itself or to a GPU the file does
    not list, or a UUID two GPUs share (a copied entry). Taken in silence, they gave a
    topology no machine has, and jobs on either GPU recorded the same UUID."""
    owner: dict[str, int] = {}
    for r in readings:
        where = f"gpus[{r.index}]"
        for other in r.links:
            if other == r.index:
                raise _Invalid(
                    f"{where}.links: to GPU {other}, itself: links join it to other GPUs"
                )
            if other >= count:
                have = "GPU 0 alone" if count == 1 else f"GPUs 0-{count - 1}"
                raise _Invalid(
                    f"{where}.links: to GPU {other}, which the file does not list (it has {have})"
                )
        _check_pairs(r, readings)
        if r.uuid is not None and (first := owner.setdefault(r.uuid, r.index)) != r.index:
            raise _Invalid(
                f"{where}.uuid: {r.uuid!r} is gpus[{first}]'s too: give each GPU its own UUID"
            )


def _check_pairs(reading: GpuReading, readings: Sequence[GpuReading]) -> None:
    """A pair's link given on both of its GPUs, as two qualities: placement took the faster
    in silence, so a typo on one side (NVLink on GPU 0, PCIe on GPU 1) went unseen. Given
    on one GPU alone, it holds for the pair (docs/gpus.md)."""
    for r in readings:
        theirs = r.links.get(reading.index)
        ours = reading.links.get(r.index)
        if r.index > reading.index and theirs is not None and ours is not None and ours != theirs:
            raise _Invalid(
                f"gpus[{reading.index}].links and gpus[{r.index}].links: GPU {reading.index} "
                f"gives its link to GPU {r.index} as {ours}, GPU {r.index} gives it as "
                f"{theirs}: give the pair one quality (or give it on one GPU alone)"
            )


def _parse_gpu(index: int, entry: object) -> GpuReading | None:
    where = f"gpus[{index}]"
    if not isinstance(entry, dict):
        raise _Invalid(f"{where}: expected an object, got {entry!r}")
    _check_keys(entry, _GPU_KEYS, where)
    if _get(entry, "lost", where, _boolean, False):
        return None
    listed: list[object] = _get(entry, "processes", where, _list, [])
    processes = tuple(_parse_process(f"{where}.processes[{i}]", p) for i, p in enumerate(listed))
    used = _get_optional(entry, "memory_used", where, _size, 0)
    if used is not None:  # as NVML counts it: the listed processes' memory is in use too
        used += sum(p.memory or 0 for p in processes)
    total = _get_optional(entry, "memory_total", where, _positive_size, DEFAULT_FAKE_MEMORY)
    if used is not None and total is not None and used > total:
        # No GPU uses more than it has: a typo (a unit) that would make placement nonsense.
        raise _Invalid(
            f"{where}: {format_size(used)} in use (memory_used and processes) is more than "
            f"memory_total, {format_size(total)}"
        )
    return _reading(
        index,
        name=_get(entry, "name", where, _string, DEFAULT_FAKE_NAME),
        uuid=_get(entry, "uuid", where, _string, fake_uuid(index)),
        memory_total=total,
        memory_used=used,
        utilization=_get_optional(entry, "utilization", where, _percent, 0),
        processes=processes,
        links=_get(entry, "links", where, _links, _NO_LINKS),
        node=_get(entry, "node", where, _string, None),
        host=_get(entry, "host", where, _string, None),
    )


def _parse_process(where: str, entry: object) -> GpuProcess:
    if not isinstance(entry, dict) or "pid" not in entry:
        raise _Invalid(f'{where}: expected an object like {{"pid": 4242, "memory": "2GiB"}}')
    _check_keys(entry, _PROCESS_KEYS, where)
    return GpuProcess(
        pid=_get(entry, "pid", where, _pid, 0),
        memory=_get_optional(entry, "memory", where, _size, None),
    )


def _check_keys(entry: Mapping[str, object], allowed: frozenset[str], where: str) -> None:
    # Unknown keys are typos ("memory_usd") that would otherwise be silently ignored.
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise _Invalid(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(allowed))})")


def _get(
    entry: Mapping[str, object], key: str, where: str, convert: Callable[[object], _T], default: _T
) -> _T:
    if key not in entry:
        return default
    try:
        return convert(entry[key])
    except ValueError as exc:
        raise _Invalid(f"{where}.{key}: {exc}") from exc


def _get_optional(
    entry: Mapping[str, object],
    key: str,
    where: str,
    convert: Callable[[object], _T],
    default: _T | None,
) -> _T | None:
    """Like `_get`, but an explicit null means "not available on this GPU"."""
    if entry.get(key, default) is None:
        return None
    return _get(entry, key, where, convert, default)


def _size(value: object) -> int:
    if isinstance(value, str):
        return parse_size(value, allow_zero=True)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ValueError(f'expected bytes or a size like "20GiB", got {value!r}')


def _positive_size(value: object) -> int:
    size = _size(value)
    if size == 0:
        raise ValueError(f"must be greater than zero, got {value!r}")
    return size


def _percent(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100:
        return value
    raise ValueError(f"expected a percentage from 0 to 100, got {value!r}")


def _pid(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise ValueError(f"expected a process id (a positive integer), got {value!r}")


def _string(value: object) -> str:
    if isinstance(value, str) and value:
        return value
    raise ValueError(f"expected a non-empty string, got {value!r}")


def _boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError(f"expected true or false, got {value!r}")


def _list(value: object) -> list[object]:
    if isinstance(value, list):
        return value
    raise ValueError(f"expected a list, got {value!r}")
