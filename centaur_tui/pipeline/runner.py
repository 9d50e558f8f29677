"""Provides Pipeline: every call of a session planned as a content-addressed key, sent once, stored.

The run is a dataflow, not a sequence of stage barriers: each tournament (run, task, mode)
awaits its own outputs and then judges its comparisons, while the gateway bounds how many
calls are in flight. Concurrency therefore stays full until the very last calls, which the
wall-time benchmark (bench/pipeline.py) depends on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from centaur_tui.domain.errors import ProviderError
from centaur_tui.domain.judgment import InvalidReply, parse_judge_reply, winner_candidate
from centaur_tui.domain.plan import (
    MODES,
    Comparison,
    Mode,
    assistance_id,
    call_key_of,
    canonical_json,
    candidates_for,
    comparisons,
    eligible_judges,
    output_id,
    presented_orders,
    seed_for,
    summarize,
)
from centaur_tui.domain.prompts import (
    assistance_messages,
    automation_messages,
    judge_messages,
    reask_messages,
    worker_messages,
)
from centaur_tui.domain.records import (
    AssistanceRecord,
    CallFailure,
    CallRecord,
    ComparisonRecord,
    JudgmentRecord,
    OutputRecord,
    ScoreRecord,
)
from centaur_tui.domain.session import PLAIN, Endpoint, JudgeSpec
from centaur_tui.domain.study import Study
from centaur_tui.llm import CallFailed, CallRequest, FatalProviderError, Gateway, make_world, supports_json_mode
from centaur_tui.pipeline.progress import Progress, ProgressSink
from centaur_tui.store import Store

log = logging.getLogger(__name__)


@dataclass
class RunOutcome:
    """What a finished (or stopped) run reports."""

    progress: Progress
    missing_outputs: int
    unjudged: int

    @property
    def complete(self) -> bool:
        return self.missing_outputs == 0 and self.unjudged == 0


class Pipeline:
    """Runs a study against its store; safe to stop at any moment and to run again.

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
        self._gateway = gateway
        self._world_id: str | None = None
        self._json_mode: dict[str, bool] = {}
        self._prices_registered = False

    # -- plumbing ------------------------------------------------------------------------------

    def _record_failure(self, failure: CallFailure) -> None:
        self.store.record_failure(failure)
        if not failure.final:
            self.progress.retries += 1
        self.progress.last_error = f"{failure.model}: {failure.error_type}: {failure.message}"

    async def _call(
        self, stage: str, endpoint: Endpoint, messages: list[dict[str, str]], params: dict[str, Any], sample: str
    ) -> tuple[str, str]:
        """Return (key, response text): from the store if answered before, else from the provider."""
        messages_json, params_json = canonical_json(messages), canonical_json(params)
        key = call_key_of(endpoint.model, messages_json, params_json, sample)
        stored = self.store.call_response(key) if key in self._answered else None
        if stored is not None:
            return key, stored
        extra: dict[str, Any] = {}
        if endpoint.simulated:
            # The simulated provider is seeded by the call key; a real model samples on its own.
            extra = {"seed": seed_for(key)}
        request = CallRequest(
            key=key, stage=stage, endpoint=endpoint, messages=messages, params={**params, **extra}, sample=sample,
            metadata={"simulation": self._world_id} if endpoint.simulated else {},
        )
        try:
            result = await self._ensure_gateway().complete(request)
        except FatalProviderError:
            raise
        except CallFailed:
            self.progress.stages[stage].failed += 1
            raise
        st = self.progress.stages[stage]
        st.sent += 1
        st.prompt_tokens += result.prompt_tokens or 0
        st.completion_tokens += result.completion_tokens or 0
        if result.cost is None:
            st.cost_known = False
        else:
            st.cost += result.cost
        self.store.record_call(
            CallRecord(
                key=key, stage=stage, model=endpoint.model, sample=sample, messages_json=messages_json,
                params_json=params_json, response=result.text, prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens, cost=result.cost, latency_s=result.latency_s,
                attempts=result.attempts, simulated=endpoint.simulated,
            )
        )
        self._answered.add(key)
        return key, result.text

    def _ensure_gateway(self) -> Gateway:
        # Built on the first call that is not stored yet: resuming a finished session then
        # never imports litellm (about 3 s).
        if self._gateway is None:
            self._gateway = Gateway(self.session.limits, on_failure=self._record_failure)
        if not self._prices_registered:
            self._gateway.register_prices([*self.session.models, self.session.worker, *self.session.judges])
            self._prices_registered = True
        return self._gateway

    def _gen_params(self) -> dict[str, Any]:
        g = self.session.generation
        return {"temperature": g.temperature, "max_tokens": g.max_tokens}

    def _judge_params(self, judge: JudgeSpec) -> dict[str, Any]:
        j = self.session.judging
        params: dict[str, Any] = {"temperature": j.temperature, "max_tokens": j.max_tokens}
        if j.structured_output:
            if judge.model not in self._json_mode:
                self._json_mode[judge.model] = supports_json_mode(judge)
            if self._json_mode[judge.model]:
                params["response_format"] = {"type": "json_object"}
        return params

    # -- generation ----------------------------------------------------------------------------

    async def _guarded(self, make: Callable[[], Awaitable[OutputRecord]]) -> OutputRecord | None:
        try:
            return await make()
        except FatalProviderError:
            raise
        except CallFailed as exc:  # counted in its stage by _call; the output stays missing
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
        key, text = await self._call("automation", model, messages, self._gen_params(), f"automation:run{run}")
        record = OutputRecord(oid, run, task_id, "automation", name, name, text, None, key)
        self.store.save_output(record)
        self._outputs[oid] = record
        st.done += 1
        return record

    async def _assistance(self, run: int, task_id: str, name: str) -> AssistanceRecord:
        aid = assistance_id(run, task_id, name)
        st = self.progress.stages["assistance"]
        if aid in self._assistance_texts:
            st.done += 1
            st.cached += 1
            return self._assistance_texts[aid]
        model = self.session.model(name)
        messages = assistance_messages(self.study.universal, self.study.task(task_id))
        key, text = await self._call("assistance", model, messages, self._gen_params(), f"assistance:run{run}")
        record = AssistanceRecord(aid, run, task_id, name, text, key)
        self.store.save_assistance(record)
        self._assistance_texts[aid] = record
        st.done += 1
        return record

    async def _worker_output(self, run: int, task_id: str, candidate: str) -> OutputRecord:
        worker = self.session.worker
        oid = output_id(run, task_id, "augmentation", candidate, worker.name)
        st = self.progress.stages["worker"]
        if oid in self._outputs:
            if candidate != PLAIN:
                self.progress.stages["assistance"].done += 1
                self.progress.stages["assistance"].cached += 1
            st.done += 1
            st.cached += 1
            return self._outputs[oid]
        guidance = None if candidate == PLAIN else await self._assistance(run, task_id, candidate)
        messages = worker_messages(self.study.universal, self.study.task(task_id), guidance.text if guidance else None)
        key, text = await self._call("worker", worker, messages, self._gen_params(), f"worker:run{run}")
        record = OutputRecord(
            oid, run, task_id, "augmentation", candidate, worker.name, text, guidance.id if guidance else None, key
        )
        self.store.save_output(record)
        self._outputs[oid] = record
        st.done += 1
        return record

    # -- judging -------------------------------------------------------------------------------

    async def _judge(self, comp: Comparison, texts: dict[str, str], judge: JudgeSpec, presentation: int,
                     order: tuple[str, str]) -> None:
        st = self.progress.stages["judging"]
        if (comp.id, judge.name, presentation) in self._judged:
            st.done += 1
            st.cached += 1
            return
        rubric = self.study.rubric(comp.task)
        allow_ties = self.session.judging.allow_ties
        first, second = order
        messages = judge_messages(
            self.study.universal, self.study.task(comp.task), rubric, texts[first], texts[second], allow_ties
        )
        params = self._judge_params(judge)
        verdict, reason, key, attempts = None, None, None, 0
        for attempt in range(1 + self.session.judging.max_invalid_retries):
            attempts = attempt + 1
            key, reply = await self._call("judging", judge, messages, params, f"judging:run{comp.run}:attempt{attempt}")
            try:
                verdict = parse_judge_reply(reply, rubric, allow_ties)
                break
            except InvalidReply as exc:
                reason = exc.reason
                messages = reask_messages(messages, reply, exc.reason)
        if verdict is None:
            st.invalid += 1
            record = JudgmentRecord(
                comparison_id=comp.id, judge=judge.name, judge_kind="llm", judge_family=judge.family,
                presentation=presentation, option1=first, option2=second, winner=None, option1_mean=None,
                option2_mean=None, valid=False, invalid_reason=f"invalid after {attempts} attempt(s): {reason}",
                rationale=None, call_key=key, attempts=attempts,
            )
        else:
            scores = tuple(
                ScoreRecord(candidate, dim, rubric.kind(dim), score)
                for candidate, values in ((first, verdict.scores_1), (second, verdict.scores_2))
                for dim, score in values.items()
            )
            record = JudgmentRecord(
                comparison_id=comp.id, judge=judge.name, judge_kind="llm", judge_family=judge.family,
                presentation=presentation, option1=first, option2=second,
                winner=winner_candidate(verdict.winner, first, second), option1_mean=verdict.stated_mean_1,
                option2_mean=verdict.stated_mean_2, valid=True, invalid_reason=None, rationale=verdict.rationale,
                call_key=key, attempts=attempts, scores=scores,
            )
        self.store.save_judgment(record)
        self._judged.add((comp.id, judge.name, presentation))
        st.done += 1

    async def _guard_judge(self, *args: Any) -> None:
        try:
            await self._judge(*args)
        except FatalProviderError:
            raise
        except CallFailed as exc:  # counted by _call; the judgment is made on the next run
            self.progress.last_error = str(exc)

    async def _tournament(self, run: int, task_id: str, mode: Mode) -> None:
        names = candidates_for(self.session, mode)
        if not names:
            return
        if mode == "automation":
            makers = [lambda n=n: self._automation_output(run, task_id, n) for n in names]
        else:
            makers = [lambda n=n: self._worker_output(run, task_id, n) for n in names]
        results = await asyncio.gather(*(self._guarded(m) for m in makers))
        texts = {r.candidate: r.text for r in results if r is not None}
        outputs = {r.candidate: r.id for r in results if r is not None}
        comps = [c for c in comparisons(self.session, run, task_id, mode)]
        ready = [c for c in comps if c.candidate_a in outputs and c.candidate_b in outputs]
        self._missing_outputs += len(names) - len(outputs)
        self.store.save_comparisons(
            [
                ComparisonRecord(c.id, c.run, c.task, c.mode, c.candidate_a, c.candidate_b,
                                 outputs[c.candidate_a], outputs[c.candidate_b])
                for c in ready if c.id not in self._comparisons
            ]
        )
        jobs = []
        for comp in comps:
            for judge in eligible_judges(self.session, comp):
                for presentation, order in presented_orders(self.session, comp, judge.name):
                    if comp in ready:
                        jobs.append(self._guard_judge(comp, texts, judge, presentation, order))
                    else:
                        self._unjudged += 1
        await asyncio.gather(*jobs)

    # -- the run -------------------------------------------------------------------------------

    def _load_state(self) -> None:
        self._answered = self.store.answered_keys()
        self._outputs = self.store.outputs()
        self._assistance_texts = self.store.assistance_texts()
        self._judged = self.store.judged_slots()
        self._comparisons = set(self.store.comparisons())
        self._missing_outputs = 0
        self._unjudged = 0

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            self._publish()

    def _publish(self) -> None:
        if self._gateway is not None:
            self.progress.in_flight = self._gateway.in_flight
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
        self._load_state()
        log.info("pipeline run of %s started: %d call(s) and %d judgment(s) planned", self.session.name,
                 sum(summary.calls.values()), summary.total_judgments)
        self.store.set_meta(
            {
                "session": self.session.name,
                "seed": str(self.session.seed),
                "simulated": "true" if self.session.simulated else "false",
                "session_file": str(self.study.session_file),
            }
        )
        if self.session.simulated:
            self._world_id, _ = make_world(self.study)
        ticker = asyncio.create_task(self._ticker())
        tournaments = [
            asyncio.create_task(self._tournament(run, task_id, mode))
            for run in range(1, self.session.runs + 1)
            for task_id in self.session.tasks
            for mode in MODES
        ]
        try:
            await asyncio.gather(*tournaments)
        except FatalProviderError as exc:
            for t in tournaments:
                t.cancel()
            await asyncio.gather(*tournaments, return_exceptions=True)
            raise ProviderError(
                f"{exc} - every call of this model would fail; check its model string and key, then run again "
                "(answered calls are kept)"
            ) from None
        finally:
            ticker.cancel()
            self.progress.finished = True
            self._publish()
            log.info("pipeline run of %s stopped after %.1f s: %s", self.session.name, self.progress.elapsed,
                     ", ".join(f"{name} {s.done}/{s.planned} done, {s.failed} failed" for name, s in self.progress.stages.items()))
        return RunOutcome(self.progress, self._missing_outputs, self._unjudged)


def run_session(study: Study, store: Store, sink: ProgressSink | None = None) -> RunOutcome:
    """Run a study to completion in a fresh event loop (the CLI entry)."""
    return asyncio.run(Pipeline(study, store, sink).run())
