"""The prose around RESULTS.md's tables: how it was measured, on what, and what was found."""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import psutil

from harness.common import gpuherd_cmd
from harness.install import Peer
from harness.jobs import SLOTS, in_order_makespan, lower_bound, w2_lengths
from harness.workloads import Results

HOW = Path(__file__).with_name("how.md").read_text()


def _versions(peers: dict[str, Peer]) -> str:
    herd = subprocess.run([*gpuherd_cmd(), "--version"], capture_output=True, text=True)
    parts = [f"gpuherd {herd.stdout.strip().split()[-1] if herd.stdout.strip() else '?'}"]
    parts += [f"{p.name} {p.version}" for p in peers.values() if p.ok and p.version]
    return ", ".join(parts)


def _load_line(res: Results) -> str:
    loads = res.extra.get("load") or []
    if not isinstance(loads, list) or not loads:
        return "- Machine load during the run: not recorded."
    return (
        f"- 1-minute load average when a workload started ({len(loads)} readings): "
        f"{min(loads):.1f} to {max(loads):.1f}. The machine has 2 cores: above about 2, other "
        "work (other sessions' test suites) shared it with the benchmark, and single readings "
        "(W4-W8 measure once) may carry that noise."
    )


def header(
    res: Results, peers: dict[str, Peer], args: argparse.Namespace, seconds: float
) -> list[str]:
    lengths = w2_lengths()
    ceiling = lower_bound(lengths) / in_order_makespan(lengths)
    mem = psutil.virtual_memory().total / (1 << 30)
    return [
        "# Benchmark results",
        "",
        "Written by `python benchmarks/run.py` (see README.md beside this file); do not edit by "
        "hand, run it again.",
        "",
        f"- When: {res.extra.get('when', time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()))}"
        f", {res.extra.get('minutes', round(seconds / 60))} minutes, "
        f"{res.extra.get('reps', args.reps)} repetitions of W1-W3.",
        f"- Machine: {os.cpu_count()} cores, {mem:.0f} GiB, no GPU, Linux "
        f"{platform.release()}, Python {sys.version.split()[0]}.",
        f"- Versions: {_versions(peers)}.",
        _load_line(res),
        *[f"- Re-measured since with `--merge`: {u}." for u in res.extra.get("updated", [])],
        f"- W2's jobs (seed 9) give a lower bound of {lower_bound(lengths):.2f} s on {SLOTS} "
        f"slots; a scheduler with zero overhead that starts jobs in submission order reaches "
        f"{ceiling:.3f} of it (the in-order ceiling); longest-first would reach "
        f"{lower_bound(lengths) / in_order_makespan(sorted(lengths, reverse=True)):.3f}.",
        "",
        "## How",
        "",
        HOW,
        "## Results",
    ]


def footer(res: Results, peers: dict[str, Peer]) -> list[str]:
    lines = ["## Peers that could not be measured, and peer findings", ""]
    for p in peers.values():
        if not p.ok:
            lines.append(f"- **{p.name}** was not installed: {p.reason}")
    if "gflow" in peers and not peers["gflow"].ok:
        lines.append(
            "  (The gflow GPU scheduler is published on PyPI as `runqd`, measured as gflow.)"
        )
    for (key, row), fig in res.figures.items():
        if fig.failures and not row.startswith("gpuherd"):
            lines.append(f"- **{res.labels.get(row, row)}**, {key}: {'; '.join(fig.failures)}")
    if len(lines) == 2:
        lines.append("- none")
    fill = res.extra.get("w6_fill")
    if isinstance(fill, list | tuple):
        lines += [
            "",
            f"Filling W6's database: {fill[0]:,} jobs in batches of 10,000 took {fill[1]:.1f} s.",
        ]
    return lines
