"""`gpuherd gpus`'s table (plain, `--watch` too): every header and value whole, also on an
80-column terminal (a tmux pane, an ssh window).

With its foreign processes listed and NVIDIA's GPU names, the table takes about 100
columns. Where that does not fit, rather than cut anything, it gives up, in turn, until it
does:

1. the FOREIGN column: a GPU's foreign processes go on lines of their own under its row;
2. the NAME column: the names go under the table, one line per name (`GPUs 0-3: ...`);
3. the memory bar: the numbers stay.

Under the table, whatever the width, GPUs reserved for a run that no job's attempt is, or
for a job that waited past reserve-after, say for which job and why, and GPUs running more
jobs than their slots (`3/1 over`) what that means, wrapped at their words.

Narrower still (below about 65 columns) NODE and JOBS are cut, with ….
"""

from __future__ import annotations

from typing import Any

from gpuherd.cli import plain
from gpuherd.core.gpu_foreign import foreign_processes, not_listed
from gpuherd.core.gpu_reserved import reserved
from gpuherd.core.gpu_slots import slot_use
from gpuherd.core.idspec import format_ids
from gpuherd.core.units import format_size

GPU_COLUMNS = ("GPU", "NODE", "NAME", "STATE", "SLOTS", "MEMORY", "HELD", "UTIL", "JOBS", "FOREIGN")
GIVEN_UP = ("FOREIGN", "NAME", "bar")
"""What a table too wide for the terminal gives up, in this order (the module's docstring)."""
BAR_WIDTH = 10


def gpu_lines(answer: dict[str, Any], term: plain.Terminal) -> list[str]:
    """The GPU table: memory with a bar, what gpuherd's jobs hold of it, utilisation, the
    jobs and foreign processes; then the GPUs not seen, and the probe."""
    gpus = answer["gpus"]
    nodes = any(gpu.get("node") for gpu in gpus)  # a cluster: say where each GPU is
    for count in range(len(GIVEN_UP) + 1):
        given_up = GIVEN_UP[:count]
        columns = [c for c in GPU_COLUMNS if c not in given_up and (nodes or c != "NODE")]
        cells = [_cells(gpu, bar="bar" not in given_up) for gpu in gpus]
        rows: list[list[plain.Cell]] = [[row[c] for c in columns] for row in cells]
        if plain.table_width(columns, rows) <= term.width:
            break
    # Narrower even with all of GIVEN_UP given up: only then is anything cut.
    shrink = [columns.index(c) for c in ("NODE", "JOBS") if c in columns]
    table = plain.table(term, columns, rows, shrink=shrink)
    lines = table[:1]
    # A GPU's foreign processes start where its row's second column does.
    indent = plain.table_width(columns[:1], [row[:1] for row in rows]) + len(plain.GAP)
    for gpu, line in zip(gpus, table[1:], strict=True):
        lines.append(line)
        if "FOREIGN" in given_up and _foreign(gpu):
            lines += _under(" " * indent + "foreign: ", _foreign(gpu), term.width)
    if "NAME" in given_up:
        lines += [plain.cut(line, term.width) for line in _names(gpus)]
    lines += _reserved(gpus, term.width)
    lines += _over(gpus, term.width)
    if answer.get("missing"):
        lines.append(f"configured but not seen by the probe: {_missing(answer)}")
    lines.append(term.style(plain.clean(f"probe: {answer['probe']}"), "dim"))
    return lines


def gpu_table(answer: dict[str, Any], term: plain.Terminal | None = None) -> None:
    term = term or plain.Terminal()
    term.write(gpu_lines(answer, term))


def _cells(gpu: dict[str, Any], bar: bool) -> dict[str, str]:
    total, used = gpu.get("memory_total"), gpu.get("memory_used")
    memory = "-"
    if total:
        memory = f"{format_size(used or 0)} / {format_size(total)}"
        memory = f"{_bar(used or 0, total)} {memory}" if bar else memory
    return {
        "GPU": str(gpu["index"]),
        "NODE": gpu.get("host") or gpu.get("node") or "local",
        "NAME": gpu["name"],
        "STATE": _state(gpu),
        "SLOTS": slot_use(gpu).text(),
        "MEMORY": memory,
        "HELD": format_size(gpu["held"]) if gpu.get("held") else "",  # (none from an older daemon)
        "UTIL": "-" if gpu.get("utilization") is None else f"{gpu['utilization']}%",
        "JOBS": format_ids(gpu["jobs"]),
        "FOREIGN": ", ".join(_foreign(gpu)),
    }


