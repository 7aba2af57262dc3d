"""Job id lists as the CLI takes them: "3-7,9", "1 2 3" (several argv words), "5"."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence

from gpuherd.core.int64 import LARGEST, TOO_LARGE, whole
from gpuherd.core.units import plural

MAX_IDS = 1_000_000
"""More ids than this in one spec is a typo ("1-10000000"), not a request."""

_HELP = "use ids like 5, 3-7,9 or 1 2 3"
OPTION_HELP = "use ids like 5 or 3-7,9 (comma-separated)"
"""An option's value is one word: `--after 1 2 3` would give 2 and 3 to the command."""
_ID_RE = re.compile(r"(\d+)(?:-(\d+))?", re.ASCII)
"""An id or a range. ASCII: a regex's \\d takes other scripts' digits (`٢`), which no one
means, and `rm ٢` removed job 2 where `show ٢` refused the id."""


def split_items(tokens: str | Sequence[str]) -> list[str]:
    """Items of a comma- or space-separated list given as one string or argv words.

    An empty item ("0,,1", a trailing comma, a blank word) comes back as "" so the caller can
    reject it with its own message instead of silently dropping it.
    """
    words = [tokens] if isinstance(tokens, str) else list(tokens)
    items: list[str] = []
    for word in words:
        items.extend(re.split(r"\s*,\s*|\s+", word.strip()))
    return items


def parse_ids(
    text: str | Sequence[str],
    largest: Callable[[int], object] | None = None,
    hint: str = _HELP,
    word: str | None = None,
) -> list[int]:
    """Sorted, unique job ids; ValueError with one line saying what is wrong, and `hint`
    (`largest`, given: called with each range's end first, to refuse an id by its own check;
    `word`, an item passed over: parse_job_refs')."""

    def check(first: int, last: int, taken: int, shown: str) -> None:
        if largest is not None:
            largest(last)
        if taken + (last - first + 1) > MAX_IDS:
            raise ValueError(f"too many job ids in {shown!r}: at most {MAX_IDS:,} at once")

    return _parse_list(text, "job ids", ("job id", hint, 1), check, word)


def check_job_id(job_id: int) -> int:
    """`job_id` if the queue can store it (64 bits); else ValueError, one line in the CLI's
    words (`job id N is too large ...`), said before the daemon is asked: the daemon's own
    would name its request's field (`ids N is too large`). The CLI's (cli/param_types.py):
    the dashboard names its form's fields, and stops a request at such a number
    (core/int64.fits) rather than showing a ValueError as a form's message."""
    if job_id > LARGEST:
        raise ValueError(f"job id {job_id} {TOO_LARGE}")
    return job_id


def parse_job_ids(text: str | Sequence[str], hint: str = _HELP) -> list[int]:
    """parse_ids, and none past what the queue stores (check_job_id): the CLI's job ids."""
    return parse_ids(text, largest=check_job_id, hint=hint)


def parse_job_refs(text: str | Sequence[str], word: str, hint: str = _HELP) -> list[int | str]:
    """parse_job_ids, where `word` may be an item of its own too, given back once after the
    ids: `82,last` -> [82, "last"] (the CLI's `last`, which the daemon makes an id). `last`
    was taken only as a whole word: `kill 82,last` was refused, naming `last` as the way."""
    ids: list[int | str] = [*parse_ids(text, largest=check_job_id, hint=hint, word=word)]
    return [*ids, word] if word in split_items(text) else ids


def parse_after_refs(text: str, word: str, shown: str, hint: str = _HELP) -> list[int | str]:
    """parse_job_refs of what a job waits for (`82,last`); a refusal offers `shown` (the
    client's way to write `word`) where a word was given (`--after lats`), not for numbers
    refused as numbers (`job id N is too large`, a range backwards)."""
    try:
        return parse_job_refs(text, word, hint)
    except ValueError as exc:
        if _NUMBERS.fullmatch(text):
            raise
        raise ValueError(f"{exc}, or {shown} (the job submitted last)") from None


_NUMBERS = re.compile(r"[\d\s,-]+")
"""Text of ids alone: digits, ranges and lists (no word to mistake for `last`)."""


_GPU_HELP = "use GPU indices like 0, 0-3 or 0,2"
MAX_GPU_INDEX = 4095
"""The highest GPU index the user may name (nvidia-smi's numbering never comes near it): a
larger one is a typo, and one past SQLite's integers failed with a traceback."""
MOST_GPUS = 64
"""The most GPUs one job may ask for (`--gpus`, a yielder's `gpus`)."""


def within(item: str, shown: str) -> str:
    """` in 'TEXT'` after a bad item of a list, to say where it is; nothing when the item is
    the whole text (`invalid GPU index 'x'`, not `'x' in 'x'`). A long text is cut short
    (`0-99999...` of 5,000 digits was repeated whole)."""
    if item.strip() == shown.strip():
        return ""
    return f" in {shown[:40] + '...' if len(shown) > 50 else shown!r}"


