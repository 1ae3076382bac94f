"""Shared fixtures: a real kernel (jupyter_client) in a scratch folder, and test scripts.

End-to-end tests run the real Claude Code CLI bundled with the SDK against the project's own
scripted model on 127.0.0.1. Every wait is bounded (see ``kernel.Kernel.wait_until``).
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from kernel import Kernel  # noqa: E402

SCRIPTS = Path(__file__).parent / "scripts"
EXAMPLES = Path(__file__).resolve().parents[1] / "plan_widgets" / "scripted" / "examples"


def pytest_configure(config: pytest.Config) -> None:
    for name, what in (
        ("e2e", "end to end: a real kernel and the real CLI against the scripted model"),
        ("browser", "a real JupyterLab 4 or Notebook 7 in headless Chromium"),
        ("binder", "installs the Binder environment into a fresh venv (slow)"),
        ("hub", "a real JupyterHub with several users (tests/hub.py)"),
    ):
        config.addinivalue_line("markers", f"{name}: {what}")


def write_script(folder: Path, text: str, name: str = "script.yaml") -> Path:
    """Write a scripted-model script (dedented YAML) into ``folder``; returns its path."""
    p = folder / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A scratch working directory for the kernel and the agent, with the test scripts."""
    d = tmp_path / "work"
    d.mkdir()
    for src in [*SCRIPTS.glob("*.yaml"), *EXAMPLES.glob("*.yaml")]:
        shutil.copy(src, d / src.name)
    return d


@pytest.fixture
def kernel(workdir: Path) -> Iterator[Kernel]:
    """A fresh ipykernel in ``workdir`` with ``%load_ext plan_widgets`` done."""
    k = Kernel(workdir)
    try:
        k.execute("%load_ext plan_widgets\nimport plan_widgets")
        yield k
    finally:
        try:
            k.execute("import plan_widgets.ipython.registry as _r\nawait _r.close_all(10)",
                      timeout=30, allow_error=True)
        except Exception:
            pass
        k.shutdown()
