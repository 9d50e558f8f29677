"""Provides the progress counters the pipeline updates and the Protocol displays implement."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

from centaur_tui.domain.outcomes import Outcomes
from centaur_tui.domain.plan import STAGES


@dataclass
class StageProgress:
    """Counters of one stage. `done` includes items found already stored (`cached`)."""

    planned: int = 0
    done: int = 0
    cached: int = 0
    sent: int = 0
    failed: int = 0
    invalid: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True
    batched: int = 0
    """Calls answered through a provider's batch API (also counted in `sent`)."""
    in_batch: int = 0
    """Calls left waiting in a batch at the provider when the run stopped without waiting for it."""
    budget: int = 0
    """Calls not sent because they could pass the session's `max_cost_usd`."""
    cut_off: int = 0
    """Texts of this run the provider cut off at max_tokens (after any re-ask): judged marked or excluded."""
    cut_off_reasks: int = 0
    """Calls asked again with a larger max_tokens after a cut-off reply (generation.on_truncated = "reask")."""

    @property
    def left(self) -> int:
        return max(0, self.planned - self.done - self.failed - self.budget)


@dataclass
class BatchProgress:
    """One batch sent through a provider's batch API, as the run last saw it (displays read it)."""

    id: str
    stage: str
    model: str
    state: str
    """Ours: preparing, uploaded, creating, submitted, collected."""
    status: str | None
    """The provider's: validating, in_progress, finalizing, completed, failed, expired, cancelled."""
    requests: int
    completed: int = 0
    failed: int = 0
    message: str | None = None

    def line(self, model: bool = True) -> str:
        """One line for a display: id, stage, model (unless `model` is false), status and request counts."""
        shown = self.status or self.state
        where = f"{self.stage} {self.model}" if model else self.stage
        text = f"batch {self.id[:8]} {where}: {shown}, {self.completed:,}/{self.requests:,} done"
        if self.failed:
            text += f", {self.failed:,} failed"
        return text


@dataclass
class Progress:
    """Live state of a run; displays read it (on a timer) and never write it."""

    session: str
    simulated: bool
    stages: dict[str, StageProgress] = field(default_factory=lambda: {s: StageProgress() for s in STAGES})
    retries: int = 0
    timeouts: int = 0
    """Attempts that timed out (also counted in `retries` when sent again)."""
    timeouts_resent: int = 0
    """Timed-out attempts sent again: the provider may have processed the first one too, so maybe billed twice."""
    in_flight: int = 0
    started: float = field(default_factory=time.monotonic)
    finished: bool = False
    last_error: str | None = None
    interrupted: int = 0
    """Calls a previous run left in flight when it died (`kill -9`): sent again, maybe billed twice."""
    budget_stopped: bool = False
    """The run stopped sending because the next call could pass `max_cost_usd`."""
    spent: float | None = None
    """USD spent in the session so far (earlier runs included, the unanswered estimate too), when it has a budget."""
    unanswered_usd: float = 0.0
    """Of `spent`: USD estimated for requests the provider may have billed without an answer (earlier runs too)."""
    unanswered: int = 0
    """Requests billed without an answer, earlier runs included (timed out, broken, stopped or killed in flight)."""
    unanswered_unknown: int = 0
    """Of `unanswered`: requests with no estimate (sent without a budget)."""
    unanswered_causes: dict[str, int] = field(default_factory=dict)
    """`unanswered` by cause (timeout, broken, stopped, killed: store/outcomes.py UNANSWERED_CAUSES)."""
    over_reported: float = 0.0
    """USD the provider reported above the reservations of the calls it answered in this run (over-reporting)."""
    over_reports: int = 0
    outcomes: Outcomes | None = None
    """The outcome of every planned item, read from the store when the run has finished (None before)."""

    def missing(self, stage: str) -> int:
        """Planned items of a stage with nothing stored after the run (failed for good or blocked); 0 before the end."""
        return self.outcomes.stages[stage].missing if self.outcomes is not None else 0

    batches: dict[str, BatchProgress] = field(default_factory=dict)
    """Batches of this run and the ones it resumed, by id (batch mode)."""

    waiting: str | None = None
    """Set while the run waits for something other than a provider (another program's database lock)."""

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def cost(self) -> float:
        return sum(s.cost for s in self.stages.values())

    @property
    def tokens(self) -> int:
        return sum(s.prompt_tokens + s.completion_tokens for s in self.stages.values())


class ProgressSink(Protocol):
    """Anything that shows progress: the CLI's line printer, the TUI's timer, a test recorder."""

    def update(self, progress: Progress) -> None:
        """Called a few times a second during a run, and once at the end."""