def check_gpu_index(index: int, shown: str) -> None:
    """ValueError, one line, for an index past MAX_GPU_INDEX (`shown`: the option's text)."""
    if index > MAX_GPU_INDEX:
        where = within(str(index), shown)
        raise ValueError(f"GPU {index}{where} is not a GPU index: at most {MAX_GPU_INDEX}")


def parse_gpu_indices(text: str | Sequence[str]) -> list[int]:
    """Sorted, unique GPU indices ("0,2", "0-3"); ValueError with one line saying what is wrong."""

    def check(first: int, last: int, taken: int, shown: str) -> None:
        check_gpu_index(last, shown)

    return _parse_list(text, "GPU", ("GPU index", _GPU_HELP, 0), check)


def parse_gpu_range(item: str, shown: str, hint: str = _GPU_HELP) -> range:
    """One item of a GPU list, an index ("2") or a range ("0-3"), as the indices it names;
    ValueError, one line, naming the item within `shown` and ending in `hint`."""
    first, last = _parse_item(item, shown, "GPU index", hint, 0)
    check_gpu_index(last, shown)
    return range(first, last + 1)


def gpu_index_list(value: object) -> list[int]:
    """GPU indices as a sweep file's `only_gpus` or Python's `only_gpus=` gives them: text as
    --only-gpus takes it ("0,2", "0-3"), one index, or a list of them; ValueError, one line,
    for anything else (1.7 or True is no GPU index)."""
    if isinstance(value, str):
        return parse_gpu_indices(value)
    items = [value] if isinstance(value, int) else value
    if not isinstance(items, list | tuple | set | frozenset | range) or any(
        isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in items
    ):
        raise ValueError(
            f"{value!r} is not GPU indices: give a list of them ([0, 2]), one (2), "
            "or text as --only-gpus takes it ('0,2', '0-3')"
        )
    for index in items:
        check_gpu_index(index, str(value))
    return sorted(set(items))


def _parse_list(
    text: str | Sequence[str],
    what: str,
    item_kind: tuple[str, str, int],
    check: Callable[[int, int, int, str], None],
    word: str | None = None,
) -> list[int]:
    """Items and ranges of `text` as sorted unique numbers; `item_kind` is (noun, hint,
    lowest) for `_parse_item`, `check(first, last, numbers so far, text)` refuses a range;
    an item that is `word` is passed over."""
    shown = text if isinstance(text, str) else " ".join(text)
    items = split_items(text)
    if not any(items):
        raise ValueError(f"no {what} given: {item_kind[1]}")
    numbers: set[int] = set()
    for item in items:
        if item == word:
            continue
        first, last = _parse_item(item, shown, *item_kind)
        check(first, last, len(numbers), shown)
        numbers.update(range(first, last + 1))
    return sorted(numbers)


def _parse_item(
    item: str, shown: str, noun: str = "job id", hint: str = _HELP, lowest: int = 1
) -> tuple[int, int]:
    if not item:
        raise ValueError(f"empty {noun} in {shown!r}: {hint}")
    match = _ID_RE.fullmatch(item)
    if match is None:
        raise ValueError(f"invalid {noun} {item!r}{within(item, shown)}: {hint}")
    first = whole(match.group(1))  # (more digits than int() reads: a LongNumber, too large)
    last = first if match.group(2) is None else whole(match.group(2))
    if first < lowest:
        raise ValueError(f"invalid job id {item!r}{within(item, shown)}: ids start at 1")
    if last < first:
        where = within(item, shown)
        raise ValueError(f"invalid range {item!r}{where}: write it as {last}-{first}")
    return first, last


def number_runs(ids: Iterable[int]) -> list[tuple[int, int]]:
    """The unique numbers as (first, last) runs of consecutive ones: [3, 4, 5, 9] ->
    [(3, 5), (9, 9)]."""
    runs: list[list[int]] = []
    for i in sorted(set(ids)):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return [(a, b) for a, b in runs]


def format_ids(ids: Iterable[int]) -> str:
    """The shortest spec `parse_ids` reads back as `ids`: [3, 4, 5, 9] -> "3-5,9"."""
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in number_runs(ids))


def listed_ids(ids: Iterable[int]) -> str:
    """GPU indices as a line lists them: one by one (`0,1,2`), as ranges past eight
    (`--gpus 0-63` was said as its 64 numbers)."""
    shown = list(ids)
    return ",".join(map(str, shown)) if len(shown) <= 8 else format_ids(shown)


JOBS_THERE_ARE = "`gpuherd ls --all` lists the jobs there are"
"""The hint after ids that name no job, wherever they are named (log, show, kill, --after)."""


def no_job_with(ids: Iterable[int]) -> str:
    """That no job has these ids, and where to find the ones there are: `no job 99: ...`,
    `no job 99, 120-130: ...` (the service's NotFound, a verb on many jobs' line). One id's
    is said without format_ids: `kill 3000-999999` answers (and summarize reads) 997,000."""
    said = str(ids[0]) if isinstance(ids, list) and len(ids) == 1 else said_ids(ids)
    return f"no job {said}: {JOBS_THERE_ARE}"


