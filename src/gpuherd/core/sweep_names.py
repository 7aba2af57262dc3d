"""Sweep folder names and command templates: pure text functions, no I/O.

Part of core/sweep.py (which re-exports every public name here).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shlex
import string
from collections.abc import Collection, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from gpuherd.core.sweep_quoting import places, quote_for

RESERVED = ("run_dir", "sweep", "index")
"""Placeholders every command has; no parameter may take these names."""
MAX_FOLDER_BYTES = 100
_NAME_CHARS = "._+-@"
"""Besides letters and digits, the characters a folder name keeps."""


class SweepError(ValueError):
    """An invalid sweep. `loc` is the key path at fault, e.g. ("grid", 0, "lr")."""

    def __init__(self, message: str, loc: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.loc = loc


def value_text(value: Any) -> str:
    """A value as commands and folder names show it: "0.1", "1e-05", "32", "adam", "[1,2]";
    booleans and null as Python spells them ("True", "None"), as GPU Task Scheduler names its
    folders and earlier sweeps named theirs: a different spelling would run done points again."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):  # through int()/float(): numpy's repr is "np.float64(..)"
        return repr(int(value) if isinstance(value, int) else float(value))
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _clean(text: str, seps: str) -> str:
    return "".join(c if (c.isalnum() or c in _NAME_CHARS) and c not in seps else "_" for c in text)


def folder_name(
    params: Mapping[str, Any],
    varying_keys: Sequence[str],
    item_sep: str = ",",
    kv_sep: str = "=",
    *,
    index: int = 0,
) -> str:
    """`lr=0.1,bs=32` from the varying keys, in their order; `point_<index>` if there are none.

    Other characters than letters, digits and `._+-@` (and a leading `.` or `-`) become `_`;
    then, or when the name is over MAX_FOLDER_BYTES, it ends in `~` and 8 hex digits of a hash
    of the exact values, so names stay legal, short and unique.
    """
    pairs = [(k, value_text(params[k])) for k in varying_keys if k in params]
    if not pairs:
        return f"point_{index}"
    seps = item_sep + kv_sep
    name = item_sep.join(f"{_clean(k, seps)}{kv_sep}{_clean(v, seps)}" for k, v in pairs)
    exact = name == item_sep.join(f"{k}{kv_sep}{v}" for k, v in pairs)
    if name[0] in ".-":
        name, exact = "_" + name[1:], False
    if exact and len(name.encode()) <= MAX_FOLDER_BYTES:
        return name
    digest = hashlib.sha256(json.dumps(pairs, ensure_ascii=False).encode()).hexdigest()[:8]
    head = name.encode()[: MAX_FOLDER_BYTES - 9].decode("utf-8", "ignore")
    return f"{head}~{digest}"


_Field = tuple[str, str | None, str | None, str | None]


def _parse_template(template: str) -> list[_Field]:
    try:
        return list(string.Formatter().parse(template))
    except ValueError as exc:
        raise SweepError(
            f"command: {exc} in {template!r} (write {{{{ and }}}} for literal braces)",
            ("command",),
        ) from None


def template_fields(template: str) -> list[str]:
    """The placeholder names in `template`, in order, repeats included."""
    return [name for _, name, _, _ in _parse_template(template) if name is not None]


def is_bare_command(template: str, has_params: bool) -> bool:
    """A template with no placeholder and no parameters: one point running a fixed command.
    Most often a sweep's name typed where the template goes (`sweep m`, meaning to open the
    sweep m), whose one job then fails running `m`: the CLI and the Python API refuse it."""
    if has_params:
        return False
    try:
        return not template_fields(template)
    except SweepError:
        return False  # a template that does not parse: check_template says what is wrong


