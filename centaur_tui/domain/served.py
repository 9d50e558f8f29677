"""Provides the served-model check: whether the model that answered a judge call is the one scheduled, and its family.

A provider (or a router in front of it) may answer with another model than the one asked for:
an alias resolved to a dated snapshot, or a fallback to another model, perhaps of another
family. Leave-family-out is a promise about who judged, so a verdict served by another family
(or by a model no session entry names, whose family is unknown) is refused; one served by
an alias or a model of the judge's own family is kept and flagged.

Model strings are compared without their provider prefix (`openai/gpt-4o` and `gpt-4o` are
one model), case-insensitively, and without the deployment the gateway appends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from centaur_tui.domain.session import Endpoint, Session

SERVED_KINDS = ("same", "not_recorded", "alias", "same_family", "other_family")
"""same: the scheduled model (or one of the entry's deployments) answered; not_recorded: the reply named no model;
alias: a name of the scheduled model (one is a prefix of the other, as a dated snapshot); same_family: another model
of the judge's family; other_family: a model of another family, or one no session entry names (refused)."""

_VERSION = re.compile(r"[-@:.](\d[\d.-]*|latest|v\d[\d.]*)")
_DEPLOYMENT = re.compile(r"\s*\(deployment [^)]*\)\s*$")


@dataclass(frozen=True)
class ServedCall:
    """One LLM judgment's call: who was scheduled, who served, and what that means."""

    judgment_id: int
    judge: str
    scheduled: str
    served: str | None
    kind: str
    served_family: str | None


def normal_model(model: str) -> str:
    """A model string as compared here: no deployment suffix, no provider prefix, lower case."""
    bare = _DEPLOYMENT.sub("", model).strip().lower()
    return bare.rsplit("/", 1)[-1]


def _is_alias(longer: str, shorter: str) -> bool:
    """Whether `longer` is `shorter` with a version or date suffix (gpt-4o-2024-08-06, claude-x-latest, gemini-y-002).

    Not a longer name: gpt-4o-mini is another model than gpt-4o.
    """
    return bool(shorter) and longer.startswith(shorter) and bool(_VERSION.fullmatch(longer[len(shorter) :]))


def _models(entry: Endpoint) -> set[str]:
    return {normal_model(entry.model)} | {normal_model(d.model) for d in entry.deployments if d.model}


def _families(session: Session) -> dict[str, set[str]]:
    """Normalised model string -> the families of the session entries using it."""
    out: dict[str, set[str]] = {}
    entries: list[tuple[Endpoint, str]] = [(m, m.family) for m in session.models]
    entries += [(j, j.family) for j in session.judges]
    if session.worker is not None:
        entries.append((session.worker, session.worker.family))
    for entry, family in entries:
        for m in _models(entry):
            out.setdefault(m, set()).add(family)
    return out


def classify_served(session: Session, judgment_id: int, judge: str, scheduled: str, served: str | None) -> ServedCall:
    """Classify the model that served one judge call against the judge scheduled for it.

    Args:
        session: The session (its entries' model strings and families).
        judgment_id: The judgment the call belongs to.
        judge: The judge's name.
        scheduled: The model string the call was sent to (`calls.model`).
        served: The model the reply named (`calls.served_model`), None when it named none.
    """
    if not served or not served.strip():
        return ServedCall(judgment_id, judge, scheduled, served, "not_recorded", None)
    spec = next((j for j in session.judges if j.name == judge), None)
    mine = _models(spec) if spec is not None else {normal_model(scheduled)}
    mine.add(normal_model(scheduled))
    got = normal_model(served)
    family = spec.family if spec is not None else None
    if got in mine:
        return ServedCall(judgment_id, judge, scheduled, served, "same", family)
    if any(_is_alias(got, m) or _is_alias(m, got) for m in mine):
        return ServedCall(judgment_id, judge, scheduled, served, "alias", family)
    families = _families(session).get(got, set())
    if family is not None and families == {family}:
        return ServedCall(judgment_id, judge, scheduled, served, "same_family", family)
    served_family = next(iter(families)) if len(families) == 1 else None
    return ServedCall(judgment_id, judge, scheduled, served, "other_family", served_family)
