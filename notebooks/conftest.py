"""nbval runs these notebooks as an executor: no one can click (docs/unattended.md). They
decide in their own later cells instead (``session.pending.approve()``), which needs the cell
to return while a card waits, as it does for a person: so this says someone is there."""

import os

os.environ.setdefault("PLAN_WIDGETS_UNATTENDED", "no")
