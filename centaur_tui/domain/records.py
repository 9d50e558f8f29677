"""Provides the records the pipeline stores and reads back: calls, texts, comparisons, judgments."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from centaur_tui.domain.blinding import Draft
from centaur_tui.domain.judgment import JudgeKind
from centaur_tui.domain.plan import Mode, candidate_output_id, question_output_id
from centaur_tui.domain.session import Session

# The columns of a judgments export (judgments.csv) and of its scores (scores.csv): what
# `centaur export` writes, what `centaur import` reads, and what the statistics' frames hold.
REQUIRED_JUDGMENT_COLUMNS = (
    "run",
    "task",
    "mode",
    "comparison_id",
    "judge",
    "judge_kind",
    "judge_family",
    "option1",
    "option2",
    "winner",
    "option1_mean",
    "option2_mean",
    "valid",
    "invalid_reason",
    "rationale",
)
"""The documented columns of judgments.csv, each required on import."""
OPTIONAL_JUDGMENT_COLUMNS = ("judgment_id", "presentation", "revision", "attempts", "seconds", "batch")
"""Written by every export so that it re-imports exactly (batch: answered in a provider batch); optional on import."""
SCORE_COLUMNS = ("comparison_id", "judge", "candidate", "dimension", "dimension_kind", "score", "judgment_id")
"""The columns of scores.csv and of the statistics' score frame."""


@dataclass(frozen=True)
class CallRecord:
    """One answered provider call, kept so that it is never sent (or paid for) again."""

    key: str
    stage: str
    model: str
    sample: str
    messages_json: str
    params_json: str
    response: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None
    latency_s: float
    attempts: int
    simulated: bool
    finish_reason: str | None = None  # the provider's stop reason: "stop", "length" (cut at max_tokens), ...
    served_model: str | None = None  # the model the provider says answered (a fallback may differ from `model`)
    cached_tokens: int | None = None  # prompt tokens served from the provider's prompt cache (None: none reported)
    deployment: str | None = None  # the deployment that answered (None: the entry has no deployments)


TIMEOUT_ERRORS = ("Timeout", "TimeoutError")
"""`error_type` of a timed-out attempt: litellm's `Timeout`, or `TimeoutError` from the gateway's own guard.
A timed-out request may have been processed (and billed) by the provider."""


@dataclass(frozen=True)
class CallFailure:
    """One failed attempt of a call (kept for audit; the call is retried or re-sent later)."""

    key: str
    stage: str
    model: str
    attempt: int
    error_type: str
    message: str
    final: bool
    finish_reason: str | None = None  # the provider's stop reason, for a reply that was not an answer
    maybe_billed: bool = False
    """The request reached the provider and got no usable answer (a timeout, a body cut or broken,
    a reply that is no answer): the provider may have billed it (llm.gateway.maybe_billed)."""


@dataclass(frozen=True)
class AssistanceRecord:
    id: str
    run: int
    task: str
    assistant: str
    text: str
    call_key: str
    cut_off: bool = False
    """The provider cut the text off at max_tokens (domain/cutoff.py)."""
    cut_off_reasks: int = 0
    """Times it was asked again with a larger max_tokens after a cut-off reply."""


@dataclass(frozen=True)
class OutputRecord:
    """One deliverable of (run, task, mode, candidate, worker)."""

    id: str
    run: int
    task: str
    mode: str
    candidate: str
    worker: str
    text: str
    assistance_id: str | None
    call_key: str | None
    worker_kind: Literal["model", "expert"] = "model"
    cut_off: bool = False
    """The provider cut the deliverable off at max_tokens (domain/cutoff.py); never judged as if complete."""
    cut_off_reasks: int = 0
    """Times it was asked again with a larger max_tokens after a cut-off reply."""


@dataclass(frozen=True)
class ComparisonRecord:
    id: str
    run: int
    task: str
    mode: str
    candidate_a: str
    candidate_b: str
    output_a: str
    output_b: str
    question: str | None = None
    """The question of a generic task's comparison (imported data); None for a task of a file."""
    prompt: str | None = None
    """The prompt text of that question, kept with the comparison (the generic task has none of its own)."""


@dataclass(frozen=True)
class ScoreRecord:
    candidate: str
    dimension: str
    dimension_kind: Literal["task", "general"]
    score: int


@dataclass(frozen=True)
class JudgmentRecord:
    """One judge's verdict on one comparison, valid or not; option1/option2 in presented order."""

    comparison_id: str
    judge: str
    judge_kind: JudgeKind
    judge_family: str | None
    presentation: int
    option1: str
    option2: str
    winner: str | None
    option1_mean: float | None
    option2_mean: float | None
    valid: bool
    invalid_reason: str | None
    rationale: str | None
    call_key: str | None
    attempts: int
    scores: tuple[ScoreRecord, ...] = field(default_factory=tuple)
    revision: int = 0
    seconds: float | None = None
    id: int | None = None
    active_seconds: float | None = None
    """Experts: time on the comparison without idle periods (None: not measured, e.g. LLM judges)."""
    lower_average_confirmed: bool | None = None
    """Experts: the winner has the lower rubric average and the expert confirmed it (True), the winner does not
    have the lower average (False), or it has and no confirmation was recorded (None; also LLM judges)."""
    pasted_chars: int | None = None
    """Experts: characters of the rationale that came from a paste (at most its length; None: not recorded)."""


