"""The project's plans, kept (issue 43, point 4), in fast tests of the store and the keeper:
a plan's text is written once and never rewritten, its record follows the session's state
(sent back, revised, approved, handed over, superseded, expired), and ids resolve by their
start. The real CLI's side is tests/test_e2e_kept_plans.py."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from plan_widgets import model as ev
from plan_widgets.agent.plan_keeper import PlanKeeper
from plan_widgets.model.errors import OptionError
from plan_widgets.store.plans import find_plan, kept_plans, load, plans_dir, status_word


class Session(SimpleNamespace):
    """What the keeper reads of a session: its id, name and folded state."""

    def emit(self, *events: ev.Event) -> None:
        for e in events:
            self.state = ev.apply(self.state, e)
            self.keeper(self)


def session(tmp_path: Path, sid: str = "s-1", name: str = "default") -> Session:
    s = Session(session_id=sid, name=name, state=ev.fold([]), keeper=PlanKeeper(lambda: tmp_path))
    s.emit(ev.SessionStarted(session_id=sid, name=name, cwd=str(tmp_path), resting_mode="default"))
    return s


def records(tmp_path: Path) -> dict[str, dict[str, object]]:
    return {p.stem: json.loads(p.read_text()) for p in plans_dir(tmp_path).glob("*.json")}


def test_a_revision_never_overwrites_the_plan_it_revises(tmp_path: Path) -> None:
    s = session(tmp_path)
    s.emit(ev.PlanProposed(decision_id="aaa111", plan="# v1\n", ts=10.0),
           ev.PlanDecided(decision_id="aaa111", outcome="rejected", feedback="add a test",
                          by="user"),
           ev.PlanProposed(decision_id="bbb222", plan="# v2\n", ts=20.0),
           ev.PlanDecided(decision_id="bbb222", outcome="approved", mode_after="acceptEdits",
                          by="user", approved_plan="# v2, edited\n", edited=True))
    folder = plans_dir(tmp_path)
    assert (folder / "aaa111.md").read_text() == "# v1\n"
    assert (folder / "bbb222.md").read_text() == "# v2\n"  # as proposed
    assert (folder / "bbb222.approved.md").read_text() == "# v2, edited\n"
    r = records(tmp_path)
    assert r["aaa111"]["status"] == "sent back" and r["aaa111"]["feedback"] == "add a test"
    assert r["bbb222"]["status"] == "approved" and r["bbb222"]["revises"] == "aaa111"
    assert r["bbb222"]["mode_after"] == "acceptEdits" and r["bbb222"]["edited"] is True
    kept = kept_plans(folder)
    assert [k.id for k in kept] == ["bbb222", "aaa111"]  # newest first
    assert kept[0].text == "# v2, edited\n" and kept[0].proposed_text == "# v2\n"
    # a later write of the same id never replaces its text
    (folder / "aaa111.md").chmod(0o400)
    s.emit(ev.PlanProposed(decision_id="aaa111", plan="# something else\n"))
    assert (folder / "aaa111.md").read_text() == "# v1\n"


def test_an_undecided_plan_is_superseded_and_a_pending_one_expires(tmp_path: Path) -> None:
    s = session(tmp_path)
    s.emit(ev.PlanProposed(decision_id="p1", plan="one", ts=1.0))
    assert records(tmp_path)["p1"]["status"] == "proposed"
    s.emit(ev.PlanProposed(decision_id="p2", plan="two", ts=2.0))
    assert records(tmp_path)["p1"]["status"] == "superseded"
    s.emit(ev.PlanDecided(decision_id="p2", outcome="expired", by="restart"))
    assert records(tmp_path)["p2"]["status"] == "expired"


def test_a_plan_approved_to_start_fresh_is_handed_over(tmp_path: Path) -> None:
    s = session(tmp_path, "old-id")
    s.emit(ev.PlanProposed(decision_id="p1", plan="# go\n"),
           ev.PlanDecided(decision_id="p1", outcome="approved", mode_after="default", by="user"))
    s.session_id = "new-id"  # the live session goes on under the new conversation's id
    s.emit(ev.PlanHandoff(decision_id="p1", old_id="old-id", new_id="new-id", plan="# go\n",
                          mode="default"))
    r = records(tmp_path)["p1"]
    assert r["status"] == "handed over" and r["carried_out_in"] == ["new-id"]
    assert r["session_id"] == "old-id"  # the conversation that proposed it


def test_a_shelf_that_cannot_be_written_never_stops_the_session(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture
                                                                 ) -> None:
    (tmp_path / "plans").write_text("not a folder")
    s = session(tmp_path)
    s.emit(ev.PlanProposed(decision_id="p1", plan="x"), ev.PlanProposed(decision_id="p2",
                                                                         plan="y"))
    assert s.state.decisions["p2"].plan == "y"
    assert [r.message for r in caplog.records].count(
        f"cannot keep the session's plans in {tmp_path / 'plans'}: "
        f"[Errno 17] File exists: '{tmp_path / 'plans'}'") == 1  # said once


def test_ids_resolve_by_their_start_and_statuses_by_their_words(tmp_path: Path) -> None:
    s = session(tmp_path)
    s.emit(ev.PlanProposed(decision_id="abc123", plan="a"),
           ev.PlanProposed(decision_id="abd456", plan="b"))
    every = kept_plans(plans_dir(tmp_path))
    assert find_plan(every, "abc").id == "abc123"  # type: ignore[union-attr]
    assert find_plan(every, "abd456").id == "abd456"  # type: ignore[union-attr]
    assert find_plan(every, "zz") is None
    with pytest.raises(OptionError, match=r"'ab' matches 2 kept plans: .* \(give more"):
        find_plan(every, "ab")
    assert status_word("Sent-Back") == "sent back" and status_word("handed over") == \
        "handed over"
    with pytest.raises(OptionError, match="no plan status 'done' .one of: proposed, sent-back"):
        status_word("done")
    assert load(plans_dir(tmp_path), "nosuch") is None


def test_the_plans_command_in_a_terminal_lists_filters_and_opens_with_changes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from plan_widgets.ipython import commands, registry

    monkeypatch.setattr(registry, "_sessions", {})
    s = session(tmp_path, "sess-one")
    s.emit(ev.PlanProposed(decision_id="aaa111", plan="# Plan v1\n\n1. Create `a.py`.\n",
                           ts=10.0),
           ev.PlanDecided(decision_id="aaa111", outcome="rejected", feedback="more", by="user"),
           ev.PlanProposed(decision_id="bbb222", plan="# Plan v2\n\n1. Create `b.py`.\n",
                           ts=20.0))
    config = SimpleNamespace(log_dir=str(tmp_path))

    def said(line: str) -> str:
        commands.run(config, line)
        return capsys.readouterr().out

    listing = said("plans")
    assert "2 kept plan(s) in " + str(plans_dir(tmp_path)) in listing
    assert listing.index("bbb222  proposed") < listing.index("aaa111  sent back")
    assert "aaa111" not in said("plans --status proposed")
    assert "no kept plans (containing 'nothing like it')" in said("plans --text 'nothing like it'")
    card = said("plans bbb --against aaa1")
    assert card.startswith("**Kept plan bbb222: proposed**")
    assert "Changes from plan aaa111 (sent back):" in card
    assert "-1. Create `a.py`.\n+1. Create `b.py`." in card
    assert "To carry it out: `%%claude --from-plan bbb222`" in card
    with pytest.raises(OptionError, match="no kept plan 'zzz'"):
        said("plans bbb --against zzz")


def test_from_plan_is_the_plan_in_the_clis_words_and_refuses_what_cannot_go_with_it(
        tmp_path: Path) -> None:
    from plan_widgets.ipython.plans import carry_out

    s = session(tmp_path)
    s.emit(ev.PlanProposed(decision_id="abc123", plan="# Plan\n\n1. Go.\n"))
    config = SimpleNamespace(log_dir=str(tmp_path))

    def args(**given: object) -> SimpleNamespace:
        return SimpleNamespace(**{"plan": False, "resume": None, "new": False,
                                  "from_plan": "abc", **given})

    a = args()
    prompt, kept = carry_out(a, "  Then say so.\n", config)  # type: ignore[arg-type]
    assert prompt == "Implement the following plan:\n\n# Plan\n\n1. Go.\n\nThen say so."
    assert kept.id == "abc123" and a.new is True  # a new conversation
    assert carry_out(args(), "", config)[0].endswith("1. Go.")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="drop --plan"):
        carry_out(args(plan=True), "", config)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="cannot also --resume"):
        carry_out(args(resume="x"), "", config)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="no kept plan 'zz'"):
        carry_out(args(from_plan="zz"), "", config)  # type: ignore[arg-type]