def check_template(template: str, names: Collection[str]) -> None:
    """Raise SweepError for a placeholder that is not a parameter or cannot be rendered; each
    says how to write the braces as they are (`_literal_hint`): most such fields are shell's or
    awk's own (`${DATA_DIR}`, `awk '{print $1}'`, `find -exec rm {} +`), not placeholders."""
    for before, name, spec, conversion in _parse_template(template):
        if name is None:
            continue
        field = _field_text(name, spec, conversion)
        hint = _literal_hint(before, field, {*names, *RESERVED})
        if not name or _is_position(name):
            raise SweepError(
                f"command: placeholder {field} needs a parameter name; {hint}", ("command",)
            )
        if name not in names and name not in RESERVED:
            raise SweepError(
                f"command: placeholder {field} is not a parameter; parameters: "
                f"{', '.join(names) or '(none)'} (and {', '.join(RESERVED)}); {hint}",
                ("command",),
            )
        if conversion not in (None, "r", "s", "a") or "{" in (spec or ""):
            raise SweepError(
                f"command: placeholder {field}: unsupported conversion or nested placeholder;"
                f" {hint}",
                ("command",),
            )


_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]")
"""What the shell takes as `$NAME` as well as `${NAME}` (a variable, or $0 to $9)."""


_INNER = re.compile(r"(\{[A-Za-z_][A-Za-z0-9_]*\})")
"""A placeholder by name alone inside a refused field (split out, kept: its own group)."""


def _literal_hint(before: str, field: str, known: Collection[str]) -> str:
    """How to write `field` (a refused placeholder's text, braces included) as it stands, the
    literal text `before` it in the template ending where it starts: doubled braces, but for
    the placeholders of `known` parameters in it (`{"loss": {lr}}` is `{{"loss": {lr}}}`: all
    doubled, its `{lr}` printed itself), and for a shell variable (`${DATA_DIR}`: a `$` before
    it) that, or `$DATA_DIR` when it is a plain name (not `${X:-default}`, which needs its
    braces)."""
    # (split's odd parts are the placeholders it found: a whole field that is none, as `{0}`
    # is, stays doubled even where a parameter `0` is known; kept, the hint was the field)
    doubled = "".join(
        part if i % 2 and part[1:-1] in known else part.replace("{", "{{").replace("}", "}}")
        for i, part in enumerate(_INNER.split(field))
    )
    if before.endswith("$") and field != "{}":  # (`${}` is no shell variable either)
        name = field[1:-1]
        plain = f" or ${name}" if _SHELL_NAME.fullmatch(name) else ""
        return f"for the shell variable ${field}, write ${doubled}{plain}"
    return f"write {{{{ and }}}} for literal braces: {doubled}"


def _field_text(name: str, spec: str | None, conversion: str | None) -> str:
    """A field as the template wrote it, from what string.Formatter parsed out of it (an
    empty spec, `{a:}`, shows as none: the same field)."""
    return (
        "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
    )


def render(template: str, params: Mapping[str, Any], run_dir: str, sweep: str, index: int) -> str:
    """The command for one point: each placeholder's value quoted for where it stands,
    bare or inside the template's own quotes (sweep_quoting.py); `{{`/`}}` are braces."""
    specials: dict[str, Any] = {"run_dir": run_dir, "sweep": sweep, "index": index}
    out: list[str] = []
    check_template(template, list(params))
    pieces = _parse_template(template)
    where = places(tuple(literal for literal, _, _, _ in pieces))
    for (literal, name, spec, conversion), place in zip(pieces, where, strict=True):
        out.append(literal)
        if name is not None:
            value = specials[name] if name in specials else params[name]
            out.append(quote_for(place, _format(name, value, spec or "", conversion)))
    return "".join(out)


def _format(name: str, value: Any, spec: str, conversion: str | None) -> str:
    if conversion is not None:
        value = {"r": repr, "a": ascii, "s": value_text}[conversion](value)
    if not spec:
        return value_text(value)
    try:
        return format(value, spec)
    except (TypeError, ValueError) as exc:
        number = _as_number(value, spec)
        give = "" if number is None else f"give it as {number!r}, or "
        raise SweepError(
            f"command: {{{name}:{spec}}} cannot format {value!r}: {exc}: "
            f"{give}drop the format spec ({{{name}}})",
            ("command",),
        ) from None


