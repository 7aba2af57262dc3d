"""A sweep's plot coloured, by default, by a parameter it can colour by, and saying so when it
cannot: by default it took the first other parameter (a seed of 10 values) and drew every dot
in one colour, with no legend and nothing said. And the jobs page of one sweep naming its jobs
without the sweep's name, which the column cut them to (over the Unix socket)."""

from __future__ import annotations

from pathlib import Path

from test_dashboard_pages import call, run_sweep, sweep_done

from conftest import Herd

WRITES_LOSS = (
    "python3 -c 'import json, os, sys;"
    " json.dump(dict(loss=float(sys.argv[1])),"
    ' open(os.path.join(sys.argv[2], "metrics.json"), "w"))\' {x} {run_dir}'
)


def test_the_plot_is_coloured_by_a_parameter_of_few_values(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    seeds = " ".join(str(n) for n in range(9))  # one value more than the plot's 8 colours
    options = f"-p x 1 2 -p seed {seeds} -p opt adam sgd --gpus 0 --name qaui2-colour"
    run_sweep(shared_daemon, tmp_path, WRITES_LOSS, options)
    sweep_done(shared_daemon, "qaui2-colour", 36)
    page = call(shared_daemon, "GET", "/sweeps/qaui2-colour").body
    assert '<option value="opt" selected>opt</option>' in page  # not seed, listed first
    assert '<span class="legend">opt: ' in page
    assert "not coloured" not in page
    by_seed = call(shared_daemon, "GET", "/sweeps/qaui2-colour?colour=seed").body
    assert '<option value="seed" selected>seed</option>' in by_seed
    assert (
        "The plot is not coloured by seed: it has 9 values, more than its 8 colours."
    ) in by_seed
    assert '<span class="legend">' not in by_seed
    jobs = call(shared_daemon, "GET", "/ui/jobs?sweep=qaui2-colour&q=seed%3D8").body
    whole = "qaui2-colour/x=2,seed=8,opt=sgd"
    assert (
        f'<td class="name" title="{whole}"><span class="shown">x=2,seed=8,opt=sgd</span></td>'
        in jobs
    )
    every = call(shared_daemon, "GET", "/ui/jobs?q=seed%3D8").body  # of no one sweep: whole
    assert f'<td class="name" title="{whole}"><span class="shown">{whole}</span></td>' in every
