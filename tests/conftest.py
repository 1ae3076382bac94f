"""Shared fixtures: a real kernel (jupyter_client) in a scratch folder, and test scripts.

End-to-end tests run the real Claude Code CLI bundled with the SDK against the project's own
scripted model on 127.0.0.1. Every wait is bounded (see ``kernel.Kernel.wait_until``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from kernel import Kernel  # noqa: E402

SCRIPTS = Path(__file__).parent / "scripts"
# the installed package's examples: a checkout's, or a wheel's (scripts/test runs the floors
# subset against a built wheel, from the unpacked sdist)
_SPEC = importlib.util.find_spec("plan_widgets")
assert _SPEC is not None and _SPEC.origin is not None, "plan_widgets is not installed"
EXAMPLES = Path(_SPEC.origin).parent / "scripted" / "examples"
if os.environ.get("PLAN_WIDGETS_FROM_WHEEL") and Path(_SPEC.origin).resolve().is_relative_to(
        Path(__file__).resolve().parents[1]):  # scripts/check-package: the wheel, not the source
    raise RuntimeError(f"plan_widgets was imported from the source tree ({_SPEC.origin}), "
                       "not from the installed wheel")


def pytest_configure(config: pytest.Config) -> None:
    for name, what in (
        ("e2e", "end to end: a real kernel and the real CLI against the scripted model"),
        ("browser", "a real JupyterLab 4 or Notebook 7 in headless Chromium"),
        ("binder", "installs the Binder environment into a fresh venv (slow)"),
        ("hub", "a real JupyterHub with several users (tests/hub.py)"),
        ("floors", "the subset scripts/test runs against the lowest allowed dependencies, "
                   "from the built wheel"),
        ("quick", "the end-to-end path `scripts/test --quick` runs with the fast tests"),
    ):
        config.addinivalue_line("markers", f"{name}: {what}")


# -- skips: each one expected, with its reason and the condition it is expected under -------
# CI (./scripts/test, as root on Linux with the test dependency groups) runs every test: a
# skip that is not listed here, or listed but not expected on this machine, fails the run
# (reported with -rs).
# PLAN_WIDGETS_ALLOWED_SKIPS: comma-separated parts of skip reasons a machine may also skip
# (e.g. a container as root that may not mount a tmpfs), said in the summary.
_ROOT = Path(__file__).resolve().parents[1]
_NOT_ROOT = not hasattr(os, "geteuid") or os.geteuid() != 0
EXPECTED_SKIPS: list[tuple[str, str, Callable[[], bool]]] = [
    # (a part of the skip's reason, why it may skip, when it is expected to skip)
    ("needs root and setpriv", "drops CAP_DAC_OVERRIDE: root only",
     lambda: _NOT_ROOT or shutil.which("setpriv") is None),
    ("cannot mount a tmpfs", "a full disk is a tmpfs: mounting needs root", lambda: _NOT_ROOT),
    ("bypassPermissions only as root", "the CLI refuses it as root only", lambda: _NOT_ROOT),
    ("needs /proc", "counts file descriptors there", lambda: not Path("/proc/self/stat").exists()),
    ("needs a git checkout", "lists the repository's files", lambda: not (_ROOT / ".git").exists()),
    ("could not import 'comrak'", "comrak has no wheel there", lambda: sys.platform == "win32"),
]
_unexpected: list[tuple[str, str]] = []


def _expected_skip(reason: str) -> bool:
    allowed = [a for a in os.environ.get("PLAN_WIDGETS_ALLOWED_SKIPS", "").split(",") if a]
    return (any(part in reason and when() for part, _why, when in EXPECTED_SKIPS)
            or any(a in reason for a in allowed))


def _note_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        if not _expected_skip(reason) and (report.nodeid, reason) not in _unexpected:
            _unexpected.append((report.nodeid, reason))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _note_skip(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A skip while collecting (``importorskip`` or ``skip(allow_module_level=True)`` at a
    module's top): the whole module did not run, which no test report says."""
    _note_skip(report)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _unexpected:
        terminalreporter.section("unexpected skips (tests/conftest.py EXPECTED_SKIPS)", red=True)
        for nodeid, reason in _unexpected:
            terminalreporter.write_line(f"{nodeid}: {reason}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _unexpected and exitstatus == 0:
        session.exitstatus = 1  # a test that did not run is not a test that passed


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A scratch working directory for the kernel and the agent, with the test scripts."""
    d = tmp_path / "work"
    d.mkdir()
    for src in [*SCRIPTS.glob("*.yaml"), *EXAMPLES.glob("*.yaml")]:
        shutil.copy(src, d / src.name)
    return d


_PASSED = pytest.StashKey[bool]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Whether the test itself passed, for its fixtures' teardown (the ``kernel`` fixture)."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.stash[_PASSED] = report.passed


@pytest.fixture(scope="session")
def _spare_kernels() -> Iterator[list[Kernel]]:
    """This worker's kernel between two tests (tests/kernel_reuse.py), shut down at the end."""
    spare: list[Kernel] = []
    yield spare
    for k in spare:
        k.shutdown()


@pytest.fixture
def kernel(workdir: Path, request: pytest.FixtureRequest,
           _spare_kernels: list[Kernel]) -> Iterator[Kernel]:
    """An ipykernel in ``workdir`` with ``%load_ext plan_widgets`` done, as a fresh one is: the
    kernel of an earlier test of this worker when it could be tidied back to that state
    (tests/kernel_reuse.py says what is checked), else a new one."""
    import kernel_reuse

    k = _spare_kernels.pop() if _spare_kernels else None
    if k is not None:
        try:
            kernel_reuse.move(k, workdir)
        except Exception:  # it did not answer: a new one
            k.shutdown()
            k = None
    if k is None:
        k = Kernel(workdir)
        try:
            k.execute(kernel_reuse.LOADED)
            k.execute(kernel_reuse.REMEMBER, store_history=False)
        except BaseException:
            k.shutdown()
            raise
        k.forget(workdir)
    try:
        yield k
    finally:
        why_not = (kernel_reuse.tidy(k) if request.node.stash.get(_PASSED, False)
                   else "its test did not pass")
        kernel_reuse.note(request.node.nodeid, why_not)
        if why_not is None:
            _spare_kernels.append(k)
        else:
            k.close()
