"""Properties of the event log and its fold (hypothesis), on real files written by the store.

1. Folding any prefix of a valid log gives the state as it stood at that point: the state the
   session held (event by event, with :func:`apply`) right after that event was appended, and
   what an independent, naive reading of the same events says (turns, mode, cost, pending
   and approved decisions).
2. A log whose last line is torn (a crash in the middle of a write) folds like the log without
   it, and the next writer cuts the torn part and goes on numbering.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan_widgets import model as ev
from plan_widgets.model import SessionState, apply, dump_event, fold
from plan_widgets.store import EventLog, read_events

SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

T0 = 1_796_000_000.0  # fixed times: the same example always makes the same bytes
PLAN_IDS = ("p0", "p1", "p2")
QUESTION_IDS = ("q0", "q1")
TOOL_IDS = ("t0", "t1")
MODES = st.sampled_from(["default", "plan", "acceptEdits", "bypassPermissions"])
ACTORS = st.sampled_from(["user", "code", "timeout", "interrupt", "close", "cli", "restart"])
TEXT = st.text(max_size=24)  # any unicode: newlines, quotes, multi-byte characters
COST = st.one_of(st.none(), st.floats(0, 5, allow_nan=False), st.sampled_from(
    [0.0, 0.25, math.inf, math.nan]))

session_started = st.builds(
    ev.SessionStarted, session_id=st.just("s-1"), name=st.just("default"), cwd=st.just("/w"),
    resting_mode=MODES, model=st.one_of(st.none(), st.sampled_from(["m-a", "m-b"])),
    resumed_from=st.one_of(st.none(), st.just("s-1"), st.just("s-1"), st.just("s-1")),
)
event = st.one_of(
    session_started,
    st.builds(ev.TurnStarted, turn=st.integers(1, 9), prompt=TEXT, plan=st.booleans(),
              message_id=st.one_of(st.none(), st.just("0b1c-uuid"))),
    st.builds(ev.TurnEnded, turn=st.integers(1, 9),
              result=st.sampled_from(["success", "error_during_execution", "cli_died"]),
              is_error=st.booleans(), cost_usd=COST, input_tokens=st.integers(0, 10**6),
              output_tokens=st.integers(0, 10**6), message=st.one_of(st.none(), TEXT),
              files=st.lists(TEXT, max_size=2)),
    st.builds(ev.PlanMode, mode=MODES,
              state=st.sampled_from(["requested", "effective", "refused"]),
              source=st.sampled_from(["user", "model", "approval", "resume", "start"]),
              detail=st.one_of(st.none(), TEXT)),
    st.builds(ev.PlanProposed, decision_id=st.sampled_from(PLAN_IDS), plan=TEXT,
              plan_file=st.one_of(st.none(), st.just("/h/.claude/plans/x.md"))),
    st.builds(ev.PlanDecided, decision_id=st.sampled_from(PLAN_IDS),
              outcome=st.sampled_from(["approved", "rejected", "expired", "cancelled"]),
              feedback=st.one_of(st.none(), TEXT), mode_after=st.one_of(st.none(), MODES),
              by=ACTORS, edited=st.booleans(), approved_plan=st.one_of(st.none(), TEXT)),
    st.builds(ev.ModelSwitched, from_model=st.none(), to_model=st.sampled_from(["m-a", "m-b"]),
              why=TEXT),
    st.builds(ev.QuestionAsked, decision_id=st.sampled_from(QUESTION_IDS),
              questions=st.lists(st.fixed_dictionaries({"question": TEXT}), max_size=2)),
    st.builds(ev.QuestionAnswered, decision_id=st.sampled_from(QUESTION_IDS),
              outcome=st.sampled_from(["answered", "expired", "cancelled"]),
              answers=st.dictionaries(TEXT, TEXT, max_size=2), by=ACTORS),
    st.builds(ev.ToolRequested, decision_id=st.sampled_from(TOOL_IDS),
              tool=st.sampled_from(["Write", "Bash"]),
              input=st.dictionaries(st.sampled_from(["command", "file_path", "api_key"]), TEXT,
                                    max_size=2)),
    st.builds(ev.ToolDecided, decision_id=st.sampled_from(TOOL_IDS),
              outcome=st.sampled_from(["allowed", "always", "denied", "expired", "cancelled"]),
              reason=st.one_of(st.none(), TEXT), by=ACTORS),
    st.builds(ev.TasksUpdated, turn=st.integers(0, 9), tasks=st.lists(st.fixed_dictionaries({
        "id": st.sampled_from(["1", "2", "3"]), "subject": TEXT,
        "status": st.sampled_from(["pending", "in_progress", "completed"])}), max_size=3)),
    st.builds(ev.FilesRewound, turn=st.integers(1, 9), message_id=st.just("0b1c-uuid"),
              files=st.lists(TEXT, max_size=2), by=ACTORS),
    st.builds(ev.ErrorEvent, kind=st.sampled_from(["session_dead", "plan_refusal"]),
              message=TEXT),
)
# a valid log starts with the session's start; anything may follow (in any order)
log_events = st.tuples(session_started.map(
    lambda e: e.model_copy(update={"resumed_from": None})), st.lists(event, max_size=30)
).map(lambda t: [e.model_copy(update={"ts": T0 + i}) for i, e in enumerate([t[0], *t[1]])])


def reference(events: list[Any]) -> dict[str, Any]:
    """A naive reading of a log, written independently of the fold."""
    r: dict[str, Any] = {}

    def reset() -> None:
        r.update(turns=0, mode=None, status={}, pending=[], approved=[], base=0.0, run=0.0,
                 text={}, tasks=[])

    reset()
    seen_start = False
    for e in events:
        t = e.type
        if t == "session:started":
            if e.resumed_from is None and seen_start:
                reset()
            seen_start = True
            r["base"] += r["run"]
            r["run"] = 0.0
        elif t == "turn:started":
            r["turns"] += 1
        elif t == "turn:ended":
            c = e.cost_usd
            if c is not None and math.isfinite(c) and c >= 0:
                if c < r["run"]:
                    r["base"] += r["run"]
                r["run"] = c
        elif t == "plan:mode" and e.state == "effective":
            r["mode"] = e.mode
        elif t == "tasks:updated":
            r["tasks"] = e.tasks
        elif t in ("plan:proposed", "question:asked", "tool:requested"):
            if t == "plan:proposed" and r["status"].get(e.decision_id, "pending") == "pending":
                r["text"][e.decision_id] = e.plan  # a pending plan's repeat replaces it
            if e.decision_id not in r["status"]:
                r["status"][e.decision_id] = "pending"
                r["pending"].append(e.decision_id)
        elif t in ("plan:decided", "question:answered", "tool:decided"):
            now = r["status"].get(e.decision_id)
            if now is None or now == "pending":
                if now == "pending":
                    r["pending"].remove(e.decision_id)
                r["status"][e.decision_id] = e.outcome
                if t == "plan:decided" and e.outcome == "approved":
                    r["approved"].append(e.decision_id)
                    if e.approved_plan is not None:  # edited: the approved text is in force
                        r["text"][e.decision_id] = e.approved_plan
    return {"turns": r["turns"], "mode": r["mode"], "pending": r["pending"],
            "approved": r["approved"], "status": r["status"], "cost": r["base"] + r["run"],
            "plans": [r["text"].get(i) for i in r["approved"]], "tasks": r["tasks"]}


def check_against_reference(state: SessionState, events: list[Any]) -> None:
    ref = reference(events)
    assert state.turns == ref["turns"]
    assert state.mode == ref["mode"]
    assert state.pending == ref["pending"]
    assert [p.id for p in state.plans] == ref["approved"]
    assert [p.plan for p in state.plans] == ref["plans"]
    assert [dict(t) for t in state.tasks] == ref["tasks"]
    assert {k: d.status for k, d in state.decisions.items()} == ref["status"]
    assert math.isclose(state.cost_usd, ref["cost"], rel_tol=1e-9, abs_tol=1e-12)


@SETTINGS
@given(log_events)
def test_folding_any_prefix_gives_the_state_as_it_stood_then(events: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        state = SessionState()
        states = [state]
        written = []
        with EventLog(path) as log:
            for e in events:
                w = log.append(e)  # redacted and numbered, as the session appends it
                written.append(w)
                state = apply(state, w)  # what the live session holds now
                states.append(state)
                # a kernel that died right now would read back exactly this state
                assert fold(read_events(path)).as_dict() == state.as_dict()
        back = read_events(path)
        assert [e.seq for e in back] == list(range(1, len(events) + 1))
        for k in range(len(back) + 1):
            prefix = fold(back[:k])
            assert prefix == states[k]
            assert prefix.as_dict() == states[k].as_dict()
            check_against_reference(prefix, back[:k])
            # folding on in two parts is folding at once
            assert fold(back[k:], prefix) == states[-1]


@SETTINGS
@given(log_events, event, st.data())
def test_a_torn_last_line_folds_like_the_log_without_it(
        events: list[Any], extra: Any, data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        with EventLog(path) as log:
            written = [log.append(e) for e in events]
        whole = fold(written)
        # a crash in the middle of writing one more line: a prefix of it, no newline (the cut
        # may split a multi-byte character)
        line = dump_event(extra.model_copy(update={"seq": len(written) + 1, "ts": T0})).encode()
        cut = data.draw(st.integers(1, len(line) - 1), label="cut")
        with open(path, "ab") as fh:
            fh.write(line[:cut])
        back = read_events(path)
        assert back == written
        assert fold(back) == whole
        # the next writer (the resumed session) cuts the torn part and numbers on
        with EventLog(path) as log:
            assert log.seq == len(written)
            after = log.append(ev.ErrorEvent(kind="k", message="after the crash"))
        assert after.seq == len(written) + 1
        assert read_events(path) == [*written, after]
        assert fold(read_events(path)) == apply(whole, after)


@SETTINGS
@given(log_events, st.data())
def test_a_crash_inside_the_last_event_loses_only_that_event(
        events: list[Any], data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        with EventLog(path) as log:
            written = [log.append(e) for e in events]
        raw = path.read_bytes()
        start = raw.rstrip(b"\n").rfind(b"\n") + 1  # where the last line begins
        # cut anywhere inside the last line; a whole line that only lost its newline is kept
        cut = data.draw(st.integers(start, len(raw) - 1), label="cut")
        path.write_bytes(raw[:cut])
        expected = written if cut == len(raw) - 1 else written[:-1]
        assert read_events(path) == expected
        assert fold(read_events(path)) == fold(expected)
