"""The store's tidy reads hand out typed, frozen records (issue 21), in the export's column order."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from centaur_tui.domain.records import (
    CALL_ERROR_ROW_FIELDS,
    JUDGMENT_ROW_FIELDS,
    OPTIONAL_JUDGMENT_COLUMNS,
    OUTPUT_ROW_FIELDS,
    REQUIRED_JUDGMENT_COLUMNS,
    SCORE_COLUMNS,
    CallErrorRow,
    CallFailure,
    CallRecord,
    ComparisonRecord,
    InvalidJudgmentRow,
    JudgmentRecord,
    JudgmentRow,
    OutputRecord,
    OutputRow,
    ScoreRecord,
    ScoreRow,
)
from centaur_tui.pipeline.export import JUDGMENT_COLUMNS, OUTPUT_COLUMNS
from centaur_tui.store import Store, left_out

HOSTILE = 'naïve "quoted", comma\nnewline \x00 nul; DROP TABLE judgments; -- 🙂'


def _call(key: str, *, simulated: bool = True) -> CallRecord:
    return CallRecord(
        key, "judging", "m", "s", '[{"role": "user"}]', "{}", HOSTILE, 3, 4, None, 0.25, 2, simulated, "stop"
    )


@pytest.fixture
def store(tmp_path: Path):
    with Store(tmp_path / "s.db") as s:
        s.save_output(OutputRecord("o1", 1, "t", "automation", "A", "A", HOSTILE, None, None, cut_off=True))
        s.save_output(OutputRecord("o2", 1, "t", "automation", "B", "B", "b", None, None))
        s.save_comparisons([ComparisonRecord("c1", 1, "t", "automation", "A", "B", "o1", "o2")])
        scores = (ScoreRecord("A", "d1", "task", 7), ScoreRecord("B", "d1", "task", 3))
        valid = JudgmentRecord(
            "c1", "j", "llm", "F", 0, "A", "B", "A", 7.0, 3.0, True, None, HOSTILE, "k1", 1, scores, seconds=1.5
        )
        invalid = JudgmentRecord("c1", "j", "llm", "F", 1, "B", "A", None, None, None, False, "no JSON", None, None, 3)
        s.save_judgment(valid, (_call("k1"),))
        s.save_judgment(invalid)
        s.record_failure(CallFailure("k2", "judging", "m", 1, "Timeout", HOSTILE, True))
        yield s


def test_judgment_rows_are_typed_and_in_the_export_column_order(store: Store) -> None:
    rows = store.judgment_rows()
    assert all(type(r) is JudgmentRow for r in rows) and len(rows) == 2
    first, second = rows
    assert (first.valid, second.valid) == (True, False)  # SQLite's 0/1 as bools
    assert first.winner == "A" and second.winner is None and second.invalid_reason == "no JSON"
    assert first.rationale == HOSTILE and first.seconds == 1.5 and second.seconds is None
    assert (first.run, first.task, first.mode, first.judgment_id) == (1, "t", "automation", 1)
    # The fields are the export's columns (less `batch`, which the export adds), in its order.
    assert (*REQUIRED_JUDGMENT_COLUMNS, *OPTIONAL_JUDGMENT_COLUMNS[:-1]) == JUDGMENT_ROW_FIELDS
    assert (*JUDGMENT_ROW_FIELDS, "batch") == JUDGMENT_COLUMNS
    assert list(first.as_row()) == list(JUDGMENT_ROW_FIELDS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.winner = "B"  # type: ignore[misc]


def test_score_output_and_error_rows_are_typed(store: Store) -> None:
    scores = store.score_rows()
    assert scores == [ScoreRow("c1", "j", "A", "d1", "task", 7, 1), ScoreRow("c1", "j", "B", "d1", "task", 3, 1)]
    assert tuple(f.name for f in dataclasses.fields(ScoreRow)) == SCORE_COLUMNS
    assert list(scores[0].as_row()) == list(SCORE_COLUMNS)

    outputs = store.output_rows()
    assert [type(o) for o in outputs] == [OutputRow, OutputRow]
    assert [(o.output_id, o.cut_off, o.assistance_text) for o in outputs] == [("o1", True, None), ("o2", False, None)]
    assert outputs[0].text == HOSTILE
    assert OUTPUT_COLUMNS == OUTPUT_ROW_FIELDS and list(outputs[0].as_row()) == list(OUTPUT_ROW_FIELDS)

    [error] = store.error_rows()
    assert type(error) is CallErrorRow and error.final is True and error.message == HOSTILE
    assert (error.key, error.error_type, error.finish_reason, error.attempt) == ("k2", "Timeout", None, 1)
    assert tuple(f.name for f in dataclasses.fields(CallErrorRow)) == CALL_ERROR_ROW_FIELDS


def test_left_out_lists_invalid_judgments_as_records(store: Store) -> None:
    left = left_out(store)
    assert left.invalid == [InvalidJudgmentRow(2, 1, "t", "automation", "A", "B", "j", "llm", 3, "no JSON")]
    assert left.invalid_total == 1 and left.errors_total == 1 and left.errors[0].message == HOSTILE
    assert left_out(store, limit=0).invalid == [] and left_out(store, limit=0).invalid_total == 1


def test_a_stored_call_reads_back_as_its_record(store: Store) -> None:
    assert store.call("k1") == _call("k1")
    assert store.call("no such key") is None


def test_an_empty_store_reads_empty_lists(tmp_path: Path) -> None:
    with Store(tmp_path / "empty.db") as s:
        assert (s.judgment_rows(), s.score_rows(), s.output_rows(), s.error_rows()) == ([], [], [], [])
