"""``%claude sessions / log / cost / plans / resume`` over real log files (no kernel, no CLI).

The tables are checked where a user would be hurt: hostile text from a plan or a prompt
must reach the page escaped, ids resolve by their start, and bad input is one line.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from plan_widgets import model as ev
from plan_widgets.ipython import commands as _commands
from plan_widgets.ipython import output as _output
from plan_widgets.ipython import registry as _registry
from plan_widgets.ipython.resume_log import options_to_resume
from plan_widgets.ipython.usage import Help as _Help
from plan_widgets.ipython.usage import Usage as _Usage
from plan_widgets.model.errors import OptionError
from plan_widgets.render.history import history_html, history_lines
from plan_widgets.store import LOG_DIR_ENV, EventLog, resume_options
from plan_widgets.store import index as _index

HOSTILE = '<img src=x onerror="window.pwned=1"> & <script>alert(1)</script>'


class Magics:
    """What the commands read from ``ClaudeMagics``."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = str(log_dir)
        self.scripted = None
        self.approval_timeout = 60.0


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOG_DIR_ENV, raising=False)
    monkeypatch.setattr(_registry, "_sessions", {})


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    monkeypatch.setattr(_output, "display", lambda obj, raw=False: out.append(obj))
    return out


def write_session(log_dir: Path, sid: str, *, name: str = "default", ts: float = 1.0e9,
                  pending: bool = True, cwd: str = "/w", scripted: str | None = None
                  ) -> list[Any]:
    events: list[Any] = [
        ev.SessionStarted(session_id=sid, name=name, cwd=cwd, resting_mode="acceptEdits",
                          model="m-1", scripted=scripted, ts=ts),
        ev.PlanMode(mode="acceptEdits", state="effective", source="start", ts=ts + 1),
        ev.TurnStarted(turn=1, prompt=f"first {HOSTILE}", plan=True, ts=ts + 2),
        ev.PlanMode(mode="plan", state="effective", source="user", ts=ts + 3),
        ev.ModelSwitched(to_model="m-1", why="start", ts=ts + 4),
        ev.PlanProposed(decision_id="pa", plan=f"# Plan A\n\n{HOSTILE}", ts=ts + 5),
        ev.PlanDecided(decision_id="pa", outcome="approved", mode_after="acceptEdits",
                       by="user", ts=ts + 6),
        ev.PlanMode(mode="acceptEdits", state="effective", source="approval", ts=ts + 7),
        ev.TurnEnded(turn=1, result="success", cost_usd=0.5, input_tokens=100,
                     output_tokens=20, ts=ts + 8),
    ]
    if pending:
        events += [
            ev.TurnStarted(turn=2, prompt="second", plan=True, ts=ts + 9),
            ev.PlanMode(mode="plan", state="effective", source="user", ts=ts + 10),
            ev.PlanProposed(decision_id="pb", plan="# Plan B", ts=ts + 11),
        ]
    with EventLog(log_dir / f"{sid}.jsonl") as log:
        return [log.append(e) for e in events]


def test_sessions_lists_the_logs_newest_first(tmp_path: Path, shown: list[Any]) -> None:
    write_session(tmp_path, "aaaa-1111", ts=1.0e9)
    write_session(tmp_path, "bbbb-2222", name="other", ts=1.1e9, pending=False)
    (tmp_path / "aaaa-1111.requests.jsonl").write_text("{}\n")  # not an event log
    _commands.run(Magics(tmp_path), "sessions")
    [table] = shown
    text = table["text/plain"].splitlines()
    assert text.pop(0) == f"event logs in {tmp_path}"
    assert text[0].split() == ["id", "name", "started", "turns", "cost", "last", "mode",
                               "pending", "where"]
    assert text[1].split()[:2] == ["bbbb-2222", "other"]
    assert text[2].split()[:2] == ["aaaa-1111", "default"]
    # the mode by the name the product shows (issue 42, point 7)
    assert "$0.5000" in text[2] and "1 unanswered" in text[2] and " Plan " in text[2]
    assert "<td style=\"text-align:left\">2</td>" in table["text/html"]


