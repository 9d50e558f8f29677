"""Tests for blinding measured (issue 26): identifiability and Bang's blinding index, worked by hand."""

from __future__ import annotations

import random

import pytest

from centaur_tui.stats.blinding import Deliverable, Guess, blinding_index, guess_rows, identifiability, wilson


def test_wilson_matches_the_hand_computed_interval() -> None:
    # 7/10, z = 1.959964: centre (0.7 + z²/20)/(1 + z²/10) = 0.644495,
    # half z·sqrt(0.021 + z²/400)/(1 + z²/10) = 0.247715
    low, high = wilson(7, 10)
    assert low == pytest.approx(0.396780, abs=1e-5)
    assert high == pytest.approx(0.892210, abs=1e-5)


def test_identifiability_on_a_hand_made_example() -> None:
    a = [
        "# Plan\n\n- **one** thing\n- **two** things",
        "# Notes\n\n- **three** items\n- **four**",
        "# List\n\n- **five**\n- **six**",
    ]
    b = [
        "plain prose about one thing, written as a paragraph.",
        "more plain prose, two sentences here. yes.",
        "prose again, quiet and long and flat.",
    ]
    items = [Deliverable("t", "automation", "A", x) for x in a] + [Deliverable("t", "automation", "B", x) for x in b]
    items.append(Deliverable("t", "augmentation", "A", a[0]))  # a cell with one deliverable of A, none of B
    items += [Deliverable("u", "automation", c, "x") for c in ("A", "A", "B")]  # B has 1 < 3: too few
    rows = {(r.task, r.mode): r for r in identifiability(items, margin=0.1)}
    ok = rows[("t", "automation")]
    # Two layouts nothing alike: every held-out prediction right, 6 of 6 (3 folds).
    # Wilson 6/6: centre (1 + z²/12)/(1 + z²/6) = 0.804836, half (z²/12)/(1 + z²/6) = 0.195164.
    assert (ok.status, ok.deliverables, ok.candidates, ok.folds, ok.correct) == ("ok", 6, 2, 3, 6)
    assert ok.accuracy == 1.0 and ok.chance == 0.5
    assert ok.low == pytest.approx(0.609672, abs=1e-5) and ok.high == 1.0
    assert ok.threat  # 0.6097 > 0.5 + 0.1
    assert rows[("t", "augmentation")].status == "one candidate"
    few = rows[("u", "automation")]
    assert (few.status, few.deliverables, few.candidates, few.accuracy) == ("too few", 3, 2, None)
    assert few.reason is not None and "B has 1" in few.reason


def test_identical_writing_is_not_a_threat() -> None:
    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta", "plan", "cost", "risk", "step"]
    items = [
        Deliverable("t", "automation", c, " ".join(rng.choice(words) for _ in range(30)))
        for c in "ABC"
        for _ in range(5)
    ]
    (row,) = identifiability(items, seed=1)
    assert row.status == "ok" and row.deliverables == 15
    assert not row.threat  # every candidate draws from one vocabulary: nothing to learn


