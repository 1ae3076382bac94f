"""Print each dependency of a built wheel pinned to its declared floor (``name==floor; marker``).

``scripts/test`` gives this to uv as constraints beside ``--resolution lowest-direct``: measured
with uv 0.13, lowest-direct alone left ``comm`` at 0.2.3 and ``traitlets`` at 5.16.1 though the
project allowed 0.1.3 and 5.4 (a package that other dependencies also require is resolved as
theirs, highest). Pinned here, every floor is what the check installs, or the install fails.

Usage: python scripts/floors.py dist/plan_widgets-X-py3-none-any.whl
"""

from __future__ import annotations

import sys
import zipfile
from email.parser import Parser

from packaging.requirements import Requirement


def floors(wheel: str) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(name).decode())
    pins = []
    for line in meta.get_all("Requires-Dist") or []:
        req = Requirement(line)
        if req.marker is not None and "extra" in str(req.marker):
            continue  # an optional extra's: not installed by the check
        low = [s.version for s in req.specifier if s.operator in (">=", "==", "~=")]
        if not low:
            sys.exit(f"{req.name} has no floor in the package's metadata: declare one")
        marker = f"; {req.marker}" if req.marker is not None else ""
        pins.append(f"{req.name}=={low[0]}{marker}")
    return pins


if __name__ == "__main__":
    print("\n".join(floors(sys.argv[1])))
