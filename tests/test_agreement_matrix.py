"""Tests of the agreement matrix: hand-computed numbers, the report section, and the drill-down through Pilot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable

from centaur_tui.catalog import load_session
from centaur_tui.domain.agreement import WINNER, Label, ScoredVerdict, disagreements, labels
from centaur_tui.report import to_json, to_markdown, to_text
from centaur_tui.services import adjudication as adj
from centaur_tui.services.audit import disagreements as drill_down
from centaur_tui.services.report import session_report
from centaur_tui.stats.agreement_matrix import agreement_matrix
from centaur_tui.store import Store
from centaur_tui.ui.app import create_app
from centaur_tui.ui.screens.agreement import AgreementScreen
from centaur_tui.ui.screens.audit import AuditScreen
from tests.support.experts import judged_session
from tests.support.waits import wait_until
from tests.test_adjudication import ADJUDICATOR, RATIONALE, _plant, expert_verdict


def _labels(judge: str, kind: str, values: str, dimension: str = WINNER) -> list[Label]:
    code = {"a": "a", "b": "b", "t": "tie"}
    return [Label(f"c{i}", judge, kind, dimension, code[v], i) for i, v in enumerate(values) if v != "."]


def test_hand_computed_agreement_and_kappa() -> None:
    found = _labels("ann", "expert", "aabbta") + _labels("j1", "llm", "abbbta") + _labels("bob", "expert", "ab..")
    section = agreement_matrix(found)
    assert section is not None and section.dimensions == [WINNER]
    cells = {(c.judge_a, c.judge_b): c for c in section.cells}
    # ann vs j1: 6 shared, 5 alike; marginals ann a3 b2 t1, j1 a2 b3 t1: pe = 13/36, kappa = (30-13)/(36-13).
    c = cells["ann", "j1"]
    assert (c.n, c.agree, c.kind_a, c.kind_b) == (6, 5, "expert", "llm")
    assert c.agreement == pytest.approx(5 / 6) and c.kappa == pytest.approx(17 / 23)
    # ann vs bob (experts among themselves): 2 shared (aa / ab), 1 alike, too few for kappa.
    assert (cells["ann", "bob"].n, cells["ann", "bob"].agree, cells["ann", "bob"].kappa) == (2, 1, None)
    assert (cells["bob", "j1"].n, cells["bob", "j1"].agree) == (2, 2)
    assert ("j1", "ann") not in cells and len(cells) == 3  # no LLM-LLM cell, each pair once
    assert [x.comparison_id for x, _ in disagreements(found, "ann", "j1", WINNER)] == ["c1"]
    assert agreement_matrix(_labels("j1", "llm", "ab")) is None  # no expert: no matrix


def test_rubric_dimensions_are_labelled_by_which_candidate_scored_higher() -> None:
    def verdict(n: int, judge: str, kind: str, winner: str, sa: int, sb: int, presentation: int = 1) -> ScoredVerdict:
        scores = (("A", "clarity", sa), ("B", "clarity", sb))
        return ScoredVerdict(n, "c", judge, kind, presentation, 0, "A", "B", winner, scores)

    found = labels(
        [
            verdict(1, "ann", "expert", "A", 7, 7),
            verdict(2, "j1", "llm", "B", 3, 9, presentation=2),  # the order-2 judgment loses to order 1
            verdict(3, "j1", "llm", "A", 9, 3, presentation=1),
        ]
    )
    by = {(x.judge, x.dimension): x.value for x in found}
    assert by == {("ann", WINNER): "a", ("ann", "clarity"): "tie", ("j1", WINNER): "a", ("j1", "clarity"): "a"}


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = judged_session(tmp_path)
    path.write_text(path.read_text(encoding="utf-8") + ADJUDICATOR, encoding="utf-8")
    ids = _plant(path)
    study = load_session(path)
    with Store(study.database) as store:
        comps = sorted(store.comparisons().values(), key=lambda c: c.id)
        for c in comps[3:12]:  # enough shared comparisons for kappa
            expert_verdict(store, c.id, "ann", c.candidate_a)
            expert_verdict(store, c.id, "bob", c.candidate_a if c.run % 2 else c.candidate_b)
    return path, ids


def test_the_section_in_the_report_and_the_drill_down_match(planted: tuple[Path, dict[str, str]]) -> None:
    path, ids = planted
    study = load_session(path)
    doc = session_report(study).document
    m = doc.agreement_matrix
    assert m is not None and m.reference == "judgments" and WINNER in m.dimensions
    assert "Agreement matrix" in to_text(doc) and "Agreement matrix" in to_markdown(doc)
    assert json.loads(to_json(doc))["agreement_matrix"]["cells"]
    with Store(study.database, readonly=True) as store:
        for c in m.cells:
            listed = drill_down(store, c.judge_a, c.judge_b, c.dimension)
            assert len(listed) == c.n - c.agree, c
        ann_bob = next(c for c in m.cells if (c.judge_a, c.judge_b, c.dimension) == ("ann", "bob", WINNER))
        assert ids["c1"] in [a.comparison_id for a, _ in drill_down(store, "ann", "bob", WINNER)]
    # The adjudicated verdicts join only when asked, and the section says so.
    with Store(study.database) as store:
        adj.record(study, store, ids["c1"], "option_1", RATIONALE)
    assert session_report(study).document.agreement_matrix == m
    asked = session_report(study, adjudicated_reference=True).document.agreement_matrix
    assert asked is not None and "adjudicated" in asked.reference
    assert any(c.kind_b == "adjudicated" and c.n == 1 for c in asked.cells)
    assert ann_bob.n >= 10


async def test_selecting_a_cell_lists_its_disagreements_and_each_opens_in_the_audit_view(
    planted: tuple[Path, dict[str, str]],
) -> None:
    path, ids = planted
    study = load_session(path)
    matrix = session_report(study).document.agreement_matrix
    assert matrix is not None
    index = next(i for i, c in enumerate(matrix.cells) if (c.judge_a, c.judge_b, c.dimension) == ("ann", "bob", WINNER))
    cell = matrix.cells[index]
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.push_screen(AgreementScreen(study, matrix))
        screen = app.screen
        assert isinstance(screen, AgreementScreen)
        cells = screen.query_one("#agreement-cells", DataTable)
        cells.focus()
        cells.move_cursor(row=index)
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.cell is cell and len(screen.listed) > 0, "the disagreements listed")
        listed = screen.query_one("#agreement-disagreements", DataTable)
        assert listed.row_count == cell.n - cell.agree == len(screen.listed)
        shown = [str(listed.get_row_at(i)[0]) for i in range(listed.row_count)]
        assert ids["c1"] in shown and ids["c2"] not in shown  # c2: ann and bob agreed
        listed.focus()
        listed.move_cursor(row=shown.index(ids["c1"]))
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen.audit is not None, "the audit view"
        )
        audit = app.screen
        assert isinstance(audit, AuditScreen)
        judges = {r.judgment.judge for r in audit.rows if r.judgment is not None}
        assert {"ann", "bob"} <= judges
        rationales = {r.judgment.judge: r.judgment.rationale for r in audit.rows if r.judgment is not None}
        assert "ann wrote this rationale" in rationales["ann"] and "bob wrote" in rationales["bob"]
        assert all(r.judgment.scores for r in audit.rows if r.judgment is not None and r.judgment.judge in judges)
