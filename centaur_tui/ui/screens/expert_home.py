"""Provides the expert's home screen: one expert's judging and work queues, and nothing else (expert-only mode).

The app opens here when it runs for one expert alone (`centaur tui SESSION --expert ID
--expert-only`; the browser seat of `centaur serve` is HTML, `serve/`): the screen offers that
expert's judging and, for a human worker, writing; it reaches no pipeline, assignment, results
or audit screen. On first opening it goes straight to where the expert was (the queue they
saved work in last).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static
from textual.worker import get_current_worker

from centaur_tui.ui.screens.base import CentaurScreen
from centaur_tui.ui.widgets.footer import SteadyFooter


class ExpertHomeScreen(CentaurScreen):
    """One expert's queues: judge or write; where the expert was is opened at once.

    Args:
        path: The session file.
        expert_id: Whose queues (fixed for the life of the app: nothing here picks another).
    """

    EXPERT_SAFE = True

    HELP = """\
## Your queues

Your judging queue and, if you also write deliverables, your writing queue. Everything you
enter is saved as you go: closing the window or losing the connection loses nothing, and
you come back to where you were.

- **j** or **enter**: judge the comparisons assigned to you
- **w**: write the deliverables assigned to you
- **ctrl+q**: leave (your work is saved)
"""

    BINDINGS = [
        Binding("j,enter", "judge", "Judge", id="judge", tooltip="Judge the comparisons assigned to you."),
        Binding("w", "work", "Write", id="work", tooltip="Write the deliverables assigned to you."),
    ]

    def __init__(self, path: Path, expert_id: str) -> None:
        super().__init__()
        self.path = path
        self.expert_id = expert_id
        self.study: Any = None
        self.desk: Any = None
        self._opened = False

    def compose(self) -> ComposeResult:
        yield Static("", id="expert-title", classes="screen-title", markup=False)
        yield Static("Reading your queues…", id="expert-queues", markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="expert-load", exit_on_error=False)
    def load(self) -> None:
        """Read the session and this expert's queues, off the event loop."""
        from centaur_tui.services.seat import expert_desk
        from centaur_tui.services.session import open_session

        study = self.study or open_session(self.path)
        desk = expert_desk(study, self.app.store_for(study), self.expert_id)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, study, desk)

    def _show(self, study: Any, desk: Any) -> None:
        self.study, self.desk = study, desk
        self.query_one("#expert-title", Static).update(f"{desk.name}: your queues in {study.session.name}")
        lines = [
            f"Judging: {desk.judged} of {desk.assigned} comparison(s) judged."
            + (" j or enter: judge." if desk.judging_open else "")
        ]
        if desk.worker:
            lines.append(
                f"Writing: {desk.submitted} of {desk.tasks} deliverable(s) submitted."
                + (" w: write." if desk.work_open else "")
            )
        if not desk.judging_open and not desk.work_open:
            lines.append("Nothing is waiting for you. Thank you! Ask the researcher when more is assigned.")
        self.query_one("#expert-queues", Static).update("\n".join(lines))
        self.refresh_bindings()
        if not self._opened:
            self._opened = True
            if desk.resume == "work" and desk.work_open:
                self.action_work()
            elif desk.judging_open:
                self.action_judge()
            elif desk.work_open:
                self.action_work()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "judge":
            return True if self.desk is not None and self.desk.judging_open else None
        if action == "work":
            return None if self.desk is None or not self.desk.worker else (True if self.desk.work_open else None)
        return True

    def action_judge(self) -> None:
        if self.check_action("judge", ()):
            self.open_queue("judging")

    def action_work(self) -> None:
        if self.check_action("work", ()):
            self.open_queue("work")

    @work(thread=True, exclusive=True, group="expert-open", exit_on_error=False)
    def open_queue(self, which: str) -> None:
        """Open this expert's judging or work source (never another expert's)."""
        from centaur_tui.services.work import open_judging, open_work

        store = self.app.store_for(self.study)
        source = (open_judging if which == "judging" else open_work)(self.study, store, self.expert_id)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._push, which, source)

    def _push(self, which: str, source: Any) -> None:
        if which == "judging":
            from centaur_tui.ui.screens.judging import JudgingScreen

            self.app.push_screen(JudgingScreen(source), callback=self._back)
        else:
            from centaur_tui.ui.screens.work import WorkScreen

            self.app.push_screen(WorkScreen(source), callback=self._back)

    def _back(self, _closed: None) -> None:
        self.load()
