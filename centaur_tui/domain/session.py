"""Provides the session model: which tasks, models, worker, judges, runs and seed a study uses."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from centaur_tui.domain.task import SLUG, Strict

PLAIN = "plain"
"""Candidate name of the unaided worker in augmentation tournaments."""


class SkillTable(Strict):
    """A skill in [0, 1] per task for a simulated model, with a default for other tasks."""

    default: float = Field(0.5, ge=0.0, le=1.0)
    tasks: dict[str, float] = Field(default_factory=dict)

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


class WorkerSimulation(Strict):
    """Knobs of the simulated worker."""

    skill: SkillTable = Field(default_factory=SkillTable)


class JudgeSimulation(Strict):
    """Knobs of a simulated judge: score noise (SD in rubric points) and position bias."""

    noise: float = Field(0.8, ge=0.0, le=10.0, description="SD of the Gaussian noise added to each score.")
    position_bias: float = Field(
        0.0, ge=-5.0, le=5.0, description="Rubric points added to the option shown first (negative: second)."
    )
    tie_margin: float = Field(0.15, ge=0.0, le=5.0, description="Average gap below which the judge calls a tie.")


class Faults(Strict):
    """Faults the simulated provider injects, for tests and benchmarks."""

    latency_s: float = Field(0.0, ge=0.0, le=600.0, description="Mean latency of each call in seconds.")
    latency_jitter: float = Field(0.0, ge=0.0, le=1.0, description="Latency varies uniformly by +/- this share.")
    error_rate: float = Field(0.0, ge=0.0, le=1.0, description="Share of attempts failing with a transient error.")
    invalid_reply_rate: float = Field(0.0, ge=0.0, le=1.0, description="Share of judge replies that are invalid.")


class Endpoint(Strict):
    """How to reach one model through litellm. Keys come from the environment, never from here."""

    model: str = Field(min_length=3, description="Any litellm model string, e.g. openai/gpt-4.1 or simulated/x.")
    api_base: str | None = Field(None, description="Base URL of an OpenAI-compatible server, if any.")
    api_key_env: str | None = Field(
        None,
        pattern=r"^[A-Z_][A-Z0-9_]*$",
        description="Environment variable holding the key, if not litellm's default.",
    )
    params: dict[str, float | int | str | bool] = Field(
        default_factory=dict, description="Extra litellm parameters for this model (e.g. reasoning_effort)."
    )
    input_cost_per_mtok: float | None = Field(
        None, ge=0.0, description="USD per million input tokens, if litellm does not know."
    )
    output_cost_per_mtok: float | None = Field(
        None, ge=0.0, description="USD per million output tokens, if litellm does not know."
    )

    @property
    def simulated(self) -> bool:
        return self.model.startswith("simulated/")

    @field_validator("model")
    @classmethod
    def _has_provider(cls, v: str) -> str:
        if "/" not in v:
            raise ValueError(f"{v!r} needs a provider prefix, e.g. openai/{v} (any litellm model string)")
        return v


class ModelSpec(Endpoint):
    """A candidate model: a solver in automation and/or an assistant in augmentation."""

    name: str = Field(min_length=1, description="Display name, e.g. GPT-5-Mini; unique in the session.")
    family: str = Field(min_length=1, description="Provider family, for leave-family-out judging.")
    automation: bool = True
    augmentation: bool = True
    release_order: int | None = Field(None, description="Order within its family for criterion validity (1 = oldest).")
    simulation: ModelSimulation = Field(default_factory=ModelSimulation)


class WorkerSpec(Endpoint):
    """The fixed worker that writes deliverables in augmentation."""

    name: str = Field(min_length=1)
    family: str = Field(min_length=1)
    simulation: WorkerSimulation = Field(default_factory=WorkerSimulation)


class JudgeSpec(Endpoint):
    """An LLM judge. It never judges a comparison holding an output of its own family."""

    name: str = Field(min_length=1)
    family: str = Field(min_length=1, description="Provider family; required for leave-family-out.")
    simulation: JudgeSimulation = Field(default_factory=JudgeSimulation)


class ExpertSpec(Strict):
    """A person who may judge (or work) in the app."""

    id: str = Field(pattern=SLUG)
    name: str = Field(min_length=1)
    tasks: tuple[str, ...] = Field(default=(), description="Tasks the expert may judge; empty = all.")


class HumanWorkerArm(Strict):
    """Experts as workers: who writes deliverables for which tasks, with whose assistance texts."""

    experts: tuple[str, ...] = Field(min_length=1, description="Expert ids (from [[experts]]) who write deliverables.")
    tasks: tuple[str, ...] = Field(min_length=1, description="Task ids of this session the experts work on.")
    assistants: tuple[str, ...] = Field(default=(), description="Assistant models whose assistance texts are used.")
    include_plain: bool = Field(True, description="Include the plain condition (no assistance text).")

    @property
    def conditions(self) -> tuple[str, ...]:
        """The conditions of the arm: the assistants, then plain when included."""
        return (*self.assistants, PLAIN) if self.include_plain else self.assistants


class GenerationParams(Strict):
    """Sampling parameters of generation calls (automation, assistance, worker)."""

    temperature: float = Field(1.0, ge=0.0, le=2.0)
    max_tokens: int = Field(4000, ge=16)


class JudgingParams(Strict):
    """How judges are asked and how their replies are checked."""

    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(2000, ge=16)
    orders: Literal["one", "both"] = Field("one", description="'both' judges each pair in both presented orders.")
    allow_ties: bool = True
    max_invalid_retries: int = Field(2, ge=0, le=10, description="Re-asks after an invalid reply.")
    reask_max_tokens: int | None = Field(
        None, ge=16, le=1_000_000,
        description="Cap of max_tokens for re-asking a judge whose reply was cut off at max_tokens: each such re-ask "
        "doubles the limit up to this (default 4 x max_tokens); a reply cut off at the cap is not re-asked.",
    )
    structured_output: bool = Field(True, description="Ask for JSON via response_format where supported.")
    plain_family: str | None = Field(None, description="Family of the plain candidate (None: no family).")
    expert_min_rationale: int = Field(20, ge=0, le=2000, description="Characters an expert's rationale needs at least.")

    @property
    def reask_cap(self) -> int:
        """`reask_max_tokens`, or 4 x `max_tokens` when it is not set."""
        return self.reask_max_tokens if self.reask_max_tokens is not None else 4 * self.max_tokens


class Limits(Strict):
    """Concurrency, timeouts and retries of provider calls."""

    concurrency: int = Field(16, ge=1, le=1024, description="Calls in flight at once, overall.")
    per_model_concurrency: int = Field(8, ge=1, le=1024, description="Calls in flight at once per model.")
    timeout_s: float = Field(180.0, gt=0.0, description="Per-call timeout in seconds.")
    max_retries: int = Field(4, ge=0, le=20, description="Retries of transient errors (rate limit, timeout, 5xx).")
    backoff_base_s: float = Field(1.0, ge=0.0, description="First backoff; doubles each retry, with jitter.")
    backoff_max_s: float = Field(
        60.0, ge=0.0, description="Longest wait before a retry, also when the server's Retry-After asks for more."
    )


class Session(Strict):
    """One study: its tasks, candidate models, worker, judges, experts, runs and seed."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    seed: int = 0
    runs: int = Field(ge=1, description="Independent replicate runs of the whole pipeline.")
    tasks: tuple[str, ...] = Field(min_length=1, description="Task ids (files in tasks/).")
    tasks_dir: str = Field("../tasks", description="Folder of task files, relative to the session file.")
    database: str | None = Field(None, description="SQLite file, relative to the session file; default NAME.db.")
    generation: GenerationParams = Field(default_factory=GenerationParams)
    judging: JudgingParams = Field(default_factory=JudgingParams)
    limits: Limits = Field(default_factory=Limits)
    faults: Faults = Field(default_factory=Faults)
    models: tuple[ModelSpec, ...] = Field(min_length=1)
    worker: WorkerSpec
    judges: tuple[JudgeSpec, ...] = Field(min_length=1)
    experts: tuple[ExpertSpec, ...] = ()
    human_workers: HumanWorkerArm | None = None

    @field_validator("models")
    @classmethod
    def _unique_models(cls, v: tuple[ModelSpec, ...]) -> tuple[ModelSpec, ...]:
        names = [m.name for m in v]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate model names: {', '.join(dupes)}")
        if PLAIN in names:
            raise ValueError(f"{PLAIN!r} is reserved for the unaided worker")
        if not any(m.automation or m.augmentation for m in v):
            raise ValueError("no model takes part in automation or augmentation")
        return v

    @field_validator("judges")
    @classmethod
    def _unique_judges(cls, v: tuple[JudgeSpec, ...]) -> tuple[JudgeSpec, ...]:
        names = [j.name for j in v]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate judge names: {', '.join(dupes)}")
        return v

    @field_validator("tasks")
    @classmethod
    def _unique_tasks(cls, v: tuple[str, ...]) -> tuple[str, ...]:
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

    @property
    def automation_candidates(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.models if m.automation)

    @property
    def assistants(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.models if m.augmentation)

    @property
    def augmentation_candidates(self) -> tuple[str, ...]:
        return (*self.assistants, PLAIN) if self.assistants else ()

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
        return self.model(candidate).family

    @property
    def simulated(self) -> bool:
        """True when any call of the session goes to the simulated provider."""
        endpoints = [*self.models, self.worker, *self.judges]
        return any(e.simulated for e in endpoints)

    @property
    def fully_simulated(self) -> bool:
        endpoints = [*self.models, self.worker, *self.judges]
        return all(e.simulated for e in endpoints)
