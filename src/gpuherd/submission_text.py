"""The text of a submission, checked: variable names an environment can hold, no NUL byte
where a process would receive it, UTF-8 where a job is stored and shown (a part of
submission.py); and how a message names a job's field, for every kind of client."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuherd.core.env_vars import check_variable, is_variable_name
from gpuherd.core.text import shell_word
from gpuherd.core.units import BARE_LEAST
from gpuherd.errors import InvalidValue


def field(name: str, value: str = "", flag: str = "") -> str:
    """A job's field as a message names it: its name in the API and the Python API, then the
    CLI's option (`gpus (--gpus)`, `gpus 0 (--gpus 0)`). The daemon's messages reach all
    three kinds of client, and each must find in them what it typed."""
    option = flag or "--" + name.replace("_", "-")
    return f"{name} {value} ({option} {value})" if value else f"{name} ({option})"


def blank(text: str | None) -> str | None:
    """What is wrong with a name (or project) that names nothing: '' (`--name "$RUN"`, RUN
    unset) or only white space, shown as no name by `ls` and found by no `--name`; None for
    one given, or none."""
    if text is None or text.strip():
        return None
    return f"{shell_word(text)} is only white space" if text else "is empty"


def check_given(where: str, given: Mapping[str, Any]) -> None:
    """InvalidValue for what a submission or an edit gives (`given`, by field) that no job
    may have and check_spec does not see: a name or project with a control character, an
    --env name no shell takes (`1A`, `a-b`) or one of gpuherd's own, a memory request of a
    few bytes. Only what was given: a value an older gpuherd stored stays the job's."""
    for what in ("name", "project"):
        if said := control_in(what, given.get(what)):
            raise InvalidValue(f"{where}{said}")
    overrides = given.get("env_overrides") or {}
    # As the CLI's --env, Python's env= and the dashboard check them, in their words: a shell
    # drops such a name, and the job never saw it. (Only the name: a size is env_problem's.)
    if bad := next((name for name in overrides if not is_variable_name(name)), None):
        try:
            check_variable(bad, "")
        except ValueError as exc:
            raise InvalidValue(f"{where}{field('env_overrides', '', '--env')}: {exc}") from None
    reject_reserved_names(where, overrides)
    if said := under_least(mem=given.get("mem"), ram=given.get("ram")):
        raise InvalidValue(f"{where}{said}")


def control_in(what: str, text: str | None) -> str | None:
    """The refusal of a name (or project) that holds a control character (a line break, a
    tab, ESC): `show` and `edit` printed it raw, over two lines, `ls` as spaces, and the job's
    GPUHERD_JOB_NAME (and an `-o %x.log` file name) carried it. None for one without."""
    if text is None or text.isprintable():  # (one C call: printable text is the rule)
        return None
    char = next((c for c in text if _is_control(c)), None)
    if char is None:  # (other unprintable characters, letters of no script: left alone)
        return None
    return (
        f"{field(what)} {shell_word(text)} holds a control character ({char!r}): give a "
        f"{what} of one line, without tabs"
    )


def _is_control(char: str) -> bool:
    """A C0 or C1 control character (NEL, U+0085, is a line break; U+009B the 8-bit CSI
    that begins an escape sequence), DEL, or a line or paragraph separator (U+2028, U+2029):
    each breaks or recolours the line a name is shown on."""
    return char < " " or "\x7f" <= char <= "\x9f" or char in "\u2028\u2029"


def reject_bad_names(where: str, *envs: Mapping[str, str]) -> None:
    """InvalidValue for a variable name no environment can hold (empty, or with an '=')."""
    for env in envs:
        if "" in env or "=" in "".join(env):  # one join: an environment has ~100 variables
            bad = next(name for name in env if not name or "=" in name)
            raise InvalidValue(
                f"{where}{bad!r} is not an environment variable name: "
                "give NAME=VALUE, with no '=' in NAME"
            )


GPUHERD_SETS = {
    "CUDA_DEVICE_ORDER": "PCI_BUS_ID, so that the GPU indices are nvidia-smi's",
    "GPUHERD_JOB_ID": "the job's id",
    "GPUHERD_JOB_NAME": "the job's name",
    "GPUHERD_ATTEMPT": "the attempt's number",
    "GPUHERD_JOB_DIR": "the job's folder",
    "GPUHERD_ATTEMPT_DIR": "the attempt's folder",
    "GPUHERD_ATTEMPT_KEY": "the attempt's key, by which gpuherd finds its processes",
}
"""The variables gpuherd sets in every job's environment (job_environment.job_env), over any
--env of the same name: such a pair was taken, shown by `show`, and silently replaced. (Not
CUDA_VISIBLE_DEVICES: replaced too, and said so by the client, device_hints.py.)"""


def reject_reserved_names(where: str, overrides: Mapping[str, str]) -> None:
    """InvalidValue for a job's own variable (`--env`) that the job would never see as given:
    GPUHERD_TOKEN, a secret of the daemon's (the dashboard's token) that no job is given (the
    engine removes it; the submitter's environment may hold it: dropped, not refused), and
    those gpuherd sets itself (GPUHERD_SETS)."""
    if "GPUHERD_TOKEN" in overrides:
        raise InvalidValue(
            f"{where}{field('env')}: GPUHERD_TOKEN is the daemon's secret (the dashboard's "
            "token), never given to a job: leave it out, or pass the value under another name"
        )
    if taken := next((name for name in overrides if name in GPUHERD_SETS), None):
        raise InvalidValue(
            f"{where}{field('env')}: gpuherd sets {taken} in every job ({GPUHERD_SETS[taken]}),"
            " over yours: leave it out, or pass the value under another name"
        )


