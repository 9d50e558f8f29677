"""Provides steps of the judging screen the UI tests share: assigning work, settling the screen, filling it in."""

from __future__ import annotations

from pathlib import Path

from centaur_tui.catalog import load_session
from centaur_tui.domain.assignment import plan_assignments
from centaur_tui.store import ExpertStore, Store
from centaur_tui.ui.app import CentaurApp
from centaur_tui.ui.screens.judging import JudgingScreen
from centaur_tui.ui.widgets.document import DocumentView
from centaur_tui.ui.widgets.rubric import RubricPanel, WinnerPicker
from tests.support.waits import wait_until, workers_done

RATIONALE = "one covers more needs"  # 21 characters: the session minimum is 20


class FrozenClock:
    """A clock the test moves by hand, so time spent is exact."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def assign(path: Path, expert_id: str, n: int, **kwargs: object) -> None:
    study = load_session(path)
    with Store(study.database) as store:
        experts = ExpertStore(store)
        expert = experts.expert(study, expert_id)
        planned = plan_assignments(
            experts.pool(), expert, experts.existing(), n, "stratified", study.session.seed, **kwargs
        )  # type: ignore[arg-type]
        experts.add_assignments(expert.id, planned)


async def settle(pilot) -> JudgingScreen:
    """Wait until the judging screen shows an item with both texts laid out."""
    app: CentaurApp = pilot.app
    for _ in range(200):
        await workers_done(pilot)
        await pilot.pause()
        screen = app.screen
        if isinstance(screen, JudgingScreen) and not screen.busy:
            views = list(screen.query(DocumentView))
            if screen.finished or all(v.ready for v in views if v.display):  # narrow: one shown
                return screen
    raise AssertionError(f"judging screen never settled: {app.screen!r}")


async def fill_in(pilot, screen: JudgingScreen) -> None:
    """Complete the current comparison through the widgets (the keyboard path is tested above)."""
    panel = screen.query_one(RubricPanel)
    for row in panel.rows():
        for option in (1, 2):
            panel.set_place(row.index, option)
            panel.action_set_score(6)
    screen.query_one("#winner", WinnerPicker).action_pick("option_1")
    screen.query_one("#rationale").load_text(RATIONALE)
    # The scores reach the draft through messages: one pause was not always enough for all of
    # them on a busy machine ("22 scores" still lacking), so wait for the draft itself.
    await wait_until(pilot, lambda: screen.lacking() == [], "the draft complete")
