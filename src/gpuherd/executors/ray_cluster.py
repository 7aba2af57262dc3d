"""Wiring for a daemon that runs its jobs on a Ray cluster (`--executor ray`).

`connect` joins the cluster as a driver (Ray's token authentication: the daemon uses the
same RAY_AUTH_MODE / RAY_AUTH_TOKEN / ~/.ray/auth_token as the cluster's nodes, checked
first: ray_auth.py), and `ClusterDeviceTable` configures the GPUs of nodes that join after
the daemon started.
`connect` first checks that the cluster answers: `ray.init` on a dead address never returns.
Once connected, a watcher (ray_link.py) tells whether the cluster still answers: while it
does not, nothing starts and queued jobs say why (`outage`).
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import ray

from gpuherd.core.model import DeviceState
from gpuherd.core.naming import gpus_named
from gpuherd.core.units import plural
from gpuherd.daemon_executor import set_local_gpus_aside
from gpuherd.devices import DeviceTable
from gpuherd.executors.ray import RayExecutor, home_tag
from gpuherd.executors.ray_auth import check_token, effective
from gpuherd.executors.ray_errors import whole_text
from gpuherd.executors.ray_link import RECONNECT_TIMEOUT, ClusterLink
from gpuherd.gpus.base import GpuReading, ProbeError
from gpuherd.gpus.ray import RayNodes, RayProbe
from gpuherd.removed_gpus import keep_removed
from gpuherd.store import DeviceConfig, Store

log = logging.getLogger("gpuherd.ray")

MAP_FILE = "ray-gpus.json"
ANSWER_TIMEOUT = 5.0
"""Seconds the cluster's GCS (or Ray Client server, for ray://) has to accept a connection."""
CLIENT_PORT = 10001
"""The Ray Client server's port when a ray:// address gives none."""


class ClusterDeviceTable(DeviceTable):
    """A device table whose GPUs follow the cluster: a new node's GPUs are enabled at once
    (each GPU the first time it is seen; one removed since stays removed)."""

    _was_down = False
    on_cluster = True

    def cores(self) -> int | None:
        return None  # CPU-only jobs go to any node: Ray places them, the daemon's cores say nothing

    def outage(self) -> str | None:
        reason = self.probe.down() if isinstance(self.probe, RayProbe) else None
        return None if reason is None else f"waiting: {reason}"

    def _never_seen(self, index: int) -> GpuReading:
        """A GPU of a node that left before this daemon started is on the node the index map
        says: taken for one node with all such GPUs (no node), a job that no node could ever
        hold waited for them for ever after a restart (a Ray node does not come back)."""
        unseen = super()._never_seen(index)
        found = self.probe.cluster.locate(index) if isinstance(self.probe, RayProbe) else None
        return unseen if found is None else replace(unseen, node=found[0])

    def refresh(self) -> bool:
        changed = super().refresh()
        # Back after an outage: a change, even if its GPUs are the same, so that the engine
        # places the jobs that waited (nothing else wakes it).
        was_down, self._was_down = self._was_down, self.failure is not None
        changed = changed or (was_down and self.failure is None)
        new = sorted(set(self._readings) - set(self._config))
        if new:  # a GPU `gpus remove` took out stays out, through restarts, until `gpus add`
            removed = self._removed()
            new = [index for index in new if index not in removed]
        for index in new:
            cfg = DeviceConfig(index, 1, DeviceState.ENABLED)
            self.store.put_device(cfg)
            self._config[index] = cfg
        if new:
            log.info("%s joined the cluster", gpus_named(new))  # (GPU 6, GPUs 6-7)
        return changed or bool(new)


def joined_address(given: str) -> str:
    """The address of the cluster this process joined as `given` (ray.init's address):
    "auto" stands for whichever cluster Ray found on this machine then, maybe another
    user's the next time, so it is resolved to that cluster's GCS address (what a daemon
    remembers, and shows). A ray:// address names its cluster already."""
    if given != "auto":
        return given
    try:
        return str(ray.get_runtime_context().gcs_address)
    except Exception:  # a Ray Client session (RAY_ADDRESS=ray://...) has no GCS address here
        return os.environ.get("RAY_ADDRESS") or given


