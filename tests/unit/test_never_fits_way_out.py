"""A job that can never run here is told the most it may ask for: the GPUs that would fit
(core/reasons.py never_fits), or the largest --mem; `edit` is what a queued one's
`gpuherd edit` takes (service_reasons.py)."""

from __future__ import annotations

from gpuherd.core.model import Device
from gpuherd.core.reasons import never_fits
from gpuherd.core.units import parse_size

GIB = 2**30


def test_never_fits_says_the_most_gpus_that_would_fit_and_the_edit_that_asks_for_them() -> None:
    devices = [Device(i, memory_total=size * GIB) for i, size in enumerate((80, 16, 80))]
    assert never_fits(10**9, None, devices) == (  # the search starts at what there is
        "asks for 1,000,000,000 GPUs but gpuherd has only 3: give fewer gpus (--gpus), at most 3"
    )
    wide = never_fits(3, 40 * GIB, devices)
    assert wide is not None and (wide.what, wide.way, wide.edit) == (
        "asks for 3 GPUs with 40.0 GiB each but only 2 GPUs have that much",
        "give fewer gpus (--gpus), at most 2, or a smaller mem (--mem)",
        "--gpus 2",
    )
    assert never_fits(2, 40 * GIB, devices) is None  # what the edit asks for fits
    big = never_fits(1, 100 * GIB, devices)  # one GPU: no fewer, a smaller --mem
    assert big is not None and (big.what, big.way, big.edit) == (
        "asks for 100.0 GiB per GPU but the largest GPU has 80.0 GiB",
        "give a smaller mem (--mem), at most 80.0 GiB",
        "--mem 80.0GiB",
    )
    assert never_fits(1, parse_size("80.0GiB"), devices) is None
    none = never_fits(1, None, [])  # no GPU at all: a CPU-only job is the way out
    assert none is not None and (none.what, none.way, none.edit) == (
        "asks for 1 GPU but gpuherd has none",
        "give gpus 0 (--gpus 0) for a CPU-only job",
        "--gpus 0",
    )
    assert none == (  # a str, said as it is
        "asks for 1 GPU but gpuherd has none: give gpus 0 (--gpus 0) for a CPU-only job"
    )
    assert isinstance(wide, str) and wide == f"{wide.what}: {wide.way}"
