"""The look of every card, line and marker: colours, the shared inline styles, the diff's
marks. A theme is an edit of this module; nothing else in the package names a colour.

Where the colours come from (measured, issue 41):

- **The hue** of each meaning (an error, a warning, a success, the brand, a diff's added and
  removed lines, code tokens) is JupyterLab's CSS variable for it (``--jp-error-color1``,
  ``--jp-warn-color1``, ``--jp-success-color1``, ``--jp-brand-color1``,
  ``--jp-mirror-editor-*-color``), each with a fallback for a page without it.
- **Its lightness** comes from the text colour around it: a coloured text is
  ``color-mix(in srgb, <hue> 60%, currentColor)``, so it is a shade of the page's own text
  colour, dark on a light page and light on a dark one. JupyterLab's hues are not text
  colours in every theme: in JupyterLab Light ``--jp-warn-color1`` (``#f57c00``) is 2.70:1
  on white and ``--jp-success-color1`` (``#388e3c``) 4.12:1, and a fixed colour good on
  white fails on Dark's ``#111`` (``#b45309``, "waiting for you", measured 3.76:1). Now the
  lowest text of the cards, the bar and a turn measures 5.02:1 (the Keep planning button) in
  JupyterLab Light, Dark and Dark High Contrast, live and once the turn has ended
  (tests/test_browser_contrast.py). A background is a translucent wash of its hue
  (``color-mix(... transparent)``) over whatever is under it, and its text keeps the page's
  colour. No text is drawn on an opaque colour of ours.
- **Why not the font variables** (``--jp-ui-font-color*``, ``--jp-content-font-color*``) for
  text: VS Code defines them with JupyterLab *Light*'s values whatever its theme (read from
  microsoft/vscode-jupyter at 3d24702e:
  ``src/webviews/webview-side/ipywidgets/kernel/manager.ts:4`` imports ipywidgets'
  ``@jupyter-widgets/controls/css/labvariables.css``, which sets them on ``:root`` of the
  webview every output of a notebook shares; ``src/webviews/webview-side/ipywidgets/
  renderer/styles.css:1-3`` paints each widget output white, ``background: white
  !important``, and ``renderer/index.ts:208`` gives every widget output that class). A live
  card there sits on white with the light palette and reads as in JupyterLab Light; but a
  finished turn's static record (Markdown output, VS Code's default theme dark) meets those
  same light variables on a dark page, where ``--jp-content-font-color1`` (black) would be
  unreadable. ``currentColor`` is the frontend's own text colour everywhere.
- **The saved record** (nbconvert, GitHub, VS Code, JupyterLab opening an untrusted notebook)
  uses the same strings. A frontend that drops ``color-mix()`` or ``var()`` (JupyterLab's
  sanitizer keeps only hex, ``rgb()``, ``rgba()`` and named colours in an untrusted output;
  GitHub drops every style) shows the page's own text colour, readable by construction; the
  diff's washes also come as ``rgba()`` first, which such a sanitizer keeps.
"""

from __future__ import annotations

_MIX = 60
"""Percent of the hue in a coloured text (the rest is the page's text colour): 60 keeps the
hue recognizable and every text at AA with a margin in the three themes (see above)."""


def ink(hue: str, fallback: str = "") -> str:
    """A text colour of hue ``hue`` (a CSS variable's name, ``--jp-…``, or a colour) that
    stays readable on the page's background: the hue mixed into the surrounding text colour."""
    colour = f"var({hue}, {fallback})" if hue.startswith("--") else hue
    return f"color-mix(in srgb, {colour} {_MIX}%, currentColor)"


def wash(hue: str, fallback_rgb: tuple[int, int, int], alpha: float) -> str:
    """``background`` declarations of a translucent wash of ``hue`` (its text keeps the page's
    colour): an ``rgba()`` first, kept by sanitizers and older browsers, then the theme's."""
    r, g, b = fallback_rgb
    return (f"background:rgba({r},{g},{b},{alpha:g});"
            f"background:color-mix(in srgb, var({hue}, rgb({r},{g},{b})) {alpha * 100:g}%, "
            "transparent)")


