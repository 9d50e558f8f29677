"""Judge replies are validated strictly: every dimension, integers 1-10, an allowed winner, a rationale."""

from __future__ import annotations

import json

import pytest

from centaur_tui.domain.judgment import InvalidReply, parse_judge_reply, reask_max_tokens
from centaur_tui.domain.session import JudgingParams
from centaur_tui.domain.task import Dimension, Rubric


def dim(i: str) -> Dimension:
    return Dimension(id=i, name=i.title(), description="d", low="l", high="h")


RUBRIC = Rubric(task_dimensions=(dim("safety"), dim("cost")), general_dimensions=(dim("tone"),))


def reply(**overrides: object) -> str:
    data = {
        "option_1": {"scores": {"safety": 7, "cost": 8, "tone": 6}, "average": 7.0},
        "option_2": {"scores": {"safety": 5, "cost": 4, "tone": 6}, "average": 5.0},
        "winner": "option_1",
        "rationale": "Option 1 respects the allergy.",
    }
    data.update(overrides)
    return json.dumps(data)


def test_valid_reply_parses() -> None:
    v = parse_judge_reply(reply(), RUBRIC, allow_ties=True)
    assert v.winner == "option_1" and v.scores_1 == {"safety": 7, "cost": 8, "tone": 6}
    assert v.mean_1 == pytest.approx(7.0) and v.stated_mean_2 == 5.0


def test_fenced_json_and_names_instead_of_ids_are_accepted() -> None:
    text = "```json\n" + reply(option_1={"scores": {"Safety": 7, "Cost": 8.0, "tone": 6}}) + "\n```"
    v = parse_judge_reply(text, RUBRIC, allow_ties=False)
    assert v.scores_1["cost"] == 8 and v.stated_mean_1 is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Option 1 is better.", "no JSON object"),
        ("{not json}", "not valid JSON"),
        (reply(option_2={"scores": {"safety": 5, "cost": 4}}), "lacks a score for dimension 'tone'"),
        (reply(option_2={"scores": {"safety": 11, "cost": 4, "tone": 6}}), "outside 1-10"),
        (reply(option_2={"scores": {"safety": 0, "cost": 4, "tone": 6}}), "outside 1-10"),
        (reply(option_2={"scores": {"safety": 5.5, "cost": 4, "tone": 6}}), "not an integer"),
        (reply(option_2={"scores": {"safety": "5", "cost": 4, "tone": 6}}), "not a number"),
        (reply(option_2={"scores": {"safety": 5, "cost": 4, "tone": 6, "style": 3}}), "unknown dimension"),
        (reply(winner="both"), "winner 'both'"),
        (reply(winner=None), "winner None"),
        (reply(rationale="  "), "rationale"),
        (reply(rationale=None), "rationale"),
        (json.dumps([1, 2]), "no JSON object"),
    ],
)
def test_invalid_replies_name_their_problem(text: str, reason: str) -> None:
    with pytest.raises(InvalidReply) as info:
        parse_judge_reply(text, RUBRIC, allow_ties=True)
    assert reason in info.value.reason


def test_tie_only_when_allowed() -> None:
    assert parse_judge_reply(reply(winner="tie"), RUBRIC, allow_ties=True).winner == "tie"
    with pytest.raises(InvalidReply, match="does not allow ties"):
        parse_judge_reply(reply(winner="tie"), RUBRIC, allow_ties=False)


@pytest.mark.parametrize("cut", [reply()[:40], reply()[:-1], reply(rationale=None)])
def test_a_reply_cut_off_at_max_tokens_says_so_not_invalid_json(cut: str) -> None:
    with pytest.raises(InvalidReply) as info:
        parse_judge_reply(cut, RUBRIC, allow_ties=True, finish_reason="length", max_tokens=2000)
    assert info.value.reason == "cut off at max_tokens (2000)" and info.value.truncated
    with pytest.raises(InvalidReply) as plain:
        parse_judge_reply(cut, RUBRIC, allow_ties=True, finish_reason="stop", max_tokens=2000)
    assert not plain.value.truncated and "max_tokens" not in plain.value.reason


def test_a_complete_reply_that_hit_max_tokens_is_still_used() -> None:
    assert parse_judge_reply(reply(), RUBRIC, allow_ties=True, finish_reason="length").winner == "option_1"


@pytest.mark.parametrize(
    ("current", "cap", "raised"),
    [(2000, 8000, 4000), (4000, 8000, 8000), (6000, 8000, 8000), (8000, 8000, None), (3000, 2000, None)],
)
def test_a_cut_off_re_ask_doubles_max_tokens_up_to_the_cap(current: int, cap: int, raised: int | None) -> None:
    assert reask_max_tokens(current, cap) == raised


def test_the_re_ask_cap_defaults_to_four_times_max_tokens() -> None:
    assert JudgingParams(max_tokens=500).reask_cap == 2000
    assert JudgingParams(max_tokens=500, reask_max_tokens=700).reask_cap == 700
