"""Provides the session model: which tasks, models, worker, judges, runs and seed a study uses."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from centaur_tui.domain.adjudication import AdjudicateWhen
from centaur_tui.domain.report_options import REPORT_DEFAULTS, PPRMethod
from centaur_tui.domain.task import MAX_LABEL, SLUG, Strict

PLAIN = "plain"
"""Candidate name of the unaided worker in augmentation tournaments."""

# Upper bounds of a session's sizes: far above any study of the paper (3 runs, 12 tasks, 8 models,
# 3 judges) yet low enough that planning stays small in memory (`runs = 10**7` ran out of it).
MAX_RUNS = 1000
MAX_TASKS = 500
MAX_MODELS = 64
MAX_JUDGES = 32
MAX_EXPERTS = 10_000
MAX_TOKENS = 1_000_000
MAX_DIALOGUE_TURNS = 20
"""Most assistant turns of a dialogue (2 (N - 1) calls each; 20 turns is 38 calls per dialogue)."""

EXPERT_ID = r"^[A-Za-z0-9][A-Za-z0-9_.@:-]*$"
"""An expert id: letters, digits and `_ . @ : -`, starting with a letter or digit, so that ids published
with data (UUIDs, `arena_user_973`, `author_2`) are kept as they are; no space, quote, slash or control."""


class SkillTable(Strict):
    """A skill in [0, 1] per task for a simulated model, with a default for other tasks."""

    default: float = Field(0.5, strict=True, ge=0.0, le=1.0)
    tasks: dict[str, float] = Field(default_factory=dict, max_length=1000)

    @field_validator("tasks")
    @classmethod
    def _in_range(cls, v: dict[str, float]) -> dict[str, float]:
        for task, skill in v.items():
            if not 0.0 <= skill <= 1.0:
                raise ValueError(f"skill for task {task!r} must be between 0 and 1, got {skill}")
        return v

    def for_task(self, task_id: str) -> float:
        return self.tasks.get(task_id, self.default)


class ModelSimulation(Strict):
    """Knobs of a simulated candidate model (used only for `simulated/...` model strings)."""

    automation_skill: SkillTable = Field(default_factory=SkillTable)
    coaching_skill: SkillTable = Field(default_factory=SkillTable)
    specificity: float | None = Field(
        None,
        strict=True,
        ge=0.0,
        le=1.0,
        description="Share of the requirements it points at that it makes specific (default: its coaching skill). "
        "Specific pointers deepen what a worker already covers; broad ones widen what it covers: which helps more "
        "depends on the worker (issue 28).",
    )
    dialogue_skill: SkillTable | None = Field(
        None,
        description=(
            "How well it answers a worker's questions in a dialogue ([augmentation] turns > 1); "
            "default: its coaching_skill. Left out of the call address when unset (old keys stay valid)."
        ),
    )
    style: int = Field(
        0,
        strict=True,
        ge=0,
        le=4,
        description="Layout of its deliverables (issue 26): 0 the house layout, 1-4 others; never other words.",
    )


class WorkerSimulation(Strict):
    """Knobs of the simulated worker."""

    skill: SkillTable = Field(default_factory=SkillTable)
    uses_specifics: float = Field(
        1.0,
        strict=True,
        ge=0.0,
        le=1.0,
        description="Chance the worker acts on a 'be specific' pointer: a weak worker gains from broad guidance, "
        "a strong one from specific guidance, so the best assistant depends on the worker (issue 28).",
    )


class JudgeBias(Strict):
    """Planted preferences of a simulated judge that the simulated experts do not share (issue 25 item 5).

    Each adds rubric points to every score of an option, so the judge's verdicts (and scores)
    drift from the experts' in a known direction; a SIMULATION of the biases reported for real
    LLM judges (verbosity, formatting, self-preference), not a model of any one judge.
    """

    length: float = Field(
        0.0,
        strict=True,
        ge=-5.0,
        le=5.0,
        description="Points per doubling of an option's length relative to the other option (log2 of the ratio).",
    )
    format: float = Field(
        0.0,
        strict=True,
        ge=-5.0,
        le=5.0,
        description="Points for more formatting (headings, list items, bold) than the other option: x tanh(extra/5).",
    )
    family: dict[str, float] = Field(
        default_factory=dict,
        max_length=64,
        description="Points added to an option written (or, in augmentation, guided) by a family, per family.",
    )

    @field_validator("family", mode="before")
    @classmethod
    def _family_points(cls, v: object) -> object:
        if not isinstance(v, dict):
            return v  # the type check says what is wrong
        for family, points in v.items():
            if isinstance(points, bool) or not isinstance(points, (int, float)) or not -5.0 <= points <= 5.0:
                raise ValueError(f"family bias for {family!r} must be a number of points in [-5, 5], got {points!r}")
        return {k: float(x) for k, x in v.items()}

    @property
    def planted(self) -> bool:
        return bool(self.length or self.format or any(self.family.values()))


class JudgeSimulation(Strict):
    """Knobs of a simulated judge: score noise (SD in rubric points) and position bias."""

    noise: float = Field(0.8, strict=True, ge=0.0, le=10.0, description="SD of the Gaussian noise added to each score.")
    position_bias: float = Field(
        0.0,
        strict=True,
        ge=-5.0,
        le=5.0,
        description="Rubric points added to the option shown first (negative: second).",
    )
    tie_margin: float = Field(
        0.15, strict=True, ge=0.0, le=5.0, description="Average gap below which the judge calls a tie."
    )
    bias: JudgeBias = Field(
        default_factory=lambda: JudgeBias(),
        description="Planted preferences the simulated experts do not share (length, format, family).",
    )
    flip: float = Field(
        0.0, strict=True, ge=0.0, le=1.0, description="Share of decided verdicts the judge reverses (seeded)."
    )
    flaw_check: float = Field(
        0.0,
        strict=True,
        ge=0.0,
        le=10.0,
        description="Rubric points taken off an option per flaw the judge finds by checking it against the task "
        "(a number the task does not give, a requirement said not to apply): 0 = it never checks (issue 26's exam).",
    )


class Faults(Strict):
    """Faults the simulated provider injects, for tests and benchmarks."""

    latency_s: float = Field(0.0, strict=True, ge=0.0, le=600.0, description="Mean latency of each call in seconds.")
    latency_jitter: float = Field(
        0.0, strict=True, ge=0.0, le=1.0, description="Latency varies uniformly by +/- this share."
    )
    error_rate: float = Field(
        0.0, strict=True, ge=0.0, le=1.0, description="Share of attempts failing with a transient error."
    )
    invalid_reply_rate: float = Field(
        0.0, strict=True, ge=0.0, le=1.0, description="Share of judge replies that are invalid."
    )


RESERVED_PARAMS = {
    "api_key": "keys come from the environment only (name the variable with api_key_env)",
    "key": "keys come from the environment only (name the variable with api_key_env)",
    "api_base": "set api_base on the entry itself",
    "base_url": "set api_base on the entry itself",
    "model": "set model on the entry itself",
    "messages": "messages are built from the task and universal prompts",
    "timeout": "set timeout_s under [limits]",
    "num_retries": "retries are set by max_retries under [limits]",
    "max_retries": "retries are set by max_retries under [limits]",
    "metadata": "metadata is set by the pipeline",
}
"""Parameters a session entry may not pass to litellm, with where to set them instead."""


MAX_RPM = 10_000_000
MAX_TPM = 10_000_000_000
MAX_PRICE_PER_MTOK = 100_000.0
MAX_BUDGET_USD = 100_000_000.0


class Deployment(Strict):
    """One more place that serves an entry's model: another key, region or api_base.

    The gateway spreads an entry's calls over its deployments (the entry itself is the first);
    all of them serve the same entry, so a judge never falls back to another family's model.
    """

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", max_length=MAX_LABEL, description="Label stored with each call.")
    model: str | None = Field(
        None, min_length=3, max_length=MAX_LABEL, description="Model string here (default: the entry's)."
    )
    api_base: str | None = Field(None, max_length=2000, pattern=r"^https?://\S+$")
    api_key_env: str | None = Field(None, pattern=r"^[A-Z_][A-Z0-9_]*$", max_length=MAX_LABEL)
    params: dict[str, float | int | str | bool] = Field(default_factory=dict, max_length=32)
    rpm: int | None = Field(None, strict=True, ge=1, le=MAX_RPM, description="Requests per minute here.")
    tpm: int | None = Field(None, strict=True, ge=1, le=MAX_TPM, description="Tokens per minute here.")

    @field_validator("params")
    @classmethod
    def _plain_params(cls, v: dict[str, float | int | str | bool]) -> dict[str, float | int | str | bool]:
        return _check_params(v)

    @field_validator("model")
    @classmethod
    def _has_provider(cls, v: str | None) -> str | None:
        if v is not None and "/" not in v:
            raise ValueError(f"{v!r} needs a provider prefix, e.g. openai/{v} (any litellm model string)")
        return v


def _check_params(v: dict[str, float | int | str | bool]) -> dict[str, float | int | str | bool]:
    for name, value in v.items():
        if name in RESERVED_PARAMS:
            raise ValueError(f"{name!r} cannot be set in params: {RESERVED_PARAMS[name]}")
        if isinstance(value, str) and len(value) > 1000:
            raise ValueError(f"params.{name} is {len(value):,} characters long (at most 1,000)")
    return v


class Endpoint(Strict):
    """How to reach one model through litellm. Keys come from the environment, never from here."""

    model: str = Field(
        min_length=3, max_length=MAX_LABEL, description="Any litellm model string, e.g. openai/gpt-4.1 or simulated/x."
    )
    api_base: str | None = Field(
        None, max_length=2000, pattern=r"^https?://\S+$", description="Base URL of an OpenAI-compatible server, if any."
    )
    api_key_env: str | None = Field(
        None,
        pattern=r"^[A-Z_][A-Z0-9_]*$",
        max_length=MAX_LABEL,
        description="Environment variable holding the key, if not litellm's default.",
    )
    params: dict[str, float | int | str | bool] = Field(
        default_factory=dict,
        max_length=32,
        description="Extra litellm parameters for this model (e.g. reasoning_effort).",
    )
    batch_input_cost_per_mtok: float | None = Field(
        None, strict=True, ge=0.0, description="USD per million input tokens sent through a batch (batch mode)."
    )
    batch_output_cost_per_mtok: float | None = Field(
        None, strict=True, ge=0.0, description="USD per million output tokens answered in a batch (batch mode)."
    )
    input_cost_per_mtok: float | None = Field(
        None, strict=True, ge=0.0, le=MAX_PRICE_PER_MTOK, description="USD per million input tokens."
    )
    output_cost_per_mtok: float | None = Field(
        None, strict=True, ge=0.0, le=MAX_PRICE_PER_MTOK, description="USD per million output tokens."
    )
    cached_input_cost_per_mtok: float | None = Field(
        None,
        strict=True,
        ge=0.0,
        le=MAX_PRICE_PER_MTOK,
        description="USD per million cached input tokens (default: the input price).",
    )
    rpm: int | None = Field(
        None, strict=True, ge=1, le=MAX_RPM, description="Requests per minute the provider allows this model."
    )
    tpm: int | None = Field(
        None, strict=True, ge=1, le=MAX_TPM, description="Tokens per minute (input + max_tokens) it allows."
    )
    deployments: tuple[Deployment, ...] = Field(
        (), max_length=16, description="More keys, regions or api bases serving this entry's model."
    )

    @property
    def priced(self) -> bool:
        """Whether the session gives this entry's token prices (they then win over litellm's map)."""
        return self.input_cost_per_mtok is not None and self.output_cost_per_mtok is not None

    @field_validator("deployments")
    @classmethod
    def _unique_deployments(cls, v: tuple[Deployment, ...]) -> tuple[Deployment, ...]:
        names = [d.name for d in v]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate deployment names: {', '.join(dupes)}")
        return v

    @property
    def simulated(self) -> bool:
        return self.model.startswith("simulated/")

    @field_validator("params")
    @classmethod
    def _plain_params(cls, v: dict[str, float | int | str | bool]) -> dict[str, float | int | str | bool]:
        return _check_params(v)

    @field_validator("model")
    @classmethod
    def _has_provider(cls, v: str) -> str:
        if "/" not in v:
            raise ValueError(f"{v!r} needs a provider prefix, e.g. openai/{v} (any litellm model string)")
        return v


class ModelSpec(Endpoint):
    """A candidate model: a solver in automation and/or an assistant in augmentation."""

    name: str = Field(
        min_length=1, max_length=MAX_LABEL, description="Display name, e.g. GPT-5-Mini; unique in the session."
    )
    family: str = Field(
        min_length=1, max_length=MAX_LABEL, description="Provider family, for leave-family-out judging."
    )
    automation: bool = Field(True, strict=True)
    augmentation: bool = Field(True, strict=True)
    release_order: int | None = Field(
        None,
        strict=True,
        ge=-1_000_000,
        le=1_000_000,
        description="Order within its family for criterion validity (1 = oldest).",
    )
    simulation: ModelSimulation = Field(default_factory=ModelSimulation)


class WorkerSpec(Endpoint):
    """The fixed worker that writes deliverables in augmentation."""

    name: str = Field(min_length=1, max_length=MAX_LABEL)
    family: str = Field(min_length=1, max_length=MAX_LABEL)
    simulation: WorkerSimulation = Field(default_factory=WorkerSimulation)


class JudgeSpec(Endpoint):
    """An LLM judge. It never judges a comparison holding an output of its own family."""

    name: str = Field(min_length=1, max_length=MAX_LABEL)
    family: str = Field(
        min_length=1, max_length=MAX_LABEL, description="Provider family; required for leave-family-out."
    )
    simulation: JudgeSimulation = Field(default_factory=JudgeSimulation)


class ExpertSpec(Strict):
    """A person who may judge (or work) in the app."""

    id: str = Field(pattern=EXPERT_ID, max_length=MAX_LABEL)
    name: str = Field(min_length=1, max_length=MAX_LABEL)
    tasks: tuple[str, ...] = Field(
        default=(), max_length=MAX_TASKS, description="Tasks the expert may judge; empty = all."
    )
    adjudicator: bool = Field(
        False,
        strict=True,
        description="The expert adjudicates disagreements (`centaur adjudicate --as ID`); else the organiser does.",
    )


IMPORTED = "imported"
"""`source` of a candidate whose outputs come from a file (`centaur import-outputs`), never generated."""


class ImportedCandidate(Strict):
    """A candidate whose outputs are made elsewhere and imported (`[[candidates]]`, `source = "imported"`).

    It takes part in the tournaments of its modes like a model, but no call is sent for it:
    `centaur import-outputs` stores its outputs and the pipeline only judges them.
    """

    name: str = Field(
        min_length=1, max_length=MAX_LABEL, description="Candidate name, unique among models and candidates."
    )
    source: Literal["imported"] = Field(description='Where its outputs come from: "imported" (a file).')
    family: str = Field(
        min_length=1, max_length=MAX_LABEL, description="Provider family, for leave-family-out judging."
    )
    automation: bool = Field(True, strict=True)
    augmentation: bool = Field(False, strict=True)
    release_order: int | None = Field(None, strict=True, ge=-1_000_000, le=1_000_000)
    professional: bool = Field(
        False,
        strict=True,
        description="Its outputs are a human professional's deliverables: the report's bar (wins + ties against it).",
    )


class HumanWorkerArm(Strict):
    """Experts as workers: who writes deliverables for which tasks, with whose assistance texts."""

    experts: tuple[str, ...] = Field(
        min_length=1, max_length=MAX_EXPERTS, description="Expert ids (from [[experts]]) who write deliverables."
    )
    tasks: tuple[str, ...] = Field(
        min_length=1, max_length=MAX_TASKS, description="Task ids of this session the experts work on."
    )
    assistants: tuple[str, ...] = Field(
        default=(), max_length=MAX_MODELS, description="Assistant models whose assistance texts are used."
    )
    include_plain: bool = Field(True, strict=True, description="Include the plain condition (no assistance text).")

    @property
    def conditions(self) -> tuple[str, ...]:
        """The conditions of the arm: the assistants, then plain when included."""
        return (*self.assistants, PLAIN) if self.include_plain else self.assistants


CallMode = Literal["online", "batch"]
OnTruncated = Literal["reask", "judge_marked", "exclude"]
"""What happens to a deliverable (or assistance text) the provider cut off at `max_tokens` (domain/cutoff.py)."""
"""How a stage's calls are sent: one request each (`online`) or through the provider's batch API (`batch`)."""

BATCH_PROVIDERS = ("openai", "azure", "vertex_ai", "bedrock", "hosted_vllm", "litellm_proxy")
"""litellm providers whose Files and Batches APIs litellm's batch SDK routes (`acreate_file`, `acreate_batch`,
`aretrieve_batch`, `afile_content`); the prefix of a model string names its provider."""


class GenerationParams(Strict):
    """Sampling parameters of generation calls (automation, assistance, worker)."""

    temperature: float = Field(1.0, strict=True, ge=0.0, le=2.0)
    max_tokens: int = Field(4000, strict=True, ge=16, le=MAX_TOKENS)
    mode: CallMode = Field("online", description="'batch' sends generation calls through the provider's batch API.")
    on_truncated: OnTruncated = Field(
        "reask",
        description="A text cut off at max_tokens: 'reask' sends it again with max_tokens doubled, up to "
        "max_tokens_cap (a text still cut off at the cap is judged marked); 'judge_marked' keeps it and tells judges "
        "and experts it was cut off; 'exclude' keeps it out of every comparison (counted as excluded).",
    )
    max_tokens_cap: int | None = Field(
        None,
        strict=True,
        ge=16,
        le=MAX_TOKENS,
        description="Cap of max_tokens for re-asking a cut-off text (on_truncated = 'reask'; default 4 x max_tokens).",
    )

    @property
    def reask_cap(self) -> int:
        """`max_tokens_cap`, or 4 x `max_tokens` when it is not set."""
        return self.max_tokens_cap if self.max_tokens_cap is not None else 4 * self.max_tokens


class JudgingParams(Strict):
    """How judges are asked and how their replies are checked."""

    temperature: float = Field(0.0, strict=True, ge=0.0, le=2.0)
    max_tokens: int = Field(2000, strict=True, ge=16, le=MAX_TOKENS)
    mode: CallMode = Field("online", description="'batch' sends judge calls through the provider's batch API.")
    orders: Literal["one", "both"] = Field("one", description="'both' judges each pair in both presented orders.")
    allow_ties: bool = Field(True, strict=True)
    max_invalid_retries: int = Field(2, strict=True, ge=0, le=10, description="Re-asks after an invalid reply.")
    reask_max_tokens: int | None = Field(
        None,
        strict=True,
        ge=16,
        le=MAX_TOKENS,
        description="Cap of max_tokens for re-asking a judge whose reply was cut off at max_tokens: each such re-ask "
        "doubles the limit up to this (default 4 x max_tokens); a reply cut off at the cap is not re-asked.",
    )
    reask_temperature_step: float = Field(
        0.2,
        strict=True,
        ge=0.0,
        le=1.0,
        description="Temperature added per re-ask of an invalid reply (at most 2.0), so that a deterministic judge "
        "(temperature 0) can answer differently; 0 keeps the temperature. Re-asks also get a new seed where the "
        "provider takes one.",
    )
    structured_output: bool = Field(True, strict=True, description="Ask for JSON via response_format where supported.")
    plain_family: str | None = Field(
        None, max_length=MAX_LABEL, description="Family of the plain candidate (None: no family)."
    )
    expert_min_rationale: int = Field(
        20, strict=True, ge=0, le=2000, description="Characters an expert's rationale needs at least."
    )
    expert_max_masks: int | None = Field(
        None,
        strict=True,
        ge=0,
        le=1_000_000,
        description="Set a comparison aside from expert queues when masking its two outputs replaces more than this "
        "many identity phrases (None: no limit), as Chatbot Arena drops battles with a leaked identity.",
    )
    expert_guidelines: str | None = Field(
        None,
        max_length=1000,
        description="Markdown file of guidelines for experts, relative to the session file; shown before the first "
        "comparison and on a key (None: no guidelines).",
    )
    expert_practice: int = Field(
        0,
        strict=True,
        ge=0,
        le=20,
        description="Practice comparisons at the head of each expert's queue, each followed by its reference verdict; "
        "never counted (stored apart from judgments).",
    )
    expert_gold_rate: float = Field(
        0.0,
        strict=True,
        ge=0.0,
        le=0.5,
        description="Gold checks per assigned comparison mixed into each expert's queue (a deliverable against a "
        "degraded copy of itself; the intact one should win); never counted in statistics.",
    )
    expert_min_gold_pass: float | None = Field(
        None,
        strict=True,
        ge=0.0,
        le=1.0,
        description="The report leaves out experts whose gold-check pass rate is below this (None: keep everyone).",
    )
    adjudicate: AdjudicateWhen = Field(
        "experts",
        description="Which disagreements go to the adjudicator's queue: 'experts' (two experts gave different "
        "verdicts) or 'experts_and_panel' (also an expert against the LLM panel's majority verdict).",
    )
    expert_next: Literal["none", "active"] = Field(
        "none",
        description="What an expert who finishes their queue gets: 'active' draws the next comparison by active "
        "allocation (its probability stored, as `centaur assign --strategy active`); 'none' ends the queue (an "
        "expert whose latest place was drawn actively is refilled anyway).",
    )
    expert_idle_s: float = Field(
        60.0,
        strict=True,
        ge=5.0,
        le=3600.0,
        description="Seconds without a key or click after which time on a comparison stops counting as active.",
    )
    exam_per_kind: int = Field(
        2,
        strict=True,
        ge=1,
        le=100,
        description="Admission exam (`centaur exam`): planted-flaw pairs per task and flaw kind, each asked of every "
        "LLM judge in both orders.",
    )
    admit_min_accuracy: float | None = Field(
        None,
        strict=True,
        ge=0.0,
        le=1.0,
        description="Admission exam: the position-consistent accuracy a judge needs (None: no minimum); the report "
        "names every judge below it.",
    )
    admit_enforce: bool = Field(
        False,
        strict=True,
        description="Leave the judges below admit_min_accuracy out of every statistic (the report says who and why); "
        "false: only report them.",
    )

    @model_validator(mode="after")
    def _admission(self) -> JudgingParams:
        if self.admit_enforce and self.admit_min_accuracy is None:
            raise ValueError("admit_enforce = true needs admit_min_accuracy (the accuracy a judge must reach)")
        return self

    @property
    def reask_cap(self) -> int:
        """`reask_max_tokens`, or 4 x `max_tokens` when it is not set."""
        return self.reask_max_tokens if self.reask_max_tokens is not None else 4 * self.max_tokens


class StatisticsParams(Strict):
    """Defaults of the report's statistics that a study fixes in advance (`centaur report` flags override them)."""

    alt_epsilon: float = Field(
        REPORT_DEFAULTS.alt_epsilon,
        strict=True,
        ge=0.0,
        le=1.0,
        description="Alt-test cost-benefit margin (0.2 experts, 0.1 crowd).",
    )
    alt_min_experts_per_item: int = Field(
        REPORT_DEFAULTS.alt_min_experts_per_item,
        strict=True,
        ge=2,
        le=1000,
        description="Alt-test: fewest experts on a comparison (the authors allow 2).",
    )
    ppr_alpha: float = Field(
        REPORT_DEFAULTS.ppr_alpha,
        strict=True,
        gt=0.0,
        lt=1.0,
        description="Prediction-powered rank-sets: coverage >= 1 - alpha.",
    )
    ppr_method: PPRMethod = Field(REPORT_DEFAULTS.ppr_method, description="Rank-sets' simultaneous intervals.")


