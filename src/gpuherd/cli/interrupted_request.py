"""What a Ctrl-C says once a request has gone to the daemon, which carries out what it was sent
whole (a sweep, a batch of jobs, a verb on many jobs) however the client ends. A bare
"interrupted" read as the request called off: a `submit --file` of 5,000 lines interrupted
had queued all 5,000, and submitting the file again, the natural next step, queued each job
twice; an `rm` interrupted had removed every job. The line says the request may be done, and
where to look."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import click

from gpuherd.core.units import plural
from gpuherd.core.when import format_moment
from gpuherd.typed_name import prefixed, typed_name


def goes_on(done: str, sent: str, looks: Iterable[str]) -> str:
    """`DONE all the same, as the daemon goes on with SENT it was sent: LOOK; LOOK`."""
    return f"{done} all the same, as the daemon goes on with {sent} it was sent: " + "; ".join(
        looks
    )


@contextmanager
def said_if_interrupted(words: Callable[[], str]) -> Iterator[None]:
    """Within (a request's sending and the wait for its answer): a Ctrl-C says
    `gpuherd: interrupted: WORDS` on stderr, and exits 130, as an interruption does."""
    try:
        yield
    except KeyboardInterrupt:
        click.echo(prefixed("interrupted", words()), err=True)
        sys.exit(130)


def submission(count: int, sent_at: float) -> str:
    """Of `submit`'s `count` jobs, sent at `sent_at` (epoch seconds): `ls --since` that
    moment lists them, if they were queued."""
    name, jobs = typed_name(), "the job" if count == 1 else f"the {count:,} jobs"
    since = format_moment(sent_at, sent_at, seconds=True)  # (cut to the second: not after it)
    return goes_on(
        f"{jobs} may be submitted",
        "a submission",
        [
            f"{name} ls --since {since} shows them if so (all of them, or none)",
            "look there before submitting again",
        ],
    )


def on_many(verb: str, count: int) -> str:
    """Of a verb (`rm`, `kill`, `clean`...) sent for `count` jobs."""
    name = typed_name()
    return goes_on(
        f"{name} {verb} of {plural(count, 'job')} may be carried out",
        "a request",
        [f"{name} ls --all shows the jobs as they are now"],
    )
