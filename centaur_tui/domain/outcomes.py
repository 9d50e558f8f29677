"""Provides the outcome of every planned item of a session, derived from the plan and the stored facts.

Every item the plan holds (an automation output, an assistance text, a worker output, a
judgment of one judge in one presentation) ends in exactly one of:

- `answered`: stored (for a judgment: a valid one);
- `invalid`: a judgment stored as invalid, with its reason (the judge's reply stayed invalid);
- `failed`: nothing stored although its inputs are: its call failed for good (or, after a
  stopped run, was not sent yet);
- `blocked`: nothing stored because an input is missing: a worker output whose assistance
  text failed, a judgment of a comparison whose output is missing;
- `budget`: nothing stored because the run stopped at the session's `max_cost_usd` before its
  call was sent (only a run knows this: read from the store alone, such an item is `failed`,
  "not sent yet").

Nothing here is recorded on its own: the outcomes are computed from what the store holds,
so a re-run that answers a failed call changes its outcome without any bookkeeping.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from centaur_tui.domain.plan import (
    MODES,
    STAGES,
    Comparison,
    assistance_id,
    candidate_output_id,
    candidates_for,
    comparisons,
    eligible_judges,
    output_id,
    presented_orders,
)
from centaur_tui.domain.session import PLAIN, Session

OUTCOMES = ("answered", "invalid", "failed", "blocked", "budget")
"""Every outcome of a planned item, in display order."""


@dataclass
class OutcomeCounts:
    """How many planned items of a stage (or of one judge) ended in each outcome."""

    planned: int = 0
    answered: int = 0
    invalid: int = 0
    failed: int = 0
    blocked: int = 0
    budget: int = 0

    @property
    def missing(self) -> int:
        """Planned items with nothing stored (failed, blocked or not sent for the budget); invalid ones are stored."""
        return self.failed + self.blocked + self.budget

    def add(self, outcome: str) -> None:
        self.planned += 1
        setattr(self, outcome, getattr(self, outcome) + 1)


@dataclass
class Outcomes:
    """The outcome counts of a session: per stage, and for judgments per judge."""

    stages: dict[str, OutcomeCounts] = field(default_factory=lambda: {s: OutcomeCounts() for s in STAGES})
    judges: dict[str, OutcomeCounts] = field(default_factory=dict)
    modes: dict[str, OutcomeCounts] = field(default_factory=lambda: {m: OutcomeCounts() for m in MODES})
    """Judgments per mode (the denominators of each mode's rankings)."""

    @property
    def failed(self) -> int:
        return sum(s.failed for s in self.stages.values())

    @property
    def blocked(self) -> int:
        return sum(s.blocked for s in self.stages.values())

    @property
    def budget(self) -> int:
        return sum(s.budget for s in self.stages.values())

    @property
    def missing(self) -> int:
        return self.failed + self.blocked + self.budget

    @property
    def complete(self) -> bool:
        return self.missing == 0


@dataclass(frozen=True)
class StoredFacts:
    """What the store holds of a session's planned items.

    Attributes:
        outputs: Ids of the stored outputs.
        assistance: Ids of the stored assistance texts.
        judgments: (comparison id, judge, presentation) of each stored LLM judgment -> valid.
    """

    outputs: frozenset[str]
    assistance: frozenset[str]
    judgments: Mapping[tuple[str, str, int], bool]
    not_sent: frozenset[object] = frozenset()
    """Items whose call the run did not send because of the budget: output and assistance ids,
    (comparison id, judge, presentation) of judgments. Known to a run only, never stored."""


def comparison_output_ids(session: Session, comp: Comparison) -> tuple[str, str]:
    """The ids of the two outputs a comparison of the pipeline's tournaments holds."""
    a, b = comp.candidates
    return (
        candidate_output_id(session, comp.run, comp.task, comp.mode, a),
        candidate_output_id(session, comp.run, comp.task, comp.mode, b),
    )


def _judgment_items(session: Session) -> Iterator[tuple[Comparison, str, int]]:
    for run in range(1, session.runs + 1):
        for task in session.tasks:
            for mode in MODES:
                for comp in comparisons(session, run, task, mode):
                    for judge in eligible_judges(session, comp):
                        for presentation, _ in presented_orders(session, comp, judge.name):
                            yield comp, judge.name, presentation


def session_outcomes(session: Session, facts: StoredFacts) -> Outcomes:
    """The outcome of every item the session plans (the counts `summarize` plans, item by item)."""
    out = Outcomes(judges={j.name: OutcomeCounts() for j in session.judges})
    stages = out.stages
    worker = session.worker.name if session.worker is not None else ""
    imported = session.imported_names  # their outputs are imported, not generated: no stage item
    for run in range(1, session.runs + 1):
        for task in session.tasks:
            for name in session.generated_automation:
                oid = output_id(run, task, "automation", name, name)
                stages["automation"].add(
                    "answered" if oid in facts.outputs else "budget" if oid in facts.not_sent else "failed"
                )
            for name in session.assistants:
                aid = assistance_id(run, task, name)
                stages["assistance"].add(
                    "answered" if aid in facts.assistance else "budget" if aid in facts.not_sent else "failed"
                )
            for name in candidates_for(session, "augmentation"):
                if name in imported:
                    continue
                oid = output_id(run, task, "augmentation", name, worker)
                if oid in facts.outputs:
                    outcome = "answered"
                elif name != PLAIN and assistance_id(run, task, name) not in facts.assistance:
                    outcome = "blocked"
                elif oid in facts.not_sent:
                    outcome = "budget"
                else:
                    outcome = "failed"
                stages["worker"].add(outcome)
    for comp, judge, presentation in _judgment_items(session):
        valid = facts.judgments.get((comp.id, judge, presentation))
        if valid is not None:
            outcome = "answered" if valid else "invalid"
        elif any(o not in facts.outputs for o in comparison_output_ids(session, comp)):
            outcome = "blocked"
        elif (comp.id, judge, presentation) in facts.not_sent:
            outcome = "budget"
        else:
            outcome = "failed"
        stages["judging"].add(outcome)
        out.judges[judge].add(outcome)
        out.modes[comp.mode].add(outcome)
    return out