class StudyParams(Strict):
    """When a study has answered its question (`centaur status`, the results screen's stopping panel)."""

    equivalence_margin: float = Field(
        0.1,
        strict=True,
        gt=0.0,
        lt=1.0,
        description="Two candidates are 'equivalent' when the expert win-rate difference P(i wins) - P(j wins) is "
        "surely inside (-margin, margin); 0.1 = win probabilities within 0.45-0.55 without ties.",
    )
    stop_alpha: float = Field(
        0.05,
        strict=True,
        gt=0.0,
        lt=1.0,
        description="Error level of the anytime-valid confidence sequences, per pair, over every look.",
    )


class Limits(Strict):
    """Concurrency, timeouts and retries of provider calls."""

    concurrency: int = Field(16, strict=True, ge=1, le=1024, description="Calls in flight at once, overall.")
    per_model_concurrency: int = Field(8, strict=True, ge=1, le=1024, description="Calls in flight at once per model.")
    timeout_s: float = Field(180.0, strict=True, gt=0.0, le=3600.0, description="Per-call timeout in seconds.")
    max_retries: int = Field(
        4, strict=True, ge=0, le=20, description="Retries of transient errors (rate limit, timeout, 5xx)."
    )
    max_timeout_retries: int = Field(
        1,
        strict=True,
        ge=0,
        le=20,
        description="Of those, retries after a timeout: a timed-out request may have been processed and billed.",
    )
    backoff_base_s: float = Field(
        1.0, strict=True, ge=0.0, le=600.0, description="First backoff; doubles each retry, with jitter."
    )
    backoff_max_s: float = Field(
        60.0,
        strict=True,
        ge=0.0,
        le=3600.0,
        description="Longest wait before a retry, also when the server's Retry-After asks for more.",
    )
    max_cost_usd: float | None = Field(
        None,
        strict=True,
        ge=0.0,
        le=MAX_BUDGET_USD,
        description="Budget of the whole session in USD: no call is sent that could pass it (None: no budget).",
    )


