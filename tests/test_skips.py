"""A skip nobody expected fails the run (tests/conftest.py EXPECTED_SKIPS): CI runs every test,
and a test that did not run is not one that passed. Runs pytest on a small file with the
suite's conftest as a plugin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _run(tmp_path: Path, body: str, *args: str, others: dict[str, str] | None = None,
         **env: str) -> subprocess.CompletedProcess[str]:
    f = tmp_path / "test_some.py"
    f.write_text("import pytest\n\n" + body, encoding="utf-8")
    for name, text in (others or {}).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "conftest", "-rs",
         "-q", *args, str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
        timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS),
                                                                        str(TESTS.parent)]),
                          **env})


def test_an_unexpected_skip_fails_the_run_and_is_named(tmp_path: Path) -> None:
    r = _run(tmp_path, "def test_x():\n    pytest.skip('some missing thing')\n\n"
                       "def test_y():\n    pass\n")
    assert r.returncode == 1, r.stdout
    assert "unexpected skips" in r.stdout and "test_some.py::test_x: some missing thing" in r.stdout


def test_a_root_only_skip_is_expected_only_without_root(tmp_path: Path) -> None:
    r = _run(tmp_path, "def test_x():\n    pytest.skip('cannot mount a tmpfs here: EPERM')\n")
    assert r.returncode == (1 if AS_ROOT else 0), r.stdout  # CI runs as root: must not skip
    assert ("unexpected skips" in r.stdout) == AS_ROOT


def test_a_machine_may_allow_more_skips(tmp_path: Path) -> None:
    r = _run(tmp_path, "def test_x():\n    pytest.skip('some missing thing')\n",
             PLAN_WIDGETS_ALLOWED_SKIPS="missing thing")
    assert r.returncode == 0, r.stdout
    assert "SKIPPED" in r.stdout  # still listed (-rs)


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_module_skipped_while_collecting_fails_the_run(tmp_path: Path,
                                                          args: tuple[str, ...]) -> None:
    """``importorskip`` at a module's top (a broken import) skips the whole module while
    collecting: no test report says so, and the run must fail all the same, also in parallel
    (the workers' collection reports reach the controller's hook)."""
    r = _run(tmp_path, "pytest.importorskip('no_such_module_here')\n\n"
                       "def test_x():\n    pass\n", *args,
             others={"test_other.py": "def test_y():\n    pass\n"})
    assert r.returncode == 1, r.stdout
    assert "unexpected skips" in r.stdout, r.stdout
    assert "test_some.py: could not import 'no_such_module_here'" in r.stdout, r.stdout
    assert "1 passed" in r.stdout  # the other module ran
