"""The organiser's console (issue 27): figures equal hand-computed values; integrity signals on planted behaviour."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from centaur_tui.catalog import load_session
from centaur_tui.domain import integrity
from centaur_tui.domain.blinding import Draft
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.services.console import build_console, integrity_section
from centaur_tui.services.judging import SessionJudging
from centaur_tui.services.session import expert
from centaur_tui.store import ExpertStore, Store
from tests.support.experts import judged_session
from tests.support.judging import assign

TYPED = "the first option covers every requirement of the task"
NOW = datetime(2026, 1, 2, 12, 0, tzinfo=UTC)


def _judge(source: SessionJudging, key: str, winner: str, seconds: float, active: float, pasted: int | None) -> None:
    rubric = source.item(key).rubric
    draft = Draft({d.id: [7, 5] for d in rubric.all}, winner, TYPED, seconds, active, pasted_chars=pasted)  # type: ignore[arg-type]
    draft.confirmed_lower = winner == "option_2"
    source.submit(key, draft)


def _set_times(path: Path, expert_id: str, times: list[str]) -> None:
    conn = sqlite3.connect(path)
    try:
        ids = [r[0] for r in conn.execute("SELECT id FROM judgments WHERE judge = ? ORDER BY id", (expert_id,))]
        for i, t in zip(ids, times, strict=True):
            conn.execute("UPDATE judgments SET created_at = ? WHERE id = ?", (t, i))
        conn.commit()
    finally:
        conn.close()


def _gold(path: Path, expert_id: str, passed: list[int | None]) -> None:
    """Gold places of an expert: 1 passed, 0 failed, None not judged."""
    conn = sqlite3.connect(path)
    try:
        task, output = conn.execute("SELECT task, id FROM outputs LIMIT 1").fetchone()
        for n, p in enumerate(passed, start=1):
            conn.execute(
                "INSERT INTO expert_checks (token, expert, kind, ordinal, after_position, task, output_id, degraded,"
                " degradation, intact_option, judged_at, passed, created_at) VALUES (?, ?, 'gold', ?, 1, ?, ?, 'x',"
                " 'cut', 1, ?, ?, '2026-01-01T00:00:00+00:00')",
                (f"g{expert_id}{n}", expert_id, n, task, output, None if p is None else "2026-01-01T09:00:00+00:00", p),
            )
        conn.commit()
    finally:
        conn.close()


@pytest.fixture
def study_path(tmp_path: Path) -> Path:
    path = judged_session(tmp_path)
    assign(path, "ann", 3)
    assign(path, "bob", 2)
    return path


def test_console_figures_equal_hand_computed_values(study_path: Path) -> None:
    study = load_session(study_path)
    with Store(study.database) as store:
        ann = SessionJudging(store, study, expert(study, store, "ann"))
        keys = [str(p.id) for p in ann.rows.places()]
        _judge(ann, keys[0], "option_1", 60.0, 40.0, 0)
        _judge(ann, keys[1], "option_2", 120.0, 80.0, len(TYPED))  # all pasted; a lower-average winner, confirmed
        ann.set_state(keys[2], "flagged", "option 2 is cut off")
        bob = SessionJudging(store, study, expert(study, store, "bob"))
        bob_keys = [str(p.id) for p in bob.rows.places()]
        _judge(bob, bob_keys[0], "option_1", 2.0, 2.0, None)
        bob.set_state(bob_keys[1], "skipped")
    _set_times(study.database, "ann", ["2026-01-02T10:00:00.000+00:00", "2026-01-02T11:00:00.000+00:00"])
    _set_times(study.database, "bob", ["2026-01-02T12:00:00.000+00:00"])
    _gold(study.database, "ann", [1, 1, 0, None])
    with Store(study.database) as store:
        console = build_console(study, store, now=NOW)
        assigned = store.read(
            "SELECT c.task, c.mode, count(*) AS n FROM expert_assignments a JOIN comparisons c"
            " ON c.id = a.comparison_id GROUP BY c.task, c.mode"
        )
    figures = {e.expert: e for e in console.experts}
    a, b = figures["ann"], figures["bob"]
    assert (a.judgments, a.assigned, a.done, a.completion) == (2, 3, 2, pytest.approx(2 / 3))
    assert a.per_hour == pytest.approx(2 * 3600 / 180)  # 2 judgments in 60 + 120 s of judging
    assert (a.median_seconds, a.median_active_seconds) == (90.0, 60.0)
    assert (a.gold_judged, a.gold_passed, a.gold_pass_rate) == (3, 2, pytest.approx(2 / 3))
    assert (a.lower_average, a.lower_average_confirmed) == (1, 1)  # option 2 won with 5 against 7
    assert (a.skipped, a.flagged) == (0, 1)
    assert [(n.place, n.note) for n in a.notes] == [(keys[2], "option 2 is cut off")]
    assert a.last_seen is not None and a.last_seen >= "2026-01-02T11:00:00.000+00:00"
    assert (b.judgments, b.assigned, b.done, b.skipped, b.flagged) == (1, 2, 1, 1, 0)
    assert b.per_hour == pytest.approx(1800.0) and b.gold_pass_rate is None
    # Burn-down: 3 judged, 2 left; each task and mode's cells add up to its places.
    assert (console.done, console.left, console.assigned) == (3, 2, 5)
    assert {(r.task, r.mode): r.done + r.left for r in console.burn_down} == {
        (r["task"], r["mode"]): r["n"] for r in assigned
    }
    # Pace: 3 judgments from 10:00 to 12:00 = 2 intervals in 2 h; 2 places left = 2 h after now.
    assert console.pace_per_hour == pytest.approx(1.0)
    assert console.expected_finish == "2026-01-02T14:00:00+00:00"
    # Signals: ann pasted one rationale of two (recorded for both); bob's paste was not recorded.
    assert (a.integrity.paste_recorded, a.integrity.pasted, a.integrity.pasted_share) == (2, 1, 0.5)
    assert (b.integrity.paste_recorded, b.integrity.pasted, b.integrity.pasted_share) == (0, 0, None)
    assert (a.integrity.repeated, a.integrity.option1_wins, a.integrity.decided) == (2, 1, 2)


def test_a_study_with_nothing_left_or_one_judgment_has_no_expected_finish(study_path: Path) -> None:
    study = load_session(study_path)
    with Store(study.database) as store:
        console = build_console(study, store, now=NOW)
    assert (console.done, console.left, console.pace_per_hour, console.expected_finish) == (0, 5, None, None)
    assert all(e.per_hour is None and e.completion == 0 for e in console.experts)


@pytest.mark.parametrize(
    ("k", "n", "p"),
    [(0, 0, None), (5, 10, 1.0), (10, 10, 2 / 1024), (0, 10, 2 / 1024), (9, 10, 22 / 1024), (7, 10, 0.34375)],
)
def test_the_binomial_test_equals_the_exact_two_sided_p(k: int, n: int, p: float | None) -> None:
    got = integrity.binomial_two_sided(k, n)
    assert got == (None if p is None else pytest.approx(p))


def test_the_binomial_test_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        integrity.binomial_two_sided(11, 10)


def test_reading_time_is_the_words_at_the_documented_rate() -> None:
    assert integrity.READING_WORDS_PER_MINUTE == 1000
    assert integrity.reading_seconds(300, 200) == 30.0
    assert integrity.too_fast(29.9, 300, 200) and not integrity.too_fast(30.0, 300, 200)
    assert not integrity.too_fast(None, 300, 200)


def test_repeated_rationales_count_other_comparisons_only() -> None:
    same = "This one is better in every respect."
    assert integrity.repeated([("c1", same), ("c1", same)]) == 0  # a swapped repeat of one comparison
    assert integrity.repeated([("c1", same), ("c2", "  THIS one is better in every\nrespect. ")]) == 2
    assert integrity.repeated([("c1", "short"), ("c2", "short")]) == 0  # below MIN_REPEATED_CHARS


def test_pasted_share_handles_hostile_counts() -> None:
    assert integrity.pasted_share(None, "abc") is None
    assert integrity.pasted_share(5, "") is None
    assert integrity.pasted_share(-3, "abcd") == 0.0
    assert integrity.pasted_share(99, "abcd") == 1.0


def test_planted_experts_raise_their_signals_and_nobody_else_is_flagged(tmp_path: Path) -> None:
    """A scripted expert who pastes, one who clicks through in two seconds, one who always picks option 1."""
    path = judged_session(tmp_path)
    study = load_session(path)
    with Store(study.database) as store:
        ExpertStore(store).add_expert(study, ExpertSpec(id="cy", name="Cy"))
    for who in ("ann", "bob", "cy"):
        assign(path, who, 12)
    with Store(study.database) as store:
        for who, n in (("ann", 12), ("bob", 12), ("cy", 12)):
            source = SessionJudging(store, study, expert(study, store, who))
            for i, place in enumerate(source.rows.places()[:n]):
                key = str(place.id)
                item = source.item(key)
                rationale = f"{who} judged comparison {i}: option {1 + i % 2} meets more of the brief"
                honest_time = integrity.reading_seconds(len(item.option_1.split()), len(item.option_2.split())) + 60
                draft = Draft(
                    {d.id: [6, 6] for d in item.rubric.all},  # type: ignore[misc]
                    "option_1" if who == "cy" else ("option_1" if i % 2 == 0 else "option_2"),
                    rationale,
                    2.0 if who == "bob" else honest_time,
                    2.0 if who == "bob" else honest_time,
                    pasted_chars=len(rationale) if who == "ann" else 0,
                )
                source.submit(key, draft)
        console = build_console(study, store, now=NOW)
        section = integrity_section(store)
    signals = {e.expert: e.integrity for e in console.experts}
    assert (signals["ann"].pasted, signals["ann"].paste_recorded, signals["ann"].pasted_share) == (12, 12, 1.0)
    assert (signals["bob"].too_fast, signals["bob"].timed) == (12, 12)
    assert (signals["cy"].option1_wins, signals["cy"].decided) == (12, 12) and signals["cy"].follows_order
    assert signals["cy"].order_p == pytest.approx(2 / 4096)
    assert [w for w, s in signals.items() if s.pasted] == ["ann"]
    assert [w for w, s in signals.items() if s.too_fast] == ["bob"]
    assert [w for w, s in signals.items() if s.follows_order] == ["cy"]
    assert not any(s.repeated for s in signals.values())
    # The report carries the same counts; nobody is left out for them.
    assert section is not None
    rows = {r.expert: r for r in section.rows}
    assert (rows["ann"].pasted, rows["bob"].too_fast, rows["cy"].option1_wins) == (12, 12, 12)
    assert section.reading_words_per_minute == 1000
