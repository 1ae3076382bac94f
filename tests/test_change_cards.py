"""Issue 43, fast: an edit's permission card shows the change against the file on disk (a
unified diff with line numbers, context and changed words marked; a new file as new; a
binary or large file said; an Edit the CLI will refuse said), a NotebookEdit shows the cell,
and every form of the card (live, static, Markdown, terminal) keeps the same change.

The end-to-end proof with the real CLI is tests/test_e2e_change_cards.py."""

from __future__ import annotations

import asyncio
import html
import json
import re
from pathlib import Path

import pytest

from plan_widgets.agent import ondisk
from plan_widgets.agent.decisions import ToolDecision
from plan_widgets.agent.gate import Gate
from plan_widgets.agent.ondisk import Cell, OnDisk, read_file, read_notebook, snapshot
from plan_widgets.agent.seam import PermissionRequest
from plan_widgets.render import filediff, look
from plan_widgets.render.change import change_html, change_lines, change_of
from plan_widgets.widgets.kinds import card_html, decision_markdown, edit, kind_of

NOTES = "alpha\nbeta\ngamma\n"


def _text(tool: str, tool_input: dict, before: OnDisk | None) -> list[str]:
    c = change_of(tool, tool_input, before)
    assert c is not None
    return [line for line, _style in change_lines(c)]


