"""Provides the outcome of every planned item of a session, derived from the plan and the stored facts.

Every item the plan holds (an automation output, an assistance text, a worker output, a
judgment of one judge in one presentation) ends in exactly one of:

- `answered`: stored (for a judgment: a valid one);
- `invalid`: a judgment stored as invalid, with its reason (the judge's reply stayed invalid);
- `failed`: nothing stored although its inputs are, and its call failed for good (the store's
  `failed_items`);
- `not_sent`: nothing stored although its inputs are, and no call of it failed: a stopped run
  never sent it (or no run has reached it yet); shown as "not sent (run stopped)";
- `blocked`: nothing stored because an input is missing: a worker output whose assistance
  text failed, a judgment of a comparison whose output is missing;
- `budget`: nothing stored because the run stopped at the session's `max_cost_usd` before its
  call was sent (only a run knows this: read from the store alone, such an item is `not_sent`);
- `excluded`: a judgment not asked because an output of its comparison was cut off at
  max_tokens and the session excludes such deliverables (`generation.on_truncated = "exclude"`);
  by the session's design, so not missing, but always counted.

`cut_off` counts, beside the outcome, the stored texts the provider cut off at max_tokens and,
for judgments, the ones stored for a comparison holding such a text (judged marked).

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
    tournament_modes,
    worker_modes,
)
from centaur_tui.domain.session import PLAIN, Session

OUTCOMES = ("answered", "invalid", "failed", "not_sent", "blocked", "budget", "excluded")
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
    not_sent: int = 0
    excluded: int = 0
    cut_off: int = 0
    """Stored items cut off at max_tokens (texts), or stored judgments of a comparison holding one."""

    @property
    def missing(self) -> int:
        """Planned items with nothing stored (failed, not sent, blocked or not sent for the budget); invalid ones
        are stored, excluded ones are left out by the session's design (counted apart)."""
        return self.failed + self.not_sent + self.blocked + self.budget

    def add(self, outcome: str, cut_off: bool = False) -> None:
        self.planned += 1
        setattr(self, outcome, getattr(self, outcome) + 1)
        self.cut_off += cut_off


@dataclass
class Outcomes:
    """The outcome counts of a session: per stage, and for judgments per judge."""

    stages: dict[str, OutcomeCounts] = field(default_factory=lambda: {s: OutcomeCounts() for s in STAGES})
    judges: dict[str, OutcomeCounts] = field(default_factory=dict)
    modes: dict[str, OutcomeCounts] = field(default_factory=lambda: {m: OutcomeCounts() for m in MODES})
    """Judgments per mode (the denominators of each mode's rankings)."""
    tasks: dict[str, OutcomeCounts] = field(default_factory=dict)
    """Judgments per task."""
    candidates: dict[str, OutcomeCounts] = field(default_factory=dict)
    """Outputs per candidate (both modes): their cut-off count; and in `excluded`, judgments left out for them."""

    @property
    def failed(self) -> int:
        return sum(s.failed for s in self.stages.values())

    @property
    def not_sent(self) -> int:
        return sum(s.not_sent for s in self.stages.values())

    @property
    def excluded(self) -> int:
        return sum(s.excluded for s in self.stages.values())

    @property
    def cut_off(self) -> int:
        """Stored texts cut off at max_tokens (automation, assistance and worker stages)."""
        return sum(c.cut_off for k, c in self.stages.items() if k != "judging")

    @property
    def blocked(self) -> int:
        return sum(s.blocked for s in self.stages.values())

    @property
    def budget(self) -> int:
        return sum(s.budget for s in self.stages.values())

    @property
    def missing(self) -> int:
        return self.failed + self.not_sent + self.blocked + self.budget

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
    failed: frozenset[object] = frozenset()
    """Items whose call failed for good (ids, or (comparison id, judge, presentation)); stored."""
    cut_off: frozenset[str] = frozenset()
    """Ids of the stored outputs and assistance texts the provider cut off at max_tokens."""


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
            for mode in tournament_modes(session):
                for comp in comparisons(session, run, task, mode):
                    for judge in eligible_judges(session, comp):
                        for presentation, _ in presented_orders(session, comp, judge.name):
                            yield comp, judge.name, presentation


def _unanswered(item: object, facts: StoredFacts) -> str:
    """The outcome of an item with nothing stored although its inputs are."""
    if item in facts.not_sent:
        return "budget"
    return "failed" if item in facts.failed else "not_sent"


def session_outcomes(session: Session, facts: StoredFacts) -> Outcomes:
    """The outcome of every item the session plans (the counts `summarize` plans, item by item)."""
    out = Outcomes(
        judges={j.name: OutcomeCounts() for j in session.judges},
        modes={m: OutcomeCounts() for m in tournament_modes(session)},
        tasks={t: OutcomeCounts() for t in session.tasks},
        candidates={c: OutcomeCounts() for m in MODES for c in candidates_for(session, m)},
    )
    stages = out.stages
    workers = [w.name for _, w in worker_modes(session)] or [""]  # each worker of a panel writes its own
    imported = session.imported_names  # their outputs are imported, not generated: no stage item
    exclude = session.generation.on_truncated == "exclude"

    def text(stage: str, item: str, stored: frozenset[str], candidate: str | None, blocked: bool = False) -> None:
        cut = item in facts.cut_off
        outcome = "answered" if item in stored else "blocked" if blocked else _unanswered(item, facts)
        stages[stage].add(outcome, cut)
        if candidate is not None:
            out.candidates[candidate].add(outcome, cut)

    for run in range(1, session.runs + 1):
        for task in session.tasks:
            for name in session.generated_automation:
                text("automation", output_id(run, task, "automation", name, name), facts.outputs, name)
            for name in session.assistants:
                text("assistance", assistance_id(run, task, name), facts.assistance, None)
            for worker in workers:
                for name in candidates_for(session, "augmentation"):
                    if name in imported:
                        continue
                    oid = output_id(run, task, "augmentation", name, worker)
                    assistant = session.dialogue_assistant(name) or name  # a dialogue opens with its assistance text
                    blocked = name != PLAIN and assistance_id(run, task, assistant) not in facts.assistance
                    text("worker", oid, facts.outputs, name, blocked=blocked and oid not in facts.outputs)
    for comp, judge, presentation in _judgment_items(session):
        slot = (comp.id, judge, presentation)
        valid = facts.judgments.get(slot)
        ids = comparison_output_ids(session, comp)
        cut = [o in facts.cut_off for o in ids]
        if valid is not None:
            outcome = "answered" if valid else "invalid"
        elif any(o not in facts.outputs for o in ids):
            outcome = "blocked"
        elif exclude and any(cut):
            outcome = "excluded"
            for candidate, c in zip(comp.candidates, cut, strict=True):
                if c:
                    out.candidates[candidate].excluded += 1
        else:
            outcome = _unanswered(slot, facts)
        held = valid is not None and any(cut)
        stages["judging"].add(outcome, held)
        out.judges[judge].add(outcome, held)
        out.modes[comp.mode].add(outcome, held)
        out.tasks[comp.task].add(outcome, held)
    return out