class BatchSettings(Strict):
    """How calls of a stage in batch mode are sent, waited for and priced (`[batch]` of a session)."""

    poll_interval_s: float = Field(
        30.0, strict=True, ge=0.0, le=3600.0, description="Seconds between two status checks of a batch in flight."
    )
    wait: bool = Field(
        True,
        strict=True,
        description="Wait until every batch has ended; false: submit, check once and stop leaving batches in flight "
        "(exit status 4), `centaur run` again collects them.",
    )
    collect_s: float = Field(
        10.0,
        strict=True,
        ge=0.0,
        le=3600.0,
        description="A batch is sent once no new call joined it for this long (or it holds max_requests): judge "
        "calls arrive as tournaments finish, and a longer wait gathers them into fewer batches.",
    )
    max_requests: int = Field(
        50_000, strict=True, ge=1, le=50_000, description="Requests in one batch at most (OpenAI's limit: 50,000)."
    )
    discount: float = Field(
        0.5,
        strict=True,
        ge=0.0,
        le=1.0,
        description="Batch price as a share of the online price, for models with no batch price in the session or "
        "in litellm's price map.",
    )
    unsupported: Literal["refuse", "online"] = Field(
        "refuse",
        description="A model in batch mode whose provider has no batch API: 'refuse' the session (exit status 2) "
        "or send its calls 'online'.",
    )


