"""`gpuherd config set --help`, where the errors of `config set` send the user (`see gpuherd
config set --help`), lists every setting and what it takes; it said one line and named none."""

from __future__ import annotations

from click.testing import CliRunner

from gpuherd.cli.main import cli
from gpuherd.config import SETTINGS


def test_config_set_help_lists_every_setting_with_what_it_takes() -> None:
    said = CliRunner().invoke(cli, ["config", "set", "--help"], terminal_width=200)
    assert said.exit_code == 0, said.output
    listed = said.output.split("Settings:\n", 1)[1]
    for name, setting in SETTINGS.items():
        assert f"  {name} " in listed, name
        assert setting.help.split()[0] in listed, name
    assert "VALUE default puts a setting back to its default" in said.output