def _visible(safe_html: str) -> str:
    """What a page shows of the HTML (tags out, references decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", safe_html))


def _notes(path: str = "/w/notes.txt") -> OnDisk:
    return OnDisk(path, "text", text=NOTES, size=len(NOTES))


# -- Write, Edit, MultiEdit ---------------------------------------------------------------------
def test_write_over_a_file_shows_the_one_line_it_changes() -> None:
    lines = _text("Write", {"file_path": "/w/notes.txt", "content": "alpha\nBETA-ACC\ngamma\n"},
                  _notes())
    assert lines[1].strip() == "Write over an existing file: +1 −1 lines"
    # line numbers (old, new), the context around it, the line that goes and the one that comes
    assert [x.strip() for x in lines[3:]] == ["1 1   alpha", "2   - beta", "2 + BETA-ACC",
                                              "3 3   gamma"]
    assert lines[2].strip() == "@@ -1,3 +1,3 @@"


def test_changed_words_are_marked_and_everything_escaped() -> None:
    before = OnDisk("/w/<b>.txt", "text", text="x = 1\n<img src=x onerror=alert(1)>\n")
    c = change_of("Edit", {"file_path": "/w/<b>.txt", "old_string": "x = 1",
                           "new_string": "x = 2"}, before)
    assert c is not None
    out = change_html(c)
    assert "<img" not in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out
    assert re.search(r"<del [^>]*>1</del>", out) and re.search(r"<ins [^>]*>2</ins>", out)
    assert "&lt;b&gt;.txt" in out and "/w/<b>" not in out
    # the plan's Changes view's line styles: one theme for both diffs
    assert look.DIFF_ADD_LINE in out and look.DIFF_DEL_LINE in out


def test_a_new_file_shows_as_new_with_its_line_count() -> None:
    lines = _text("Write", {"file_path": "/w/new.py", "content": "a\nb\nc\n"},
                  OnDisk("/w/new.py", "missing"))
    assert lines[1].strip() == "New file: 3 lines"
    assert [x.strip() for x in lines[3:]] == ["1 + a", "2 + b", "3 + c"]


@pytest.mark.parametrize(("state", "said"), [
    (OnDisk("/w/x", "binary", size=2048), "binary (2 KB)"),
    (OnDisk("/w/x", "large", size=3_000_000), "large (3.0 MB)"),
    (OnDisk("/w/x", "unreadable", why="Permission denied"), "could not be read (Permission"),
])
def test_a_binary_large_or_unreadable_file_says_so(state: OnDisk, said: str) -> None:
    lines = _text("Write", {"file_path": "/w/x", "content": "new\n"}, state)
    assert said in lines[2]


def test_an_edit_whose_old_string_is_gone_says_so_in_one_line() -> None:
    lines = _text("Edit", {"file_path": "/w/notes.txt", "old_string": "delta",
                           "new_string": "DELTA"}, _notes())
    assert lines[2].strip() == ("The old_string is no longer in the file: the CLI will refuse "
                                "this Edit.")
    assert [x.strip() for x in lines[3:]] == ["- delta", "+ DELTA"]  # as asked, no numbers


def test_replace_all_and_an_ambiguous_edit() -> None:
    text = "a = 1\nb = a\nc = a\n"
    before = OnDisk("/w/m.py", "text", text=text)
    every = _text("Edit", {"file_path": "/w/m.py", "old_string": "= a",
                           "new_string": "= z", "replace_all": True}, before)
    assert every[1].strip() == "Edit (every occurrence): +2 −2 lines"
    assert any(x.strip() == "3 + c = z" for x in every)
    once = _text("Edit", {"file_path": "/w/m.py", "old_string": "= a", "new_string": "= z"},
                 before)
    assert "is in the file 2 times (and replace_all is off)" in once[2]


def test_multiedit_applies_in_order_and_names_the_edit_that_fails() -> None:
    ok = _text("MultiEdit", {"file_path": "/w/notes.txt", "edits": [
        {"old_string": "alpha", "new_string": "ALPHA"},
        {"old_string": "ALPHA\nbeta", "new_string": "ALPHA\nbeta2"}]}, _notes())
    assert ok[1].strip() == "MultiEdit: +2 −2 lines"
    assert [x.strip() for x in ok[3:7]] == ["1   - alpha", "2   - beta", "1 + ALPHA",
                                            "2 + beta2"]
    bad = _text("MultiEdit", {"file_path": "/w/notes.txt", "edits": [
        {"old_string": "alpha", "new_string": "A"}, {"old_string": "zeta", "new_string": "Z"}]},
        _notes())
    assert bad[2].strip().startswith("Edit 2 of 2: its old_string is no longer in the file")


def test_long_runs_fold_with_their_count_and_the_whole_is_bounded() -> None:
    old = "".join(f"line {i}\n" for i in range(200))
    new = old.replace("line 100\n", "".join(f"new {i}\n" for i in range(90)))
    out = filediff.file_diff_html(old, new)
    assert out.count("<details") == 1
    assert "71 more lines (+71 −0)" in _visible(out)  # 91 changed lines: 20 shown, 71 folded
    huge = filediff.file_diff_html("", "".join(f"{i}\n" for i in range(5000)))
    assert "more diff lines not shown" in _visible(huge)
    assert huge.count("display:block") <= filediff.MAX_LINES + 2


# -- NotebookEdit -------------------------------------------------------------------------------
NB = OnDisk("/w/analysis.ipynb", "text", cells=(
    Cell("t0", "markdown", "# Analysis"), Cell("c1", "code", "x = 1"),
    Cell("c2", "code", "print(x)")))


def _cell(**kw: str) -> list[str]:
    return _text("NotebookEdit", {"notebook_path": "/w/analysis.ipynb", **kw}, NB)


def test_notebook_edit_shows_the_cell_replace_insert_delete() -> None:
    rep = _cell(cell_id="c1", new_source="df.describe()", cell_type="code", edit_mode="replace")
    assert rep[0].strip() == "/w/analysis.ipynb"
    assert rep[1].strip() == "Replace cell c1 (cell 2 of 3, code)"
    assert [x.strip() for x in rep[3:]] == ["1   - x = 1", "1 + df.describe()"]
    ins = _cell(cell_id="c1", new_source="y = 2\nz = 3", cell_type="code", edit_mode="insert")
    assert ins[1].strip() == "Insert a new code cell after cell c1 (it becomes cell 3 of 4)"
    assert [x.strip() for x in ins[3:]] == ["1 + y = 2", "2 + z = 3"]
    top = _cell(new_source="# Intro", cell_type="markdown", edit_mode="insert")
    assert top[1].strip() == "Insert a new markdown cell at the top (it becomes cell 1 of 4)"
    gone = _cell(cell_id="c2", new_source="", edit_mode="delete")
    assert gone[1].strip() == "Delete cell c2 (cell 3 of 3, code)"
    assert [x.strip() for x in gone[3:]] == ["1   - print(x)"]


def test_notebook_edit_type_change_index_ids_and_a_missing_cell() -> None:
    assert _cell(cell_id="c1", new_source="# x", cell_type="markdown")[1].strip() == (
        "Replace cell c1 (cell 2 of 3, code → markdown)")
    assert "(cell 1 of 3, markdown)" in _cell(cell_id="cell-0", new_source="# A")[1]
    assert _cell(cell_id="c9", new_source="y")[2].strip() == (
        "No cell c9 in this notebook: the CLI will refuse this edit.")


# -- reading the file, off the loop ------------------------------------------------------------
def test_read_file_states(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "t.txt").write_text("hi\n")
    (tmp_path / "b.bin").write_bytes(b"\x89PNG\0\0")
    assert read_file("t.txt", str(tmp_path)) == OnDisk(str(tmp_path / "t.txt"), "text",
                                                      text="hi\n", size=3)
    assert read_file(str(tmp_path / "none.txt")).state == "missing"
    assert read_file(str(tmp_path / "b.bin")).state == "binary"
    assert read_file(str(tmp_path)).state == "unreadable"
    monkeypatch.setattr(ondisk, "MAX_READ", 2)
    assert read_file(str(tmp_path / "t.txt")) == OnDisk(str(tmp_path / "t.txt"), "large", size=3)


def test_read_notebook_cells(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T", id="t0"),
                                         nbformat.v4.new_code_cell("x = 1\ny = 2", id="c1")])
    nbformat.write(nb, tmp_path / "a.ipynb")
    got = read_notebook(str(tmp_path / "a.ipynb"))
    assert got.cells == (Cell("t0", "markdown", "# T"), Cell("c1", "code", "x = 1\ny = 2"))
    (tmp_path / "bad.ipynb").write_text(json.dumps({"no": "cells"}))
    assert read_notebook(str(tmp_path / "bad.ipynb")).state == "unreadable"


def test_a_read_that_hangs_ends_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    release = threading.Event()
    monkeypatch.setattr(ondisk, "READ_SECONDS", 0.05)
    monkeypatch.setattr(ondisk, "read_file", lambda p, c=None: release.wait(30) and None)

    async def main() -> OnDisk | None:
        try:
            return await snapshot("Write", {"file_path": "/mnt/hung/x"}, None)
        finally:
            release.set()  # the worker thread ends (asyncio.run waits for it)

    got = asyncio.run(main())
    assert got is not None and got.state == "unreadable" and "not read within" in got.why


def test_the_gate_reads_the_file_when_the_card_opens(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(NOTES)

    class Host:
        from plan_widgets.model.options import SessionOptions
        options = SessionOptions(approval_timeout=5, cwd=str(tmp_path))
        plan_in_force = False
        cli_env: dict[str, str] = {}
        host_tools = None
        opened: list[ToolDecision] = []

        def open_decision(self, d: ToolDecision) -> None:
            self.opened.append(d)
            d.deny("no", by="code")

        def decision_closed(self, d: object) -> None:
            pass

    host = Host()
    req = PermissionRequest("Write", {"file_path": "notes.txt", "content": "x\n"})
    asyncio.run(Gate(host)(req))  # type: ignore[arg-type]
    assert host.opened[0].before == OnDisk(str(tmp_path / "notes.txt"), "text", text=NOTES,
                                           size=len(NOTES))


# -- every form of the card keeps the decided change ------------------------------------------
def test_static_card_markdown_and_terminal_keep_the_decided_change() -> None:
    asyncio.run(_keeps_the_decided_change())


async def _keeps_the_decided_change() -> None:
    d = ToolDecision("Write", {"file_path": "/w/notes.txt", "content": "alpha\nBETA-ACC\ngamma\n"},
                     [])
    d.before = _notes()
    assert kind_of(d) is edit.KIND
    d.allow(by="user")
    static = _visible(card_html(d))
    assert "2   - beta" in static and "2 + BETA-ACC" in static and "1 1   alpha" in static
    assert "Allowed" in static
    md = decision_markdown(d)
    assert "```diff" in md and "  2 + BETA-ACC" in md
    printed: list[tuple[str, str | None]] = []

    class Out:
        def line(self, text: str, style: str | None = None) -> None:
            printed.append((text, style))

    edit.show_text(d, Out())  # type: ignore[arg-type]
    assert printed[1] == ("Allow Write /w/notes.txt?", "bold")
    assert ("  2   - beta", "red") in printed and ("    2 + BETA-ACC", "green") in printed


# -- a proposed cell that revises a cell of the open notebook (issue 43, point 2) -------------
def test_a_proposed_revision_is_the_change_against_the_cell_on_disk(tmp_path: Path) -> None:
    from plan_widgets.agent.seam import ToolFailure
    from plan_widgets.ipython.kernel.revision import revision

    nb = tmp_path / "open.ipynb"
    nb.write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# Title"},
        {"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [],
         "execution_count": 1, "source": ["a = 1\n", "b = 2"]}]}))
    got = asyncio.run(revision(str(nb), "c1", "a = 1\nb = 20\n"))
    assert got.splitlines() == [f"The change from cell c1 (cell 2 of 2) of {nb}:",
                                "@@ -1,2 +1,2 @@", "1 1   a = 1", "2   - b = 2", "  2 + b = 20"]
    assert asyncio.run(revision(str(nb), "cell-1", "a = 1\nb = 2\n")) == (
        f"It is the same as cell cell-1 (cell 2 of 2) of {nb}: nothing would change.")
    for notebook, cid, why in [(str(nb), "nope", "the open notebook has no cell 'nope'"),
                               (None, "c1", "no open notebook is known to this kernel"),
                               (str(tmp_path / "gone.ipynb"), "c1", "could not read the open "
                                "notebook")]:
        with pytest.raises(ToolFailure, match=f"^{re.escape(why)}"):
            asyncio.run(revision(notebook, cid, "x"))