@dataclass(frozen=True)
class RowTable:
    """The rows of one large read as tuples, with their column names (no dict per row).

    The report reads about 15,000 judgments and 6,300 comparisons at the paper's scale; as
    tuples they are read and turned into frames in about half the time of dicts.
    """

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]

    def __len__(self) -> int:
        return len(self.rows)

    def dicts(self) -> list[dict[str, Any]]:
        """The rows as dicts (for callers that want them)."""
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows]


@dataclass(frozen=True)
class ImportedOutput:
    """One output read from a file, for an imported candidate (`centaur import-outputs`, a winner-only file).

    `text` is None while the file is only checked (formats/outputs.py keeps its digest instead, so a
    large file is never held in memory); the texts are read again as they are stored.
    """

    line: int
    run: int
    task: str
    mode: Mode
    candidate: str
    worker: str
    text: str | None
    assistance_text: str | None = None
    digest: str = ""
    """SHA-256 of text and assistance text, as first read (a file changed between reads is refused)."""
    cut_off: bool = False
    """The text was cut off at a token limit (`cut_off` column): stored and handled as a generated one would be."""
    question: str | None = None
    """The question it answers, under a generic task (None: the task's own prompt)."""

    def id(self, session: Session) -> str:
        """The output's id in `session` (derived from run, task, mode and candidate, as for generated ones)."""
        if self.question is not None:
            return question_output_id(self.run, self.task, self.mode, self.candidate, self.question)
        return candidate_output_id(session, self.run, self.task, self.mode, self.candidate)


@dataclass(frozen=True)
class PacketResult:
    """One result or draft a judging packet brings back, checked (formats/packet.py), ready to merge."""

    token: str
    kind: Literal["result", "draft"]
    label: str
    """The item as messages name it: "item 3 (token p...) result"."""
    draft: Draft
    version: int = 0


# The typed rows of the store's tidy reads (`Store.judgment_rows`, `score_rows`, `output_rows`,
# `error_rows`). Their fields are the reads' columns in the export's column order: `as_row()`
# gives them as a dict in that order, for the writers of CSV and JSON.


@dataclass(frozen=True, slots=True)
class JudgmentRow:
    """One tidy judgment (valid or not) with its tournament: a row of judgments.csv (less `batch`)."""

    run: int
    task: str
    mode: str
    comparison_id: str
    judge: str
    judge_kind: JudgeKind
    judge_family: str | None
    option1: str
    option2: str
    winner: str | None
    option1_mean: float | None
    option2_mean: float | None
    valid: bool
    invalid_reason: str | None
    rationale: str | None
    judgment_id: int
    presentation: int
    revision: int
    attempts: int
    seconds: float | None

    def as_row(self) -> dict[str, object]:
        """The fields as a dict, in `JUDGMENT_ROW_FIELDS` order."""
        return {name: getattr(self, name) for name in JUDGMENT_ROW_FIELDS}


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """One rubric score of one option in one judgment: a row of scores.csv (`SCORE_COLUMNS`)."""

    comparison_id: str
    judge: str
    candidate: str
    dimension: str
    dimension_kind: Literal["task", "general"]
    score: int
    judgment_id: int

    def as_row(self) -> dict[str, object]:
        """The fields as a dict, in `SCORE_COLUMNS` order."""
        return {name: getattr(self, name) for name in SCORE_COLUMNS}


@dataclass(frozen=True, slots=True)
class OutputRow:
    """One stored output with its assistance text: a row of outputs.csv."""

    run: int
    task: str
    mode: str
    candidate: str
    worker: str
    text: str
    assistance_text: str | None
    output_id: str
    cut_off: bool

    def as_row(self) -> dict[str, object]:
        """The fields as a dict, in `OUTPUT_ROW_FIELDS` order."""
        return {name: getattr(self, name) for name in OUTPUT_ROW_FIELDS}


@dataclass(frozen=True, slots=True)
class CallErrorRow:
    """One failed attempt of a provider call, as stored in `call_errors`."""

    id: int
    key: str
    stage: str
    model: str
    attempt: int
    error_type: str
    message: str
    final: bool
    created_at: str
    finish_reason: str | None


@dataclass(frozen=True, slots=True)
class InvalidJudgmentRow:
    """One invalid judgment with where it belongs, for the list of what the statistics left out."""

    id: int
    run: int
    task: str
    mode: str
    candidate_a: str
    candidate_b: str
    judge: str
    judge_kind: JudgeKind
    attempts: int
    invalid_reason: str | None


@dataclass(frozen=True, slots=True)
class StoreCounts:
    """Totals of one session's database for progress displays (`Store.counts`)."""

    calls: int
    calls_by_stage: dict[str, int]
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    """Summed over the calls with a known cost (None: no call has one)."""
    call_errors: int
    """Failed attempts logged."""
    timeouts: int
    """Failed attempts that timed out (`TIMEOUT_ERRORS`): the provider may have billed them."""
    assistance_texts: int
    outputs: int
    comparisons: int
    judgments: int
    valid_judgments: int
    invalid_judgments: int


JUDGMENT_ROW_FIELDS = tuple(f.name for f in fields(JudgmentRow))
"""The columns of `JudgmentRow`, in order: REQUIRED_JUDGMENT_COLUMNS, then judgment_id .. seconds."""
OUTPUT_ROW_FIELDS = tuple(f.name for f in fields(OutputRow))
"""The columns of `OutputRow` and of outputs.csv, in order."""
CALL_ERROR_ROW_FIELDS = tuple(f.name for f in fields(CallErrorRow))
"""The columns of `CallErrorRow` (those of `call_errors`), in order."""
