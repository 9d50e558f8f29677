"""Provides the run use case: a session's pipeline run to completion, blocking or stoppable from another thread.

One `PipelineRun` for every front end, reporting through a `ProgressSink`: the CLI calls
`run_study` (blocking, a line printer as display; Ctrl-C raises KeyboardInterrupt out of it),
the app runs `PipelineRun.run` in a thread worker and stops it from the UI thread, reading
`progress` on a timer instead of receiving a message per call. `PipelineRun.run` checks the API
keys, once, before it opens the store (the CLI hands it an opener rather than checking first);
a stopped run resumes where it stopped, since every answered call is stored when it arrives.

One run per session at a time, across processes: a run holds the session's lock file
(`store.SessionLock`, an OS lock on `NAME.db.lock`) from before its first call to its end, so
a second `centaur run`, or the app, on the same session refuses at once with a
SessionBusyError naming the holder's pid, host and start time (exit status 2; a notification
in the app). Two runs at once sent every call twice before (issue 12). The operating system
releases the lock when the holder dies, so a killed run never blocks the next.

Running the pipeline on the UI's own loop stalled the UI up to about 90 ms; in a thread with
its own loop about 30 ms (NOTES.md). Everything heavy (the pipeline package, the store,
litellm) is imported and opened inside the run's thread, never on the UI's loop.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from centaur_tui.domain.study import Study
from centaur_tui.services.session import require_keys

if TYPE_CHECKING:
    from centaur_tui.pipeline import Progress, ProgressSink, RunOutcome
    from centaur_tui.store import Store


class PipelineRun:
    """One run of a session's pipeline in the calling thread, stoppable from any other thread.

    Args:
        study: The session to run.
        open_store: Returns its database (shared with the app: one writer connection per
            process); called in the run's thread.
        display: Where progress goes a few times a second, and once at the end; optional.
        settle_memory: Import litellm first and freeze the collector's view of it: for a
            long-lived process with a UI (the app), not for a one-shot command, which then
            never imports litellm when every call is stored already (about 3 s).
    """

    def __init__(
        self,
        study: Study,
        open_store: Callable[[], Store],
        display: ProgressSink | None = None,
        *,
        settle_memory: bool = False,
    ) -> None:
        self.study = study
        self._open_store = open_store
        self.display = display
        self.settle_memory = settle_memory
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
            SessionBusyError: another run (this process or another) holds the session.
            KeyboardInterrupt: Ctrl-C in the main thread (every answered call is kept).
        """
        # Looked up on the package at run time, so tests can substitute a gated Pipeline.
        from centaur_tui import pipeline as pipeline_package
        from centaur_tui.store import SessionLock

        require_keys(self.study)
        store = self._open_store()
        with SessionLock(store.path):  # before anything slow: a second run refuses at once
            return self._run_locked(pipeline_package, store)

    def _run_locked(self, pipeline_package: Any, store: Store) -> RunOutcome | None:
        if self.settle_memory:
            from centaur_tui.llm.runtime import litellm

            # litellm brings about 200 MB of long-lived objects; left in the collector's view, each
            # full collection afterwards stalled the UI by 0.1-0.3 s (measured on Pilot key presses).
            litellm()
            gc.freeze()
        self.pipeline = pipeline_package.Pipeline(self.study, store, sink=self.display)

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


INCOMPLETE_EXIT = 3
"""Exit status of `centaur run` when the run finished with planned calls failed for good (README: exit statuses)."""

NOT_FINISHED_EXIT = 4
"""Exit status of `centaur run` when batches are still in flight at the provider: not finished, run again to collect."""


def exit_status(outcome: RunOutcome) -> int:
    """Exit status of a finished run: 0 complete, 4 batches in flight, 5 stopped at the budget, 3 failed for good."""
    if outcome.batches_pending:
        return NOT_FINISHED_EXIT
    if outcome.complete:
        return 0
    return BUDGET_EXIT if outcome.progress.budget_stopped else INCOMPLETE_EXIT


def batches_left_line(store: Store) -> str | None:
    """What a stopped run left in flight at the provider (read from the store), or None when nothing."""
    from centaur_tui.store import batches_in_flight

    n, k = batches_in_flight(store)
    if not n:
        return None
    return (
        f"{n:,} batch{'es' if n != 1 else ''} ({k:,} calls) stay in flight at the provider; the next run collects "
        "them without sending them again."
    )


