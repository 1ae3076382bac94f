"""WCAG contrast of every text on a page, from the browser's computed colours, for the theme
test (tests/test_browser_contrast.py).

``low_contrast(page, roots)`` walks every visible text node under the elements ``roots``
selects, takes its computed colour and its effective background (the element's and its
ancestors' backgrounds, composited from the first opaque one up, semi-transparent ones
included), and returns each text under WCAG AA: 4.5:1, or 3:1 for large text (24 px, or
18.66 px bold). Colours are read through a canvas, so any CSS colour form counts
(``rgb()``, ``color(srgb …)`` from ``color-mix()``, ``oklab()``). Text of a disabled control
(a decided card's buttons) is exempt, as WCAG exempts inactive components.

``switch_theme(page, name)`` picks a theme as a person does: Settings > Theme > name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

THEMES = ("JupyterLab Light", "JupyterLab Dark", "JupyterLab Dark High Contrast")
"""JupyterLab's three built-in themes."""

_WALK = r"""([selector, minimum]) => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const rgba = (css) => {  // any CSS colour -> [r, g, b, a] (0-255, alpha 0-1)
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = 'rgba(0, 0, 0, 0)';
    ctx.fillStyle = css;
    ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data;
    return [d[0], d[1], d[2], d[3] / 255];
  };
  const over = (top, under) => {  // top composited over an opaque colour
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + under[i] * (1 - a)).concat([1]);
  };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let base = [255, 255, 255, 1];  // the canvas under a page with no background at all
    if (layers.length && layers[layers.length - 1][3] >= 1) base = layers.pop();
    for (const c of layers.reverse()) base = over(c, base);
    return base;
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const hex = (c) => '#' + c.slice(0, 3).map(v => Math.round(v).toString(16).padStart(2, '0'))
                                       .join('');
  const where = (el) => {
    const names = [];
    for (let e = el; e && names.length < 4; e = e.parentElement) {
      const pw = [...e.classList].filter(c => c.startsWith('pw-'));
      if (pw.length) names.push(pw.join('.'));
    }
    return names.join(' < ');
  };
  const found = [], seen = new Set();
  let texts = 0, lowest = null;
  for (const root of document.querySelectorAll(selector)) {
    const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) {
      const node = walk.currentNode, el = node.parentElement;
      const text = node.textContent.trim();
      if (!text || !el.checkVisibility({opacityProperty: true, visibilityProperty: true}))
        continue;
      if (el.closest(':disabled, .mod-disabled, [disabled]')) continue;  // inactive: exempt
      texts += 1;
      const style = getComputedStyle(el);
      const bg = background(el);
      let opacity = 1;
      for (let e = el; e; e = e.parentElement) opacity *= parseFloat(getComputedStyle(e).opacity);
      const raw = rgba(style.color);
      const fg = over([raw[0], raw[1], raw[2], raw[3] * opacity], bg);
      const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
      const ratio = (hi + 0.05) / (lo + 0.05);
      const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight, 10) >= 700;
      const large = size >= 24 || (bold && size >= 18.66);
      const need = large ? 3 : minimum;
      if (lowest === null || ratio / need < lowest.ratio / lowest.need)
        lowest = {text: text.slice(0, 40), ratio: Math.round(ratio * 100) / 100, need};
      const key = `${text}|${hex(fg)}|${hex(bg)}`;
      if (ratio + 1e-9 < need && !seen.has(key)) {
        seen.add(key);
        found.push({text: text.slice(0, 60), ratio: Math.round(ratio * 100) / 100, need,
                    fg: hex(fg), bg: hex(bg), where: where(el)});
      }
    }
  }
  return {texts, found, lowest};
}"""


@dataclass(frozen=True)
class Low:
    """One text under AA."""

    text: str
    ratio: float
    need: float
    fg: str
    bg: str
    where: str

    def __str__(self) -> str:
        return (f"{self.ratio:.2f}:1 < {self.need:g} {self.text!r} ({self.fg} on {self.bg}; "
                f"{self.where})")


@dataclass(frozen=True)
class Measured:
    """What one walk found."""

    texts: int
    """How many texts were measured."""
    low: list[Low]
    """The ones under AA."""
    lowest: str
    """The text closest to its limit, with its ratio (for the record)."""


def low_contrast(page: Any, roots: str, minimum: float = 4.5) -> Measured:
    """The texts under every element ``roots`` selects, measured."""
    got = page.evaluate(_WALK, [roots, minimum])
    lo = got["lowest"] or {}
    return Measured(int(got["texts"]), [Low(**x) for x in got["found"]],
                    f"{lo.get('ratio')}:1 {lo.get('text')!r}")


def switch_theme(page: Any, name: str, timeout_ms: int) -> None:
    """Settings > Theme > ``name``, by mouse; returns once the page wears it."""
    from playwright.sync_api import expect

    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").click()
    page.locator(".lm-Menu-itemLabel", has_text="Theme").first.hover()
    page.locator(".lm-Menu-itemLabel:visible",
                 has_text=re.compile(f"^{re.escape(name)}$")).click()
    expect(page.locator(f"body[data-jp-theme-name='{name}']")).to_have_count(
        1, timeout=timeout_ms)
    # the theme's stylesheet is in: the page's background is the theme's own
    page.wait_for_function(
        """(name) => {
             const links = [...document.querySelectorAll('link[rel=stylesheet]')]
                 .filter(l => l.href.includes('/themes/'));
             return links.length === 1 && links[0].sheet !== null
                 && getComputedStyle(document.body).getPropertyValue('--jp-layout-color0') !== '';
           }""", arg=name, timeout=timeout_ms)
    page.keyboard.press("Escape")


STATIC_BASES = {
    "white page, black text": "background:#ffffff;color:#000000",
    "VS Code dark (#1f1f1f, #cccccc)": "background:#1f1f1f;color:#cccccc",
}
"""Pages with none of JupyterLab's CSS variables, for the saved record (nbconvert's plain
template, GitHub, VS Code's Markdown output): light, and VS Code's default dark theme
(Dark Modern: editor background #1f1f1f, foreground #cccccc)."""

LIGHT_VARIABLES = (
    ":root{--jp-layout-color0:white;--jp-layout-color1:white;--jp-ui-font-color0:rgba(0,0,0,1);"
    "--jp-ui-font-color1:rgba(0,0,0,0.8);--jp-ui-font-color2:rgba(0,0,0,0.5);"
    "--jp-content-font-color1:black;--jp-error-color1:#f44336;--jp-warn-color1:#ff9800;"
    "--jp-success-color1:#4caf50;--jp-brand-color1:#2196f3}")
"""What ipywidgets' labvariables.css puts on ``:root`` (JupyterLab Light's palette), which VS
Code's widget renderer loads into the webview every output of a notebook shares: a saved
record shown there after a widget meets these variables on a dark page."""


def static_page(body_style: str, html: str, variables: str = "") -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><style>{variables}"
            f"body{{{body_style};font:13px sans-serif}}</style></head>"
            f"<body><div id='record'>{html}</div></body></html>")
