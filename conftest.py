"""How the suite is shared among parallel workers (pytest-xdist, as ``scripts/test`` runs it):
for ``tests/`` and the example notebooks (nbval) alike, so it lives above both.

- What must run in one process stays together: a notebook's cells (each runs in the kernel
  the cells before it made), and the tests of a module that declares a shared fixture (one
  JupyterLab and one Chromium for the module, one per UI when the tests' ids name it). Every
  other test goes wherever a worker is free.
- The longest start first (a fresh venv, a Hub, a browser, a notebook, end to end, then the
  rest), so no long test starts last while the other workers have run dry. Within a module
  the order stays as written (a notebook's cells in particular).

Why a scheduler of our own rather than ``--dist loadgroup`` and ``xdist_group`` marks: with
pytest 9.2 and pytest-xdist 3.8 the marks are silently ignored (xdist writes the group into
``item._nodeid``, which pytest 9.2 no longer reads: pytest-xdist#1386, measured here: a
module's fixture set up on three workers). This one groups by the test ids alone, which the
controller has. ``--dist loadscope`` (what scripts/test asks for) is the fallback without this
file: one module per unit, also safe for the notebooks.

Without ``-n`` nothing changes: the order is changed only in xdist's workers.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent
_HEAVY = ("binder", "hub", "browser")
"""What a test waits on, heaviest first (its markers: tests/conftest.py)."""
_SHARED = re.compile(r"""@pytest\.fixture\([^)]*scope=["'](?:class|module|package|session)""")


@cache
def _shares_a_fixture(path: str) -> bool:
    """Whether the test module at ``path`` (relative to the root) declares a fixture shared
    beyond one test (class, module, package or session scope)."""
    try:
        return bool(_SHARED.search((ROOT / path).read_text(encoding="utf-8")))
    except OSError:
        return False


def work_unit(nodeid: str) -> str:
    """The unit of work ``nodeid`` goes in: its notebook, its module (and the UI its id
    names) when the module shares a fixture, else the test alone."""
    path, _, name = nodeid.partition("::")
    if path.endswith(".ipynb"):
        return path
    if _shares_a_fixture(path):
        param = re.search(r"\[([^\]]*)\]$", name)
        return f"{path}[{param.group(1)}]" if param else path
    return nodeid


@pytest.hookimpl(optionalhook=True)  # (a hook of pytest-xdist, when it is installed)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    class Units(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return Units(config, log)


def _weight(item: pytest.Item) -> int:
    """Lower starts sooner: a fresh venv, a Hub, a browser, a notebook, end to end, the rest."""
    for i, mark in enumerate(_HEAVY):
        if item.get_closest_marker(mark) is not None:
            return i
    if item.nodeid.partition("::")[0].endswith(".ipynb"):
        return len(_HEAVY)
    if item.get_closest_marker("e2e") is not None:
        return len(_HEAVY) + 1
    return len(_HEAVY) + 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: the controller sends in this order
        items.sort(key=_weight)  # (stable: each module's own order is kept)
