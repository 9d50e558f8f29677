"""Provides gold checks: a deliverable's degraded copy, made deterministically, whose intact original should win.

A gold check (and a practice comparison) shows an expert a deliverable against a copy of
itself with parts of it removed and the rest cut short, in a seeded order. Whatever the
rubric, the copy meets fewer of the task's requirements, so a careful expert prefers the
intact one; an expert who picks the copy or a tie fails the check. The copy keeps the
original's opening block, so the pair reads as two attempts at the same task.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

MIN_WORDS = 40
"""A deliverable shorter than this is not degraded (too little to remove for the difference to be clear)."""

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")


@dataclass(frozen=True)
class Degraded:
    """A degraded copy and what was done to it, in words (for the report and the practice verdict)."""

    text: str
    description: str


def _blocks(text: str) -> list[list[str]]:
    """The text's blocks: a Markdown heading starts one, and so does a line after a blank line."""
    blocks: list[list[str]] = []
    blank = True
    for line in text.splitlines():
        if not line.strip():
            blank = True
            if blocks:
                blocks[-1].append(line)
            continue
        if blank or _HEADING.match(line) or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
        blank = False
    return blocks


def degrade(text: str, seed: str) -> Degraded | None:
    """A degraded copy of `text` (sections removed, then cut short), the same for the same seed.

    With at least three blocks, about a third of them (never the first) are removed and what
    remains is cut to 55-80 % of its lines; with fewer, the words are cut to 50-70 %. None when
    the text has fewer than MIN_WORDS words.
    """
    if len(text.split()) < MIN_WORDS:
        return None
    rng = random.Random(seed)
    blocks = _blocks(text)
    if len(blocks) >= 3:
        removable = list(range(1, len(blocks)))
        k = max(1, round(len(blocks) / 3))
        removed = set(rng.sample(removable, min(k, len(removable))))
        kept = [line for i, b in enumerate(blocks) if i not in removed for line in b]
        share = rng.uniform(0.55, 0.8)
        n = max(1, int(len(kept) * share))
        while n > 1 and not kept[n - 1].strip():
            n -= 1
        out = "\n".join(kept[:n]).rstrip()
        description = (
            f"{len(removed)} of {len(blocks)} sections removed and the rest cut to {round(share * 100)} % of its lines"
        )
    else:
        words = text.split(" ")
        share = rng.uniform(0.5, 0.7)
        out = " ".join(words[: max(1, int(len(words) * share))]).rstrip()
        description = f"cut to {round(share * 100)} % of its words"
    if not out.strip() or out.strip() == text.strip():
        return None
    return Degraded(out, description)
