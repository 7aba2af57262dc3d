from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from gpuherd.gpus import FakeProbe, ProbeError, StaticProbe, make_probe
from gpuherd.gpus.base import GpuProcess, GpuReading
from gpuherd.gpus.fake import FakeGpu, fake_uuid

GiB = 2**30


def write_state(path: Path, state: Any, mtime: int) -> None:
    """Write the state file with an explicit mtime, so a rewrite within one clock tick is seen."""
    path.write_text(json.dumps(state))
    os.utime(path, ns=(mtime * 10**9, mtime * 10**9))


@pytest.fixture
def state_file(tmp_path: Path) -> Path:
    path = tmp_path / "gpus.json"
    write_state(
        path,
        {
            "gpus": [
                {
                    "name": "Fake A100",
                    "memory_total": "80GiB",
                    "memory_used": "0GiB",
                    "utilization": 0,
                    "processes": [{"pid": 4242, "memory": "20GiB"}],
                },
                {"memory_total": 24 * GiB},
            ]
        },
        mtime=1_000,
    )
    return path


def test_list_form_readings() -> None:
    probe = FakeProbe([FakeGpu(), FakeGpu(name="Big", memory_total=80 * GiB)])
    assert probe.read() == [
        GpuReading(0, fake_uuid(0), "Fake GPU", 24 * GiB, 0, 0, ()),
        GpuReading(1, fake_uuid(1), "Big", 80 * GiB, 0, 0, ()),
    ]
    assert probe.describe() == "fake: 2 GPUs"
    assert probe.indices == (0, 1)


def test_fake_uuids_are_stable_distinct_and_uuid_shaped() -> None:
    uuids = [fake_uuid(i) for i in range(16)]
    assert len(set(uuids)) == 16
    assert fake_uuid(3) == fake_uuid(3)
    assert all(u.startswith("GPU-fake-") and len(u.split("-")) == 7 for u in uuids)


def test_file_form_readings(state_file: Path) -> None:
    probe = FakeProbe(state_file)
    assert probe.read() == [
        # The foreign process's memory is in use, as NVML counts it (it showed as 0 used).
        GpuReading(
            0, fake_uuid(0), "Fake A100", 80 * GiB, 20 * GiB, 0, (GpuProcess(4242, 20 * GiB),)
        ),
        GpuReading(1, fake_uuid(1), "Fake GPU", 24 * GiB, 0, 0, ()),
    ]
    assert str(state_file) in probe.describe()


def test_file_is_reread_after_it_changes(state_file: Path) -> None:
    probe = FakeProbe(state_file)
    assert probe.read()[1].memory_used == 0
    write_state(
        state_file,
        {"gpus": [{"name": "Fake A100"}, {"memory_used": "10GiB", "utilization": 87}]},
        mtime=2_000,
    )
    second = probe.read()[1]
    assert (second.memory_used, second.utilization) == (10 * GiB, 87)


