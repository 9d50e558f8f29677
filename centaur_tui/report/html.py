"""Provides the publishable bundle's static pages: HTML from Jinja2 templates, with the browser's script and style.

Pure rendering: every function takes data and returns text (no file, no clock), so the same
data gives the same bytes. Every value is HTML-escaped by the templates (autoescape); the
judgment browser's script writes untrusted text only through `textContent`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from centaur_tui.report.render import Section

TEMPLATES = Path(__file__).resolve().parent / "templates"
STATIC = ("style.css", "browser.js")
"""Files copied into the bundle as they are (vendored: no CDN, no request)."""

NAV = (("index.html", "Bundle"), ("report.html", "Report"), ("judgments.html", "Judgments"))


@cache
def _env() -> Environment:
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )


def _page(template: str, **values: Any) -> str:
    values.setdefault("banner", None)
    return _env().get_template(template).render(nav=NAV, **values)


def static_file(name: str) -> bytes:
    """One of the vendored files (`STATIC`), as shipped."""
    return (TEMPLATES / name).read_bytes()


def index_page(
    session: str, head: str, length: int, pages: list[tuple[str, str, str]], banner: str | None = None
) -> str:
    """The bundle's front page: the chain head and every file with its audience."""
    return _page(
        "index.html", title=f"{session}: bundle", session=session, head=head, length=length, pages=pages, banner=banner
    )


def report_page(session: str, sections: list[Section], figures: list[str], banner: str | None = None) -> str:
    """The report's sections as HTML tables, then its figures (file names beside the page)."""
    return _page("report.html", title=f"{session}: report", sections=sections, figures=figures, banner=banner)


def judgments_page(session: str, banner: str | None = None) -> str:
    """The judgment browser's page (its data is `browser_data`, in data.js)."""
    return _page("judgments.html", title=f"{session}: judgments", banner=banner)


def guidelines_page(session: str, guidelines: str) -> str:
    """The expert guidelines as the experts saw them (masked by the caller)."""
    return _page("guidelines.html", title=f"{session}: expert guidelines", guidelines=guidelines)


def browser_data(data: dict[str, Any]) -> str:
    """data.js: the browser's data as one script assignment (sorted keys, no whitespace, `<` escaped)."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return "window.CENTAUR_BUNDLE = " + text.replace("<", "\\u003c") + ";\n"
