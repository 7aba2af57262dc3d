"""Whether a cluster with token authentication takes this daemon, asked before `ray.init`.

`ray.init` on a cluster that refuses the driver's token, or gets none, tries again for 20 s,
then says only `Failed to connect to Ray cluster at …` (the reason is in its C++ client's log
lines). Ray's own GCS client, made here once with the token `ray.init` would send, is told at
once (`AuthenticationError`), so a start is refused in a second, with one line saying what to
set. A port that accepts connections but does not answer as a GCS (a hung head, another
service) is told too, where `ray.init` would retry for minutes. Only the GCS is asked, for a
`host:port` or `auto` address: a `ray://` address's Ray Client server says what it says
through `ray.init`.

What Ray 2.60 sends (worker.py, `ray.init`): a token only with RAY_AUTH_MODE=token, except for
a cluster `auto` finds on this machine (no RAY_ADDRESS), where a token found turns it on; the
token is RAY_AUTH_TOKEN, else the file RAY_AUTH_TOKEN_PATH names, else ~/.ray/auth_token.
"""

from __future__ import annotations

import os
from typing import Any

import ray._raylet

from gpuherd.gpus.base import ProbeError

_raylet: Any = ray._raylet  # its GCS client (InnerGcsClient) is not in Ray's type stubs

CHECK_TIMEOUT_MS = 2000
"""How long Ray's GCS client may take to connect here; a GCS answers an auth check at once.
Ray's own connection waits come on top: a hung GCS (or another service) is told in ~12 s."""
TOKEN_HELP = (
    "the cluster's token (`ray get-auth-token` on its head prints it) in RAY_AUTH_TOKEN or "
    "~/.ray/auth_token"
)


def effective(address: str) -> str:
    """The address `ray.init(address)` uses: RAY_ADDRESS, when set, stands for "auto"."""
    return (os.environ.get("RAY_ADDRESS") or address) if address == "auto" else address


def check_token(address: str, target: tuple[str, int], cluster: str) -> str | None:
    """Raise ProbeError (one line) when the GCS at `target` (where `ray.init(address)`
    connects) would refuse this process's token, or when RAY_AUTH_MODE=token finds none.
    `cluster` names the cluster as the line should. Return why nothing there answers as a
    GCS (hung, or another service on that port): `ray.init` would wait minutes on it, then
    fail. None otherwise; anything else is left to `ray.init`."""
    if "://" in effective(address):  # a Ray Client server, not a GCS
        return None
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
        from ray.exceptions import AuthenticationError, RpcError

        # Ray's GCS client, with a timeout of our own: GcsClient's waits 40 s for no GCS.
        connect_gcs = _raylet.InnerGcsClient.standalone
    except (ImportError, AttributeError):  # another Ray: `ray.init` alone says what is wrong
        return None
    if effective(address) == "auto":
        # What `ray.init("auto")` does for a cluster it finds on this machine, done first here.
        maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    missing = missing_token()
    if missing is not None:
        raise ProbeError(
            f"RAY_AUTH_MODE=token, but no token for {cluster} is found here ({missing}): "
            f"put {TOKEN_HELP}"
        )
    host, port = target
    gcs = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"  # an IPv6 host in brackets
    try:
        connect_gcs(gcs, None, CHECK_TIMEOUT_MS)
    except AuthenticationError:
        raise ProbeError(refused(cluster)) from None
    except RpcError as exc:  # a GCS answers at once; `ray.init` would try for minutes
        return f"no answer from a Ray GCS: {str(exc).rstrip('.')}"
    except Exception:  # `ray.init` finds out and says so
        return None
    return None


def missing_token() -> str | None:
    """Ray's words when RAY_AUTH_MODE=token finds no token here, else None: asked first, as
    Ray's GCS client (a daemon's) and GCS server (`gpuherd ray-local`'s head) abort on it."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            ensure_token_if_auth_enabled,
        )
        from ray.exceptions import AuthenticationError
    except ImportError:  # another Ray: it says what is wrong itself
        return None
    try:
        ensure_token_if_auth_enabled(None, create_token_if_missing=False)
    except AuthenticationError as exc:
        return str(getattr(exc, "message", exc))
    return None


def refused(cluster: str) -> str:
    """Why the cluster refused this daemon, and what to set: no token sent, or a wrong one."""
    if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
        return (
            f"{cluster} uses token authentication, and this daemon sends it no token "
            "(RAY_AUTH_MODE is not `token` here): start the daemon with RAY_AUTH_MODE=token "
            f"and {TOKEN_HELP}"
        )
    if os.environ.get("RAY_AUTH_TOKEN"):
        source = "RAY_AUTH_TOKEN, which Ray reads before any file"
    elif os.environ.get("RAY_AUTH_TOKEN_PATH"):
        source = f"{os.environ['RAY_AUTH_TOKEN_PATH']}, which RAY_AUTH_TOKEN_PATH names"
    else:
        source = "~/.ray/auth_token"
    return f"{cluster} refuses this daemon's Ray auth token (from {source}): put {TOKEN_HELP}"