def _as_number(value: Any, spec: str) -> int | float | None:
    """The number text such as `1e-3` or `007` means, written as one that stays a number:
    the CLI keeps a value that does not read back the same as text (`-p lr 1e-3` runs
    `--lr 1e-3`, as typed), so `{lr:.1e}` has text to format, and 0.001 is the way to say
    it; a whole one as an int where the spec wants one (`{n:d}` of `1e3`: 1000). None for
    text that is no finite number, for what is not text, and where the number would not
    format either (`{x:x}` of `1.5`, a spec no type takes)."""
    if not isinstance(value, str):
        return None
    for read in (int, float):
        try:
            number = read(value)
        except ValueError:
            continue
        if not math.isfinite(number):
            return None
        for given in (number, int(number)) if number == int(number) else (number,):
            try:
                format(given, spec)
            except (TypeError, ValueError):
                continue
            return given
        return None
    return None


def _is_position(name: str) -> bool:
    """Whether a placeholder's name is a position (`{0}`, as str.format numbers its
    arguments), which no parameter of a template can be named."""
    return name.isdigit()


def check_key(key: object, where: str, loc: tuple[str | int, ...], *, stored: bool = False) -> None:
    """Raise SweepError for a name no parameter may have (the one check of every way a sweep
    is given: -p, a sweep file, Python, POST /api/v1/sweeps); of a `stored` sweep's (taken
    before), only those that could not work at all: `sweep ls` lists it, `status` shows it."""
    if not isinstance(key, str) or not key:
        raise SweepError(f"{where}: {key!r}: a parameter name must be a non-empty string", loc)
    if key in RESERVED:
        raise SweepError(f"{where}.{key}: reserved for the placeholder {{{key}}}; rename it", loc)
    # (taken, such a name could only name folders: a template's `{0}` is refused)
    if _is_position(key) and not stored:
        raise SweepError(
            f"{where}.{key}: a name of digits only cannot be a placeholder ({{{key}}} is a"
            f" position, not a name); name it, e.g. p{key}",
            loc,
        )


class SweepTypeError(SweepError, TypeError):
    """A SweepSpec field of the wrong kind (`SweepSpec(item_sep=1)`): a TypeError, as
    Python's own for a wrong argument and the Python API's WrongType are (the core imports
    nothing of the project, so not that class), and still a SweepError, so every caller that
    says a SweepError in one line says this one too."""


def check_seps(item_sep: str, kv_sep: str) -> None:
    for which, sep in (("item", item_sep), ("kv", kv_sep)):
        if not isinstance(sep, str):  # (len() of an int raised a bare TypeError)
            raise SweepTypeError(
                f"{which}_sep is one punctuation character as text"
                f" ({'=' if which == 'kv' else ','!r}), got {sep!r} ({type(sep).__name__})",
                ("separators", which),
            )
        if len(sep) != 1 or sep.isalnum() or sep.isspace() or sep in "/\\~_.'\"\0":
            raise SweepError(
                f"separators.{which}: {sep!r} must be one punctuation character other than"
                " / \\ ~ _ . and quotes",
                ("separators", which),
            )
    if item_sep == kv_sep:
        raise SweepError(f"separators: item and kv are both {item_sep!r}", ("separators",))


def default_sweep_name(template: str) -> str:
    """`train-3f2a1b`: the script's stem and a hash of the template, so submitting the same
    template again names the same sweep, and another template another one."""
    try:
        words = shlex.split(template)
    except ValueError:
        words = template.split()
    stem = next((PurePosixPath(w).stem for w in words if w.endswith(".py")), None)
    stem = stem or (PurePosixPath(words[0]).name if words else "sweep")
    clean = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("._-")[:40] or "sweep"
    # (bytes that are not UTF-8 hash as they are: the daemon refuses them, naming where)
    digest = hashlib.sha256(template.encode("utf-8", "surrogateescape")).hexdigest()
    return f"{clean}-{digest[:6]}"


def sweep_option(name: str) -> str:
    """`--sweep NAME` as a shell passes it to `gpuherd ls` (a name may start with -)."""
    quoted = shlex.quote(name)
    return f"--sweep={quoted}" if name.startswith("-") else f"--sweep {quoted}"
