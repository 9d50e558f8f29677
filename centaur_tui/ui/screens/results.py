"""Provides the results screen: a session's rankings and statistics, the same report document `centaur report` prints.

For researchers, not blinded: it names models. It is opened from the session overview only,
never from the judging screen. The report is built in the program's report process
(`services.report_process`: a thread worker here waits for it) by the same use case as
`centaur report` (`services.report.session_report`, the CLI's default options); tables are
the public sections of `centaur_tui.report` (`mode_sections`, `best_by_task_section`, ...),
so every number matches the text report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Header, Static, TabbedContent, TabPane, Tabs
from textual.worker import Worker, WorkerState, get_current_worker

from centaur_tui.domain.records import CallFailure, InvalidJudgmentRow
from centaur_tui.domain.study import Study
from centaur_tui.report import (
    ModeReport,
    ReportDocument,
    active_sections,
    best_by_task_section,
    blinding_sections,
    calibration_sections,
    cross_mode_section,
    dialogue_sections,
    exam_sections,
    expert_sections,
    human_worker_sections,
    mode_sections,
    ppr_sections,
    professional_sections,
    reliability_section,
    validity_sections,
    worker_panel_sections,
)
from centaur_tui.report.render import excluded_text, num, scatter_points
from centaur_tui.services.report_process import shared_report_process
from centaur_tui.ui.screens.base import CentaurScreen
from centaur_tui.ui.widgets.footer import SteadyFooter
from centaur_tui.ui.widgets.rank_matrix import RankMatrix, mean_se_text, rank_text
from centaur_tui.ui.widgets.scatter import scatter_lines
from centaur_tui.ui.widgets.section_view import SectionView

MODE_FIGURES = {"automation": 7, "augmentation": 8}


@dataclass(frozen=True)
class Results:
    """What the worker hands to the screen: the report document and what the statistics left out."""

    doc: ReportDocument
    left_out: Any
    seconds: float
    stopping: Any = None
    """`services.status.StudyStatus`: the stopping rule per pair (None: it could not be computed)."""


def report_doc(study: Study) -> ReportDocument:
    """The session's report document from the program's report process (blocking: call from a thread).

    Computed there, or its kept document when nothing the report reads has changed since.
    """
    return shared_report_process().doc(study)


def stopping_status(study: Study) -> Any:
    """The stopping rule per pair (`services.status`), or the error's message when the session's settings refuse it."""
    from centaur_tui.domain.errors import CentaurError
    from centaur_tui.services.status import study_status

    try:
        return study_status(study)
    except CentaurError as exc:
        return exc.message


def stopping_pane(status: Any) -> list[Any]:
    """The stopping panel: per task, mode and pair, separated, equivalent or how many more expert comparisons."""
    from centaur_tui.services.status import describe, summary

    if status is None or isinstance(status, str):
        return [Static(Text(status or "The stopping rule could not be computed."), id="stopping-note")]
    head = (
        "When to stop (`centaur status`): anytime-valid confidence sequences on the expert win-rate difference "
        f"P(first wins) - P(second wins), alpha = {status.alpha:g} per pair over every look, equivalence margin "
        f"+-{status.margin:g}; n = expert comparisons of the pair. {status.judgments:,} expert judgment(s) used"
        + "".join(f", {v:,} {k}" for k, v in status.left_out.items())
        + f". {summary(status)}"
    )
    if not status.judgments:
        head += " No expert comparison yet: nothing to decide."
    lines = []
    last = None
    for row in [*status.pooled, *status.rows]:
        if (row.task, row.mode) != last:
            last = (row.task, row.mode)
            lines.append(f"{row.task} / {row.mode}")
        st = row.status
        interval = "" if st.n == 0 else f" {st.difference:+.2f} [{st.low:+.2f}, {st.high:+.2f}] "
        lines.append(f"  {row.first} vs {row.second}:{interval} {describe(row, status.margin)}")
    return [
        Static(Text(head), classes="results-note", id="stopping-note"),
        Static(Text("\n".join(lines)), id="stopping-pairs"),
    ]


class ResultsScreen(CentaurScreen):
    """Rank matrices, overall ordering, best by task, cross-mode correlation, reliability, validity, experts vs LLMs.

    Args:
        study: The session.
        runner: Returns the session overview's pipeline run (or None): when it finishes a
            stage, the results are computed again.
    """

    HELP = """\
