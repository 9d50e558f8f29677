"""Provides the tournaments of the human-worker arm: expert deliverables judged by the LLM judges.

For each task, every pair of submitted expert deliverables whose conditions differ is one
comparison (never two outputs of the same condition). Comparisons are stored with mode
`HUMAN_MODE` ("human_augmentation") and candidates = the two conditions, so the report
ranks the conditions ("which assistant helps human workers most") in a tournament of its own,
apart from the worker-model tournaments; `Comparison.worker` holds the two expert ids
("expert_a|expert_b", in candidate order), which makes comparison ids distinct when several
experts wrote under the same pair of conditions. Judging goes through the pipeline's
`Judging` component unchanged: the same prompts, re-asks, invalid-reply records, call store
and resume, with leave-family-out by each output's assistant family.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from itertools import combinations

from centaur_tui.domain.plan import Comparison
from centaur_tui.domain.records import ComparisonRecord
from centaur_tui.domain.seat import HumanOutput
from centaur_tui.domain.study import Study
from centaur_tui.llm import Gateway
from centaur_tui.pipeline.calls import Calls
from centaur_tui.pipeline.judging import Judging
from centaur_tui.pipeline.progress import Progress
from centaur_tui.store import Store, WorkStore

HUMAN_MODE = "human_augmentation"
"""Mode of the human-worker arm's comparisons (its outputs are stored with mode 'augmentation')."""


def human_comparisons(outputs: list[HumanOutput]) -> list[tuple[Comparison, HumanOutput, HumanOutput]]:
    """Round robin per task over outputs of different conditions; (comparison, output_a, output_b)."""
    by_task: dict[str, list[HumanOutput]] = {}
    for o in outputs:
        by_task.setdefault(o.task, []).append(o)
    out = []
    for task in sorted(by_task):
        items = sorted(by_task[task], key=lambda o: (o.condition, o.expert))
        for x, y in combinations(items, 2):
            if x.condition == y.condition:
                continue
            a, b = (x, y) if x.condition < y.condition else (y, x)
            comp = Comparison(a.run, task, HUMAN_MODE, a.condition, b.condition, worker=f"{a.expert}|{b.expert}")  # type: ignore[arg-type]
            out.append((comp, a, b))
    return out


@dataclass
class HumanArmOutcome:
    comparisons: int
    judgments_planned: int
    judgments_done: int
    without_judge: int


class HumanArmJudging:
    """Judges the human-worker arm with the session's LLM judges through the pipeline's `Judging` component.

    Args:
        study: The session (with `[human_workers]`).
        store: The session database holding the submitted deliverables.
        gateway: Injected for tests; built from the session limits otherwise.
    """

    def __init__(self, study: Study, store: Store, gateway: Gateway | None = None) -> None:
        self.study = study
        self.store = store
        self.progress = Progress(session=study.session.name, simulated=study.session.simulated)
        self.calls = Calls(study, store, self.progress, gateway)
        self.judging = Judging(study, store, self.calls, self.progress)

    async def judge_human_arm(self) -> HumanArmOutcome:
        try:
            return await self._judge_all()
        finally:
            self.calls.close()  # every judgment and failed attempt is written before returning

    async def _judge_all(self) -> HumanArmOutcome:
        work = WorkStore(self.store)
        outputs = await self.calls.db_read(work.expert_outputs)  # database work stays off the event loop
        await self.calls.db_read(self.calls.load)
        await self.calls.db_read(self.judging.load)
        planned = human_comparisons(outputs)
        await self.calls.db(
            self.judging.save_comparisons,
            [
                ComparisonRecord(c.id, c.run, c.task, c.mode, c.candidate_a, c.candidate_b, a.id, b.id)
                for c, a, b in planned
            ],
        )
        jobs: list[Awaitable[None]] = []
        without = 0
        for comp, a, b in planned:
            mine = self.judging.jobs(comp, {a.condition: a.text, b.condition: b.text})
            without += not mine
            jobs.extend(mine)
        self.progress.stages["judging"].planned = len(jobs)
        await asyncio.gather(*jobs)
        st = self.progress.stages["judging"]
        return HumanArmOutcome(len(planned), len(jobs), st.done, without)


def judge_human_arm(study: Study, store: Store) -> HumanArmOutcome:
    """Judge every human-arm comparison not judged yet, in a fresh event loop (the CLI entry)."""
    return asyncio.run(HumanArmJudging(study, store).judge_human_arm())