def said_ids(ids: Iterable[int]) -> str:
    """Ids as a sentence names them: "99, 120-130" (format_ids is the CLI's spec)."""
    return format_ids(ids).replace(",", ", ")


def summarize(
    results: Iterable[tuple[int, bool, str]],
    refusals_shown: int = 10,
    left: Collection[int] = (),
) -> list[tuple[bool, str]]:
    """What a verb on many jobs did, as (ok, line): jobs that got the same answer share a line
    ("jobs 1-40: cancelled"), as do the ids that name no job (the service answers each
    no_job_with([id]): `kill 99` says what `log 99` says), and the jobs refused alike: in the
    same words but for their own id (`job 3: mem (--mem) ...`: "jobs 1-3: mem ..."; `job 3
    already ended (succeeded): `gpuherd retry --hold 3` ...`: "jobs 1-3 already ended
    (succeeded): `gpuherd retry --hold 1-3` ...") or in words naming no job (`after (--after):
    no job 9999 ...`: "jobs 1-5: after (--after): no job 9999 ..."). Those two said a line
    per job (`edit 1-2000 --mem 2GiB` of CPU-only jobs: 10, then the rest), where README
    promises one. Up to `refusals_shown` lines of refusals, then one line lists the rest. A
    verb on a whole sweep stays readable. `left`: the jobs removed, but not all their files
    (not ok, yet no refusal: a line each, and the rest line names them apart, as removed)."""
    done: dict[str, list[int]] = {}  # answer -> ids, in the order first seen
    missing: list[int] = []
    refused: list[tuple[list[int], str]] = []  # (ids, the first one's refusal)
    alike: dict[str, list[int]] = {}  # _alike's words -> the ids refused so
    for job_id, ok, message in results:
        if ok:
            done.setdefault(message, []).append(job_id)
        elif message == no_job_with([job_id]):
            missing.append(job_id)
        elif (words := _alike(job_id, message)) is None or job_id in left:
            refused.append(([job_id], message))  # a line of its own, as it is
        elif words in alike:
            alike[words].append(job_id)
        else:
            refused.append((alike.setdefault(words, [job_id]), message))
    lines = [(True, f"{_jobs(ids)}: {answer}") for answer, ids in done.items()]
    lines += [(False, no_job_with(missing))] if missing else []
    lines += [(False, _refusal(ids, said)) for ids, said in refused[:refusals_shown]]
    rest = [job_id for ids, _ in refused[refusals_shown:] for job_id in ids]
    if kept := [job_id for job_id in rest if job_id in left]:
        said = f"{plural(len(kept), 'more job')} removed, but not all their files either"
        lines.append((False, f"{said}: {format_ids(kept)}"))
    if others := [job_id for job_id in rest if job_id not in left]:
        lines.append(
            (False, f"{plural(len(others), 'more job')} refused too: {format_ids(others)}")
        )
    return lines


_THE_JOB = "\0"
"""Where a refusal's words name its own job (_alike): no message holds a NUL (the daemon
refuses one in any text it keeps)."""
_NUMBER = re.compile(r"(?<![\w.])\d+(?!\w|\.\d)", re.ASCII)
"""A whole number in a refusal's words (not a part of `30GiB`, `1.5` or `v2`)."""
_PLURAL_VERBS = {"is": "are", "has": "have", "was": "were", "waits": "wait"}
"""The verb after `jobs 1-3` where the line of one job said `job 3 is ...`."""


def _alike(job_id: int, message: str) -> str | None:
    """A refusal's words, with _THE_JOB wherever they name its own job: jobs refused alike
    have the same (`job 5: asks 5 GPUs` of job 5 and `job 6: asks 5 GPUs` of job 6 differ);
    None for words that hold _THE_JOB already (said as they are, a line each)."""
    if _THE_JOB in message:
        return None
    own = str(job_id)
    return _NUMBER.sub(lambda number: _THE_JOB if number[0] == own else number[0], message)


def _refusal(ids: Sequence[int], said: str) -> str:
    """The line of the jobs `ids` refused alike, the first in the words `said`: one job's as
    it was said; several named where it named its job (`jobs 1-3 are running: kill it first
    (gpuherd kill 1-3)`), or in front where its words named none (`jobs 1-3: after (--after):
    no job 9`)."""
    words = _alike(ids[0], said)
    if len(ids) == 1 or words is None:
        return said
    if _THE_JOB not in words:
        return f"{_jobs(ids)}: {words}"
    listed = format_ids(ids)
    head, named, tail = words.partition(f"job {_THE_JOB}")
    if named:
        verb, space, after = tail.removeprefix(" ").partition(" ")
        if tail.startswith(" ") and verb in _PLURAL_VERBS:
            tail = f" {_PLURAL_VERBS[verb]}{space}{after}"
        words = f"{head}jobs {listed}{tail}"
    return words.replace(_THE_JOB, listed)


def _jobs(ids: Sequence[int]) -> str:
    """`job 3`, `jobs 1-3,9`: the jobs a line of summarize is about."""
    return f"job {ids[0]}" if len(ids) == 1 else f"jobs {format_ids(ids)}"