def _check_candidate_names(names: list[str], what: str) -> None:
    """Names of one list of candidates (models, imported candidates): unique, and never the unaided worker's."""
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"duplicate {what} names: {', '.join(dupes)}")
    if PLAIN in names:
        raise ValueError(f"{PLAIN!r} is reserved for the unaided worker")


class AugmentationParams(Strict):
    """How assistance reaches the worker: one assistance text (turns = 1), or a dialogue of up to `turns` turns."""

    turns: int = Field(
        1,
        strict=True,
        ge=1,
        le=MAX_DIALOGUE_TURNS,
        description=(
            "Assistant turns before the worker writes: 1 is the paper's design (one assistance text); "
            "N > 1 adds, per assistant, a dialogue candidate whose worker asks N - 1 questions first."
        ),
    )


DIALOGUE_MARK = "+"
"""Joins an assistant's name and its turns into its dialogue candidate's name (`alpha+3turns`)."""


def dialogue_candidate(assistant: str, turns: int) -> str:
    """The name of an assistant's dialogue candidate (its worker asks `turns - 1` questions before writing)."""
    return f"{assistant}{DIALOGUE_MARK}{turns}turns"


class BlindingParams(Strict):
    """Issue 26: blinding measured: the experts' guesses, the normalised presentation, and the report's thresholds."""

    guess_share: float = Field(
        0.0,
        strict=True,
        ge=0.0,
        le=1.0,
        description="Share of an expert's comparisons followed by the optional guess of who wrote option 1 (0: never).",
    )
    normalise_presentation: bool = Field(
        False,
        strict=True,
        description="Show experts every deliverable in one layout (headings, lists, emphasis, spacing), same words.",
    )
    index_threshold: float = Field(
        0.2,
        strict=True,
        ge=0.0,
        le=1.0,
        description="Flag an expert (or arm) whose blinding index is beyond +-this.",
    )
    identifiability_margin: float = Field(
        0.1,
        strict=True,
        ge=0.0,
        le=1.0,
        description="A threat when identifiability's lower bound exceeds chance 1/K by more than this.",
    )
    min_per_candidate: int = Field(
        3,
        strict=True,
        ge=2,
        le=1000,
        description="Fewest deliverables of every candidate in a task and mode for the classifier (else 'too few').",
    )


