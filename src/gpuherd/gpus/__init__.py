"""GPU probes: NVML on real machines, static indices when NVML is missing, fakes for the rest."""

from __future__ import annotations

from collections.abc import Sequence

from gpuherd.gpus.base import GpuProbe, GpuProcess, GpuReading, ProbeError
from gpuherd.gpus.fake import FakeGpu, FakeProbe
from gpuherd.gpus.nvml import NvmlProbe, NvmlUnavailable
from gpuherd.gpus.spec import parse_fake_spec, parse_gpu_spec
from gpuherd.gpus.static import StaticProbe

__all__ = [
    "FakeGpu",
    "FakeProbe",
    "GpuProbe",
    "GpuProcess",
    "GpuReading",
    "NvmlProbe",
    "NvmlUnavailable",
    "ProbeError",
    "StaticProbe",
    "make_probe",
    "parse_fake_spec",
    "parse_gpu_spec",
]


NAME_GPUS = "pass --gpus 0,1 to name GPUs, or --fake-gpus 4 to try gpuherd without a GPU"
"""What to do without a driver, for the commands that take --gpus (daemon start, run)."""


def make_probe(
    gpus: str | Sequence[str] | None,
    fake_gpus: str | None,
    origin: str | None = None,
    without_driver: str | None = None,
) -> tuple[GpuProbe, dict[int, int]]:
    """The probe for `--gpus` / `--fake-gpus` and the slots per GPU index; `origin`: where
    `fake_gpus` came from if not from the option (GPUHERD_FAKE_GPUS: gpus/choice.py);
    `without_driver`: what to do when NVML finds no driver, if not NAME_GPUS (whose --gpus
    the caller does not take with its other options).

    ValueError for bad options; ProbeError when no GPU can be found.
    """
    if gpus is not None and fake_gpus is not None:
        raise ValueError("--gpus and --fake-gpus exclude each other: pass one of them")
    if fake_gpus is not None:
        fake = FakeProbe(parse_fake_spec(fake_gpus, name=origin or "--fake-gpus"), origin)
        return fake, dict.fromkeys(fake.indices, 1)
    if gpus is not None:
        slots = parse_gpu_spec(gpus)
        try:
            return NvmlProbe(list(slots)), slots
        except NvmlUnavailable:
            # The user named the GPUs, so run without telemetry rather than refuse.
            return StaticProbe(list(slots)), slots
    try:
        nvml = NvmlProbe(None)
    except NvmlUnavailable as exc:
        said = f"no NVIDIA driver found (NVML: {exc.reason}): {without_driver or NAME_GPUS}"
        raise ProbeError(said) from exc
    if not nvml.indices:
        nvml.close()
        raise ProbeError(
            "NVML found no GPUs: check `nvidia-smi -L`, "
            "or pass --fake-gpus 4 to try gpuherd without a GPU"
        )
    return nvml, dict.fromkeys(nvml.indices, 1)
