"""Terminal IPython in a real pseudo-terminal, typed the way a person types.

``ipython`` (prompt_toolkit) runs in a pty in a scratch folder with a scratch HOME and
IPYTHONDIR; the test types a ``%%claude`` cell line by line, ends it with Enter on blank lines
(as every cell magic), answers the prompts (a wrong answer first, which is asked again) and
reads the screen's text. The scripted model answers; every wait is bounded.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("rich")

pytestmark = pytest.mark.e2e

# CSI (colours, cursor moves), OSC (titles, hyperlinks), and the other escapes a
# full-screen prompt writes; what is left is the text a person reads.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[@-_]"
)
SGR = re.compile(r"\x1b\[[0-9;]*m")


class Term:
    """An ``ipython`` in a pty: type keys, wait (bounded) for text to show."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.child = pexpect.spawn(
            sys.executable, ["-m", "IPython", "--no-banner", "--colors=Linux"],
            cwd=str(cwd), env=env, dimensions=(50, 120), encoding="utf-8",
            codec_errors="replace", timeout=5,
        )
        self.raw = ""  # everything the terminal received
        self.pos = 0  # how far into the text `expect` has read

    @property
    def text(self) -> str:
        return _ESCAPES.sub("", self.raw).replace("\r", "")

    def _read(self, wait: float) -> None:
        try:
            self.raw += self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            pass

    def expect(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """Wait until ``pattern`` (a regex) shows after what was read so far; move past it."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.text, self.pos)
            if m:
                self.pos = m.end()
                return m
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} did not show in {timeout:g} s; screen text "
                                     f"since the last match:\n{self.text[self.pos:][-3000:]}")
            try:
                self._read(0.2)
            except pexpect.EOF:
                raise AssertionError(f"ipython ended before {pattern!r}:\n"
                                     f"{self.text[-3000:]}") from None

    def settle(self, quiet: float = 0.5, timeout: float = 10.0) -> str:
        """Read until nothing new comes for ``quiet`` seconds; the new text."""
        start, deadline = len(self.text), time.monotonic() + timeout
        while time.monotonic() < deadline:
            before = len(self.raw)
            self._read(quiet)
            if len(self.raw) == before:
                break
        return self.text[start:]

    def type_line(self, line: str = "") -> None:
        """Type ``line`` and press Enter (a pty sends carriage return for Enter)."""
        self.child.send(line + "\r")

    def close(self) -> None:
        if self.child.isalive():
            # Ctrl-C first: a test may end with a cell half typed, where "exit" would only be
            # one more line of it (measured: 20 s waiting for an exit that never came)
            self.child.send("\x03")
            self.settle(quiet=0.2, timeout=5)
            self.child.send("exit\r")
            try:
                self.child.expect(pexpect.EOF, timeout=20)
            except (pexpect.TIMEOUT, pexpect.EOF):
                pass
        self.child.close(force=True)


@pytest.fixture
def term(workdir: Path) -> Iterator[Term]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update(HOME=str(workdir / ".home"), IPYTHONDIR=str(workdir / ".home" / ".ipython"),
               TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1", COLUMNS="120", LINES="50")
    env.pop("NO_COLOR", None)
    (workdir / ".home").mkdir()
    t = Term(workdir, env)
    try:
        t.expect(r"In \[1\]: ", timeout=60)
        t.type_line("%load_ext plan_widgets")
        t.expect(r"In \[2\]: ", timeout=60)
        yield t
    finally:
        t.close()


CONT = r"\.\.\.: "  # IPython's continuation prompt


def test_a_typed_plan_cell_is_asked_again_on_a_wrong_answer_and_rendered(
    term: Term, workdir: Path
) -> None:
    # A lone %%claude line continues to the body, as %%timeit does; it does not run.
    # (The script is plan_approve.yaml's flow, with escape sequences and markup in the text.)
    term.type_line("%%claude --plan --scripted terminal_hostile_plan.yaml --mode acceptEdits")
    term.expect(CONT, timeout=15)
    assert "prompt is empty" not in term.settle()
    term.type_line("Add a greeting")
    term.expect(CONT, timeout=15)
    term.type_line()  # a blank line: still the cell (a cell magic ends at a second one)
    term.expect(CONT, timeout=15)
    term.type_line()
    term.expect(r"Plan proposed", timeout=120)
    term.expect(r"\[a\]pprove / approve \+ auto-\[e\]dits / auto-edits for this plan \[o\]nly / "
                r"approve, start \[f\]resh / \[c\]omment on a line / \[k\]eep planning: ")
    shown = term.text
    plan = shown[shown.index("Plan proposed") - 5:]
    assert "Plan: add a greeting" in plan and "# Plan" not in plan  # a heading, rendered
    assert "╭" in plan and "plan file: " in plan  # rich's box
    assert "`hello.py`" not in plan and "hello.py" in plan  # inline code, rendered
    assert SGR.search(term.raw[term.raw.index("Plan proposed"):])  # styled by rich
    # The model's escape sequences show as text and never reach the terminal: no window
    # title, no hidden text, no hyperlink, no line overwritten by a carriage return.
    for attack in ("\x1b]0;PWNED", "PWNED-TITLE\x07", "\x1b[8mHIDDEN", "\x1b]8;;https://evil",
                   "\rSafe step"):
        assert attack not in term.raw
    assert "␛]0;PWNED-TITLE␇␛[2J" in shown and "␛[8mHIDDEN-TEXT␛[0m" in plan
    assert "rm -rf ~ Safe step" in plan and "[bold red]NOT-MARKUP[/]" in plan

    term.type_line("y")  # not a choice: asked again, naming the choices
    term.expect(r"'y' is not a choice: type a to approve, e to approve and auto-accept edits,"
                r"\s+o\s+to\s+approve\s+and\s+auto-accept\s+edits\s+for\s+this\s+plan\s+only"
                r"\s+\(then\s+the\s+resting\s+mode\),"
                r"\s+f\s+to\s+approve\s+and\s+start\s+fresh,\s+c\s+to\s+comment\s+on\s+a\s+line,"
                r"\s+or\s+k\s+to\s+keep\s+planning\.")  # wraps at the terminal's width
    term.expect(r"\[k\]eep planning: ")
    term.type_line("")
    term.expect(r"Nothing was chosen: type a to approve")
    term.expect(r"\[k\]eep planning: ")
    term.type_line("a")
    term.expect(r"Done: hello\.py prints a greeting\.", timeout=120)
    term.expect(r"\(ok: ")
    term.expect(r"In \[3\]: ")
    assert (workdir / "hello.py").exists()

    term.type_line("import plan_widgets; print('MODE', plan_widgets.get().mode)")
    term.expect(r"MODE acceptEdits")
    term.expect(r"In \[4\]: ")

    # An empty cell, submitted with Esc+Enter, says so in one line.
    term.type_line("%%claude --plan")
    term.expect(CONT, timeout=15)
    term.child.send("\x1b\r")
    term.expect(r"%%claude: the prompt is empty: write what Claude should do below the "
                r"%%claude line\n+In \[5\]: ")
    assert "Traceback" not in term.text


def test_a_tool_prompt_is_asked_again_and_denies_only_when_told(
    term: Term, workdir: Path
) -> None:
    term.type_line("%%claude --session tools --scripted dec_tool.yaml")
    term.expect(CONT, timeout=15)
    term.type_line("Write two files")
    term.expect(CONT, timeout=15)
    term.type_line()
    term.expect(CONT, timeout=15)
    term.type_line()
    term.expect(r"Allow Write ", timeout=120)
    term.expect(r"New file: 1 line")  # the change, as the card shows it (issue 43)
    term.expect(r"1 \+ one")
    term.expect(r"\[y\]es(?:, once)? / (?:\[a\]lso the above / )?\[n\]o: ")
    term.type_line("sure")
    term.expect(r"'sure' is not a choice: type y to allow it once, ")
    term.expect(r"\[n\]o: ")
    term.type_line("n")
    term.expect(r"reason \(optional\): ")
    term.type_line("not now")
    term.expect(r"The write did not happen", timeout=120)
    term.expect(r"In \[3\]: ")
    assert not (workdir / "first.txt").exists()
    assert "Traceback" not in term.text


def test_an_expired_prompt_leaves_no_reader_behind(term: Term, workdir: Path) -> None:
    """A decision that expires while its prompt waits (issue 25): the next prompt takes the
    next line with one Enter, and no thread is left reading the terminal."""
    term.type_line("%%claude --session tools --scripted dec_tool.yaml --approval-timeout 2")
    term.expect(CONT, timeout=15)
    term.type_line("Write two files")
    term.expect(CONT, timeout=15)
    term.type_line()
    term.expect(CONT, timeout=15)
    term.type_line()
    term.expect(r"Allow Write ", timeout=120)
    term.expect(r"\[n\]o: ")
    # nobody answers: the decision expires after 2 s, the turn ends, IPython asks again
    term.expect(r"In \[3\]: ", timeout=120)
    term.settle()
    term.type_line("1 + 41")
    term.expect(r"Out\[3\]: 42", timeout=15)  # one Enter was enough
    term.expect(r"In \[4\]: ")
    term.type_line("import threading; sorted(t.name for t in threading.enumerate() "
                   "if 'input' in t.name or 'asyncio' in t.name)")
    listed = term.expect(r"Out\[4\]: (\[[^\]]*\])", timeout=15).group(1)
    assert "plan_widgets-input" not in listed, listed
    assert not (workdir / "first.txt").exists()
    assert "Traceback" not in term.text


def test_tab_completes_a_claude_cell_in_the_terminal(term: Term, workdir: Path) -> None:
    """Tab on the ``%%claude`` line, as a person presses it in terminal IPython: a value of
    ``--mode``, a path after ``--scripted``, and a project's command in the prompt, each
    taken into the line (one match: prompt_toolkit inserts it)."""
    (workdir / ".claude" / "commands").mkdir(parents=True)
    (workdir / ".claude" / "commands" / "greet.md").write_text("Say hello to $ARGUMENTS.\n")
    term.child.send("%%claude --mode accep\t")
    term.expect(r"--mode acceptEdits", timeout=30)
    term.child.send(" --scripted dec_to\t")
    term.expect(r"--scripted dec_tool\.yaml", timeout=30)
    term.type_line()
    term.expect(CONT, timeout=15)
    term.child.send("please /gre\t")
    term.expect(r"please /greet", timeout=30)
    assert "Traceback" not in term.text  # (that nothing started: tests/test_e2e_options.py)