def test_blinding_index_worked_by_hand() -> None:
    # e1, K = 2: 6 right, 2 wrong, 2 don't know. BI = (6 - 2)/10 = 0.4;
    # Var = [0.6·0.4 + 0.2·0.8 + 2·0.6·0.2]/10 = 0.064 (Bang 2004), SE 0.252982, half 0.495835.
    e1 = [Guess("e1", "X", "correct", 2)] * 6 + [Guess("e1", "X", "incorrect", 2)] * 2
    e1 += [Guess("e1", "X", "dont_know", 2)] * 2
    bi, low, high = blinding_index([(g.outcome, g.candidates) for g in e1]) or (0, 0, 0)
    assert bi == pytest.approx(0.4)
    assert low == pytest.approx(0.4 - 0.495835, abs=1e-5) and high == pytest.approx(0.4 + 0.495835, abs=1e-5)
    # e2, K = 5: 3 right, 3 wrong and 1 named something else (each -1/4), 1 don't know: BI = (3 - 1)/8 = 0.25.
    e2 = [Guess("e2", "Y", "correct", 5)] * 3 + [Guess("e2", "Y", "incorrect", 5)] * 3
    e2 += [Guess("e2", "Y", "unmatched", 5), Guess("e2", "Y", "dont_know", 5)]
    # e3, K = 5, guessing at random's expectation: 1 right, 4 wrong: BI = (1 - 1)/5 = 0.
    e3 = [Guess("e3", "X", "correct", 5)] + [Guess("e3", "X", "incorrect", 5)] * 4
    rows = {(r.level, r.group, r.name): r for r in guess_rows(e1 + e2 + e3, threshold=0.2)}
    e2row = rows[("candidate", "expert", "e2")]
    assert e2row.index == pytest.approx(0.25) and e2row.flagged
    assert (e2row.incorrect, e2row.unmatched, e2row.dont_know, e2row.scored) == (4, 1, 1, 8)
    assert rows[("candidate", "expert", "e3")].index == pytest.approx(0.0)
    assert not rows[("candidate", "expert", "e3")].flagged
    e1row = rows[("candidate", "expert", "e1")]
    assert (e1row.guesses, e1row.correct, e1row.incorrect, e1row.dont_know, e1row.flagged) == (10, 6, 2, 2, True)
    # Per arm: truth X holds e1's ten and e3's five: scores 6·1 + 2·(-1) + 1·1 + 4·(-1/4) = 4, n = 15.
    assert rows[("candidate", "candidate", "X")].index == pytest.approx(4 / 15)
    assert rows[("candidate", "candidate", "X")].guesses == 15
    # Family level, F = 3: e4 names the right family 3 times (2 of them "family only" at the candidate level,
    # scored 0 there), a wrong family once, nothing known once; one guess where every candidate shares a
    # family is not scored. Candidate level (K = 4): (1 - 1/3)/6 = 1/9; family level: (3 - 1/2)/5 = 0.5.
    e4 = [Guess("e4", "Z", "correct", 4, "correct", 3)] + [Guess("e4", "Z", "family_only", 4, "correct", 3)] * 2
    e4 += [Guess("e4", "Z", "incorrect", 4, "incorrect", 3), Guess("e4", "Z", "dont_know", 4, "dont_know", 3)]
    e4 += [Guess("e4", "Z", "dont_know", 4, "one_family", 1)]
    rows = {(r.level, r.group, r.name): r for r in guess_rows(e4)}
    cand, fam = rows[("candidate", "expert", "e4")], rows[("family", "expert", "e4")]
    assert cand.index == pytest.approx(1 / 9) and (cand.scored, cand.family_only, cand.dont_know) == (6, 2, 2)
    assert fam.index == pytest.approx(0.5) and (fam.guesses, fam.scored, fam.correct, fam.dont_know) == (6, 5, 3, 1)
    assert fam.flagged and not cand.flagged


def test_blinding_index_refuses_a_single_candidate_and_handles_nothing() -> None:
    assert blinding_index([]) is None
    with pytest.raises(ValueError, match="at least two"):
        guess_rows([Guess("e", "X", "correct", 1)])
    with pytest.raises(ValueError, match="unknown guess outcome"):
        guess_rows([Guess("e", "X", "maybe", 2)])
    # Every guess in a one-family comparison: the family row keeps its guesses, with no index.
    (_, _, fam, _) = guess_rows([Guess("e", "X", "correct", 2, "one_family", 1)])
    assert fam.level == "family" and fam.guesses == 1 and fam.scored == 0 and fam.index is None and not fam.flagged


def test_random_guessers_cover_zero() -> None:
    """Planted truth: experts guessing at random among K = 4; the 95% interval covers BI = 0 in most studies."""
    rng = random.Random(26)
    covered = 0
    studies = 60
    for _ in range(studies):
        guesses = []
        for _ in range(60):
            truth = rng.choice("ABCD")
            answer = None if rng.random() < 0.2 else rng.choice("ABCD")
            outcome = "dont_know" if answer is None else ("correct" if answer == truth else "incorrect")
            guesses.append(Guess("e", truth, outcome, 4))
        _, low, high = blinding_index([(g.outcome, g.candidates) for g in guesses]) or (0, 0, 0)
        covered += low <= 0.0 <= high
    assert covered / studies >= 0.88, covered
