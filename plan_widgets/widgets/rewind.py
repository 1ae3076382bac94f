"""**Rewind files**: put back the files a turn changed. It lists the files that will change
first (the CLI's own dry run), then asks to confirm; nothing changes before the confirmation.

A finished turn is static (no widgets): it names the files it changed and ``%claude rewind
N``. The live button is in the session's control bar, for its latest turn that changed files
(:func:`bar_rewind`), and ``%claude rewind [TURN]`` shows one for any turn. Until it is
clicked it is one button; the list and the confirmation are made when asked for, and go when
done. File paths come from the CLI and the model's tool calls: escaped here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from ..agent.gate import is_plan_file
from ..agent.rewind import NOT_TRACKED, RewindPlan
from ..agent.tasks import spawn
from ..render.look import ERROR, MUTED, SUCCESS
from ..render.markdown import CARD_TITLE_STYLE, SMALL_STYLE, escape, html_block, summarize
from ..render.paths import home_short
from .shared import close_tree, look, on_click, shared

log = logging.getLogger("plan_widgets")

_MAX_FILES = 40


def _short(path: str, cwd: str | None) -> str:
    return path[len(cwd) + 1:] if cwd and path.startswith(cwd.rstrip("/") + "/") else path


def _path_html(path: str) -> str:
    """A path as escaped HTML that a narrow card breaks after a "/" (a ``<wbr>`` after each),
    never inside a name (issue 26: at 900 px, JupyterLab's file browser open, the card is some
    470 px wide and the plan file's name broke after one of its hyphens)."""
    # each name one inline block: moved to the next line whole, and broken only if it alone
    # is wider than the card
    return "/<wbr>".join(f'<span style="{_NAME_STYLE}">{escape(part)}</span>'
                         for part in path.split("/"))


_NAME_STYLE = "display:inline-block;max-width:100%;overflow-wrap:anywhere"


def files_changed_html(turn: int, files: list[str], cwd: str | None) -> tuple[str, str]:
    """A turn's "files changed" line: (Markdown text, safe HTML) with the command that puts
    them back."""
    names = [_short(f, cwd) for f in files]
    more = " …" if len(names) > 10 else ""
    text = (f"*Files changed: {', '.join(f'`{summarize(n, 80)}`' for n in names[:10])}{more}. "
            f"To put them back: `%claude rewind {turn}`*")
    shown = ", ".join(f"<code>{escape(summarize(n, 80))}</code>" for n in names[:10])
    html = (f'<div class="pw-files"><small style="color:{MUTED}">Files changed: {shown}{more}. '
            f"To put them back: <code>%claude rewind {turn}</code></small></div>")
    return text, html_block(html, "pw-html")


def _files_html(plan: RewindPlan, cwd: str | None, env: Any = None) -> str:
    shown = []
    for f in plan.files[:_MAX_FILES]:
        plan_file = is_plan_file(f, env)
        name = home_short(f, env) if plan_file else _short(f, cwd)
        shown.append(f'<li><code title="{escape(f)}">{_path_html(name)}</code>'
                     f"{' (the plan file)' if plan_file else ''}</li>")
    if len(plan.files) > _MAX_FILES:
        shown.append(f"<li>… and {len(plan.files) - _MAX_FILES} more</li>")
    how = ("as the CLI's dry run lists them" if plan.exact
           else "the files the Write/Edit calls of these turns touched")
    return (f'<ul style="margin:0.2em 0;padding-left:1.4em;line-height:1.45">{"".join(shown)}'
            f'</ul><div style="{SMALL_STYLE}">({escape(how)})</div>')


class RewindPanel:
    """One turn's Rewind files: a button; asked, the files (nothing changes yet), then
    **Rewind these files** or **Cancel**. ``place(widgets)`` shows the widgets beside the
    button (the control bar's, or a display of its own)."""

    def __init__(self, session: Any, turn: int, place: Callable[[list[w.Widget]], None],
                 files: int | None = None) -> None:
        self.session = session
        self.turn = turn
        self.plan: RewindPlan | None = None
        self._place = place
        what = f"{files} file{'s' if files != 1 else ''}" if files is not None else "the files"
        self.button = w.Button(
            description=f"Rewind files (turn {turn})", icon="undo", **look("auto", "button"),
            tooltip=f"Put back {what} as before turn {turn} (lists them first)")
        on_click(self.button, lambda _b: self.ask())
        self.list: w.HTML | None = None
        self.card: w.Box | None = None  # the list and the buttons, framed like a card
        self.confirm_button: w.Button | None = None
        self.cancel_button: w.Button | None = None

    def _say(self, html: str, *buttons: w.Widget) -> None:
        if self.list is None:
            self.list = w.HTML(**look("full", "html"), _dom_classes=("pw-rewind",))
            self.card = w.Box(layout=shared("card-rewind"),
                              _dom_classes=("pw-card", "pw-card-rewind"))
        assert self.card is not None
        self.list.value = html_block(html, "pw-html")
        self.card.children = (self.list, *buttons)
        self._place([self.card])

    def clear(self) -> None:
        """Take the list or the last message away (the button stays): a new turn, or Cancel."""
        if self.list is not None:
            self._place([])

    def ask(self) -> None:
        """List the files that would change (nothing changes yet), then offer to confirm."""
        self.button.disabled = True
        self._say(f'<div style="{SMALL_STYLE}">Looking up the files…</div>')
        spawn(self._preview())

    async def _preview(self) -> None:
        try:
            self.plan = plan = await self.session.rewind(self.turn, dry_run=True)
        except Exception as e:  # one line: the CLI's reason, or why not
            log.debug("rewind preview of turn %s failed", self.turn, exc_info=True)
            self._failed(e)
            return
        if not plan.files:
            self.button.disabled = False
            self._say(f'<div style="{SMALL_STYLE}">Nothing to rewind: the files are as they '
                      f"were before turn {self.turn}.</div>")
            return
        later = (f" This also undoes the Write/Edit changes of the turns after {self.turn}."
                 if self.turn < getattr(self.session.state, "turns", self.turn) else "")
        if self.confirm_button is None:
            self.confirm_button = w.Button(description="Rewind these files", icon="undo",
                                           button_style="danger", **look("auto", "button-danger"))
            on_click(self.confirm_button, lambda _b: self.confirm())
            self.cancel_button = w.Button(description="Cancel", **look("auto", "button"))
            on_click(self.cancel_button, lambda _b: self.cancel())
        self.confirm_button.disabled = False
        assert self.cancel_button is not None
        self.cancel_button.disabled = False
        # (its own line height: a widget's HTML keeps the 28 px of a widget's line)
        self._say(f'<div class="pw-card-title" style="{CARD_TITLE_STYLE};line-height:1.3">Rewind '
                  f"{escape(plan.summary)} to before turn {self.turn}?</div>"
                  f"{_files_html(plan, self.session.options.cwd, self.session.cli_env)}"
                  f'<div style="{SMALL_STYLE}">{escape(NOT_TRACKED + later)}</div>',
                  self.confirm_button, self.cancel_button)

    def cancel(self) -> None:
        """Nothing changes: the list goes, the button stays (a "Not rewound." left in the bar
        stayed there into later turns; issue 26)."""
        self.button.disabled = False
        self.clear()

    def confirm(self) -> None:
        if self.confirm_button is not None and self.cancel_button is not None:
            self.confirm_button.disabled = self.cancel_button.disabled = True
        spawn(self._rewind())

    async def _rewind(self) -> None:
        try:
            done = await self.session.rewind(self.turn, by="user")
        except Exception as e:  # shown on the card, in one line
            log.debug("rewind of turn %s failed", self.turn, exc_info=True)
            self._failed(e)
            return
        self.button.disabled = False  # it can be done again (after more turns, say)
        self._say(f'<span style="color:{SUCCESS}"><b>Rewound {escape(done.summary)}</b> to before '
                  f"turn {self.turn} at {time.strftime('%H:%M:%S')}.</span>")

    def _failed(self, e: BaseException) -> None:
        self.button.disabled = False
        text = " ".join(str(e).split()) or type(e).__name__
        self._say(f'<span style="color:{ERROR}">Could not rewind: {escape(text[:300])}</span>')

    def widgets(self) -> list[w.Widget]:
        """Every widget made so far (to close them)."""
        return [x for x in (self.button, self.list, self.card, self.confirm_button,
                            self.cancel_button) if x is not None]

    def disable(self) -> None:
        """The session has ended: nothing here can act any more."""
        for b in (self.button, self.confirm_button, self.cancel_button):
            if b is not None:
                b.disabled = True


def bar_rewind(bar: Any) -> None:
    """Keep the control bar's Rewind files on the session's latest turn, if that turn changed
    files (one button in the bar; its list and confirmation join the bar while asked). A later
    turn that changed none takes the button away (``%claude rewind N`` still rewinds any
    turn), and with it whatever the panel last said; a session that ended disables it."""
    s = bar.session
    latest = getattr(getattr(s, "runner", None), "files_turn", None)
    if latest is not None and latest[0] != getattr(s.state, "turns", latest[0]):
        latest = None  # a later turn (running or done) changed no files
    old: RewindPanel | None = getattr(bar, "rewind", None)
    if getattr(s, "status", "") in ("dead", "closed"):
        if old is not None:
            old.disable()
        return
    if old is not None and latest is not None and old.turn == latest[0]:
        return
    base = [c for c in bar.children if old is None or c not in old.widgets()]
    if old is not None:
        close_tree(old.widgets())
        bar.rewind = None
    if latest is None:
        bar.children = tuple(base)
        return
    panel = RewindPanel(s, latest[0], lambda ws: _place(bar, panel, ws), files=len(latest[1]))
    bar.rewind = panel
    bar.children = (*base, panel.button)


def _place(bar: Any, panel: RewindPanel, widgets: list[w.Widget]) -> None:
    base = [c for c in bar.children if c not in panel.widgets()]
    bar.children = (*base, panel.button, *widgets)


def rewind_box(session: Any, turn: int, *, confirmed: bool = False) -> w.Widget:
    """A Rewind files of its own for ``turn`` (``%claude rewind``), already asked: it lists
    the files and waits for the confirmation (``confirmed``: it rewinds at once)."""
    box = w.HBox(layout=shared("bar"), _dom_classes=("pw-rewind-box",))
    panel = RewindPanel(session, turn, lambda ws: setattr(box, "children",
                                                          (panel.button, *ws)))
    box.children = (panel.button,)
    if confirmed:
        panel.button.disabled = True
        panel.confirm()
    else:
        panel.ask()
    return box
