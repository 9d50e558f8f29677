"""Provides the task model: prompt, observable requirements and rubric dimensions."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SLUG = r"^[a-z][a-z0-9_]*$"

TaskSource = Literal["GDPval", "Anthropic Economic Index", "designed", "external"]
TaskType = Literal["structured planning", "professional/analytical", "human-facing"]


MAX_TEXT = 100_000
"""Longest text field of any file (a task prompt; the longest shipped one is about 2,500 characters)."""
MAX_LABEL = 200
"""Longest name, id, title or label."""


class Strict(BaseModel):
    """Base for file-backed models: unknown fields are errors, not silently ignored.

    No float may be infinite or NaN (TOML allows both), and no text is longer than `MAX_TEXT`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, str_max_length=MAX_TEXT)


class Dimension(Strict):
    """One rubric dimension, scored 1-10 for each option of a comparison."""

    id: str = Field(
        pattern=SLUG, max_length=MAX_LABEL, description="Stable identifier used in judge replies and exports."
    )
    name: str = Field(min_length=1, max_length=MAX_LABEL, description="Human-readable name.")
    description: str = Field(min_length=1, description="What the dimension measures.")
    low: str = Field(min_length=1, description="What a low score (1-3) means.")
    high: str = Field(min_length=1, description="What a high score (8-10) means.")


class Requirement(Strict):
    """One observable requirement of the deliverable, checked under one task dimension.

    The simulated provider builds its texts from these; real judges see them through
    the prompt, which states every requirement in prose.
    """

    id: str = Field(pattern=SLUG, max_length=MAX_LABEL)
    label: str = Field(min_length=3, max_length=MAX_LABEL, description="Short phrase naming the requirement.")
    text: str = Field(min_length=1, description="The requirement as a checkable statement.")
    dimension: str = Field(pattern=SLUG, description="Id of the task dimension that checks it.")
    difficulty: float = Field(0.5, strict=True, ge=0.0, le=1.0, description="0 = easy, 1 = hard to satisfy.")


class Task(Strict):
    """One professional task: what to deliver, and how deliverables are judged."""

    id: str = Field(pattern=SLUG, max_length=MAX_LABEL)
    title: str = Field(min_length=1, max_length=MAX_LABEL)
    source: TaskSource
    type: TaskType
    deliverable: str = Field(min_length=1)
    prompt: str = Field(min_length=40, description="The full prompt given to solvers and workers.")
    dimensions: tuple[Dimension, ...] = Field(min_length=2, max_length=50, description="Task-specific dimensions.")
    requirements: tuple[Requirement, ...] = Field(min_length=3, max_length=200)

    @model_validator(mode="after")
    def _check_references(self) -> Task:
        dim_ids = [d.id for d in self.dimensions]
        if len(set(dim_ids)) != len(dim_ids):
            raise ValueError(f"duplicate dimension ids in {dim_ids}")
        req_ids = [r.id for r in self.requirements]
        if len(set(req_ids)) != len(req_ids):
            raise ValueError(f"duplicate requirement ids in {req_ids}")
        labels = [r.label.lower() for r in self.requirements]
        if len(set(labels)) != len(labels):
            raise ValueError("requirement labels must be distinct")
        for r in self.requirements:
            if r.dimension not in dim_ids:
                raise ValueError(f"requirement {r.id!r} names unknown dimension {r.dimension!r}")
        unchecked = [d for d in dim_ids if not any(r.dimension == d for r in self.requirements)]
        if unchecked:
            raise ValueError(f"dimensions without any requirement: {unchecked}")
        return self


PLACEHOLDER = re.compile(r"\{(task_prompt|assistance_text|rubric|option_1|option_2|winner_values|deliverable)\}")


def render(template: str, **values: str) -> str:
    """Fill `{name}` placeholders in one pass, so filled-in text is never re-expanded.

    Braces that are not known placeholders (JSON examples in prompts) are left alone.
    """

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        return values[name] if name in values else match.group(0)

    return PLACEHOLDER.sub(fill, template)


