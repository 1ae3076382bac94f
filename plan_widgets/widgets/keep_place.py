"""The keyboard goes on where the person was after a click on a card (issue 42, point 4).

Measured in JupyterLab 4.6 and Notebook 7.6 (headless Chromium, tests/test_browser_keep_place.py):
a mousedown anywhere in a cell's output makes that cell the active one (the notebook's
``mousedown`` handler, and its ``focusin`` handler when the button takes focus); the card then
re-renders without the clicked button, and the focus falls to the page's body. A person who
had selected a later cell and clicked Approve found the agent's cell selected and Shift+Enter
dead; one click back into the notebook, and the next Shift+Enter re-ran the agent's cell.

No Python API reaches the page's focus, so this is a small frontend module (an anywidget ESM,
one shared invisible model in every card): it keeps a card's mousedown and a button's focusin
from reaching the notebook (the cell the person selected stays selected), and after a button's
click it gives the focus back to the notebook's active cell in command mode (Shift+Enter runs
it). A text box still takes focus as it did (the notebook must hear that focus to stop its
single-key shortcuts while one types), and that focus makes the card's cell the active one:
the cell selected before the typing began is remembered, and a button's click gives the focus
back to it (measured in JupyterLab 4.6: feedback typed, Keep planning clicked, the agent's cell
was the active one and the next Shift+Enter re-ran it; tests/test_browser_tour.py). A press on
what cannot take focus (an option's label) focuses the card's cell itself, which the notebook
then made the active one (measured: Red picked on a question card, the agent's cell became
active); that focus is kept from the notebook, and the click gives the focus back. Outside
JupyterLab and Notebook 7 (no ``.jp-Notebook``
around the card, e.g. VS Code) the module does nothing.

When: a card's own keep-place view renders after its buttons are on the page (measured in
JupyterLab 4.6 and Notebook 7.6: every button of a new card came before its card was kept, and
the view looked again every 50 ms), so a click as soon as a button showed reached the notebook.
The control bar's view, on the page long before any card, watches its notebook instead (a
``MutationObserver``, whose callback runs before the next input event) and keeps every card as it
comes (tests/test_browser_keep_place.py checks it at each button's first moment).
"""

from __future__ import annotations

import anywidget

ESM = """
const BOX = '.pw-keeps-place';  // a card, the control bar: a box with this view among its children

// one box: its listeners, added once (the box's dataset says so)
function keep(nb, box) {
  if (box.dataset.pwKeepPlace) return;
  box.dataset.pwKeepPlace = '1';
  const editable = (t) => t instanceof Element && t.matches(':read-write');
  const active = () => nb.querySelector('.jp-Cell.jp-mod-active');
  let before = null;  // the cell the person had selected before typing in this card
  const cell = box.closest('.jp-Cell');
  let pressed = false;  // a mouse button went down in this card, this very task
  box.addEventListener('mousedown', (e) => {
    e.stopPropagation();
    pressed = true;
    setTimeout(() => { pressed = false; }, 0);
  });
  // a press on what cannot take focus (an option's label, the plan's text) focuses the
  // nearest ancestor that can: this card's cell, which the notebook would make the active one
  nb.addEventListener('focusin', (e) => {
    if (pressed && e.target === cell) e.stopPropagation();
  }, true);
  // a text box's focus reaches the notebook, which makes this card's cell the active one:
  // the cell selected before is remembered (capture: before the notebook hears it)
  box.addEventListener('focusin', (e) => {
    if (editable(e.target) && before === null) before = active();
  }, true);
  box.addEventListener('focusin', (e) => { if (!editable(e.target)) e.stopPropagation(); });
  // a click elsewhere in the notebook is the person choosing another place
  nb.addEventListener('mousedown', (e) => { if (!box.contains(e.target)) before = null; },
                      true);
  box.addEventListener('click', (e) => {  // a button, an option: not a text box, a picker
    const t = e.target;
    // (commenting a plan's lines, the person goes on in this card: a line opens its note box,
    // Add comment takes the next; the card's own buttons give the focus back)
    if (!(t instanceof Element) || editable(t) || t.closest('select, .pw-plan-lines')) return;
    const back = before && before.isConnected ? before : null;
    before = null;
    setTimeout(() => {  // focusing a cell makes it the notebook's active one again
      (back || active() || nb).focus({ preventScroll: true });
    }, 0);
  });
}

// the notebook: every box in it now, and every box that comes later, as it comes (a
// MutationObserver's callback runs before the next input event: no click on a new card's
// button comes before its box is kept). A box comes on the page before it has its classes
// (ipywidgets sets them after; measured in JupyterLab 4.6), so a class's change counts too.
function watch(nb) {
  if (nb.dataset.pwKeepPlace) return;
  nb.dataset.pwKeepPlace = '1';
  const found = (n) => {
    if (!(n instanceof Element)) return;
    if (n.matches(BOX)) keep(nb, n);
    for (const b of n.querySelectorAll(BOX)) keep(nb, b);
  };
  found(nb);
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === 'attributes') {
        if (r.target.matches(BOX)) keep(nb, r.target);
      } else {
        for (const n of r.addedNodes) found(n);
      }
    }
  }).observe(nb, { childList: true, subtree: true, attributes: true, attributeFilter: ['class'] });
}

function render({ el }) {
  let tries = 0;
  const attach = () => {
    const box = el.parentElement;
    if (!box || !box.isConnected) {
      if (tries++ < 100) setTimeout(attach, 50);  // the view is not on the page yet
      return;
    }
    const nb = box.closest('.jp-Notebook');
    if (!nb) return;
    watch(nb);
    if (box.matches(BOX)) keep(nb, box);
  };
  attach();
}
export default { render };
"""


class KeepPlace(anywidget.AnyWidget):
    """Invisible; one shared model shown in every card (see the module's docstring)."""

    _esm = ESM
