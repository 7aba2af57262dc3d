"""`gpuherd ray-local`: a multi-node Ray cluster on this machine, with fake GPUs, to try on."""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from types import FrameType
from typing import Any

import click
import psutil

from gpuherd.cli.param_types import WholeRange
from gpuherd.core.units import plural
from gpuherd.errors import HerdError
from gpuherd.typed_name import typed_name


@click.command("ray-local")
@click.option(
    "--nodes",
    type=WholeRange(1, 16),
    default=2,
    show_default=True,
    help="Worker nodes beside the head (which has no GPU).",
)
@click.option(
    "--gpus-per-node",
    type=WholeRange(0, 64),
    default=2,
    show_default=True,
    help="Fake GPUs each node declares.",
)
@click.option(
    "--cpus-per-node", type=WholeRange(0), default=1, show_default=True, help="CPUs declared."
)
def ray_local(nodes: int, gpus_per_node: int, cpus_per_node: int) -> None:
    """Start a local Ray cluster: a head without GPUs and NODES nodes with fake GPUs.

    Prints the address to give `gpuherd daemon start --address`, then waits; Ctrl-C (or
    SIGTERM) stops every Ray process it started, and nothing else.
    """
    try:
        from ray.cluster_utils import Cluster
    except ImportError:
        from gpuherd.daemon_failure import RAY_INSTALL

        raise HerdError(f"Ray is not installed: {RAY_INSTALL}") from None

    from gpuherd.executors.ray_auth import missing_token

    missing = missing_token()  # the head's GCS would abort on it, after a minute's wait
    if missing is not None:
        raise HerdError(
            f"RAY_AUTH_MODE=token, but no Ray auth token is found here ({missing}): "
            "`ray get-auth-token --generate` makes one in ~/.ray/auth_token (or set "
            "RAY_AUTH_TOKEN); or unset RAY_AUTH_MODE for a cluster without token authentication"
        )

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)  # also when started in the background (`&`)
    started = time.monotonic()
    try:
        cluster: Any = Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": cpus_per_node, "num_gpus": 0},
        )
    except Exception as exc:  # Ray's own failure, as its words (the rest is in its logs)
        raise HerdError(f"the Ray head did not start: {exc}") from None
    agents: list[psutil.Process] = []
    try:
        for _ in range(nodes):
            cluster.add_node(num_cpus=cpus_per_node, num_gpus=gpus_per_node)
        cluster.wait_for_nodes()
        # Ray's head put its own SIGTERM handler in: a 30 s drain, which after its GCS died
        # waited all of it and printed Ray's traceback. A SIGTERM stops as Ctrl-C does.
        signal.signal(signal.SIGTERM, stop)
        agents = raylet_children(cluster)  # while each raylet is alive: one may die before the end
        took = time.monotonic() - started
        click.echo(f"Ray cluster up in {took:.1f}s: {cluster_said(nodes, gpus_per_node)}")
        click.echo(f"address: {cluster.address}")
        click.echo(f"try:     {typed_name()} daemon start --address {cluster.address}")
        click.echo("Ctrl-C stops the cluster.", nl=True)
        sys.stdout.flush()
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        click.echo("stopping the Ray cluster…")
        agents += raylet_children(cluster)  # those started since
        cluster.shutdown()
        stop_left_behind(agents)
        click.echo("stopped")


def cluster_said(nodes: int, gpus_per_node: int) -> str:
    """`a head without GPUs and 2 nodes with 2 fake GPUs each`; of one node, no `each` (it
    said `1 node with 2 fake GPUs each`)."""
    each = " each" if nodes > 1 else ""
    gpus = plural(gpus_per_node, "fake GPU")
    return f"a head without GPUs and {plural(nodes, 'node')} with {gpus}{each}"


def raylet_children(cluster: Any) -> list[psutil.Process]:
    """The processes each raylet of `cluster` started (its dashboard and runtime-env agents),
    as psutil handles. Ray stops them with their raylet; a raylet that died before (killed,
    or ended by its head's absence) leaves them running for good, ~90 MB each, and Ray's
    shutdown knows only the processes it started itself."""
    from ray._private import ray_constants

    found: list[psutil.Process] = []
    for node in [cluster.head_node, *cluster.worker_nodes]:
        for raylet in node.all_processes.get(ray_constants.PROCESS_TYPE_RAYLET, []):
            with contextlib.suppress(psutil.Error):
                found += psutil.Process(raylet.process.pid).children(recursive=True)
    return found


def stop_left_behind(processes: list[psutil.Process]) -> None:
    """SIGKILL those of `processes` still running (psutil checks that each pid is still the
    process it was, never another one that took the pid since)."""
    for process in processes:
        with contextlib.suppress(psutil.Error):
            if process.is_running():
                process.kill()


COMMANDS = [ray_local]