def _state(gpu: dict[str, Any]) -> str:
    """`lost, draining`: a lost GPU drained (it takes nothing new once seen again) showed
    `lost` alone, and its `gpus drain` seemed to have done nothing."""
    return (
        f"{gpu['state']}, draining"
        if gpu["state"] == "lost" and gpu.get("draining")
        else gpu["state"]
    )


def _missing(answer: dict[str, Any]) -> str:
    """The configured GPUs not seen, and of them those drained: `0-1 (1 draining)`."""
    said = format_ids(answer["missing"])
    if drained := answer.get("missing_draining"):  # (none from an older daemon)
        said += (
            f" ({format_ids(drained)} draining)" if drained != answer["missing"] else " (draining)"
        )
    return said


def _foreign(gpu: dict[str, Any]) -> list[str]:
    """FOREIGN's parts: each foreign process, then the memory that none of them holds, which
    placement counts as other users' too (`70.0 GiB used by processes not listed (another
    container?)`): else a GPU that looks idle takes no `--mem` job, and nothing says why."""
    unlisted = not_listed(gpu)
    return foreign_processes(gpu) + ([unlisted] if unlisted else [])


def _under(lead: str, parts: list[str], width: int) -> list[str]:
    """`lead` then `parts`, comma-separated, on as many lines as `width` needs: a part is
    never split over two (only cut, with …, when longer than a whole line)."""
    parts = [plain.clean(p) + ("," if i < len(parts) - 1 else "") for i, p in enumerate(parts)]
    room = width - plain.cells(lead)
    lines: list[list[str]] = [[]]
    for part in parts:
        if lines[-1] and plain.cells(" ".join([*lines[-1], part])) > room:
            lines.append([])
        lines[-1].append(part)
    pad = " " * plain.cells(lead)
    return [plain.cut((pad if i else lead) + " ".join(p), width) for i, p in enumerate(lines)]


def _reserved(gpus: list[dict[str, Any]], width: int) -> list[str]:
    """For which job, and why, GPUs are kept for a run that no job's attempt is (a restored
    herd.db: a job held for its run), one sentence per run, wrapped at its words: `GPU 0 is
    reserved for job 2, held: attempt 1 runs unwatched (pid 3621)`; JOBS lists the job. The
    same for a job that waited past reserve-after (service_system.py), not on them yet."""
    lines = []
    for run in reserved(gpus):
        said = f"{run.gpus_are} reserved for job {run.job}, {plain.clean(run.reason)}"
        wrapped = plain.wrap(said, width, indent="  ", break_long_words=False)
        lines += [plain.cut(line, width) for line in wrapped]  # (cut: a word over a line)
    return lines


def _over(gpus: list[dict[str, Any]], width: int) -> list[str]:
    """What SLOTS' `3/1 over` means, a line per such GPU, wrapped at its words: `GPU 0 is
    over its slots: 3 jobs on 1 slot, so nothing new starts there until they all end` (its
    slots lowered below the jobs running there; it said `3 sharing`, as of --mem jobs)."""
    lines = []
    for gpu in gpus:
        if (use := slot_use(gpu)).over:
            said = f"GPU {gpu['index']} is over its slots: {use.over_note()}"
            lines += plain.wrap(said, width, indent="  ", break_long_words=False)
    return lines


def _names(gpus: list[dict[str, Any]]) -> list[str]:
    """The GPUs' names, one line per name: `GPUs 0-3: NVIDIA A100-SXM4-80GB`."""
    indices: dict[str, list[int]] = {}
    for gpu in gpus:
        indices.setdefault(plain.clean(gpu["name"]), []).append(gpu["index"])
    return [
        f"{'GPU' if len(ids) == 1 else 'GPUs'} {format_ids(ids)}: {name}"
        for name, ids in indices.items()
    ]


def _bar(used: int, total: int) -> str:
    filled = min(BAR_WIDTH, round(BAR_WIDTH * used / total)) if total else 0
    return "█" * filled + "░" * (BAR_WIDTH - filled)