def dialled(address: str) -> tuple[str, int] | None:
    """The host and port `ray.init(address)` connects to: the GCS (for "auto", the local
    cluster Ray finds; a local host name stands for this machine's IP, as in Ray), or the
    Ray Client server of a ray:// address. ValueError or ConnectionError when there is none;
    None when this Ray cannot tell (it moved the function `ray.init` uses)."""
    address = effective(address)
    if address.lower().startswith(("http://", "https://")):  # Ray's text on it runs to 3 lines
        raise ValueError("an HTTP address (the dashboard's or the job API's), not the GCS's")
    if "://" in address:
        where, default = address.split("://", 1)[1].rstrip("/"), CLIENT_PORT
    else:
        try:
            from ray._private.services import canonicalize_bootstrap_address
        except ImportError:
            return None
        where, default = str(canonicalize_bootstrap_address(address)), -1
    host, colon, port = where.rpartition(":")
    if not colon or "]" in port:  # no port, or an IPv6 host without one
        host, port = where, str(default)
    if not host or not port.isdecimal() or not 0 < int(port) < 65536:
        raise ValueError(f"no valid port in {address!r}")
    return host.strip("[]"), int(port)


def endpoints(address: str) -> set[tuple[str, int]] | None:
    """The IP addresses and port `ray.init(address)` connects to (its host name resolved), or
    None when that cannot be told (no valid address, "auto" finding no cluster)."""
    try:
        target = dialled(address)
    except (ValueError, OSError):
        return None
    if target is None:
        return None
    try:
        found = socket.getaddrinfo(*target, type=socket.SOCK_STREAM)
    except OSError:  # no name server's answer: the name as it is
        return {target}
    return {(str(info[4][0]), target[1]) for info in found}


def another_cluster(last: str, address: str) -> bool:
    """Whether `address` names another cluster than `last`, the last start's: told by where
    each connects (`localhost:6379` on the head's machine and the head's IP are one cluster,
    as for Ray). An `address` that cannot be told is left to check_answers, which says why;
    a `last` that cannot be told any more counts as another cluster."""
    if address == last:
        return False
    here = endpoints(address)
    if here is None:
        return False
    there = endpoints(last)
    return there is None or not here & there


def check_answers(address: str, remembered: bool = False, stranded: int = 0) -> None:
    """Raise ProbeError (one line: what is wrong, what to do) unless something accepts a
    connection where `ray.init(address)` would connect, within ANSWER_TIMEOUT, and takes this
    daemon's Ray auth token if it asks for one (ray_auth.py). `stranded`:
    the jobs still running there, for which `--executor local` alone is refused (the daemon's
    refuse_a_switch_under_jobs): the line names the whole way out, in one try."""
    given = "give `--address HOST:PORT` or `auto`"
    if address != "auto":
        cluster = f"the Ray cluster at {address}"
    elif effective(address) != address:  # what Ray takes auto for: it must be named
        cluster = f"the Ray cluster RAY_ADDRESS names ({effective(address)}, for --address auto)"
        given = (
            "set RAY_ADDRESS to the head's HOST:PORT (or unset it), or give `--address HOST:PORT`"
        )
    else:
        cluster = "the Ray cluster Ray finds (auto)"
    if remembered:
        cluster += " (remembered from the last start)"
    try:
        target = dialled(address)
    except ValueError as exc:
        raise ProbeError(f"{cluster}: {exc}; {given}") from None
    except OSError as exc:  # "auto" found no cluster (a ConnectionError)
        reason = str(exc).rstrip(".")
    else:
        if target is None:
            return
        try:
            socket.create_connection(target, timeout=ANSWER_TIMEOUT).close()
        except OSError as exc:
            reason = f"{target[0]}:{target[1]}: {exc.strerror or exc}"
        else:
            silent = check_token(address, target, cluster)  # a refused token: one line, at once
            if silent is None:
                return
            reason = f"{target[0]}:{target[1]}: {silent}"
    way_out = (
        "give another cluster with `--address HOST:PORT`, or run jobs on this machine with "
        "`--executor local`"
    )
    if stranded:  # either is refused for them without --abandon-running (daemon_executor.py)
        way_out = (
            "give another cluster with `--address HOST:PORT --abandon-running`, or run jobs "
            "on this machine with `--executor local --abandon-running`: either counts the "
            f"{plural(stranded, 'job')} still running there lost"
        )
    raise ProbeError(f"{cluster} does not answer ({reason}): start it, {way_out}")


