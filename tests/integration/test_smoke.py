from conftest import Herd, UnixConnection
from gpuherd import __version__


def test_submit_runs_on_a_fake_gpu(daemon: Herd) -> None:
    job_id = daemon.submit(
        "--", "sh", "-c", 'echo "gpu=$CUDA_VISIBLE_DEVICES order=$CUDA_DEVICE_ORDER"'
    )
    job = daemon.wait_state(job_id, "succeeded")
    assert job["exit_code"] == 0
    out = daemon.cli("log", str(job_id)).stdout
    assert out == f"gpu={job['gpus'][0]} order=PCI_BUS_ID\n"


def test_a_client_finds_a_daemon_started_with_another_runtime_dir(herd: Herd) -> None:
    """ssh, cron and tmux shells differ in XDG_RUNTIME_DIR, which decides the socket's path;
    the daemon notes its socket in the home, and a client that finds nothing looks there."""
    runtime = herd.home.parent / "xdg"
    runtime.mkdir(mode=0o700)
    herd.cli(
        "daemon", "start", "--fake-gpus", "1", env={**herd.env, "XDG_RUNTIME_DIR": str(runtime)}
    )
    assert not (herd.home / "run" / "herd.sock").exists()  # where a client without it looks
    job_id = herd.submit("--hold", "--", "true")  # herd.env has no XDG_RUNTIME_DIR
    assert herd.cli("ls", "-q").stdout == f"{job_id}\n"
    herd.cli("daemon", "stop")
    gone = herd.cli("ls", check=False)
    assert gone.returncode == 3 and "no gpuherd daemon is running" in gone.stderr


def test_every_answer_names_the_daemons_version(daemon: Herd) -> None:
    """So that a client upgraded while an older daemon runs can say so (test_client_transport
    checks the warning)."""
    for path in ("/api/v1/daemon", "/api/v1/jobs/999", "/", "/static/dashboard.css"):
        conn = UnixConnection(daemon.client.socket_path, timeout=15)
        try:
            conn.request("GET", path)
            answer = conn.getresponse()
            answer.read()
        finally:
            conn.close()
        assert answer.getheader("gpuherd-version") == __version__, path
    assert daemon.cli("ls").stderr == ""  # same version: no warning
