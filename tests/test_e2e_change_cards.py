"""Issue 43 end to end: each edit's permission card shows the change, with the real CLI and
the scripted model (tests/scripts/change_cards.yaml: the model Reads the file, then asks to
change it), and the finished turn keeps the change it decided.

What the page shows is the card's HTML with its tags taken out (html.unescape), as a person
reads it: line numbers (old, new), the sign, the line.

MultiEdit is not here: this CLI (2.1.337, SDK 0.2.190) has no such tool (its tool result is
"No such tool available: MultiEdit"; measured through this script), so no card can ask for
it; the card for older CLIs is proved in tests/test_change_cards.py.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from kernel import Kernel

pytestmark = pytest.mark.e2e


def as_text(raw: str) -> str:
    """HTML as a page shows its text: a block ends a line, inline marks do not."""
    raw = re.sub(r"</(span|div|pre|summary|p|li)>|<br\s*/?>", "\n", raw.replace("&#10;", "\n"))
    return html.unescape(re.sub(r"<[^>]+>", "", raw))


def shown(k: Kernel) -> str:
    """Every card and turn output as a page shows its text."""
    return as_text(k.html_text() + "\n" + "\n".join(k.markdown_outputs()))


def lines(k: Kernel) -> list[str]:
    return [x.strip() for x in shown(k).split("\n") if x.strip()]


def ask(k: Kernel, prompt: str) -> str:
    """Run ``prompt``; returns the Allow button once the card waits."""
    k.execute(f"%%claude --scripted change_cards.yaml\n{prompt}")
    return k.wait_widget("ButtonModel", description="Allow")


def saved_cards(k: Kernel) -> list[str]:
    """The static tool cards the kernel sent as the cell's display (what a saved notebook
    keeps: a finished turn replaces its widgets by its static HTML, update_display_data)."""
    with k._lock:
        data = [m["content"].get("data", {}).get("text/markdown", "") for m in k.messages
                if m["header"]["msg_type"] in ("display_data", "update_display_data")]
    return [md for md in data if "pw-card-tool pw-static" in md]


def allow_and_finish(k: Kernel, allow: str) -> list[str]:
    """Click Allow, wait for the turn to end; the lines of the static record it leaves."""
    k.click(allow)
    out = k.execute("print(await plan_widgets.get().wait(60))", timeout=90)
    assert out["text"].strip() == "idle"
    static = k.wait_until(lambda: saved_cards(k), 30, "the finished turn's static card")
    return [x.strip() for x in as_text(static[-1]).split("\n") if x.strip()]


def has_run(got: list[str], run: list[str]) -> bool:
    """``run`` appears in ``got`` as consecutive lines."""
    return any(got[i:i + len(run)] == run for i in range(len(got)))


@pytest.fixture
def notes(workdir: Path) -> Path:
    p = workdir / "notes.txt"
    p.write_text("alpha\nbeta\ngamma\n")
    return p


def test_write_over_a_file_shows_the_line_it_changes(kernel: Kernel, notes: Path) -> None:
    allow = ask(kernel, "REWRITE-NOTES please")
    got = lines(kernel)
    assert "Write over an existing file: +1 −1 lines" in got
    assert has_run(got, ["@@ -1,3 +1,3 @@", "1 1   alpha", "2   - beta", "2 + BETA-ACC",
                         "3 3   gamma"]), got
    assert "+ alpha" not in got  # not every line as added (the report)
    static = allow_and_finish(kernel, allow)
    assert notes.read_text() == "alpha\nBETA-ACC\ngamma\n"
    # the decided change stays in the finished turn (the file now is the new one)
    assert has_run(static, ["2   - beta", "2 + BETA-ACC"]) and "Allowed" in " ".join(static)


def test_edit_shows_the_line_in_context(kernel: Kernel, notes: Path) -> None:
    allow = ask(kernel, "EDIT-NOTES please")
    got = lines(kernel)
    assert "Edit: +1 −1 lines" in got
    assert has_run(got, ["1 1   alpha", "2 2   beta", "3   - gamma", "3 + gamma ray"]), got
    allow_and_finish(kernel, allow)
    assert notes.read_text() == "alpha\nbeta\ngamma ray\n"


def test_a_new_file_shows_as_new(kernel: Kernel, workdir: Path) -> None:
    allow = ask(kernel, "NEW-FILE please")
    got = lines(kernel)
    assert "New file: 3 lines" in got
    assert has_run(got, ["1 + import math", "2 +", "3 + print(math.pi)"]), got
    allow_and_finish(kernel, allow)
    assert (workdir / "fresh.py").read_text() == "import math\n\nprint(math.pi)\n"


@pytest.fixture
def notebook(workdir: Path) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Analysis", id="t0"),
        nbformat.v4.new_code_cell("x = 1", id="c1"),
        nbformat.v4.new_code_cell("print(x)", id="c2")])
    p = workdir / "analysis.ipynb"
    nbformat.write(nb, p)
    return p


def cells(p: Path) -> list[tuple[str, str]]:
    import nbformat

    return [(c.cell_type, c.source) for c in nbformat.read(p, as_version=4).cells]


def test_notebook_replace_shows_the_cell(kernel: Kernel, notebook: Path) -> None:
    allow = ask(kernel, "NB-REPLACE please")
    got = lines(kernel)
    assert "Replace cell c1 (cell 2 of 3, code)" in got, got
    assert has_run(got, ["1   - x = 1", "1 + df.describe()"]), got
    assert any(x.endswith("analysis.ipynb") for x in got)
    static = allow_and_finish(kernel, allow)
    assert cells(notebook)[1] == ("code", "df.describe()")
    assert has_run(static, ["1   - x = 1", "1 + df.describe()"])


def test_notebook_insert_shows_the_new_cell(kernel: Kernel, notebook: Path) -> None:
    allow = ask(kernel, "NB-INSERT please")
    got = lines(kernel)
    assert "Insert a new markdown cell after cell c1 (it becomes cell 3 of 4)" in got, got
    assert has_run(got, ["1 + ## Summary", "2 + The mean is *x*."]), got
    allow_and_finish(kernel, allow)
    assert cells(notebook)[2] == ("markdown", "## Summary\nThe mean is *x*.")


def test_notebook_delete_shows_the_cell_that_goes(kernel: Kernel, notebook: Path) -> None:
    allow = ask(kernel, "NB-DELETE please")
    got = lines(kernel)
    assert "Delete cell c2 (cell 3 of 3, code)" in got, got
    assert has_run(got, ["1   - print(x)"]), got
    allow_and_finish(kernel, allow)
    assert len(cells(notebook)) == 2
