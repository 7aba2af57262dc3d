"""The Python API: `gpuherd.connect()`, job handles, `@gpuherd.task`, sweeps from Python.

    import gpuherd

    @gpuherd.task(gpus=1)
    def train(lr: float, bs: int, run_dir: str) -> dict:
        ...
        return {"val_acc": acc}

    sweep = train.sweep(lr=[1e-3, 1e-4], bs=[32, 64], results_dir="results/train")
    sweep.wait()
    print(sweep.results())                    # params, state and metrics of every point
    job = gpuherd.connect().submit("python train.py", gpus=1)

Tasks are in tasks.py, `as_completed` in pyapi_completed.py, JobFailed in pyapi_failed.py; all
goes through the daemon's API.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from gpuherd import paths
from gpuherd.client import Client
from gpuherd.core.sweep import SweepSpec, count, size_refusal, spec_to_dict
from gpuherd.core.sweep_names import default_sweep_name, is_bare_command
from gpuherd.errors import DaemonError, HerdError, LostConnection, NoAnswer, refusal
from gpuherd.following import follow_log
from gpuherd.pyapi_checks import (
    changed_spec,
    check_connect,
    check_edit,
    command_text,
    deadline_after,
    job_number,
    log_numbers,
    log_stream,
    still_unfinished,
    submit_warnings,
    wait_ids,
)
from gpuherd.pyapi_completed import CompletedJobs
from gpuherd.pyapi_failed import JobFailed
from gpuherd.pyapi_jobs import JobActions, JobListing
from gpuherd.pyapi_notebook import JobDisplay, followed_texts, wait_interrupted
from gpuherd.pyapi_removed import check_succeeded
from gpuherd.pyapi_result import returned_value
from gpuherd.pyapi_start import start_daemon, warn_other_gpus
from gpuherd.pyapi_stuck import warn_stuck
from gpuherd.pyapi_sweep import (
    Sweep,
    SweepWarning,
    bare_command_refusal,
    check_keywords,
    env_worded,
    file_env,
    over_file,
)
from gpuherd.pyapi_types import WrongType, as_given, check_types
from gpuherd.pyapi_values import (
    edit_options,
    env_overrides,
    is_sweep_file,
    job_cwd,
    make_spec,
    plain,
    start_options,
    submit_options,
    sweep_order,
    sweep_warnings,
)
from gpuherd.tasks_guard import refuse_while_loading
from gpuherd.tasks_params import check_sweep
from gpuherd.wait_removed import WAIT_OVER
from gpuherd.wire_requests import SweepOptions, options_sent

_YES = "pass yes=True to {} them all"


def connect(
    home: str | Path | None = None,
    start: bool = True,
    gpus: str | Iterable[int] | None = None,
    fake_gpus: str | int | Path | None = None,
) -> Herd:
    """A client of the daemon of `home` (default: GPUHERD_HOME), starting one if none runs.

    A daemon started here uses `gpus` or `fake_gpus`; with neither, GPUHERD_FAKE_GPUS if set,
    else the GPUs it finds (or its last configuration), as `gpuherd daemon start` does. One
    running already keeps its own: a UserWarning says so if they are not those asked for.
    """
    gpus = check_connect(home, gpus, fake_gpus, start)  # (a list: read twice)
    client = Client(home)
    try:
        status = client.get("/daemon")  # one stopped (Ctrl-Z) or stuck holds the home
    except DaemonError as none:
        if not start or isinstance(none, NoAnswer):
            raise
    else:
        warn_other_gpus(client, status, gpus, fake_gpus)  # (it keeps its own GPUs)
        return Herd(client)
    options, variable_helps = start_options(gpus, fake_gpus)
    # (-P: not the caller's folder on the daemon's import path: daemon_cmds.start's comment)
    args = [sys.executable, "-P", "-m", "gpuherd.daemon", "--home", str(client.home), *options]
    start_daemon(client, args, variable_helps)
    return Herd(client)


class Herd(JobListing, CompletedJobs):
    """A connection to one daemon: submit jobs and sweeps, list and look at them (`jobs()`),
    wait for them (`wait()`, `as_completed()`), pause and resume the queue."""

    def __init__(self, client: Client | None = None) -> None:
        if not isinstance(client, Client):  # `Herd()` raised "missing 1 required argument"
            raise WrongType(
                "a Herd is made by gpuherd.connect() (home=..., fake_gpus=...), got Herd("
                + ("" if client is None else repr(client))
                + ")"
            )
        self.client = client

    def __repr__(self) -> str:
        return f"<gpuherd.Herd {self.client.home}>"

    def submit(
        self,
        command: str | Path | Iterable[str | Path],
        gpus: int = 1,
        name: str | None = None,
        *,
        cwd: str | Path | None = None,
        **options: Any,
    ) -> Job:
        """Queue a command: one string is run by sh as written; a list of words (text or
        paths) is quoted and joined. Options as `gpuherd submit`'s: mem, ram, priority,
        after, after_any and after_fail (job handles, ids, or text as `--after` takes it:
        "3-5,7", "last"), retries, retry_delay, timeout, grace, no_output_timeout (durations:
        seconds, "2h" or a timedelta), max_log_size (bytes or "10GiB"; "none": no cap; left
        out: the daemon's `config max-log-size`), on_no_output ("flag" or "kill"), project,
        env (a dict), hold, oom_retry, exclusive (each GPU to itself), begin (a datetime,
        epoch seconds, a timedelta from now, or text as `--begin` takes it: "+2h"),
        only_gpus ([0, 2], or "0,2"; [] is any GPU, as leaving it out, but "" is refused as
        `--only-gpus ''` is: text naming no GPU is an unset variable, not a choice).
        A job whose `after` job already ended badly (or `after_fail` job already succeeded)
        is cancelled at once (dependency_failed), with a UserWarning saying so."""
        refuse_while_loading("submit")
        check_types({"name": name})  # (the options are checked with the others, below)
        if "max_parallel" in options:  # shared with sweep(), where it means something
            raise WrongType(
                "max_parallel is a sweep's cap (sweep(..., max_parallel=N)); to cap the jobs "
                "running at once, set max-running (gpuherd config set max-running N)"
            )
        text = command_text(command)
        item = {
            "command": text,
            "cwd": job_cwd(cwd),
            "env": paths.submitter_env(),
            "name": name,
            **submit_options({**options, "gpus": gpus}, Job, self.client),
        }
        answer = self.client.post("/jobs", {"jobs": [item]})
        # Cancelled at once (a job it waits for already ended badly), or a script not there.
        sweep_warnings(submit_warnings(answer, item, self.client.home), UserWarning)
        (job_id,) = answer["ids"]
        return Job(self, int(job_id), seen=True)

    def job(self, job_id: int | str) -> Job:
        """A handle on job `job_id` (a number, or its digits as text)."""
        return Job(self, job_id)

    def sweep(
        self,
        command: str | Path | SweepSpec | None = None,
        params: Mapping[str, Iterable[Any]] | None = None,
        *,
        name: str | None = None,
        results_dir: str | Path | None = None,
        fixed: Mapping[str, Any] | None = None,
        samples: int | None = None,
        seed: int | None = None,
        shuffle: bool = False,
        force: bool = False,
        yes: bool = False,
        dry_run: bool = False,
        cwd: str | Path | None = None,
        order: str | None = None,
        task: bool = False,
        **options: Any,
    ) -> Sweep:
        """Submit a sweep, as `gpuherd sweep` does: a command template with `params` (name ->
        values), a sweep file (a Path, or a name ending in .yaml, .yml, .toml or .json with no
        space or `{`, without `params`; its keys are these keywords, and the arguments given
        here override it, `fixed` and `env` key by key), or a SweepSpec;
        `order="longest-first"` as `--order` (default "given"). Returns a Sweep handle that
        says what was submitted and skipped. A template with no placeholder and no params (a
        sweep's name, say) is refused: get_sweep(name) opens a sweep submitted before."""
        refuse_while_loading("sweep")
        own: dict[str, Any] = {"name": name, "samples": samples, "seed": seed}
        own |= {"results_dir": results_dir, "fixed": fixed, "shuffle": shuffle, "force": force}
        own |= {"yes": yes, "task": task, "dry_run": dry_run}
        check_keywords(options, own)
        # Where the command came from (a sweep file's name) and the file's env, and env=:
        # whose words a warning of an env value naming a placeholder is given in.
        source, env_of_file, env = "spec", {}, options.get("env")
        if isinstance(command, SweepSpec):
            if params:
                raise WrongType("give the parameters in the SweepSpec's grids, or params, not both")
            spec = command
        elif isinstance(command, str | Path) and is_sweep_file(command, params):
            from gpuherd.sweepfile import SweepFileError, load_sweep

            try:
                loaded = load_sweep(command)
            except SweepFileError as exc:
                raise HerdError(str(exc)) from None
            spec = loaded.spec
            source, env_of_file = str(command), file_env(loaded.options, options)
            options, file_cwd, file_order = over_file(loaded.options, options)
            cwd = file_cwd if cwd is None else cwd
            order = order or file_order
        elif isinstance(command, str):
            source, sweep_name = "template", name or default_sweep_name(command)
            spec = make_spec(sweep_name, command, params or {}, fixed)
            if is_bare_command(command, bool(params)):
                raise HerdError(bare_command_refusal(self, command))
        else:
            raise WrongType(
                f"give a command template, a sweep file, or a SweepSpec, got {as_given(command)}"
            )
        changes: dict[str, Any] = {"name": name, "samples": plain(samples), "seed": plain(seed)}
        changes["results_dir"] = None if results_dir is None else str(results_dir)
        if fixed:  # over a file's (or a spec's) own: it was dropped without a word
            changes["fixed"] = {**spec.fixed, **plain(dict(fixed))}
        changes = {k: v for k, v in changes.items() if v is not None}
        if shuffle:
            changes["shuffle"] = True
        spec = changed_spec(spec, changes)
        points = count(check_sweep(spec, task))  # (keys that JSON would make text: any sweep)
        action = _YES.format("list" if dry_run else "submit")  # (a dry run submits nothing)
        if refusal := size_refusal(spec.name, points, yes=yes, action=action, samples="samples=N"):
            raise HerdError(refusal)
        body = {
            "spec": spec_to_dict(spec),
            "cwd": job_cwd(cwd),
            "env": paths.submitter_env(),
            "options": options_sent(
                SweepOptions(
                    **submit_options(options, Job, self.client, sweep=True),
                    order=sweep_order(order),
                )
            ),
            "force": force,
            "yes": yes,
            "dry_run": dry_run,
            "task": task,
        }
        try:
            json.dumps(body)
        except (TypeError, ValueError) as exc:
            raise HerdError(f"sweep parameters must be JSON values: {exc}") from None
        answer = Client(self.client.home, timeout=600.0).post("/sweeps", body)
        warned = env_worded(answer.get("warnings", []), spec.command, source, env_of_file, env)
        sweep_warnings(warned, SweepWarning)  # the CLI's `warning:` lines
        return Sweep(self, answer["name"], answer)

    def sweeps(self) -> list[dict[str, Any]]:
        """Every sweep, with its points counted by state (`gpuherd sweep ls --json`)."""
        return list(self.client.get("/sweeps")["sweeps"])

    def get_sweep(self, name: str) -> Sweep:
        """A handle on the sweep `name` submitted before: its results, status and wait.
        NotFound if no sweep has that name."""
        return Sweep.existing(self, name)

    def wait(
        self, ids: Iterable[int | str | Job] | Sweep, timeout: float | None = None
    ) -> dict[int, str]:
        """Wait until the jobs (ids or handles, or a Sweep: its points' jobs, held ones too)
        finish; their final states by id ('removed': gpuherd rm). TimeoutError after `timeout`.
        A WaitWarning first says which of them cannot end by themselves (pyapi_stuck.py)."""
        deadline = deadline_after(timeout)
        # A Sweep as as_completed(sweep) takes it (it said "takes a list"): its jobs' ids alone.
        waited = ids.waited_on(self) if isinstance(ids, Sweep) else wait_ids(ids, Job, self)
        try:
            warn_stuck(self.client, waited)  # (a paused queue, a held job waited for: why)
            states, done = self.client.wait(waited, deadline)
        except KeyboardInterrupt:  # (not in the socket read it came in: that said nothing)
            raise wait_interrupted(waited) from None
        if not done:
            busy = [i for i, state in states.items() if state not in WAIT_OVER]
            raise still_unfinished(timeout or 0, busy, len(waited))
        return states


class Job(JobActions, JobDisplay):
    """A handle on one job: its id, what the daemon knows of it, and the CLI's verbs on it
    (`kill()`, `retry()`, `hold()`, ...: pyapi_jobs.JobActions); its repr, `done()` and
    equality: pyapi_notebook.JobDisplay."""

    def __init__(self, herd: Herd, job_id: int | str, seen: bool = False) -> None:
        self.herd = herd
        self.id = job_number(job_id)
        self.seen = seen
        """Named by the daemon (submit's, jobs()', a sweep's): gone since, it was removed."""

    def info(self) -> dict[str, Any]:
        """Everything about the job (`gpuherd show --json`)."""
        return dict(self.herd.client.get(f"/jobs/{self.id}"))

    def state(self) -> str:
        """The job's state now (asked at each call), as `gpuherd ls` shows it: queued, held,
        running, paused, succeeded, failed, killed, cancelled or lost; NotFound once removed."""
        return str(self.info()["state"])

    def wait(self, timeout: float | None = None) -> str:
        """Wait until the job ends; its final state ('removed': `gpuherd rm`). TimeoutError
        after `timeout` seconds."""
        return self.herd.wait([self.id], timeout)[self.id]

    def logs(
        self, stream: str = "stdout", attempt: int | None = None, lines: int | None = None
    ) -> str:
        """The job's stdout (or "stderr") so far, or its last `lines` lines (0: none); "" before
        it starts."""
        query = {"stream": log_stream(stream), **log_numbers(attempt=attempt, lines=lines)}
        try:
            data = b"".join(self.herd.client.download(f"/jobs/{self.id}/log", **query))
            return data.decode(errors="replace")
        except LostConnection:
            raise  # (asking the state next would only say no daemon runs, not what befell)
        except HerdError:
            if self.state() in ("queued", "held"):
                return ""
            raise

    def follow(self, stream: str = "stdout", lines: int | None = None) -> Iterator[str]:
        """The job's output as it comes (from its last `lines` lines, if given; 0: only what
        it writes from now on, as `tail -f -n 0`), until the job ends; a job not started yet
        is waited for, and a retry's output follows.
        `for text in job.follow(): print(text, end="")` is `gpuherd log -f`. NotFound at
        the call for a job that does not exist, and once it is removed before it ran."""
        lines = log_numbers(lines=lines)["lines"]  # checked now, not at the first next()
        stream = log_stream(stream)
        self.info()  # NotFound now (one request), not at the first next(), far from the typo
        # (the line that ends a follow says what follows on: this, not the CLI's `log -f`)
        again = "`job.follow()`"
        pieces = follow_log(self.herd.client, self.id, stream, lines=lines, again=again)
        return followed_texts(pieces, self.id)

    def result(self, timeout: float | None = None) -> Any:
        """Wait until the job ends (TimeoutError after `timeout` seconds), then what it
        returned: a task's return value as it was (through JSON: a tuple comes back as a
        list; None if it returned None or called sys.exit(0)), or for a command the
        metrics.json it wrote in its folder ($GPUHERD_JOB_DIR), None if none. A job that did
        not succeed (failed, killed, cancelled, lost) raises JobFailed, saying how it ended
        and its last line of stderr; one removed, JobRemoved (pyapi_removed.py)."""
        check_succeeded(self, self.wait(timeout))
        return returned_value(self.id, self.info())  # (its own run's: a point may run again)

    def edit(self, clear: Iterable[str] = (), **changes: Any) -> str:
        """Change what the waiting job asks for, as `gpuherd edit`: command, name, gpus,
        only_gpus (a list), mem, ram (bytes or "10GiB"), exclusive (True: each GPU to
        itself; False: shared again), retries, retry_delay, timeout, grace (seconds or
        "2h"), max_log_size (bytes or "10GiB"; "none": no cap), project, env (a dict: these
        variables set, the job's others kept), cwd, after, after_any and after_fail (as
        submit() takes them: they replace the job's), begin (held until then; a time past:
        queued now), output and error (as submit() takes them, from the job's cwd); `clear`
        unsets name, only_gpus, mem, ram, retry_delay, timeout, max_log_size, project, env,
        after, after_any, after_fail, output, error or begin.
        Answers what changed ("edited (gpus 1 -> 2)"), warning as submit() does; refused, as
        submit() is: InvalidValue (a value), Conflict (the job runs or ended, or never could)."""
        clear = check_edit(changes, clear)  # (its own words: `env`, not `env_overrides`)
        if "env" in changes:  # as submit() names the job's variables; the others are kept
            changes["env_overrides"] = env_overrides(changes.pop("env"))
        cleared = ["env_overrides" if name == "env" else name for name in clear]
        body = {"ids": [self.id], **edit_options(changes, Job, self.herd.client), "clear": cleared}
        answer = self.herd.client.post("/jobs/edit", body)
        (result,) = answer["results"]
        if not result["ok"]:  # (HerdErrors: `except HerdError` catches them as before)
            raise refusal(result.get("status"), str(result["message"]))
        sweep_warnings(answer.get("warnings", []), UserWarning)
        return str(result["message"])


class ListedJob(Job):
    """A handle from a listing (`herd.jobs()`): a Job whose `snapshot` is never None, so a
    type checker takes `job.snapshot["exit_code"]` as it is (a Job's may be None)."""

    snapshot: dict[str, Any]

    def __init__(self, herd: Herd, row: dict[str, Any]) -> None:
        super().__init__(herd, int(row["id"]), seen=True)
        self.snapshot = row


__all__ = ["Herd", "Job", "JobFailed", "ListedJob", "Sweep", "SweepWarning", "connect", "make_spec"]
