"""**Rewind files**: put back the files a turn changed. It lists the files that will change
first (the CLI's own dry run), then asks to confirm; nothing changes before the confirmation.

Offered under each finished turn that changed files (:class:`RewindOffer`), and shown by
``%claude rewind [TURN]``. A finished turn is static (no widgets); its offer is the one widget
kept under it, and only the session's newest offer stays live: an older one becomes a static
line naming ``%claude rewind N``. File paths come from the CLI and the model's tool calls:
escaped here.
"""

from __future__ import annotations

import time
from typing import Any

import ipywidgets as w

from ..agent.gate import is_plan_file
from ..agent.rewind import NOT_TRACKED, RewindPlan
from ..agent.tasks import spawn
from ..render.markdown import escape, html_block, summarize
from .shared import close_tree, look, shared, widget_bundle

_MAX_FILES = 40
_OFFERS: dict[str, RewindOffer] = {}
"""The live offer of each session (by name): its newest turn that changed files."""


def _short(path: str, cwd: str | None) -> str:
    return path[len(cwd) + 1:] if cwd and path.startswith(cwd.rstrip("/") + "/") else path


def files_changed_html(turn: int, files: list[str], cwd: str | None) -> tuple[str, str]:
    """A turn's "files changed" line: (Markdown text, safe HTML) with the command that puts
    them back."""
    names = [_short(f, cwd) for f in files]
    text = (f"*Files changed: {', '.join(f'`{summarize(n, 80)}`' for n in names[:10])}"
            f"{' …' if len(names) > 10 else ''}. To put them back: `%claude rewind {turn}`*")
    shown = ", ".join(f"<code>{escape(summarize(n, 80))}</code>" for n in names[:10])
    html = (f'<div class="pw-files"><small style="color:#6b7280">Files changed: {shown}'
            f"{' …' if len(names) > 10 else ''}. To put them back: "
            f"<code>%claude rewind {turn}</code></small></div>")
    return text, html_block(html, "pw-html")


def _files_html(plan: RewindPlan, cwd: str | None, env: Any = None) -> str:
    shown = [f"<li><code>{escape(_short(f, cwd))}</code>"
             f"{' (the plan file)' if is_plan_file(f, env) else ''}</li>"
             for f in plan.files[:_MAX_FILES]]
    if len(plan.files) > _MAX_FILES:
        shown.append(f"<li>… and {len(plan.files) - _MAX_FILES} more</li>")
    how = ("as the CLI's dry run lists them" if plan.exact
           else "the files the Write/Edit calls of these turns touched")
    return f"<ul>{''.join(shown)}</ul><small>({escape(how)})</small>"


class RewindPanel(w.VBox):
    """A turn's Rewind files button, its file list, and the confirmation."""

    def __init__(self, session: Any, turn: int, files: list[str] | None = None) -> None:
        self.session = session
        self.turn = turn
        self.plan: RewindPlan | None = None
        n = len(files or [])
        self.rewind_button = w.Button(
            description="Rewind files", icon="undo", **look("auto", "button"),
            tooltip=f"Put back the files as they were before turn {turn} (lists them first)")
        self.confirm_button = w.Button(description="Rewind these files", button_style="danger",
                                       icon="undo", **look("auto", "button"))
        self.cancel_button = w.Button(description="Cancel", **look("auto", "button"))
        self.info = w.HTML(f"<small>Turn {turn} changed {n} file{'s' if n != 1 else ''}."
                           "</small>" if files is not None else "", **look("layout", "html"))
        self.list = w.HTML(**look("layout", "html"))
        self.row = w.HBox([self.rewind_button, self.info], layout=shared("bar"))
        self.rewind_button.on_click(lambda _b: self.ask())
        self.confirm_button.on_click(lambda _b: self.confirm())
        self.cancel_button.on_click(lambda _b: self.cancel())
        super().__init__([self.row, self.list], layout=shared("layout"),
                         _dom_classes=("pw-rewind",))

    def _say(self, html: str) -> None:
        self.list.value = html

    def ask(self) -> None:
        """List the files that would change (nothing changes yet), then offer to confirm."""
        self.rewind_button.disabled = True
        self._say("<small>Looking up the files…</small>")
        spawn(self._preview())

    async def _preview(self) -> None:
        try:
            self.plan = plan = await self.session.rewinder.preview(self.turn)
        except Exception as e:  # one line: the CLI's reason, or why not
            self._failed(e)
            return
        if not plan.files:
            self._say(f"<small>Nothing to rewind: the files are as they were before turn "
                      f"{self.turn}.</small>")
            self.rewind_button.disabled = False
            return
        later = (f" This also undoes the Write/Edit changes of turns after {self.turn}."
                 if self.turn < getattr(self.session.state, "turns", self.turn) else "")
        self._say(f"<div><b>Rewind {escape(plan.summary)} to before turn {self.turn}?</b>"
                  f"{_files_html(plan, self.session.options.cwd, self.session.cli_env)}"
                  f"<small>{escape(NOT_TRACKED + later)}</small></div>")
        self.row.children = (self.rewind_button, self.confirm_button, self.cancel_button,
                             self.info)

    def cancel(self) -> None:
        self.row.children = (self.rewind_button, self.info)
        self.rewind_button.disabled = False
        self._say("<small>Not rewound.</small>")

    def confirm(self) -> None:
        self.confirm_button.disabled = self.cancel_button.disabled = True
        spawn(self._rewind())

    async def _rewind(self) -> None:
        try:
            done = await self.session.rewinder.rewind(self.turn, by="user")
        except Exception as e:
            self._failed(e)
            return
        when = time.strftime("%H:%M:%S")
        self.row.children = (self.rewind_button, self.info)
        self.rewind_button.disabled = False  # a rewind can be done again (or after more turns)
        self._say(f'<span style="color:#047857"><b>Rewound {escape(done.summary)}</b> to before '
                  f"turn {self.turn} at {when}.</span>")

    def _failed(self, e: BaseException) -> None:
        self.row.children = (self.rewind_button, self.info)
        self.rewind_button.disabled = False
        text = " ".join(str(e).split()) or type(e).__name__
        self._say(f'<span style="color:#b91c1c">Could not rewind: {escape(text[:300])}</span>')


class RewindOffer:
    """Rewind files under a finished (static) turn: the turn's static HTML and a
    :class:`RewindPanel` in one widget, while it is its session's newest offer."""

    def __init__(self, view: Any, turn: int, files: list[str]) -> None:
        self.view = view
        self.panel = RewindPanel(view.session, turn, files)
        self.out = w.Output(layout=shared("layout"))
        self.box = w.VBox([self.out, self.panel], layout=shared("layout"))
        name = view.session.name
        old = _OFFERS.get(name)
        _OFFERS[name] = self
        if old is not None:
            old.retire()

    def bundle(self, static: dict[str, Any]) -> dict[str, Any]:
        """The turn's display: the static turn above the panel (and the static turn alone
        for frontends without widgets)."""
        self.out.outputs = ({"output_type": "display_data", "data": static, "metadata": {}},)
        return {**widget_bundle(self.box), **static}

    def retire(self) -> None:
        """A newer offer took over: the turn keeps its static view (with the command line),
        and the widgets close."""
        if self.view.rewind_offer is self:
            self.view.rewind_offer = None
        close_tree([self.box])
        self.view._update_static()
