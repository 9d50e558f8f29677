"""Tests for the normalised presentation: one layout, the same words, on tidy and hostile input."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from centaur_tui.domain.presentation import normalise, words

STYLES = {
    "atx": "# Plan\n\n## Budget\n- **Rent.** 1,200 a month.\n- **Food.** 300.\n\nClosing words.",
    "setext": "Plan\n====\n\nBudget\n------\n* __Rent.__ 1,200 a month.\n* __Food.__ 300.\n\n\n\nClosing words.",
    "bold_headings": "**Plan**\n\n**Budget**\n\n+ *Rent.* 1,200 a month.\n\n+ *Food.* 300.\nClosing\nwords.",
}


def test_three_layouts_of_one_text_become_one() -> None:
    out = {name: normalise(text) for name, text in STYLES.items()}
    assert len(set(out.values())) == 1, out
    assert out["atx"] == "## Plan\n\n## Budget\n\n- Rent. 1,200 a month.\n- Food. 300.\n\nClosing words."


@pytest.mark.parametrize(
    "text",
    [
        "2*3*4 is not emphasis, nor is snake_case_name or a*b",
        "**unclosed bold and _unclosed italic",
        "***\n---\n___",
        "# \n##\n######## seven hashes",
        "```\nunclosed fence *x*\n  kept",
        "| a | **b** |\n|---|---|",
        "\t* tab bullet\n        * deep\n1) one\n10. ten",
        "\r\nwindows\r\nlines\rold mac",
        "**a** **b**c d**e** _f_g h_i_",
        "\u2022 bullet \u00a0 nbsp",
        "",
        "   \n\n  ",
        "Title\n===\nText\n---",
    ],
    ids=range(13),
)
def test_hostile_text_keeps_its_words(text: str) -> None:
    assert words(normalise(text)) == words(text)


def test_random_markdown_keeps_its_words() -> None:
    rng = random.Random(26)
    pieces = [
        "#",
        "##",
        "*",
        "**",
        "_",
        "__",
        "-",
        "+",
        "1.",
        "2)",
        "\n",
        "\n\n",
        " ",
        "  ",
        "word",
        "x1",
        "|",
        "```",
        "===",
    ]
    for _ in range(300):
        text = "".join(rng.choice(pieces) + rng.choice(["", " "]) for _ in range(rng.randint(0, 40)))
        assert words(normalise(text)) == words(text), repr(text)


def test_normalising_twice_changes_nothing() -> None:
    for text in STYLES.values():
        once = normalise(text)
        assert normalise(once) == once


def test_the_simulated_layouts_differ_as_written_and_meet_when_normalised() -> None:
    from centaur_tui.catalog import load_session
    from centaur_tui.llm.simulation import deliverable, read_deliverable

    study = load_session(Path(__file__).resolve().parents[1] / "sessions" / "demo.toml")
    task = study.task("tax_preparation")
    coverage = {r.id: 1 + i % 3 for i, r in enumerate(task.requirements)}
    texts = [deliverable(task, coverage, random.Random(1), style) for style in range(5)]
    assert len(set(texts)) == 5
    assert all(words(t) == words(texts[0]) for t in texts)  # the same words in every layout
    assert all(read_deliverable(task, t) == read_deliverable(task, texts[0]) for t in texts)  # judged alike
    assert len({normalise(t) for t in texts}) == 1
