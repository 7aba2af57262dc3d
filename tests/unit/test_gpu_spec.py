from __future__ import annotations

from pathlib import Path

import pytest

from gpuherd.core.idspec import MAX_GPU_INDEX
from gpuherd.gpus.fake import DEFAULT_FAKE_MEMORY, FakeGpu
from gpuherd.gpus.spec import MAX_FAKE_GPUS, parse_fake_spec, parse_gpu_spec

GiB = 2**30


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("0,1,2,3", {0: 1, 1: 1, 2: 1, 3: 1}),
        (["0", "1", "2"], {0: 1, 1: 1, 2: 1}),
        ("0,0,1", {0: 2, 1: 1}),
        ("0,1 2", {0: 1, 1: 1, 2: 1}),
        (["0,1", "2"], {0: 1, 1: 1, 2: 1}),
        ("3,1", {1: 1, 3: 1}),
        ("0, 1", {0: 1, 1: 1}),
        ("7", {7: 1}),
        ("1-3", {1: 1, 2: 1, 3: 1}),  # ranges, as --only-gpus takes them
        (["0", "2-3"], {0: 1, 2: 1, 3: 1}),
        ("0-1,0", {0: 2, 1: 1}),  # a range is its indices written out: 0 is repeated
        ("2-2", {2: 1}),
    ],
)
def test_parse_gpu_spec(spec: str | list[str], expected: dict[int, int]) -> None:
    slots = parse_gpu_spec(spec)
    assert slots == expected
    assert list(slots) == sorted(slots)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("a", "invalid GPU index 'a'"),
        ("-1", "invalid GPU index '-1'"),
        ("0,x", "invalid GPU index 'x' in '0,x'"),
        ("1.0", "invalid GPU index '1.0'"),
        ("²", "invalid GPU index '²'"),
        ("", "no GPUs given"),
        ([], "no GPUs given"),
        ("0,,1", "empty GPU index in '0,,1'"),
        ("0,1,", "empty GPU index"),
    ],
)
def test_parse_gpu_spec_errors_name_the_token_and_an_example(
    spec: str | list[str], message: str
) -> None:
    with pytest.raises(ValueError) as info:
        parse_gpu_spec(spec)
    assert message in str(info.value)
    assert "0,1,2" in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("3-1", "invalid range '3-1': write it as 1-3"),
        ("0,3-1", "invalid range '3-1' in '0,3-1': write it as 1-3"),
        ("0-4096", "GPU 4096 in '0-4096' is not a GPU index: at most 4095"),
        ("٣", "invalid GPU index '٣': use GPU indices like 0,1,2"),  # int() takes it
    ],
)
def test_parse_gpu_spec_refuses_a_bad_range(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_gpu_spec(spec)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("index", ["4096", "9223372036854775807", "99999999999999999999"])
def test_parse_gpu_spec_caps_indices_as_only_gpus_does(index: str) -> None:
    # The largest ones failed with a traceback (SQLite's integers) or started a daemon.
    assert parse_gpu_spec(f"0,{MAX_GPU_INDEX}") == {0: 1, MAX_GPU_INDEX: 1}
    with pytest.raises(ValueError) as info:
        parse_gpu_spec(f"0,{index}")
    assert str(info.value) == f"GPU {index} in '0,{index}' is not a GPU index: at most 4095"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("4", [FakeGpu()] * 4),
        ("1", [FakeGpu()]),
        (
            "2x24GiB,1x80GiB",
            [FakeGpu(memory_total=24 * GiB)] * 2 + [FakeGpu(memory_total=80 * GiB)],
        ),
        ("1x80GiB", [FakeGpu(memory_total=80 * GiB)]),
        ("80GiB", [FakeGpu(memory_total=80 * GiB)]),
        ("2X16G", [FakeGpu(memory_total=16 * GiB)] * 2),
        ("2,1x80GiB", [FakeGpu()] * 2 + [FakeGpu(memory_total=80 * GiB)]),
    ],
)
def test_parse_fake_spec(spec: str, expected: list[FakeGpu]) -> None:
    assert parse_fake_spec(spec) == expected


def test_default_fake_gpu_is_24_gib() -> None:
    assert FakeGpu().memory_total == DEFAULT_FAKE_MEMORY == 24 * GiB


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "no fake GPUs given"),
        ("0", "a count must be 1 or more"),
        ("0x24GiB", "a count must be 1 or more"),
        ("ax24GiB", "the count before 'x' must be a number"),
        ("2x", "--fake-gpus: invalid item '2x'"),
        ("2x24", "give the size a unit"),
        ("2y24GiB", "--fake-gpus: invalid item '2y24GiB'"),
        ("2x24GiB,,1", "--fake-gpus: empty item in '2x24GiB,,1'"),
        (f"{MAX_FAKE_GPUS + 1}", "too many fake GPUs"),
        ("10000000000", "too many fake GPUs"),
    ],
)
def test_parse_fake_spec_errors(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_fake_spec(spec)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_parse_fake_spec_json_file_becomes_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "gpus.json").write_text('{"gpus": []}')
    monkeypatch.chdir(tmp_path)
    result = parse_fake_spec("gpus.json")
    assert result == tmp_path.resolve() / "gpus.json"
    assert isinstance(result, Path) and result.is_absolute()


def test_parse_fake_spec_missing_json_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"fake GPU state file not found: .*nope\.json"):
        parse_fake_spec(str(tmp_path / "nope.json"))