# -- what a colour means ---------------------------------------------------------------------
ERROR = ink("--jp-error-color1", "#d32f2f")
"""Denied, expired, failed, ended."""
WARN = ink("--jp-warn-color1", "#f57c00")
"""Waiting for you, not decided yet, a mode asked for and not yet confirmed."""
SUCCESS = ink("--jp-success-color1", "#388e3c")
"""Approved, allowed, done."""
INFO = ink("--jp-brand-color1", "#1976d2")
"""Working, in progress."""
PLAN = ink("#7c3aed")
"""Plan mode and the plan card (JupyterLab has no violet of its own)."""
MUTED = "color-mix(in srgb, currentColor 70%, transparent)"
"""Secondary text: the page's text colour at 70% (a finished turn's footer, 5.92:1 in
JupyterLab Light)."""
TEXT = "currentColor"
"""The page's text colour (a marker with no meaning of its own: model, context)."""

# -- buttons ----------------------------------------------------------------------------------
BUTTON = {"success": "#2e7d32", "info": "#00796b", "warning": "#b45309", "danger": "#c62828",
          "primary": "#1565c0"}
"""A coloured button's background by its ``button_style``, under white text (5.0:1 to 5.8:1),
the same in every theme. ipywidgets draws these buttons in the theme's hue under
``--jp-ui-inverse-font-color1``, under AA in JupyterLab Light: white on ``#f57c00`` (warning)
2.70:1, on ``#0097a7`` (info) 3.51:1, on ``#388e3c`` (success) 4.12:1 (measured). A button's
colour is a ButtonStyle trait, which takes a colour or ``var(--x, colour)`` but no
``color-mix()`` (ipywidgets' ``Color`` trait), so the darkened hue is written out; each is 3:1
or more on JupyterLab Dark's ``#111`` too, so the button stands out there."""
BUTTON_TEXT = "#ffffff"

# -- borders (not text) ------------------------------------------------------------------------
BORDER = {
    "plan": "#8b5cf6",
    "tool": "var(--jp-warn-color1, #f57c00)",
    "question": "var(--jp-brand-color1, #1976d2)",
    "rewind": "var(--jp-error-color1, #d32f2f)",
}
"""Each card kind's border colour (a kind without one here borrows the kind it narrows)."""
RULE = "color-mix(in srgb, currentColor 30%, transparent)"
"""A thin divider (a dashed line between a cell and what arrived after it)."""
AGENT_RULE = "color-mix(in srgb, #8b5cf6 55%, transparent)"
"""The line left of a subagent's nested work."""

# -- a diff (render/diff.py; permission cards' diffs use the same names) ----------------------
DIFF_ADD_LINE = wash("--jp-success-color1", (56, 142, 60), 0.2)
"""An added line's background (its text keeps the page's colour)."""
DIFF_DEL_LINE = wash("--jp-error-color1", (211, 47, 47), 0.2)
"""A removed line's background."""
DIFF_INS = wash("--jp-success-color1", (56, 142, 60), 0.28) + ";text-decoration:none"
"""An inserted word inside a changed line."""
DIFF_DEL = wash("--jp-error-color1", (211, 47, 47), 0.28) + ";text-decoration:line-through"
"""A deleted word inside a changed line."""
DIFF_ADD_TEXT = f"color:{SUCCESS}"
"""An added line shown by its colour alone (a ``+`` line of a tool's input)."""
DIFF_DEL_TEXT = f"color:{ERROR}"
"""A removed line shown by its colour alone."""

# -- a plan's lines and comments (widgets/kinds/plan_lines.py, plan_comments.py) --------------
LINE_HOVER = wash("--jp-brand-color1", (25, 118, 210), 0.1)
LINE_PICKED = wash("--jp-brand-color1", (25, 118, 210), 0.2)
LINE_MARK = "var(--jp-brand-color1, #1976d2)"
"""The left bar of a plan line picked for a comment, and of a comment."""
COMMENT = f"border-left:3px solid {LINE_MARK};{LINE_HOVER}"
HINT = ink("--jp-brand-color1", "#1976d2")
"""A hint on how to use a card (click a line to comment on it)."""

