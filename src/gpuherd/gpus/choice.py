"""Which GPUs an entry point uses: its own options, else GPUHERD_FAKE_GPUS.

One rule for every entry point (`gpuherd daemon start`, `--foreground`, the daemon itself,
`gpuherd run`, `gpuherd.connect()`): `--gpus`/`--fake-gpus` (connect()'s `gpus=`/`fake_gpus=`)
as given; with neither, GPUHERD_FAKE_GPUS if it is set, checked here, so that a bad value is
named as the variable before any daemon starts. The daemon reads the variable itself (it
inherits the environment of whatever started it), so that it knows where its fake GPUs came
from: `daemon status` and `gpus` say so (`fake: 4 GPUs from GPUHERD_FAKE_GPUS`), and a
restart with the variable unchanged keeps the last configuration (daemon.choose_probe).
A start that names the Ray executor takes nothing from the variable: it is about this
machine's GPUs, never about where jobs run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

FAKE_GPUS_VARIABLE = "GPUHERD_FAKE_GPUS"


@dataclass(frozen=True)
class GpuChoice:
    gpus: str | None = None
    fake_gpus: str | None = None
    from_variable: bool = False
    """`fake_gpus` is GPUHERD_FAKE_GPUS's (a .json file's path made absolute), not an option."""

    @property
    def given(self) -> bool:
        """Whether GPUs were named at all (else: the last start's, or the ones NVML finds)."""
        return self.gpus is not None or self.fake_gpus is not None

    @property
    def origin(self) -> str | None:
        """Where the fake GPUs came from, if not from an option: for make_probe."""
        return FAKE_GPUS_VARIABLE if self.from_variable else None


def choose_gpus(gpus: str | None, fake_gpus: str | None, *, ray: bool = False) -> GpuChoice:
    """The options as given; with neither, GPUHERD_FAKE_GPUS (an empty one is unset), unless
    the start names the Ray executor (`ray`). ValueError naming the variable for a bad value,
    or a .json state file it names that is missing or malformed."""
    if gpus is not None or fake_gpus is not None:
        return GpuChoice(gpus, fake_gpus)
    value = os.environ.get(FAKE_GPUS_VARIABLE, "")
    if ray or not value:
        return GpuChoice()
    from gpuherd.gpus import FakeProbe, ProbeError, parse_fake_spec  # (only when it is set)

    try:
        source = parse_fake_spec(value, name=FAKE_GPUS_VARIABLE)
        FakeProbe(source)  # reads a state file: a malformed one is refused here, named so
    except (ValueError, ProbeError) as exc:
        raise ValueError(
            f"{exc} ({FAKE_GPUS_VARIABLE} in the environment: export "
            f"{FAKE_GPUS_VARIABLE}=4, say, or unset it)"
        ) from None
    # A state file's path absolute, as the daemon remembers it (a restart elsewhere finds it).
    return GpuChoice(
        fake_gpus=str(source) if isinstance(source, Path) else value, from_variable=True
    )
