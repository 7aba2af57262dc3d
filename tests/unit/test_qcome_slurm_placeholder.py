"""sbatch's `-o out-%A_%a.log` (an array's id and index) given to a sweep: `%A` was refused
as any unknown letter, not told how a sweep's points are told apart here."""

from __future__ import annotations

from gpuherd.core.output_files import template_problem


def test_slurms_array_id_is_answered_with_what_tells_a_sweeps_points_apart() -> None:
    assert template_problem("out-%A_%a.log") == (
        "unknown placeholder %A (Slurm's array id; a sweep's points are told apart by %x, "
        "their names): use %j (the job's id), %a (the attempt's number), %x (the job's name), "
        "or %% for a percent sign"
    )
    assert template_problem("out-%x_%a.log") is None
