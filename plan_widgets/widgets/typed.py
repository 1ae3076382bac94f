"""A box the person types into that a button then reads (feedback, an edit, a comment, a reason):
its text reaches the kernel ahead of any click, whatever the load (issue 42).

Why not ipywidgets' ``Textarea``: its page sends a model's next state update only after the
kernel has answered the one before (``WidgetModel._pending_msgs``: one ``update`` in flight per
model, later ones wait in ``_msg_buffer``), while a click on another widget is a ``custom``
message that goes out at once. With ``continuous_update=False`` the text went out on each blur:
measured (tests/test_browser_typed.py, the kernel held by a long call), a plan retyped, left
once, typed on and approved was approved with the text of the first blur; the second blur's
update waited in the page behind the first, and the click overtook it.

Here the page sends the box's text as a ``custom`` message (never held back) at every change of
the text, and keeps its own model's value current (a redraw shows what the person typed). The
kernel sets ``value`` from it as ipywidgets sets a frontend's ``update`` (``Widget.set_state``,
on the thread the message came on), without echoing it back, so a text the kernel is still
handling never overwrites newer typing. The kernel may still set ``value`` (a prefilled edit, a
cleared box): the page shows it. The kernel handles the box's messages and the card's clicks
in the order the page sent them only on one shell (:func:`~plan_widgets.widgets.shared.
in_page_order`, which the boxes' makers in ``widgets.shared`` apply).

The look is ipywidgets' own (its ``jupyter-widget-textarea`` / ``jupyter-widget-text`` classes,
JupyterLab's CSS variables) and so is the keyboard: keys pressed in the box stay in it (the
notebook's shortcuts do not fire while one types).
"""

from __future__ import annotations

from typing import Any

import anywidget
from traitlets import Bool, Int, Unicode

ESM = """
function render({ model, el }) {
  const line = !model.get('multiline');
  const kind = line ? 'text' : 'textarea';
  el.classList.add('jupyter-widgets', 'widget-inline-hbox', `jupyter-widget-${kind}`,
                   `widget-${kind}`);
  const box = document.createElement(line ? 'input' : 'textarea');
  if (line) box.type = 'text';
  box.classList.add('widget-input');
  el.appendChild(box);
  const show = () => {
    const value = model.get('value');
    if (box.value !== value) box.value = value;
    box.placeholder = model.get('placeholder');
    const rows = model.get('rows');
    if (!line && rows === null) box.removeAttribute('rows');
    else if (!line) box.rows = rows;
    box.disabled = model.get('disabled');
  };
  show();
  const names = ['value', 'placeholder', 'rows', 'disabled'].map((n) => `change:${n}`);
  names.forEach((n) => model.on(n, show));
  box.addEventListener('input', () => {
    model.set('value', box.value);  // this page's copy: a redraw shows the typed text
    model.send({ value: box.value });  // the kernel's: never held behind an unanswered one
  });
  // as ipywidgets' text boxes: keys typed here are not the notebook's shortcuts
  box.addEventListener('keydown', (e) => e.stopPropagation());
  box.addEventListener('keypress', (e) => e.stopPropagation());
  return () => names.forEach((n) => model.off(n, show));
}
export default { render };
"""


class TypedBox(anywidget.AnyWidget):
    """A text box (``multiline``: a text area of ``rows`` lines, else one line); ``value`` is
    the text the person sees (see the module's docstring)."""

    _esm = ESM
    value = Unicode("").tag(sync=True, echo_update=False)
    placeholder = Unicode("").tag(sync=True)
    rows = Int(None, allow_none=True).tag(sync=True)
    multiline = Bool(True).tag(sync=True)
    disabled = Bool(False).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.on_msg(self._typed)

    def _typed(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """The page's text: set as ipywidgets sets a frontend's update, where it came."""
        if isinstance(content, dict) and isinstance(content.get("value"), str):
            self.set_state({"value": content["value"]})
