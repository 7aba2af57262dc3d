"""Real GPUs through NVML (nvidia-ml-py). pynvml is imported on first use, not with gpuherd."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from gpuherd.gpus.base import GpuProcess, GpuReading, ProbeError

_T = TypeVar("_T")

# Errors that mean NVML as a whole stopped working, not that one GPU did: reporting every GPU
# as gone would make the engine give up on all of them, so these fail the whole reading.
_SYSTEMIC = ("NVMLError_Uninitialized", "NVMLError_DriverNotLoaded", "NVMLError_LibraryNotFound")
_LOST = "NVMLError_GpuIsLost"


class NvmlUnavailable(ProbeError):
    """NVML cannot start here (no driver, no library); `reason` is NVML's own words."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"NVML unavailable: {reason}")
        self.reason = reason


def _import_pynvml() -> Any:
    try:
        import pynvml
    except ImportError as exc:
        raise NvmlUnavailable(f"nvidia-ml-py is not installed ({exc})") from exc
    return pynvml


class NvmlProbe:
    """Reads the GPUs NVML numbers `indices` (all of them when None)."""

    def __init__(self, indices: Sequence[int] | None = None) -> None:
        nvml = _import_pynvml()
        try:
            nvml.nvmlInit()
        except nvml.NVMLError as exc:
            raise NvmlUnavailable(str(exc)) from exc
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except nvml.NVMLError as exc:
            nvml.nvmlShutdown()
            raise NvmlUnavailable(f"counting GPUs: {exc}") from exc
        self._nvml = nvml
        self._systemic = tuple(getattr(nvml, name) for name in _SYSTEMIC if hasattr(nvml, name))
        self._fatal = (*self._systemic, getattr(nvml, _LOST))
        self._count = count
        self._restricted = indices is not None
        self.indices = tuple(range(count)) if indices is None else tuple(sorted(set(indices)))
        missing = [i for i in self.indices if not 0 <= i < count]
        if missing:
            nvml.nvmlShutdown()
            seen = f"0-{count - 1}" if count else "none"
            raise ProbeError(
                f"GPU {missing[0]} not found: NVML sees {count} GPUs (indices {seen}); "
                "check `nvidia-smi -L` and fix --gpus"
            )

        self._links = self._topology()

    def _topology(self) -> dict[int, dict[int, int]]:
        """Link quality between pairs of GPUs, read once: the wiring does not change."""
        nvml = self._nvml
        levels = {  # NVML's common-ancestor levels, nearest first
            getattr(nvml, "NVML_TOPOLOGY_INTERNAL", 0): 2,
            getattr(nvml, "NVML_TOPOLOGY_SINGLE", 10): 2,
            getattr(nvml, "NVML_TOPOLOGY_MULTIPLE", 20): 2,
            getattr(nvml, "NVML_TOPOLOGY_HOSTBRIDGE", 30): 1,
            getattr(nvml, "NVML_TOPOLOGY_NODE", 40): 1,
            getattr(nvml, "NVML_TOPOLOGY_SYSTEM", 50): 0,
        }
        links: dict[int, dict[int, int]] = {i: {} for i in self.indices}
        try:
            handles = {i: nvml.nvmlDeviceGetHandleByIndex(i) for i in self.indices}
            for a in self.indices:
                for b in self.indices:
                    if a < b:
                        level = nvml.nvmlDeviceGetTopologyCommonAncestor(handles[a], handles[b])
                        score = levels.get(int(level), 0)
                        if self._nvlinked(handles[a], handles[b]):
                            score = 3
                        links[a][b] = links[b][a] = score
        except (nvml.NVMLError, AttributeError):
            return {i: {} for i in self.indices}  # unknown topology: placement ignores links
        return links

    def _nvlinked(self, a: Any, b: Any) -> bool:
        nvml = self._nvml
        try:
            peer = nvml.nvmlDeviceGetPciInfo(b).busId
            for link in range(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18)):
                if nvml.nvmlDeviceGetNvLinkState(a, link) and (
                    nvml.nvmlDeviceGetNvLinkRemotePciInfo(a, link).busId == peer
                ):
                    return True
        except (nvml.NVMLError, AttributeError):
            return False
        return False

    def describe(self) -> str:
        if self._restricted:
            return f"nvml: GPUs {','.join(map(str, self.indices))} of {self._count}"
        return f"nvml: {self._count} GPUs"

    def close(self) -> None:
        self._nvml.nvmlShutdown()

    def read(self) -> list[GpuReading]:
        readings = []
        for index in self.indices:
            try:
                readings.append(self._read_device(index))
            except self._nvml.NVMLError as exc:
                if isinstance(exc, self._systemic):
                    raise ProbeError(f"reading GPU {index} through NVML: {exc}") from exc
                # Lost, or its handle unobtainable: absent from this reading, as it would be
                # from nvidia-smi; the engine decides what that means for its jobs.
        return readings

    def _read_device(self, index: int) -> GpuReading:
        nvml = self._nvml
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        memory = self._metric(nvml.nvmlDeviceGetMemoryInfo, handle)
        utilization = self._metric(nvml.nvmlDeviceGetUtilizationRates, handle)
        processes = self._metric(nvml.nvmlDeviceGetComputeRunningProcesses, handle)
        uuid = self._metric(nvml.nvmlDeviceGetUUID, handle)
        name = self._metric(nvml.nvmlDeviceGetName, handle)
        return GpuReading(
            index=index,
            uuid=None if uuid is None else _text(uuid),
            name=f"GPU {index}" if name is None else _text(name),
            memory_total=None if memory is None else int(memory.total),
            memory_used=None if memory is None else int(memory.used),
            utilization=None if utilization is None else int(utilization.gpu),
            processes=tuple(
                GpuProcess(
                    pid=int(p.pid),
                    memory=None if p.usedGpuMemory is None else int(p.usedGpuMemory),
                )
                for p in processes or ()
            ),
            links=self._links.get(index, {}),
        )

    def _metric(self, query: Callable[[Any], _T], handle: Any) -> _T | None:
        """One metric, or None where this GPU does not support it or it failed this time."""
        try:
            return query(handle)
        except self._nvml.NVMLError as exc:
            if isinstance(exc, self._fatal):
                raise  # the whole GPU, or NVML, is gone: not a missing metric
            return None


def _text(value: str | bytes) -> str:
    # Older nvidia-ml-py releases return bytes for names and UUIDs.
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