def connect(
    address: str, home: Path, remembered: bool = False, stranded: int = 0
) -> tuple[RayProbe, RayExecutor]:
    """Join the cluster at `address` ("auto", "host:port") as this home's driver; `remembered`:
    the address is the last start's (an error says so); `stranded`: see check_answers."""
    check_answers(address, remembered, stranded)
    tag = home_tag(home)
    namespace = f"gpuherd-{tag}"
    try:
        with _ray_setting("gcs_rpc_server_reconnect_timeout_s", RECONNECT_TIMEOUT):
            ray.init(
                address=address,
                namespace=namespace,
                log_to_driver=False,
                logging_level=logging.WARNING,
                configure_logging=False,
            )
    except Exception as exc:  # ConnectionError, auth failures, bad addresses...
        said = " ".join(whole_text(exc).split())  # Ray's text may run to many lines: one here
        if "ray[client]" in said:  # (a ray:// address: its packages are not in Ray's extra)
            raise ProbeError(
                f"connecting to the Ray cluster at {address} needs Ray Client, which this "
                "Ray lacks: pip install 'ray[client]' where gpuherd is installed, or give "
                "the head's own address (`--address HOST:6379`: no Ray Client needed)"
            ) from exc
        raise ProbeError(
            f"connecting to the Ray cluster at {address}: {said}; check the address "
            "(`ray start --head` printed it; port 6379 by default) and that this machine "
            "has, for a cluster with token authentication, RAY_AUTH_MODE=token and the "
            "cluster's token (RAY_AUTH_TOKEN or ~/.ray/auth_token)"
        ) from exc
    joined = joined_address(address)
    link = ClusterLink(joined)
    link.start()
    nodes = RayNodes(home / MAP_FILE, read=link.nodes)
    # What `daemon status` shows: which cluster, and how it was chosen.
    how = " (remembered from the last start)" if remembered else ""
    if joined != address:
        how = f" (found by --address {address})"
    probe = RayProbe(nodes, joined + how)
    probe.down = link.reason
    return probe, RayExecutor(nodes, namespace, tag, joined, link)


@contextmanager
def _ray_setting(name: str, value: str) -> Iterator[None]:
    """Ray's setting `name` for this process's Ray client, whatever the environment says (a
    value meant for the cluster's processes must not end the daemon): Ray reads RAY_<name>
    when `ray.init` starts its client. Only there: the hooks this daemon runs (and their own
    Ray drivers) inherit the environment as it was."""
    key = f"RAY_{name}"
    before = os.environ.get(key)
    os.environ[key] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = before


def configure(store: Store, probe: RayProbe) -> None:
    """Configure exactly the GPUs the cluster has now (one slot each), none removed: the GPUs
    removed on the local executor are other GPUs, whose indices the cluster's may take (kept,
    they would keep a node that joins later out for good). The local ones are set aside, for
    a local start after this (daemon_executor._back_from_cluster)."""
    readings = probe.read()
    with store.transaction():
        set_local_gpus_aside(store)
        store.replace_devices(dict.fromkeys((r.index for r in readings), 1))
        keep_removed(store, {})


def disconnect(executor: object = None) -> None:
    """Leave the cluster; not while it does not answer: `ray.shutdown()` would wait for it
    (nor at exit, where Ray calls it too)."""
    if isinstance(executor, RayExecutor):
        executor.link.stop()
        if executor.link.outage() is not None:
            log.warning("%s does not answer: leaving it without a word", executor.link.cluster)
            atexit.unregister(ray.shutdown)
            return
    if ray.is_initialized():
        ray.shutdown()
