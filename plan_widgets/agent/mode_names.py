"""The permission modes as the CLI's own UI names them, and where an approved plan can lead
(issue 22, point 3).

Read from the CLI this package drives (2.1.332, its bundled JavaScript): its mode table titles
``default`` "Manual" (since 2.1.200), ``plan`` "Plan", ``acceptEdits`` "Accept edits",
``bypassPermissions`` "Bypass Permissions", ``dontAsk`` "Don't Ask", ``auto`` "Auto". Its plan
dialog offers, in this order: "Yes, and use auto mode" (when auto is available) or "Yes, and
switch to Bypass Permissions" or "Yes, auto-accept edits", then "Yes, manually approve edits",
then "No, keep planning". It names one of the first three at a time; here every mode the CLI
can go to is offered, in that order, with ``dontAsk`` (which the dialog never offers) last, in
the words the CLI uses for a switch ("Yes, and switch to ..."); Bypass Permissions only in a
session that rests in it (below). The one the user chose last comes first.

Measured offline (CLI 2.1.332, the scripted model, as root): ``setMode`` to ``auto`` on
approval, and ``set_permission_mode("auto")``, are confirmed by the CLI (``permissionMode:
auto``), not refused; in auto mode a Write and a Bash command then ran without reaching
``can_use_tool`` and without any extra model request (no safety-check call reached the model).
The refusal "Auto mode is unavailable: its safety check does not run for this session, so
<tool> was not run" was seen for ``Agent`` in plan mode, in a tool result (docs/cli.md#plan-mode).
``setMode`` to ``bypassPermissions`` on approval, in a CLI that did not start in it (as root
without ``IS_SANDBOX=1``), is not refused either: the CLI lands in ``default``, silently
(:meth:`~plan_widgets.agent.modes.Modes.saw_mode` says so, and the marker shows it).
"""

from __future__ import annotations

MODE_TITLES = {
    "default": "Manual",
    "plan": "Plan",
    "acceptEdits": "Accept edits",
    "bypassPermissions": "Bypass Permissions",
    "dontAsk": "Don't Ask",
    "auto": "Auto",
}
"""The CLI's UI names of the SDK's mode names."""

APPROVAL_TARGETS = (
    ("auto", "Yes, and use auto mode"),
    ("bypassPermissions", "Yes, and switch to Bypass Permissions"),
    ("acceptEdits", "Yes, auto-accept edits"),
    ("default", "Yes, manually approve edits"),
    ("dontAsk", "Yes, and switch to Don't Ask"),
)
"""Where an approved plan can lead, in the CLI's order and words."""


def only_label(label: str, resting: str) -> str:
    """A target's label, for this plan only (issue 43, point 5: back to ``resting`` after)."""
    return f"{label}, for this plan only (then {mode_title(resting)})"


def mode_title(mode: str | None) -> str:
    """``mode`` as the CLI's UI names it (an unknown mode as it is)."""
    if mode is None:
        return "?"
    return MODE_TITLES.get(mode, mode)


def mode_tooltip(mode: str | None) -> str:
    """The SDK's name of ``mode``, for a tooltip beside its UI name."""
    return f"{mode_title(mode)}: permission mode {mode!r} in the SDK" if mode else ""


def approval_targets(last: str | None = None,
                     resting: str | None = None) -> list[tuple[str, str]]:
    """``(mode, label)`` for each target, in the CLI's order, the one chosen last first.

    Bypass Permissions only when the session rests in it (``resting``): the CLI goes there
    only if it started in it (measured: elsewhere it lands in ``default``), and a choice
    that cannot happen is not offered (issue 35)."""
    targets = [t for t in APPROVAL_TARGETS
               if t[0] != "bypassPermissions" or resting == "bypassPermissions"]
    chosen = [t for t in targets if t[0] == last]
    return chosen + [t for t in targets if t[0] != last]
