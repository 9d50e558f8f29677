"""Provides the expert's guess after a judgment: who is asked, and what a free-text guess names.

Issue 26: on a share of comparisons (`[blinding] guess_share`) the seat asks, once the judgment is
stored, "Which model or company do you think wrote option 1? Leave empty if you don't know." The
expert types what they suspect; the seat shows no candidate, label or list, and echoes back
nothing but the expert's own text. A blind label ("Candidate C") carries no information: an
expert who is never told who a label stands for can only pick one at random, so a blinding index
over such picks is 0 whatever the expert can see. A name the expert brings from the world can be
right, and is what blinding must prevent.

The draw comes from the session secret (HMAC-SHA-256), so a reload asks the same question.

Matching (`GuessMatcher`) uses the masking's matcher (domain.blinding, domain.skeleton): folded
text, so any case, spacing, dash, full-width form, invisible character, combining mark, look-alike
letter from another script (a Cyrillic look-alike of C) or right-to-left mark matches as the name does in a
deliverable. A candidate's own phrases are its name, its model string and that string without its
provider prefixes; the parts of its name ("gpt" of "gpt-5-mini"), the family and the provider
prefixes name its family. The longest phrase at a place wins ("gpt-5-mini" is not also "gpt-5").

What a guess counts as (`score_guess`), with t the candidate that wrote option 1:
- empty: don't know, at both levels;
- matching none of the session's names: "named something else", incorrect at both levels (a
  vendor the session does not name, "Claude" in a session without it, is such a text);
- candidate level: correct when the only candidate named is t and every family named is t's;
  "family only" (scored 0 like don't know, counted apart) when no candidate is named and t's
  family is the only family named; incorrect otherwise (another candidate, another family, or
  two names of which one is t: "gpt-5 or gemini" is a hedge, not a guess);
- family level: correct when t's family is the only family named, incorrect otherwise; not
  scored ("one family") where every candidate of the comparison's task and mode shares a family.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from centaur_tui.domain.blinding import Blinding
from centaur_tui.domain.session import PLAIN, Session
from centaur_tui.domain.skeleton import SEPARATORS, fold
from centaur_tui.domain.untrusted import CONTROL_CHARACTERS

MAX_GUESS_CHARS = 200
"""Longest guess stored (a model name and a company fit many times over); the rest is cut."""

QUESTION = "Which model or company do you think wrote option 1? Leave empty if you don't know."
"""The question, word for word in both seats."""

Outcome = Literal["correct", "incorrect", "unmatched", "family_only", "dont_know"]
FamilyOutcome = Literal["correct", "incorrect", "unmatched", "dont_know", "one_family"]

_GENERIC = frozenset(
    {"mini", "nano", "pro", "plus", "max", "ultra", "turbo", "flash", "lite", "large", "small", "chat", "instruct"}
    | {"model", "open", "base", "code", "next", "one", "two", "new", "deep", "preview", "latest", "simulated"}
)
_INVISIBLE = re.compile(r"[\u200b-\u200f\u2028\u2029\u2060-\u2064\ufeff]")


@dataclass(frozen=True)
class GuessQuestion:
    """The question after a judgment: which option it is about and the expert's own last answer ('' : don't know)."""

    option: int
    answered: str | None
    text: str = QUESTION


def _unit(secret: str, message: str) -> float:
    digest = hmac.new(secret.encode(), message.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def asks_guess(secret: str, expert: str, assignment_id: int, share: float) -> bool:
    """Whether this place is one of the share of places followed by the guess (stable for a secret)."""
    return share > 0 and _unit(secret, f"guess|{expert}|{assignment_id}") < share


def clean_guess(text: str) -> str:
    """The guess as stored: control characters, bidirectional controls and line breaks out, spaces squeezed, cut.

    Raises:
        TypeError: not a string.
    """
    if not isinstance(text, str):
        raise TypeError("a guess is text")
    text = CONTROL_CHARACTERS.sub(" ", text[: MAX_GUESS_CHARS * 4])
    text = _INVISIBLE.sub("", text.replace("\t", " ").replace("\n", " "))
    return " ".join(text.split())[:MAX_GUESS_CHARS].strip()


@dataclass(frozen=True)
class Suspect:
    """A candidate as the matcher knows it: its own phrases, its family and the phrases naming that family."""

    name: str
    family: str | None
    phrases: tuple[str, ...]
    family_phrases: tuple[str, ...]


def _parts(text: str) -> list[str]:
    out = []
    for part in re.split(r"[\s\-_./:]+", text):
        folded = fold(part)
        if (folded.isalpha() and len(folded) >= 3 and folded not in _GENERIC) or re.fullmatch(
            r"[a-z][0-9]+[a-z]?", folded
        ):
            out.append(part)
    return out


def suspects(session: Session, mode: str, candidates: Iterable[str]) -> list[Suspect]:
    """The matcher's view of the candidates of one task and mode (their names, model strings and families)."""
    out = []
    for name in sorted(set(candidates)):
        try:
            family = session.candidate_family(mode, name)
        except KeyError:
            family = None
        own = [name] if name != PLAIN else []
        fam = [family] if family else []
        model = None
        if name in {m.name for m in session.models}:
            model = session.model(name).model
        elif (assistant := session.dialogue_assistant(name)) is not None:
            own.append(assistant)
            model = session.model(assistant).model
        if model is not None:
            path = model.split("/")
            if path[0] == "simulated":
                path = path[1:]
            own.extend("/".join(path[i:]) for i in range(len(path)))
            fam.extend(p for p in path[:-1])
            fam.extend(_parts(path[-1]))
        for o in list(own):
            fam.extend(_parts(o))
        out.append(Suspect(name, family, tuple(dict.fromkeys(own)), tuple(dict.fromkeys(fam))))
    return out


