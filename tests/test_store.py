"""The JSONL event log (``plan_widgets.store.log``): writing, reading, redaction, finding."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from plan_widgets import model as ev
from plan_widgets.model import dump_event, fold
from plan_widgets.store import (
    LOG_DIR_ENV,
    REDACTED,
    EventLog,
    LogError,
    LogIncomplete,
    SessionSummary,
    default_log_dir,
    find_session_log,
    list_sessions,
    read_events,
    redact_event,
    redact_text,
)


@pytest.fixture(autouse=True)
def _no_env_log_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOG_DIR_ENV, raising=False)


def err(msg: str = "m", **kw: Any) -> ev.ErrorEvent:
    return ev.ErrorEvent(kind="k", message=msg, **kw)


def write_log(path: Path, events: list[Any]) -> list[Any]:
    with EventLog(path) as log:
        return [log.append(e) for e in events]


def lines_of(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return data.split(b"\n")[:-1]


# -- writing --------------------------------------------------------------------------------


def test_append_writes_one_json_line_per_event(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    events = [ev.TurnStarted(turn=1, prompt="two\nlines"), err("a"), err("b")]
    written = write_log(path, events)
    lines = lines_of(path)
    assert len(lines) == 3
    for line, e in zip(lines, written, strict=True):
        assert json.loads(line)["type"] == e.type
        assert ev.parse_event(line) == e
    assert read_events(path) == written


def test_each_append_is_readable_before_close(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    log = EventLog(path)
    try:
        for i in range(1, 4):
            log.append(err(f"m{i}"))
            # another reader, while the writer still holds the file open
            assert [e.message for e in read_events(path)] == [f"m{j}" for j in range(1, i + 1)]
            assert path.read_bytes().endswith(b"\n")
            assert len(log.events()) == i
    finally:
        log.close()


def test_seq_is_assigned_in_order(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    log = EventLog(path)
    assert log.seq == 0 and log.events() == []
    a = log.append(err("a", seq=99))  # whatever seq an event carries, the log numbers it
    b = log.append(err("b"))
    log.close()
    assert (a.seq, b.seq, log.seq) == (1, 2, 2)
    assert [e.seq for e in read_events(path)] == [1, 2]
    assert a.message == "a" and a.ts == read_events(path)[0].ts


def test_reopen_continues_the_numbering(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_log(path, [err("a"), err("b")])
    log = EventLog(path)
    assert log.seq == 2
    c = log.append(err("c"))
    log.close()
    assert c.seq == 3
    # closing and appending again reopens the same file
    log.append(err("d"))
    log.close()
    assert [(e.seq, e.message) for e in read_events(path)] == [
        (1, "a"), (2, "b"), (3, "c"), (4, "d")]


def test_append_creates_the_directory(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "s.jsonl"
    write_log(path, [err()])
    assert len(read_events(path)) == 1


def test_reopen_after_a_torn_tail_cuts_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_log(path, [err("a"), err("b")])
    torn = dump_event(err("lost", seq=3))[:25]
    with open(path, "ab") as fh:
        fh.write(torn.encode())
    log = EventLog(path)
    assert log.seq == 2
    c = log.append(err("c"))
    log.close()
    assert c.seq == 3
    assert torn.encode() not in path.read_bytes()
    assert len(lines_of(path)) == 3
    assert [e.message for e in read_events(path)] == ["a", "b", "c"]


def test_a_whole_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    # readers keep it, so the next writer must not cut it (nor reuse its seq)
    path = tmp_path / "s.jsonl"
    write_log(path, [err("a"), err("b")])
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert [e.message for e in read_events(path)] == ["a", "b"]
    log = EventLog(path)
    assert log.seq == 2
    log.append(err("c"))
    log.close()
    assert [(e.seq, e.message) for e in read_events(path)] == [(1, "a"), (2, "b"), (3, "c")]


class _FullDisk:
    """A file that takes half a line, then fails as a full disk would."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def write(self, data: Any) -> int:
        self.real.write(bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    def close(self) -> None:
        self.real.close()

    def fileno(self) -> int:
        return int(self.real.fileno())


def test_a_failed_write_leaves_no_broken_line_and_loses_no_event(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    log = EventLog(path)
    log.append(err("a"))
    log._fh = _FullDisk(log._fh)  # type: ignore[assignment]
    with pytest.raises(LogIncomplete) as info:
        log.append(err("kept"))
    assert isinstance(info.value, OSError) and info.value.at == 2
    assert "incomplete from event 2" in str(info.value)
    assert "No space left on device" in str(info.value) and "\n" not in str(info.value)
    assert (log.broken_at, log.seq) == (2, 2)
    assert isinstance(log.broken, OSError) and log.broken.errno == errno.ENOSPC
    assert [e.message for e in log.unwritten] == ["kept"]
    # the file holds the events before it, and no half line
    assert [(e.seq, e.message) for e in read_events(path)] == [(1, "a")]
    b = log.append(err("b"))  # the disk has room again: the kept event goes first
    log.close()
    assert b.seq == 3 and log.broken_at is None and log.unwritten == []
    assert [(e.seq, e.message) for e in read_events(path)] == [(1, "a"), (2, "kept"), (3, "b")]
    assert len(lines_of(path)) == 3


# -- reading --------------------------------------------------------------------------------


def test_read_empty_and_torn_only(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    assert read_events(path) == []
    path.write_bytes(dump_event(err()).encode()[:-5])
    assert read_events(path) == []


def test_read_tolerates_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    written = write_log(path, [err("a"), err("b")])
    line = dump_event(err("c", seq=3))
    for cut in (1, 10, len(line) // 2, len(line) - 1):
        path.write_bytes(b"".join(dump_event(e).encode() + b"\n" for e in written)
                         + line[:cut].encode())
        assert read_events(path) == written


def test_read_tolerates_a_torn_last_line_after_odd_lines(tmp_path: Path) -> None:
    # the line-by-line path (blank and unknown lines) tolerates a torn tail too
    path = tmp_path / "s.jsonl"
    a, b = (dump_event(e) for e in (err("a", seq=1), err("b", seq=2)))
    path.write_text(f"{a}\n\n{{\"type\": \"future:x\"}}\n{b}\n{b[:20]}")
    assert [e.message for e in read_events(path)] == ["a", "b"]


def test_malformed_middle_line_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    a, b = (dump_event(e) for e in (err("a", seq=1), err("b", seq=2)))
    path.write_text(f"{a}\nnot json at all\n{b}\n")
    with pytest.raises(LogError) as info:
        read_events(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}:2: ")
    assert "malformed" in msg and "\n" not in msg
    assert isinstance(info.value, ValueError)


def test_invalid_event_in_the_middle_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    a, b = (dump_event(e) for e in (err("a", seq=1), err("b", seq=2)))
    path.write_text(f"{a}\n{b}\n{{\"type\": \"turn:started\", \"seq\": 3}}\n{a}\n")
    with pytest.raises(LogError, match=r":3: .*turn:started\.turn") as info:
        read_events(path)
    assert "\n" not in str(info.value)
    assert len(str(info.value)) < 400 + len(str(path))


def test_a_bad_final_line_with_its_newline_is_not_torn(tmp_path: Path) -> None:
    # the newline was written, so the line was complete: that is damage, not a crash
    path = tmp_path / "s.jsonl"
    path.write_text(dump_event(err("a", seq=1)) + "\n{\"type\": \"error\", \"kin\n")
    with pytest.raises(LogError, match=r":2: "):
        read_events(path)


def test_halves_of_a_broken_line_are_not_glued_together(tmp_path: Path) -> None:
    # joined with a comma, these two pieces would read as one (wrong) event
    path = tmp_path / "s.jsonl"
    line = dump_event(err("m1", seq=1))
    i = line.index("m1") + 1
    path.write_text(line[:i] + "\n" + line[i:] + "\n")
    with pytest.raises(LogError, match=r":1: "):
        read_events(path)


def test_two_events_on_one_line_are_malformed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    a, b = (dump_event(e) for e in (err("a", seq=1), err("b", seq=2)))
    path.write_text(f"{a},{b}\n")
    with pytest.raises(LogError, match=r":1: "):
        read_events(path)


def test_unknown_event_types_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    a, b = (dump_event(e) for e in (err("a", seq=1), err("b", seq=3)))
    future = json.dumps({"type": "plan:reviewed", "seq": 2, "ts": 1.0, "x": [1]})
    path.write_text(f"{a}\n{future}\n{b}\n{future}\n")
    assert [e.message for e in read_events(path)] == ["a", "b"]
    # and a writer continues after the last line it finds, known or not
    with EventLog(path) as log:
        assert log.seq == 2


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    a, b = (dump_event(e) for e in (err("a", seq=1), err("b", seq=2)))
    path.write_text(f"\n{a}\n\n   \n{b}\n\n")
    assert [e.message for e in read_events(path)] == ["a", "b"]


def test_read_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_events(tmp_path / "nope.jsonl")


# -- redaction ------------------------------------------------------------------------------

KEY = "sk-ant-api03-" + "Ab3_-x" * 15 + "AA"
SECRETS = [
    (f"use {KEY} please", KEY),
    ("run with ANTHROPIC_API_KEY=abc123 set", "abc123"),
    ('export ANTHROPIC_API_KEY="s3cr3t value"', "s3cr3t value"),
    ("curl -H 'Authorization: Bearer xyz' https://api", "xyz"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig", "eyJhbGciOiJIUzI1NiJ9"),
    ("GITHUB_TOKEN=ghp_" + "a" * 36, "ghp_"),
    ("token Bearer abcdef0123456789xyz", "abcdef0123456789xyz"),
    ('{"API_KEY": "plain"}', "plain"),
    ("x-api-key: k3y-k3y-k3y-k3y", "k3y-k3y"),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_secrets_in_text_are_redacted(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out
    assert REDACTED in out
    assert redact_text(out) == out


@pytest.mark.parametrize("text", [
    "a plan with no secrets: 1. read the file 2. edit it",
    "MAX_TOKENS=1024 and max_tokens: 512",
    "the bearer of bad news",
    'headers = {"Authorization": f"Bearer {token}"}',
    'key = os.environ["ANTHROPIC_API_KEY"]',
    "tokens used: 1,234 input",
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_text(text) == text
    e = ev.TurnStarted(turn=1, prompt=text)
    assert redact_event(e) is e


def _secret_events(secret_text: str) -> list[Any]:
    return [
        ev.TurnStarted(turn=1, prompt=secret_text),
        ev.PlanProposed(decision_id="p1", plan=f"# Plan\n\n{secret_text}\n"),
        ev.PlanDecided(decision_id="p1", outcome="rejected", feedback=secret_text, by="user"),
        ev.ErrorEvent(kind="k", message=secret_text),
        ev.TurnEnded(turn=1, result="error", is_error=True, message=secret_text),
        ev.ToolRequested(decision_id="t1", tool="Bash", input={"command": secret_text,
                         "nested": [{"deep": secret_text}]}),
        ev.ToolDecided(decision_id="t1", outcome="denied", reason=secret_text, by="user"),
        ev.QuestionAsked(decision_id="q1", questions=[{"question": secret_text}]),
        ev.QuestionAnswered(decision_id="q1", outcome="answered", answers={"q": secret_text},
                            by="user"),
        ev.ModelSwitched(to_model="opus", why=secret_text),
    ]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_secrets_never_reach_the_file(tmp_path: Path, text: str, secret: str) -> None:
    path = tmp_path / "s.jsonl"
    events = _secret_events(text)
    written = write_log(path, events)
    raw = path.read_bytes()
    assert secret.encode() not in raw
    assert json.dumps(secret)[1:-1].encode() not in raw  # nor its JSON-escaped form
    assert REDACTED.encode() in raw
    for e in written:
        assert secret not in dump_event(e)
    # what is not secret survives
    back = read_events(path)
    assert back == written
    assert back[1].plan.startswith("# Plan")  # type: ignore[union-attr]
    assert [e.type for e in back] == [e.type for e in events]


def test_secret_keys_are_redacted_whatever_the_value(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    e = ev.ToolRequested(decision_id="t1", tool="WebFetch", input={
        "url": "https://x", "api_key": "abc", "headers": {"Authorization": "Basic Zm9vOmJhcg",
                                                          "Accept": "text/html"},
        "access_token": "t0k", "max_tokens": 100})
    (w,) = write_log(path, [e])
    assert w.input["api_key"] == REDACTED  # type: ignore[union-attr]
    assert w.input["headers"] == {"Authorization": REDACTED, "Accept": "text/html"}  # type: ignore[union-attr]
    assert w.input["access_token"] == REDACTED  # type: ignore[union-attr]
    assert w.input["max_tokens"] == 100 and w.input["url"] == "https://x"  # type: ignore[union-attr]
    raw = path.read_bytes()
    for secret in (b'"abc"', b"Zm9vOmJhcg", b"t0k"):
        assert secret not in raw


def test_redaction_keeps_the_event_otherwise(tmp_path: Path) -> None:
    e = ev.PlanDecided(decision_id="p1", outcome="approved", feedback=f"ok {KEY}",
                       mode_after="acceptEdits", by="code", seq=4, ts=12.5)
    r = redact_event(e)
    assert r.feedback == f"ok {REDACTED}"  # type: ignore[union-attr]
    assert r.model_copy(update={"feedback": e.feedback}) == e
    assert e.feedback == f"ok {KEY}"  # the original is untouched



# Names such as TOKEN_TOKEN_..._TOKEN once made the assignment pattern try every keyword in
# the word against every tail of it: 6 KB took 0.1 s, 48 KB 5.8 s, 300 KB would have frozen
# the kernel (redaction runs on its event loop) for minutes. Linear now: 300 KB in ~30 ms.
ADVERSARIAL = [
    "TOKEN_" * 50_000 + "x",
    "API_KEY_" * 37_500 + " x",
    "SECRETS_1" * 33_000 + "=",
    "PASSWORD_TOKEN_" * 20_000 + '="',
]


@pytest.mark.timeout(20)  # each took minutes when the patterns were quadratic
@pytest.mark.parametrize("text", ADVERSARIAL, ids=lambda t: repr(t[:12]))
def test_redaction_is_linear_on_adversarial_input(text: str) -> None:
    assert len(text) >= 290_000
    e = ev.ToolRequested(decision_id="t1", tool="Write",
                         input={"file_path": "/w/x.txt", "content": text})
    assert redact_event(e) is e  # nothing to redact in there
    assert redact_text(text) == text


@pytest.mark.timeout(20)
def test_a_long_name_is_still_redacted(tmp_path: Path) -> None:
    name = "TOKEN_" * 50_000
    (w,) = write_log(tmp_path / "s.jsonl", [ev.ToolRequested(
        decision_id="t1", tool="Write", input={"content": f"{name}=hunter2 and more"})])
    assert w.input["content"] == f"{name}={REDACTED} and more"  # type: ignore[union-attr]
    assert b"hunter2" not in (tmp_path / "s.jsonl").read_bytes()


# -- where logs live ------------------------------------------------------------------------


def test_default_log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_log_dir(tmp_path) == tmp_path / ".plan_widgets" / "sessions"
    assert default_log_dir(str(tmp_path)) == tmp_path / ".plan_widgets" / "sessions"
    monkeypatch.chdir(tmp_path)
    assert default_log_dir() == Path(os.getcwd()) / ".plan_widgets" / "sessions"
    # an explicit directory wins
    assert default_log_dir(tmp_path, tmp_path / "logs") == tmp_path / "logs"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_log_dir(None, "~/logs") == tmp_path / "logs"


def test_default_log_dir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOG_DIR_ENV, str(tmp_path / "env"))
    assert default_log_dir(tmp_path / "cwd") == tmp_path / "env"
    assert default_log_dir() == tmp_path / "env"
    # the override beats the environment
    assert default_log_dir(tmp_path / "cwd", tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.setenv(LOG_DIR_ENV, "")
    assert default_log_dir(tmp_path) == tmp_path / ".plan_widgets" / "sessions"


# -- finding sessions -----------------------------------------------------------------------


def _session(d: Path, sid: str, t0: float, turns: int = 1, cost: float = 0.0,
             mode: str | None = "default", name: str | None = None,
             extra: list[Any] | None = None) -> Path:
    events: list[Any] = [ev.SessionStarted(session_id=sid, name=name or sid, cwd="/w",
                                           resting_mode="default", ts=t0)]
    if mode:
        events.append(ev.PlanMode(mode=mode, state="effective", source="start", ts=t0 + 1))
    for i in range(1, turns + 1):
        events.append(ev.TurnStarted(turn=i, prompt="p", ts=t0 + 10 * i))
        events.append(ev.TurnEnded(turn=i, result="success", cost_usd=cost * i / turns,
                                   ts=t0 + 10 * i + 5))
    events.extend(extra or [])
    path = d / f"{sid}.jsonl"
    write_log(path, events)
    return path


def test_find_session_log(tmp_path: Path) -> None:
    a = _session(tmp_path, "abc123", 1.0)
    b = _session(tmp_path, "abd456", 2.0)
    (tmp_path / "abc123.requests.jsonl").write_text("{}\n")
    assert find_session_log("abc123", tmp_path) == a
    assert find_session_log("abc1", tmp_path) == a  # a unique prefix
    assert find_session_log("abd", tmp_path) == b
    assert find_session_log("ab", tmp_path) is None  # ambiguous
    assert find_session_log("zzz", tmp_path) is None
    assert find_session_log("", tmp_path) is None
    # not a path, nor a sibling file
    assert find_session_log("abc123.requests", tmp_path) is None
    (tmp_path / "sub").mkdir()
    _session(tmp_path / "sub", "inner", 3.0)
    assert find_session_log("sub/inner", tmp_path) is None
    assert find_session_log("../" + tmp_path.name + "/abc123", tmp_path / "sub") is None
    assert find_session_log("abc123", tmp_path / "missing") is None


def test_find_session_log_uses_the_env_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    a = _session(tmp_path, "s-1", 1.0)
    monkeypatch.setenv(LOG_DIR_ENV, str(tmp_path))
    assert find_session_log("s-1") == a
    assert list_sessions()[0].path == a


def test_list_sessions_summaries(tmp_path: Path) -> None:
    old = _session(tmp_path, "old", 1000.0, turns=3, cost=0.3, mode="default", name="first")
    new = _session(tmp_path, "new", 5000.0, turns=1, cost=0.05, mode=None, extra=[
        ev.PlanMode(mode="plan", state="effective", source="model", ts=5100.0),
        ev.PlanProposed(decision_id="p1", plan="x", ts=5200.0)])
    mid = _session(tmp_path, "mid", 3000.0, turns=0, mode="acceptEdits")
    got = list_sessions(tmp_path)
    assert [s.session_id for s in got] == ["new", "mid", "old"]  # most recently active first
    by_id = {s.session_id: s for s in got}
    o = by_id["old"]
    assert isinstance(o, SessionSummary)
    assert (o.name, o.turns, o.last_mode, o.pending, o.path) == ("first", 3, "default", 0, old)
    assert o.cost_usd == pytest.approx(0.3)
    assert o.started == 1000.0 and o.updated == 1035.0
    n = by_id["new"]
    assert (n.turns, n.last_mode, n.pending, n.path) == (1, "plan", 1, new)
    assert n.cost_usd == pytest.approx(0.05) and n.started == 5000.0 and n.updated == 5200.0
    m = by_id["mid"]
    assert (m.turns, m.cost_usd, m.last_mode, m.path) == (0, 0.0, "acceptEdits", mid)


def test_list_sessions_orders_by_last_activity_not_start(tmp_path: Path) -> None:
    # started first, but still going after the other ended
    _session(tmp_path, "long", 1000.0, turns=50)
    _session(tmp_path, "short", 1100.0, turns=1)
    assert [s.session_id for s in list_sessions(tmp_path)] == ["long", "short"]


def test_list_sessions_leaves_out_what_is_not_a_readable_log(tmp_path: Path) -> None:
    _session(tmp_path, "good", 1.0)
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "bad.jsonl").write_text('{"nope": 1}\n' + dump_event(err(seq=2)) + "\n")
    (tmp_path / "good.requests.jsonl").write_text('{"method": "POST"}\n')
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "dir.jsonl").mkdir()
    assert [s.session_id for s in list_sessions(tmp_path)] == ["good"]
    assert list_sessions(tmp_path / "missing") == []


def test_list_sessions_of_a_torn_log(tmp_path: Path) -> None:
    p = _session(tmp_path, "t", 1.0, turns=2, cost=0.2)
    with open(p, "ab") as fh:
        fh.write(dump_event(ev.TurnStarted(turn=3, prompt="x", seq=99)).encode()[:30])
    (s,) = list_sessions(tmp_path)
    assert s.turns == 2 and s.cost_usd == pytest.approx(0.2)
    assert fold(read_events(p)).turns == 2


# -- one writer per log (issue 16) ---------------------------------------------------------

HOLD = """
import sys, time, subprocess
from plan_widgets.store import EventLog
log = EventLog(sys.argv[1])
if len(sys.argv) > 2:  # a child that outlives us (as a kernel's CLI might)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    print(child.pid, flush=True)
print("ready", flush=True)
time.sleep(60)
"""


def _holder(path: Path, child: bool = False) -> tuple[Any, int | None]:
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(path)] + (["child"] if child else []),
                         stdout=subprocess.PIPE, env=env)
    assert p.stdout is not None
    kid = int(p.stdout.readline()) if child else None
    assert p.stdout.readline().strip() == b"ready"
    return p, kid


def test_a_second_writer_gets_one_line_naming_the_holder(tmp_path: Path) -> None:
    import socket
    import time

    from plan_widgets.model.errors import PlanWidgetsError
    from plan_widgets.store import LogLocked, held_elsewhere

    path = tmp_path / "abc-123.jsonl"
    write_log(path, [err("a")])
    p, _ = _holder(path)
    try:
        with pytest.raises(LogLocked) as info:
            EventLog(path)
        msg = str(info.value)
        assert isinstance(info.value, PlanWidgetsError)
        assert msg.startswith("session abc-123 is open in another kernel (pid "), msg
        assert f"pid {p.pid} on host {socket.gethostname()}, since " in msg
        assert time.strftime("%H:") in msg  # since when
        assert "%claude stop" in msg and "--new" in msg  # the way out
        assert "\n" not in msg and len(msg) < 300
        h = held_elsewhere(path)
        assert h is not None and h.pid == p.pid and info.value.holder == h
        # the log itself is untouched, and still readable
        assert [e.message for e in read_events(path)] == ["a"]
        (s,) = list_sessions(tmp_path)
        assert s.holder == h and s.where.startswith(f"open in another kernel (pid {p.pid} ")
    finally:
        p.kill()
        p.wait()
    assert held_elsewhere(path) is None  # the sidecar it left names a process that is gone
    assert list_sessions(tmp_path)[0].where == "log"


def test_one_writer_in_one_process_too(tmp_path: Path) -> None:
    from plan_widgets.store import LogLocked, held_elsewhere

    path = tmp_path / "s.jsonl"
    first = EventLog(path)
    with pytest.raises(LogLocked, match=r"^session s is already open in this process \(pid "):
        EventLog(path)
    assert held_elsewhere(path) is None  # this process's own sessions are listed as its own
    first.append(err("a"))
    first.close()
    with EventLog(path) as second:  # closed: free again
        second.append(err("b"))
    assert [e.seq for e in read_events(path)] == [1, 2]
    assert not (tmp_path / "s.jsonl.holder").exists()


def test_appending_after_close_takes_the_lock_for_that_event_only(tmp_path: Path) -> None:
    from plan_widgets.store import LogLocked

    path = tmp_path / "s.jsonl"
    log = EventLog(path)
    log.close()
    log.append(err("late"))  # e.g. a decision cancelled after the session closed
    assert not log.held
    with EventLog(path) as other:  # the late event did not keep the log
        other.append(err("next"))
        with pytest.raises(LogLocked):
            log.append(err("not ours any more"))
    assert [e.message for e in read_events(path)] == ["late", "next"]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("child", [False, True], ids=["alone", "with-a-child"])
def test_a_lock_left_by_a_killed_writer_is_taken_over(tmp_path: Path, child: bool) -> None:
    import signal

    from plan_widgets.store import LogLocked, held_elsewhere

    path = tmp_path / "s.jsonl"
    p, kid = _holder(path, child)
    try:
        with pytest.raises(LogLocked):
            EventLog(path)
        os.kill(p.pid, signal.SIGKILL)  # no clean-up runs: the sidecar stays
        p.wait()
        assert (tmp_path / "s.jsonl.holder").exists()
        assert held_elsewhere(path) is None
        # MEASURED: flock is released with the process (its open files close), even while a
        # child it started still runs: the next writer gets it on its first, non-blocking try
        with EventLog(path) as log:
            log.append(err("after"))
            h = json.loads((tmp_path / "s.jsonl.holder").read_text())
            assert h["pid"] == os.getpid()
    finally:
        if kid is not None:
            os.kill(kid, signal.SIGKILL)
        p.kill()
        p.wait()


def test_a_stale_sidecar_of_a_reused_pid_names_nobody(tmp_path: Path) -> None:
    import socket

    from plan_widgets.store import held_elsewhere

    path = tmp_path / "s.jsonl"
    # pid 1 runs, but started long before the "holder" the sidecar describes
    (tmp_path / "s.jsonl.holder").write_text(json.dumps(
        {"pid": 1, "host": socket.gethostname(), "since": 1.0, "started_at": 1e15}))
    assert held_elsewhere(path) is None
    (tmp_path / "s.jsonl.holder").write_text("not json")
    assert held_elsewhere(path) is None
    # on another host nothing can be checked: it is taken at its word
    (tmp_path / "s.jsonl.holder").write_text(json.dumps(
        {"pid": 4242, "host": "elsewhere.example", "since": 1.0}))
    h = held_elsewhere(path)
    assert h is not None and h.describe().startswith("pid 4242 on host elsewhere.example")


def test_a_live_holder_stays_one_when_the_boot_time_steps(tmp_path: Path) -> None:
    """psutil's start time adds /proc/stat's btime, a whole second from the wall clock: a
    clock step between the holder's reading and the reader's moves it (seen in CI)."""
    import socket

    import psutil

    from plan_widgets.store import held_elsewhere

    path = tmp_path / "s.jsonl"
    parent = psutil.Process().parent()
    assert parent is not None
    for step in (-1.0, 1.0, 2.0):
        (tmp_path / "s.jsonl.holder").write_text(json.dumps(
            {"pid": parent.pid, "host": socket.gethostname(), "since": 1.0,
             "started_at": parent.create_time() + step}))
        h = held_elsewhere(path)
        assert h is not None and h.pid == parent.pid, step


# -- the log folder ----------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["under-a-file", "is-a-file"])
def test_a_log_folder_that_cannot_be_made_is_one_line(tmp_path: Path, where: str) -> None:
    from plan_widgets.store import LogUnavailable

    (tmp_path / "afile").write_text("x")
    folder = tmp_path / "afile" / "logs" if where == "under-a-file" else tmp_path / "afile"
    with pytest.raises(LogUnavailable) as info:
        EventLog(folder / "s.jsonl")
    msg = str(info.value)
    assert msg.startswith(f"cannot create the session log folder {folder}: {tmp_path / 'afile'}"
                          " is not a folder; set log_dir to a folder you can write"), msg
    assert "ClaudeMagics.log_dir" in msg and "PLAN_WIDGETS_LOG_DIR" in msg and "\n" not in msg


def test_dev_null_as_log_folder(tmp_path: Path) -> None:
    from plan_widgets.store import LogUnavailable

    with pytest.raises(LogUnavailable, match=r"^cannot create the session log folder "
                       r"/dev/null/logs: /dev/null is not a folder; set log_dir"):
        EventLog("/dev/null/logs/s.jsonl")


def test_a_log_that_is_a_folder_is_one_line(tmp_path: Path) -> None:
    from plan_widgets.store import LogUnavailable

    (tmp_path / "s.jsonl").mkdir()
    with pytest.raises(LogUnavailable, match=r"^cannot open the session log .*s\.jsonl: is a "
                       "directory; set log_dir"):
        EventLog(tmp_path / "s.jsonl")
    assert not (tmp_path / "s.jsonl.holder").exists()  # the lock was let go


def test_no_file_descriptor_left_is_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = f"""
import os, resource
from plan_widgets.store import EventLog, LogUnavailable
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
held = []
try:
    while True:
        held.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
try:
    EventLog({str(tmp_path / "s.jsonl")!r})
except LogUnavailable as e:
    print(e)
"""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=60)
    assert "no file descriptor left (too many open files)" in out.stdout, out
    assert "ulimit -n" in out.stdout and out.stdout.count("\n") == 1


# -- logs stay private -----------------------------------------------------------------------


def test_logs_locks_and_sidecars_are_private(tmp_path: Path) -> None:
    import stat as st_

    d = default_log_dir(tmp_path)
    path = d / "s.jsonl"
    log = EventLog(path)
    log.append(ev.TurnStarted(turn=1, prompt=f"use {KEY} to deploy"))
    try:
        for p in (path, d / "s.jsonl.lock", d / "s.jsonl.holder"):
            assert st_.S_IMODE(p.stat().st_mode) == 0o600, p
        assert st_.S_IMODE(d.stat().st_mode) == 0o700
        assert st_.S_IMODE(d.parent.stat().st_mode) == 0o700
    finally:
        log.close()
    assert KEY.encode() not in path.read_bytes() and REDACTED.encode() in path.read_bytes()


def test_an_older_log_is_made_private_when_appended_to(tmp_path: Path) -> None:
    import stat as st_

    path = tmp_path / "s.jsonl"
    path.write_text(dump_event(err("old", seq=1)) + "\n")
    path.chmod(0o644)
    write_log(path, [err("new")])
    assert st_.S_IMODE(path.stat().st_mode) == 0o600
    assert [e.seq for e in read_events(path)] == [1, 2]


def test_the_default_folder_is_ignored_by_git(tmp_path: Path) -> None:
    import shutil
    import subprocess

    write_log(default_log_dir(tmp_path) / "s.jsonl", [err()])
    ignore = tmp_path / ".plan_widgets" / ".gitignore"
    assert ignore.read_text().splitlines()[-1] == "*"
    # a folder set by hand gets none; an existing .gitignore is left as it is
    write_log(tmp_path / "mine" / "s.jsonl", [err()])
    assert not (tmp_path / "mine" / ".gitignore").exists()
    ignore.write_text("# mine\n*\n")
    write_log(default_log_dir(tmp_path) / "t.jsonl", [err()])
    assert ignore.read_text() == "# mine\n*\n"
    if shutil.which("git") is None:
        return
    (tmp_path / "code.py").write_text("print(1)\n")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    staged = subprocess.run([*git, "diff", "--cached", "--name-only"], check=True,
                            capture_output=True, text=True).stdout.split()
    assert "code.py" in staged and not any(".plan_widgets/" in f for f in staged), staged


# -- a log edited by hand, or from a newer version -----------------------------------------


def test_newer_events_and_fields_are_kept_and_said_once(tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    import logging

    path = tmp_path / "s.jsonl"
    a = dump_event(err("a", seq=1))
    future = json.dumps({"type": "plan:reviewed", "seq": 2, "ts": 1.0, "x": [1]})
    extra = json.dumps({**json.loads(dump_event(err("b", seq=3))), "added_later": {"y": 2}})
    path.write_text(f"{a}\n{future}\n{extra}\n")
    with caplog.at_level(logging.WARNING, logger="plan_widgets"):
        events = read_events(path)
        read_events(path)  # the same again: not said twice
    assert [e.message for e in events] == ["a", "b"]
    assert events[1].model_extra == {"added_later": {"y": 2}}
    warned = [r for r in caplog.records if r.name == "plan_widgets"]
    assert len(warned) == 1, [r.getMessage() for r in warned]
    line = warned[0].getMessage()
    assert "\n" not in line and str(path) in line
    assert "1 event(s) of unknown type (plan:reviewed)" in line
    assert "unknown field(s) added_later" in line and "kept in the log" in line
    # appending (a resumed session) keeps every line byte for byte
    before = path.read_bytes()
    write_log(path, [err("c")])
    after = path.read_bytes()
    assert after.startswith(before)
    assert [e.seq for e in read_events(path)] == [1, 3, 4]
    # and a rewrite through the model keeps the unknown field
    assert json.loads(dump_event(read_events(path)[1])) == json.loads(extra)


def test_an_unterminated_newer_last_line_is_not_cut(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    future = json.dumps({"type": "plan:reviewed", "seq": 2, "ts": 1.0})
    path.write_text(dump_event(err("a", seq=1)) + "\n" + future)
    write_log(path, [err("b")])
    assert future.encode() + b"\n" in path.read_bytes()
    assert [e.seq for e in read_events(path)] == [1, 3]


@pytest.mark.parametrize("bad", ['[1, 2]', '"text"', '42', 'null', '{"seq": 2}',
                                 '{"type": "turn:started", "turn": "two", "prompt": "p"}'])
def test_json_of_the_wrong_shape_names_its_line(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(dump_event(err("a", seq=1)) + "\n\n" + bad + "\n"
                    + dump_event(err("b", seq=2)) + "\n")
    with pytest.raises(LogError) as info:
        read_events(path)
    assert str(info.value).startswith(f"{path}:3: malformed event line: "), info.value
    assert "\n" not in str(info.value)
    from plan_widgets.model.errors import PlanWidgetsError

    assert isinstance(info.value, PlanWidgetsError)


# -- a full disk -----------------------------------------------------------------------------


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Any:
    """A 64 KiB tmpfs (root only: skipped elsewhere)."""
    import subprocess

    mnt = tmp_path / "tiny"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                       capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(folder: Path) -> Path:
    """Fill the file system of ``folder``; returns the filler file."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"x" * 512)
        except OSError as e:
            assert e.errno == errno.ENOSPC
    return filler


def test_a_full_disk_loses_no_event(tiny_disk: Path) -> None:
    path = tiny_disk / "s.jsonl"
    log = EventLog(path)
    log.append(err("before"))
    filler = _fill(tiny_disk)
    big = "x" * 6000  # more than the page the file has room left in
    sent = [err(f"during {i} {big}") for i in range(5)]
    for e in sent:
        with pytest.raises(LogIncomplete, match=r"incomplete from event 2: No space left on "):
            log.append(e)
    assert log.broken_at == 2 and log.broken is not None and log.broken.errno == errno.ENOSPC
    assert [e.seq for e in log.unwritten] == [2, 3, 4, 5, 6]
    on_disk = read_events(path)  # a clean prefix, never a broken line
    assert [e.message for e in on_disk] == ["before"]
    assert path.read_bytes().endswith(b"\n")
    filler.unlink()  # room again: the next append writes everything kept, in order
    log.append(err("after"))
    log.close()
    assert log.broken_at is None
    got = [(e.seq, e.message) for e in read_events(path)]
    assert got == [(1, "before"), *[(i + 2, f"during {i} {big}") for i in range(5)],
                   (7, "after")]


def test_close_writes_what_was_kept_when_there_is_room(tiny_disk: Path) -> None:
    path = tiny_disk / "s.jsonl"
    log = EventLog(path)
    filler = _fill(tiny_disk)
    with pytest.raises(LogIncomplete):
        log.append(err("kept " + "x" * 6000))
    filler.unlink()
    log.close()
    assert [e.message[:4] for e in read_events(path)] == ["kept"]


def test_an_abandoned_writer_lets_go(tmp_path: Path) -> None:
    import gc

    path = tmp_path / "s.jsonl"
    EventLog(path).append(err("a"))  # never closed
    gc.collect()
    assert not (tmp_path / "s.jsonl.holder").exists()
    with EventLog(path) as log:
        log.append(err("b"))
    assert [e.seq for e in read_events(path)] == [1, 2]
