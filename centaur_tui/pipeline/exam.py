"""Provides the judges' admission exam run: planted-flaw pairs from stored outputs, asked of each judge in both orders.

The pairs come from `domain.exam.exam_plan` (seeded, stored with what was planted where). Each
LLM judge of the panel judges each planted pair twice, the intact copy first (presentation 1)
and second (presentation 2), with the judge prompt every tournament uses, through the run's
`Calls`: content-addressed, answered from the store when asked before, so a stopped exam
resumes and a finished one costs nothing to re-run. An invalid reply is re-asked like a
tournament judgment (`Judging.reask_params`); a reply that stays invalid is stored as invalid,
a call that fails every attempt as failed (asked again on the next run). Nothing is dropped:
every (pair, judge, order) ends answered, invalid or failed, or is counted as not sent.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from centaur_tui.domain.exam import ExamPair, exam_item, exam_plan
from centaur_tui.domain.judgment import InvalidReply, parse_judge_reply, reask_max_tokens
from centaur_tui.domain.prompts import judge_cache_prefix, judge_messages, reask_all_messages
from centaur_tui.domain.session import JudgeSpec
from centaur_tui.domain.study import Study
from centaur_tui.llm import CallFailed, FatalProviderError, Gateway
from centaur_tui.pipeline.budget import BudgetExceeded
from centaur_tui.pipeline.calls import Calls
from centaur_tui.pipeline.estimate import EXAM_STAGE
from centaur_tui.pipeline.judging import Judging
from centaur_tui.pipeline.progress import Progress, StageProgress
from centaur_tui.store import (
    ExamVerdictRow,
    Store,
    exam_done,
    exam_sources,
    save_exam_pairs,
    save_exam_verdict,
)

STAGE = EXAM_STAGE
"""The stage name of the exam's calls (in `calls.stage`; `centaur check` prices them under it)."""


@dataclass
class ExamRunOutcome:
    """What one exam run did: pairs planned and planted, and the questions per outcome."""

    seed: str
    pairs: int
    planted: int
    questions: int
    counts: dict[str, int] = field(default_factory=dict)
    """answered, invalid, failed, cached, not_sent."""


def exam_seed(study: Study, seed: int | None) -> str:
    """The exam's seed as stored: the given one, else the session's."""
    return str(study.session.seed if seed is None else seed)


class Exam:
    """Builds and runs a session's admission exam.

    Args:
        study: The session (its judges, judging settings and tasks).
        store: The session database (it must hold the outputs to plant flaws in).
        gateway: Injected for tests; built from the session limits otherwise.
    """

    def __init__(self, study: Study, store: Store, gateway: Gateway | None = None) -> None:
        self.study = study
        self.store = store
        self.progress = Progress(session=study.session.name, simulated=study.session.simulated)
        self.progress.stages.setdefault(STAGE, StageProgress())
        self.calls = Calls(study, store, self.progress, gateway)
        self.judging = Judging(study, store, self.calls, self.progress)
        self.texts: dict[str, str] = {}
        self.counts = {"answered": 0, "invalid": 0, "failed": 0, "cached": 0, "not_sent": 0}

    def plan(self, per_kind: int, seed: str) -> list[ExamPair]:
        """The pairs of the exam (stored now if new): per task and flaw kind, `per_kind` slots."""
        sources = exam_sources(self.store)
        self.texts = {s.output_id: s.text for s in sources}
        pairs = exam_plan(dict(self.study.tasks), sources, per_kind, seed)
        save_exam_pairs(self.store, seed, pairs)
        return pairs

    async def run(self, per_kind: int, seed: str) -> ExamRunOutcome:
        """Plan the exam and ask every judge every planted pair in both orders (stored ones are not asked again).

        Raises:
            FatalProviderError: the provider refuses every call of a judge's model.
        """
        try:
            pairs = await self.calls.db(self.plan, per_kind, seed)
            await self.calls.db_read(self.calls.load)
            done = await self.calls.db_read(exam_done, self.store)
            planted = [p for p in pairs if p.applicable]
            judges = list(self.study.session.judges)
            jobs = [
                self.ask(pair, judge, presentation, done)
                for pair in planted
                for judge in judges
                for presentation in (1, 2)
            ]
            self.progress.stages[STAGE].planned = len(jobs)
            await asyncio.gather(*jobs)
        finally:
            self.calls.close()
        return ExamRunOutcome(seed, len(pairs), len(planted), len(planted) * len(judges) * 2, dict(self.counts))

    async def ask(self, pair: ExamPair, judge: JudgeSpec, presentation: int, done: set[tuple[str, str, int]]) -> None:
        """One exam question: a judge, a pair, an order; the verdict is stored whatever happens."""
        st = self.progress.stages[STAGE]
        if (pair.id, judge.name, presentation) in done:
            self.counts["cached"] += 1
            st.cached += 1
            st.done += 1
            return
        try:
            row = await self._judge(pair, judge, presentation)
        except FatalProviderError:
            raise
        except BudgetExceeded:
            self.counts["not_sent"] += 1
            return
        except CallFailed as exc:
            row = ExamVerdictRow(pair.id, judge.name, judge.model, presentation, "failed", None, str(exc), None, 0)
        self.counts[row.status] += 1
        await self.calls.db(save_exam_verdict, self.store, row)
        st.done += 1

    async def _judge(self, pair: ExamPair, judge: JudgeSpec, presentation: int) -> ExamVerdictRow:
        assert pair.output_id is not None and pair.flawed is not None
        intact = self.texts[pair.output_id]
        texts = (intact, pair.flawed) if presentation == 1 else (pair.flawed, intact)
        task = self.study.task(pair.task)
        rubric = self.study.rubric(pair.task)
        allow_ties = self.study.session.judging.allow_ties
        messages = judge_messages(self.study.universal, task, rubric, texts[0], texts[1], allow_ties)
        prefix = judge_cache_prefix(self.study.universal, task, rubric, allow_ties)
        params = base = self.judging.judge_params(judge)
        slot = exam_item(pair.id, judge.name, presentation)
        reason, key, attempts = "no reply", None, 0
        for attempt in range(1 + self.study.session.judging.max_invalid_retries):
            attempts = attempt + 1
            key, reply, finish = await self.calls.call_reply(
                STAGE, judge, messages, params, f"exam:{pair.id}:p{presentation}:attempt{attempt}", prefix
            )
            try:
                verdict = parse_judge_reply(reply, rubric, allow_ties, finish, params.get("max_tokens"))
            except InvalidReply as exc:
                reason = exc.reason
                if exc.truncated:
                    raised = reask_max_tokens(int(base["max_tokens"]), self.study.session.judging.reask_cap)
                    if raised is None:
                        break
                    base = {**base, "max_tokens": raised}
                messages = reask_all_messages(messages, reply, exc.problems)
                params = self.judging.reask_params(judge, base, slot, attempt + 1)
                continue
            if verdict.winner == "tie":
                picked = "tie"
            else:
                intact_first = presentation == 1
                picked = "intact" if (verdict.winner == "option_1") == intact_first else "flawed"
            return ExamVerdictRow(
                pair.id, judge.name, judge.model, presentation, "answered", picked, None, key, attempts
            )
        self.progress.stages[STAGE].invalid += 1
        return ExamVerdictRow(
            pair.id,
            judge.name,
            judge.model,
            presentation,
            "invalid",
            None,
            f"invalid after {attempts} attempt(s): {reason}",
            key,
            attempts,
        )
