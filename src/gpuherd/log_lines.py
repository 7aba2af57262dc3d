"""Where the last lines of a log begin, found from its end (`gpuherd log -n N`, `log -f -n N`)."""

from __future__ import annotations

import os
from typing import BinaryIO

DRAWINGS_KEPT = 64 * 1024
"""Of a line redrawn in place (`\\r`), the tail keeps the drawings within this many bytes of
the line's end. tqdm starts every drawing with `\\r` and ends the bar's line only when its
loop ends: a bar that ran for days is one line of hundreds of MB, which the tail of any
length was, read and sent whole. A terminal shows only its last drawing."""


def start_of_last_lines(
    f: BinaryIO, lines: int, block: int = 64 * 1024, drawings: int = DRAWINGS_KEPT
) -> int:
    """Where the last `lines` lines of an open file begin (0 when it has no more than that),
    or, where one of them was redrawn in place (`\\r`) more than `drawings` bytes back from
    its end, its first drawing after that: the lines before it are then left out too, as
    what is printed is the end of the log as it is.

    Read backwards a block at a time: the end of a log of gigabytes costs a read or two. A
    newline that ends the file ends its last line; it does not begin another.
    """
    stop = f.seek(0, os.SEEK_END)
    if stop:
        f.seek(stop - 1)
        if f.read(1) == b"\n":
            stop -= 1
    found, position, line_end = 0, stop, stop
    while position > 0:
        size = min(block, position)
        position -= size
        f.seek(position)
        data = f.read(size)
        # Each character's last place is looked up apart, and again only once passed: one
        # rfind of both per step would rescan a block of newlines for a `\r` it lacks.
        newline, carriage = data.rfind(b"\n"), data.rfind(b"\r")
        while newline != -1 or carriage != -1:
            if newline > carriage:
                found += 1
                if found == lines:
                    return position + newline + 1
                line_end = position + newline
                newline = data.rfind(b"\n", 0, newline)
            else:
                if line_end - (position + carriage + 1) > drawings:
                    return position + carriage + 1
                carriage = data.rfind(b"\r", 0, carriage)
    return 0
