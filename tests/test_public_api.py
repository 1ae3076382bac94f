"""The public surface is named: ``__all__`` is what ``dir(plan_widgets)`` shows, and each name
in it resolves (lazily: ``%load_ext`` stays cheap), with nothing of the module's own imports."""

from __future__ import annotations

import subprocess
import sys

import plan_widgets


def test_dir_shows_the_api_and_not_the_modules_imports() -> None:
    shown = dir(plan_widgets)
    assert set(plan_widgets.__all__) <= set(shown)
    assert {"session", "get", "sessions", "Session", "PlanDecision", "decide_with"} <= set(shown)
    assert not {"Any", "annotations", "logging", "TYPE_CHECKING"} & set(shown)


def test_every_public_name_resolves() -> None:
    for name in plan_widgets.__all__:
        assert getattr(plan_widgets, name) is not None, name


def test_star_import_brings_the_api() -> None:
    code = ("from plan_widgets import *\n"
            "print(sorted(k for k in dir() if not k.startswith('__')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.strip() == str(sorted(plan_widgets.__all__))
