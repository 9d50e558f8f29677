"""Provides Judging: LLM judges' verdicts on comparisons, asked, validated, re-asked and stored.

One component for every tournament that is judged: the pipeline's automation and
augmentation tournaments and the human-worker arm's (`pipeline/human_arm.py`). It plans the
judge calls of a comparison (eligible judges, leave-family-out; one or both presentation
orders), sends them through `Calls`, validates each reply and re-asks up to
`judging.max_invalid_retries` times, and stores a valid judgment with its rubric scores or an
invalid one with its reason. A judgment already stored (same comparison, judge, presentation)
is counted as cached and never asked again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable
from typing import Any

from centaur_tui.domain.judgment import InvalidReply, parse_judge_reply, reask_max_tokens, winner_candidate
from centaur_tui.domain.plan import Comparison, eligible_judges, presented_orders
from centaur_tui.domain.prompts import judge_cache_prefix, judge_messages, reask_all_messages, reask_messages
from centaur_tui.domain.records import ComparisonRecord, JudgmentRecord, ScoreRecord
from centaur_tui.domain.session import JudgeSpec
from centaur_tui.domain.study import Study
from centaur_tui.llm import CallFailed, FatalProviderError, supports_json_mode, supports_seed
from centaur_tui.pipeline.batching import BatchPending
from centaur_tui.pipeline.budget import BudgetExceeded
from centaur_tui.pipeline.calls import Calls
from centaur_tui.pipeline.progress import Progress
from centaur_tui.store import Store, judgment_item

STAGE = "judging"


class Judging:
    """Judges comparisons with the session's LLM judges and stores every verdict.

    Args:
        study: The session (judges, judging settings, rubrics).
        store: The session database.
        calls: Where the judge calls go (shared with the generation stages of a run).
        progress: The counters; judging updates its `judging` stage.
    """

    def __init__(self, study: Study, store: Store, calls: Calls, progress: Progress) -> None:
        self.study = study
        self.session = study.session
        self.store = store
        self.calls = calls
        self.progress = progress
        self._json_mode: dict[str, bool] = {}
        self._seeds: dict[str, bool] = {}
        self.judged: set[tuple[str, str, int]] = set()
        self.comparisons: set[str] = set()
        self.not_sent: set[object] = set()
        """(comparison id, judge, presentation) of judgments whose call the budget kept from being sent."""
        self._prefix: dict[str, int] = {}

    def load(self) -> None:
        """Read which judgments and comparisons are stored already."""
        self.judged = self.store.judged_slots()
        self.comparisons = set(self.store.comparisons())

    def save_comparisons(self, records: list[ComparisonRecord]) -> None:
        """Store the comparisons not stored yet (before their judgments, which refer to them)."""
        new = [r for r in records if r.id not in self.comparisons]
        self.store.save_comparisons(new)
        self.comparisons.update(r.id for r in new)

    def slots(self, comp: Comparison) -> list[tuple[JudgeSpec, int, tuple[str, str]]]:
        """Every (judge, presentation, order) the comparison is judged in: eligible judges x presented orders."""
        return [
            (judge, presentation, order)
            for judge in eligible_judges(self.session, comp)
            for presentation, order in presented_orders(self.session, comp, judge.name)
        ]

    def jobs(
        self, comp: Comparison, texts: dict[str, str], cut_off: set[str] | frozenset[str] = frozenset()
    ) -> list[Awaitable[None]]:
        """One guarded judging job per slot of a comparison; `texts` maps its two candidates to output texts,
        `cut_off` names the candidates whose text was cut off at max_tokens (the judge is told)."""
        return [
            self.guarded(comp, texts, judge, presentation, order, cut_off)
            for judge, presentation, order in self.slots(comp)
        ]

    def reask_params(self, judge: JudgeSpec, params: dict[str, Any], slot: str, attempt: int) -> dict[str, Any]:
        """The params of re-ask `attempt` (1, 2, ...): what can vary varies, so a deterministic judge can answer
        otherwise. The temperature rises by `reask_temperature_step` per re-ask (at most 2.0), and a provider that
        takes a seed gets a new one; the stored call's params say what was changed."""
        j = self.session.judging
        varied = dict(params)
        if j.reask_temperature_step > 0:
            varied["temperature"] = round(min(2.0, j.temperature + j.reask_temperature_step * attempt), 4)
        if judge.model not in self._seeds:
            self._seeds[judge.model] = supports_seed(judge)
        if self._seeds[judge.model]:
            digest = hashlib.sha256(f"{slot}|reask{attempt}".encode()).digest()
            varied["seed"] = int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
        return varied

    def judge_params(self, judge: JudgeSpec) -> dict[str, Any]:
        j = self.session.judging
        params: dict[str, Any] = {"temperature": j.temperature, "max_tokens": j.max_tokens}
        if j.structured_output:
            if judge.model not in self._json_mode:
                self._json_mode[judge.model] = supports_json_mode(judge)
            if self._json_mode[judge.model]:
                params["response_format"] = {"type": "json_object"}
        return params

    async def judge(
        self,
        comp: Comparison,
        texts: dict[str, str],
        judge: JudgeSpec,
        presentation: int,
        order: tuple[str, str],
        cut_off: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        """Ask one judge for one presentation of a comparison (re-asking invalid replies) and store the judgment.

        Raises:
            CallFailed: a judge call failed every attempt; nothing is stored (judged on the next run).
            FatalProviderError: the provider refuses every call of the judge's model.
        """
        st = self.progress.stages[STAGE]
        if (comp.id, judge.name, presentation) in self.judged:
            st.done += 1
            st.cached += 1
            return
        rubric = self.study.rubric(comp.task)
        allow_ties = self.session.judging.allow_ties
        first, second = order
        messages = judge_messages(
            self.study.universal,
            self.study.task(comp.task),
            rubric,
            texts[first],
            texts[second],
            allow_ties,
            (first in cut_off, second in cut_off),
        )
        params = self.judge_params(judge)
        base_params = params
        earlier: tuple[list[dict[str, str]], dict[str, Any]] | None = None  # the pre-issue-22 re-ask
        slot = judgment_item(comp.id, judge.name, presentation)
        changes: list[str] = []
        prefix = self._prefix.get(comp.task)
        if prefix is None:  # system, task and rubric: the same for every judge call of the task
            prefix = self._prefix[comp.task] = judge_cache_prefix(
                self.study.universal, self.study.task(comp.task), rubric, allow_ties
            )
        verdict, reason, key, attempts = None, None, None, 0
        for attempt in range(1 + self.session.judging.max_invalid_retries):
            attempts = attempt + 1
            try:
                key, reply, finish = await self.calls.call_reply(
                    STAGE, judge, messages, params, f"judging:run{comp.run}:attempt{attempt}", prefix, earlier
                )
            except BudgetExceeded:
                self.not_sent.add((comp.id, judge.name, presentation))
                raise
            try:
                verdict = parse_judge_reply(reply, rubric, allow_ties, finish, params.get("max_tokens"))
                break
            except InvalidReply as exc:
                reason = exc.reason
                if exc.truncated:  # the same limit would be paid for and cut off again
                    raised = reask_max_tokens(int(base_params["max_tokens"]), self.session.judging.reask_cap)
                    if raised is None:
                        break
                    base_params = {**base_params, "max_tokens": raised}
                old_messages = earlier[0] if earlier is not None else messages
                earlier = (reask_messages(old_messages, reply, exc.reason), base_params)
                messages = reask_all_messages(messages, reply, exc.problems)
                before, params = params, self.reask_params(judge, base_params, slot, attempt + 1)
                changes.append(_changed(before, params))
        if verdict is None:
            st.invalid += 1
            record = JudgmentRecord(
                comparison_id=comp.id,
                judge=judge.name,
                judge_kind="llm",
                judge_family=judge.family,
                presentation=presentation,
                option1=first,
                option2=second,
                winner=None,
                option1_mean=None,
                option2_mean=None,
                valid=False,
                invalid_reason=f"invalid after {attempts} attempt(s){_changes_text(changes[: attempts - 1])}: {reason}",
                rationale=None,
                call_key=key,
                attempts=attempts,
            )
        else:
            scores = tuple(
                ScoreRecord(candidate, dim, rubric.kind(dim), score)
                for candidate, values in ((first, verdict.scores_1), (second, verdict.scores_2))
                for dim, score in values.items()
            )
            record = JudgmentRecord(
                comparison_id=comp.id,
                judge=judge.name,
                judge_kind="llm",
                judge_family=judge.family,
                presentation=presentation,
                option1=first,
                option2=second,
                winner=winner_candidate(verdict.winner, first, second),
                option1_mean=verdict.stated_mean_1,
                option2_mean=verdict.stated_mean_2,
                valid=True,
                invalid_reason=None,
                rationale=verdict.rationale,
                call_key=key,
                attempts=attempts,
                scores=scores,
            )
        await self.calls.db(self.store.save_judgment, record)
        self.judged.add((comp.id, judge.name, presentation))
        st.done += 1

    async def guarded(
        self,
        comp: Comparison,
        texts: dict[str, str],
        judge: JudgeSpec,
        presentation: int,
        order: tuple[str, str],
        cut_off: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        """`judge`, with a failed call recorded as the last error instead of raised (the run goes on)."""
        try:
            await self.judge(comp, texts, judge, presentation, order, cut_off)
        except FatalProviderError:
            raise
        except CallFailed as exc:  # counted by Calls; the judgment is made on the next run
            self.progress.last_error = str(exc)
            if not isinstance(exc, (BatchPending, BudgetExceeded)):  # waiting, or never sent: not a failure
                self.calls.record_failed_item(judgment_item(comp.id, judge.name, presentation), STAGE, str(exc))


def _changed(before: dict[str, Any], after: dict[str, Any]) -> str:
    """What a re-ask changed in the params ("temperature 0.2, seed 12345"); "" when nothing."""
    parts = [f"{k} {after[k]}" for k in ("max_tokens", "temperature", "seed") if after.get(k) != before.get(k)]
    return ", ".join(parts)


def _changes_text(changes: list[str]) -> str:
    said = [f"re-ask {i}: {c}" for i, c in enumerate(changes, 1) if c]
    return f" ({'; '.join(said)})" if said else ""
