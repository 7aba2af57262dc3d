"""GPUHERD_TOKEN, the dashboard's token from the daemon's environment, checked as the token
file is (docs/dashboard.md, The token): 32 to 256 letters of `A-Z a-z 0-9 _ -`.

It was taken as it was: `GPUHERD_TOKEN=a` guarded the dashboard with one letter, and
`GPUHERD_TOKEN='ab&c#d é'` printed a URL (`?token=ab&c#d é`) that then answered 403. Both
`daemon start` (before a daemon is started) and the daemon's listener (`gpuherd ui`, a daemon
started some other way) refuse such a token in one line, which never repeats it.
"""

from __future__ import annotations

import os
import re

from gpuherd.errors import InvalidValue

VARIABLE = "GPUHERD_TOKEN"
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{32,256}")
"""A token worth keeping: of the letters of secrets.token_urlsafe (43 of them), at least 32."""
NOT_A_TOKEN = (
    "GPUHERD_TOKEN is not a dashboard token: it must be 32 to 256 letters of A-Z a-z 0-9 _ - "
    "(make one with `python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`), or "
    "unset it for the daemon to make its own"
)


def env_token() -> str | None:
    """GPUHERD_TOKEN if it is set (None: it is not, or is empty); InvalidValue, NOT_A_TOKEN,
    if it is no token."""
    token = os.environ.get(VARIABLE)
    if not token:
        return None
    if not TOKEN_SHAPE.fullmatch(token):
        raise InvalidValue(NOT_A_TOKEN)
    return token
