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
"""

from __future__ import annotations

import anywidget

ESM = """
function render({ el }) {
  let tries = 0;
  const attach = () => {
    const box = el.parentElement;
    if (!box || !box.isConnected) {
      if (tries++ < 100) setTimeout(attach, 50);  // the card's view is not on the page yet
      return;
    }
    const nb = box.closest('.jp-Notebook');
    if (!nb || box.dataset.pwKeepPlace) return;
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
  };
  attach();
}
export default { render };
"""


class KeepPlace(anywidget.AnyWidget):
    """Invisible; one shared model shown in every card (see the module's docstring)."""

    _esm = ESM