def test_unchanged_file_is_not_reparsed(state_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    probe = FakeProbe(state_file)
    first = probe.read()

    def fail(_: object) -> None:
        raise AssertionError("parsed again although the file did not change")

    monkeypatch.setattr("gpuherd.gpus.fake.json.loads", fail)
    assert probe.read() == first


def test_lost_gpu_disappears_without_renumbering_the_others(state_file: Path) -> None:
    probe = FakeProbe(state_file)
    write_state(state_file, {"gpus": [{"lost": True}, {"name": "Survivor"}]}, mtime=2_000)
    readings = probe.read()
    assert [(r.index, r.name, r.uuid) for r in readings] == [(1, "Survivor", fake_uuid(1))]
    # Configured GPUs stay configured; only the reading changes.
    assert probe.indices == (0, 1)


def test_null_metrics_mean_not_available(tmp_path: Path) -> None:
    path = tmp_path / "gpus.json"
    write_state(
        path,
        {
            "gpus": [
                {
                    "uuid": "GPU-1234",
                    "memory_total": None,
                    "memory_used": None,
                    "utilization": None,
                    "processes": [{"pid": 7}, {"pid": 8, "memory": None}, {"pid": 9, "memory": 0}],
                }
            ]
        },
        mtime=1_000,
    )
    (reading,) = FakeProbe(path).read()
    assert reading == GpuReading(
        0,
        "GPU-1234",
        "Fake GPU",
        None,
        None,
        None,
        (GpuProcess(7, None), GpuProcess(8, None), GpuProcess(9, 0)),
    )


def test_gpus_on_pretend_nodes(tmp_path: Path) -> None:
    path = tmp_path / "gpus.json"
    write_state(path, {"gpus": [{"node": "n1", "host": "box-1"}, {"node": "n2"}, {}]}, 1_000)
    readings = FakeProbe(path).read()
    assert [(r.node, r.host) for r in readings] == [("n1", "box-1"), ("n2", None), (None, None)]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        # Python's words were the message: "Expecting value: line 1 column 11 (char 10)".
        ("{not json", "not valid JSON at line 1, column 2: Expecting property name"),
        ('{"gpus": [', "not valid JSON: it stops mid-value at line 1, column 11 (cut off"),
        (b"\xff\xfe{", "not UTF-8 text (at byte 2); write it as UTF-8 JSON"),
        (" \n", 'is empty: write in it {"gpus": [{"memory_total": "24GiB"}]}'),
        ("[]", 'expected an object like {"gpus"'),
        # An object was told it should be "an object like", a typo that "gpus" was missing.
        ('{"gpus": {}}', 'gpus: expected a list, like [{"memory_total": "24GiB"}], got {}'),
        ('{"gpu": []}', "the top level: unknown key 'gpu' (known: gpus)"),
        ('{"gpus": [], "extra": 1}', "the top level: unknown key 'extra'"),
        ('{"gpus": [3]}', "gpus[0]: expected an object"),
        ('{"gpus": [{"memory_usd": "1GiB"}]}', "gpus[0]: unknown key 'memory_usd'"),
        ('{"gpus": [{"memory_total": "lots"}]}', "gpus[0].memory_total: invalid size 'lots'"),
        ('{"gpus": [{"memory_total": 0}]}', "gpus[0].memory_total: must be greater than zero"),
        ('{"gpus": [{"memory_used": -1}]}', "gpus[0].memory_used: expected bytes"),
        ('{"gpus": [{"utilization": 101}]}', "gpus[0].utilization: expected a percentage"),
        ('{"gpus": [{"utilization": true}]}', "gpus[0].utilization: expected a percentage"),
        ('{"gpus": [{"lost": "yes"}]}', "gpus[0].lost: expected true or false"),
        ('{"gpus": [{"name": ""}]}', "gpus[0].name: expected a non-empty string"),
        ('{"gpus": [{"node": 3}]}', "gpus[0].node: expected a non-empty string"),
        ('{"gpus": [{"processes": {}}]}', "gpus[0].processes: expected a list"),
        ('{"gpus": [{"processes": [{"memory": 1}]}]}', "gpus[0].processes[0]: expected an object"),
        (
            '{"gpus": [{"processes": [{"pid": -4}]}]}',
            "gpus[0].processes[0].pid: expected a process",
        ),
        ('{"gpus": [{"processes": [{"pid": 1, "mem": 1}]}]}', "unknown key 'mem'"),
        # Taken without a word: a link to itself or to a GPU not listed, a UUID given twice.
        ('{"gpus": [{}, {"links": {"1": 3}}]}', "gpus[1].links: to GPU 1, itself: links join"),
        (
            '{"gpus": [{"links": {"7": 3}}, {}, {}]}',
            "gpus[0].links: to GPU 7, which the file does not list (it has GPUs 0-2)",
        ),
        ('{"gpus": [{"links": {"1": 2}}]}', "to GPU 1, which the file does not list (it has GPU 0"),
        (
            '{"gpus": [{"uuid": "GPU-a"}, {"lost": true}, {"uuid": "GPU-a"}]}',
            "gpus[2].uuid: 'GPU-a' is gpus[0]'s too: give each GPU its own UUID",
        ),
        (f'{{"gpus": [{{}}, {{"uuid": "{fake_uuid(0)}"}}]}}', "gpus[1].uuid: 'GPU-fake-00000000"),
    ],
)
def test_malformed_file_raises_probe_error_naming_file_and_problem(
    tmp_path: Path, content: str | bytes, problem: str
) -> None:
    path = tmp_path / "gpus.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ProbeError) as info:
        FakeProbe(path)
    assert str(path) in str(info.value)
    assert problem in str(info.value)


def test_links_to_a_lost_gpu_and_one_per_gpu_uuids_are_taken(tmp_path: Path) -> None:
    path = tmp_path / "gpus.json"
    state = {"gpus": [{"links": {"1": 3}, "uuid": "GPU-a"}, {"lost": True}, {"uuid": "GPU-b"}]}
    write_state(path, state, 1_000)
    readings = FakeProbe(path).read()
    assert [(r.index, r.uuid, dict(r.links)) for r in readings] == [
        (0, "GPU-a", {1: 3}),
        (2, "GPU-b", {}),
    ]


def test_file_broken_while_running_raises_until_fixed(state_file: Path) -> None:
    probe = FakeProbe(state_file)
    good = probe.read()
    write_state(state_file, {"gpus": "oops"}, mtime=2_000)
    with pytest.raises(ProbeError, match=r"gpus\.json"):
        probe.read()
    with pytest.raises(ProbeError):  # not cached as if it were good
        probe.read()
    write_state(state_file, {"gpus": [{"name": "Fake A100"}]}, mtime=3_000)
    assert [r.name for r in probe.read()] == ["Fake A100"]
    assert good[0].name == "Fake A100"


def test_file_removed_while_running(state_file: Path) -> None:
    probe = FakeProbe(state_file)
    state_file.unlink()
    with pytest.raises(ProbeError, match=r"reading fake GPU state file .*gpus\.json"):
        probe.read()


