"""Provides the session overview: pipeline progress with run and pause, and the experts with their queues."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from centaur_tui.domain.plan import STAGES, summarize
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.domain.study import Study
from centaur_tui.domain.untrusted import clean_untrusted
from centaur_tui.services.session import SIMULATED_BANNER, SessionOverview
from centaur_tui.ui.screens.base import CentaurScreen
from centaur_tui.ui.screens.dialogs import AddExpertDialog, AssignDialog, AssignRequest, NewExpert
from centaur_tui.ui.widgets.footer import SteadyFooter

STAGE_COLUMNS = ("planned", "done", "cached", "sent", "failed", "invalid", "missing")
"""`missing`: planned items with nothing stored once a run has finished (failed for good or blocked)."""
COLUMN_LABELS = {"planned": "plan", "invalid": "inval"}


class ExpertTable(DataTable):
    """The experts table: enter judges as the highlighted expert (shown in the footer)."""

    BINDINGS = [Binding("enter", "select_cursor", "Judge", tooltip="Judge the highlighted expert's queue.")]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "select_cursor":
            return self.screen.check_action("judge", parameters)
        return True


BATCH_LINES = 5
"""Batches listed on the pipeline panel (the newest); the count says how many there are."""


def _tasks_label(tasks: tuple[str, ...]) -> str:
    if not tasks:
        return "all"
    text = ", ".join(tasks)
    return text if len(text) <= 24 else f"{len(tasks)} tasks"


class SessionScreen(CentaurScreen):
    """One session: run or resume its pipeline, watch progress, pick an expert to judge."""

    HELP = """\
## Session overview

The pipeline sends every planned call once and stores it; a stopped run resumes where it
stopped, and a finished run costs nothing to run again.

- **r**: run or resume the pipeline (in the background; the app stays usable)
- **p**: pause it (in-flight calls are abandoned, answered calls are kept)
- **j** or **enter** on an expert: judge as that expert
- **a**: assign comparisons to the highlighted expert
- **w**: write deliverables as the highlighted expert (the human-worker arm; see `centaur assign-work`)
- **n**: add an expert
- **o**: the organiser's console (per expert pace, times, checks, flags, integrity signals; the burn-down)
- **escape**: back to the sessions (pauses a running pipeline)