# -- code (render/code.py): Pygments' tokens in JupyterLab's editor colours -----------------------
CODE_TOKENS = {
    "Keyword": ink("--jp-mirror-editor-keyword-color", "#008000") + ";font-weight:600",
    "Name.Builtin": ink("--jp-mirror-editor-builtin-color", "#008000"),
    "Name.Function": ink("--jp-mirror-editor-def-color", "#0000ff"),
    "Name.Class": ink("--jp-mirror-editor-def-color", "#0000ff"),
    "Name.Decorator": ink("--jp-mirror-editor-meta-color", "#aa22ff"),
    "String": ink("--jp-mirror-editor-string-color", "#ba2121"),
    "Number": ink("--jp-mirror-editor-number-color", "#008800"),
    "Comment": ink("--jp-mirror-editor-comment-color", "#408080") + ";font-style:italic",
}
"""A code token's colour (and weight, slant), by its Pygments type or the nearest type above
it (``Keyword.Namespace`` is a ``Keyword``); plain names, operators, punctuation and text keep
the page's colour (JupyterLab's operator and punctuation colours, mixed, were 3.45:1 and 4.24:1
on VS Code's dark page, where its variables are missing)."""

# -- shared inline styles ---------------------------------------------------------------------
# Inline styles, not a <style> element: they need no selector that could reach the rest of the
# page, and JupyterLab's sanitizer keeps them (font-size, margin) when a saved notebook is opened
# again, where it removes <style> elements.
CARD_TITLE_STYLE = "font-size:1.25em;font-weight:600;margin:0 0 0.4em 0"
"""A card's title (a plan's "# Plan" would otherwise be twice its size: CARD_HEADING_STYLE)."""
WRAP_STYLE = "overflow-wrap:break-word"
"""Long words (paths, commands, URLs) break inside a card, a tool line or a static turn instead
of widening it past a narrow notebook (JupyterLab with its file browser open at 800 px leaves a
card some 360 px). The sanitizer keeps overflow-wrap: normal|break-word (not "anywhere")."""
SMALL_STYLE = "font-size:0.85em;line-height:1.45;margin:0.25em 0"
"""A small line on a card (the plan file, what Always allow applies): its own font size and line
height (a <small> keeps the line height of the text around it, so its lines looked
double-spaced when they wrapped)."""
_HEADING_MARGIN = "font-weight:600;margin:0.7em 0 0.35em 0"
CARD_HEADING_STYLE = {
    "h1": f"font-size:1.15em;{_HEADING_MARGIN}",
    "h2": f"font-size:1.08em;{_HEADING_MARGIN}",
    "h3": f"font-size:1.02em;{_HEADING_MARGIN}",
    "h4": f"font-size:1em;{_HEADING_MARGIN}",
}
"""Headings inside a card, bold and scaled down to the text's size (a plain heading no longer
looked like one)."""
CARD_BOX = {"display": "flex", "flex_flow": "row wrap", "align_items": "center",
            "padding": "6px 10px", "margin": "6px 0"}
"""A live card's box (a Layout's traits): one flex box whose lines wrap."""
CARD_FRAME = "padding:6px 10px;margin:6px 0"
"""A static card's box, the same as the live one's."""
BADGE_STYLE = ("border:1px solid {color};border-radius:4px;padding:1px 6px;color:{color};"
               "font-size:12px;white-space:nowrap")
"""A marker of the control bar (``{color}``: its colour)."""


def colored(color: str, safe_html: str, tag: str = "span") -> str:
    """``safe_html`` in ``tag`` of colour ``color`` (one of this module's)."""
    return f'<{tag} style="color:{color}">{safe_html}</{tag}>'

OPTION_STYLE = ("display:inline-block;max-width:calc(100% - 2em);white-space:normal;"
                "overflow-wrap:anywhere;vertical-align:top;line-height:1.4;padding:5px 0")
"""A checkbox's description that wraps inside a narrow card (a question's option, a tool card's
suggested update): ipywidgets' label does not wrap, and a long one stuck out of the card."""