def batches_line(outcome: RunOutcome) -> str | None:
    """What a run leaves in flight at the provider ([batch] wait = false), or None when it leaves nothing."""
    if not outcome.batches_pending:
        return None
    n, k = outcome.batches_pending, outcome.requests_pending
    return (
        f"Not finished: {k:,} call{'s' if k != 1 else ''} wait in {n:,} batch{'es' if n != 1 else ''} at the "
        "provider; run `centaur run` again to collect them (nothing is sent twice)."
    )


BUDGET_EXIT = 5
"""Exit status of `centaur run` when the run stopped at the session's `max_cost_usd` (items are missing)."""


def budget_lines(study: Study, outcome: RunOutcome) -> list[str]:
    """What the budget stop means: spent, left, and what the calls not sent would cost (empty without a stop)."""
    p = outcome.progress
    limit = study.session.limits.max_cost_usd
    if not p.budget_stopped or limit is None:
        return []
    from centaur_tui.pipeline.estimate import usd
    from centaur_tui.services.estimate import session_estimate

    spent = p.spent or 0.0
    est = session_estimate(study)
    not_sent = sum(s.budget for s in p.stages.values())
    of_it = f" (of it {usd(p.unanswered_usd)} estimated, billed without an answer)" if p.unanswered_usd else ""
    return [
        f"Stopped at the budget: max_cost_usd = {usd(limit)}, {usd(spent)} spent{of_it}, "
        f"{usd(max(0.0, limit - spent))} left; {not_sent:,} call(s) not sent because each could pass it.",
        f"  The {est.remaining_calls:,} remaining call(s) would cost about {usd(est.cost_remaining)} "
        f"(at most {usd(est.worst_cost_remaining)}): raise max_cost_usd to at least "
        f"{usd(spent + (est.worst_cost_remaining or 0.0))} and run again to finish (nothing stored is sent again).",
    ]


CAUSE_WORDS = {
    "timeout": "timed out",
    "broken": "got a broken reply",
    "stopped": "were out when a run was stopped",
    "killed": "were out when a run was killed",
}


def spend_lines(outcome: RunOutcome) -> list[str]:
    """Spend shown apart from what answered calls cost: requests billed without an answer, and over-reporting.

    The first: requests the provider may have billed although no answer was stored (this run and
    earlier ones), estimated at their worst case and counted toward `max_cost_usd`. The second: USD
    the provider reported above the worst cases reserved (settled at what it reported).
    """
    from centaur_tui.pipeline.estimate import usd

    p = outcome.progress
    lines: list[str] = []
    if p.unanswered:
        causes = ", ".join(
            f"{n:,} {CAUSE_WORDS.get(cause, cause)}" for cause, n in sorted(p.unanswered_causes.items()) if n
        )
        known = p.unanswered - p.unanswered_unknown
        estimate = (
            f"estimated at {usd(p.unanswered_usd)} (each at its worst case), counted in the spend"
            if known
            else "not estimated (sent without a budget)"
        )
        if known and p.unanswered_unknown:
            estimate += f"; {p.unanswered_unknown:,} sent without a budget are not estimated"
        lines.append(
            f"{p.unanswered:,} request{'s' if p.unanswered != 1 else ''} may have been billed without an answer "
            f"({causes}): {estimate}."
        )
    if p.over_reports:
        lines.append(
            f"The provider reported more than the worst case for {p.over_reports:,} call"
            f"{'s' if p.over_reports != 1 else ''}: {usd(p.over_reported)} above what was reserved, settled at "
            "what it reported (later reservations of those models grow by the same ratio)."
        )
    return lines


def billed_twice_line(outcome: RunOutcome) -> str | None:
    """How many calls of the run may have been billed twice, and why (None when none may have been).

    Two causes: an attempt that timed out and was sent again (the provider may have processed
    the first one; at most `max_timeout_retries` per call), and a call a killed previous run
    left in flight, sent again by this one (at most `concurrency` per kill). A call that timed
    out twice and was sent twice counts twice.
    """
    resent = outcome.progress.timeouts_resent + outcome.resent_earlier
    return _billed_twice_text(resent, outcome.interrupted)


def _billed_twice_text(resent: int, interrupted: int) -> str | None:
    n = resent + interrupted
    if not n:
        return None
    return (
        f"{n:,} call{'s' if n != 1 else ''} may have been billed twice ({resent:,} timed out and "
        f"{'were' if resent != 1 else 'was'} sent again, {interrupted:,} {'were' if interrupted != 1 else 'was'} "
        "in flight when an earlier run stopped)."
    )


def billed_twice_pending_line(store: Store, this_run_resent: int = 0) -> str | None:
    """The billed-twice notice of a stopped run, read from the store (kept there until a run completes)."""
    from centaur_tui.store import billed_twice_pending

    interrupted, resent = billed_twice_pending(store)
    return _billed_twice_text(resent + this_run_resent, interrupted)


