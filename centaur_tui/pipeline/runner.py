"""Provides Pipeline: every call of a session planned as a content-addressed key, sent once, stored.

The run is a dataflow, not a sequence of stage barriers: each tournament (run, task, mode)
awaits its own outputs and then judges its comparisons, while the gateway bounds how many
calls are in flight. Concurrency therefore stays full until the very last calls, which the
wall-time benchmark (bench/pipeline.py) depends on.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from centaur_tui.domain.cutoff import is_cut_off, raised_max_tokens
from centaur_tui.domain.errors import ProviderError, StoreError
from centaur_tui.domain.identity import entries_json
from centaur_tui.domain.outcomes import Outcomes, session_outcomes
from centaur_tui.domain.plan import (
    DIALOGUE_STAGE,
    assistance_id,
    candidate_output_id,
    candidates_for,
    comparisons,
    dialogue_calls,
    mode_worker,
    output_id,
    summarize,
    tournament_modes,
)
from centaur_tui.domain.prompts import (
    assistance_messages,
    automation_messages,
    worker_messages,
)
from centaur_tui.domain.records import (
    AssistanceRecord,
    ComparisonRecord,
    OutputRecord,
)
from centaur_tui.domain.session import PLAIN, Endpoint, WorkerSpec
from centaur_tui.domain.study import Study
from centaur_tui.llm import CallFailed, FatalProviderError, Gateway
from centaur_tui.pipeline.batching import BatchPending
from centaur_tui.pipeline.budget import BudgetExceeded
from centaur_tui.pipeline.calls import DB_WAITING, Calls
from centaur_tui.pipeline.dialogue import run_dialogue
from centaur_tui.pipeline.judging import Judging
from centaur_tui.pipeline.progress import Progress, ProgressSink, StageProgress
from centaur_tui.store import (
    DialogueTurn,
    Store,
    batches_in_flight,
    billed_twice_pending,
    clear_billed_twice,
    note_resent,
    save_dialogue_turns,
    stored_facts,
    take_interrupted,
)

log = logging.getLogger(__name__)


@dataclass
class RunOutcome:
    """What a finished run reports: its counters and the outcome of every planned item, read from the store.

    Attributes:
        progress: The run's counters.
        outcomes: Per stage and per judge, how many planned items are answered, invalid,
            failed for good or blocked (domain/outcomes.py), as the store holds them after the run.
        interrupted: Calls left in flight by a run that died mid-call (`kill -9`), sent again by
            this run or by an earlier one that did not complete: they may have been billed twice.
        resent_earlier: Timed-out attempts sent again by earlier runs that did not complete (this
            run's are in `progress.timeouts_resent`). Both are kept in the store until a run completes.
    """

    progress: Progress
    outcomes: Outcomes
    interrupted: int = 0
    resent_earlier: int = 0
    batches_pending: int = 0
    """Batches still in flight at the provider when the run ended ([batch] wait = false, or status unknown)."""
    requests_pending: int = 0
    """Calls waiting in those batches: not failed, not answered yet; `centaur run` again collects them."""

    @property
    def missing_outputs(self) -> int:
        """Outputs and assistance texts with nothing stored (failed or blocked)."""
        return sum(self.outcomes.stages[s].missing for s in ("automation", "assistance", "worker"))

    @property
    def unjudged(self) -> int:
        """Planned judgments with nothing stored (failed or blocked)."""
        return self.outcomes.stages["judging"].missing

    @property
    def failed(self) -> int:
        """Planned items whose call failed for good (a re-run retries them)."""
        return self.outcomes.failed

    @property
    def complete(self) -> bool:
        return self.outcomes.complete and not self.batches_pending


class Pipeline:
    """Runs a study against its store; safe to stop at any moment and to run again.

    Generation (automation outputs, assistance texts, worker outputs) is done here; every call
    goes through one `Calls`, and each tournament's comparisons are judged by `Judging`, the
    component the human-worker arm uses too.

    Args:
        study: The validated session with its tasks.
        store: The session database.
        sink: Where progress goes; optional.
        gateway: Injected for tests; built from the session limits otherwise.
        tick: Seconds between progress updates.
    """

    def __init__(
        self,
        study: Study,
        store: Store,
        sink: ProgressSink | None = None,
        gateway: Gateway | None = None,
        tick: float = 0.25,
    ) -> None:
        self.study = study
        self.session = study.session
        self.store = store
        self.sink = sink
        self.tick = tick
        self.progress = Progress(session=self.session.name, simulated=self.session.simulated)
        if self.session.dialogue_candidates:  # a stage of its own only where dialogues are planned
            self.progress.stages.setdefault(DIALOGUE_STAGE, StageProgress())
        self.calls = Calls(study, store, self.progress, gateway)
        self.judging = Judging(study, store, self.calls, self.progress)
        self.not_sent: set[object] = self.judging.not_sent  # items the budget kept from being sent (one set)

    @property
    def world_id(self) -> str | None:
        """Id of the simulation world the simulated calls are routed with (None for a real session)."""
        return self.calls.world_id

    def _gen_params(self) -> dict[str, Any]:
        g = self.session.generation
        return {"temperature": g.temperature, "max_tokens": g.max_tokens}

    async def _generate(
        self, stage: str, endpoint: Endpoint, messages: list[dict[str, str]], sample: str
    ) -> tuple[str, str, bool, int]:
        """One text of a generation stage: (call key, text, cut off at max_tokens, re-asks).

        With `on_truncated = "reask"` a reply cut off at max_tokens is asked again with the limit
        doubled, up to `max_tokens_cap`; the first call keeps its params, so its content address
        (and every stored answer) stays what it was. A text still cut off at the cap is kept and
        judged marked. The other policies keep the first reply and its cut-off flag.
        """
        g = self.session.generation
        params = self._gen_params()
        key, text, finish = await self.calls.call_reply(stage, endpoint, messages, params, sample)
        reasks = 0
        while is_cut_off(finish) and g.on_truncated == "reask":
            raised = raised_max_tokens(int(params["max_tokens"]), g.reask_cap)
            if raised is None:
                break
            params = {**params, "max_tokens": raised}
            reasks += 1
            self.progress.stages[stage].cut_off_reasks += 1
            key, text, finish = await self.calls.call_reply(stage, endpoint, messages, params, sample)
        cut_off = is_cut_off(finish)
        if cut_off:
            self.progress.stages[stage].cut_off += 1
        return key, text, cut_off, reasks

    # -- generation ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _item(self, item: str, stage: str) -> Iterator[None]:
        """Note the planned item whose call the budget kept from being sent (its outcome is `budget`), and
        store the one whose call failed for good (its outcome is `failed`, not "not sent")."""
        try:
            yield
        except BudgetExceeded:
            self.not_sent.add(item)
            raise
        except FatalProviderError:
            raise
        except CallFailed as exc:
            if not isinstance(exc, BatchPending):  # waiting at the provider is not a failure
                self.calls.record_failed_item(item, stage, str(exc))
            raise

    async def _guarded(self, make: Callable[[], Awaitable[OutputRecord]]) -> OutputRecord | None:
        try:
            return await make()
        except FatalProviderError:
            raise
        except CallFailed as exc:  # counted in its stage by Calls.call; the output stays missing
            self.progress.last_error = str(exc)
            return None

    async def _automation_output(self, run: int, task_id: str, name: str) -> OutputRecord:
        oid = output_id(run, task_id, "automation", name, name)
        st = self.progress.stages["automation"]
        if oid in self._outputs:
            st.done += 1
            st.cached += 1
            return self._outputs[oid]
        model = self.session.model(name)
        messages = automation_messages(self.study.universal, self.study.task(task_id))
        with self._item(oid, "automation"):
            key, text, cut_off, reasks = await self._generate("automation", model, messages, f"automation:run{run}")
        record = OutputRecord(
            oid, run, task_id, "automation", name, name, text, None, key, cut_off=cut_off, cut_off_reasks=reasks
        )
        await self.calls.db(self.store.save_output, record)
        self._outputs[oid] = record
        st.done += 1
        return record

    def _count_cached_assistance(self, aid: str) -> None:
        """Count a stored assistance text once, however many workers of a panel read it."""
        if aid not in self._assistance_counted:
            self._assistance_counted.add(aid)
            self.progress.stages["assistance"].done += 1
            self.progress.stages["assistance"].cached += 1

    async def _shared_assistance(self, run: int, task_id: str, name: str) -> AssistanceRecord:
        """The assistance text every worker of a panel reads: one call (one task) per text, awaited by each."""
        aid = assistance_id(run, task_id, name)
        job = self._assistance_jobs.get(aid)
        if job is None:
            job = self._assistance_jobs[aid] = asyncio.ensure_future(self._assistance(run, task_id, name))
        return await job

    async def _assistance(self, run: int, task_id: str, name: str) -> AssistanceRecord:
        aid = assistance_id(run, task_id, name)
        st = self.progress.stages["assistance"]
        if aid in self._assistance_texts:
            self._count_cached_assistance(aid)
            return self._assistance_texts[aid]
        model = self.session.model(name)
        messages = assistance_messages(self.study.universal, self.study.task(task_id))
        with self._item(aid, "assistance"):
            key, text, cut_off, reasks = await self._generate("assistance", model, messages, f"assistance:run{run}")
        record = AssistanceRecord(aid, run, task_id, name, text, key, cut_off, reasks)
        await self.calls.db(self.store.save_assistance, record)
        self._assistance_texts[aid] = record
        self._assistance_counted.add(aid)
        st.done += 1
        return record

    async def _worker_output(
        self, run: int, task_id: str, candidate: str, worker: WorkerSpec | None = None
    ) -> OutputRecord:
        """A worker's deliverable with the candidate's assistance text (none for plain).

        `worker` is one worker of a `[[workers]]` panel; None is the session's (primary) worker.
        Every worker's deliverable is an `augmentation` output keyed by its worker's name.
        """
        worker = worker or self.session.worker
        assert worker is not None  # the session requires a worker when a model is an assistant
        oid = output_id(run, task_id, "augmentation", candidate, worker.name)
        st = self.progress.stages["worker"]
        # A dialogue candidate ([augmentation] turns > 1) is its assistant's text plus a dialogue.
        in_dialogue = self.session.dialogue_assistant(candidate)
        if oid in self._outputs:
            if candidate != PLAIN and in_dialogue is None:
                self._count_cached_assistance(assistance_id(run, task_id, candidate))
            if in_dialogue is not None:
                n = dialogue_calls(self.session.augmentation.turns)
                self.progress.stages[DIALOGUE_STAGE].done += n
                self.progress.stages[DIALOGUE_STAGE].cached += n
            st.done += 1
            st.cached += 1
            return self._outputs[oid]
        if in_dialogue is not None:
            return await self._dialogue_output(run, task_id, candidate, in_dialogue, oid, worker)
        guidance = None if candidate == PLAIN else await self._shared_assistance(run, task_id, candidate)
        messages = worker_messages(self.study.universal, self.study.task(task_id), guidance.text if guidance else None)
        with self._item(oid, "worker"):
            key, text, cut_off, reasks = await self._generate("worker", worker, messages, f"worker:run{run}")
        record = OutputRecord(
            oid,
            run,
            task_id,
            "augmentation",
            candidate,
            worker.name,
            text,
            guidance.id if guidance else None,
            key,
            cut_off=cut_off,
            cut_off_reasks=reasks,
        )
        await self.calls.db(self.store.save_output, record)
        self._outputs[oid] = record
        st.done += 1
        return record

    async def _dialogue_output(
        self, run: int, task_id: str, candidate: str, assistant: str, oid: str, worker: WorkerSpec
    ) -> OutputRecord:
        """A dialogue candidate's deliverable: the assistant's text, N - 1 rounds of questions, then the deliverable.

        The assistance text is the 1-turn candidate's own (one call, shared). A call of the
        dialogue that fails for good, or that the budget keeps back, leaves this output unwritten
        with that outcome (stage `worker`), like a failed worker call: one recorded outcome per item.
        """
        # The text the 1-turn candidate and every worker of a panel share (one call, counted once).
        guidance = await self._shared_assistance(run, task_id, assistant)
        with self._item(oid, "worker"):
            transcript = await run_dialogue(
                self.calls,
                self.study,
                self._gen_params(),
                run,
                task_id,
                self.session.model(assistant),
                worker,
                guidance.text,
            )
            self.progress.stages[DIALOGUE_STAGE].done += len(transcript.keys) * 2
            key, text, cut_off, reasks = await self._generate(
                "worker", worker, transcript.final_messages, f"worker:run{run}"
            )
        record = OutputRecord(
            oid,
            run,
            task_id,
            "augmentation",
            candidate,
            worker.name,
            text,
            guidance.id,
            key,
            cut_off=cut_off,
            cut_off_reasks=reasks,
        )
        turns = [
            DialogueTurn(oid, i, "model", assistant, question, answer, "answered", None, q_key, a_key)
            for i, ((question, answer), (q_key, a_key)) in enumerate(
                zip(transcript.rounds, transcript.keys, strict=True), 1
            )
        ]
        await self.calls.db(save_dialogue_turns, self.store, turns)  # before the output: a resumed run finds both
        await self.calls.db(self.store.save_output, record)
        self._outputs[oid] = record
        self.progress.stages["worker"].done += 1
        return record

    # -- tournaments ----------------------------------------------------------------------------

    async def _imported_output(self, run: int, task_id: str, mode: str, name: str) -> OutputRecord | None:
        """An imported candidate's stored output (`centaur import-outputs`), or None: nothing is generated for it."""
        return self._outputs.get(candidate_output_id(self.session, run, task_id, mode, name))

    async def _tournament(self, run: int, task_id: str, mode: str) -> None:
        names = candidates_for(self.session, mode)
        if not names:
            return
        imported = self.session.imported_names
        generated = [n for n in names if n not in imported]
        if mode == "automation":
            makers = [lambda n=n: self._automation_output(run, task_id, n) for n in generated]
        else:
            worker = mode_worker(self.session, mode)  # the primary worker, or a further one of a panel
            makers = [lambda n=n: self._worker_output(run, task_id, n, worker) for n in generated]
        results = list(await asyncio.gather(*(self._guarded(m) for m in makers)))
        # An imported output not (yet) imported leaves its comparisons blocked, like a failed output.
        results += [await self._imported_output(run, task_id, mode, n) for n in names if n in imported]
        # A deliverable cut off at max_tokens is judged marked, or (on_truncated = "exclude") not at
        # all: its comparisons are not judged, and their judgments count as excluded (domain/outcomes.py).
        exclude = self.session.generation.on_truncated == "exclude"
        kept = [r for r in results if r is not None and not (exclude and r.cut_off)]
        texts = {r.candidate: r.text for r in kept}
        outputs = {r.candidate: r.id for r in kept}
        cut_off = {r.candidate for r in kept if r.cut_off}
        comps = [c for c in comparisons(self.session, run, task_id, mode)]
        ready = [c for c in comps if c.candidate_a in outputs and c.candidate_b in outputs]
        await self.calls.db(
            self.judging.save_comparisons,
            [
                ComparisonRecord(
                    c.id,
                    c.run,
                    c.task,
                    c.mode,
                    c.candidate_a,
                    c.candidate_b,
                    outputs[c.candidate_a],
                    outputs[c.candidate_b],
                )
                for c in ready
            ],
        )
        # A comparison whose output is missing is not judged: its judgments are blocked (domain/outcomes.py).
        jobs = [job for comp in ready for job in self.judging.jobs(comp, texts, cut_off)]
        await asyncio.gather(*jobs)

    # -- the run -------------------------------------------------------------------------------

    def _meta(self) -> dict[str, str]:
        return {
            "session": self.session.name,
            "seed": str(self.session.seed),
            "simulated": "true" if self.session.simulated else "false",
            "session_file": str(self.study.session_file),
            # The entries the stored items are made by (domain/identity.py compares them at every open).
            "entries": entries_json(self.session),
        }

    def _load_state(self) -> None:
        self.calls.load()
        self.judging.load()
        self._outputs = self.store.outputs()
        self._assistance_texts = self.store.assistance_texts()
        self._assistance_jobs: dict[str, asyncio.Future[AssistanceRecord]] = {}
        self._assistance_counted: set[str] = set()

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            self._publish()

    def _publish(self) -> None:
        self.progress.waiting = DB_WAITING if self.calls.db_waiting else None
        if self.calls.gateway is not None:
            self.progress.in_flight = self.calls.in_flight
        if self.sink is not None:
            self.sink.update(self.progress)

    async def run(self) -> RunOutcome:
        """Run every stage to completion; already answered calls are never sent again.

        Raises:
            ProviderError: a provider refused every call of a model (bad key, unknown model).
        """
        summary = summarize(self.session)
        for stage, n in summary.calls.items():
            self.progress.stages[stage].planned = n
        self.progress.stages["judging"].planned = summary.total_judgments
        ticker = asyncio.create_task(self._ticker())  # before the first database work, which may wait
        try:
            await self.calls.db_read(self._load_state)
            await self.calls.db(self.store.set_meta, self._meta())
            # Counted before any call is sent: the calls a killed run had sent without an answer.
            if await self.calls.db(take_interrupted, self.store):
                # Recorded as billed without an answer: counted toward the budget before anything is sent.
                await self.calls.db_read(self.calls.note_unanswered)
            interrupted, resent_earlier = await self.calls.db_read(billed_twice_pending, self.store)
            await self.calls.batcher.resume()  # batches a previous run left in flight, before anything new
        except BaseException:
            ticker.cancel()
            self.calls.close()
            raise
        self.progress.interrupted = interrupted
        if interrupted:
            log.warning("%d call(s) were in flight when the previous run stopped; they are sent again", interrupted)
        log.info(
            "pipeline run of %s started: %d call(s) and %d judgment(s) planned",
            self.session.name,
            sum(summary.calls.values()),
            summary.total_judgments,
        )
        counted_resent = False
        tournaments = [
            asyncio.create_task(self._tournament(run, task_id, mode))
            for run in range(1, self.session.runs + 1)
            for task_id in self.session.tasks
            for mode in tournament_modes(self.session)  # automation, augmentation, one per further worker
        ]
        try:
            await asyncio.gather(*tournaments)
            await self.calls.batcher.drain()
            facts = await self.calls.db_read(stored_facts, self.store)
            outcomes = session_outcomes(self.session, dataclasses.replace(facts, not_sent=frozenset(self.not_sent)))
            self.progress.outcomes = outcomes
            batches, requests = await self.calls.db_read(batches_in_flight, self.store)
            if outcomes.complete and not batches:  # the "may have been billed twice" notice is said now
                await self.calls.db(clear_billed_twice, self.store)
            else:
                await self.calls.db(note_resent, self.store, self.progress.timeouts_resent)
            counted_resent = True
        except FatalProviderError as exc:
            for t in tournaments:
                t.cancel()
            await asyncio.gather(*tournaments, return_exceptions=True)
            await self.calls.batcher.close()
            raise ProviderError(
                f"{exc} - every call of this model would fail; check its model string and key, then run again "
                "(answered calls are kept)"
            ) from None
        except BaseException:
            await self.calls.batcher.close()  # a stopped run: batches stay in flight, the next run collects them
            raise
        finally:
            ticker.cancel()
            self.calls.close()  # the last writes (queued failed attempts included) are done before returning
            if not counted_resent and self.progress.timeouts_resent:
                # A stopped run: its re-sent timeouts are kept for the next run's notice. One short
                # write after the database thread has finished (nothing else writes now).
                try:
                    note_resent(self.store, self.progress.timeouts_resent)
                except StoreError as exc:
                    log.error("the re-sent timeouts of this run could not be stored: %s", exc)
            self.progress.finished = True
            self._publish()
            log.info(
                "pipeline run of %s stopped after %.1f s: %s",
                self.session.name,
                self.progress.elapsed,
                ", ".join(
                    f"{name} {s.done}/{s.planned} done, {s.failed} failed" for name, s in self.progress.stages.items()
                ),
            )
        return RunOutcome(
            self.progress,
            outcomes,
            interrupted,
            resent_earlier=resent_earlier,
            batches_pending=batches,
            requests_pending=requests,
        )


def run_session(study: Study, store: Store, sink: ProgressSink | None = None) -> RunOutcome:
    """Run a study to completion in a fresh event loop (the CLI entry)."""
    return asyncio.run(Pipeline(study, store, sink).run())
