"""The simulated provider's worker reads its guidance as a person would: instructions, not labels."""

from __future__ import annotations

from centaur_tui.catalog import load_tasks
from centaur_tui.llm.simulation import read_deliverable, read_guidance
from tests.support.sessions import TASKS


def test_a_label_containing_without_is_a_pointer_and_leave_out_steers_away() -> None:
    tasks, _ = load_tasks(TASKS)
    task = tasks["counseling"]
    label = next(r for r in task.requirements if "without" in r.label.lower())
    other = next(r for r in task.requirements if r is not label)
    guidance = f"- Check: {label.label}.\n- Keep it lean: leave out {other.label}; it is not needed here."
    pointed, specific, steered = read_guidance(task, guidance)
    assert label.id in pointed and label.id not in steered
    assert other.id in steered and other.id not in pointed
    assert specific == set()


def test_a_judge_sees_only_requirements_present_in_the_text() -> None:
    tasks, _ = load_tasks(TASKS)
    task = tasks["tax_preparation"]
    first, second = task.requirements[:2]
    seen = read_deliverable(task, f"- **{first.label}.** {first.text}\n")
    assert seen[first.id] == 1 and seen[second.id] == 0
