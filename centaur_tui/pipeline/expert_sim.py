"""Provides simulated expert judges, for sizing an expert study before recruiting (`centaur plan`) and for tests.

A simulated expert is the simulated provider's judge (`llm.simulation.judge_reply`) with its
own knobs (score noise, position bias): it reads only the two output texts, in the order the
expert would see them, and scores every rubric dimension. Comparisons are handed out by the
real assignment code (`domain.assignment.plan_assignments`, strategy `overlap`), so the
simulated design is the one `centaur assign` would make.
"""

from __future__ import annotations

import asyncio
import math
import random
import re
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from centaur_tui.domain.assignment import ExistingAssignment, PlannedAssignment, PoolComparison, plan_assignments
from centaur_tui.domain.plan import summarize
from centaur_tui.domain.records import ComparisonRecord, JudgmentRecord, JudgmentRow, ScoreRecord
from centaur_tui.domain.session import ExpertSpec, Faults, JudgeSimulation, ModelSpec, WorkerSpec
from centaur_tui.domain.study import Study
from centaur_tui.llm.simulation import judge_reply
from centaur_tui.store import Store


def simulated_experts(n: int) -> list[ExpertSpec]:
    """n experts named sim_expert_1 ... (ids are slugs, as the session file requires)."""
    return [ExpertSpec(id=f"sim_expert_{i}", name=f"Simulated expert {i}") for i in range(1, n + 1)]


def plan_expert_study(
    comparisons: Mapping[str, ComparisonRecord],
    experts: list[ExpertSpec],
    per_expert: int,
    overlap: int,
    seed: int,
) -> list[tuple[str, PlannedAssignment]]:
    """Assign comparisons to experts as `centaur assign` would, one expert after the other.

    Args:
        comparisons: The session's stored comparisons.
        experts: Who judges.
        per_expert: Places per expert (M).
        overlap: Experts per comparison (K); 1 gives every expert comparisons of its own
            (strategy `stratified`), K >= 2 the `overlap` strategy.
        seed: Seed of the assignment (vary it across replicates).

    Returns:
        (expert id, planned place) in assignment order.
    """
    pool = [
        PoolComparison(c.id, c.run, c.task, c.mode, c.candidate_a, c.candidate_b)
        for c in sorted(comparisons.values(), key=lambda c: c.id)
    ]
    existing: list[ExistingAssignment] = []
    out: list[tuple[str, PlannedAssignment]] = []
    strategy = "overlap" if overlap >= 2 else "stratified"
    for expert in experts:
        planned = plan_assignments(pool, expert, existing, per_expert, strategy, seed, overlap=max(overlap, 2))
        for position, p in enumerate(planned, start=len(existing) + 1):
            existing.append(ExistingAssignment(expert.id, p.comparison_id, p.presentation, p.flipped, False, position))
            out.append((expert.id, p))
    return out


def simulate_expert_judgments(
    study: Study,
    comparisons: Mapping[str, ComparisonRecord],
    texts: Mapping[str, tuple[str, str]],
    assignments: Iterable[tuple[str, PlannedAssignment]],
    knobs: JudgeSimulation,
    seed: int = 0,
) -> list[JudgmentRecord]:
    """Judge assigned comparisons with simulated experts.

    Each verdict is seeded by (seed, expert, comparison, presentation), so a replicate is
    reproducible and experts judge independently.

    Args:
        study: The session (tasks, universal rubric, allow_ties).
        comparisons: The session's comparisons.
        texts: (text of candidate_a, text of candidate_b) per comparison id.
        assignments: (expert id, place) pairs, e.g. from `plan_expert_study`.
        knobs: The simulated experts' noise, position bias and tie margin.
        seed: Seed of the replicate.

    Returns:
        Expert judgment records (judge_kind "expert"), options in presented order, with scores.
    """
    allow_ties = study.session.judging.allow_ties
    records = []
    for expert, place in assignments:
        comp = comparisons[place.comparison_id]
        text_a, text_b = texts[comp.id]
        first, second = (comp.candidate_b, comp.candidate_a) if place.flipped else (comp.candidate_a, comp.candidate_b)
        text_1, text_2 = (text_b, text_a) if place.flipped else (text_a, text_b)
        rng = random.Random(f"{seed}|{expert}|{comp.id}|{place.presentation}")
        task = study.task(comp.task)
        reply = judge_reply(task, study.universal, knobs, text_1, text_2, allow_ties, rng)
        rubric = study.rubric(comp.task)
        scores = tuple(
            ScoreRecord(candidate, dim, rubric.kind(dim), int(value))
            for candidate, option in ((first, "option_1"), (second, "option_2"))
            for dim, value in reply[option]["scores"].items()
        )
        winner = {"option_1": first, "option_2": second}.get(reply["winner"], "tie")
        records.append(
            JudgmentRecord(
                comparison_id=comp.id,
                judge=expert,
                judge_kind="expert",
                judge_family=None,
                presentation=place.presentation,
                option1=first,
                option2=second,
                winner=winner,
                option1_mean=reply["option_1"]["average"],
                option2_mean=reply["option_2"]["average"],
                valid=True,
                invalid_reason=None,
                rationale=reply["rationale"],
                call_key=None,
                attempts=1,
                scores=scores,
            )
        )
    return records


