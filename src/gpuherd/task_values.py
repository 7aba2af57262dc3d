"""Python values as JSON holds them: numpy's as Python's (the Python API's parameters, a
task's return value), and a task's return value made storable in result.json (worker.py).

Only the standard library is imported, and numpy never (a value is converted only when its
type comes from numpy): the worker imports this module before the user's code.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

JSON_KEYS = (str, int, float, bool, type(None))
"""What json.dumps takes as a dict key (it writes the numbers and None as text)."""
NOTED_MAX = 5
"""How many unstorable values a note names (then "and N more")."""
INT_DIGITS_READ = sys.int_info.default_max_str_digits
"""The most digits of an int Python writes as text or reads from JSON, unless told otherwise
(4,300): a longer one failed the job after the function ended (int-to-str's ValueError), and
job.result() could not have read it back. It is stored as text."""
INT_DIGITS_WRITTEN = 100_000
"""A longer int is stored as its length alone: Python 3.11 writes an int's digits in a time
that grows as their square (0.1 s for 100,000 digits, 1 s for 300,000, minutes for 10**7)."""
_LONG_INT = 10**INT_DIGITS_READ


def is_numpy(value: Any) -> bool:
    module = type(value).__module__
    return module == "numpy" or module.startswith("numpy.")


def from_numpy(value: Any) -> Any:
    """A numpy scalar as the Python number it holds, an array as lists of them; anything
    else as it is (nested lists and dicts are the callers' to walk). float16 and float32 go
    by their shortest text, as numpy shows them: `.item()` widens np.float32(0.01) to
    0.009999999776482582, which then names folders and reaches the task."""
    if not is_numpy(value):
        return value
    dtype = getattr(value, "dtype", None)
    if getattr(dtype, "kind", None) == "f" and getattr(dtype, "itemsize", 8) != 8:
        # Narrow floats by their text (in C: fast for large arrays too); long doubles,
        # which .item() keeps as numpy's, rounded to a Python float.
        narrow = dtype.itemsize < 8  # type: ignore[union-attr]
        wide = value.astype(str).astype(float) if narrow else value.astype(float)
        return wide.tolist()
    convert = getattr(value, "tolist", None)  # ndarray.tolist(), and a numpy scalar's
    return convert() if callable(convert) else value


class Storable:
    """A task's return value made storable as JSON, and what it could not store as it was."""

    def __init__(self, value: Any) -> None:
        self.noted: list[str] = []
        self._open: set[int] = set()  # the containers being walked, to see a cycle
        try:
            self.value = self._walk(value, "result")
        except RecursionError:  # json.dumps could not write it either
            self.noted = []
            self.value = self._text(value, "result", "a value nested too deep to walk")

    def note(self) -> str | None:
        """One line naming what was stored as its text, or None if everything was stored."""
        if not self.noted:
            return None
        named = ", ".join(self.noted[:NOTED_MAX])
        more = len(self.noted) - NOTED_MAX
        named += f" and {more} more" if more > 0 else ""
        return (
            "the return value was stored in result.json, with what JSON cannot hold as its "
            f"text: {named}"
        )

    def _walk(self, value: Any, where: str) -> Any:
        value = _scalar(value)
        if isinstance(value, int) and not -_LONG_INT < value < _LONG_INT:
            return self._long_int(value, where)
        if isinstance(value, str) and _SURROGATE.search(value):
            return self._escaped(value, where)
        if value is None or isinstance(value, str | int | float):  # bool is an int
            return value
        if isinstance(value, dict | list | tuple | set | frozenset):
            if id(value) in self._open:
                return self._text(value, where, "a reference to itself")
            self._open.add(id(value))
            try:
                return self._container(value, where)
            finally:
                self._open.discard(id(value))
        try:  # anything else JSON takes (a subclass json.dumps knows)
            json.dumps(value)
        except (TypeError, ValueError, RecursionError):
            return self._text(value, where, _a(type(value)))
        return value

    def _container(self, value: Any, where: str) -> Any:
        if isinstance(value, dict):
            found: dict[Any, Any] = {}
            taken = {key for key in value if _plain_text(key)}  # (text keys keep theirs)
            for key, item in value.items():
                plain_key = _scalar(key)
                if isinstance(key, str) and not _plain_text(key):
                    plain_key = self._escaped(key, f"{where}[<a key>]")
                elif isinstance(plain_key, int) and not -_LONG_INT < plain_key < _LONG_INT:
                    plain_key = self._long_int(plain_key, f"{where}[<a key>]")
                elif not isinstance(plain_key, JSON_KEYS):
                    plain_key = self._text(key, f"{where}[{_shown(key)}]", _a(type(key), "key"))
                if not _plain_text(key):
                    plain_key = self._unique_key(key, plain_key, taken, where)
                found[plain_key] = self._walk(item, f"{where}[{_shown(plain_key)}]")
            return found
        items = list(value)
        if isinstance(value, set | frozenset):  # a list, in order when its items sort
            try:
                items = sorted(items)
            except Exception:  # TypeError, or whatever an item's own __lt__ raises
                pass
        return [self._walk(item, f"{where}[{i}]") for i, item in enumerate(items)]

    def _unique_key(self, key: Any, plain_key: Any, taken: set[str], where: str) -> Any:
        """`plain_key`, a key that was not text, as it is, unless another key of its dict is
        written as the same text (JSON's: `1`, `1.5`, `true`, `null`), `{1: 0.25, "1":
        0.75}`: then that text and its type, `'1 (int)'`, noted. One of the two values was
        lost without a word (json.dumps wrote the key twice, and JSON keeps the last)."""
        text = plain_key if isinstance(plain_key, str) else json.dumps(plain_key)
        if text not in taken:
            taken.add(text)
            return plain_key
        kind, n = type(key).__qualname__, 2
        stored = f"{text} ({kind})"
        while stored in taken:
            stored, n = f"{text} ({kind} {n})", n + 1
        self.noted.append(
            f"{where}[{_shown(key)}] ({_a(type(key), 'key')} written {text!r}, as another key "
            f"is: stored as {stored!r})"
        )
        taken.add(stored)
        return stored

    def _long_int(self, value: int, where: str) -> str:
        """An int too long for Python to read back (INT_DIGITS_READ) as the text of its
        digits, or, longer than INT_DIGITS_WRITTEN, as its length."""
        digits = _digits(value)
        what = f"an int of {digits:,} digits, over the {INT_DIGITS_READ:,} Python reads back"
        if digits > INT_DIGITS_WRITTEN:
            self.noted.append(f"{where} ({what}, stored as its length: too long to write out)")
            return f"<an int of {digits:,} digits>"
        self.noted.append(f"{where} ({what})")
        with _digits_unlimited():
            return str(int(value))

    def _escaped(self, value: str, where: str) -> str:
        """Text holding a surrogate (a file name Python decoded with "surrogateescape") with
        each written as its escape, `\\udc80` as those six characters: json.dumps wrote it
        as JSON's escape of the surrogate, which no UTF-8 encodes, and the daemon refuses
        (json_parse.LONE_SURROGATE); each view of the point's sweep failed on it. (Two that
        make a pair too: JSON would give them back as the one character they stand for.)"""
        escaped = value.encode("utf-8", "backslashreplace").decode("utf-8")
        self.noted.append(f"{where} (text holding a surrogate, no character: as {escaped!r})")
        return escaped

    def _text(self, value: Any, where: str, what: str) -> str:
        self.noted.append(f"{where} ({what})")
        return _shown(value, repr_=False)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _plain_text(key: Any) -> bool:
    """Whether `key` is text JSON holds as it is (no surrogate: _escaped)."""
    return isinstance(key, str) and not _SURROGATE.search(key)


def _scalar(value: Any) -> Any:
    """A numpy scalar or array as Python's; else one with `.item()` (a torch tensor of one
    number) as its number, one with `.tolist()` as its list; anything else as it is."""
    if is_numpy(value):
        return from_numpy(value)
    if isinstance(value, str | int | float | dict | list | tuple | set | frozenset):
        return value
    for method in ("item", "tolist"):
        convert = getattr(value, method, None)
        if callable(convert):
            try:
                return convert()
            except Exception:  # torch: "a Tensor with 2 elements cannot be converted"
                continue
    return value


def _digits(value: int) -> int:
    """How many digits `value` has, without writing them (what takes the time)."""
    number = abs(int(value))
    digits = int((number.bit_length() - 1) * 0.30102999566398120) + 1  # (log10(2): 1 short at most)
    return digits + 1 if number >= 10**digits else digits


@contextlib.contextmanager
def _digits_unlimited() -> Iterator[None]:
    """Python's limit on an int's digits lifted (0: none), then put back as it was."""
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(before)


def _a(kind: type, what: str = "") -> str:
    """ "a tuple key", "an Obj": what a value stored as its text was."""
    name = kind.__qualname__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}" + (f" {what}" if what else "")


def _shown(value: Any, repr_: bool = True) -> str:
    """`repr(value)` (or its `str`), or its type's name if that raises."""
    try:
        return repr(value) if repr_ else str(value)
    except Exception:
        return f"<{type(value).__qualname__} object>"


__all__ = ["Storable", "from_numpy", "is_numpy"]
