"""The variables a job is given on top of the submitter's environment (`--env NAME=VALUE`, a
sweep file's `env`, Python's `env=`, the dashboard's lines): one rule for all of them."""

from __future__ import annotations

from gpuherd.core.commands import MAX_COMMAND_BYTES

MAX_VARIABLE_BYTES = MAX_COMMAND_BYTES
"""`NAME=VALUE` is one string of the job's environment, which Linux caps at 128 KiB with its
NUL, as it caps an argument: a larger one failed only when the job started."""


def is_variable_name(name: str) -> bool:
    """A name a shell can read (letters, digits and _, not starting with a digit): one that
    is not, `/bin/sh` drops from the environment it passes on."""
    return bool(name) and name.replace("_", "a").isalnum() and not name[0].isdigit()


def check_variable(name: str, value: str) -> None:
    """ValueError saying what is wrong with NAME=VALUE as a job's variable: a name a shell can
    read (is_variable_name), and at most 128 KiB."""
    if not is_variable_name(name):
        raise ValueError(
            f"{name!r} is not an environment variable name: use letters, digits and _, not"
            " starting with a digit (e.g. SEED)"
        )
    # surrogatepass: text that is not UTF-8 (bytes of an argument) is counted, not refused
    # here: the daemon says what is wrong with it
    size = len(f"{name}={value}".encode(errors="surrogatepass"))
    if size > MAX_VARIABLE_BYTES:
        raise ValueError(
            f"{name!r} is {size:,} bytes with its name, over the 128 KiB an environment "
            "variable may hold: put the value in a file and give its path"
        )


CUT = " …(cut)"


def fitted(name: str, value: str) -> str:
    """`value` as NAME=VALUE can hold it in an environment (MAX_VARIABLE_BYTES), cut short
    and marked so where it is longer: a variable gpuherd fills itself (a hook's
    GPUHERD_JOB_COMMAND, of a command up to 128 KiB long) must not make the exec fail (E2BIG:
    the hook never ran)."""
    most = MAX_VARIABLE_BYTES - len(name) - 1  # (its `NAME=`)
    encoded = value.encode(errors="surrogatepass")
    if len(encoded) <= most:
        return value
    kept = encoded[: most - len(CUT.encode())].decode(errors="ignore")
    return kept + CUT