def test_atomic_replace_with_same_size_and_mtime_is_seen(state_file: Path) -> None:
    probe = FakeProbe(state_file)
    old = state_file.stat()
    content = json.dumps({"gpus": [{"name": "Fake B"}]})
    replacement = state_file.with_name("new.json")
    replacement.write_text(content + " " * (old.st_size - len(content)))
    os.utime(replacement, ns=(old.st_mtime_ns, old.st_mtime_ns))
    assert replacement.stat().st_size == old.st_size
    os.replace(replacement, state_file)  # how a careful writer updates the file
    assert [r.name for r in probe.read()] == ["Fake B"]


def test_make_probe_with_fake_gpus() -> None:
    probe, slots = make_probe(None, "2x24GiB,1x80GiB")
    assert isinstance(probe, FakeProbe)
    assert slots == {0: 1, 1: 1, 2: 1}
    assert [r.memory_total for r in probe.read()] == [24 * GiB, 24 * GiB, 80 * GiB]


def test_make_probe_with_fake_state_file_counts_every_configured_gpu(tmp_path: Path) -> None:
    path = tmp_path / "gpus.json"
    write_state(path, {"gpus": [{}, {"lost": True}, {}]}, mtime=1_000)
    probe, slots = make_probe(None, str(path))
    assert slots == {0: 1, 1: 1, 2: 1}
    assert [r.index for r in probe.read()] == [0, 2]


def test_make_probe_rejects_both_options() -> None:
    with pytest.raises(ValueError, match="--gpus and --fake-gpus exclude each other"):
        make_probe("0,1", "4")


def test_static_probe() -> None:
    probe = StaticProbe([1, 0, 1])
    assert probe.describe() == "static: 0,1"
    # `--gpus 0-63` was said as its 64 numbers, on the start's line and `daemon status`'s.
    assert StaticProbe(range(64)).describe() == "static: 0-63"
    assert StaticProbe([*range(8), 10]).describe() == "static: 0-7,10"
    assert StaticProbe(range(8)).describe() == "static: 0,1,2,3,4,5,6,7"
    assert probe.read() == [
        GpuReading(0, None, "GPU 0", None, None, None, ()),
        GpuReading(1, None, "GPU 1", None, None, None, ()),
    ]


def test_a_link_given_differently_on_the_two_gpus_of_a_pair_is_refused(tmp_path: Path) -> None:
    """GPU 0 says NVLink to GPU 1, GPU 1 says PCIe to GPU 0: placement took the faster in
    silence. Refused, naming both GPUs and both qualities; one side alone, or both sides
    alike, is taken (a pair given on either GPU holds for both: docs/gpus.md)."""
    path = tmp_path / "gpus.json"
    write_state(path, {"gpus": [{"links": {"1": 3, "2": 1}}, {"links": {"0": 2}}, {}]}, 1_000)
    with pytest.raises(ProbeError) as info:
        FakeProbe(path)
    assert str(info.value) == (
        f"fake GPU state file {path}: gpus[0].links and gpus[1].links: GPU 0 gives its link "
        "to GPU 1 as 3, GPU 1 gives it as 2: give the pair one quality (or give it on one "
        "GPU alone)"
    )
    write_state(path, {"gpus": [{"links": {"1": 3, "2": 1}}, {"links": {"0": 3}}, {}]}, 2_000)
    readings = FakeProbe(path).read()
    assert [dict(r.links) for r in readings] == [{1: 3, 2: 1}, {0: 3}, {}]


def test_a_jobs_usage_past_its_gpus_memory_fails_the_probe_naming_the_file(
    tmp_path: Path,
) -> None:
    """As the state file's own `memory_used` past `memory_total` does: it was added without
    a word (`100.0 GiB / 24.0 GiB`). Within the GPU's memory it is taken."""
    from gpuherd.gpus.base import JobOnGpus

    probe = FakeProbe([FakeGpu(memory_total=24 * 2**30)] * 2)
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        folder.mkdir()
    (a / "fake_gpu_usage.json").write_text('{"memory": "20GiB"}')
    (b / "fake_gpu_usage.json").write_text('{"memory": "5GiB"}')
    probe.observe_jobs([JobOnGpus(10, (0,), str(a)), JobOnGpus(11, (1,), str(b))])
    assert [r.memory_used for r in probe.read()] == [20 * 2**30, 5 * 2**30]
    probe.observe_jobs([JobOnGpus(10, (0,), str(a)), JobOnGpus(11, (0,), str(b))])
    with pytest.raises(ProbeError) as refused:
        probe.read()
    assert str(refused.value) == (
        "fake GPU 0: 25.0 GiB in use is more than its memory, 24.0 GiB "
        f"({a}/fake_gpu_usage.json says 20.0 GiB; {b}/fake_gpu_usage.json says 5.0 GiB): "
        "write less in them"
    )
