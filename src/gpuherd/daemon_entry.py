"""How `python -m gpuherd.daemon` begins: this module and the daemon's failure words
(daemon_failure.py) are imported first, alone; then the daemon's own modules (gpuherd.daemon
and its many imports: fastapi, pydantic, the engine), under a handler that says a failure
among them in one line, the traceback in the log. Those imports used to run as the daemon's
module loaded, before any handler: a broken install there (pydantic_core shadowed on
PYTHONPATH, a half-applied upgrade of gpuherd's own files) ended the daemon with a traceback
alone, and `daemon start` could say only "the daemon exited with status 1"; only a module the
daemon imports later (uvicorn) was named. Its command line and its options: as before."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import NoReturn

from gpuherd import paths
from gpuherd.daemon_failure import unexpected_failure

log = logging.getLogger("gpuherd.daemon")


def run() -> NoReturn:
    """`python -m gpuherd.daemon ARGS`: the daemon's module imported (as gpuherd.daemon, not
    run as __main__), then its main(); the process's exit status is main's."""
    try:
        from gpuherd import daemon
    except Exception as exc:  # (a Ctrl-C of a foreground daemon as it loads: as before)
        status = _unimported(exc)
    else:
        status = daemon.main()
    # Store, socket and lock are closed by now. The interpreter's teardown (freeing every
    # module's objects: fastapi's and pydantic's are many) took 0.2 s of each `daemon stop`:
    # exit handlers still run (logging's, Ray's), the freeing is left to the kernel.
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _unimported(exc: Exception) -> int:
    """The daemon's modules did not all import: said as main() says a failure (the traceback
    logged, then its one line), with what its command line names: home and log file."""
    args = parse_args(None)
    log_file = start_logging(args.log_file)
    log.error("the daemon failed", exc_info=exc)
    where = Path(log_file or paths.daemon_log(paths.home_dir(args.home)))
    say(unexpected_failure(exc, where), log_file)
    return 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m gpuherd.daemon")
    parser.add_argument("--home", required=True)
    parser.add_argument("--gpus")
    parser.add_argument("--fake-gpus")
    parser.add_argument("--slots", type=int)
    parser.add_argument("--listen", help="also serve over TCP, e.g. 127.0.0.1:8888 (token)")
    parser.add_argument("--executor", choices=("local", "ray"))
    parser.add_argument("--address", help="the Ray cluster: HOST:PORT or auto")
    parser.add_argument("--log-file", help="also log here (a foreground daemon: daemon.log)")
    parser.add_argument("--abandon-running", action="store_true")
    parser.add_argument("--listen-as-before", action="store_true")
    return parser.parse_args(argv)


def start_logging(log_file: str | None) -> str | None:
    """Log to stderr (daemon.log, for a daemon `daemon start` started), and to `log_file`
    too (a foreground daemon's daemon.log): returned absolute, as `say` opens it after
    serve's chdir."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if not log_file:
        return None
    log_file = os.path.abspath(log_file)
    try:
        also = logging.FileHandler(log_file)
    except OSError as exc:
        log.warning("cannot write %s (%s): logging to stderr only", log_file, exc)
    else:
        also.setFormatter(logging.getLogger().handlers[0].formatter)
        logging.getLogger().addHandler(also)
    return log_file


def say(reason: str, log_file: str | None) -> None:
    """The daemon's last word (why it could not start or run, what its stop left undone) on
    stderr (daemon.log, for a daemon `daemon start` started), and in `log_file` (a foreground
    daemon's daemon.log) too: `gpuherd daemon start` and `stop` print it."""
    line = f"gpuherd daemon: {reason}\n"
    sys.stderr.write(line)
    sys.stderr.flush()
    if log_file:
        with contextlib.suppress(OSError), open(log_file, "a", encoding="utf-8") as f:
            f.write(line)
