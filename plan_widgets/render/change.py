"""What an edit tool would change, described once for every form of its card (issue 43).

Write, Edit and MultiEdit are the change from the file as the gate read it when the card
opened (:class:`~plan_widgets.agent.ondisk.OnDisk`) to the file after the call; NotebookEdit
is one cell: which notebook, which cell (id and position), the kind of edit, the cell type,
its old source and its new. Each becomes a :class:`Change` (a path, a line saying what
happens, a one-line warning when the CLI will refuse it or the change cannot be shown, and the
two texts to diff), drawn as HTML by :func:`change_html` and as lines by :func:`change_lines`.

The CLI's own rules, as the card foretells them: an Edit whose ``old_string`` is not in the
file, or is in it more than once without ``replace_all``, is refused; a MultiEdit applies its
edits in order and is refused whole if one of them fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..agent.ondisk import MAX_READ, Cell, OnDisk
from .filediff import file_diff_html, file_diff_text, hunks, lines_of, stats
from .markdown import SMALL_STYLE, escape
from .paths import home_short


@dataclass(frozen=True)
class Change:
    """One edit tool call's change, ready to draw."""

    path: str
    what: str
    """One line: what happens (``Write over an existing file: +1 −1 lines``)."""
    note: str = ""
    """One line the person must not miss (the CLI will refuse it; the file is not shown)."""
    old: str = ""
    new: str = ""
    diff: bool = True
    """Whether ``old`` → ``new`` is shown (False: nothing to show but the lines above)."""
    numbered: bool = True
    """Whether ``old`` is the file (its diff has line numbers), not the call's own strings."""


def _lines_n(n: int) -> str:
    return f"{n:,} line" + ("" if n == 1 else "s")


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} KB" if n >= 1e3 else f"{n} bytes"


def _counted(old: str, new: str) -> str:
    add, rem = stats(hunks(old, new))
    return f"+{add} −{rem} lines" if add or rem else "no change to the file's text"


def _not_shown(before: OnDisk | None) -> str:
    """Why the file as it is now is not shown ("" when it is)."""
    if before is None:
        return "The file on disk was not read: the change against it is not shown."
    if before.state == "binary":
        return f"The file on disk is binary ({_size(before.size)}): its change is not shown."
    if before.state == "large":
        return f"The file on disk is large ({_size(before.size)}): its change is not shown."
    if before.state == "unreadable":
        return f"The file on disk could not be read ({before.why}): its change is not shown."
    return ""


def write_change(tool_input: dict[str, Any], before: OnDisk | None) -> Change:
    path = str(tool_input.get("file_path") or "")
    content = str(tool_input.get("content") or "")
    n = len(lines_of(content))
    if len(content) > MAX_READ:
        return Change(path, f"Write {_lines_n(n)} ({_size(len(content))})",
                      "The new content is large: it is not shown.", diff=False)
    if before is not None and before.state == "missing":
        return Change(path, f"New file: {_lines_n(n)}", old="", new=content)
    if before is None or before.state != "text":
        return Change(path, f"Write {_lines_n(n)}", _not_shown(before), "", content)
    return Change(path, f"Write over an existing file: {_counted(before.text, content)}",
                  old=before.text, new=content)


def _apply(text: str, edit: dict[str, Any]) -> tuple[str, str]:
    """``text`` after one edit, or why the CLI will refuse it (then ``text`` unchanged)."""
    old_s, new_s = str(edit.get("old_string", "")), str(edit.get("new_string", ""))
    found = text.count(old_s) if old_s else 0
    if not old_s:
        return text, ("" if not text else "old_string is empty but the file is not")
    if found == 0:
        return text, "old_string is no longer in the file"
    if found > 1 and not edit.get("replace_all"):
        return text, f"old_string is in the file {found} times (and replace_all is off)"
    return text.replace(old_s, new_s, -1 if edit.get("replace_all") else 1), ""


def _asked(edits: list[dict[str, Any]]) -> tuple[str, str]:
    """The edits' own strings, old and new (when the file cannot be diffed)."""
    return ("\n".join(str(e.get("old_string", "")) for e in edits),
            "\n".join(str(e.get("new_string", "")) for e in edits))


def edit_change(tool: str, tool_input: dict[str, Any], before: OnDisk | None) -> Change:
    """An Edit or a MultiEdit, applied in order to the file as it is now."""
    path = str(tool_input.get("file_path") or "")
    raw = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    edits = [e for e in raw if isinstance(e, dict)] if isinstance(raw, list) else []
    everywhere = " (every occurrence)" if any(e.get("replace_all") for e in edits) else ""
    if before is not None and before.state == "missing":
        text = ""
        if any(str(e.get("old_string", "")) for e in edits[:1]):
            old, new = _asked(edits)
            return Change(path, tool, "The file does not exist: the CLI will refuse this edit.",
                          old, new, numbered=False)
    elif before is None or before.state != "text":
        old, new = _asked(edits)
        return Change(path, f"{tool} (as asked)", _not_shown(before), old, new, numbered=False)
    else:
        text = before.text
    new = text
    for i, e in enumerate(edits, 1):
        new, why = _apply(new, e)
        if why:
            which = f"Edit {i} of {len(edits)}: its" if len(edits) > 1 else "The"
            old_s, new_s = _asked([e])
            return Change(path, f"{tool} (as asked)",
                          f"{which} {why}: the CLI will refuse this {tool}.", old_s, new_s,
                          numbered=False)
    if not text:
        return Change(path, f"New file: {_lines_n(len(lines_of(new)))}", old="", new=new)
    return Change(path, f"{tool}{everywhere}: {_counted(text, new)}", old=text, new=new)


