from conftest import Herd


def test_submit_runs_on_a_fake_gpu(daemon: Herd) -> None:
    job_id = daemon.submit(
        "--", "sh", "-c", 'echo "gpu=$CUDA_VISIBLE_DEVICES order=$CUDA_DEVICE_ORDER"'
    )
    job = daemon.wait_state(job_id, "succeeded")
    assert job["exit_code"] == 0
    out = daemon.cli("log", str(job_id)).stdout
    assert out == f"gpu={job['gpus'][0]} order=PCI_BUS_ID\n"
