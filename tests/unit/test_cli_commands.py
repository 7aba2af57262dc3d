"""The CLI's lazy command table: it names every real command, and `--help` reads the same."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

import gpuherd
import gpuherd.cli
from gpuherd.cli.main import COMMAND_TABLE, cli, load_command, main


def real_commands() -> dict[str, tuple[str, str]]:
    """Every top-level command of every gpuherd.cli module: name -> (module, short help)."""
    found: dict[str, tuple[str, str]] = {}
    for info in pkgutil.iter_modules(gpuherd.cli.__path__):
        module = importlib.import_module(f"gpuherd.cli.{info.name}")
        for command in getattr(module, "COMMANDS", []):
            assert command.name not in found, f"two commands named {command.name}"
            if not command.hidden:
                found[command.name] = (info.name, command.get_short_help_str(limit=10_000))
    return found


def test_the_table_matches_the_real_commands() -> None:
    assert real_commands() == COMMAND_TABLE


def test_each_name_loads_its_own_command() -> None:
    for name in COMMAND_TABLE:
        command = load_command(name)
        assert command is not None
        assert command.name == name
    assert load_command("no-such-verb") is None


@pytest.mark.parametrize("width", [60, 80, 120])
def test_help_is_what_a_group_of_the_real_commands_prints(width: int) -> None:
    eager = click.Group(
        name=cli.name, help=cli.help, params=cli.params, context_settings=cli.context_settings
    )
    for name in COMMAND_TABLE:
        command = load_command(name)
        assert command is not None
        eager.add_command(command)
    runner = CliRunner()
    lazy_help = runner.invoke(cli, ["--help"], prog_name="gpuherd", terminal_width=width)
    eager_help = runner.invoke(eager, ["--help"], prog_name="gpuherd", terminal_width=width)
    assert lazy_help.exit_code == eager_help.exit_code == 0
    assert lazy_help.output == eager_help.output
    assert "  ls " in lazy_help.output


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys, json\n"
        "from gpuherd.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(proc.stderr))
    assert "Commands:" in proc.stdout
    assert "sweep" in proc.stdout
    assert not {f"gpuherd.cli.{module}" for module, _ in COMMAND_TABLE.values()} & loaded
    assert not {"rich", "asyncio", "pydantic", "fastapi", "yaml", "psutil"} & loaded


def test_a_typo_gets_a_suggestion_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["lss"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "gpuherd: error: No such command 'lss'. Did you mean 'ls'? (see gpuherd --help)"
    ]


def test_version_names_the_program_as_called(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `herd --version` said `gpuherd, version ...`; and click's own --version keeps the
    # first name it printed for every later call in one process.
    for called, name in [("/usr/bin/herd", "herd"), ("gpuherd", "gpuherd"), ("x.py", "gpuherd")]:
        monkeypatch.setattr(sys, "argv", [called, "--version"])
        main(["--version"])  # returns: exit 0
        assert capsys.readouterr().out == f"{name}, version {gpuherd.__version__}\n"


def test_no_command_prints_the_help_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("Usage: gpuherd [OPTIONS] COMMAND [ARGS]...")
    assert "gpuherd: error" not in err
    assert "  submit " in err


def test_ls_refuses_a_listing_a_daemon_did_not_filter() -> None:
    # A daemon from before --sweep/--name ignores them and lists every job: acting on that
    # list (`kill $(gpuherd ls -q --sweep S)`) would stop them all.
    from gpuherd.cli.job_refs import filtered

    old = {"ids": [1, 2, 3]}
    assert filtered(old, {"project": "p", "sweep": None}) is old
    with pytest.raises(click.ClickException, match="cannot filter by --sweep: it runs an older"):
        filtered(old, {"project": None, "sweep": "s", "name": None})
    new = {"ids": [2], "filtered": ["project", "sweep", "name"]}
    assert filtered(new, {"sweep": "s", "name": "x*"}) is new
