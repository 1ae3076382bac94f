"""Typed session events and the state folded from them (``plan_widgets.model.events``)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Literal, get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from plan_widgets import model as ev
from plan_widgets.model import (
    EVENT_ADAPTER,
    EVENT_TYPES,
    EVENTS_ADAPTER,
    MAX_ERRORS,
    SessionState,
    apply,
    dump_event,
    fold,
    folding,
    parse_event,
)
from plan_widgets.render import history
from plan_widgets.store import EventLog, read_events

# -- helpers --------------------------------------------------------------------------------


def numbered(events: list[Any], t0: float = 1_700_000_000.0) -> list[Any]:
    """The events with seq 1..n and increasing timestamps, as the store would write them."""
    return [e.model_copy(update={"seq": i, "ts": t0 + i}) for i, e in enumerate(events, 1)]


def started(**kw: Any) -> ev.SessionStarted:
    base: dict[str, Any] = dict(session_id="s1", name="main", cwd="/work", resting_mode="default",
                                model="sonnet", plan_model="opus")
    base.update(kw)
    return ev.SessionStarted(**base)


def turn(n: int, cost: float | None = None, tin: int = 0, tout: int = 0,
         **kw: Any) -> list[Any]:
    return [ev.TurnStarted(turn=n, prompt=f"prompt {n}"),
            ev.TurnEnded(turn=n, result="success", cost_usd=cost, input_tokens=tin,
                         output_tokens=tout, duration_ms=10, **kw)]


def proposed(did: str, plan: str = "# Plan\n\n1. do it", **kw: Any) -> ev.PlanProposed:
    return ev.PlanProposed(decision_id=did, plan=plan, **kw)


def decided(did: str, outcome: str = "approved", **kw: Any) -> ev.PlanDecided:
    kw.setdefault("by", "user")
    return ev.PlanDecided(decision_id=did, outcome=outcome, **kw)  # type: ignore[arg-type]


def mode(m: str, state: str, source: str = "user", detail: str | None = None) -> ev.PlanMode:
    return ev.PlanMode(mode=m, state=state, source=source, detail=detail)  # type: ignore[arg-type]


def folded(*events: Any) -> SessionState:
    return fold(numbered(list(events)))


# -- session, turns, cost -------------------------------------------------------------------


def test_empty_fold_is_the_empty_state() -> None:
    s = fold([])
    assert s == SessionState()
    assert s.turns == 0 and s.cost_usd == 0.0 and s.mode is None and s.model is None
    assert s.pending == [] and s.plans == [] and dict(s.decisions) == {}
    assert s.last_event_seq == 0 and s.started is None and s.updated is None
    assert not s.plan_mode and not s.working


def test_session_started_sets_identity_and_models() -> None:
    (e,) = numbered([started()])
    s = fold([e])
    assert (s.session_id, s.name, s.cwd, s.resting_mode) == ("s1", "main", "/work", "default")
    assert (s.model, s.plan_model) == ("sonnet", "opus")
    assert s.started == e.ts and s.updated == e.ts and s.last_event_seq == 1
    assert s.mode is None  # the CLI has not confirmed a mode yet


def test_turns_count_and_working_flag() -> None:
    events = numbered([started(), ev.TurnStarted(turn=1, prompt="hi")])
    s = fold(events)
    assert s.turns == 1 and s.working
    s = apply(s, ev.TurnEnded(turn=1, result="success", seq=3))
    assert s.turns == 1 and not s.working
    assert s.last_event_seq == 3


def test_turn_ended_adds_tokens_and_tracks_the_running_cost() -> None:
    s = folded(started(), *turn(1, 0.01, 100, 10), *turn(2, 0.03, 50, 5))
    assert s.turns == 2
    assert (s.input_tokens, s.output_tokens) == (150, 15)
    # cost_usd from the CLI is a running total for its process: not summed again
    assert s.cost_usd == pytest.approx(0.03)


def test_cost_survives_a_new_cli_process() -> None:
    # the running total restarts with each CLI process (a resume starts a new one)
    s = folded(
        started(), *turn(1, 0.02), *turn(2, 0.05),
        started(resumed_from="s1"), *turn(3, 0.01), *turn(4, 0.04),
    )
    assert s.turns == 4
    assert s.cost_usd == pytest.approx(0.09)
    # a counter that went down without a session:started is a restart too
    s = folded(started(), *turn(1, 0.05), *turn(2, 0.02))
    assert s.cost_usd == pytest.approx(0.07)


def test_turn_without_cost_leaves_the_total() -> None:
    s = folded(started(), *turn(1, 0.02), *turn(2, None, 7, 3))
    assert s.cost_usd == pytest.approx(0.02)
    assert (s.input_tokens, s.output_tokens) == (7, 3)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0])
def test_non_finite_or_negative_cost_is_ignored(bad: float) -> None:
    s = folded(started(), *turn(1, 0.02), *turn(2, bad))
    assert s.cost_usd == pytest.approx(0.02)
    s = apply(s, ev.TurnEnded(turn=3, result="success", cost_usd=0.03))
    assert s.cost_usd == pytest.approx(0.03)


def test_failed_turn_is_an_error_line() -> None:
    s = folded(started(), ev.TurnStarted(turn=1, prompt="x"),
               ev.TurnEnded(turn=1, result="cli_died", is_error=True, message="boom"))
    assert s.errors == ("turn 1 cli_died: boom",)
    assert not s.working


def test_resumed_session_keeps_its_history() -> None:
    s = folded(started(), *turn(1), proposed("p1"), decided("p1"),
               started(resumed_from="s1", model="haiku"))
    assert s.turns == 1 and s.model == "haiku"
    assert [d.id for d in s.plans] == ["p1"]


def test_fresh_session_in_an_old_log_starts_over() -> None:
    events = numbered([started(), *turn(1, 0.5), proposed("p1"), ev.ErrorEvent(kind="k",
                       message="m"), started(session_id="s2", name="other")])
    s = fold(events)
    assert s.session_id == "s2" and s.name == "other"
    assert s.turns == 0 and s.cost_usd == 0.0 and s.pending == [] and s.errors == ()
    assert dict(s.decisions) == {}
    assert s.started == events[-1].ts
    assert s.last_event_seq == len(events)


# -- plan mode ------------------------------------------------------------------------------


def test_mode_requested_shows_as_pending_until_effective() -> None:
    s = folded(started(), mode("default", "effective", "start"))
    assert s.mode == "default" and s.requested_mode is None
    s = apply(s, mode("plan", "requested"))
    assert s.requested_mode == "plan"  # pending: shown, not yet in force
    assert s.mode == "default" and not s.plan_mode
    s = apply(s, mode("plan", "effective"))
    assert s.mode == "plan" and s.plan_mode and s.requested_mode is None


def test_effective_other_mode_keeps_the_request_pending() -> None:
    s = folded(mode("default", "effective", "start"), mode("plan", "requested"),
               mode("acceptEdits", "effective", "model"))
    assert s.mode == "acceptEdits" and s.requested_mode == "plan"


def test_model_entering_plan_mode() -> None:
    s = folded(mode("default", "effective", "start"), mode("plan", "effective", "model"))
    assert s.plan_mode and s.requested_mode is None and s.refused is None


def test_refused_mode_records_the_refusal() -> None:
    s = folded(mode("default", "effective", "start"), mode("plan", "requested"),
               mode("plan", "refused", detail="control request timed out"))
    assert s.mode == "default"  # unchanged
    assert s.requested_mode is None
    assert s.refused == "control request timed out"
    # without a detail a refusal still says what was refused
    s = apply(s, mode("acceptEdits", "refused"))
    assert s.refused == "acceptEdits refused"
    # the next request clears it
    s = apply(s, mode("plan", "requested"))
    assert s.refused is None and s.requested_mode == "plan"


# -- plans ----------------------------------------------------------------------------------


def test_plan_proposed_is_a_pending_decision() -> None:
    s = folded(started(), ev.TurnStarted(turn=1, prompt="x"),
               proposed("p1", plan="# P", plan_file="/p/plan.md", tool_use_id="tu1"))
    assert s.pending == ["p1"]
    d = s.decisions["p1"]
    assert d.pending and d.status == "pending" and d.kind == "plan"
    assert (d.plan, d.plan_file, d.tool_use_id, d.turn) == ("# P", "/p/plan.md", "tu1", 1)
    assert d.ts_asked is not None and d.ts_decided is None
    assert s.plans == []  # not approved yet


def test_plan_approved_becomes_a_past_decision_and_a_plan() -> None:
    s = folded(started(), proposed("p1", plan="# P1"),
               decided("p1", feedback="go", mode_after="acceptEdits"))
    assert s.pending == []
    d = s.decisions["p1"]
    assert not d.pending and d.status == "approved"
    assert (d.feedback, d.mode_after, d.by) == ("go", "acceptEdits", "user")
    assert d.ts_decided is not None and d.ts_decided > d.ts_asked
    assert [p.plan for p in s.plans] == ["# P1"]


@pytest.mark.parametrize("outcome", ["rejected", "expired", "cancelled"])
def test_plan_not_approved_is_not_a_plan(outcome: str) -> None:
    s = folded(proposed("p1"), decided("p1", outcome, feedback="no"))
    assert s.pending == [] and s.plans == []
    assert s.decisions["p1"].status == outcome
    assert s.decisions["p1"].feedback == "no"


def test_revised_plan_supersedes_the_previous_one() -> None:
    s = folded(proposed("p1", plan="v1"), decided("p1", "rejected", feedback="shorter"),
               proposed("p2", plan="v2"))
    assert s.decisions["p1"].superseded and not s.decisions["p2"].superseded
    assert s.decisions["p1"].status == "rejected"
    assert s.pending == ["p2"]
    s = apply(s, decided("p2"))
    assert [p.plan for p in s.plans] == ["v2"]


def test_superseded_pending_plan_stays_pending_until_decided() -> None:
    s = folded(proposed("p1"), proposed("p2"))
    assert s.pending == ["p1", "p2"]
    assert s.decisions["p1"].superseded
    s = apply(s, decided("p1", "cancelled", by="code"))
    assert s.pending == ["p2"]


def test_several_approved_plans_in_order() -> None:
    s = folded(proposed("p1", plan="a"), decided("p1"), proposed("p2", plan="b"),
               decided("p2"), proposed("p3", plan="c"), decided("p3", "rejected"))
    assert [p.id for p in s.plans] == ["p1", "p2"]
    assert [p.plan for p in s.plans] == ["a", "b"]
    assert list(s.decisions) == ["p1", "p2", "p3"]  # oldest first


def test_a_decision_is_decided_once() -> None:
    s = folded(proposed("p1"), decided("p1", "rejected", feedback="first"),
               decided("p1", "approved", feedback="second"))
    assert s.decisions["p1"].status == "rejected"
    assert s.decisions["p1"].feedback == "first"
    assert s.plans == []


def test_repeated_proposal_of_a_decided_plan_changes_nothing() -> None:
    s = folded(proposed("p1", plan="a"), decided("p1"), proposed("p2", plan="b"))
    again = apply(s, proposed("p1", plan="a, again"))
    assert again.decisions == s.decisions  # p2 is still the live plan, not superseded
    assert again.pending == ["p2"]
    assert again.decisions["p1"].plan == "a"


def test_repeated_proposal_of_a_pending_plan_updates_it() -> None:
    s = folded(proposed("p1", plan="a"), proposed("p1", plan="a2"))
    assert s.pending == ["p1"]
    assert s.decisions["p1"].plan == "a2"


def test_an_ending_of_another_kind_does_not_resolve_a_decision() -> None:
    # ids are unique in practice; a log where they clash must still fold to sane state
    s = folded(ev.QuestionAsked(decision_id="x", questions=[]), decided("x", "approved"),
               proposed("x", plan="p"))
    assert s.pending == ["x"]
    assert s.decisions["x"].kind == "question" and s.decisions["x"].pending
    assert s.plans == []


def test_decision_from_before_the_log_is_recorded_not_pending() -> None:
    s = folded(decided("old", "expired", by="restart"))
    assert s.pending == []
    assert s.decisions["old"].status == "expired" and s.decisions["old"].kind == "plan"


# -- questions, tools, models, errors ------------------------------------------------------


QUESTIONS = [{"question": "Which DB?", "header": "DB", "multiSelect": False,
              "options": [{"label": "sqlite"}, {"label": "postgres"}]}]


def test_question_asked_then_answered() -> None:
    s = folded(started(), ev.TurnStarted(turn=1, prompt="x"),
               ev.QuestionAsked(decision_id="q1", questions=QUESTIONS, tool_use_id="tu"))
    assert s.pending == ["q1"]
    d = s.decisions["q1"]
    assert d.kind == "question" and d.pending and d.turn == 1
    assert list(d.questions) == QUESTIONS
    s = apply(s, ev.QuestionAnswered(decision_id="q1", outcome="answered",
                                     answers={"Which DB?": "sqlite"}, by="user"))
    assert s.pending == []
    d = s.decisions["q1"]
    assert d.status == "answered" and dict(d.answers or {}) == {"Which DB?": "sqlite"}
    assert s.plans == []


def test_question_expired() -> None:
    s = folded(ev.QuestionAsked(decision_id="q1", questions=QUESTIONS),
               ev.QuestionAnswered(decision_id="q1", outcome="expired", by="timeout"))
    assert s.pending == [] and s.decisions["q1"].status == "expired"
    assert s.decisions["q1"].by == "timeout"


def test_tool_requested_then_decided() -> None:
    sugg = [{"type": "addRules", "rules": [{"toolName": "Bash"}]}]
    s = folded(ev.ToolRequested(decision_id="t1", tool="Bash", input={"command": "ls"},
                                suggestions=sugg, tool_use_id="tu"))
    d = s.decisions["t1"]
    assert s.pending == ["t1"] and d.kind == "tool" and d.tool == "Bash"
    assert dict(d.input or {}) == {"command": "ls"} and list(d.suggestions) == sugg
    s = apply(s, ev.ToolDecided(decision_id="t1", outcome="denied", reason="no", by="user"))
    assert s.pending == []
    assert s.decisions["t1"].status == "denied" and s.decisions["t1"].reason == "no"


def test_decisions_of_all_kinds_pending_in_order() -> None:
    s = folded(proposed("p1"), ev.QuestionAsked(decision_id="q1", questions=[]),
               ev.ToolRequested(decision_id="t1", tool="Edit"))
    assert s.pending == ["p1", "q1", "t1"]
    s = apply(s, ev.ToolDecided(decision_id="t1", outcome="always", by="user"))
    assert s.pending == ["p1", "q1"]


def test_model_switched() -> None:
    s = folded(started(model="sonnet"),
               ev.ModelSwitched(from_model="sonnet", to_model="opus", why="plan model"))
    assert s.model == "opus"
    s = apply(s, ev.ModelSwitched(from_model="opus", to_model="sonnet", why="resting model"))
    assert s.model == "sonnet"


def test_errors_are_kept_bounded() -> None:
    events = [ev.ErrorEvent(kind="k", message=f"m{i}") for i in range(5 * MAX_ERRORS + 3)]
    s = folded(*events)
    assert len(s.errors) == MAX_ERRORS
    assert s.errors[-1] == f"k: m{5 * MAX_ERRORS + 2}"
    assert s.errors[0] == f"k: m{4 * MAX_ERRORS + 3}"
    # the same one event at a time
    t = SessionState()
    for e in numbered(events):
        t = apply(t, e)
        assert len(t.errors) <= MAX_ERRORS
    assert t.errors == s.errors


def test_apply_leaves_the_old_state_alone() -> None:
    s0 = folded(proposed("p1"), ev.ErrorEvent(kind="k", message="m"))
    snapshot = s0.as_dict()
    s1 = apply(s0, decided("p1"))
    s1 = apply(s1, ev.ErrorEvent(kind="k", message="m2"))
    assert s0.as_dict() == snapshot
    assert s0.pending == ["p1"] and s1.pending == []
    with pytest.raises(TypeError):
        s0.decisions["x"] = s0.decisions["p1"]  # type: ignore[index]


def test_fold_continues_from_a_state() -> None:
    events = numbered([started(), *turn(1, 0.1), proposed("p1"), decided("p1"), *turn(2, 0.2)])
    assert fold(events[3:], fold(events[:3])) == fold(events)


def test_as_dict_is_json() -> None:
    s = folded(started(), *turn(1, 0.1), proposed("p1"), decided("p1"),
               ev.QuestionAsked(decision_id="q1", questions=QUESTIONS),
               ev.ToolRequested(decision_id="t1", tool="Bash", input={"command": "ls"}))
    d = json.loads(json.dumps(s.as_dict()))
    assert d["pending_ids"] == ["q1", "t1"] and d["approved_ids"] == ["p1"]
    assert d["decisions"]["q1"]["questions"] == QUESTIONS
    assert d["decisions"]["t1"]["input"] == {"command": "ls"}
    assert d["plan_mode"] is False and d["turns"] == 1


def test_unknown_event_objects_are_passed_over() -> None:
    class Later:  # an event type this version has no handler for
        type = "future:thing"
        seq = 7
        ts = 5.0

    s = fold([Later()])  # type: ignore[list-item]
    assert s.last_event_seq == 7 and s.updated == 5.0 and s.turns == 0


# -- serialization --------------------------------------------------------------------------


SAMPLES: list[Any] = [
    started(resumed_from="s0"),
    ev.TurnStarted(turn=1, prompt="hello\nworld ✓", plan=True, message_id="0b1c"),
    ev.TurnEnded(turn=1, result="success", cost_usd=0.0123, input_tokens=10, output_tokens=2,
                 duration_ms=1500, message=None, files=["/w/a.txt"]),
    mode("plan", "refused", "approval", "nope"),
    proposed("p1", plan="# Plan\n\n- a \"quoted\" step", plan_file="/x/p.md", tool_use_id="tu"),
    ev.PlanCommented(decision_id="p1", line=3, quote='- a "quoted" step', note="why ✓",
                     section=False, removed=False),
    decided("p1", "approved", feedback="ok", mode_after="acceptEdits", by="code", edited=True,
            approved_plan="# Plan (edited)"),
    ev.PlanHandoff(decision_id="p1", old_id="s-old", new_id="s-new", plan="# Plan ✓",
                   mode="acceptEdits"),
    ev.ModelSwitched(from_model=None, to_model="opus", why="plan model"),
    ev.QuestionAsked(decision_id="q1", questions=QUESTIONS, tool_use_id="tu2"),
    ev.QuestionAnswered(decision_id="q1", outcome="answered", answers={"Which DB?": "pg"},
                        by="user"),
    ev.ToolRequested(decision_id="t1", tool="Bash", input={"command": "ls", "n": [1, 2.5, None]},
                     suggestions=[{"type": "setMode", "mode": "acceptEdits"}]),
    ev.ToolDecided(decision_id="t1", outcome="allowed", reason=None, by="gate"),
    ev.TasksUpdated(turn=1, tasks=[{"id": "1", "subject": "Write a.txt", "status": "completed",
                                    "active_form": "Writing a.txt"}]),
    ev.FilesRewound(turn=1, message_id="0b1c", files=["/w/a.txt"], by="user"),
    ev.Thought(turn=1, text="first the plan file, then the edit"),
    ev.AgentStarted(agent_id="a1", tool_use_id="tu3", description="Write a file",
                    subagent_type="general-purpose", background=True, prompt="do it", turn=2),
    ev.AgentProgress(agent_id="a1", activity="Writing a.txt", last_tool="Write", tokens=2151,
                     tool_uses=1, duration_ms=59),
    ev.AgentEnded(agent_id="a1", status="completed", summary="wrote a.txt", tokens=2701,
                  tool_uses=1, duration_ms=134),
    ev.SessionAsleep(reason="idle", idle_seconds=3600.2),
    ev.ApiRetried(turn=2, reason="API overloaded", attempt=2, max_retries=10, delay_ms=4100,
                  status=529),
    ev.ModelFellBack(turn=2, kind="model_fallback", to_model="claude-sonnet-4-5",
                     from_model="claude-opus-5-5", reason="Switched to Sonnet 4.5"),
    ev.Compacted(turn=3, trigger="manual", pre_tokens=152_000, post_tokens=18_000),
    ev.McpChanged(name="teamdb", status="failed", error="spawn teamdbx ENOENT"),
    ev.CliUnknown(kind="system/brand_new", detail="fields: x"),
    ev.ErrorEvent(kind="session_dead", message="the CLI exited"),
]


def test_samples_cover_every_event_type() -> None:
    assert sorted(e.type for e in SAMPLES) == sorted(EVENT_TYPES)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.type)
def test_json_round_trip(event: Any) -> None:
    line = dump_event(event)
    assert "\n" not in line
    back = parse_event(line)
    assert type(back) is type(event) is EVENT_TYPES[event.type]
    assert back == event
    assert parse_event(line.encode()) == event
    assert EVENT_ADAPTER.validate_python(json.loads(line)) == event
    assert json.loads(line)["type"] == event.type


# -- each event defined once ---------------------------------------------------------------


@pytest.fixture
def event_registry() -> Any:
    """The registry of event classes, put back as it was after the test."""
    saved = dict(EVENT_TYPES)
    yield EVENT_TYPES
    EVENT_TYPES.clear()
    EVENT_TYPES.update(saved)


def test_every_event_class_is_registered_by_its_tag() -> None:
    union = set(get_args(get_args(ev.Event)[0]))
    assert set(EVENT_TYPES.values()) == union
    assert all(EVENT_TYPES[c.model_fields["type"].default] is c for c in union)
    assert ev.EventBase not in EVENT_TYPES.values()
    folding.check_folds()
    history.check_summaries()


def test_a_new_event_without_a_fold_or_a_summary_fails(event_registry: Any) -> None:
    class SurpriseHappened(ev.EventBase):
        type: Literal["surprise:happened"] = "surprise:happened"
        what: str

    assert event_registry["surprise:happened"] is SurpriseHappened
    with pytest.raises(LookupError, match=r"no fold handler for event\(s\): SurpriseHappened"):
        folding.check_folds()
    with pytest.raises(LookupError, match=r"no summary for event\(s\): SurpriseHappened"):
        history.check_summaries()
    with pytest.raises(LookupError, match=r"Event union for event\(s\): SurpriseHappened"):
        ev.check_table(get_args(get_args(ev.Event)[0]), "member of the Event union")


def test_a_fold_and_a_summary_make_a_new_event_whole(event_registry: Any,
                                                      monkeypatch: Any) -> None:
    class SurpriseHappened(ev.EventBase):
        type: Literal["surprise:happened"] = "surprise:happened"

    monkeypatch.setitem(folding.FOLDS, SurpriseHappened, lambda b, e: None)
    folding.check_folds()
    monkeypatch.setitem(history._SUMMARIES, SurpriseHappened, lambda e, limit: "surprise")
    history.check_summaries()
    assert history.event_summary(SurpriseHappened()) == "surprise"


def test_a_type_tag_defined_twice_fails(event_registry: Any) -> None:
    with pytest.raises(TypeError, match="'error' is defined twice: by ErrorEvent and by Oops"):
        class Oops(ev.EventBase):
            type: Literal["error"] = "error"
    assert event_registry["error"] is ev.ErrorEvent


def test_a_base_without_a_tag_is_not_an_event(event_registry: Any) -> None:
    class Mixin(ev.EventBase):
        note: str = ""

    assert Mixin not in event_registry.values()


def test_list_round_trip() -> None:
    text = EVENTS_ADAPTER.dump_json(SAMPLES)
    assert EVENTS_ADAPTER.validate_json(text) == SAMPLES


def test_unknown_type_is_a_validation_error() -> None:
    with pytest.raises(ValidationError) as info:
        parse_event('{"type": "future:thing", "seq": 1, "ts": 1.0}')
    assert info.value.errors()[0]["type"] == "union_tag_invalid"
    with pytest.raises(ValidationError):
        parse_event('{"seq": 1, "ts": 1.0}')  # no type at all


def test_unknown_fields_are_kept_and_ignored_by_the_fold() -> None:
    line = ('{"type": "error", "kind": "k", "message": "m", "seq": 3, "ts": 2.0,'
            ' "added_later": {"x": 1}}')
    e = parse_event(line)
    assert e.model_extra == {"added_later": {"x": 1}}
    assert e.model_copy(update={"added_later": None}) != e
    known = ev.ErrorEvent(kind="k", message="m", seq=3, ts=2.0)
    assert (e.kind, e.message, e.seq, e.ts) == (known.kind, known.message, 3, 2.0)
    assert fold([e]) == fold([known])
    # written back as it was: a rewrite never drops what a newer version added
    assert json.loads(dump_event(e)) == json.loads(line)


def test_bad_literal_is_rejected() -> None:
    with pytest.raises(ValidationError):
        parse_event('{"type": "plan:decided", "decision_id": "p", "outcome": "maybe",'
                    ' "by": "user"}')
    with pytest.raises(ValidationError):
        parse_event('{"type": "plan:mode", "mode": "plan", "state": "requested",'
                    ' "source": "nobody"}')


def test_events_are_frozen() -> None:
    e = ev.ErrorEvent(kind="k", message="m")
    with pytest.raises(ValidationError):
        e.message = "changed"  # type: ignore[misc]


# -- property tests -------------------------------------------------------------------------

TEXT = st.text(max_size=30)
IDS = st.text("abcdef0123456789", min_size=1, max_size=4)
MODES = st.sampled_from(ev.PERMISSION_MODES)
MODELS = st.none() | st.sampled_from(["sonnet", "opus", "haiku"])
ACTORS = st.sampled_from(["user", "code", "timeout", "interrupt", "close", "cli", "gate",
                          "restart"])
JSONISH = st.dictionaries(st.sampled_from(["command", "file_path", "n"]),
                          st.none() | st.integers(-5, 5) | TEXT, max_size=3)


@st.composite
def sessions(draw: st.DrawFn) -> list[Any]:
    """A plausible session log: started, then turns, mode changes, plans proposed and
    decided, questions, tools, model switches, errors, the odd resume."""
    events: list[Any] = [ev.SessionStarted(
        session_id=draw(IDS), name=draw(TEXT), cwd="/w", resting_mode=draw(MODES),
        model=draw(MODELS), plan_model=draw(MODELS))]
    pending: list[tuple[str, str]] = []  # (kind, id)
    asked: list[tuple[str, str]] = []
    n_turn = 0
    cost = 0.0
    for _ in range(draw(st.integers(0, 25))):
        step = draw(st.sampled_from(["turn", "mode", "plan", "question", "tool", "decide",
                                     "model", "error", "resume"]))
        if step == "turn":
            n_turn += 1
            events.append(ev.TurnStarted(turn=n_turn, prompt=draw(TEXT), plan=draw(st.booleans())))
            if draw(st.booleans()):
                cost += draw(st.floats(0, 1, allow_nan=False))
            events.append(ev.TurnEnded(
                turn=n_turn, result=draw(st.sampled_from(["success", "error_max_turns",
                                                           "interrupted"])),
                is_error=draw(st.booleans()),
                cost_usd=draw(st.none() | st.just(cost)),
                input_tokens=draw(st.integers(0, 10_000)),
                output_tokens=draw(st.integers(0, 10_000)),
                duration_ms=draw(st.none() | st.integers(0, 10**6)),
                message=draw(st.none() | TEXT)))
        elif step == "mode":
            m = draw(MODES)
            events.append(ev.PlanMode(mode=m, state="requested", source=draw(
                st.sampled_from(["user", "approval"]))))
            end = draw(st.sampled_from(["effective", "refused", "none"]))
            if end != "none":
                events.append(ev.PlanMode(mode=m, state=end, source="user",  # type: ignore[arg-type]
                                          detail=draw(st.none() | TEXT)))
        elif step in ("plan", "question", "tool"):
            did = draw(IDS)  # ids may repeat: a repeat is a re-ask, which the fold must handle
            if step == "plan":
                events.append(ev.PlanProposed(decision_id=did, plan=draw(TEXT),
                                              plan_file=draw(st.none() | TEXT),
                                              tool_use_id=draw(st.none() | IDS)))
            elif step == "question":
                events.append(ev.QuestionAsked(decision_id=did, questions=[
                    {"question": draw(TEXT), "options": [{"label": draw(TEXT)}]}]))
            else:
                events.append(ev.ToolRequested(decision_id=did, tool=draw(TEXT),
                                               input=draw(JSONISH)))
            pending.append((step, did))
            asked.append((step, did))
        elif step == "decide":
            if pending and draw(st.booleans()):
                kind, did = pending.pop(draw(st.integers(0, len(pending) - 1)))
            elif asked and draw(st.booleans()):
                kind, did = draw(st.sampled_from(asked))  # a second (ignored) ending
            else:
                kind, did = draw(st.sampled_from(["plan", "question", "tool"])), draw(IDS)
            by = draw(ACTORS)
            if kind == "plan":
                events.append(ev.PlanDecided(
                    decision_id=did, by=by,
                    outcome=draw(st.sampled_from(["approved", "rejected", "expired",
                                                  "cancelled"])),
                    feedback=draw(st.none() | TEXT), mode_after=draw(st.none() | MODES)))
            elif kind == "question":
                events.append(ev.QuestionAnswered(
                    decision_id=did, by=by,
                    outcome=draw(st.sampled_from(["answered", "expired", "cancelled"])),
                    answers=draw(st.dictionaries(TEXT, TEXT, max_size=2))))
            else:
                events.append(ev.ToolDecided(
                    decision_id=did, by=by,
                    outcome=draw(st.sampled_from(["allowed", "always", "denied", "expired",
                                                  "cancelled"])),
                    reason=draw(st.none() | TEXT)))
        elif step == "model":
            events.append(ev.ModelSwitched(from_model=draw(MODELS), to_model=draw(MODELS),
                                           why=draw(TEXT)))
        elif step == "error":
            events.append(ev.ErrorEvent(kind=draw(TEXT), message=draw(TEXT)))
        else:  # a restart: resumed (history kept) or, rarely, a fresh session in the same log
            fresh = draw(st.integers(0, 4)) == 0
            cost = 0.0
            events.append(ev.SessionStarted(
                session_id=draw(IDS), name=draw(TEXT), cwd="/w", resting_mode=draw(MODES),
                model=draw(MODELS), resumed_from=None if fresh else "prev"))
    t0 = draw(st.floats(1e9, 2e9))
    return [e.model_copy(update={"seq": i, "ts": t0 + i * 0.5}) for i, e in enumerate(events, 1)]


def _check_invariants(s: SessionState, upto: list[Any]) -> None:
    assert s.last_event_seq == (upto[-1].seq if upto else 0)
    assert len(s.pending_ids) == len(set(s.pending_ids))
    for i in s.pending_ids:
        assert s.decisions[i].pending
    assert {i for i, d in s.decisions.items() if d.pending} == set(s.pending_ids)
    for d in s.plans:
        assert d.kind == "plan" and d.status == "approved"
    assert len(s.errors) <= MAX_ERRORS
    assert s.cost_usd >= 0


@settings(max_examples=150, deadline=None)
@given(sessions())
def test_incremental_apply_equals_fold_of_every_prefix(events: list[Any]) -> None:
    state = SessionState()
    for k in range(len(events) + 1):
        prefix = events[:k]
        whole = fold(prefix)
        assert state == whole
        assert state.as_dict() == whole.as_dict()
        _check_invariants(whole, prefix)
        if k < len(events):
            state = apply(state, events[k])
    # deterministic: the same log folds to the same state, twice over and from a copy
    again = fold([parse_event(dump_event(e)) for e in events])
    assert fold(events) == fold(events) == again
    # and a fold can be continued from any point
    cut = len(events) // 2
    assert fold(events[cut:], fold(events[:cut])) == fold(events)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sessions(), st.data())
def test_torn_last_line_folds_as_if_absent(events: list[Any], data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        with EventLog(path) as log:
            written = [log.append(e) for e in events]
        assert [e.seq for e in written] == list(range(1, len(events) + 1))
        clean = read_events(path)
        assert clean == written
        # a crash mid-write: a prefix of the next serialized line, without its newline
        nxt = data.draw(st.sampled_from(events)).model_copy(update={"seq": len(events) + 1})
        line = dump_event(nxt)
        cut = data.draw(st.integers(1, len(line) - 1))
        with open(path, "ab") as fh:
            fh.write(line[:cut].encode())
        torn = read_events(path)
        assert torn == clean
        assert fold(torn) == fold(clean) == fold(written)
        # the next writer cuts the torn piece off and carries on numbering
        with EventLog(path) as log:
            assert log.seq == len(events)
            extra = log.append(ev.ErrorEvent(kind="after", message="crash"))
        assert extra.seq == len(events) + 1
        assert read_events(path) == [*clean, extra]
        assert path.read_bytes().endswith(b"\n")


# -- a long log ------------------------------------------------------------------------------


def test_two_thousand_turn_log_folds(tmp_path: Path) -> None:
    n = 2000
    events: list[Any] = [started(), mode("default", "effective", "start")]
    for i in range(1, n + 1):
        events.append(ev.TurnStarted(turn=i, prompt=f"step {i}"))
        if i % 10 == 0:
            events.append(proposed(f"p{i}", plan=f"# plan {i}"))
            events.append(decided(f"p{i}", "approved" if i % 20 == 0 else "rejected"))
        if i % 7 == 0:
            events.append(ev.ToolRequested(decision_id=f"t{i}", tool="Bash",
                                           input={"command": f"echo {i}"}))
            events.append(ev.ToolDecided(decision_id=f"t{i}", outcome="allowed", by="user"))
        if i % 100 == 0:
            events.append(ev.ErrorEvent(kind="k", message=f"e{i}"))
        events.append(ev.TurnEnded(turn=i, result="success", cost_usd=i * 0.001,
                                   input_tokens=3, output_tokens=2))
    path = tmp_path / "long.jsonl"
    with EventLog(path) as log:
        for e in events:
            log.append(e)
    back = read_events(path)
    assert len(back) == len(events)
    s = fold(back)
    assert s.turns == n and not s.working
    assert s.cost_usd == pytest.approx(n * 0.001)
    assert (s.input_tokens, s.output_tokens) == (3 * n, 2 * n)
    assert [p.id for p in s.plans] == [f"p{i}" for i in range(20, n + 1, 20)]
    assert len(s.decisions) == n // 10 + n // 7
    assert s.pending == []
    assert s.errors[-1] == f"k: e{n}" and len(s.errors) == n // 100
    assert s.last_event_seq == len(events)
    # the incremental path agrees
    t = SessionState()
    for e in back:
        t = apply(t, e)
    assert t == s


def test_agents_fold_from_start_to_end() -> None:
    """A background agent's life as the log tells it: started, progressing, ended; a second
    start of one id and progress after the end change nothing."""
    s = ev.fold([
        ev.AgentStarted(agent_id="a1", description="Write a file", background=True, turn=1),
        ev.AgentStarted(agent_id="a2", description="Read", turn=1),
        ev.AgentProgress(agent_id="a1", last_tool="Write", tokens=10, tool_uses=1),
        ev.AgentStarted(agent_id="a1", description="again"),
        ev.AgentEnded(agent_id="a1", status="completed", summary="done", tokens=20),
        ev.AgentProgress(agent_id="a1", last_tool="Bash", tokens=99),
    ])
    a1, a2 = s.agents
    assert (a1.description, a1.status, a1.summary, a1.tokens, a1.last_tool) == (
        "Write a file", "completed", "done", 20, "Write")
    assert a1.ended is not None and not a1.running
    assert [a.id for a in s.running_agents] == ["a2"]
    assert s.as_dict()["agents"][0]["summary"] == "done"
