"""Every distribution the package imports is declared in pyproject.toml (issue 44): one that
comes only through another dependency (traitlets, comm) can vanish when that one changes, and
its floor is never checked (scripts/check-package pins declared floors only)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest's own dependency there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _imported_top_level() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "plan_widgets").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"plan_widgets", "__future__"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_imported_distribution_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [*project["dependencies"],
                *(r for extra in project["optional-dependencies"].values() for r in extra)]
    declared_names = {_normal(re.split(r"[ ;<>=!~\[]", r, maxsplit=1)[0]) for r in declared}
    dists = importlib.metadata.packages_distributions()
    imported = _imported_top_level()
    assert {"IPython", "traitlets", "claude_agent_sdk"} <= imported  # the scan sees imports
    missing = sorted(f"{m} ({', '.join(dists.get(m, ['not installed']))})" for m in imported
                     if not any(_normal(d) in declared_names for d in dists.get(m, [m])))
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"