def judgment_rows(
    records: Iterable[JudgmentRecord], comparisons: Mapping[str, ComparisonRecord], first_id: int
) -> list[JudgmentRow]:
    """Records as rows like those of `Store.judgment_rows()`, with judgment ids from `first_id` on."""
    rows = []
    for i, r in enumerate(records, start=first_id):
        c = comparisons[r.comparison_id]
        rows.append(
            JudgmentRow(
                run=c.run,
                task=c.task,
                mode=c.mode,
                comparison_id=r.comparison_id,
                judge=r.judge,
                judge_kind=r.judge_kind,
                judge_family=r.judge_family,
                option1=r.option1,
                option2=r.option2,
                winner=r.winner,
                option1_mean=r.option1_mean,
                option2_mean=r.option2_mean,
                valid=r.valid,
                invalid_reason=r.invalid_reason,
                rationale=r.rationale,
                judgment_id=i,
                presentation=r.presentation,
                revision=r.revision,
                attempts=r.attempts,
                seconds=r.seconds,
            )
        )
    return rows


def runs_needed(study: Study, comparisons: int) -> int:
    """Fewest runs of the session whose tournaments hold at least `comparisons` comparisons (at most its runs)."""
    per_run = max(1, summarize(study.session).total_comparisons // study.session.runs)
    return max(1, min(study.session.runs, math.ceil(comparisons / per_run)))


def simulated_stand_in(study: Study, folder: Path, runs: int) -> Study:
    """A copy of the study on the simulated provider, with `runs` runs and its database in `folder`.

    Every model, the worker and every judge get a `simulated/` model string (their
    `simulation` knobs from the session file, defaults where unset); latency and transient
    errors are switched off (invalid replies are kept: they cost the judges verdicts).
    """
    s = study.session

    def sim(endpoint: Any, role: str) -> Any:
        if endpoint.simulated:
            return endpoint
        # Named after the role and name (unique per role), not the model string, which two entries may share.
        slug = re.sub(r"[^a-z0-9.]+", "-", endpoint.name.lower()).strip("-")
        return endpoint.model_copy(update={"model": f"simulated/{role}-{slug}", "api_base": None})

    # Imported candidates have no outputs to simulate from: each stands in as a simulated model of
    # its name and family (default skills), so the pilot study has every tournament of the session.
    stand_ins = tuple(
        ModelSpec(
            name=c.name,
            model="simulated/model-" + re.sub(r"[^a-z0-9.]+", "-", c.name.lower()).strip("-"),
            family=c.family,
            automation=c.automation,
            augmentation=c.augmentation,
            release_order=c.release_order,
        )
        for c in s.candidates
    )
    worker = s.worker
    if worker is None and any(m.augmentation for m in stand_ins):
        worker = WorkerSpec(name="worker", model="simulated/worker", family="worker")
    folder.mkdir(parents=True, exist_ok=True)
    session = s.model_copy(
        update={
            "runs": runs,
            "models": tuple(sim(m, "model") for m in s.models) + stand_ins,
            "candidates": (),
            "worker": sim(worker, "worker") if worker is not None else None,
            "judges": tuple(sim(j, "judge") for j in s.judges),
            "faults": Faults(invalid_reply_rate=s.faults.invalid_reply_rate),
        }
    )
    session_file = folder / study.session_file.name
    shutil.copyfile(study.session_file, session_file)  # for the record only; the Study below is what runs
    return Study(
        session=session,
        tasks=study.tasks,
        universal=study.universal,
        session_file=session_file,
        database=folder / f"{s.name}-plan.db",
    )


def run_stand_in(study: Study) -> None:
    """Run a (simulated) study to completion, silently, in a fresh event loop."""
    from centaur_tui.pipeline.runner import Pipeline

    with Store(study.database) as store:
        outcome = asyncio.run(Pipeline(study, store).run())
    if not outcome.complete:
        from centaur_tui.domain.errors import CentaurError

        raise CentaurError(
            f"the simulated stand-in run left {outcome.unjudged} judgment(s) undone: {outcome.progress.last_error}",
            title="Plan",
        )
