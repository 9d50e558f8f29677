"""Provides the cleaning of untrusted text (provider errors, server bodies) before it is printed or stored.

Two steps, both pure: `strip_controls` removes terminal escape sequences and control characters
(one provider error cleared the terminal with `ESC[2J` and renamed its title with `ESC]0;...BEL`),
and `redact` replaces anything that looks like a credential. `clean_untrusted` does both and
bounds the length. Front ends apply `strip_controls` once more when they print, as a last line
of defence for text that did not come through the gateway.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# ESC-initiated sequences: OSC (ESC ] ... BEL or ST, e.g. a window title), CSI (ESC [ params final,
# e.g. clear screen), DCS/SOS/PM/APC strings (ESC P/X/^/_ ... ST), then any other two-byte escape.
# The 8-bit forms (0x9b CSI, 0x9d OSC) are matched too: some terminals honour them.
_ESCAPE = re.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|\x1b[\s\S]?"
)
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and isolates
that reorder what a reader sees (U+202A-202E, U+2066-2069): what no shown or stored text may hold.
The one copy: display cleaning (`clean_text`), this module and the import checks use it."""

REDACTED = "[redacted]"

# Credential shapes redacted wherever they appear; each keeps its label so a reader sees what kind
# of secret was there. Lengths are lower bounds of real keys (an OpenAI key is 51+ characters, a
# Google key 39); the masked forms providers echo ("sk-proj-****abcd") are caught too.
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bsk-((?:ant-)?)[A-Za-z0-9_*\-]{4,}"), r"sk-\1" + REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{16,}"), "AIza" + REDACTED),
    (re.compile(r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{16,}"), REDACTED),
    (re.compile(r"\bhf_[A-Za-z0-9]{16,}"), "hf_" + REDACTED),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{8,}"), "xox-" + REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "AKIA" + REDACTED),
    (re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=\-*]{4,}", re.IGNORECASE), r"\1 " + REDACTED),
    # key: value and key=value forms, quoted or not (headers echoed back, JSON bodies, URLs).
    (
        re.compile(
            r"""(?i)\b((?:x-)?api[_-]?key|x-goog-api-key|authorization|access[_-]?token|secret|password|token)"""
            r"""(["']?\s*[:=]\s*["']?)(?!\[redacted)[^\s"',;}&]{4,}"""
        ),
        r"\1\2" + REDACTED,
    ),
)

MIN_SECRET_CHARS = 6
"""Shorter values of key variables are not redacted by value: "none" or "x" would blank out words."""


def strip_controls(text: str) -> str:
    """`text` without escape sequences or control characters; newline and tab are kept, CR becomes newline."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return CONTROL_CHARACTERS.sub("", _ESCAPE.sub("", text))


def redact(text: str, secrets: Mapping[str, str] | None = None) -> str:
    """`text` with credentials replaced: the given secret values (by variable name), then known key shapes."""
    for name, value in sorted((secrets or {}).items(), key=lambda kv: -len(kv[1] or "")):
        if value and len(value) >= MIN_SECRET_CHARS:
            text = text.replace(value, f"[redacted {name}]")
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def clean_untrusted(
    text: str, secrets: Mapping[str, str] | None = None, limit: int = 2000, one_line: bool = False
) -> str:
    """Controls stripped, secrets redacted (before trimming, so no key is cut in half and kept), then trimmed.

    `one_line` joins lines with " | " for single-line places (a progress line, a CLI summary).
    """
    text = redact(strip_controls(text), secrets)
    if one_line:
        text = " | ".join(line.strip() for line in text.splitlines() if line.strip())
    text = text.strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


# A whole value shaped like a key, or a long key inside a text; used to refuse keys in files.
_SECRET_VALUE = re.compile(
    r"^\s*(?:sk-\S{4,}|AIza[0-9A-Za-z_\-]{16,}|(?:gh[pousr]|github_pat)_\w{16,}|hf_[A-Za-z0-9]{16,}"
    r"|xox[abprs]-[\w\-]{8,}|(?:AKIA|ASIA)[0-9A-Z]{16}|Bearer\s+\S{8,})\s*$"
    # Inside a longer text only a real key's shape counts (32+ characters with a digit), so that
    # prose such as "sk-learn-compatible-estimators-and-pipelines" is not refused.
    r"|\bsk-(?:ant-|proj-)?(?=[A-Za-z0-9_\-]*\d)[A-Za-z0-9_\-]{32,}|\bAIza[0-9A-Za-z_\-]{35}\b",
)


def looks_like_secret(value: str) -> bool:
    """Whether a file value is (or holds) an API key: `sk-...`, `AIza...`, a token, `Bearer ...`."""
    return bool(_SECRET_VALUE.search(value))


def find_control(text: str) -> re.Match[str] | None:
    """The first control character, escape (ESC) or bidirectional override in `text`, or None.

    What a reader of files refuses where a person typed the text (`strip_controls` removes the same).
    """
    return CONTROL_CHARACTERS.search(text)


# Characters that draw nothing: format characters (zero-width space and joiners, U+FEFF, the bidi
# marks), controls, surrogates, private and unassigned code points, and the fillers that render
# blank (Hangul fillers, the Braille blank, the Mongolian vowel separator).
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
_BLANK_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")


def visible_length(text: str) -> int:
    """Characters of `text` (stripped) that a reader sees: the count a minimum length is checked on.

    Spaces between words count, as `len(text.strip())` does; zero-width and format characters,
    NULs and blank fillers do not (25 zero-width spaces met a 20-character minimum), nor combining
    marks with no visible character before them.
    """
    import unicodedata

    count = 0
    after_visible = False
    for char in text.strip():
        category = unicodedata.category(char)
        if category in _INVISIBLE_CATEGORIES or char in _BLANK_FILLERS:
            after_visible = False
            continue
        if category in ("Mn", "Me") and not after_visible:
            continue
        count += 1
        after_visible = not char.isspace()
    return count
