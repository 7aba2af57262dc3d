"""Install the peers into benchmarks/.scratch/ (PyPI: one venv each; Debian: unpacked .debs).

Nothing is installed system-wide: `apt-get download` + `dpkg -x` unpack task-spooler and GNU
parallel under the scratch folder. A peer that cannot be installed is reported with the
reason, and the run goes on without it. Installs are kept between runs (delete the scratch
folder to start over).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from harness.common import REPO, SCRATCH

PYPI = {
    "gflow": "gflow",
    "simple-gpu-scheduler": "simple-gpu-scheduler==0.1.4",
    "gpusched": "gpusched",
    "ray": "ray==2.60.*",
    "runqd": "runqd",
}
DEBIAN = ("task-spooler", "parallel")


@dataclass
class Peer:
    name: str
    ok: bool
    version: str = ""
    reason: str = ""
    paths: dict[str, str] = field(default_factory=dict)


def _tail(text: str, lines: int = 3) -> str:
    """The line that says what went wrong (the last `...Error: ...`), else the last lines."""
    kept = [ln.strip(" │╰─>") for ln in text.splitlines() if ln.strip() and "Location" not in ln]
    errors = [ln for ln in kept if "Error:" in ln or ln.startswith("ERROR:")]
    return errors[-1] if errors else " / ".join(kept[-lines:])


def _venv(name: str, spec: str, log: list[str]) -> tuple[Path | None, str]:
    root = SCRATCH / "venvs" / name
    done = root / ".installed"
    failed = root.with_suffix(".failed")
    if done.exists():
        return root, done.read_text().strip()
    if failed.exists():
        return None, failed.read_text().strip()
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
    log.append(f"pip install {spec} into {root}")
    proc = subprocess.run(
        [str(root / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", spec],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        failed.write_text(f"`pip install {spec}` failed: {_tail(proc.stderr)}")
        shutil.rmtree(root, ignore_errors=True)
        return None, failed.read_text()
    dist = spec.split("=")[0]
    version = subprocess.run(
        [
            str(root / "bin" / "python"),
            "-c",
            f"import importlib.metadata as m; print(m.version({dist!r}))",
        ],
        capture_output=True,
        text=True,
    ).stdout.strip()
    done.write_text(version)
    return root, version


def gpuherd_venv(log: list[str]) -> tuple[Path | None, str]:
    """gpuherd installed (editable, from this repository) into a venv of its own, as the
    peers are: (its python, "") or (None, why not).

    Why not this interpreter: a sandbox may add start-up work to it that no user's install
    has (this one's site-packages holds a .pth that imports certifi at every start, 27 ms
    of `python -c pass`'s 37), and the peers' venvs are clean. Reinstalled when the
    repository or its pyproject.toml changed."""
    root = SCRATCH / "venvs" / "gpuherd"
    pyproject = (REPO / "pyproject.toml").read_bytes()
    stamp = f"{REPO} {hashlib.sha256(pyproject).hexdigest()[:16]}"
    done = root / ".installed"
    if done.exists() and done.read_text() == stamp:
        return root / "bin" / "python", ""
    shutil.rmtree(root, ignore_errors=True)
    log.append(f"pip install -e {REPO} into {root}")
    try:
        subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
        pip = [str(root / "bin" / "pip"), "install", "-q", "--disable-pip-version-check"]
        proc = subprocess.run([*pip, "-e", str(REPO)], capture_output=True, text=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"creating gpuherd's venv failed: {exc}"
    if proc.returncode != 0:
        return None, f"`pip install -e {REPO}` failed: {_tail(proc.stderr)}"
    done.write_text(stamp)
    return root / "bin" / "python", ""


def _debs(log: list[str]) -> tuple[Path | None, str]:
    root = SCRATCH / "deb"
    done = root / ".installed"
    if done.exists():
        return root / "root", done.read_text()
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    log.append("apt-get download " + " ".join(DEBIAN))
    proc = subprocess.run(
        ["apt-get", "download", *DEBIAN], cwd=root, capture_output=True, text=True
    )
    if proc.returncode != 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "update", "-q"], capture_output=True)
        proc = subprocess.run(
            ["apt-get", "download", *DEBIAN], cwd=root, capture_output=True, text=True
        )
    if proc.returncode != 0:
        return None, f"`apt-get download {' '.join(DEBIAN)}` failed: {_tail(proc.stderr)}"
    versions = {}
    for deb in sorted(root.glob("*.deb")):
        subprocess.run(["dpkg", "-x", str(deb), str(root / "root")], check=True)
        versions[deb.name.split("_")[0]] = deb.name.split("_")[1]
    done.write_text(json.dumps(versions))
    return root / "root", done.read_text()


FAKE_NVML_CORE = Path(__file__).with_name("fake_nvml.c")


def _fake_nvml(gflow_bin: Path) -> tuple[Path | None, str]:
    """gflow finds GPUs through NVML only: build a stand-in libnvidia-ml.so.1 with 4 idle GPUs.

    Every NVML symbol the gflow binary names is defined; the ones fake_nvml.c does not
    implement answer NVML_ERROR_NOT_SUPPORTED.
    """
    out = SCRATCH / "fake-nvml"
    lib = out / "libnvidia-ml.so.1"
    if lib.exists():
        return out, ""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return None, "no C compiler to build the stand-in libnvidia-ml gflow needs without a GPU"
    out.mkdir(parents=True, exist_ok=True)
    core = FAKE_NVML_CORE.read_text()
    defined = set(re.findall(r"\b(nvml\w+)\(", core))
    names = sorted(set(re.findall(rb"nvml[A-Z][A-Za-z0-9_]{3,}", gflow_bin.read_bytes())))
    stubs = "".join(
        f"int {n.decode()}() {{ return 3; }}\n" for n in names if n.decode() not in defined
    )
    (out / "fake_nvml.c").write_text(core + stubs)
    proc = subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-w", "-o", str(lib), str(out / "fake_nvml.c")],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return None, f"building the stand-in libnvidia-ml failed: {_tail(proc.stderr)}"
    return out, ""


def install_all(log: list[str]) -> dict[str, Peer]:
    peers: dict[str, Peer] = {}
    for name, spec in PYPI.items():
        try:
            root, info = _venv(name, spec, log)
        except (OSError, subprocess.SubprocessError) as exc:
            root, info = None, f"creating the venv failed: {exc}"
        peers[name] = Peer(name, root is not None, info if root else "", "" if root else info)
        if root is not None:
            peers[name].paths["bin"] = str(root / "bin")
    gflow = peers["runqd"]
    if gflow.ok:
        fake, why = _fake_nvml(Path(gflow.paths["bin"]) / "gflow")
        if fake is None:
            gflow.ok, gflow.reason = False, why
        else:
            gflow.paths["nvml"] = str(fake)
        if shutil.which("tmux") is None:
            gflow.ok, gflow.reason = False, "gflow runs every job in tmux, and tmux is missing"
    root, info = _debs(log)
    for name, binary in (("task-spooler", "tsp"), ("parallel", "parallel")):
        path = root / "usr" / "bin" / binary if root else None
        if path is not None and path.exists():
            version = json.loads(info).get(name, "")
            peers[name] = Peer(name, True, version, paths={"bin": str(path)})
        else:
            peers[name] = Peer(
                name, False, reason=info if root is None else f"no {binary} in the .deb"
            )
    return peers
