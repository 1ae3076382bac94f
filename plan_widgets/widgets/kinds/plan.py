"""The plan decision (``ExitPlanMode``): its card, its static forms, its terminal form.

The card: the plan as Markdown, with Approve (into the mode picked beside it), Approve,
auto-accept edits, Approve, start fresh, Comment on a line, Keep planning with feedback, and
Edit. Its big parts are modules of their own: the plan's view and editor (:mod:`.plan_edit`,
whose :func:`~.plan_edit.plan_head` is also the static card's body), the comments on lines
(:mod:`.plan_comments`) and the Approve target (:mod:`.plan_targets`); its fixed controls may
have been opened ahead, while the model wrote the plan (:mod:`.plan_spares`).

At a terminal (issue 22): approve, approve with auto-accept edits (also for this plan only:
issue 43, point 5), approve and start fresh,
comment on a line, keep planning. A comment is a form typed line by line: the line (its number
or its text), then the comment. A comment that cannot be taken (empty, too long, a line not in
the plan) is one line, nothing is kept, and the plan prompt comes back; so does a comment
taken, until the user decides.
"""

from __future__ import annotations

import ipywidgets as w

from ...agent.comments import CommentError
from ...agent.decisions import PlanDecision
from ...render import prompts
from ...render.diff import unified_diff
from ...render.look import BORDER
from ...render.paths import home_short
from ..markdown import html_output
from ..shared import on_change, on_click, shared
from ..typed import TypedBox
from .frame import Card, Kind, Terminal, markdown_card, static_card
from .plan_edit import PlanEditor, plan_head, plan_markdown
from .plan_lines import CommentBox
from .plan_spares import needed, take
from .plan_targets import into, target_picker


class PlanCard(Card):
    """The plan as Markdown, with Approve / Approve, auto-accept edits / Keep planning."""

    decision: PlanDecision

    def __init__(self, decision: PlanDecision) -> None:
        rest = decision.resting_mode
        head = html_output(plan_head(decision), layout=shared("full"))
        self.editor = PlanEditor(self, decision, head)  # Changes, Edit (plan_edit)
        self.comments = CommentBox(self, decision)  # comments on lines (plan_lines)
        self.editor.on_show = lambda: self.comments.close(redraw=False)
        # the fixed controls: opened ahead if they could be (plan_spares), else made here
        self.feedback: TypedBox = take("feedback", rest)
        self.target = target_picker(decision)  # where Approve leads (plan_targets)
        self.approve_button: w.Button = take("approve", rest)
        on_change(self.target,
                  lambda ch: setattr(self.approve_button, "tooltip", into(ch["new"], rest)))
        self.approve_edits_button: w.Button | None = None
        if "edits" in needed(rest):
            self.approve_edits_button = take("edits", rest)
            on_click(self.approve_edits_button, lambda _b: self.editor.approve("acceptEdits"))
        self.fresh_button: w.Button = take("fresh", rest)
        on_click(self.fresh_button, lambda _b: self.editor.approve(*self.target.value, fresh=True))
        self.keep_button: w.Button = take("keep", rest)
        on_click(self.approve_button, lambda _b: self.editor.approve(*self.target.value))
        on_click(self.keep_button,  # a comment typed and not yet added goes too, or nothing
                 lambda _b: self.comments.flush() and self.editor.keep(self.feedback.value))
        buttons = [self.approve_button, self.target, self.approve_edits_button,
                   self.fresh_button, self.keep_button]
        super().__init__(decision, [head, *self.editor.controls, *self.comments.controls,
                                    self.feedback,
                                    *[b for b in buttons if b]])
        # Approve's tooltip names the target picked (a spare names the resting mode): after
        # the card's comm_open, where it costs the card nothing (no one hovers in a ms)
        self.approve_button.tooltip = into(self.target.value, rest)

    def static_html(self) -> str:
        return static_html(self.decision)

    def markdown(self) -> str:
        return markdown(self.decision)


def static_html(d: PlanDecision) -> str:
    """The static card: the approved edit, a revision's changes, or the plan (plan_edit)."""
    return static_card(d, plan_head(d))


def markdown(d: PlanDecision) -> str:
    return markdown_card(d, plan_markdown(d))


# -- the terminal form -----------------------------------------------------------------------

PLAN_CHOICES = (
    *prompts.PLAN_CHOICES[:2],
    prompts.Choice("o", "approve and auto-accept edits for this plan only (then the resting "
                   "mode)", ("only", "this plan only")),  # agent/plan_scope
    prompts.Choice("f", "approve and start fresh", ("fresh", "start fresh")),
    prompts.Choice("c", "comment on a line", ("comment",)),
    prompts.PLAN_CHOICES[2],
)
PLAN_PROMPT = ("[a]pprove / approve + auto-[e]dits / auto-edits for this plan [o]nly / "
               "approve, start [f]resh / [c]omment on a line / [k]eep planning: ")


def show_text(d: PlanDecision, out: Terminal) -> None:
    """The plan at a terminal: a revision's changes and the comments on the plan before it
    first, then the plan."""
    note = f"plan file: {home_short(d.plan_file)}" if d.plan_file else None
    if d.previous_plan is not None:  # a revision: what changed first
        out.line("Changes from the previous plan:", style="bold")
        for ln in unified_diff(d.previous_plan, d.plan).splitlines()[2:]:
            style = "green" if ln.startswith("+") else "red" if ln.startswith("-") \
                else "dim" if ln.startswith("@@") else None
            out.line(ln, style=style)
        for ln in revision_lines(d):  # model text is made safe by the output
            out.line(ln, style="cyan")
    out.panel("Plan proposed", d.plan, note)


async def ask_text(d: PlanDecision, io: Terminal) -> None:
    """Ask until the plan is decided."""
    while not d.done:
        c = await io.pick(PLAN_PROMPT, PLAN_CHOICES)
        if c.key == "a":
            d.approve(by="user")
        elif c.key == "e":
            d.approve("acceptEdits", by="user")
        elif c.key == "o":
            d.approve("acceptEdits", by="user", only=True)
        elif c.key == "f":
            d.approve_fresh(by="user")
        elif c.key == "c":
            where = await io.ask("line (its number or its text): ")
            note = await io.ask("comment: ")
            try:
                added = d.comment(int(where) if where.isdigit() else where, note)
            except CommentError as e:
                io.line(str(e)[:1].upper() + str(e)[1:], "yellow")
                continue
            io.line(f"comment added on line {added.line}: {added.quote}", "green")
        else:
            d.reject(await io.ask("feedback (optional): "), by="user")


def revision_lines(d: PlanDecision) -> list[str]:
    """A revision's comments on the plan before it, each with whether it changed that line."""
    out = []
    for c, hit in d.previous_comments():
        out.append(f"  your comment on line {c.line} ({'changed' if hit else 'not changed'} by "
                   f"this revision): {c.note}")
    return ["Your comments on the previous plan:", *out] if out else []


KIND = Kind[PlanDecision](
    name="plan", color=BORDER["plan"], matches=lambda d: isinstance(d, PlanDecision), card=PlanCard,
    static_html=static_html, markdown=markdown, show_text=show_text, ask_text=ask_text)