The experts table: **judged** comparisons of those assigned; **gold** gold checks passed of
those judged (a deliverable against a degraded copy of itself; `-`: none judged yet); **low**
winners the expert chose although their rubric average was the lower one (each confirmed when
asked). `centaur report` gives the same per expert, with median times.
"""

    BINDINGS = [
        Binding("r", "run", "Run / resume", id="run", tooltip="Send the calls still missing, in the background."),
        Binding("p", "pause", "Pause", id="pause", tooltip="Stop sending calls; answered calls are kept."),
        Binding("j", "judge", "Judge", id="judge", show=False, tooltip="Judge the highlighted expert's queue."),
        Binding("a", "assign", "Assign", id="assign", tooltip="Assign comparisons to the highlighted expert."),
        Binding("w", "work", "Work", id="work", tooltip="Write deliverables as the highlighted expert."),
        Binding("n", "new_expert", "New expert", id="new-expert", tooltip="Add an expert to this session."),
        Binding("escape", "back", "Back", id="back", tooltip="Back to the sessions."),
        Binding("s", "results", "Results", id="results", tooltip="Rankings, statistics and the judgments behind them."),
        Binding("o", "console", "Console", id="console", tooltip="The organiser's console: experts' pace, signals."),
    ]

    def __init__(self, path: Path, expert: str | None = None, run: bool = False) -> None:
        super().__init__()
        self.path = path
        self.start_expert = expert
        self.start_run = run
        self.study: Study | None = None
        self.state: SessionOverview | None = None
        self.runner: Any = None
        self.run_worker_: Worker[Any] | None = None
        self.last_outcome: str | None = None
        self.last_missing: dict[str, int] = {}  # per stage, after the last run in this screen
        self.last_error: str | None = None  # the last provider error of the last run in this screen, cleaned

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"Session {self.path.stem}", id="session-title", classes="screen-title", markup=False)
        yield Static("", id="session-banner", classes="simulated-banner", markup=False)
        with Horizontal(id="session-body"):
            with Vertical(id="pipeline-panel", classes="panel"):
                yield Static("Pipeline", classes="panel-title")
                yield DataTable(id="stages", cursor_type="none")
                yield Static("Reading the session…", id="run-status", markup=False)
                yield Static("", id="batches", markup=False)
                yield Static("", id="estimate", markup=False)
            with Vertical(id="experts-panel", classes="panel"):
                yield Static("Experts", classes="panel-title")
                yield ExpertTable(id="experts", cursor_type="row")
                yield Static("", id="experts-hint", markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        stages = self.query_one("#stages", DataTable)
        stages.add_column("stage", key="stage")
        for column in STAGE_COLUMNS:
            # Short labels: the eight columns and the experts panel share 120 columns.
            stages.add_column(COLUMN_LABELS.get(column, column), key=column)
        for stage in STAGES:
            stages.add_row(stage, *["" for _ in STAGE_COLUMNS], key=stage)
        experts = self.query_one("#experts", DataTable)
        experts.add_column("id", key="id")
        experts.add_column("name", key="name")
        experts.add_column("judged", key="judged")  # comparisons judged / assigned
        experts.add_column("tasks", key="tasks")
        stages.can_focus = False  # read-only counters; the experts table is where keys act
        self.query_one("#experts", DataTable).focus()
        self.set_interval(0.25, self.show_progress)
        self.load()
        self.preload_statistics()

    @work(thread=True, group="preload-statistics", exit_on_error=False)
    def preload_statistics(self) -> None:
        """Start the report process, and each time the session is read have it compute the report ahead.

        Called when the overview mounts (the process then loads pandas and scipy, about
        1.1 s, in parallel with reading the session) and whenever the session has been read
        (at first, after a pipeline run, after expert work: `ReportProcess.prefetch`; the
        process only computes when the data changed). Its own process: nothing here competes
        with the event loop for the GIL, and the results screen appears at once on the data
        the overview shows.
        """
        from centaur_tui.services.report_process import shared_report_process

        if self.study is None:
            shared_report_process().start()
        else:
            shared_report_process().prefetch(self.study)

    # -- reading the store --------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="session-load", exit_on_error=False)
    def load(self) -> None:
        """Read the session file and its database, off the event loop."""
        from centaur_tui.services.session import open_session, overview

        study = self.study or open_session(self.path)
        # Never run: show the plan without creating the database just by looking.
        store = self.app.store_for(study) if study.database.exists() else None
        state = overview(study, store)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_state, study, state)

    def _show_state(self, study: Study, state: SessionOverview) -> None:
        first = self.study is None
        self.study, self.state = study, state
        s = study.session
        self.query_one("#session-title", Static).update(
            f"Session {s.name}: {s.description}" if s.description else f"Session {s.name}"
        )
        banner = self.query_one("#session-banner", Static)
        banner.update(SIMULATED_BANNER if state.simulated else "")
        banner.display = state.simulated
        table = self.query_one("#experts", DataTable)
        cursor = table.cursor_row
        # Shown once there is something to count: with `written` as well, the table outgrew its
        # 120-column panel, so a session without lower-average winners or gold checks keeps it.
        if any(lower for lower, _, _ in state.seat.values()) and "lower" not in table.columns:
            table.add_column("low", key="lower")  # winners with the lower rubric average (see HELP)
        gold = s.judging.expert_gold_rate > 0 or any(judged for _, judged, _ in state.seat.values())
        if gold and "gold" not in table.columns:
            table.add_column("gold", key="gold")  # gold checks passed / judged (sessions with gold checks)
        if state.work is not None and "written" not in table.columns:
            table.add_column("written", key="written")  # deliverables submitted / tasks assigned (`w`)
        table.clear()
        for e in state.experts:
            assigned, judged = state.workload.get(e.id, (0, 0))
            lower, gold_judged, gold_passed = state.seat.get(e.id, (0, 0, 0))
            tasks, written = state.work.get(e.id, (0, 0)) if state.work is not None else (0, 0)
            values = {
                "id": e.id,
                "name": e.name,
                "judged": f"{judged}/{assigned}",
                "tasks": _tasks_label(e.tasks),
                "lower": str(lower),
                "gold": f"{gold_passed}/{gold_judged}" if gold_judged else "-",
                "written": f"{written}/{tasks}" if tasks else "-",
            }
            # In the order the columns were added (a column joins when it first has something to show).
            cells = [values[str(key.value)] for key in table.columns]
            table.add_row(*cells, key=e.id)
        if state.experts:
            table.move_cursor(row=min(cursor, len(state.experts) - 1))
        hint = (
            "No experts yet: press n to add one."
            if not state.experts
            else (
                "No comparisons yet: run the pipeline before assigning."
                if not state.comparisons
                else "enter or j: judge as the highlighted expert; a: assign comparisons."
            )
        )
        self.query_one("#experts-hint", Static).update(hint)
        if not self.running:
            self._show_stored()
            if state.calls_left:
                self.query_one("#estimate", Static).update("Estimating the cost of the calls left…")
                self.query_one("#estimate", Static).display = True
                self.estimate_cost(study)
            else:
                self.query_one("#estimate", Static).display = False
        self.refresh_bindings()
        self.preload_statistics()  # the report of what was just read (the process skips it when unchanged)
        if first:
            if self.start_run and state.calls_left:
                self.action_run()
            if self.start_expert:
                self._open_judging(self.start_expert)

    @work(thread=True, exclusive=True, group="estimate", exit_on_error=False)
    def estimate_cost(self, study: Study) -> None:
        """What the calls left will cost and take (litellm's tokenizers: seconds on first use, so off the loop)."""
        from centaur_tui.services.estimate import estimate_summary_text, session_estimate

        lines = estimate_summary_text(session_estimate(study))
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_estimate, "\n".join(lines))

    def _show_estimate(self, text: str) -> None:
        if not self.running:
            self.query_one("#estimate", Static).update(text)

    @on(Worker.StateChanged)
    def estimate_failed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "estimate" and event.state == WorkerState.ERROR:
            error = clean_untrusted(str(event.worker.error), limit=300, one_line=True)
            self.query_one("#estimate", Static).update(f"No estimate: {error}")

    def _show_stored(self) -> None:
        if self.study is None or self.state is None:
            return
        plan = summarize(self.study.session)
        st = self.state
        table = self.query_one("#stages", DataTable)
        for stage in STAGES:
            done = st.llm_judgments if stage == "judging" else st.calls_by_stage.get(stage, 0)
            planned = plan.total_judgments if stage == "judging" else plan.calls[stage]
            missing = self.last_missing.get(stage, "")
            invalid = st.llm_invalid if stage == "judging" else ""  # only judgments can be invalid
            for column, value in zip(
                STAGE_COLUMNS, (planned, min(done, planned), "", "", "", invalid, missing), strict=True
            ):
                table.update_cell(stage, column, f"{value:,}" if isinstance(value, int) else value, update_width=True)
        cost = "unknown" if st.cost is None else f"${st.cost:.4f}"
        lead = self.last_outcome or ("Complete." if not st.calls_left else "Idle.")
        # The run's last provider error stays after the run ends (until the next run starts).
        error = f" Last error of the run: {self.last_error}" if self.last_error else ""
        self.query_one("#run-status", Static).update(
            f"{lead} {sum(st.calls_by_stage.values()):,} calls stored, {st.calls_left:,} left; tokens {st.tokens:,}; "
            f"cost {cost}; {st.errors:,} failed attempts logged.{error}"
        )

    # -- the pipeline -------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.run_worker_ is not None and self.run_worker_.state in (WorkerState.PENDING, WorkerState.RUNNING)

    def action_run(self) -> None:
        if self.study is None or self.running:
            return
        from centaur_tui.services.run import PipelineRun

        study = self.study
        self.runner = PipelineRun(study, lambda: self.app.store_for(study), settle_memory=True)
        self.app.on_exit_stop(self.runner.stop)
        self.last_outcome = None
        self.last_error = None
        self.query_one("#estimate", Static).display = False  # re-estimated when the run ends
        self.run_worker_ = self.run_pipeline(self.runner)
        self.refresh_bindings()

    @work(thread=True, exclusive=True, group="pipeline", exit_on_error=False)
    def run_pipeline(self, runner: Any) -> Any:
        """The whole run, in a thread with its own event loop."""
        return runner.run()

    def action_pause(self) -> None:
        if self.runner is not None and self.running:
            self.runner.stop()
            self.query_one("#run-status", Static).update("Pausing: abandoning calls in flight…")
            self.refresh_bindings()

    @on(Worker.StateChanged)
    def pipeline_finished(self, event: Worker.StateChanged) -> None:
        if event.worker is not self.run_worker_ or event.state not in (
            WorkerState.SUCCESS,
            WorkerState.ERROR,
            WorkerState.CANCELLED,
        ):
            return
        outcome = event.worker.result if event.state == WorkerState.SUCCESS else None
        progress = getattr(self.runner, "progress", None)
        last = getattr(progress, "last_error", None) or (str(event.worker.error) if event.worker.error else None)
        self.last_error = clean_untrusted(last, limit=300, one_line=True) if last else None
        if event.state == WorkerState.ERROR:
            self.last_outcome = "Stopped by an error."
        elif outcome is None:
            self.last_outcome = "Paused: run again to resume."
        else:
            from centaur_tui.services.run import billed_twice_line, cut_off_lines, outcome_lines

            self.last_missing = {stage: c.missing for stage, c in outcome.outcomes.stages.items()}
            if outcome.complete:
                self.last_outcome = f"Finished in {outcome.progress.elapsed:.1f} s."
            else:
                # the last error is shown once, cleaned, by _show_stored
                lines = [line.strip() for line in outcome_lines(outcome)]
                self.last_outcome = " ".join(line for line in lines if not line.startswith("Last error:"))
            resent = billed_twice_line(outcome)
            if resent:
                self.last_outcome += " " + resent
            if self.study is not None:
                for line in cut_off_lines(outcome, self.study.session.generation.on_truncated):
                    self.last_outcome += " " + line
        self.show_progress()
        self.refresh_bindings()
        self.load()

    def show_progress(self) -> None:
        """Timer: copy the live counters into the table (the pipeline thread only writes them)."""
        if self.runner is None or not self.running or self.runner.progress is None:
            return
        p = self.runner.progress
        table = self.query_one("#stages", DataTable)
        for stage in STAGES:
            st = p.stages[stage]
            for column in STAGE_COLUMNS:
                value = p.missing(stage) if column == "missing" else getattr(st, column)
                table.update_cell(stage, column, f"{value:,}", update_width=True)
        cost_known = all(s.cost_known for s in p.stages.values())
        status = "Pausing" if self.runner.stopping else "Running"
        # Provider text: no control characters, no key; #run-status parses no markup (markup=False),
        # so "[@click=...]" is shown as typed (escaping it would show a backslash).
        shown = clean_untrusted(p.last_error, limit=300, one_line=True) if p.last_error else ""
        error = f" Last error: {shown}" if shown else ""
        if p.waiting:
            error = f" {p.waiting[:1].upper()}{p.waiting[1:]}.{error}"
        self._show_batches(p)
        timeouts = f" ({p.timeouts} timeouts)" if p.timeouts else ""
        self.query_one("#run-status", Static).update(
            f"{status} {p.elapsed:.1f} s; tokens {p.tokens:,}; cost ${p.cost:.4f}{'' if cost_known else '+?'}; "
            f"retries {p.retries}{timeouts}; in flight {p.in_flight}.{error}"
        )

    def _show_batches(self, p: Any) -> None:
        # Batch mode: one line per batch (stage, the provider's status, requests done), newest
        # last. No model names: an expert may be looking at this screen.
        batches = list(p.batches.values())
        widget = self.query_one("#batches", Static)
        widget.set_class(bool(batches), "-shown")
        if not batches:
            return
        shown = batches[-BATCH_LINES:]
        collected = sum(1 for b in batches if b.state == "collected")
        head = f"Batches: {collected:,} of {len(batches):,} collected"
        if len(batches) > len(shown):
            head += f" (the last {len(shown)} shown)"
        widget.update("\n".join([head, *(f"  {b.line(model=False)}" for b in shown)]))

    # -- experts ------------------------------------------------------------------------------

    def _highlighted_expert(self) -> ExpertSpec | None:
        if self.state is None or not self.state.experts:
            return None
        row = self.query_one("#experts", DataTable).cursor_row
        return self.state.experts[row] if 0 <= row < len(self.state.experts) else None

    @on(DataTable.RowHighlighted, "#experts")
    def expert_highlighted(self) -> None:
        self.refresh_bindings()

    @on(DataTable.RowSelected, "#experts")
    def expert_selected(self) -> None:
        self.action_judge()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run":
            return self.study is not None and not self.running
        if action == "pause":
            return self.running and not (self.runner is not None and self.runner.stopping)
        if action == "judge":
            expert = self._highlighted_expert()
            if expert is None or self.state is None:
                return None
            assigned, judged = self.state.workload.get(expert.id, (0, 0))
            return True if assigned > judged else None
        if action == "assign":
            return True if self._highlighted_expert() is not None and self.state and self.state.comparisons else None
        if action in ("new_expert", "console"):
            return self.study is not None
        if action == "work":
            expert, arm = self._highlighted_expert(), self.study.session.human_workers if self.study else None
            return True if expert is not None and arm is not None and expert.id in arm.experts else None
        return True

    def action_judge(self) -> None:
        expert = self._highlighted_expert()
        if expert is not None and self.check_action("judge", ()):
            self._open_judging(expert.id)

    def _open_judging(self, expert_id: str) -> None:
        self.prepare_judging(expert_id)

    @work(thread=True, exclusive=True, group="open-judging", exit_on_error=False)
    def prepare_judging(self, expert_id: str) -> None:
        from centaur_tui.services.work import open_judging

        assert self.study is not None
        source = open_judging(self.study, self.app.store_for(self.study), expert_id)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._push_judging, source)

    def _push_judging(self, source: Any) -> None:
        from centaur_tui.ui.screens.judging import JudgingScreen

        self.app.push_screen(JudgingScreen(source), callback=self._reload)

    def action_assign(self) -> None:
        expert = self._highlighted_expert()
        if expert is None:
            return

        def assign(request: AssignRequest | None) -> None:
            if request is not None:
                self.assign(expert.id, request)

        self.app.push_screen(AssignDialog(expert.name), callback=assign)

    @work(thread=True, exclusive=True, group="assign", exit_on_error=False)
    def assign(self, expert_id: str, request: AssignRequest) -> None:
        from centaur_tui.services.assign import assign_comparisons

        assert self.study is not None
        result = assign_comparisons(
            self.study,
            self.app.store_for(self.study),
            expert_id,
            request.n,
            request.strategy,
            overlap=request.overlap,
            repeat_share=request.repeat_share,
        )
        added, repeats, expert = result.added, result.repeats, result.expert
        aside = f" {result.set_aside_note}." if result.set_aside_note else ""
        self.app.call_from_thread(
            self.notify, f"{added} place(s) for {expert.name} ({repeats} swapped repeat(s)).{aside}", title="Assigned"
        )
        self.app.call_from_thread(self.load)

    def action_work(self) -> None:
        expert = self._highlighted_expert()
        if expert is not None and self.check_action("work", ()):
            self.prepare_work(expert.id)

    @work(thread=True, exclusive=True, group="open-work", exit_on_error=False)
    def prepare_work(self, expert_id: str) -> None:
        from centaur_tui.services.work import open_work

        assert self.study is not None
        # Assigns the arm's design first when the expert's queue is empty (as `centaur assign-work`).
        source = open_work(self.study, self.app.store_for(self.study), expert_id)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._push_work, source)

    def _push_work(self, source: Any) -> None:
        from centaur_tui.ui.screens.work import WorkScreen

        self.app.push_screen(WorkScreen(source), callback=self._reload)

    def _reload(self, _closed: None) -> None:
        """After the judging or work screen closes: show the new counts."""
        self.load()

    def action_new_expert(self) -> None:
        if self.study is None:
            return

        def add(expert: NewExpert | None) -> None:
            if expert is not None:
                self.add_expert(expert)

        self.app.push_screen(AddExpertDialog(self.study.session.tasks), callback=add)

    @work(thread=True, exclusive=True, group="add-expert", exit_on_error=False)
    def add_expert(self, new: NewExpert) -> None:
        from centaur_tui.services.session import add_expert

        assert self.study is not None
        add_expert(self.study, self.app.store_for(self.study), new.id, new.name, new.tasks)
        self.app.call_from_thread(self.notify, f"{new.name} can now be given comparisons.", title="Expert added")
        self.app.call_from_thread(self.load)

    def action_results(self) -> None:
        if self.study is not None:
            from centaur_tui.ui.screens.results import ResultsScreen

            self.app.push_screen(ResultsScreen(self.study, runner=lambda: self.runner))

    def action_console(self) -> None:
        if self.study is not None:
            from centaur_tui.ui.screens.console import ConsoleScreen

            self.app.push_screen(ConsoleScreen(self.study))

    def action_back(self) -> None:
        if self.running and self.runner is not None:
            self.runner.stop()
            self.notify("Pipeline paused: answered calls are stored; run again to resume.", title="Paused")
        self.app.pop_screen()