def _human_workers_of_panel(data: dict[str, Any]) -> dict[str, Any]:
    """Move the human workers of a `[[workers]]` panel (entries `{ expert = "id" }`) into the human-worker arm.

    A human worker writes on the work screen (`centaur assign-work`), in every condition of the arm:
    the session's assistants and plain, on every task, unless a `[human_workers]` table says
    otherwise (the panel's experts are then added to its `experts`). Its deliverables are judged in
    the arm's own tournament (`human_augmentation`, the report's `human_workers` section), not in
    the worker models' per-worker tournaments. A human entry names its expert id and nothing else.
    """
    panel = data["workers"]
    if not isinstance(panel, list | tuple):
        return data
    humans = [(i, w) for i, w in enumerate(panel) if isinstance(w, dict) and "expert" in w]
    if not humans:
        return data
    for i, w in humans:
        other = sorted(set(w) - {"expert"})
        if other:
            raise ValueError(
                f"workers[{i}] is a human worker (expert = {w['expert']!r}) and names only its expert id;"
                f" {', '.join(other)} belong to a worker model (a human worker's assistants and tasks"
                " are set in [human_workers])"
            )
    ids = [w["expert"] for _, w in humans]
    models = [w for w in panel if not (isinstance(w, dict) and "expert" in w)]
    if not models:
        raise ValueError(
            "[[workers]] holds human workers only: add a worker model to the panel (a model's assistance"
            " text goes to the worker models; the human workers write on the work screen)"
        )
    arm = data.get("human_workers")
    if isinstance(arm, dict):
        arm = {**arm, "experts": [*(arm.get("experts") or ()), *ids]}
    elif arm is None:
        entries = data.get("models") or ()
        assistants = [
            m["name"]
            for m in entries
            if isinstance(m, dict) and isinstance(m.get("name"), str) and m.get("augmentation", True) is True
        ]
        arm = {"experts": ids, "tasks": list(data.get("tasks") or ()), "assistants": assistants}
    return {**data, "workers": models, "human_workers": arm}


