"""Sphinx configuration of plan_widgets' documentation (MyST Markdown, the PyData theme).

Built in CI with warnings as errors (``scripts/test``): a broken internal link, a missing
cross-reference or a docstring that does not parse fails the build.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import plan_widgets  # noqa: E402  (after the path: the extension below imports it too)

project = "plan_widgets"
author = "plan_widgets contributors"
version = release = plan_widgets.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "plan_widgets_reference",  # docs/_ext: the API and configuration references, generated
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "img/*.md", "README.md"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3  # `page.md#a-heading` links resolve, and are checked
suppress_warnings: list[str] = []

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}
nitpicky = False  # type names from other packages are not resolved (no network)

html_theme = "pydata_sphinx_theme"
html_title = "plan_widgets"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False
