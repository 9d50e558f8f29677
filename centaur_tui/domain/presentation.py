"""Provides the normalised presentation of a deliverable: one layout for every author, the same words.

A candidate's layout habits (its heading marks, its list bullets, bold labels, how it wraps and
spaces lines) can name it to an expert as surely as a signature. With the session option
`[blinding] normalise_presentation = true` both seats show every deliverable through
`normalise()`, which rewrites the layout and never a word:

- headings (ATX `#`..`######`, setext underlines, a line bold or italic as a whole that no
  paragraph line follows) become `## text`, with one blank line around them;
- bullet items (`-`, `*`, `+`, `•`) become `- item`; ordered items (`1.`, `1)`) become `1. item`
  (their numbers are words, kept); nesting is kept as two spaces per level (at most three;
  an author's 2 or 4 spaces are one level);
- emphasis (`**x**`, `__x__`, `*x*`, `_x_`) is removed where it opens after a non-word and closes
  before one, so no two words ever join;
- paragraph lines wrapped by the author are joined into one line; runs of spaces become one;
  runs of blank lines become one; horizontal rules vanish;
- fenced code blocks and table rows are kept as they are (their spacing can carry meaning).

`words(text)` is the word sequence the normalisation keeps (tests check it equal on hostile
input).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+")
_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_BULLET = re.compile(r"^(\s*)[-*+\u2022]\s+(.*)$")
_ORDERED = re.compile(r"^(\s*)(\d{1,9})[.)]\s+(.*)$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_STRONG = re.compile(r"(?<![\w*])\*\*(?=\S)(.+?)(?<=\S)\*\*(?![\w*])|(?<![\w_])__(?=\S)(.+?)(?<=\S)__(?![\w_])")
_EMPH = re.compile(
    r"(?<![\w*])\*(?=[^\s*])([^*\n]*?)(?<=[^\s*])\*(?![\w*])|(?<![\w_])_(?=[^\s_])([^_\n]*?)(?<=[^\s_])_(?![\w_])"
)
_WHOLE = re.compile(r"^(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1$")
_SPACES = re.compile(r"[ \t\u00a0]+")


def words(text: str) -> list[str]:
    """The word sequence of a text: its runs of letters and digits, in order (markup and spacing ignored)."""
    return _WORD.findall(text)


def _plain(text: str) -> str:
    """One line's text without emphasis marks and with single spaces."""
    for _ in range(3):  # nested emphasis (**_x_**) peels one layer per pass
        stripped = _STRONG.sub(lambda m: m.group(1) or m.group(2), text)
        stripped = _EMPH.sub(lambda m: m.group(1) or m.group(2), stripped)
        if stripped == text:
            break
        text = stripped
    return _SPACES.sub(" ", text).strip()


def _indent(spaces: str) -> int:
    width = len(spaces.replace("\t", "    "))
    return min(3, (width + 2) // 4)  # 2 or 4 spaces are one level: authors differ in both


def normalise(text: str) -> str:
    """The deliverable in the one normalised layout, word for word the same (see the module docstring).

    Args:
        text: A deliverable as its author wrote it (Markdown or plain text).

    Returns:
        The same words in the normalised layout, ending without a trailing newline.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[tuple[str, str]] = []  # (kind, line): heading, item, para, verbatim, blank
    fenced = False
    for i, raw in enumerate(lines):
        if _FENCE.match(raw):
            fenced = not fenced
            blocks.append(("verbatim", raw.rstrip()))
            continue
        if fenced or raw.lstrip().startswith("|"):
            blocks.append(("verbatim", raw.rstrip()))
            continue
        if not raw.strip():
            blocks.append(("blank", ""))
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if _SETEXT.match(raw) and blocks and blocks[-1][0] == "heading_setext":
            continue  # the underline of the line before, already a heading
        atx = _ATX.match(raw)
        if atx:
            blocks.append(("heading", _plain(atx.group(2))))
            continue
        if _SETEXT.match(nxt) and not _RULE.match(raw) and not _BULLET.match(raw) and not _ORDERED.match(raw):
            blocks.append(("heading_setext", _plain(raw)))
            continue
        if _RULE.match(raw):
            blocks.append(("blank", ""))
            continue
        bullet, ordered = _BULLET.match(raw), _ORDERED.match(raw)
        if bullet:
            blocks.append(("item", "  " * _indent(bullet.group(1)) + "- " + _plain(bullet.group(2))))
            continue
        if ordered:
            blocks.append(
                ("item", "  " * _indent(ordered.group(1)) + f"{ordered.group(2)}. " + _plain(ordered.group(3)))
            )
            continue
        whole = _WHOLE.match(raw.strip())
        # A line emphasised as a whole is a heading unless a paragraph goes on after it.
        before_para = bool(nxt.strip()) and not _starts_block(nxt)
        if whole and not before_para:
            blocks.append(("heading", _plain(whole.group(2))))
            continue
        blocks.append(("para", _plain(raw)))
    return _layout(blocks)


def _starts_block(line: str) -> bool:
    return bool(
        _ATX.match(line) or _BULLET.match(line) or _ORDERED.match(line) or _FENCE.match(line) or _RULE.match(line)
    )


def _layout(blocks: list[tuple[str, str]]) -> str:
    out: list[str] = []

    def gap() -> None:
        if out and out[-1] != "":
            out.append("")

    previous = "blank"
    for kind, line in blocks:
        if kind == "blank":
            if previous == "para":
                gap()
            previous = "blank" if previous != "item" else "item"  # a loose list stays one list
            continue
        if kind in ("heading", "heading_setext"):
            gap()
            out += ["## " + line if line else "##", ""]
        elif kind == "item":
            if previous not in ("item",):
                gap()
            out.append(line)
        elif kind == "para":
            if previous == "para" and out and out[-1]:
                out[-1] = f"{out[-1]} {line}"
            else:
                gap()
                out.append(line)
        else:  # verbatim
            if previous != "verbatim":
                gap()
            out.append(line)
        previous = "item" if kind == "item" else ("heading" if kind.startswith("heading") else kind)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out)
