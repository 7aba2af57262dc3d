"""RESULTS.md: one table per workload (median, min-max, ratio to gpuherd), targets, findings."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from harness.common import Figure
from harness.workloads import Results

# (key, title, unit, better, reference row, what the number is)
TABLES = [
    (
        "W1",
        "W1: 2,000 trivial jobs on 4 GPU slots",
        "jobs/s",
        "higher",
        "gpuherd-run",
        "Jobs per second from handing the tool the list to the last job's end.",
    ),
    (
        "W2",
        "W2: 40 sleep jobs of seeded lengths 0.2-2 s on 4 slots",
        "utilisation",
        "higher",
        "gpuherd-run",
        "max(sum/4, longest) / makespan (start of submission to the last job's end "
        "as the job recorded it).",
    ),
    (
        "W3-p50",
        "W3: exit of a job -> start of the next on the freed GPU, p50",
        "ms",
        "lower",
        "gpuherd-daemon",
        "Median gap between a job's own end stamp and the next job's own start "
        "stamp on the same GPU (200 jobs of 20-80 ms; includes the next job's bash start-up).",
    ),
    ("W3-p99", "W3: the same gaps, p99", "ms", "lower", "gpuherd-daemon", ""),
    (
        "W2-gap",
        "W2's hand-offs: exit of a job -> start of the next on the freed GPU, p50",
        "ms",
        "lower",
        "gpuherd-daemon",
        "W3's measure in W2's runs, where a slot's jobs last 0.2-2 s: each hand-off comes after "
        "a quiet moment (cold caches, idle cores to wake), and the slowest slot's ~10 "
        "hand-offs are most of what separates a tool's W2 figure from the in-order ceiling. "
        "No target; reported to read W2 by.",
    ),
    (
        "W4-cpu",
        "W4: idle for 60 s - CPU",
        "CPU s per minute",
        "lower",
        "herd-idle",
        "gpuherd with 8 fake GPUs; the peers idle beside it in the same minute.",
    ),
    ("W4-rss", "W4: idle - resident memory", "MB", "lower", "herd-idle", ""),
    (
        "W5-batch",
        "W5: submit 10,000 jobs in one call",
        "s",
        "lower",
        "herd-submit",
        "gpuherd: one POST /jobs through gpuherd.client.Client (queue paused, each job carrying "
        "the environment as the CLI sends it), three batches in a row into the same daemon.",
    ),
    ("W5-rss", "W5: daemon memory with 10,000 queued", "MB", "lower", "herd-submit", ""),
    (
        "W5-cli",
        "W5: one CLI call per job (500 calls), median",
        "ms per call",
        "lower",
        "herd-submit",
        "",
    ),
    ("W5-cli-p99", "W5: one CLI call per job, p99", "ms per call", "lower", "herd-submit", ""),
    (
        "W6",
        "W6: CLI with 100,000 jobs in the database",
        "ms",
        "lower",
        None,
        "Wall time of the whole command (Python start-up included), queue paused.",
    ),
    (
        "W7-plan",
        "W7: one placement pass, 100,000 queued, 8 GPUs",
        "ms",
        "lower",
        None,
        "gpuherd.core.placement.plan called directly on Job objects.",
    ),
    (
        "W7-pass",
        "W7: the engine's placement pass over herd.db, 100,000 queued, 8 GPUs",
        "ms",
        "lower",
        None,
        "What the engine reads of the queue (SQLite) and places, nothing recorded; the 4-GPU "
        "jobs cannot start (3 GPUs free), and past reserve-after the first one reserves GPUs.",
    ),
    (
        "W7-tick-p50",
        "W7: engine tick through the daemon (hand-off with the queue behind), p50",
        "ms",
        "lower",
        None,
        "40 recorded jobs at priority 10 ahead of the 100,000 queued; gap "
        "from a job's end to the next start on its GPU, as in W3.",
    ),
    ("W7-tick-p99", "W7: the same, p99", "ms", "lower", None, ""),
    ("W8", "W8: CLI start-up", "ms", "lower", "gpuherd --help", "Process wall time."),
]


def fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.3f}" if abs(v) < 1 else f"{v:.2f}"


def table(res: Results, key: str, unit: str, ref_row: str | None) -> list[str]:
    rows = [(row, fig) for (k, row), fig in res.figures.items() if k == key]
    if not rows:
        return ["(not measured in this run)"]
    ref = res.figures.get((key, ref_row)) if ref_row else None
    ref_med = ref.median if ref else None
    head = f"| tool | {unit} (median) | min - max | runs |"
    head += f" ÷ {res.label(key, ref_row or '')} |" if ref_med else ""
    checked = key in ("W1", "W2", "W3-p50", "W3-p99", "W7-tick-p50", "W7-tick-p99")
    head += " correctness |" if checked else ""
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for row, fig in rows:
        lo_hi = f"{fmt(min(fig.values))} - {fmt(max(fig.values))}" if fig.values else "-"
        line = f"| {res.label(key, row)} | {fmt(fig.median)} | {lo_hi} | {len(fig.values)} |"
        if ref_med:
            line += f" {fmt(fig.median / ref_med) if fig.median is not None else '-'} |"
        ok = "; ".join(fig.failures) if fig.failures else "ok"
        notes = f" ({'; '.join(fig.notes)})" if fig.notes else ""
        out.append(line + (f" {ok}{notes} |" if checked else ""))
    return out


def med(res: Results, key: str, row: str) -> float | None:
    fig = res.figures.get((key, row))
    return fig.median if fig else None


def _verdict(value: float | None, ok: bool) -> str:
    return "not measured" if value is None else ("**met**" if ok else "**missed**")


def targets(res: Results) -> list[tuple[str, str, str]]:
    """(target, measured, verdict) for each of the issue's targets."""
    out: list[tuple[str, str, str]] = []
    floor = med(res, "W1", "python4")
    for row, goal in (("gpuherd-run", 0.85), ("gpuherd-daemon", 0.6)):
        v = med(res, "W1", row)
        r = v / floor if v and floor else None
        out.append(
            (
                f"W1 {row} ≥ {goal} of the 4-thread floor",
                f"{fmt(r)} ({fmt(v)} jobs/s)",
                _verdict(r, r is not None and r >= goal),
            )
        )
    peers = [
        (f.median, res.label("W1", row))
        for (k, row), f in res.figures.items()
        if k == "W1" and not row.startswith(("gpuherd", "python4", "xargs")) and f.median
    ]
    v = med(res, "W1", "gpuherd-run")
    best, who = max(peers, default=(None, ""))
    out.append(
        (
            "W1 gpuherd run ahead of every peer",
            f"best peer: {who}, {fmt(best)} jobs/s",
            _verdict(v if best else None, bool(v and best and v > best)),
        )
    )
    lpt = ("gpuherd-run-lpt", 0.98), ("gpuherd-sweep-lpt", 0.98)
    for row, goal in (("gpuherd-run", 0.95), ("gpuherd-daemon", 0.95), *lpt):
        v = med(res, "W2", row)
        out.append(
            (
                f"W2 {res.labels.get(row, row)} ≥ {goal}",
                fmt(v),
                _verdict(v, v is not None and v >= goal),
            )
        )
    for row in ("gpuherd-run", "gpuherd-daemon"):
        for key, goal in (("W3-p50", 5.0), ("W3-p99", 20.0)):
            v = med(res, key, row)
            out.append(
                (
                    f"{key} {row} ≤ {goal:g} ms",
                    f"{fmt(v)} ms",
                    _verdict(v, v is not None and v <= goal),
                )
            )
    for key, row, goal, unit in (
        ("W4-cpu", "herd-idle", 0.1, "CPU s/min"),
        ("W4-rss", "herd-idle", 80.0, "MB"),
        ("W5-batch", "herd-submit", 1.0, "s"),
        ("W5-cli", "herd-submit", 100.0, "ms"),
        ("W5-cli-p99", "herd-submit", 100.0, "ms"),
    ):
        v = med(res, key, row)
        out.append(
            (
                f"{key} ≤ {goal:g} {unit}",
                f"{fmt(v)} {unit}",
                _verdict(v, v is not None and v <= goal),
            )
        )
    for (key, row), fig in res.figures.items():
        goal = {"W6": 200.0, "W7-plan": 5.0, "W7-pass": 5.0, "W8": 120.0}.get(key)
        if goal is None or row.startswith(("python3", "tsp")):
            continue
        v = fig.median
        out.append(
            (f"{key} {row} ≤ {goal:g} ms", f"{fmt(v)} ms", _verdict(v, v is not None and v <= goal))
        )
    return out


def save(res: Results, path: Path) -> None:
    data = {
        "figures": [{"key": k, "row": r, **asdict(f)} for (k, r), f in res.figures.items()],
        "labels": res.labels,
        "extra": res.extra,
    }
    path.write_text(json.dumps(data, indent=1))


def load(path: Path) -> Results:
    data = json.loads(path.read_text())
    res = Results(labels=data["labels"], extra=data["extra"])
    for item in data["figures"]:
        res.figures[(item["key"], item["row"])] = Figure(
            item["values"], item["notes"], item["failures"]
        )
    return res


def render(res: Results, header: list[str], footer: list[str]) -> str:
    lines = [*header]
    for key, title, unit, _better, ref, what in TABLES:
        if not any(k == key for k, _ in res.figures):
            continue
        lines += ["", f"### {title}", ""]
        if what:
            lines += [what, ""]
        lines += table(res, key, unit, ref)
    lines += ["", "## Targets (issue 9)", "", "| target | measured | verdict |", "|---|---|---|"]
    lines += [f"| {t} | {m} | {v} |" for t, m, v in targets(res)]
    return "\n".join([*lines, "", *footer]).rstrip() + "\n"