## Results

The same numbers as `centaur report SESSION` (default options). Ranks: 1 = best.

- **]** / **[**: the next / previous tab, from anywhere on the screen (or click the tabs;
  or shift+tab to the tab bar, then left / right)
- **arrows** in a rank matrix: move between cells; the focused cell shows its mean rank ± SE
- **enter** on a cell: the audit trail (every comparison and judgment behind the cell)
- **r**: read the database again, and compute again if anything changed (also done when a
  running pipeline finishes a stage)
- **m**: the agreement matrix (experts against LLM judges and each other), with the comparisons
  behind each cell
- **ctrl+f**: search every rationale, deliverable and assistance text of the study
- **escape**: back to the session
"""

    BINDINGS = [
        Binding(
            "r",
            "recompute",
            "Refresh",
            id="recompute",
            tooltip="Read the database again; compute again if anything changed.",
        ),
        Binding("escape", "back", "Back", id="back", tooltip="Back to the session overview."),
        Binding(
            "m",
            "agreement",
            "Agreement",
            id="agreement",
            tooltip="The agreement matrix of experts and LLM judges; enter on a cell lists their disagreements.",
        ),
        Binding(
            "ctrl+f",
            "search_study",
            "Search",
            id="search-study",
            tooltip="Search every rationale, deliverable and assistance text of the study.",
        ),
        Binding("right_square_bracket", "switch_tab(1)", "Next tab", id="next-tab", tooltip="The next tab."),
        Binding(
            "left_square_bracket",
            "switch_tab(-1)",
            "Previous tab",
            id="previous-tab",
            show=False,
            tooltip="The previous tab.",
        ),
    ]

    def __init__(self, study: Study, runner: Callable[[], Any] = lambda: None) -> None:
        super().__init__()
        self.study = study
        self.runner_of = runner
        self.results: Results | None = None
        self.computing = False
        self._stages_seen: frozenset[str] = frozenset()
        self._left_rows: tuple[list[InvalidJudgmentRow], list[CallFailure]] = ([], [])
        self._pending: dict[str, Callable[[], list[Any]]] = {}

    def compose(self) -> ComposeResult:
        s = self.study.session
        yield Header()
        yield Static(Text(f"Results of session {s.name}"), id="results-title", classes="screen-title")
        yield Static("", id="results-banner", classes="simulated-banner", markup=False)
        yield Static("Computing the report…", id="results-status", markup=False)
        yield Vertical(id="results-body")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.query_one("#results-banner").display = False
        self._stages_seen = self._finished_stages()
        self.set_interval(0.5, self._watch_pipeline)
        self.action_recompute()

    # -- computing ----------------------------------------------------------------------------

    def _finished_stages(self) -> frozenset[str]:
        runner = self.runner_of()
        progress = getattr(runner, "progress", None)
        if progress is None:
            return frozenset()
        done = {name for name, st in progress.stages.items() if st.planned and not st.left}
        return frozenset(done | ({"(run)"} if progress.finished else set()))

    def _watch_pipeline(self) -> None:
        """Timer: a stage the running pipeline finished since the last look means new data."""
        seen = self._finished_stages()
        if seen - self._stages_seen:
            self.action_recompute()
        self._stages_seen = seen

    def action_recompute(self) -> None:
        self.computing = True
        self.query_one("#results-status", Static).update("Computing the report…")
        self.compute()

    @work(thread=True, exclusive=True, group="results-report", exit_on_error=False)
    def compute(self) -> None:
        """Build the report document off the event loop."""
        from centaur_tui.services.audit import left_out

        started = time.perf_counter()
        if not self.study.database.exists():
            # Never run: nothing to report, and looking must not create the database.
            self.app.call_from_thread(self._show_empty)
            return
        store = self.app.store_for(self.study)
        doc = report_doc(self.study)  # the process's kept document while the data is unchanged
        results = Results(doc, left_out(store), time.perf_counter() - started, stopping_status(self.study))
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, results)  # type: ignore[arg-type]  # mypy 2.4 solves T | Awaitable[T] as Never for coroutines

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # The notification comes from ReportsWorkerErrors' handler: Textual calls every class's handler in the MRO.
        if event.worker.group == "results-report" and event.state == WorkerState.ERROR:
            self.computing = False
            self.query_one("#results-status", Static).update(
                "The report could not be computed: see the notification; r tries again."
            )

    def _show_empty(self) -> None:
        self.computing = False
        self.query_one("#results-status", Static).update("This session has not been run yet: nothing to report.")

    async def _show(self, results: Results) -> None:
        if self.results is not None and (results.doc, results.left_out, results.stopping) == (
            self.results.doc,
            self.results.left_out,
            self.results.stopping,
        ):
            self.results = results  # nothing changed: keep the tabs, the cursor and the scroll
            self.computing = False
            self._show_status(results.doc)
            return
        focused = self.focused
        keep = focused.current if isinstance(focused, RankMatrix) else None
        active = self.query_one(TabbedContent).active if self.query(TabbedContent) else None
        self.results = results
        doc = results.doc
        banner = self.query_one("#results-banner", Static)
        banner.update(doc.banner or "")
        banner.display = doc.simulated
        self._show_status(doc)
        body = self.query_one("#results-body", Vertical)
        await body.remove_children()
        tabs, self._pending = self._tabs(doc, results.left_out)
        await body.mount(tabs)
        if active and tabs.query(f"#{active}"):
            tabs.active = active
        await self._build_pane(tabs.active)
        self.computing = False
        matrices = list(self.query(RankMatrix).results(RankMatrix))
        if keep is not None:
            for matrix in matrices:
                if matrix.mode_name == keep.mode:
                    matrix.place(keep.task, keep.candidate)
                    matrix.focus()
        elif matrices:
            matrices[0].focus()

    def _show_status(self, doc: ReportDocument) -> None:
        c = doc.counts
        self.query_one("#results-status", Static).update(
            f"{c.runs} run(s), {len(c.tasks)} task(s); {c.comparisons:,} comparisons, {c.judgments:,} "
            f"judgments stored, {c.by_status.get('ok', 0):,} used. The numbers of `centaur report`."
        )

    async def _build_pane(self, pane_id: str) -> None:
        """Mount a tab's contents the first time it is shown (the screen appears sooner; about 500 widgets in all)."""
        build = self._pending.pop(pane_id, None)
        if build is not None:
            await self.query_one(f"#{pane_id}", TabPane).query_one(VerticalScroll).mount_all(build())

    def _tabs(self, doc: ReportDocument, left: Any) -> tuple[TabbedContent, dict[str, Callable[[], list[Any]]]]:
        """The tabbed panes, empty, and per pane the function that builds its contents."""
        builders: dict[str, Callable[[], list[Any]]] = {}
        titles: dict[str, str] = {}
        by_mode = {parts.mode: parts for parts in mode_sections(doc)}

        def mode_pane(m: ModeReport) -> list[Any]:
            parts = by_mode[m.mode]
            figure = MODE_FIGURES.get(m.mode)
            matrix_note = (
                f"Rank of ranks by task{f' (Figure {figure})' if figure else ''}; 1 = best. " + parts.denominators
            )
            return [
                Static(Text(matrix_note), classes="results-note"),
                RankMatrix(m, id=f"matrix-{m.mode}"),
                Static("", id=f"cell-detail-{m.mode}", classes="cell-detail", markup=False),
                SectionView(parts.overall, notes=False, id=f"overall-{m.mode}"),
            ]

        for m in doc.modes:
            titles[f"tab-{m.mode}"] = m.mode.capitalize()
            builders[f"tab-{m.mode}"] = partial(mode_pane, m)

        def across() -> list[Any]:
            points = scatter_points(doc)
            n = max([len(m.candidates) for m in doc.modes] or [1])
            model_level = next((r for r in doc.cross_mode.rows if r.task == "(model level)"), None)
            rho = "" if model_level is None else f"Model level: rho = {num(model_level.rho)}, n = {model_level.n}."
            return [
                SectionView(best_by_task_section(doc), id="best-by-task"),
                SectionView(cross_mode_section(doc), id="cross-mode"),
                Static(
                    Text("Automation vs augmentation, overall mean rank (Figure 9). " + rho), classes="section-title"
                ),
                Static(Text("\n".join(scatter_lines(points, top=float(n)))), id="scatter", classes="scatter"),
            ]

        titles["tab-across"], builders["tab-across"] = "Across modes", across
        titles["tab-reliability"], builders["tab-reliability"] = (
            "Reliability",
            lambda: [SectionView(reliability_section(doc), id="reliability")],
        )
        titles["tab-validity"], builders["tab-validity"] = (
            "Validity",
            # The judges' admission exam and the served models (issue 26) belong with the judges' validity.
            lambda: [SectionView(s) for s in [*validity_sections(doc), *exam_sections(doc)]],
        )
        titles["tab-experts"], builders["tab-experts"] = (
            "Experts vs LLM judges",
            lambda: [
                SectionView(s)
                for s in [*expert_sections(doc), *ppr_sections(doc), *active_sections(doc), *blinding_sections(doc)]
            ],
        )
        stopping = self.results.stopping if self.results is not None else None
        titles["tab-stopping"], builders["tab-stopping"] = "Stopping", lambda: stopping_pane(stopping)
        if doc.human_workers is not None:
            titles["tab-human"], builders["tab-human"] = (
                "Human workers",
                lambda: [SectionView(s) for s in human_worker_sections(doc)],
            )
        if doc.calibration is not None and doc.calibration.present:
            titles["tab-judges"], builders["tab-judges"] = (
                "Judges",
                lambda: [SectionView(s) for s in calibration_sections(doc)],
            )
        if doc.workers is not None or doc.professional is not None or doc.dialogue is not None:
            titles["tab-workers"], builders["tab-workers"] = (
                "Workers",
                lambda: [
                    SectionView(s)
                    for s in [*worker_panel_sections(doc), *dialogue_sections(doc), *professional_sections(doc)]
                ],
            )
        titles["tab-left-out"], builders["tab-left-out"] = "Left out", lambda: self._left_out(doc, left)
        scroll_ids = {
            "tab-validity": "validity-sections",
            "tab-experts": "experts-sections",
            "tab-human": "human-sections",
            "tab-judges": "judges-sections",
            "tab-workers": "workers-sections",
        }
        tabs = TabbedContent(id="results-tabs")
        for pane_id, title in titles.items():
            # what `with TabbedContent():` does in compose
            tabs.compose_add_child(TabPane(title, VerticalScroll(id=scroll_ids.get(pane_id)), id=pane_id))
        return tabs, builders

    def _left_out(self, doc: ReportDocument, left: Any) -> list[Any]:
        by_status = doc.counts.by_status
        widgets: list[Any] = [
            Static(
                Text(
                    f"{by_status.get('ok', 0):,} judgments used; "
                    + excluded_text({k: v for k, v in by_status.items() if k != "ok"})
                    + f". Invalid judgments stored: {left.invalid_total:,}; "
                    + f"provider errors logged: {left.errors_total:,}"
                    + (
                        f" (the latest {len(left.invalid)} and {len(left.errors)} listed)."
                        if left.invalid_total > len(left.invalid) or left.errors_total > len(left.errors)
                        else "."
                    )
                    + (
                        f" Cut off at max_tokens: {left.cut_off_outputs:,} deliverable(s), "
                        f"{left.cut_off_assistance:,} assistance text(s) (generation.on_truncated)."
                        if left.cut_off_outputs or left.cut_off_assistance
                        else ""
                    )
                ),
                classes="results-note",
            )
        ]
        invalid: DataTable[str] = DataTable(
            id="invalid-judgments", cursor_type="row", zebra_stripes=True, classes="left-out-table"
        )
        errors: DataTable[str] = DataTable(
            id="provider-errors", cursor_type="row", zebra_stripes=True, classes="left-out-table"
        )
        widgets += [
            Static("Invalid judgments", classes="section-title"),
            invalid,
            Static("Provider errors", classes="section-title"),
            errors,
        ]
        self._left_rows = (left.invalid, left.errors)
        return widgets

    @on(TabbedContent.TabActivated, "#results-tabs")
    async def tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id:
            await self._build_pane(event.pane.id)
        if event.pane.id == "tab-left-out":
            self._fill_left_out()
        # Focus left in the hidden pane would switch the tabs straight back (TabPane.Focused); focus
        # lost with the hidden pane (`]` from a matrix) goes to the new pane, so arrows act there.
        focused = self.focused
        if focused is None or (event.pane not in focused.ancestors_with_self and not isinstance(focused, Tabs)):
            focusable = [w for w in event.pane.query("*") if w.focusable]
            # A matrix or table rather than the pane's scroll container, when there is one.
            target = next(
                (w for w in focusable if not isinstance(w, VerticalScroll)), focusable[0] if focusable else None
            )
            self.set_focus(target)

    def _fill_left_out(self) -> None:
        """Fill the two tables when their tab is first shown: hundreds of rows nobody may look at.

        Rows are plain text: reasons and error messages may quote model replies.
        """
        from centaur_tui.domain.blinding import clean_text

        tables = self.query("#invalid-judgments")
        if not tables or tables.first(DataTable).columns:
            return
        invalid_rows, error_rows = self._left_rows
        invalid = tables.first(DataTable)
        invalid.add_columns("id", "run", "task", "mode", "pair", "judge", "attempts", "reason")
        for r in invalid_rows:
            invalid.add_row(
                *[
                    Text(str(x))
                    for x in (r.id, r.run, r.task, r.mode, f"{r.candidate_a} vs {r.candidate_b}", r.judge, r.attempts)
                ],
                Text(clean_text(r.invalid_reason or "").replace("\n", " ")[:200]),
            )
        errors = self.query_one("#provider-errors", DataTable)
        errors.add_columns("stage", "model", "attempt", "final", "error", "message")
        for e in error_rows:
            errors.add_row(
                Text(e.stage),
                Text(e.model),
                Text(str(e.attempt)),
                Text("yes" if e.final else "no"),
                Text(e.error_type),
                Text(clean_text(e.message).replace("\n", " ")[:200]),
            )

    # -- cells and the audit trail ------------------------------------------------------------

    @on(RankMatrix.Moved)
    def show_cell(self, event: RankMatrix.Moved) -> None:
        ref = event.ref
        r = ref.cell
        detail = self.query_one(f"#cell-detail-{ref.mode}", Static)
        if not r:
            detail.update(f"{ref.candidate} in {ref.task}: no rank.")
            return
        reason = f" NaN: {r.reason}." if r.reason else ""
        detail.update(
            f"{ref.candidate} in {ref.task} ({ref.mode}): rank of ranks {rank_text(r)}, mean rank ± SE "
            f"{mean_se_text(r)} over {r.runs} run(s), {r.missing_runs} without a usable judgment.{reason} "
            "enter: the judgments behind it."
        )

    @on(RankMatrix.Chosen)
    def open_audit(self, event: RankMatrix.Chosen) -> None:
        from centaur_tui.ui.screens.audit import AuditScreen

        ref = event.ref
        self.app.push_screen(AuditScreen(self.study, ref.mode, ref.task, ref.candidate))

    def action_switch_tab(self, step: int) -> None:
        """Activate the tab `step` places on (cyclic); its contents are built and focused (`tab_activated`)."""
        if not self.query(TabbedContent):
            return
        tabs = self.query_one(TabbedContent)
        ids = [pane.id for pane in tabs.query(TabPane) if pane.id]
        if tabs.active in ids:
            tabs.active = ids[(ids.index(tabs.active) + step) % len(ids)]

    def action_agreement(self) -> None:
        """Open the agreement matrix (only when the report has one: expert judgments are stored)."""
        from centaur_tui.ui.screens.agreement import AgreementScreen

        matrix = self.results.doc.agreement_matrix if self.results is not None else None
        if matrix is None:
            self.notify("No agreement matrix: no expert judgment is stored yet.", title="Agreement")
            return
        self.app.push_screen(AgreementScreen(self.study, matrix))

    def action_search_study(self) -> None:
        """Open the organiser's search of the study (results open in the audit screen)."""
        from centaur_tui.ui.screens.search import SearchScreen

        self.app.push_screen(SearchScreen(self.study))

    def action_back(self) -> None:
        self.app.pop_screen()