def _counts_text(failed: int, blocked: int, budget: int = 0, not_sent: int = 0) -> str:
    parts = [f"{failed:,} failed for good"] if failed else []
    if not_sent:
        parts.append(f"{not_sent:,} not sent (run stopped)")
    if blocked:
        parts.append(f"{blocked:,} blocked")
    if budget:
        parts.append(f"{budget:,} not sent (budget)")
    return ", ".join(parts)


def outcome_lines(outcome: RunOutcome) -> list[str]:
    """The missing items of a finished run, per stage and for judgments per judge (empty when complete).

    The first line is "Incomplete: N calls failed for good; run again to retry them."; the
    next name the stages (and judges) with failed, not sent and blocked items (blocked: an
    input failed). Items waiting in provider batches are not sent by this run: counted apart.
    """
    o = outcome.outcomes
    if o.complete:
        return [] if not outcome.batches_pending else [batches_line(outcome) or ""]
    waiting = {name: s.in_batch for name, s in outcome.progress.stages.items() if s.in_batch}
    failed = o.failed
    not_sent = max(0, o.not_sent - sum(waiting.values()))
    pending = batches_line(outcome)
    lines = [pending] if pending else []
    if failed or not (waiting or o.budget or not_sent):
        plural = "s" if failed != 1 else ""
        lines.append(f"Incomplete: {failed:,} call{plural} failed for good; run again to retry them.")
    if not_sent:
        line = f"{not_sent:,} item(s) not sent (run stopped); run again to send them."
        if lines and lines[-1].startswith("Incomplete"):
            lines[-1] += " " + line
        else:
            lines.append("Incomplete: " + line)
    if o.budget:
        budget_line = f"{o.budget:,} item(s) not sent because of the budget (max_cost_usd)."
        if lines and lines[-1].startswith("Incomplete"):
            lines[-1] += " " + budget_line
        else:
            lines.append("Incomplete: " + budget_line)
    for stage, c in o.stages.items():
        if not c.missing:
            continue
        in_batch = waiting.get(stage, 0)
        counts = _counts_text(c.failed, c.blocked, c.budget, max(0, c.not_sent - in_batch))
        if in_batch:
            counts = ", ".join(p for p in (f"{in_batch:,} waiting in batches", counts) if p)
        line = f"  {stage}: {c.missing:,} of {c.planned:,} missing ({counts})"
        if stage == "judging":
            judges = [
                f"{name} "
                f"{f'{j.missing:,} missing' if in_batch else _counts_text(j.failed, j.blocked, j.budget, j.not_sent)}"
                for name, j in o.judges.items()
                if j.missing
            ]
            line += "; by judge: " + "; ".join(judges)
        lines.append(line)
    if outcome.progress.last_error:
        lines.append(f"  Last error: {outcome.progress.last_error}")
    return lines


def cut_off_lines(outcome: RunOutcome, on_truncated: str) -> list[str]:
    """What the run's texts cut off at max_tokens came to (empty when none): per stage, as the store holds them."""
    o = outcome.outcomes
    cut = {k: c.cut_off for k, c in o.stages.items() if k != "judging" and c.cut_off}
    reasks = sum(s.cut_off_reasks for s in outcome.progress.stages.values())
    excluded = o.stages["judging"].excluded
    marked = o.stages["judging"].cut_off
    if not (cut or reasks or excluded):
        return []
    stored = ", ".join(f"{k} {n:,}" for k, n in cut.items()) or "none"
    line = f"Cut off at max_tokens: {sum(cut.values()):,} stored text(s) ({stored}); on_truncated = {on_truncated}."
    if reasks:
        line += f" {reasks:,} call(s) asked again with a larger max_tokens in this run."
    if marked:
        line += f" {marked:,} judgment(s) were made of a comparison holding a cut-off output."
    if excluded:
        line += f" {excluded:,} judgment(s) excluded (an output cut off)."
    return [line]


def run_study(study: Study, store: Store, display: ProgressSink | None = None) -> RunOutcome:
    """Run (or resume) a session to completion in the calling thread (the CLI's run).

    Raises:
        MissingKeyError: a real model needs a key that is not set (checked before any call).
        SessionBusyError: another run holds the session (nothing is sent).
        ProviderError: a provider refused every call of a model.
        KeyboardInterrupt: Ctrl-C; every answered call is stored, running again resumes.
    """
    outcome = PipelineRun(study, lambda: store, display).run()
    assert outcome is not None  # only `stop()` from another thread ends a run without an outcome
    return outcome