def test_history_names_both_conversations_of_a_plan_approved_to_start_fresh(
        tmp_path: Path, shown: list[Any]) -> None:
    write_session(tmp_path, "old-1111", ts=1.0e9, pending=False)
    handoff = ev.PlanHandoff(decision_id="pa", old_id="old-1111", new_id="new-2222",
                             plan="# Plan A", mode="acceptEdits", ts=1.0e9 + 20)
    with EventLog(tmp_path / "old-1111.jsonl") as log:
        log.append(handoff)
    with EventLog(tmp_path / "new-2222.jsonl") as log:
        log.append(ev.SessionStarted(session_id="new-2222", name="default", cwd="/w",
                                     resting_mode="acceptEdits", ts=1.0e9 + 21))
        log.append(handoff)
    _commands.run(Magics(tmp_path), "history")
    text = shown[0]["text/plain"]
    new_row = next(ln for ln in text.splitlines() if ln.startswith("new-2222"))
    old_row = next(ln for ln in text.splitlines() if ln.startswith("old-1111"))
    assert "default (started fresh from old-1111)" in new_row
    assert "default (went on in new-2222)" in old_row


def test_sessions_without_logs_says_where_it_looked(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _commands.run(Magics(tmp_path / "none"), "sessions")
    assert f"no sessions yet (no event logs in {tmp_path / 'none'})" in capsys.readouterr().out


def test_log_is_an_escaped_table(tmp_path: Path, shown: list[Any]) -> None:
    write_session(tmp_path, "aaaa-1111")
    _commands.run(Magics(tmp_path), "log aaaa")
    [table] = shown
    html = table["text/html"]
    assert "<img" not in html and "<script" not in html
    assert "&lt;img src=x onerror=&quot;window.pwned=1&quot;&gt;" in html
    assert "session aaaa-1111: 12 events" in html
    assert "plan pa approved by user; next mode acceptEdits" in html
    assert "turn 1 success; 100 in / 20 out; $0.5000 (running total)" in table["text/plain"]


def test_cost_and_plans_come_from_the_log(tmp_path: Path, shown: list[Any],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    write_session(tmp_path, "aaaa-1111")
    _commands.run(Magics(tmp_path), "cost")  # no live session: the newest log of that name
    assert capsys.readouterr().out.strip() == (
        "default (aaaa-1111): $0.5000 over 2 turns; 100 input / 20 output tokens")
    _commands.run(Magics(tmp_path), "plans aaaa-1111")
    out = capsys.readouterr().out
    assert out.startswith("Plan pa (turn 1), approved ") and "then mode acceptEdits" in out
    assert "# Plan A" in out  # not a kernel: the Markdown source, as text


@pytest.mark.parametrize("line, message", [
    ("log nosuch", "no session 'nosuch' in the event logs"),
    ("cost --session ghost", "no session 'ghost' in this kernel or in the logs"),
    ("status", "no session 'default' yet"),
    ("resume ../etc", "no session '../etc' in the event logs"),
])
def test_bad_ids_are_one_clear_line(tmp_path: Path, line: str, message: str) -> None:
    write_session(tmp_path, "aaaa-1111")
    with pytest.raises(OptionError) as info:
        _commands.run(Magics(tmp_path), line)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("line", ["log a b", "sessions x", "resume a b", "resume --bogus",
                                  "frobnicate", "log --session"])
def test_usage_errors(tmp_path: Path, line: str) -> None:
    with pytest.raises(_Usage):
        _commands.run(Magics(tmp_path), line)


def corrupt(log_dir: Path, sid: str = "aaaa-1111") -> Path:
    """A log with a garbage line in its middle (not a torn last line: that one is ignored)."""
    write_session(log_dir, sid)
    path = log_dir / f"{sid}.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3]) + b"{garbage\n" + b"".join(lines[3:]))
    return path


@pytest.mark.parametrize("line", ["log aaaa", "cost aaaa-1111", "plans aaaa", "resume aaaa"])
def test_a_corrupt_log_is_one_clear_line(tmp_path: Path, line: str) -> None:
    path = corrupt(tmp_path)
    with pytest.raises(OptionError) as info:
        _commands.run(Magics(tmp_path), line)
    msg = str(info.value)
    assert "\n" not in msg and f"{path}:4: malformed event line" in msg, msg
    assert _registry.sessions() == {}  # resume started nothing


def test_an_unreadable_log_is_one_clear_line(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    write_session(tmp_path, "aaaa-1111")

    def denied(path: Any) -> Any:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(_index, "read_events", denied)
    with pytest.raises(OptionError) as info:
        _commands.run(Magics(tmp_path), "cost aaaa")
    assert str(info.value) == ("%claude cost: cannot read the event log: [Errno 13] "
                               f"Permission denied: '{tmp_path / 'aaaa-1111.jsonl'}'")


class Live:
    """A session of this kernel, as the history commands see it."""

    def __init__(self, sid: str, name: str = "live") -> None:
        self.session_id = sid
        self.name = name
        self.events: list[Any] = []
        self.state = ev.fold([])
        self.dead = None
        self.closed = False


@pytest.mark.parametrize("line", ["log abcd", "cost abcd", "plans abcd", "resume abcd"])
def test_an_ambiguous_prefix_names_the_sessions(tmp_path: Path, line: str) -> None:
    write_session(tmp_path, "abcd-1")
    write_session(tmp_path, "abcd-2")
    with pytest.raises(OptionError) as info:
        _commands.run(Magics(tmp_path), line)
    assert str(info.value) == "'abcd' matches 2 sessions: abcd-1, abcd-2 (give more of the id)"
    # more of the id is enough; so is the whole id
    assert options_to_resume({"resume": "abcd-2", "log_dir": str(tmp_path)})["resume"] == "abcd-2"
    # %%claude --resume and plan_widgets.session(resume=...) go through the same resolution
    with pytest.raises(OptionError, match="'abcd' matches 2 sessions"):
        options_to_resume({"resume": "abcd", "log_dir": str(tmp_path)})


def test_a_prefix_shared_with_a_live_session_is_ambiguous_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shown: list[Any],
        capsys: pytest.CaptureFixture[str]) -> None:
    write_session(tmp_path, "abcd-logged")
    monkeypatch.setattr(_registry, "_sessions", {"live": Live("abcd-live")})
    for line in ("log abcd", "resume abcd", "cost ab"):
        with pytest.raises(OptionError) as info:
            _commands.run(Magics(tmp_path), line)
        assert "matches 2 sessions: abcd-live, abcd-logged" in str(info.value), line
    # one of them, by more of its id: the live one's events, or the log's
    _commands.run(Magics(tmp_path), "log abcd-li")
    assert capsys.readouterr().out == "no events yet\n" and not shown
    _commands.run(Magics(tmp_path), "log abcd-lo")
    assert "session abcd-logged: 12 events" in shown[0]["text/plain"]


def test_help_documents_the_log_location(tmp_path: Path) -> None:
    with pytest.raises(_Help) as info:
        _commands.run(Magics(tmp_path), "--help")
    text = str(info.value)
    assert "PLAN_WIDGETS_LOG_DIR" in text and "<cwd>/.plan_widgets/sessions" in text
    assert "%config ClaudeMagics.log_dir" in text


def test_resume_options_come_from_the_last_start(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("steps: [{reply: [{text: hi}]}]\n")
    write_session(tmp_path, "aaaa-1111", cwd=str(tmp_path), scripted=str(script))
    assert resume_options("aaaa", tmp_path) == {
        "mode": "acceptEdits", "cwd": str(tmp_path), "model": "m-1", "scripted": str(script)}
    # explicit options win over the log's; a vanished folder or script is left out
    opts = options_to_resume({"resume": "aaaa", "log_dir": str(tmp_path), "mode": "default"})
    assert opts["resume"] == "aaaa-1111" and opts["mode"] == "default"
    script.unlink()
    assert "scripted" not in resume_options("aaaa-1111", tmp_path)


def test_history_of_a_crashed_session_shows_nothing_answerable(tmp_path: Path) -> None:
    events = write_session(tmp_path, "aaaa-1111")
    events.append(ev.PlanDecided(decision_id="pb", outcome="expired", by="restart", seq=99))
    state = ev.fold(events)
    lines = history_lines(events, state)
    assert lines[0].startswith("turn 1 at ") and lines[0].endswith("[success]")
    assert lines[1].endswith("[unfinished]")
    assert lines[2] == "plan pa (turn 1): Approved (then mode acceptEdits) - # Plan A"
    assert lines[3] == ("plan pb (turn 2): Expired: the kernel restarted before an answer; "
                        "it can no longer be answered - # Plan B")


def test_the_resumed_history_is_static_and_escaped(tmp_path: Path) -> None:
    """The history a resume shows is static HTML (issue 25: it was a widget that stayed live
    in the notebook), with the plans through the safe path and nothing to answer."""
    from test_render import problems, second_parse, tags

    events = write_session(tmp_path, "aaaa-1111")
    events.append(ev.PlanDecided(decision_id="pb", outcome="expired", by="restart", seq=99))
    page = history_html(events, ev.fold(events))
    assert [p for p in problems(page) if "style=" not in p] == []  # (our own styles)
    assert second_parse(page).rstrip("\n") == page  # one HTML block: passed on unchanged
    assert not {"button", "input", "textarea"} & set(tags(page))
    assert "<img" not in page and "<script" not in page and "&lt;img" in page
    assert "Expired: the kernel restarted before an answer" in page
    assert "<h1>Plan B</h1>" in page


def test_resume_shows_the_history_without_a_widget(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    from plan_widgets.ipython import resume as _resume

    events = write_session(tmp_path, "aaaa-1111")
    shown: list[Any] = []
    bars: list[Any] = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append(obj))
    monkeypatch.setattr(_resume, "in_kernel", lambda: True)
    monkeypatch.setattr(_resume._registry, "control_bar",
                        lambda s: SimpleNamespace(show=lambda: bars.append(s)))
    s = SimpleNamespace(events=events, state=ev.fold(events), session_id="aaaa-1111",
                        name="default")
    _resume.show_resumed(s)
    assert bars == [s]  # the session's control bar: live, in this cell
    assert len(shown) == 1 and set(shown[0]) == {"text/markdown", "text/plain"}
    assert "pw-history" in shown[0]["text/markdown"]
    assert shown[0]["text/plain"].startswith("turn 1 at ")


class Started:
    """What the registry starts in place of a real session: it records its options and reads
    no log (the real session reads the log once more, to fold it back into its state)."""

    def __init__(self, options: Any, **_kw: Any) -> None:  # kw: tools=, as Session takes
        self.options = options
        self.name = options.name
        self.session_id = options.resume
        self.events: list[Any] = []
        self.state = ev.fold([])
        self.dead = None
        self.closed = False


def test_resume_reads_the_log_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    from plan_widgets.agent import session as _session

    script = tmp_path / "s.yaml"
    script.write_text("steps: [{reply: [{text: hi}]}]\n")
    for i, sid in enumerate(["aaaa-1111", "bbbb-2222", "cccc-3333"]):
        write_session(tmp_path, sid, ts=1.0e9 + 100 * i, cwd=str(tmp_path), scripted=str(script))
    reads: list[str] = []
    real = _index.read_events

    def counted(path: Any) -> Any:
        reads.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(_index, "read_events", counted)
    monkeypatch.setattr(_session, "Session", Started)

    _commands.run(Magics(tmp_path), "resume aaaa")  # before: 3 reads here, 4 with the session's
    assert reads == ["aaaa-1111.jsonl"]
    s: Any = _registry.get("default")
    assert (s.options.resume, s.options.mode, s.options.scripted) == (
        "aaaa-1111", "acceptEdits", str(script))
    assert "Resumed session aaaa-1111 as 'default'" in capsys.readouterr().out

    reads.clear()
    monkeypatch.setattr(_registry, "_sessions", {})
    _commands.run(Magics(tmp_path), "resume")  # the newest: each log read once
    assert sorted(reads) == ["aaaa-1111.jsonl", "bbbb-2222.jsonl", "cccc-3333.jsonl"]
    assert _registry.get("default").options.resume == "cccc-3333"  # type: ignore[union-attr]

    reads.clear()  # %%claude --resume and plan_widgets.session(resume=...): once as well
    assert options_to_resume({"resume": "bbbb", "log_dir": str(tmp_path)})["mode"] == "acceptEdits"
    assert reads == ["bbbb-2222.jsonl"]
