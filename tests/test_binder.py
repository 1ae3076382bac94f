"""The Binder environment builds from the files in ``binder/`` alone, and runs a notebook.

What mybinder.org (repo2docker) does, without Docker: a fresh venv, ``pip install -r
binder/requirements.txt`` and then ``binder/postBuild``, both from the repository root, with
only the repository's files present (tracked or committable, nothing ignored). Then the plan-mode
notebook runs there, top to bottom, in a kernel of that venv, with a fresh HOME and no API key.
Packages come from PyPI only. Slow (minutes): marked ``binder``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.binder, pytest.mark.timeout(2400)]

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = "02_plan_mode.ipynb"


def _repo_files() -> list[str]:
    """The files a clone would have: tracked, or new and not ignored (no .venv, no builds)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO, check=True, capture_output=True, timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"needs a git checkout to know the repository's files ({e})")
    return [f for f in out.decode().split("\0") if f and (REPO / f).is_file()]


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> str:
    """Run a step; its stdout and stderr, or a failure that shows their tails."""
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        tail = (p.stdout[-3000:] + "\n" + p.stderr[-3000:]).strip()
        pytest.fail(f"{' '.join(argv)} failed ({p.returncode}):\n{tail}")
    return p.stdout + p.stderr


def test_binder_environment_runs_the_plan_mode_notebook(tmp_path: Path) -> None:
    clone = tmp_path / "repo"
    for f in _repo_files():
        dest = clone / f
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, dest)
    assert (clone / "binder" / "requirements.txt").is_file()

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, dict(os.environ), 300)
    bindir = venv / "bin"
    home = tmp_path / "home"
    home.mkdir()
    # The venv first on PATH, as the image's env is; no variable of ours leaks in.
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith(("VIRTUAL_ENV", "PYTHON", "JUPYTER", "IPYTHON", "ANTHROPIC",
                             "CLAUDE"))
    }
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # no .pyc for every installed module at install time (Python writes those it imports
    # when it imports them): the build is the claim, not its byte code
    env["PIP_NO_COMPILE"] = "1"

    # repo2docker: pip install -r binder/requirements.txt, then binder/postBuild, from the root
    _run([str(bindir / "python"), "-m", "pip", "install", "-q", "-r",
          "binder/requirements.txt"], clone, env, 1500)
    _run(["bash", "binder/postBuild"], clone, env, 1500)

    # the extension and the widgets are there, in the image's own Python
    out = _run([str(bindir / "python"), "-c",
                "import plan_widgets, ipywidgets, jupyterlab; print(plan_widgets.__file__)"],
               tmp_path, env, 120)
    assert str(venv) in out, "plan_widgets is installed into the venv, not found elsewhere"
    labext = _run([str(bindir / "jupyter"), "labextension", "list"], tmp_path,
                  {**env, "HOME": str(home)}, 300)
    assert "@jupyter-widgets/jupyterlab-manager" in labext, "JupyterLab cannot show widgets"

    # A user's session: fresh HOME (like /home/jovyan), no key, the notebook's own folder.
    run_env = {
        **env,
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
        "JUPYTER_DATA_DIR": str(home / ".local" / "share" / "jupyter"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "IPYTHONDIR": str(home / ".ipython"),
        "TMPDIR": str(tmp_path),
    }
    run_env.pop("ANTHROPIC_API_KEY", None)
    executed = tmp_path / "executed.ipynb"
    _run([str(bindir / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
          "--ExecutePreprocessor.timeout=180", "--ExecutePreprocessor.kernel_name=python3",
          f"--output={executed}", NOTEBOOK], clone / "notebooks", run_env, 900)

    nb = json.loads(executed.read_text(encoding="utf-8"))
    text = "\n".join(
        "".join(o.get("text", ""))
        for c in nb["cells"] if c["cell_type"] == "code"
        for o in c.get("outputs", []) if o.get("output_type") == "stream"
    )
    errors = [o for c in nb["cells"] for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors
    # what the notebook shows a user: the mode came back, the approved work ran
    assert "mode: acceptEdits" in text
    assert "hello from the approved plan" in text
    assert "plan:decided   approved  next mode: acceptEdits" in text
    # the repository copy stays clean: the agent wrote into its scratch folder
    assert not (clone / "notebooks" / "hello.py").exists()
    assert not (clone / "notebooks" / ".plan_widgets").exists()
