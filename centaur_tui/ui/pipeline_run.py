"""Provides PipelineRun: a session's pipeline in a thread with its own event loop, stoppable from the UI.

Running the pipeline on the UI's own loop stalled the UI up to about 90 ms; in a thread with
its own loop about 30 ms (NOTES.md). The UI reads `progress` on a timer instead of receiving a
message per call. Stopping cancels the run; every answered call is already stored, so running
again resumes where it stopped. Everything heavy (the pipeline package, the store, litellm) is
imported and opened inside the thread, never on the UI's loop.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from centaur_tui.domain.study import Study

if TYPE_CHECKING:
    from centaur_tui.pipeline import Progress, RunOutcome
    from centaur_tui.store import Store


class PipelineRun:
    """One run of a session's pipeline.

    Args:
        study: The session to run.
        open_store: Returns its database (shared with the app: one writer connection per
            process); called in the run's thread.
    """

    def __init__(self, study: Study, open_store: Callable[[], Store]) -> None:
        self.study = study
        self._open_store = open_store
        self.pipeline: Any = None
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._lock = threading.Lock()

    @property
    def progress(self) -> Progress | None:
        """Live counters, once the run has started."""
        return self.pipeline.progress if self.pipeline is not None else None

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(self) -> RunOutcome | None:
        """Run to completion in the calling thread; None when stopped first.

        Raises:
            ProviderError: a provider refused every call of a model.
            MissingKeyError: a real model needs a key that is not set.
        """
        from centaur_tui import pipeline as pipeline_package
        from centaur_tui.llm import require_keys
        from centaur_tui.llm.runtime import litellm

        s = self.study.session
        require_keys([(m.name, m) for m in s.models] + [(s.worker.name, s.worker)] + [(j.name, j) for j in s.judges])
        # litellm brings about 200 MB of long-lived objects; left in the collector's view, each
        # full collection afterwards stalled the UI by 0.1-0.3 s (measured on Pilot key presses).
        litellm()
        gc.freeze()
        self.pipeline = pipeline_package.Pipeline(self.study, self._open_store(), sink=None)

        async def main() -> RunOutcome | None:
            with self._lock:
                self._loop = asyncio.get_running_loop()
                self._task = asyncio.current_task()
            if self._stop.is_set():
                return None
            return await self.pipeline.run()

        try:
            with asyncio.Runner() as runner:
                return runner.run(main())
        except asyncio.CancelledError:
            return None
        finally:
            with self._lock:
                self._loop = None
                self._task = None

    def stop(self) -> None:
        """Ask the run to stop (from any thread); in-flight calls are abandoned, answered ones kept."""
        self._stop.set()
        with self._lock:
            if self._loop is not None and self._task is not None:
                self._loop.call_soon_threadsafe(self._task.cancel)
