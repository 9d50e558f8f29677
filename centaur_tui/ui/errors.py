"""Provides the one place where failed workers become notifications."""

from __future__ import annotations

from textual.worker import Worker, WorkerState


class ReportsWorkerErrors:
    """Mixin for a screen or widget: a failed worker it started is shown as a notification.

    Workers run with `exit_on_error=False`, so an error never closes the app; it lands here.
    """

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.app.report(event.worker.error)  # type: ignore[attr-defined]
