"""The words the choice options take (`--order`, `--on-no-output`; a sweep file's and
Python's `order` and `on_no_output`), in a module of their own: the CLI's options import
them, and must not import the model's dataclasses on the way (they cost `ls` and `submit`
~6 ms of start-up)."""

from __future__ import annotations

from typing import Literal, get_args

Order = Literal["given", "longest-first"]
ORDERS: tuple[Order, ...] = get_args(Order)
"""The sweep's own order, or the points that ran longest before first
(core.ordering.longest_first)."""

OnNoOutput = Literal["flag", "kill"]
ON_NO_OUTPUT: tuple[OnNoOutput, ...] = get_args(OnNoOutput)
"""What a stalled job gets; `kill` is JobSpec.kill_on_no_output."""