# -- NotebookEdit ----------------------------------------------------------------------------

def find_cell(cells: tuple[Cell, ...], cell_id: str) -> int | None:
    """The cell's index: by its id, or ``cell-N`` (the CLI's name for a cell without one)."""
    for i, c in enumerate(cells):
        if c.id == cell_id:
            return i
    m = re.fullmatch(r"cell-(\d+)", cell_id)
    return int(m.group(1)) if m and int(m.group(1)) < len(cells) else None


def _cell_what(mode: str, cid: str, i: int | None, cells: tuple[Cell, ...], kind: str) -> str:
    n = len(cells)
    if mode == "insert":
        where = f"after cell {cid}" if cid else "at the top"
        pos = (i + 2) if i is not None else 1
        return f"Insert a new {kind} cell {where} (it becomes cell {pos} of {n + 1})"
    assert i is not None
    was = cells[i].cell_type
    kinds = was if (mode == "delete" or kind == was) else f"{was} → {kind}"
    verb = "Delete" if mode == "delete" else "Replace"
    return f"{verb} cell {cid} (cell {i + 1} of {n}, {kinds})"


def cell_change(tool_input: dict[str, Any], before: OnDisk | None) -> Change:
    """A NotebookEdit: the cell as a cell (replace: a diff; insert: all new; delete: all
    gone)."""
    path = str(tool_input.get("notebook_path") or "")
    mode = str(tool_input.get("edit_mode") or "replace")
    cid = str(tool_input.get("cell_id") or "")
    new = str(tool_input.get("new_source") or "")
    cells = before.cells if before is not None else None
    if cells is None:
        kind = str(tool_input.get("cell_type") or "code")
        what = f"{mode.capitalize()} {'cell ' + cid if cid else 'a cell'} ({kind})"
        return Change(path, what, _not_shown(before) or "The notebook could not be read as "
                      "one: its cells are not shown.", "", "" if mode == "delete" else new)
    i = find_cell(cells, cid) if cid else None
    if cid and i is None:
        return Change(path, f"{mode.capitalize()} cell {cid}",
                      f"No cell {cid} in this notebook: the CLI will refuse this edit.", "", new)
    if mode != "insert" and i is None:
        return Change(path, mode.capitalize(), "No cell named: the CLI will refuse this edit.",
                      "", new)
    kind = str(tool_input.get("cell_type") or (cells[i].cell_type if i is not None else "code"))
    what = _cell_what(mode, cid, i, cells, kind)
    old = cells[i].source if (i is not None and mode != "insert") else ""
    return Change(path, what, old=old, new="" if mode == "delete" else new)


def change_of(tool: str, tool_input: dict[str, Any], before: OnDisk | None) -> Change | None:
    """The change of an edit tool's call (None for any other tool)."""
    if tool == "Write":
        return write_change(tool_input, before)
    if tool in ("Edit", "MultiEdit"):
        return edit_change(tool, tool_input, before)
    if tool == "NotebookEdit":
        return cell_change(tool_input, before)
    return None


# -- drawn -----------------------------------------------------------------------------------

def change_html(c: Change) -> str:
    """The change as safe HTML: the path, what happens, the warning, the diff."""
    parts = [f"<div><code>{escape(home_short(c.path))}</code></div>",  # ~ as elsewhere
             f'<div class="pw-change-what" style="{SMALL_STYLE}">{escape(c.what)}</div>']
    if c.note:
        parts.append(f'<div class="pw-change-note" style="{SMALL_STYLE};font-weight:600">'
                     f"{escape(c.note)}</div>")
    if c.diff:
        parts.append(file_diff_html(c.old, c.new, c.numbered))
    return "".join(parts)


def change_lines(c: Change, limit: int = 200) -> list[tuple[str, str | None]]:
    """The change as (line, style) pairs for a terminal (rich style names)."""
    out: list[tuple[str, str | None]] = [(f"  {c.path}", None), (f"  {c.what}", "dim")]
    if c.note:
        out.append((f"  {c.note}", "bold"))
    if c.diff:
        style = {"-": "red", "+": "green", "@": "dim", "…": "dim"}
        rows = file_diff_text(c.old, c.new, limit, c.numbered)
        out += [(f"  {ln}", style.get(sign)) for sign, ln in rows]
    return out


def change_markdown(tool: str, c: Change, limit: int = 80) -> list[str]:
    """The change as Markdown lines (the card's fallback): what, the warning, a diff block."""
    lines = [f"**Permission asked**: `{tool}` {home_short(c.path)}", "", c.what]
    if c.note:
        lines += ["", f"**{c.note}**"]
    if c.diff:
        rows = file_diff_text(c.old, c.new, limit, c.numbered)
        body = "\n".join(ln for _sign, ln in rows) or "(no change)"
        fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", body)), default=0) + 1)
        lines += ["", f"{fence}diff", body, fence]
    return lines
