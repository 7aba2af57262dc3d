"""The NVML adapter against scripted pynvml behaviour: this machine needs no GPU or driver."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from types import SimpleNamespace

import pynvml
import pytest

from gpuherd.gpus import NvmlProbe, NvmlUnavailable, ProbeError, StaticProbe, make_probe
from gpuherd.gpus.base import GpuProcess, GpuReading

GiB = 2**30


def nvml_error(code: int) -> pynvml.NVMLError:
    # pynvml maps the code to its subclass (NVMLError_NotSupported, ...), as the binding does.
    return pynvml.NVMLError(code)


@dataclass
class Device:
    uuid: str | bytes = "GPU-11111111-2222-3333-4444-555555555555"
    name: str | bytes = "NVIDIA A100-SXM4-80GB"
    total: int = 80 * GiB
    used: int = 1 * GiB
    utilization: int = 42
    processes: list[tuple[int, int | None]] = field(default_factory=list)
    handle_error: int | None = None
    """NVML error code for nvmlDeviceGetHandleByIndex (a GPU fallen off the bus)."""
    errors: dict[str, int] = field(default_factory=dict)
    """pynvml function name -> NVML error code it raises for this device."""


@dataclass
class Nvml:
    """Scripted pynvml: the tests change `devices` and the error fields between reads."""

    devices: list[Device]
    init_error: int | None = None
    calls: list[str] = field(default_factory=list)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for name in (
            "nvmlInit",
            "nvmlShutdown",
            "nvmlDeviceGetCount",
            "nvmlDeviceGetHandleByIndex",
            "nvmlDeviceGetUUID",
            "nvmlDeviceGetName",
            "nvmlDeviceGetMemoryInfo",
            "nvmlDeviceGetUtilizationRates",
            "nvmlDeviceGetComputeRunningProcesses",
        ):
            monkeypatch.setattr(pynvml, name, getattr(self, name))

    def nvmlInit(self) -> None:
        self.calls.append("init")
        if self.init_error is not None:
            raise nvml_error(self.init_error)

    def nvmlShutdown(self) -> None:
        self.calls.append("shutdown")

    def nvmlDeviceGetCount(self) -> int:
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Device:
        device = self.devices[index]
        if device.handle_error is not None:
            raise nvml_error(device.handle_error)
        return device

    def _check(self, device: Device, function: str) -> None:
        if function in device.errors:
            raise nvml_error(device.errors[function])

    def nvmlDeviceGetUUID(self, device: Device) -> str | bytes:
        self._check(device, "nvmlDeviceGetUUID")
        return device.uuid

    def nvmlDeviceGetName(self, device: Device) -> str | bytes:
        self._check(device, "nvmlDeviceGetName")
        return device.name

    def nvmlDeviceGetMemoryInfo(self, device: Device) -> SimpleNamespace:
        self._check(device, "nvmlDeviceGetMemoryInfo")
        return SimpleNamespace(
            total=device.total, used=device.used, free=device.total - device.used
        )

    def nvmlDeviceGetUtilizationRates(self, device: Device) -> SimpleNamespace:
        self._check(device, "nvmlDeviceGetUtilizationRates")
        return SimpleNamespace(gpu=device.utilization, memory=0)

    def nvmlDeviceGetComputeRunningProcesses(self, device: Device) -> list[SimpleNamespace]:
        self._check(device, "nvmlDeviceGetComputeRunningProcesses")
        return [SimpleNamespace(pid=pid, usedGpuMemory=mem) for pid, mem in device.processes]


def two_gpus() -> list[Device]:
    return [
        Device(processes=[(4242, 20 * GiB)]),
        Device(
            uuid="GPU-99999999-2222-3333-4444-555555555555",
            name="NVIDIA RTX 4090",
            total=24 * GiB,
            used=0,
            utilization=0,
        ),
    ]


@pytest.fixture
def nvml(monkeypatch: pytest.MonkeyPatch) -> Nvml:
    scripted = Nvml(two_gpus())
    scripted.install(monkeypatch)
    return scripted


def test_no_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    Nvml([], init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED).install(monkeypatch)
    with pytest.raises(NvmlUnavailable) as info:
        NvmlProbe()
    assert info.value.reason == "Driver Not Loaded"
    assert isinstance(info.value, ProbeError)


def test_no_driver_make_probe_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    Nvml([], init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED).install(monkeypatch)
    with pytest.raises(ProbeError) as info:
        make_probe(None, None)
    assert str(info.value) == (
        "no NVIDIA driver found (NVML: Driver Not Loaded): pass --gpus 0,1 to name GPUs, "
        "or --fake-gpus 4 to try gpuherd without a GPU"
    )


def test_no_library_make_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    Nvml([], init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND).install(monkeypatch)
    with pytest.raises(ProbeError, match=r"no NVIDIA driver found \(NVML: NVML Shared Library"):
        make_probe(None, None)


def test_no_driver_with_named_gpus_falls_back_to_static(monkeypatch: pytest.MonkeyPatch) -> None:
    Nvml([], init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED).install(monkeypatch)
    probe, slots = make_probe(["0", "1", "1"], None)
    assert isinstance(probe, StaticProbe)
    assert slots == {0: 1, 1: 2}
    assert probe.describe() == "static: 0,1"


def test_two_gpus(nvml: Nvml) -> None:
    probe = NvmlProbe()
    assert probe.describe() == "nvml: 2 GPUs"
    assert probe.read() == [
        GpuReading(
            index=0,
            uuid="GPU-11111111-2222-3333-4444-555555555555",
            name="NVIDIA A100-SXM4-80GB",
            memory_total=80 * GiB,
            memory_used=1 * GiB,
            utilization=42,
            processes=(GpuProcess(4242, 20 * GiB),),
        ),
        GpuReading(
            index=1,
            uuid="GPU-99999999-2222-3333-4444-555555555555",
            name="NVIDIA RTX 4090",
            memory_total=24 * GiB,
            memory_used=0,
            utilization=0,
            processes=(),
        ),
    ]


def test_make_probe_autodetects_one_slot_per_gpu(nvml: Nvml) -> None:
    probe, slots = make_probe(None, None)
    assert isinstance(probe, NvmlProbe)
    assert slots == {0: 1, 1: 1}


def test_named_gpus_use_nvml_when_it_works(nvml: Nvml) -> None:
    probe, slots = make_probe("1,1", None)
    assert isinstance(probe, NvmlProbe)
    assert slots == {1: 2}
    assert [r.uuid for r in probe.read()] == ["GPU-99999999-2222-3333-4444-555555555555"]
    assert probe.describe() == "nvml: GPUs 1 of 2"


def test_named_gpu_that_does_not_exist(nvml: Nvml) -> None:
    with pytest.raises(ProbeError, match=r"GPU 5 not found: NVML sees 2 GPUs \(indices 0-1\)"):
        make_probe("0,5", None)
    assert nvml.calls == ["init", "shutdown"]


def test_driver_without_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    Nvml([]).install(monkeypatch)
    with pytest.raises(ProbeError, match="NVML found no GPUs"):
        make_probe(None, None)


def test_metric_not_supported_is_none(nvml: Nvml) -> None:
    nvml.devices[0].errors["nvmlDeviceGetUtilizationRates"] = pynvml.NVML_ERROR_NOT_SUPPORTED
    nvml.devices[1].errors["nvmlDeviceGetMemoryInfo"] = pynvml.NVML_ERROR_NOT_SUPPORTED
    first, second = NvmlProbe().read()
    assert first.utilization is None
    assert first.memory_total == 80 * GiB
    assert (second.memory_total, second.memory_used, second.utilization) == (None, None, 0)


def test_every_metric_failing_still_reports_the_gpu(nvml: Nvml) -> None:
    nvml.devices[0].errors = dict.fromkeys(
        [
            "nvmlDeviceGetUUID",
            "nvmlDeviceGetName",
            "nvmlDeviceGetMemoryInfo",
            "nvmlDeviceGetUtilizationRates",
            "nvmlDeviceGetComputeRunningProcesses",
        ],
        pynvml.NVML_ERROR_UNKNOWN,
    )
    first, _ = NvmlProbe().read()
    assert first == GpuReading(0, None, "GPU 0", None, None, None, ())


def test_lost_gpu_is_left_out(nvml: Nvml) -> None:
    probe = NvmlProbe()
    nvml.devices[0].handle_error = pynvml.NVML_ERROR_GPU_IS_LOST
    assert [r.index for r in probe.read()] == [1]


def test_gpu_lost_between_handle_and_metric_is_left_out(nvml: Nvml) -> None:
    probe = NvmlProbe()
    nvml.devices[1].errors["nvmlDeviceGetMemoryInfo"] = pynvml.NVML_ERROR_GPU_IS_LOST
    assert [r.index for r in probe.read()] == [0]


def test_gpu_comes_back(nvml: Nvml) -> None:
    probe = NvmlProbe()
    nvml.devices[0].handle_error = pynvml.NVML_ERROR_GPU_IS_LOST
    assert len(probe.read()) == 1
    nvml.devices[0].handle_error = None
    assert len(probe.read()) == 2


def test_nvml_failing_as_a_whole_is_an_error_not_an_empty_reading(nvml: Nvml) -> None:
    probe = NvmlProbe()
    for device in nvml.devices:
        device.handle_error = pynvml.NVML_ERROR_UNINITIALIZED
    with pytest.raises(ProbeError, match="reading GPU 0 through NVML: Uninitialized"):
        probe.read()


def test_process_memory_not_available(nvml: Nvml) -> None:
    nvml.devices[0].processes = [(100, None), (101, 3 * GiB)]
    first, _ = NvmlProbe().read()
    assert first.processes == (GpuProcess(100, None), GpuProcess(101, 3 * GiB))


def test_bytes_from_older_bindings_are_decoded(nvml: Nvml) -> None:
    nvml.devices[0].name = b"Tesla V100-SXM2-16GB"
    nvml.devices[0].uuid = b"GPU-abc"
    first, _ = NvmlProbe().read()
    assert (first.name, first.uuid) == ("Tesla V100-SXM2-16GB", "GPU-abc")


def test_close_shuts_nvml_down(nvml: Nvml) -> None:
    NvmlProbe().close()
    assert nvml.calls == ["init", "shutdown"]


def test_importing_gpuherd_gpus_does_not_import_pynvml() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    code = "import sys, gpuherd.gpus; sys.exit('pynvml' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], env=env, check=False).returncode == 0
