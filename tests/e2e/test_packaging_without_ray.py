"""An install without the `ray` extra (`pip install gpuherd-*.whl`, as most users have it)
asked for a Ray cluster, as README's "On a Ray cluster" shows (`gpuherd daemon start
--address ...`): the daemon said `cannot import ray: No module named 'ray'; reinstall
gpuherd, or fix PYTHONPATH`, though nothing was broken and reinstalling changes nothing. It
now names the extra to install, as `gpuherd ray-local` does, and how to start without Ray.

Ray is made unimportable for real, in the daemon only: PYTHONPATH (which the daemon inherits)
puts first a sitecustomize that sets sys.modules["ray"] to None, so `import ray` raises the
ModuleNotFoundError (name "ray") that an install without Ray raises."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd

SAID = (
    "gpuherd: error: Ray is not installed: pip install 'ray[default]>=2.60,<3' in gpuherd's "
    "Python (in its checkout: pip install -e '.[ray]') to run jobs on a Ray cluster, or start "
    "with --executor local to run them on this machine\n"
)


def without_ray(herd: Herd, tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "no_ray"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text('import sys\n\nsys.modules["ray"] = None\n')
    return {**herd.env, "PYTHONPATH": str(folder)}


def test_a_ray_daemon_without_ray_names_the_extra_then_starts_without_it(
    herd: Herd, tmp_path: Path
) -> None:
    env = without_ray(herd, tmp_path)
    for how in (["--address", "127.0.0.1:1"], ["--executor", "ray", "--address", "auto"]):
        refused = herd.cli("daemon", "start", *how, env=env, check=False)
        assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", SAID)
        assert not herd.is_up()
    started = herd.cli("daemon", "start", "--executor", "local", "--fake-gpus", "1", env=env)
    assert "(pid " in started.stdout and "fake: 1 GPU)" in started.stdout
