"""Two generated references, so they cannot fall behind the code.

``{config-reference}`` lists every setting of the traitlets classes a user configures
(``%config ClaudeMagics.<name>``, ``c.ClaudePolicy.<name>`` in a config file): name, type,
default and help, read from the classes when the docs are built. ``{public-api}`` documents
every name of ``plan_widgets.__all__`` from its docstring (autodoc), so a new public name is in
the reference the day it is exported. ``{claude-help}`` is what ``%claude --help`` prints.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

CONFIGURABLES = {
    "ClaudeMagics": "plan_widgets.ipython.magics",
    "ClaudePolicy": "plan_widgets.ipython.policy",
}


def _default(trait: Any) -> str:
    value = trait.default()
    if value is None or value == "":
        return "unset"
    return repr(value)


def _type(trait: Any) -> str:
    values = getattr(trait, "values", None)
    if values:  # an Enum: its choices
        return " \\| ".join(f"`{v}`" for v in values)
    return trait.__class__.__name__


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def config_table(name: str) -> list[str]:
    """A Markdown table of the class's configurable traits, in the order they are defined."""
    cls = getattr(importlib.import_module(CONFIGURABLES[name]), name)
    traits = cls.class_traits(config=True)
    order = [n for n in cls.__dict__ if n in traits]  # definition order, not alphabetical
    rows = ["| setting | type | default | what it does |", "| --- | --- | --- | --- |"]
    for n in order:
        t = traits[n]
        rows.append(f"| `{name}.{n}` | {_type(t)} | `{_escape(_default(t))}` "
                    f"| {_escape(' '.join((t.help or '').split()))} |")
    return rows


class ConfigReference(SphinxDirective):
    """``{config-reference} ClaudeMagics``: that class's settings as a table."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        if name not in CONFIGURABLES:
            raise self.error(f"unknown configurable {name!r}: one of {sorted(CONFIGURABLES)}")
        return self.parse_text_to_nodes("\n".join(config_table(name)))


class PublicApi(SphinxDirective):
    """``{public-api}``: an autodoc entry for each name of ``plan_widgets.__all__``."""

    def run(self) -> list[nodes.Node]:
        import plan_widgets

        lines: list[str] = []
        for name in sorted(plan_widgets.__all__, key=lambda n: (not n[0].isupper(), n)):
            obj = getattr(plan_widgets, name)
            kind = "autoclass" if inspect.isclass(obj) else "autofunction"
            target = f"{obj.__module__}.{obj.__qualname__}"
            lines += [f".. {kind}:: {target}", ""]  # members: conf.py's autodoc defaults
        node = nodes.section()
        node.document = self.state.document
        self.state.nested_parse(StringList(lines, source="plan_widgets.__all__"),
                                self.content_offset, node)
        return node.children


class ClaudeHelp(SphinxDirective):
    """``{claude-help} line`` or ``cell``: what ``%claude --help`` / ``%%claude --help`` print."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        from plan_widgets.ipython.commands import USAGE
        from plan_widgets.ipython.magics import ClaudeMagics

        which = self.arguments[0]
        if which not in ("line", "cell"):
            raise self.error("claude-help takes 'line' or 'cell'")
        text = USAGE if which == "line" else ClaudeMagics.claude.parser.format_help()
        return [nodes.literal_block(text, text)]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("config-reference", ConfigReference)
    app.add_directive("public-api", PublicApi)
    app.add_directive("claude-help", ClaudeHelp)
    return {"parallel_read_safe": True, "version": "1"}
