"""Provides untrusted Markdown (deliverables, assistance texts, guidelines) as inert HTML for the expert's page.

Two steps, neither by hand:

1. markdown-it-py (CommonMark, tables and strikethrough on) with raw HTML *off*: a `<script>`,
   `<iframe>` or `<img onerror=...>` in a deliverable is shown as the text it is, never parsed
   as markup; its own link check already drops `javascript:`, `vbscript:`, `file:` and `data:`.
2. nh3 (the Ammonia sanitiser) on what markdown-it made, with a short allow-list: text-level
   and block tags only, no `img` (an image from a deliverable would be a request leaving the
   expert's browser during a blind study), no `style`, `class` or event attributes, links only to
   `http(s):` and `mailto:` with `rel="noopener noreferrer nofollow"`.

What Markdown hides (a link's address, a reference definition, a link title) the page shows in
its "plain text" view of the same deliverable, which is the text itself, escaped.
"""

from __future__ import annotations

import functools

import nh3
from markdown_it import MarkdownIt

TAGS = frozenset(
    {
        "a", "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "b", "i", "s", "del",
        "code", "pre", "blockquote", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td",
    }
)  # fmt: skip
"""What markdown-it emits for the enabled syntax, minus images: nothing else survives."""

ATTRIBUTES = {"a": {"href"}, "ol": {"start"}}
"""Attributes kept: a link's address, a list's start (no style: the page's CSP allows none inline)."""

URL_SCHEMES = frozenset({"http", "https", "mailto"})


@functools.cache
def _parser() -> MarkdownIt:
    # "js-default": CommonMark with tables and strikethrough; html False: raw HTML stays text.
    md = MarkdownIt("js-default", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")  # an image is shown as its alt text: no request to any host
    return md


def markdown_html(text: str, demote: int = 0) -> str:
    """Sanitised HTML of untrusted Markdown: no script, no event handler, no style, no request to a host.

    Args:
        text: The Markdown.
        demote: Levels to move every heading down (a deliverable's `# Title` under the page's
            "Option 1" heading becomes an h3 with 2), so the page's outline stays the page's.
    """
    md = _parser()
    tokens = md.parse(text)
    if demote:
        for token in tokens:
            if token.type in ("heading_open", "heading_close"):
                token.tag = f"h{min(6, int(token.tag[1]) + demote)}"
    raw = md.renderer.render(tokens, md.options, {})
    return nh3.clean(
        raw,
        tags=set(TAGS),
        attributes={tag: set(names) for tag, names in ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
