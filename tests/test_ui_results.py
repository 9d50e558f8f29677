"""The results and audit screens: numbers equal to the report document, rank cell to rationale and back, a snapshot."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

from textual.widgets import DataTable, TabbedContent

from centaur_tui import report as render
from centaur_tui.catalog import load_session
from centaur_tui.store import Store, cell_audit, left_out
from centaur_tui.ui.app import create_app
from centaur_tui.ui.screens.audit import AuditScreen, rows_of
from centaur_tui.ui.screens.results import ResultsScreen, scatter_points
from centaur_tui.ui.screens.session import SessionScreen
from centaur_tui.ui.widgets.rank_matrix import RankMatrix, rank_class
from centaur_tui.ui.widgets.scatter import scatter_lines
from centaur_tui.ui.widgets.section_view import SectionView
from tests.support.experts import judged_session
from tests.support.reports import cli_doc
from tests.support.waits import wait_for, wait_until


async def open_results(pilot) -> ResultsScreen:
    app = pilot.app
    await wait_for(
        pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None, "the session overview"
    )
    await pilot.press("s")
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, ResultsScreen) and app.screen.results is not None and not app.screen.computing,
        "the results",
        tries=1000,
    )
    await pilot.pause()
    return app.screen  # type: ignore[return-value]


async def show_tab(pilot, screen: ResultsScreen, tab: str) -> None:
    screen.query_one(TabbedContent).active = tab
    await wait_for(pilot, lambda: tab not in screen._pending, f"the {tab} tab built")
    await pilot.pause()


async def test_numbers_on_screen_are_the_report_documents(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    expected = cli_doc(path).to_dict()
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(pilot)
        doc = screen.results.doc.to_dict()
        assert json.dumps(doc, sort_keys=True) == json.dumps(expected, sort_keys=True)
        assert "SIMULATED DATA" in app.screen_text()
        # The focused matrix shows the mean rank ± SE of the cell under its cursor.
        focused = app.screen.focused
        assert isinstance(focused, RankMatrix) and focused.mode_name == expected["modes"][0]["mode"]
        for m in expected["modes"]:
            await show_tab(pilot, screen, f"tab-{m['mode']}")
            matrix = screen.query_one(f"#matrix-{m['mode']}", RankMatrix)
            assert (matrix.tasks, matrix.candidates) == (m["tasks"], m["candidates"])
            # What the matrix draws, against the text report's rank-of-ranks and mean rank ± SE tables.
            parts = next(p for p in render.mode_sections(expected) if p.mode == m["mode"])
            rr, mean_se, overall = parts.rank_of_ranks, parts.mean_rank, parts.overall
            assert rr.notes[0].startswith(parts.denominators)
            drawn = [line.split() for line in str(matrix.render()).splitlines()]
            assert drawn[0] == ["task", *m["candidates"]]
            for r, task in enumerate(m["tasks"]):
                expect = [row[1 + r] for row in rr.rows]  # rr has candidates as rows, tasks as columns
                if matrix.has_focus and matrix.cursor[0] == r:
                    c = matrix.cursor[1]
                    expect[c] = next(row[1 + r] for row in mean_se.rows if row[0] == m["candidates"][c])
                assert drawn[1 + r] == [task, *expect]
            assert screen.query_one(f"#overall-{m['mode']}", SectionView).rows == overall.rows
            await show_tab(pilot, screen, f"tab-{expected['modes'][-1]['mode']}")
        # Inactive tabs are built when first shown.
        assert not screen.query("#best-by-task")
        for tab in ("tab-across", "tab-reliability", "tab-validity", "tab-experts"):
            await show_tab(pilot, screen, tab)
        assert screen.query_one("#best-by-task", SectionView).rows == render.best_by_task_section(expected).rows
        assert screen.query_one("#cross-mode", SectionView).rows == render.cross_mode_section(expected).rows
        assert screen.query_one("#reliability", SectionView).rows == render.reliability_section(expected).rows
        validity = list(screen.query("#validity-sections SectionView").results(SectionView))
        # The validity tab: the judges' validity, then their admission exam and served models (issue 26).
        shown = [*render.validity_sections(expected), *render.exam_sections(expected)]
        assert any(s.title.startswith("Models that served the judge calls") for s in shown)
        assert [v.section.title for v in validity] == [s.title for s in shown]
        assert [v.rows for v in validity if v.section.headers] == [s.rows for s in shown if s.headers]
        experts = [s.section.title for s in screen.query("#experts-sections SectionView").results(SectionView)]
        # The experts tab: experts vs LLM judges, then the prediction-powered rankings.
        assert experts == [
            s.title
            for s in [
                *render.expert_sections(expected),
                *render.ppr_sections(expected),
                *render.blinding_sections(expected),
            ]
        ]
        # What the statistics left out: filled when its tab is first shown.
        screen.query_one(TabbedContent).active = "tab-left-out"
        await wait_for(pilot, lambda: "provider errors logged: 0" in app.screen_text(), "the left-out tab")
        assert screen.query_one("#invalid-judgments", DataTable).columns


async def test_rank_cell_to_a_judgments_rationale_and_back(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        results = await open_results(pilot)
        await pilot.press("right", "down")
        matrix = app.screen.focused
        assert isinstance(matrix, RankMatrix) and matrix.cursor == (1, 1)
        cell = matrix.current
        assert (cell.mode, cell.task, cell.candidate) == ("automation", "tutoring", "Beta")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen.audit is not None, "the audit trail"
        )
        audit: AuditScreen = app.screen  # type: ignore[assignment]
        assert (audit.mode, audit.task_id, audit.candidate) == ("automation", "tutoring", "Beta")
        assert audit.shown and all(
            "Beta" in (r.comparison.comparison.candidate_a, r.comparison.comparison.candidate_b) for r in audit.shown
        )
        await pilot.press("down")
        row = audit.shown[1]
        assert row.judgment is not None and row.judgment.rationale
        detail = str(audit.query_one("#audit-detail").render())
        assert row.judgment.rationale in detail and "Judge prompt" in detail and "Judge raw reply" in detail
        assert "Judge raw reply (served by simulated/" in detail and "stop reason stop)" in detail
        # Filters: only the judgments this judge made; a search that matches nothing empties the list.
        judge = row.judgment.judge
        audit.query_one("#filter-judge").value = judge
        await pilot.pause()
        assert audit.shown and {r.judgment.judge for r in audit.shown} == {judge}
        await pilot.press("slash")
        await pilot.press(*"no such words")
        await pilot.pause()
        assert audit.shown == [] and "No judgment matches" in str(audit.query_one("#audit-detail").render())
        await pilot.press("escape")
        assert app.screen is results
        assert app.screen.focused is matrix and matrix.current == cell


def test_cell_audit_reads_every_judgment_output_and_call(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    study = load_session(path)
    with Store(study.database) as store:
        audit = cell_audit(store, "counseling", "augmentation", "Alpha")
        totals = left_out(store)
        judgments = [j for j in store.judgment_rows() if j.task == "counseling" and j.mode == "augmentation"]
    mine = [c for c in audit.comparisons]
    assert len(mine) == 4  # Alpha against Beta, Gamma, Delta and plain, one run
    assert sum(len(c.judgments) for c in mine) == sum(1 for j in judgments if "Alpha" in (j.option1, j.option2))
    for c in mine:
        assert set(c.outputs) == {c.comparison.candidate_a, c.comparison.candidate_b}
        assert "Alpha" in c.assistance  # augmentation: the assistance text of the assisted candidate
        for j in c.judgments:
            assert j.record.call_key in audit.calls and j.record.scores
    assert totals.invalid_total == 0 and totals.errors_total == 0
    assert len(rows_of(audit)) == sum(max(1, len(c.judgments)) for c in mine)


def test_rank_colours_and_scatter() -> None:
    assert [rank_class(r, 10) for r in (1, 3, 5.5, 8, 10, None)] == [
        "-rank-0",
        "-rank-1",
        "-rank-2",
        "-rank-3",
        "-rank-4",
        "-rank-none",
    ]
    lines = scatter_lines([("Alpha", 1.0, 1.0), ("Delta", 4.0, 4.0), ("Beta", 2.5, 2.0)], width=20, height=5, top=4)
    assert lines[0] == "    1 |" + " " * 19 + "A"  # best in both modes: top right
    assert lines[4] == "    4 |B" + " " * 19  # worst in both: bottom left
    assert lines[1][7:].index("C") == 10  # Beta: automation 2.5 half-way across, augmentation 2.0 a third down
    assert "A Alpha (1.00, 1.00)" in lines and "B Delta (4.00, 4.00)" in lines
    from centaur_tui.report.document import ModeReport, OverallRow, ReportDocument

    def mode(name: str, ranks: dict[str, float | None]) -> ModeReport:
        # Only the fields scatter_points reads (model_construct: the rest of a mode is beside the point).
        return ModeReport.model_construct(
            mode=name, overall=[OverallRow.model_construct(candidate=c, mean_rank=r) for c, r in ranks.items()]
        )

    doc = ReportDocument.model_construct(
        modes=[mode("automation", {"A": 1.5, "B": None}), mode("augmentation", {"A": 2.0, "B": 1.0, "plain": 1.0})]
    )
    assert scatter_points(doc) == [("A", 1.5, 2.0)]


async def test_a_finished_pipeline_stage_computes_again(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    study = load_session(path)
    stage = SimpleNamespace(planned=10, left=3)
    runner = SimpleNamespace(progress=SimpleNamespace(stages={"judging": stage}, finished=False))
    app = create_app(sessions_dir=path.parent)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = ResultsScreen(load_session(path), runner=lambda: runner)
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.results is not None and not screen.computing, "the results")
        first = screen.results
        with Store(study.database) as store, store.write() as c:  # the stage stored one more judgment
            c.execute(
                "UPDATE judgments SET valid = 0, invalid_reason = 'late' WHERE id = (SELECT min(id) FROM judgments)"
            )
        stage.left = 0
        await wait_for(pilot, lambda: screen.results is not first and not screen.computing, "the recomputed results")
        assert screen.results.doc == cli_doc(path) != first.doc
        assert screen.results.doc.counts.by_status["invalid"] == first.doc.counts.by_status.get("invalid", 0) + 1


async def test_untrusted_rationale_is_shown_literally(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    study = load_session(path)
    with Store(study.database) as store, store.write() as c:
        c.execute(
            "UPDATE judgments SET rationale = ? WHERE id = (SELECT min(id) FROM judgments)",
            ("[@click=app.quit]quit[/] \x1b[31mred",),
        )
        row = c.execute(
            "SELECT c.task, c.mode, c.candidate_a FROM judgments j JOIN comparisons c"
            " ON c.id = j.comparison_id ORDER BY j.id LIMIT 1"
        ).fetchone()
    app = create_app(sessions_dir=path.parent)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = AuditScreen(study, row[1], row[0], row[2])
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.audit is not None, "the audit trail")
        target = next(
            i for i, r in enumerate(screen.shown) if r.judgment and "app.quit" in (r.judgment.rationale or "")
        )
        screen.query_one("#audit-judgments").move_cursor(row=target)
        await pilot.pause()
        text = str(screen.query_one("#audit-detail").render())
        assert "[@click=app.quit]quit[/]" in text and "\x1b" not in text
        assert "[31mred" in text


def test_results_screen_120x40(snap_compare, tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    app = create_app(sessions_dir=path.parent, session=path)

    async def run_before(pilot) -> None:
        await open_results(pilot)
        await pilot.press("right", "down")

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


async def test_a_failed_report_is_a_notification_and_a_status(tmp_path: Path, monkeypatch) -> None:
    from centaur_tui.domain.errors import CentaurError

    def fail(study):
        raise CentaurError("the statistics failed", title="Report")

    monkeypatch.setattr("centaur_tui.ui.screens.results.report_doc", fail)
    path = judged_session(tmp_path)
    app = create_app(sessions_dir=path.parent)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = ResultsScreen(load_session(path))
        app.push_screen(screen)
        await wait_for(
            pilot,
            lambda: screen.is_mounted and "could not be computed" in str(screen.query_one("#results-status").render()),
            "the failed computation",
        )
        assert not screen.computing

        # `notify` only queues a message: the app holds the notification once it has handled
        # that message, which in a full run can come a few frames after the status is drawn.
        def shown() -> list[str]:
            return [n.message for n in app._notifications]  # Textual has no public list

        await wait_until(pilot, shown, "the notification")
        assert shown() == ["the statistics failed"]


async def test_experts_tab_shows_the_reports_experts_section(tmp_path: Path) -> None:
    from centaur_tui.domain.session import JudgeSimulation
    from centaur_tui.pipeline.expert_sim import plan_expert_study, simulate_expert_judgments, simulated_experts
    from centaur_tui.store import comparison_texts, store_judgments

    path = judged_session(tmp_path)
    study = load_session(path)
    with Store(study.database) as store:
        comparisons = store.comparisons()
        places = plan_expert_study(comparisons, simulated_experts(3), 12, 3, 0)
        records = simulate_expert_judgments(study, comparisons, comparison_texts(store), places, JudgeSimulation())
        store_judgments(store, records)
    doc = cli_doc(path)
    ppr = render.ppr_sections(doc)
    expected = [*render.expert_sections(doc), *ppr, *render.blinding_sections(doc)]
    assert len(expected) > 3  # agreement, majorities, rankings, biases... then the prediction-powered rankings
    assert ppr[-1].notes[0].startswith("Refused")  # simulated judgments without assignments: not random
    app = create_app(sessions_dir=path.parent)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = ResultsScreen(study)
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.results is not None and not screen.computing, "the results", tries=1000)
        await show_tab(pilot, screen, "tab-experts")
        views = list(screen.query("#experts-sections SectionView").results(SectionView))
        assert [v.section.title for v in views] == [s.title for s in expected]
        for view, section in zip(views, expected, strict=True):
            if section.headers:
                assert view.rows == section.rows


async def test_brackets_switch_tabs_from_anywhere_and_focus_follows(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(pilot)
        tabs = screen.query_one(TabbedContent)
        await pilot.press("right_square_bracket")
        await wait_for(
            pilot,
            lambda: isinstance(app.focused, RankMatrix) and app.focused.mode_name == "augmentation",
            "the augmentation matrix focused",
        )
        assert tabs.active == "tab-augmentation"
        await pilot.press("down")  # arrows act in the new tab
        assert app.focused.cursor == (1, 0)
        await pilot.press("left_square_bracket", "left_square_bracket")
        await wait_for(
            pilot,
            lambda: tabs.active == "tab-left-out" and app.focused is not None and app.focused.id == "invalid-judgments",
            "the left-out tab, its table focused",
        )
        assert screen.query_one("#invalid-judgments", DataTable).columns


async def test_human_workers_tab_shows_what_centaur_report_adds(write_session, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from centaur_tui.cli.main import cli
    from centaur_tui.domain.seat import WorkDraft
    from centaur_tui.pipeline import run_session
    from centaur_tui.pipeline.human_arm import judge_human_arm
    from centaur_tui.store import WorkStore, fingerprint
    from tests.support.work import arm_session

    path = arm_session(write_session)
    study = load_session(path)

    def run_and_work() -> None:  # outside the test's event loop: the pipeline runs its own
        with Store(study.database) as store:
            run_session(study, store)
            work = WorkStore(store)
            work.assign(study)
            for r in work.assignments():
                before = fingerprint(store)
                work.submit(r.id, WorkDraft("## Deliverable\n\n" + "requirement met " * 20, 90.0, 12, 1), version=1)
                assert fingerprint(store) != before  # a submitted deliverable changes the productivity table
            judge_human_arm(study, store)

    await asyncio.to_thread(run_and_work)
    out = tmp_path / "report.json"
    result = CliRunner().invoke(cli, ["report", str(path), "--json", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    expected = json.loads(out.read_text(encoding="utf-8"))
    sections = render.human_worker_sections(expected)
    assert sections[1].title == "Productivity per condition (6 submitted deliverable(s))"
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_results(pilot)
        assert screen.results.doc.to_dict() == expected  # the CLI's JSON, human-worker section included
        await show_tab(pilot, screen, "tab-human")
        views = list(screen.query("#human-sections SectionView").results(SectionView))
        assert [v.section.title for v in views] == [s.title for s in sections]
        assert [v.rows for v in views] == [s.rows for s in sections]
        assert [r[0] for r in views[0].rows] == [
            r["condition"] for r in expected["human_workers"]["assistants"]["rows"]
        ]


def test_the_results_screen_uses_only_public_report_names() -> None:
    import re

    from centaur_tui.ui.screens import results
    from centaur_tui.ui.widgets import rank_matrix, section_view

    for module in (results, section_view, rank_matrix):
        source = Path(module.__file__).read_text(encoding="utf-8")
        # No private renderer, no stats module, no text cut out of rendered notes.
        assert re.search(r"noqa: SLF001|render\._|centaur_tui\.stats|\.notes\[\d+\]\.split", source) is None, module


async def test_judges_tab_shows_the_reports_calibration_section(tmp_path: Path) -> None:
    from centaur_tui.domain.session import JudgeSimulation
    from centaur_tui.pipeline.expert_sim import plan_expert_study, simulate_expert_judgments, simulated_experts
    from centaur_tui.store import comparison_texts, store_judgments

    path = judged_session(tmp_path)
    study = load_session(path)
    with Store(study.database) as store:
        comparisons = store.comparisons()
        places = plan_expert_study(comparisons, simulated_experts(3), 12, 3, 0)
        records = simulate_expert_judgments(study, comparisons, comparison_texts(store), places, JudgeSimulation())
        store_judgments(store, records)
    doc = cli_doc(path)
    assert doc.calibration is not None and doc.calibration.present
    expected = render.calibration_sections(doc)
    assert expected
    app = create_app(sessions_dir=path.parent)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = ResultsScreen(study)
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.results is not None and not screen.computing, "the results", tries=1000)
        await show_tab(pilot, screen, "tab-judges")
        views = list(screen.query("#judges-sections SectionView").results(SectionView))
        assert [v.section.title for v in views] == [s.title for s in expected]
        for view, section in zip(views, expected, strict=True):
            if section.headers:
                assert view.rows == section.rows


async def test_stopping_tab_says_what_centaur_status_says(tmp_path: Path) -> None:
    from centaur_tui.services.status import describe, study_status
    from tests.test_ppr_session import _judge_assigned

    path = judged_session(tmp_path)
    _judge_assigned(path, {"ann": ("uniform-random", 20)})
    study = load_session(path)
    status = study_status(study)
    assert status.judgments == 20 and status.rows
    app = create_app(sessions_dir=path.parent)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = ResultsScreen(study)
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.results is not None and not screen.computing, "the results", tries=1000)
        await show_tab(pilot, screen, "tab-stopping")
        note = str(screen.query_one("#stopping-note").render())
        pairs = str(screen.query_one("#stopping-pairs").render())
        assert "20 expert judgment(s) used" in note and f"Per task: {len(status.rows)} pairs" in note
        assert f"Over all tasks of a mode: {len(status.pooled)} pairs" in note
        for row in [*status.pooled, *status.rows]:
            assert describe(row, status.margin) in pairs
