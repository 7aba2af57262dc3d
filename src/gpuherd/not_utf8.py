"""What to say of a file a person wrote that is not UTF-8 text: most such files hold what was
meant, saved in another encoding (Windows PowerShell's `>` writes UTF-16; an older editor,
Latin-1). Said in the words `submit --file` and `run` say it of a file of commands
(cli/job_input.py), not Python's codec's (`'utf-8' codec can't decode byte 0xff in position
0: invalid start byte`), which a sweep file's refusal gave."""

from __future__ import annotations

import codecs

UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def not_utf8(
    name: str, raw: bytes, at: int, meant: str, line: int | None = None, holds: str = ""
) -> str:
    """Why the file `name`, whose bytes `raw` are not UTF-8 from byte `at` on, cannot be
    read, and what to do; `meant` is what it was given as ("a sweep file"). `line`: the
    number of the line `raw` is (a file read line by line: `submit --file`, `run`), else
    counted in `raw`; `holds`: what it would hold if it is what was meant ("holds
    commands"; else "is MEANT")."""
    if raw.startswith(UTF16_BOMS) and line in (None, 1):
        return (
            f"{name} is UTF-16 text (as Windows PowerShell's > writes): save it as UTF-8 "
            "(iconv -f UTF-16 -t UTF-8; in PowerShell, Out-File -Encoding utf8)"
        )
    where = "it holds" if line is None else f"line {line} holds"
    line = line or raw.count(b"\n", 0, at) + 1
    if b"\0" in raw:  # no text of UTF-8 or Latin-1 holds NUL: a program, an archive, an image
        return (
            f"{name} is not text ({where} a NUL byte, as a program or an archive does): give "
            f"{meant}"
        )
    return (
        f"{name} is not UTF-8 text (byte 0x{raw[at]:02x} at line {line}): if it"
        f" {holds or f'is {meant}'}, save it as UTF-8 (from Latin-1: iconv -f LATIN1 -t UTF-8)"
    )
