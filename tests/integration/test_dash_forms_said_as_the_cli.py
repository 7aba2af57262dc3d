"""The dashboard's forms say what the CLI says, in the forms' words (real daemon, the forms
posted over its socket as a browser posts them):

- the submit form's jobs page warns of a CUDA_VISIBLE_DEVICES set in a command or in the
  *environment changes* box, as `gpuherd submit` does (before: no word, and the job ran on a
  GPU another job held);
- the GPUs page's *Add* with an index past 64 bits is refused as -1 is, naming the GPUs'
  limit, in the form's line (before: a 422 JSON the page showed nothing of, naming 2**63 - 1);
- the edit form's answer names the fields by its boxes' labels and writes sizes one way
  (before: `only_gpus 1 -> 2, ram 1.0 GiB -> 2.0 GiB, max_log_size 1 GiB -> 2 GiB`); the
  CLI's `edit` says what it said.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import urlencode

from conftest import Herd, UnixConnection

SETS_IT = "CUDA_VISIBLE_DEVICES=2 sh -c 'echo saw $CUDA_VISIBLE_DEVICES'"
HUGE = "99999999999999999999"


def _post(herd: Herd, path: str, htmx: bool, **fields: str) -> tuple[int, str, str]:
    """A dashboard form posted: (status, Location, body)."""
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if htmx:
        headers["HX-Request"] = "true"
    conn = UnixConnection(herd.client.socket_path, timeout=30)
    try:
        conn.request("POST", path, body=urlencode(fields), headers=headers)
        response = conn.getresponse()
        return response.status, response.headers.get("location", ""), response.read().decode()
    finally:
        conn.close()


def _warnings(page: str) -> list[str]:
    found = re.findall(r'<div class="flash warning submit-note">warning: (.*?)</div>', page, re.S)
    return [html.unescape(w) for w in found]


def _submitted(herd: Herd, cwd: Path, **boxes: str) -> list[str]:
    """The warnings of the jobs page a submission of the form leads to."""
    fields = {"gpus": "1", "priority": "0", "hold": "1", "cwd": str(cwd), **boxes}
    status, location, body = _post(herd, "/submit", False, **fields)
    assert status == 303, body
    return _warnings(herd.page(location))


def _cli_warnings(herd: Herd, cwd: Path, *args: str) -> list[str]:
    said = herd.cli("submit", "--hold", *args, cwd=cwd).stderr.splitlines()
    return [line.removeprefix("gpuherd: warning: ") for line in said if "warning:" in line]


def test_the_submit_forms_jobs_page_warns_of_cuda_visible_devices_as_submit_does(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    cli = _cli_warnings(herd, tmp_path, "--", SETS_IT)
    assert len(cli) == 1 and "the command sets CUDA_VISIBLE_DEVICES=2" in cli[0], cli
    assert _submitted(herd, tmp_path, commands=SETS_IT) == [
        cli[0].replace("--only-gpus", "'only on GPUs'")  # (the box that keeps it there)
    ]
    # Two lines that set it alike: one warning, as `submit` prints it once.
    assert len(_submitted(herd, tmp_path, commands=f"{SETS_IT}\n{SETS_IT} x")) == 1
    cli = _cli_warnings(herd, tmp_path, "--env", "CUDA_VISIBLE_DEVICES=3", "--", "true")
    assert cli == [
        "--env CUDA_VISIBLE_DEVICES=3 is replaced: the job sees the GPUs gpuherd places it on;"
        " --only-gpus 3 keeps the job on those GPUs"
    ]
    assert _submitted(herd, tmp_path, commands="true", env="CUDA_VISIBLE_DEVICES=3") == [
        "'environment changes' CUDA_VISIBLE_DEVICES=3 is replaced: the job sees the GPUs"
        " gpuherd places it on; 'only on GPUs' 3 keeps the job on those GPUs"
    ]
    # Kept on given GPUs, or given none: nothing to say, as `submit` says nothing.
    assert _submitted(herd, tmp_path, commands=SETS_IT, only_gpus="2") == []
    assert _submitted(herd, tmp_path, commands=SETS_IT, gpus="0") == []
    assert _cli_warnings(herd, tmp_path, "--gpus", "0", "--", SETS_IT) == []


def test_a_gpu_index_past_64_bits_is_refused_in_the_forms_words(shared_daemon: Herd) -> None:
    herd = shared_daemon
    before = herd.client.get("/gpus")
    for op in ("add", "remove", "drain"):
        for index in (HUGE, f"-{HUGE}"):
            status, _, body = _post(herd, "/ui/gpus", True, op=op, index=index, next="/gpus")
            assert status == 200, body
            assert f"GPU {index} is not a GPU index: use 0 to 4095" in body, body
            assert 'class="flash error"' in body
    _, _, body = _post(herd, "/ui/gpus", True, op="add", index="-1", next="/gpus")
    assert "GPU -1 is not a GPU index: use 0 to 4095" in body  # (as it was: the same words)
    assert herd.client.get("/gpus") == before


def test_the_edit_forms_answer_names_its_boxes_and_writes_sizes_one_way(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    options = ("--hold", "--only-gpus", "1", "--ram", "1GiB", "--max-log-size", "1GiB")
    out = herd.cli("submit", *options, "--retry-delay", "30s", "--", "true", cwd=tmp_path)
    job_id = int(re.findall(r"\d+", out.stdout)[0])
    edited = {"only_gpus": "2", "ram": "2GiB", "retry_delay": "1m", "max_log_size": "2GiB"}
    was = {"only_gpus": "1", "ram": "1.0 GiB", "retry_delay": "30s", "max_log_size": "1.0 GiB"}
    fields = {**edited, **{f"was.{k}": v for k, v in was.items()}, "next": f"/jobs/{job_id}"}
    status, _, body = _post(herd, f"/ui/jobs/{job_id}/edit", True, **fields)
    assert status == 200, body
    said = [html.unescape(m) for m in re.findall(r'<div class="flash ok">(.*?)</div>', body)]
    assert said[0] == (
        f"job {job_id}: edited ('only on GPUs' 1 -> 2, 'host memory' 1.0 GiB -> 2.0 GiB,"
        " 'retry delay' 30s -> 1m, 'max log size' 1.0 GiB -> 2.0 GiB)"
    )
    # The CLI's edit says it as it did: the API's names, a cap as typed.
    cli = herd.cli("edit", str(job_id), "--ram", "3GiB", "--max-log-size", "3GiB").stdout
    assert f"job {job_id}: edited (ram 2.0 GiB -> 3.0 GiB, max_log_size 2 GiB -> 3 GiB)" in cli
    # A begin time, after the fields (the daemon's words of it kept but its box's label).
    fields = {"name": "x", "begin": "+2h", "next": f"/jobs/{job_id}"}
    _, _, body = _post(herd, f"/ui/jobs/{job_id}/edit", True, **fields)
    assert f"job {job_id}: edited (&#39;name&#39; none -&gt; x, &#39;begin&#39; none -&gt; " in body
    # A cleared box: `none`, as the daemon says it.
    fields = {"ram": "", "was.ram": "3.0 GiB", "next": f"/jobs/{job_id}"}
    _, _, body = _post(herd, f"/ui/jobs/{job_id}/edit", True, **fields)
    assert f"job {job_id}: edited (&#39;host memory&#39; 3.0 GiB -&gt; none)" in body, body
