"""The app around judging, through Pilot: home screen, session overview, pipeline beside an expert, assignment."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input

from centaur_tui.catalog import load_session
from centaur_tui.domain.plan import summarize
from centaur_tui.pipeline import Pipeline
from centaur_tui.store import ExpertStore, Store
from centaur_tui.ui.app import CentaurApp, create_app
from centaur_tui.ui.screens.home import HomeScreen
from centaur_tui.ui.screens.judging import JudgingScreen
from centaur_tui.ui.screens.session import SessionScreen
from tests.support.experts import judged_session
from tests.support.judging import assign, fill_in
from tests.support.waits import bounded, wait_for


def table_rows(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_home_lists_sessions_with_their_state_and_opens_one(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 3)
    folder = path.parent
    (folder / "fresh.toml").write_text(path.read_text().replace('name = "small"', 'name = "fresh"'))
    (folder / "broken.toml").write_text("name = 'broken'\nruns = 0\n")
    study = load_session(path)
    plan = summarize(study.session)
    app = create_app(sessions_dir=folder)
    async with app.run_test(size=(120, 30)) as pilot:
        home = app.screen
        assert isinstance(home, HomeScreen)
        await wait_for(pilot, lambda: home.loaded, "the sessions to be read")
        rows = {r[0]: r for r in table_rows(home.query_one("#sessions", DataTable))}
        assert rows["small"][1:] == ["simulated", f"{plan.total_calls:,}", "0", f"{plan.total_judgments:,}", "0", "3"]
        assert rows["fresh"][1:4] == ["simulated", "not run", f"{plan.total_calls:,}"]
        assert rows["broken"][1] == "invalid"
        table = home.query_one("#sessions", DataTable)
        table.move_cursor(row=[r.name for r in home.rows].index("broken"))
        await pilot.pause()
        assert home.check_action("open", ()) is None  # the footer dims Open on an invalid file
        assert "broken.toml" in app.screen_text()
        table.move_cursor(row=[r.name for r in home.rows].index("small"))
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None,
            "the session overview",
        )
        assert "SIMULATED DATA" in app.screen_text()
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen)
        table.move_cursor(row=[r.name for r in home.rows].index("fresh"))
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None,
            "the overview of a session never run",
        )
        assert f"{plan.total_calls:,} left" in app.screen_text()
        assert not (folder / "fresh.db").exists()  # looking creates no database


@pytest.mark.slow
async def test_pipeline_runs_pauses_resumes_while_an_expert_judges_and_both_are_stored(
    tmp_path: Path, monkeypatch
) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 4)
    # A second run adds calls to make; its judging waits at a gate the test opens once the
    # expert has submitted, so the pipeline is certainly running while the expert judges.
    text = path.read_text().replace("runs = 1", "runs = 2", 1)
    text = text.replace("[faults]\n", "[faults]\nlatency_s = 0.02\n", 1)
    path.write_text(text)
    opened = threading.Event()
    gates: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    class GatedPipeline(Pipeline):
        async def run(self):  # type: ignore[override]
            self.gate = asyncio.Event()
            gates.append((asyncio.get_running_loop(), self.gate))
            if opened.is_set():
                self.gate.set()
            judge = self.judging.judge  # the one judging step of the pipeline

            async def gated_judge(*args, **kwargs):
                # A failed test never opens the gate: the limit turns that hang into an error.
                await bounded(self.gate.wait(), "the test to open the judging gate", timeout=120)
                await judge(*args, **kwargs)

            self.judging.judge = gated_judge  # type: ignore[method-assign]
            return await super().run()

    def open_gates() -> None:
        opened.set()
        for loop, gate in gates:
            if not loop.is_closed():
                loop.call_soon_threadsafe(gate.set)

    monkeypatch.setattr("centaur_tui.pipeline.Pipeline", GatedPipeline)
    study = load_session(path)
    plan = summarize(study.session)
    app: CentaurApp = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None,
            "the session overview",
        )
        overview: SessionScreen = app.screen  # type: ignore[assignment]
        assert overview.check_action("pause", ()) is False  # nothing to pause yet: hidden
        await pilot.press("r")
        assert overview.running and overview.check_action("run", ()) is False
        await wait_for(
            pilot,
            lambda: overview.runner.progress is not None and overview.runner.progress.stages["automation"].sent > 0,
            "the first calls",
        )
        await pilot.press("p")
        await wait_for(pilot, lambda: not overview.running, "the pause")
        assert overview.last_outcome == "Paused: run again to resume."
        await wait_for(pilot, lambda: overview.state is not None and overview.state.calls_left > 0, "the re-read")

        await pilot.press("r")  # resume, and judge while it runs
        await pilot.press("j")
        await wait_for(pilot, lambda: isinstance(app.screen, JudgingScreen), "the judging screen")
        screen: JudgingScreen = app.screen  # type: ignore[assignment]
        for _ in range(2):
            await wait_for(pilot, lambda: not screen.busy and screen.item is not None, "a comparison")
            await fill_in(pilot, screen)
            assert overview.running
            await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not screen.busy, "the second submit")
        open_gates()
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is overview and not overview.running, "the pipeline to finish", 1500)
        assert overview.last_outcome is not None and overview.last_outcome.startswith("Finished in")
        assert overview.check_action("pause", ()) is False and overview.check_action("run", ()) is True
    with Store(study.database) as store:
        counts = store.counts()
        rows = store.judgment_rows()
        assert counts.outputs == plan.calls["automation"] + plan.calls["worker"]
        assert sum(r.judge_kind == "llm" for r in rows) == plan.total_judgments
        assert sum(r.judge_kind == "expert" for r in rows) == 2
        assert ExpertStore(store).workload()["ann"] == (4, 2)


@pytest.mark.slow
async def test_assigning_and_adding_experts_from_the_app(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None,
            "the session overview",
        )
        overview: SessionScreen = app.screen  # type: ignore[assignment]
        assert overview.check_action("judge", ()) is None  # nothing assigned yet: dimmed
        await pilot.press("a")
        dialog = app.screen
        dialog.query_one("#assign-n", Input).value = "5"
        dialog.query_one("#assign-repeats", Input).value = "0.2"
        await pilot.click("#assign-ok")
        await wait_for(pilot, lambda: overview.state.workload.get("ann") == (5, 0), "the assignment")
        assert overview.check_action("judge", ()) is True

        await pilot.press("n")
        dialog = app.screen
        dialog.query_one("#expert-id", Input).value = "cy"
        dialog.query_one("#expert-name", Input).value = "Cy Example"
        dialog.query_one("#expert-tasks", Input).value = "tutoring"
        await pilot.click("#expert-ok")
        await wait_for(pilot, lambda: any(e.id == "cy" for e in overview.state.experts), "the new expert")
        await pilot.press("n")
        app.screen.query_one("#expert-id", Input).value = "cy"
        app.screen.query_one("#expert-name", Input).value = "Again"
        await pilot.click("#expert-ok")
        await wait_for(
            pilot, lambda: any("already exists" in n.message for n in app._notifications), "the error notification"
        )
    study = load_session(path)
    with Store(study.database) as store:
        experts = ExpertStore(store)
        assert [e.id for e in experts.experts(study)] == ["ann", "bob", "cy"]
        assert experts.expert(study, "cy").tasks == ("tutoring",)
        assert sum(a.expert == "ann" and a.presentation == 1 for a in experts.existing()) == 1


async def test_a_failing_worker_is_a_notification_not_a_crash(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    app = create_app(sessions_dir=path.parent, session=path, expert="nobody")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: any("nobody" in n.message for n in app._notifications), "the notification")
        assert app.is_running and isinstance(app.screen, SessionScreen)
        note = next(n for n in app._notifications if "nobody" in n.message)
        assert note.title == "Unknown expert" and note.severity == "error"


async def test_a_run_with_a_judge_failing_for_good_says_incomplete_and_shows_the_missing_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from centaur_tui.llm import CallFailed, Gateway
    from tests.support.sessions import small_session_toml

    original = Gateway.complete

    async def refuse_west(self: Gateway, req: Any) -> Any:
        if req.endpoint.model == "simulated/judge-west":
            raise CallFailed("simulated/judge-west: ServiceUnavailableError: down", "ServiceUnavailableError", 3)
        return await original(self, req)

    monkeypatch.setattr(Gateway, "complete", refuse_west)
    path = tmp_path / "failing.toml"
    path.write_text(small_session_toml(name="failing", tasks=("counseling",)), encoding="utf-8")
    west = summarize(load_session(path).session).judgments_per_judge["JudgeWest"]
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None,
            "the session overview",
        )
        overview: SessionScreen = app.screen  # type: ignore[assignment]
        await pilot.press("r")
        await wait_for(pilot, lambda: overview.last_outcome is not None, "the run to end", 1500)
        assert overview.last_outcome.startswith(f"Incomplete: {west} calls failed for good; run again to retry them.")
        assert f"by judge: JudgeWest {west} failed for good" in overview.last_outcome
        await wait_for(pilot, lambda: overview.state is not None and not overview.running, "the re-read")
        table = overview.query_one("#stages", DataTable)
        assert table.get_cell("judging", "missing") == f"{west:,}"
        assert table.get_cell("automation", "missing") == "0"


async def test_running_a_session_another_process_runs_is_refused_with_a_notification(tmp_path: Path) -> None:
    from centaur_tui.store import SessionLock

    path = judged_session(tmp_path)
    study = load_session(path)
    app: CentaurApp = create_app(sessions_dir=path.parent, session=path)
    with SessionLock(study.database):  # as another `centaur run` of the session would hold it
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(
                pilot,
                lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None,
                "the session overview",
            )
            overview: SessionScreen = app.screen  # type: ignore[assignment]
            calls_before = overview.state.calls_left if overview.state is not None else None
            await pilot.press("r")
            await wait_for(
                pilot, lambda: any("being run already" in n.message for n in app._notifications), "the refusal"
            )
            note = next(n for n in app._notifications if "being run already" in n.message)
            assert note.title == "Session already running" and note.severity == "error"
            await wait_for(pilot, lambda: not overview.running, "the run worker to end")
            assert overview.last_outcome == "Stopped by an error."
            assert overview.state is not None and overview.state.calls_left == calls_before
