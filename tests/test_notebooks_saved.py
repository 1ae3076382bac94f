"""The example notebooks as a new user first sees them (GitHub, nbviewer, JupyterLab before
running a cell): their saved outputs must tell the truth (issue 26).

They are saved by ``scripts/save_notebooks.py`` after a full run on the scripted model. A
notebook saved by another way showed plan cards "Waiting for you (...; expires at ...)" that
later cells had approved, ``mode ? model ?`` control lines, and the paths of the machine that
ran it (its home folder's ``.claude/plans/...``). Fast: it reads the files, nothing runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

NOTEBOOKS = sorted(
    (Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9]*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STALE = {
    "a mode or model not reported": re.compile(r"\bmode(l)? (<b>)?\?"),
    "a card waiting for you": re.compile(r"(?i)waiting for you|expires at|expires in"),
    # a path of the machine that ran it; ~/... (the run's scratch HOME) says nothing of it
    "an absolute path": re.compile(
        r"(?<![\w~.])/(root|home|tmp|Users|private|var/folders|work|opt|srv|mnt|workspaces"
        r"|Volumes)/|\b[A-Za-z]:(\\{1,2}|/)Users\b"),
    "a plan file's absolute path": re.compile(r"(?<!~)/\.claude/plans/"),
    "a traceback": re.compile(r"Traceback \(most recent call last\)"),
}


def _texts(cell: dict[str, Any], widget_views: bool = False) -> list[str]:
    out = []
    for o in cell.get("outputs", []):
        for key in ("text", "traceback"):
            if key in o:
                out.append("".join(o[key]) if isinstance(o[key], list) else str(o[key]))
        for mime, value in (o.get("data") or {}).items():
            out.append(json.dumps(value) if not isinstance(value, (str, list)) else
                       "".join(value) if isinstance(value, list) else value)
            assert widget_views or mime != WIDGET_VIEW, "a widget view (no widget state is saved)"
    return out


def untrue(nb: dict[str, Any], kinds: tuple[str, ...] = tuple(STALE),
           widget_views: bool = False) -> list[str]:
    """What the saved notebook ``nb`` says that is not true later (``kinds`` of STALE), one
    line each. ``widget_views``: a page that loaded the notebook saves its widget views
    (issue 36), which this check then allows."""
    bad = []
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for i, cell in enumerate(code):
        for text in _texts(cell, widget_views):
            for what in kinds:
                for m in STALE[what].finditer(text):
                    bad.append(f"code cell {i + 1}: {what}: "
                               f"{text[max(0, m.start() - 60):m.end() + 60]!r}")
    return bad


def test_the_notebooks_are_there() -> None:
    assert len(NOTEBOOKS) >= 7, NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_saved_notebook_tells_the_truth(path: Path) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert "widgets" not in nb.get("metadata", {}), "widget state saved"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert any(c.get("outputs") for c in code), (
        "saved without outputs: run scripts/save_notebooks.py")
    for i, cell in enumerate(code):
        assert cell.get("execution_count") is not None, f"code cell {i + 1} was not run"
    bad = untrue(nb)
    assert not bad, f"{path.name} (re-run: .venv/bin/python scripts/save_notebooks.py " \
                    f"notebooks/{path.name}):\n" + "\n".join(bad)


def test_the_check_catches_what_the_old_notebooks_held() -> None:
    """Each pattern finds what the notebooks saved before issue 26 held (so none can pass by
    matching nothing)."""
    held = {
        "a mode or model not reported": "default: mode <b>?</b> model <b>?</b>",
        "a card waiting for you": "Waiting for you (since 17:12:13; expires at 17:42:13)",
        "an absolute path": '{"file_path": "/tmp/plan-widgets-plan-mode-x/hello.py"}',
        "a plan file's absolute path": "/root/.claude/plans/add-a-greeting-script.md",
    }
    for what, text in held.items():
        assert STALE[what].search(text), what
    # where else a machine keeps its users' work: servers, containers, Codespaces, Windows
    for where in ("/opt/conda/envs/x/lib", "/srv/jupyter/ada/hello.py", "/mnt/data/hello.py",
                  "/workspaces/project/hello.py", "/Volumes/Work/hello.py",
                  "C:\\Users\\ada\\hello.py", '{"p": "C:\\\\Users\\\\ada"}',
                  "c:/Users/ada/hello.py"):
        assert STALE["an absolute path"].search(where), where
    for fine in ("~/.claude/plans/add-a-greeting.md", "~/scratch/plan-widgets-x/hello.py",
                 "session default · mode Accept edits · model claude-opus-5-5",
                 "the model? it answered"):
        assert not any(p.search(fine) for p in STALE.values()), fine
