"""The session screen shows the cost estimate of the calls left before a run starts (Pilot)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from centaur_tui.ui.app import create_app
from centaur_tui.ui.screens.session import SessionScreen
from tests.support.sessions import small_session_toml
from tests.support.waits import wait_for


async def test_the_estimate_shows_before_a_run_without_creating_the_database(tmp_path: Path) -> None:
    text = small_session_toml(limits="concurrency = 4\nper_model_concurrency = 2\nmax_cost_usd = 3.0").replace(
        'model = "simulated/judge-west"',
        'model = "simulated/judge-west"\ninput_cost_per_mtok = 2.0\noutput_cost_per_mtok = 8.0',
    )
    path = tmp_path / "small.toml"
    path.write_text(text, encoding="utf-8")
    app = create_app(sessions_dir=tmp_path, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session overview")
        estimate = app.screen.query_one("#estimate", Static)
        await wait_for(pilot, lambda: "Before running" in str(estimate.render()), "the estimate", tries=1200)
        shown = str(estimate.render())
    assert "call(s) left" in shown and "judging:" in shown
    assert "unknown price" in shown  # the other simulated judges have no price: never $0
    assert "Budget $3.00: $3.00 left" in shown
    assert not (tmp_path / "small.db").exists()