def reject_nul(where: str, **fields: str | Mapping[str, str]) -> None:
    """No NUL byte in text that reaches a process's argv, environment or a path; and only
    UTF-8 text where a job is stored and shown as text (JSON, SQLite): a lone surrogate, as
    Python gives the bytes it cannot decode (a path, an argument, an environment variable),
    was stored (or failed the store) and then no `show` could encode it.

    `env`, the submitter's whole environment, keeps such bytes: stored as JSON escapes, never
    shown, they reach the job as they were (a process's environment is bytes)."""
    for name, value in fields.items():
        # One join instead of a test per variable: a submitted environment has ~100 of them.
        text = value if isinstance(value, str) else "".join([*value.keys(), *value.values()])
        if "\0" in text:
            raise InvalidValue(
                f"{where}a NUL byte in {name}: remove it (no program can receive it)"
            )
        if not text.isascii():  # (one test of the joined text: most environments pass)
            try:
                text.encode("utf-8", "surrogateescape" if name == "env" else "strict")
            except UnicodeEncodeError:
                raise InvalidValue(f"{where}{_not_utf8(name, value)}") from None


_AS_TEXT = "gpuherd keeps a job as text"
_NOT_UTF8: dict[str, tuple[str, str]] = {
    "command": (
        "the command",
        'put those bytes in an environment variable (export V=...; "$V" in the command) '
        "or in a file",
    ),
    "name": (field("name"), "give a name in UTF-8"),
    "project": (field("project"), "give a project in UTF-8"),
    "sweep": ("the sweep's name", "give a sweep name in UTF-8"),
}
"""How a text field is named when it is not UTF-8, and what to do."""
_PATHS = {
    "cwd": ("the working directory", "run from (or --cwd to) a folder whose path is UTF-8"),
    "folder": (
        "the job's folder",
        "give a folder whose path is UTF-8 (`gpuherd run --output-dir`, a sweep's results_dir)",
    ),
}


def _not_utf8(name: str, value: str | Mapping[str, str]) -> str:
    """What is wrong with a field holding text that is not UTF-8 (or, in `env`, that no
    program can receive)."""
    if isinstance(value, str):
        if name in _PATHS:
            what, todo = _PATHS[name]
            return f"{what} {_escaped(value)} ({name}) is not UTF-8: {todo}"
        what, todo = _NOT_UTF8.get(name, (name, f"give {name} in UTF-8"))
        return f"{what} holds bytes that are not UTF-8 ({_bad_char(value)}): {_AS_TEXT}; {todo}"
    for key, text in value.items():
        if name == "env":  # passed on as bytes: only what is no byte is refused
            if _unsendable(key) or _unsendable(text):
                return (
                    f"env: the variable {_escaped(key)} holds a lone surrogate that stands for "
                    "no byte: no program can receive it; give UTF-8 text"
                )
        elif _bad_char(key):
            return (
                f"{field(name, '', '--env')}: the name {_escaped(key)} holds bytes that are not "
                f"UTF-8 ({_bad_char(key)}): {_AS_TEXT}; give a name in UTF-8"
            )
        elif _bad_char(text):
            return (
                f"{field(name, '', '--env')}: the value of {_escaped(key)} holds bytes that are "
                f"not UTF-8 ({_bad_char(text)}): {_AS_TEXT}; export {_escaped(key)} in your "
                "shell instead of giving --env: your environment reaches the job byte for byte"
            )
    return f"{name} is not UTF-8 text: give UTF-8 text"


def reject_not_utf8_in(where: str, value: object, path: str = "") -> None:
    """Refuse text that is not UTF-8 anywhere in a nested request (a sweep's spec: its
    template, values, results_dir), naming where it is: it failed deep in the daemon."""
    if isinstance(value, str) and not value.isascii() and (bad := _bad_char(value)):
        what = f"{path} " if path else ""
        raise InvalidValue(f"{where}{what}holds bytes that are not UTF-8 ({bad}): give UTF-8 text")
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        reject_not_utf8_in(where, key, path)
        reject_not_utf8_in(where, item, f"{path}.{key}" if path else str(key))


def _bad_char(text: str) -> str:
    """`\\xff at character 7`: the first character of `text` UTF-8 cannot encode ('': none)."""
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        return f"{_escaped(text[exc.start])} at character {exc.start + 1}"
    return ""


def _unsendable(text: str) -> bool:
    """Not even bytes: a surrogate that stands for no undecodable byte (JSON's \\ud800)."""
    try:
        text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return True
    return False


def _escaped(text: str) -> str:
    return printable(text if len(text) <= 200 else text[:200] + "…")


def printable(text: str) -> str:
    """The text with its undecodable bytes as \\xff (other surrogates as \\ud800): what
    JSON's UTF-8 can carry and a terminal can show."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode()
    return raw.decode("utf-8", "backslashreplace")


def under_least(**requests: int | None) -> str | None:
    """A memory request (mem, ram) of a few bytes, under BARE_LEAST: refused, as the CLI and
    the Python API refuse such a number without a unit. A raw request's `"mem": 16` (16 GiB
    meant) was taken as 16 bytes, and any number of such jobs shared a GPU."""
    for name, value in requests.items():
        if value is not None and 0 < value < BARE_LEAST:
            meant, scale = ("GiB", 2**30) if value < 1024 else ("MiB", 2**20)
            return (
                f"{field(name)} {value:,} B is under 1 MiB, the least a job may ask for (in a"
                f" request, {name} is bytes: {value} {meant} is {value * scale})"
            )
    return None
