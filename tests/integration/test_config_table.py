"""`gpuherd config`: the settings table, in aligned columns within 80, whatever the values."""

from __future__ import annotations

from conftest import Herd
from gpuherd.cli import plain


def table(daemon: Herd) -> list[str]:
    lines = daemon.cli("config").stdout.splitlines()
    assert max(plain.cells(line) for line in lines) <= 80, lines  # columns, not characters
    return lines


def test_the_default_table_is_the_one_the_docs_show(daemon: Herd) -> None:
    daemon.cli("config", "set", "cpu-jobs", "2")  # (its default is the machine's core count)
    assert table(daemon) == [
        "foreign         auto  GPU processes gpuherd did not start: auto (busy for jobs",
        "                      without --mem, only their memory counts for jobs with",
        "                      --mem), memory, exclusive, ignore",
        "keep-free       0%    share of each GPU's memory placement never hands out, e.g.",
        "                      10%",
        "keep-ram        0     host memory that must stay available after a job's --ram",
        "                      is taken, e.g. 8GiB or 20%",
        "reserve-after   5m    how long a job that does not fit waits before it reserves",
        "                      GPUs against smaller jobs",
        "max-running     none  at most this many jobs run at once (none = no cap)",
        "cpu-jobs        2     at most this many CPU-only jobs (--gpus 0) run at once",
        "                      (auto = one per core of this machine, no cap on a Ray",
        "                      cluster; none = no cap)",
        "project-limits  none  at most N jobs of a project (--project) run at once:",
        "                      PROJECT=N,... (none = no limits; the whole list is set at",
        "                      once)",
        "retries         0     how often a failed job runs again when it was submitted",
        "                      without --retries",
        "grace           10s   time between SIGTERM and SIGKILL when a job submitted",
        "                      without --grace is stopped (auto = 10s)",
        "on-end          none  shell command run when a job that ran ends, told of it by",
        "                      GPUHERD_JOB_* variables (none = no command)",
        "max-log-size    none  a job submitted without --max-log-size is stopped once its",
        "                      stdout or stderr log grows past this, e.g. 10GiB (none =",
        "                      no cap)",
    ]


def test_long_values_keep_the_columns_aligned(daemon: Herd) -> None:
    """`foreign exclusive` (9 characters) was taken for a command: its help went on a line
    of its own, out of the column. A value up to 20 characters widens the value column; a
    longer one (a command) takes lines of its own, wrapped, and its help goes under it."""
    hook = 'echo "$GPUHERD_JOB_ID $GPUHERD_JOB_STATE ($GPUHERD_JOB_DETAIL)" >> ~/job-ends.txt'
    for name, value in [
        ("foreign", "exclusive"),
        ("keep-ram", "8GiB"),
        ("max-running", "9223372036854775807"),  # the widest count
        ("cpu-jobs", "2"),
        ("project-limits", "lr-sweep=2,eval-long-name=1"),
        ("on-end", hook),
    ]:
        daemon.cli("config", "set", name, value)
    assert table(daemon) == [
        "foreign         exclusive            GPU processes gpuherd did not start: auto",
        "                                     (busy for jobs without --mem, only their",
        "                                     memory counts for jobs with --mem), memory,",
        "                                     exclusive, ignore",
        "keep-free       0%                   share of each GPU's memory placement never",
        "                                     hands out, e.g. 10%",
        "keep-ram        8.0 GiB              host memory that must stay available after",
        "                                     a job's --ram is taken, e.g. 8GiB or 20%",
        "reserve-after   5m                   how long a job that does not fit waits",
        "                                     before it reserves GPUs against smaller",
        "                                     jobs",
        "max-running     9223372036854775807  at most this many jobs run at once (none =",
        "                                     no cap)",
        "cpu-jobs        2                    at most this many CPU-only jobs (--gpus 0)",
        "                                     run at once (auto = one per core of this",
        "                                     machine, no cap on a Ray cluster; none = no",
        "                                     cap)",
        "project-limits  eval-long-name=1,lr-sweep=2",
        "                                     at most N jobs of a project (--project) run",
        "                                     at once: PROJECT=N,... (none = no limits;",
        "                                     the whole list is set at once)",
        "retries         0                    how often a failed job runs again when it",
        "                                     was submitted without --retries",
        "grace           10s                  time between SIGTERM and SIGKILL when a job",
        "                                     submitted without --grace is stopped (auto",
        "                                     = 10s)",
        'on-end          echo "$GPUHERD_JOB_ID $GPUHERD_JOB_STATE ($GPUHERD_JOB_DETAIL)"',
        "                >> ~/job-ends.txt",
        "                                     shell command run when a job that ran ends,",
        "                                     told of it by GPUHERD_JOB_* variables (none",
        "                                     = no command)",
        "max-log-size    none                 a job submitted without --max-log-size is",
        "                                     stopped once its stdout or stderr log grows",
        "                                     past this, e.g. 10GiB (none = no cap)",
    ]
    assert daemon.cli("config", "get", "on-end").stdout == hook + "\n"  # whole, on one line


def test_a_value_of_wide_characters_wraps_within_80_columns(daemon: Herd) -> None:
    """A Chinese character takes two columns: wrapped by characters, a notification in
    Chinese ran to 107 columns."""
    thanks = "结果已保存到共享目录，请查看日志和指标，然后开始下一轮实验。谢谢！"
    hook = f'notify-send "训练完成" "{thanks}"'
    daemon.cli("config", "set", "on-end", hook)
    rows = table(daemon)
    on_end = next(n for n, row in enumerate(rows) if row.startswith("on-end"))
    assert rows[on_end : on_end + 5] == [
        'on-end          notify-send "训练完成"',
        '                "结果已保存到共享目录，请查看日志和指标，然后开始下一轮实验。谢',
        '                谢！"',
        "                      shell command run when a job that ran ends, told of it by",
        "                      GPUHERD_JOB_* variables (none = no command)",
    ]
