"""Batch results read as untrusted text (llm/batch.py), and batch prices: table-driven, no server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from centaur_tui.domain.session import Endpoint
from centaur_tui.llm.batch import MAX_RESULT_LINE, batch_cost, batch_prices, parse_results, request_line


def line(custom_id: Any = "a", content: Any = "fine", status: Any = 200, **extra: Any) -> dict[str, Any]:
    body = {
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3},
    }
    return {"custom_id": custom_id, "response": {"status_code": status, "body": body}, "error": None, **extra}


def dump(*lines: Any) -> bytes:
    return b"".join((x if isinstance(x, bytes) else json.dumps(x).encode()) + b"\n" for x in lines)


def test_an_answer_carries_its_text_finish_reason_tokens_and_model() -> None:
    parsed = parse_results(dump(line()), ["a"])
    answer = parsed.results["a"].answer
    assert answer is not None and (answer.text, answer.finish_reason) == ("fine", "stop")
    assert (answer.prompt_tokens, answer.completion_tokens, answer.served_model) == (10, 3, "m")
    assert parsed.problems == []


@pytest.mark.parametrize(
    ("content", "error_type", "words"),
    [
        (None, "MalformedReply", "null content"),
        ("", "MalformedReply", "empty"),
        ("   ", "MalformedReply", "whitespace"),
        (42, "MalformedReply", "not text"),
    ],
)
def test_a_reply_that_is_no_answer_is_an_error_never_a_text(content: Any, error_type: str, words: str) -> None:
    result = parse_results(dump(line(content=content)), ["a"]).results["a"]
    assert result.answer is None and result.error_type == error_type and words in (result.message or "")


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "no custom_id"),
        (b'{"custom_id": 5}', "no custom_id"),
        (b"[" * 100_000 + b"]" * 100_000, "not JSON"),  # nested beyond the parser's recursion limit
        (json.dumps(line("stranger")).encode(), "was not sent in this batch"),
        (b'{"custom_id": "a", "pad": "' + b"x" * (MAX_RESULT_LINE + 1) + b'"}', "bytes, over the"),
    ],
    ids=["not-json", "a-list", "custom-id-not-text", "nested-deep", "never-sent", "over-4-MB"],
)
def test_lines_that_cannot_be_a_result_of_this_batch_are_noted_and_give_nothing(raw: bytes, problem: str) -> None:
    parsed = parse_results(raw + b"\n", ["a"])
    assert parsed.results == {} and any(problem in p for p in parsed.problems), parsed.problems


def test_two_results_for_one_request_give_no_answer_at_all() -> None:
    parsed = parse_results(dump(line(content="first"), line(content="second"), line(content="third")), ["a"])
    assert parsed.results["a"].answer is None and parsed.results["a"].error_type == "BatchDuplicateResult"
    # A duplicate across the output and the error file is caught too.
    parsed = parse_results(dump(line()), ["a"])
    parse_results(dump({"custom_id": "a", "response": None, "error": {"code": "x", "message": "y"}}), ["a"], parsed)
    assert parsed.results["a"].error_type == "BatchDuplicateResult"


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"error": {"code": "rate_limit", "message": "slow \x1b[31mdown"}}, "rate_limit: slow down"),
        ({"response": {"status_code": 500, "body": {"error": {"message": "upstream"}}}}, "status 500: upstream"),
        ({"response": {"status_code": 200, "body": "text"}}, "not a JSON object"),
        ({"response": None}, "no response"),
    ],
)
def test_error_results_are_errors_with_a_clean_message(entry: dict[str, Any], words: str) -> None:
    result = parse_results(dump({"custom_id": "a", **entry}), ["a"]).results["a"]
    assert result.answer is None and words in (result.message or "") and "\x1b" not in (result.message or "")


@pytest.mark.parametrize("usage", [{"prompt_tokens": -1, "completion_tokens": True}, {}, "lots", None])
def test_usage_that_is_not_counts_is_unknown_not_zero(usage: Any) -> None:
    entry = line()
    entry["response"]["body"]["usage"] = usage
    answer = parse_results(dump(entry), ["a"]).results["a"].answer
    assert answer is not None and (answer.prompt_tokens, answer.completion_tokens) == (None, None)
    assert batch_cost((1.0, 1.0, "x"), answer.prompt_tokens, answer.completion_tokens) is None


def test_the_request_line_is_a_chat_completion_without_the_provider_prefix() -> None:
    ep = Endpoint(model="openai/gpt-4o-mini", params={"reasoning_effort": "low"})
    data = json.loads(request_line("k1", ep, [{"role": "user", "content": "hi"}], {"max_tokens": 5}))
    assert data == {
        "custom_id": "k1",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "hi"}],
            "reasoning_effort": "low",
            "max_tokens": 5,
        },
    }


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"model": "openai/gpt-4o-mini", "batch_input_cost_per_mtok": 1.0, "batch_output_cost_per_mtok": 2.0},
            (1e-6, 2e-6, "session batch price"),
        ),
        ({"model": "openai/gpt-4o-mini"}, (7.5e-08, 3e-07, "litellm price map batch price")),
        (
            {"model": "openai/unknown-x", "input_cost_per_mtok": 2.0, "output_cost_per_mtok": 8.0},
            (1e-6, 4e-6, "session price x 0.5"),
        ),
        ({"model": "openai/unknown-x"}, None),
        # gpt-4 has an online price in litellm's map but no batch price: the map's price x discount,
        # unless the session prices the entry (the session's price wins, as for online calls).
        ({"model": "openai/gpt-4"}, (1.5e-05, 3e-05, "litellm price map x 0.5")),
        (
            {"model": "openai/gpt-4", "input_cost_per_mtok": 2.0, "output_cost_per_mtok": 8.0},
            (1e-6, 4e-6, "session price x 0.5"),
        ),
    ],
)
def test_batch_prices_come_from_the_session_then_the_price_map_then_a_discount(
    fields: dict[str, Any], expected: Any
) -> None:
    prices = batch_prices(Endpoint(**fields), 0.5)
    if expected is None:
        assert prices is None
    else:
        assert prices is not None and prices[2] == expected[2]
        assert prices[:2] == pytest.approx(expected[:2])
