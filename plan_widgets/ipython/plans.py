"""``%claude plans``: the project's kept plans (:mod:`plan_widgets.store.plans`), listed across
its sessions, filtered, and one opened read-only with Changes against another; and the kept
plan a ``%%claude --from-plan ID`` cell carries out.

``%claude plans ID`` opens the kept plan ID names; an ID that names no kept plan but a session
lists that session's approved plans, as the command did before plans were kept.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..model.errors import OptionError
from ..render.plans import HEAD, card_text, row
from ..store.plans import KeptPlan, find_plan, kept_plans, plans_dir, status_word
from . import history, registry
from .output import in_kernel, show_table, show_widget

SHOWN = 20
"""``%claude plans`` lists the newest this many (``--all``: every one)."""
USAGE = ("%claude plans [ID] [--against ID] [--all] [--status STATUS] [--text WORDS] "
         "[--session NAME]")


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", nargs="?")
    p.add_argument("--against", default=None)
    p.add_argument("--all", action="store_true")
    p.add_argument("--status", default=None)
    p.add_argument("--text", default=None)


def shelf(config: Any) -> Path:
    """Where this kernel's project keeps its plans (beside its session logs)."""
    return plans_dir(history.log_dir(config))


def every_plan(config: Any) -> list[KeptPlan]:
    """The kept plans of this kernel's project, and of the folders its live sessions log in
    (a session started with ``--cwd`` elsewhere logs there), newest first."""
    folders = [shelf(config)]
    for s in registry.sessions().values():
        log = getattr(s.lifecycle, "log", None)
        if log is not None and plans_dir(log.path.parent) not in folders:
            folders.append(plans_dir(log.path.parent))
    found = {k.id: k for folder in reversed(folders) for k in kept_plans(folder)}
    return sorted(found.values(), key=lambda k: (k.proposed or 0.0, k.id), reverse=True)


def kept_plan(config: Any, plan_id: str) -> KeptPlan:
    """The kept plan ``plan_id`` names (its id or the start of it), or :class:`OptionError`."""
    found = find_plan(every_plan(config), plan_id)
    if found is None:
        raise OptionError(f"no kept plan {plan_id!r} in {shelf(config)} "
                          "(%claude plans lists them)")
    return found


def plans(args: argparse.Namespace) -> None:
    """``%claude plans [ID] [--against ID] [--all] [--status S] [--text W]``."""
    every = every_plan(args.config)
    if args.id is not None:
        found = find_plan(every, args.id)
        if found is None and args.against is None:
            history.plans(args)  # a session's id: its approved plans
            return
        if found is None:
            raise OptionError(f"no kept plan {args.id!r} in {shelf(args.config)} "
                              "(%claude plans lists them)")
        other = kept_plan(args.config, args.against) if args.against else None
        _open(found, other, every)
        return
    if args.against is not None:
        raise OptionError("%claude plans: --against needs the ID of the plan to open first "
                          f"(usage: {USAGE})")
    shown = _filtered(every, args)
    if not shown:
        print(f"no kept plans{_filters(args)} in {shelf(args.config)}")
        return
    cut = shown if args.all else shown[:SHOWN]
    folders = sorted({str(k.folder) for k in shown})
    where = folders[0] if len(folders) == 1 else f"{len(folders)} folders"
    caption = (f"{len(shown)} kept plan(s){_filters(args)} in {where}, newest first"
               + (f" (the newest {len(cut)} shown; --all lists every one)"
                  if len(cut) < len(shown) else ""))
    _list(cut, every, caption)


def _filtered(every: list[KeptPlan], args: argparse.Namespace) -> list[KeptPlan]:
    status = status_word(args.status) if args.status else None
    words = (args.text or "").lower()
    return [k for k in every
            if (status is None or k.status == status)
            and (args.name is None or k.session == args.name)
            and (not words or words in k.text.lower() or words in k.proposed_text.lower())]


def _filters(args: argparse.Namespace) -> str:
    said = ([f"status {status_word(args.status)}"] if args.status else []) + (
        [f"containing {args.text!r}"] if args.text else []) + (
        [f"of session {args.name!r}"] if args.name else [])
    return f" ({', '.join(said)})" if said else ""


def _list(shown: list[KeptPlan], every: list[KeptPlan], caption: str) -> None:
    if not in_kernel():
        show_table(HEAD, [row(k) for k in shown], caption)
        return
    from ..render.table import table_text
    from ..widgets.plans import PlanList, fallback_html

    view = PlanList(shown, every, caption)
    show_widget(view.box, table_text(HEAD, [row(k) for k in shown], caption),
                text_html=fallback_html(shown, caption))


def _open(plan: KeptPlan, other: KeptPlan | None, every: list[KeptPlan]) -> None:
    """The card of ``plan``, with its Changes against ``other`` (default: the plan it
    revises)."""
    if other is None and plan.revises:
        other = next((k for k in every if k.id == plan.revises), None)
    if not in_kernel():
        print(card_text(plan, other))
        return
    from ..widgets.plans import PlanCard

    card = PlanCard(every)
    card.open(plan, other)
    show_widget(card.box, card_text(plan, other))


def carry_out(args: argparse.Namespace, body: str, config: Any) -> tuple[str, KeptPlan]:
    """``%%claude --from-plan ID``: the cell's prompt (the kept plan, in the CLI's own words
    for carrying out a plan, then the cell's own words if any) and the plan. The cell starts a
    new conversation (``--new``): the plan is all it knows. A mistake raises
    :class:`OptionError` (the cell fails in one line)."""
    from ..agent.handoff import FRESH_PROMPT

    if args.plan:
        raise OptionError("--from-plan carries out a kept plan as approved: drop --plan (to "
                          "plan again, paste the plan into a --plan cell)")
    if args.resume:
        raise OptionError("--from-plan starts a new conversation: it cannot also --resume one")
    kept = kept_plan(config, args.from_plan)
    args.new = True
    prompt = FRESH_PROMPT.format(plan=kept.text.strip())
    return (f"{prompt}\n\n{body.strip()}" if body.strip() else prompt), kept
