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


def _pairs(n: int = 120) -> tuple[list[tuple[str, str]], object, object]:
    import random

    from centaur_tui.llm.simulation import _cover_prob, deliverable

    tasks, universal = load_tasks(TASKS)
    task = tasks["tax_preparation"]
    rng = random.Random(7)

    def cov() -> dict[str, int]:
        return {
            r.id: (1 + (rng.random() < 0.6)) if rng.random() < _cover_prob(0.6, r) else 0 for r in task.requirements
        }

    return [(deliverable(task, cov(), rng), deliverable(task, cov(), rng)) for _ in range(n)], task, universal


def test_planted_judge_biases_move_verdicts_the_planted_way_and_zero_knobs_change_nothing() -> None:
    import random

    from centaur_tui.domain.session import JudgeBias, JudgeSimulation
    from centaur_tui.llm.simulation import judge_reply

    pairs, task, universal = _pairs()

    def verdicts(knobs: JudgeSimulation, family_of=None) -> list[str]:  # type: ignore[no-untyped-def]
        return [
            judge_reply(task, universal, knobs, a, b, True, random.Random(i), family_of)["winner"]  # type: ignore[arg-type]
            for i, (a, b) in enumerate(pairs)
        ]

    plain = verdicts(JudgeSimulation())
    assert verdicts(JudgeSimulation(bias=JudgeBias(), flip=0.0)) == plain
    longer = [("option_1" if len(a) > len(b) else "option_2") for a, b in pairs]
    agree = lambda v: sum(w == lw for w, lw in zip(v, longer, strict=True))  # noqa: E731
    assert agree(verdicts(JudgeSimulation(bias=JudgeBias(length=1.5)))) > agree(plain) + 10
    flipped = verdicts(JudgeSimulation(flip=0.5))
    changed = sum(f != p for f, p in zip(flipped, plain, strict=True) if p != "tie")
    assert 0.3 < changed / sum(p != "tie" for p in plain) < 0.7
    first = {a for a, _ in pairs}
    fam = verdicts(JudgeSimulation(bias=JudgeBias(family={"North": 2.0})), lambda t: "North" if t in first else "South")
    assert fam.count("option_1") > plain.count("option_1") + 20
    # Without the world's memory of authors (the simulated experts), the family preference is inert.
    assert verdicts(JudgeSimulation(bias=JudgeBias(family={"North": 2.0}))) == plain


def test_bad_bias_knobs_are_refused_naming_the_field() -> None:
    import pytest
    from pydantic import ValidationError

    from centaur_tui.domain.session import JudgeSimulation

    for bad, field in (
        ({"flip": 1.5}, "flip"),
        ({"bias": {"length": "long"}}, "length"),
        ({"bias": {"family": {"OpenAI": True}}}, "family"),
        ({"bias": {"family": {"OpenAI": 9.0}}}, "family"),
        ({"bias": {"verbosity": 1.0}}, "verbosity"),
    ):
        with pytest.raises(ValidationError, match=field):
            JudgeSimulation.model_validate(bad)


def test_a_judge_without_planted_biases_keeps_its_call_key_entry() -> None:
    from centaur_tui.domain.plan import entry_json
    from centaur_tui.domain.session import JudgeBias, JudgeSimulation, JudgeSpec

    judge = JudgeSpec(name="J", model="simulated/j", family="F")
    assert '"bias"' not in entry_json(judge) and '"flip"' not in entry_json(judge)
    biased = judge.model_copy(update={"simulation": JudgeSimulation(bias=JudgeBias(length=0.5), flip=0.1)})
    assert entry_json(biased) != entry_json(judge) and '"flip"' in entry_json(biased)
