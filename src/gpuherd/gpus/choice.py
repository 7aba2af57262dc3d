"""Which GPUs an entry point uses: its own options, else GPUHERD_FAKE_GPUS.

One rule for every entry point (`gpuherd daemon start`, `--foreground`, the daemon itself,
`gpuherd run`, `gpuherd.connect()`): `--gpus`/`--fake-gpus` (connect()'s `gpus=`/`fake_gpus=`)
as given; with neither, GPUHERD_FAKE_GPUS if it is set. Whichever it is, it is checked here,
with the parser the probe uses, so that a bad value is named (the option, or the variable)
before any daemon starts; a state file's path comes back absolute, as the daemon remembers it
(a restart from another folder finds it). The daemon reads the variable itself (it
inherits the environment of whatever started it), so that it knows where its fake GPUs came
from: `daemon status` and `gpus` say so (`fake: 4 GPUs from GPUHERD_FAKE_GPUS`), and a
restart with the variable unchanged keeps the last configuration
(daemon_executor.choose_probe).
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


BOTH_GIVEN = "--gpus and --fake-gpus exclude each other: pass one of them"


def choose_gpus(gpus: str | None, fake_gpus: str | None, *, ray: bool = False) -> GpuChoice:
    """The options, checked; with neither, GPUHERD_FAKE_GPUS (an empty one is unset), unless
    the start names the Ray executor (`ray`). ValueError, one line naming the option (as
    `--gpus`, which connect_spelling words as connect()'s argument) or the variable, for a bad
    value, or a .json state file it names that is missing or malformed."""
    if gpus is not None and fake_gpus is not None:
        raise ValueError(BOTH_GIVEN)
    if gpus is not None:
        from gpuherd.gpus import parse_gpu_spec

        try:
            parse_gpu_spec(gpus)
        except ValueError as exc:
            raise ValueError(_named(str(exc), "--gpus")) from None
        return GpuChoice(gpus=gpus)
    if fake_gpus is not None:
        try:
            return GpuChoice(fake_gpus=_checked_fake(fake_gpus, "--fake-gpus"))
        except ValueError as exc:
            raise ValueError(_named(str(exc), "--fake-gpus")) from None
    value = os.environ.get(FAKE_GPUS_VARIABLE, "")
    if ray or not value:
        return GpuChoice()
    try:
        return GpuChoice(fake_gpus=_checked_fake(value, FAKE_GPUS_VARIABLE), from_variable=True)
    except ValueError as exc:
        raise ValueError(
            f"{exc} ({FAKE_GPUS_VARIABLE} in the environment: export "
            f"{FAKE_GPUS_VARIABLE}=4, say, or unset it)"
        ) from None


def _checked_fake(value: str, name: str) -> str:
    """`value` as --fake-gpus takes it, its state file read (a malformed one is refused here,
    not by a daemon already started) and its path made absolute; ValueError if it is bad."""
    from gpuherd.gpus import FakeProbe, ProbeError, parse_fake_spec  # (only when one is given)

    try:
        source = parse_fake_spec(value, name=name)
        FakeProbe(source)
    except ProbeError as exc:
        raise ValueError(str(exc)) from None
    return str(source) if isinstance(source, Path) else value


def _named(reason: str, option: str) -> str:
    """`reason` with the option it is about in front (a state file's error names only the
    file), unless it is there already (`--fake-gpus: invalid item 'x'`)."""
    return reason if reason.startswith(f"{option}:") else f"{option}: {reason}"
