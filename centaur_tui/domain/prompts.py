"""Provides the messages sent for each kind of call, built from a task and the universal prompts."""

from __future__ import annotations

from centaur_tui.domain.task import Rubric, Task, Universal, render

Messages = list[dict[str, str]]


def automation_messages(universal: Universal, task: Task) -> Messages:
    """A solver writes the deliverable directly."""
    return [
        {"role": "system", "content": universal.automation_system},
        {"role": "user", "content": task.prompt},
    ]


def assistance_messages(universal: Universal, task: Task) -> Messages:
    """An assistant writes process guidance for the worker, never the deliverable."""
    return [
        {"role": "system", "content": universal.assistance_system},
        {"role": "user", "content": render(universal.assistance_prompt, task_prompt=task.prompt)},
    ]


def worker_messages(universal: Universal, task: Task, assistance_text: str | None) -> Messages:
    """The worker writes the deliverable, with an assistance text or (plain) without."""
    if assistance_text is None:
        user = task.prompt
    else:
        user = render(universal.worker_prompt, task_prompt=task.prompt, assistance_text=assistance_text)
    return [{"role": "system", "content": universal.worker_system}, {"role": "user", "content": user}]


def winner_values(allow_ties: bool) -> tuple[str, ...]:
    return ("option_1", "option_2", "tie") if allow_ties else ("option_1", "option_2")


def render_rubric(rubric: Rubric) -> str:
    """The rubric as the judge (and the expert) reads it: one block per dimension."""
    lines = []
    for kind, dims in (("task-specific", rubric.task_dimensions), ("general", rubric.general_dimensions)):
        for d in dims:
            lines.append(f"- {d.id} ({d.name}, {kind}): {d.description}")
            lines.append(f"    1-3: {d.low}")
            lines.append(f"    8-10: {d.high}")
    return "\n".join(lines)


def judge_messages(
    universal: Universal, task: Task, rubric: Rubric, option_1: str, option_2: str, allow_ties: bool
) -> Messages:
    """A judge compares two anonymous deliverables on the full rubric."""
    values = ", ".join(f'"{v}"' for v in winner_values(allow_ties))
    user = render(
        universal.judge_prompt,
        task_prompt=task.prompt,
        rubric=render_rubric(rubric),
        option_1=option_1,
        option_2=option_2,
        winner_values=values,
    )
    return [{"role": "system", "content": universal.judge_system}, {"role": "user", "content": user}]


def reask_messages(messages: Messages, reply: str, reason: str) -> Messages:
    """Messages for re-asking a judge whose reply was invalid: the reply and what was wrong."""
    return [
        *messages,
        {"role": "assistant", "content": reply},
        {
            "role": "user",
            "content": (
                f"Your reply could not be used: {reason}. Reply again with only the JSON object, "
                "scoring both options on every dimension with integers from 1 to 10."
            ),
        },
    ]
