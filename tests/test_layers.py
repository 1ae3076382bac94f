"""The architecture, checked: layers import downward only, no import circles, one SDK module.

Layers, lowest first: model (events, fold) < store < agent (the SDK seam, translation, gate,
session) < render < widgets < ipython (magics, commands). ``scripted`` (the offline model) is a
tool the agent starts; it may use the model and the store (its request log). The package's
``__init__`` is the public API above them all.

Every import counts, also one inside a function or under ``TYPE_CHECKING``: for the direction,
and for circles. A type-only import is still a dependency a reader follows: the session's
helpers take the few things they use (small protocols in ``agent/ports.py``, or callables),
never the session itself, so no module imports back into the one that composes it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "plan_widgets"
RANK = {"model": 0, "store": 1, "scripted": 1.5, "agent": 2, "render": 3, "widgets": 4,
        "ipython": 5}


def _module(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANK else None


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at run time?) for each import in ``path``."""
    mod = _module(path)
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    out: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target] + [f"{target}.{a.name}" for a in node.names]
        out.extend((n, id(node) not in type_only) for n in names)
    return out


def _graph() -> dict[str, list[tuple[str, bool]]]:
    modules = {_module(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, list[tuple[str, bool]]] = {}
    for mod, path in modules.items():
        graph[mod] = [(t, rt) for t, rt in _imports(path) if t in modules and t != mod]
    return graph


def test_layers_import_downward_only() -> None:
    upward = []
    for mod, targets in _graph().items():
        here = _layer(mod)
        for target, _ in targets:
            there = _layer(target)
            if here and there and RANK[there] > RANK[here]:
                upward.append(f"{mod} imports {target} ({here} < {there})")
            if here and there == "scripted" and here not in ("agent", "scripted", "ipython"):
                upward.append(f"{mod} starts the scripted model")
            if here == "scripted" and there not in (None, "scripted", "model", "store"):
                upward.append(f"{mod} (scripted) imports {target}")
    assert not upward, "\n".join(upward)


def test_no_import_circles() -> None:
    graph = {m: sorted({t for t, _ in ts}) for m, ts in _graph().items()}
    graph = {m: [t for t in ts if not m.startswith(t + ".")] for m, ts in graph.items()}
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for t in graph.get(m, []):
            if state.get(t) == 1:
                cycles.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in state:
                visit(t, [*stack, t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, "\n".join(cycles)


def test_one_module_imports_the_sdk() -> None:
    users = sorted(_module(p) for p in PKG.rglob("*.py")
                   if any(t == "claude_agent_sdk" or t.startswith("claude_agent_sdk.")
                          for t, _ in _imports(p)))
    assert users == ["plan_widgets.agent.sdk"]


@pytest.mark.parametrize("limit", [420])
def test_modules_and_functions_stay_small(limit: int) -> None:
    """About 400 lines a module, 60 a function: each module one idea, each function short."""
    big = []
    for p in PKG.rglob("*.py"):
        text = p.read_text(encoding="utf-8")
        if text.count("\n") > limit:
            big.append(f"{p.relative_to(PKG)}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > 65:
                    big.append(f"{p.relative_to(PKG)}:{node.lineno} {node.name}: {n} lines")
    assert not big, "\n".join(big)