def _key(term: str) -> str:
    return "".join(ch for ch in fold(term) if ch not in SEPARATORS)


@dataclass(frozen=True)
class GuessMatch:
    """What a guess names: candidates by their own phrases, families by any phrase (empty text: neither)."""

    empty: bool
    candidates: frozenset[str]
    families: frozenset[str]


@dataclass
class GuessMatcher:
    """The session's names for one comparison's candidates, compiled once; `match()` reads a guess."""

    pool: Sequence[Suspect]
    _blinding: Blinding = field(init=False)
    _owners: dict[str, tuple[set[str], set[str]]] = field(init=False)

    def __post_init__(self) -> None:
        owners: dict[str, tuple[set[str], set[str]]] = {}
        for s in self.pool:
            fam = {s.family} if s.family else set()
            for phrase in s.phrases:
                names, families = owners.setdefault(_key(phrase), (set(), set()))
                names.add(s.name)
                families.update(fam)
            for phrase in s.family_phrases:
                owners.setdefault(_key(phrase), (set(), set()))[1].update(fam)
        terms = [p for s in self.pool for p in (*s.phrases, *s.family_phrases)]
        self._blinding = Blinding.build(sorted(terms, key=lambda t: (-len(_key(t)), t)))
        self._owners = owners

    def match(self, text: str) -> GuessMatch:
        """The candidates and families a (cleaned) guess names."""
        text = clean_guess(text)
        if not text:
            return GuessMatch(True, frozenset(), frozenset())
        names: set[str] = set()
        families: set[str] = set()
        for found in self._blinding.mask(text)[1]:
            mine, theirs = self._owners.get(_key(found.term), (set(), set()))
            if len(mine) == 1:  # a phrase of two candidates (their shared model string) names neither
                names |= mine
            families |= theirs
        return GuessMatch(False, frozenset(names), frozenset(families))


def score_guess(found: GuessMatch, truth: Suspect, families: int) -> tuple[Outcome, FamilyOutcome]:
    """(candidate-level, family-level) outcome of a guess about what `truth` wrote (see the module docstring)."""
    if found.empty:
        return "dont_know", ("one_family" if families < 2 else "dont_know")
    if not found.candidates and not found.families:
        return "unmatched", ("one_family" if families < 2 else "unmatched")
    own_family = truth.family is not None and found.families == {truth.family}
    if found.candidates == {truth.name} and (own_family or not found.families):
        outcome: Outcome = "correct"
    elif not found.candidates and own_family:
        outcome = "family_only"
    else:
        outcome = "incorrect"
    if families < 2:
        return outcome, "one_family"
    return outcome, ("correct" if own_family else "incorrect")