class Session(Strict):
    """One study: its tasks, candidate models, worker, judges, experts, runs and seed."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", max_length=MAX_LABEL)
    description: str = Field("", max_length=10_000)
    seed: int = Field(0, strict=True, ge=-(2**63), lt=2**63)
    runs: int = Field(strict=True, ge=1, le=MAX_RUNS, description="Independent replicate runs of the whole pipeline.")
    tasks: tuple[str, ...] = Field((), max_length=MAX_TASKS, description="Task ids (files in tasks/).")
    generic_tasks: tuple[str, ...] = Field(
        (),
        max_length=MAX_TASKS,
        description="Tasks made from imported data: no file; each comparison keeps its own question and prompt.",
    )
    tasks_dir: str = Field(
        "../tasks", max_length=4096, description="Folder of task files, relative to the session file."
    )
    database: str | None = Field(
        None, min_length=1, max_length=4096, description="SQLite file, relative to the session file; default NAME.db."
    )
    generation: GenerationParams = Field(default_factory=GenerationParams)
    judging: JudgingParams = Field(default_factory=JudgingParams)
    limits: Limits = Field(default_factory=Limits)
    batch: BatchSettings = Field(default_factory=BatchSettings)
    faults: Faults = Field(default_factory=Faults)
    models: tuple[ModelSpec, ...] = Field((), max_length=MAX_MODELS)
    candidates: tuple[ImportedCandidate, ...] = Field(
        (), max_length=MAX_MODELS, description="Candidates whose outputs are imported (never generated)."
    )
    worker: WorkerSpec | None = Field(None, description="Required when a model takes part in augmentation.")
    workers: tuple[WorkerSpec, ...] = Field(
        (),
        max_length=MAX_MODELS,
        description="A worker panel ([[workers]]): every assistance text goes to each; the first is `worker`.",
    )
    judges: tuple[JudgeSpec, ...] = Field((), max_length=MAX_JUDGES)
    """No LLM judge at all is a study of people only (imported or expert judgments): nothing to send."""
    experts: tuple[ExpertSpec, ...] = Field((), max_length=MAX_EXPERTS)
    human_workers: HumanWorkerArm | None = None
    statistics: StatisticsParams = Field(default_factory=StatisticsParams)
    study: StudyParams = Field(default_factory=StudyParams)
    augmentation: AugmentationParams = Field(default_factory=AugmentationParams)
    blinding: BlindingParams = Field(default_factory=BlindingParams)

    @model_validator(mode="before")
    @classmethod
    def _panel_first_is_worker(cls, data: object) -> object:
        """`[[workers]]` names a panel; its first worker is `worker` (so single-worker code paths stay as they are)."""
        if isinstance(data, dict) and data.get("workers"):
            data = _human_workers_of_panel(data)
            panel = data["workers"]
            if not isinstance(panel, list | tuple) or not panel:
                return data
            if data.get("worker") is not None and panel and data["worker"] != panel[0]:
                raise ValueError("give [worker] (one worker) or [[workers]] (a panel), not both")
            data = {**data, "worker": panel[0]}
        return data

    @field_validator("workers")
    @classmethod
    def _unique_workers(cls, v: tuple[WorkerSpec, ...]) -> tuple[WorkerSpec, ...]:
        names = [w.name for w in v]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate worker names: {', '.join(dupes)}")
        return v

    @field_validator("workers")
    @classmethod
    def _distinct_panel_workers(cls, v: tuple[WorkerSpec, ...]) -> tuple[WorkerSpec, ...]:
        """Two panel workers on one model string and `api_base` are refused when they cannot be told apart.

        A simulated worker's settings are looked up by its model string (`llm.simulation.make_world`):
        the second entry's would silently replace the first's. A real model with the same `params`
        sends the same requests (only the entry name differs): one worker twice, not a panel. The same
        real model with other `params` (a temperature, a reasoning effort) is a different worker.
        """
        for i, a in enumerate(v):
            for j in range(i + 1, len(v)):
                b = v[j]
                if a.model != b.model or a.api_base != b.api_base:
                    continue
                if a.simulated or a.params == b.params:
                    why = (
                        "a simulated model's settings are kept per model string, so one would replace the other"
                        if a.simulated
                        else "with the same params they send the same requests: one worker twice"
                    )
                    raise ValueError(
                        f"workers[{i} {a.name!r}] and workers[{j} {b.name!r}] are both model {a.model!r}"
                        f" at api_base {a.api_base or 'none'}: {why}; give each panel worker a model string"
                        " of its own"
                    )
        return v

    @property
    def worker_panel(self) -> tuple[WorkerSpec, ...]:
        """Every worker model: the `[[workers]]` panel, or the one `[worker]` (empty when none)."""
        if self.workers:
            return self.workers
        return (self.worker,) if self.worker is not None else ()

    @field_validator("models")
    @classmethod
    def _unique_models(cls, v: tuple[ModelSpec, ...]) -> tuple[ModelSpec, ...]:
        _check_candidate_names([m.name for m in v], "model")
        if v and not any(m.automation or m.augmentation for m in v):
            raise ValueError("no model takes part in automation or augmentation")
        return v

    @field_validator("candidates")
    @classmethod
    def _unique_candidates(cls, v: tuple[ImportedCandidate, ...]) -> tuple[ImportedCandidate, ...]:
        _check_candidate_names([c.name for c in v], "candidate")
        for c in v:
            if not (c.automation or c.augmentation):
                raise ValueError(f"candidate {c.name!r} takes part in neither automation nor augmentation")
        return v

    @model_validator(mode="after")
    def _candidates_and_worker(self) -> Session:
        if not self.models and not self.candidates:
            raise ValueError("no candidate: list [[models]] (generated) or [[candidates]] (imported outputs)")
        if not self.tasks and not self.generic_tasks:
            raise ValueError("no task: list tasks (files in tasks/) or generic_tasks (made from imported data)")
        if self.models and not self.tasks:
            raise ValueError("models generate outputs for tasks: list tasks (generic_tasks are for imported data)")
        if self.models and not self.judges:
            raise ValueError("no judge: a session with [[models]] needs [[judges]] (a study of people only has none)")
        both = sorted(set(self.tasks) & set(self.generic_tasks))
        if both:
            raise ValueError(f"task(s) both in tasks and generic_tasks: {', '.join(both)}")
        clash = sorted({m.name for m in self.models} & {c.name for c in self.candidates})
        if clash:
            raise ValueError(f"name(s) both a model and an imported candidate: {', '.join(clash)}")
        taken = sorted(
            ({m.name for m in self.models} | {c.name for c in self.candidates}) & set(self.dialogue_candidates)
        )
        if taken:
            raise ValueError(
                f"name(s) {', '.join(taken)} are the dialogue candidates of [augmentation] turns: rename the model(s)"
            )
        if self.worker is None and (self.assistants or self.human_workers is not None):
            raise ValueError(
                "[worker] is required: a model takes part in augmentation (its assistance text goes to the worker)"
            )
        return self

    @field_validator("judges")
    @classmethod
    def _unique_judges(cls, v: tuple[JudgeSpec, ...]) -> tuple[JudgeSpec, ...]:
        names = [j.name for j in v]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate judge names: {', '.join(dupes)}")
        return v

    @field_validator("tasks", "generic_tasks")
    @classmethod
    def _unique_tasks(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [t for t in v if not re.match(SLUG, t) or len(t) > MAX_LABEL]
        if bad:
            raise ValueError(f"not a task id (lowercase letters, digits, _; a letter first): {bad[0][:80]!r}")
        dupes = sorted({t for t in v if v.count(t) > 1})
        if dupes:
            raise ValueError(f"task(s) listed twice: {', '.join(dupes)}")
        return v

    @field_validator("experts")
    @classmethod
    def _unique_experts(cls, v: tuple[ExpertSpec, ...]) -> tuple[ExpertSpec, ...]:
        ids = [e.id for e in v]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate expert ids: {', '.join(dupes)}")
        return v

    def human_worker_problems(self) -> list[tuple[str, str]]:
        """(field, problem) for each unknown or repeated id of the human-worker arm; empty when valid.

        Checked by the loader (which names the file and field), not by a validator, so that the
        error points at `human_workers.<field>[i]` rather than at the top level.
        """
        arm = self.human_workers
        if arm is None:
            return []
        problems: list[tuple[str, str]] = []
        known_sets = {
            "experts": {e.id for e in self.experts},
            "tasks": set(self.tasks),
            "assistants": set(self.assistants),
        }
        for name, known in known_sets.items():
            ids: tuple[str, ...] = getattr(arm, name)
            for i, value in enumerate(ids):
                where = f"human_workers.{name}[{i}]"
                if value not in known:
                    problems.append(
                        (where, f"unknown {name[:-1]} {value!r} (known: {', '.join(sorted(known)) or 'none'})")
                    )
                elif ids.index(value) != i:
                    problems.append((where, f"{value!r} is listed twice"))
        if not arm.conditions:
            problems.append(("human_workers", "no condition: list assistants or set include_plain = true"))
        return problems

    def batched(self, stage: str, endpoint: Endpoint) -> bool:
        """Whether a call of this stage to this endpoint goes through the provider's batch API."""
        if stage == "exam":  # the judges' admission exam (pipeline/exam.py) is small and always sent online
            return False
        mode = self.judging.mode if stage == "judging" else self.generation.mode
        return mode == "batch" and endpoint.model.split("/", 1)[0] in BATCH_PROVIDERS

    def batch_problems(self) -> list[tuple[str, str]]:
        """(field, problem) for each model in batch mode whose provider has no batch API; empty when none.

        None when `batch.unsupported = "online"` (those calls are sent online). Checked by the
        loader, which names the file and the field.
        """
        if self.batch.unsupported == "online":
            return []
        entries: list[tuple[str, Endpoint, str]] = []
        if self.judging.mode == "batch":
            entries += [(f"judges[{i} {j.name!r}].model", j, j.name) for i, j in enumerate(self.judges)]
        if self.generation.mode == "batch":
            entries += [(f"models[{i} {m.name!r}].model", m, m.name) for i, m in enumerate(self.models)]
            if self.workers:
                entries += [(f"workers[{i} {w.name!r}].model", w, w.name) for i, w in enumerate(self.workers)]
            elif self.worker is not None:
                entries.append(("worker.model", self.worker, self.worker.name))
        problems = []
        for where, ep, name in entries:
            provider = ep.model.split("/", 1)[0]
            if provider not in BATCH_PROVIDERS:
                problems.append(
                    (
                        where,
                        f"{name!r} ({ep.model}) is in batch mode, but provider {provider!r} has no batch API in "
                        f"litellm (batch providers: {', '.join(BATCH_PROVIDERS)}); set [batch] unsupported = "
                        '"online" to send its calls online, or set the stage\'s mode = "online"',
                    )
                )
        return problems

    def name_clash(self, expert_id: str) -> str | None:
        """What an expert id would be confused with (an LLM judge, a model, the worker, `plain`), or None.

        Judgments are stored under the judge's name, so an expert sharing an LLM judge's name
        would have their judgments taken for the judge's (issue 13: a packet import stored 0 of
        4); a model or worker name as an expert id would blur who wrote and who judged.
        """
        for j in self.judges:
            if j.name == expert_id:
                return f"the name of LLM judge {j.name!r} (family {j.family})"
        for m in self.models:
            if m.name == expert_id:
                return f"the name of model {m.name!r}"
        for c in self.candidates:
            if c.name == expert_id:
                return f"the name of imported candidate {c.name!r}"
        for w in self.worker_panel:
            if w.name == expert_id:
                return f"the name of the worker {w.name!r}"
        if expert_id == PLAIN:
            return f"{PLAIN!r}, the candidate name of the unaided worker"
        return None

    def name_problems(self) -> list[tuple[str, str]]:
        """(field, problem) for each expert id that is also a judge's, model's or worker's name; empty when none.

        Checked by the loader, which names the file and the field `experts[i 'id'].id`.
        """
        problems = []
        for i, e in enumerate(self.experts):
            clash = self.name_clash(e.id)
            if clash is not None:
                problems.append(
                    (
                        f"experts[{i} {e.id!r}].id",
                        f"expert id {e.id!r} is {clash}; give the expert "
                        "another id (judgments are stored under the judge's name)",
                    )
                )
        return problems

    @property
    def all_tasks(self) -> tuple[str, ...]:
        """The tasks of task files, then the generic tasks made from imported data."""
        return self.tasks + self.generic_tasks

    @property
    def automation_candidates(self) -> tuple[str, ...]:
        """Every automation candidate: the generated models, then the imported candidates."""
        return tuple(m.name for m in self.models if m.automation) + tuple(
            c.name for c in self.candidates if c.automation
        )

    @property
    def generated_automation(self) -> tuple[str, ...]:
        """The automation candidates whose outputs the pipeline generates (models, not imported candidates)."""
        return tuple(m.name for m in self.models if m.automation)

    @property
    def assistants(self) -> tuple[str, ...]:
        """The models that write assistance texts (imported candidates are not among them)."""
        return tuple(m.name for m in self.models if m.augmentation)

    @property
    def imported_augmentation(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.candidates if c.augmentation)

    @property
    def augmentation_candidates(self) -> tuple[str, ...]:
        """The assistants, the imported augmentation candidates, then plain (when a worker generates)."""
        plain = (PLAIN,) if self.assistants else ()
        return (*self.assistants, *self.imported_augmentation, *self.dialogue_candidates, *plain)

    @property
    def dialogue_candidates(self) -> tuple[str, ...]:
        """One dialogue candidate per assistant when `[augmentation] turns` > 1 (none at 1: today's design)."""
        turns = self.augmentation.turns
        return tuple(dialogue_candidate(a, turns) for a in self.assistants) if turns > 1 else ()

    def dialogue_assistant(self, candidate: str) -> str | None:
        """The assistant of a dialogue candidate, or None for any other candidate."""
        if self.augmentation.turns > 1:
            for a in self.assistants:
                if candidate == dialogue_candidate(a, self.augmentation.turns):
                    return a
        return None

    @property
    def imported_names(self) -> frozenset[str]:
        """Names of the imported candidates."""
        return frozenset(c.name for c in self.candidates)

    def imported(self, name: str) -> ImportedCandidate:
        for c in self.candidates:
            if c.name == name:
                return c
        raise KeyError(name)

    def model(self, name: str) -> ModelSpec:
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(name)

    def judge(self, name: str) -> JudgeSpec:
        for j in self.judges:
            if j.name == name:
                return j
        raise KeyError(name)

    def candidate_family(self, mode: str, candidate: str) -> str | None:
        """Family of an output: its writer in automation, its assistant in augmentation."""
        if candidate == PLAIN:
            return self.judging.plain_family
        if candidate in self.imported_names:
            return self.imported(candidate).family
        return self.model(self.dialogue_assistant(candidate) or candidate).family

    @property
    def simulated(self) -> bool:
        """True when any call of the session goes to the simulated provider."""
        return any(e.simulated for e in self.endpoints)

    @property
    def fully_simulated(self) -> bool:
        return all(e.simulated for e in self.endpoints) and not self.candidates

    @property
    def endpoints(self) -> list[Endpoint]:
        """Every endpoint the session may call: the models, the worker (if any), the judges."""
        worker: list[Endpoint] = list(self.worker_panel)
        return [*self.models, *worker, *self.judges]