class Universal(Strict):
    """What all tasks share: the general dimensions and the universal prompts."""

    general_dimensions: tuple[Dimension, ...] = Field(min_length=1, max_length=50)
    automation_system: str = Field(min_length=1, description="System prompt for solvers (automation).")
    assistance_system: str = Field(min_length=1, description="System prompt for assistants.")
    assistance_prompt: str = Field(min_length=1, description="Universal assistance-text prompt; needs {task_prompt}.")
    worker_system: str = Field(min_length=1, description="System prompt for the worker (augmentation).")
    worker_prompt: str = Field(min_length=1, description="Worker prompt; needs {task_prompt} and {assistance_text}.")
    judge_system: str = Field(min_length=1, description="System prompt for judges.")
    judge_prompt: str = Field(
        min_length=1,
        description="Universal judge prompt; needs {task_prompt}, {rubric}, {option_1}, {option_2}, {winner_values}.",
    )

    @field_validator("assistance_prompt")
    @classmethod
    def _assistance_placeholders(cls, v: str) -> str:
        return _require(v, "task_prompt")

    @field_validator("worker_prompt")
    @classmethod
    def _worker_placeholders(cls, v: str) -> str:
        return _require(v, "task_prompt", "assistance_text")

    @field_validator("judge_prompt")
    @classmethod
    def _judge_placeholders(cls, v: str) -> str:
        return _require(v, "task_prompt", "rubric", "option_1", "option_2", "winner_values")

    @model_validator(mode="after")
    def _distinct_systems(self) -> Universal:
        systems = [self.automation_system, self.assistance_system, self.worker_system, self.judge_system]
        if len(set(systems)) != len(systems):
            raise ValueError("the four system prompts must differ (they tell call kinds apart)")
        return self


def _require(template: str, *names: str) -> str:
    missing = [n for n in names if "{" + n + "}" not in template]
    if missing:
        raise ValueError(f"missing placeholder(s): {', '.join('{' + m + '}' for m in missing)}")
    return template


class Rubric(Strict):
    """The dimensions a judgment scores: the task's own, then the general ones."""

    task_dimensions: tuple[Dimension, ...]
    general_dimensions: tuple[Dimension, ...]

    @property
    def all(self) -> tuple[Dimension, ...]:
        return self.task_dimensions + self.general_dimensions

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(d.id for d in self.all)

    def kind(self, dimension_id: str) -> Literal["task", "general"]:
        return "task" if any(d.id == dimension_id for d in self.task_dimensions) else "general"


def rubric_for(task: Task, universal: Universal) -> Rubric:
    """Return the full rubric of a task; task dimension ids must not shadow general ones."""
    return Rubric(task_dimensions=task.dimensions, general_dimensions=universal.general_dimensions)


def generic_task(task_id: str) -> Task:
    """The task of a session's `generic_tasks` entry: no file; the questions come with the imported data.

    Published human-judgment data (MT-Bench, Chatbot Arena) has one question per comparison and no
    rubric: every question sits under this one task, and each comparison keeps its own question id
    and prompt text (`comparisons.question`, `comparisons.prompt`). The dimensions are the ones such
    data is judged on; winner-only judgments carry no scores on them anyway.
    """
    return Task(
        id=task_id,
        title=f"{task_id}: questions from imported data",
        source="external",
        type="human-facing",
        deliverable="The answer to the question shown with each comparison",
        prompt=(
            "Answer the user's question or request shown with this comparison. Each comparison of this "
            "task has its own question, taken from the imported data."
        ),
        dimensions=(
            Dimension(
                id="helpfulness",
                name="Helpfulness",
                description="Whether the answer does what the user asked.",
                low="Ignores or misreads the request.",
                high="Does exactly what was asked, completely.",
            ),
            Dimension(
                id="accuracy",
                name="Accuracy",
                description="Whether what the answer states is correct.",
                low="Wrong or made-up facts.",
                high="Every statement checks out.",
            ),
        ),
        requirements=(
            Requirement(
                id="answers", label="answers the request", text="Answers the request.", dimension="helpfulness"
            ),
            Requirement(
                id="complete", label="covers every part", text="Covers every part of it.", dimension="helpfulness"
            ),
            Requirement(id="correct", label="states nothing false", text="States nothing false.", dimension="accuracy"),
        ),
    )
