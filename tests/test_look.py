"""The look lives in one module (issue 41): no other module of the package names a colour, and
every JupyterLab variable the look uses has a fallback for a page without it (a saved notebook
elsewhere, VS Code's Markdown output). Whether the colours read well is measured in a browser
(tests/test_browser_contrast.py); this keeps them where a theme is one edit."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import plan_widgets
from plan_widgets.render import look

PACKAGE = Path(plan_widgets.__file__).parent
_VALUE = r"(#[0-9a-fA-F]{3,8}\b|rgba?\(|hsla?\()"
COLOUR = re.compile(rf"^[rbuf]*['\"]{_VALUE}[^'\"]*['\"]$"  # a colour alone: "#b91c1c"
                    rf"|(color|background|border)[\w-]*\s*:[^;]*?{_VALUE}")  # in a style


def _strings(path: Path) -> list[tuple[int, str]]:
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return [(t.start[0], t.string) for t in tokens
            if t.type == tokenize.STRING or t.type == getattr(tokenize, "FSTRING_MIDDLE", -1)]


def test_no_module_but_the_look_names_a_colour() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{line}: {text.strip()[:80]}"
             for path in sorted(PACKAGE.rglob("*.py")) if path.name != "look.py"
             for line, text in _strings(path) if COLOUR.search(text)]
    assert found == [], "colours outside plan_widgets/render/look.py:\n" + "\n".join(found)


def test_every_variable_has_a_fallback() -> None:
    values = [v for v in vars(look).values() if isinstance(v, str)]
    values += [v for d in vars(look).values() if isinstance(d, dict)
               for v in d.values() if isinstance(v, str)]
    bare = sorted({m for v in values for m in re.findall(r"var\(--[\w-]+\s*\)", v)})
    assert "var(--jp-error-color1, #d32f2f)" in look.ERROR
    assert bare == [], f"variables without a fallback: {bare}"
