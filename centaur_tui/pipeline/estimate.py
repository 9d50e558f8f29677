"""Provides the cost estimate of a session: per stage and model, calls, tokens, USD and time, total and remaining.

The calls are the ones `Pipeline` would send (the same prompts, built by `domain.prompts`),
counted with litellm's tokenizer of each model (`llm.costing.TokenCounter`, cached by
paragraph: the paper's 17,150 calls took 0.4-0.7 s once litellm was imported, and 7.7 s with
all 1,400 outputs stored (22.7 M characters, each counted once per judge model), on the shared
2-core machine at load average 4-7). A
prompt that holds a text not written yet (a worker prompt's assistance text, a judge prompt's two
options) is counted without it plus that text's expected length: the observed mean of the
stage that writes it once calls are stored, else its `max_tokens` (an upper bound); each row
says which. Output tokens: the observed mean of the (stage, model) once calls are stored,
else `max_tokens`. Re-asks of invalid judge replies are not included.

Rows are per session entry, as the run sends and charges them (two entries on one model string
may have two prices and two servers). Time: each entry's speed is learned from its stored calls
(mean latency; tokens per second), else from the stored calls of other entries on the same model
string, else assumed (`ASSUMED_TOKENS_PER_S`), and the estimate names the entries it assumed for.

"Remaining" is what a run would still send (stored items cost nothing more); "total" is what the
database records as spent plus the remaining estimate. A model without a price says unknown,
never $0. Reads the database read-only without migrating it; sends nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from centaur_tui.domain.exam import FLAW_KINDS
from centaur_tui.domain.plan import (
    DIALOGUE_STAGE,
    assistance_id,
    candidate_output_id,
    candidates_for,
    comparisons,
    eligible_judges,
    mode_worker,
    output_id,
    presented_orders,
    tournament_modes,
)
from centaur_tui.domain.prompts import assistance_messages, automation_messages, judge_messages, worker_messages
from centaur_tui.domain.session import PLAIN, Endpoint, Session, WorkerSpec
from centaur_tui.domain.study import Study
from centaur_tui.llm import Price, TokenCounter, price_of
from centaur_tui.store import EstimateFacts, estimate_facts

EXAM_STAGE = "exam"
"""The admission exam's calls' stage (`pipeline/exam.py`): not one of the run's STAGES, priced apart."""

ASSUMED_TOKENS_PER_S = 50.0
"""Output speed assumed for the time estimate of a model with no stored call (tokens per second)."""
ASSUMED_FIRST_TOKEN_S = 1.0
"""Latency before the first output token assumed for such a model (seconds)."""


@dataclass
class EstimateRow:
    """One (stage, session entry) of a session: its calls, tokens and cost, total and remaining.

    Per entry, not per model string: two entries on one model string (two servers, two prices,
    two rate limits) are sent and charged apart by the run, so they are estimated apart.
    """

    stage: str
    model: str
    names: list[str]
    price: Price | None
    max_tokens: int
    endpoint: Endpoint | None = None
    """The session entry the row estimates (its limits bound the time)."""
    planned: int = 0
    remaining: int = 0
    input_remaining: int = 0
    output_remaining: int = 0
    worst_output_remaining: int = 0
    """Output tokens of the remaining calls at `max_tokens` (the budget reserves this)."""
    recorded_calls: int = 0
    recorded_input: int = 0
    recorded_output: int = 0
    recorded_cost: float = 0.0
    recorded_unpriced: int = 0
    observed_output: float | None = None
    """Mean completion tokens of the stored calls of this (stage, model), None before any."""
    observed_from: str | None = None
    """Whose calls `observed_output` is the mean of: None for this (stage, model)'s own."""
    latency_s: float | None = None
    """Mean latency of the entry's stored calls, None before any."""
    tokens_per_s: float | None = None
    """Output speed learned from stored calls (completion tokens per second of call time), None before any."""
    speed_from: str | None = None
    """Whose calls the speed was learned from: None for the entry's own, else "other entries on MODEL"."""
    pending_texts: int = 0
    """Remaining prompts holding a text not written yet, counted at its expected length."""
    pending_basis: set[str] = field(default_factory=set)
    """How those texts were counted: "observed mean" and/or "max_tokens"."""

    @property
    def cost_remaining(self) -> float | None:
        if self.remaining == 0:
            return 0.0
        if self.price is None:
            return None
        return self.input_remaining * self.price.input + self.output_remaining * self.price.output

    @property
    def worst_cost_remaining(self) -> float | None:
        if self.remaining == 0:
            return 0.0
        if self.price is None:
            return None
        return self.input_remaining * self.price.input + self.worst_output_remaining * self.price.output

    @property
    def cost_total(self) -> float | None:
        remaining = self.cost_remaining
        if remaining is None or self.recorded_unpriced:
            return None
        return self.recorded_cost + remaining

    @property
    def output_basis(self) -> str:
        if self.observed_output is None:
            return f"max_tokens ({self.max_tokens:,}; an upper bound)"
        if self.observed_from is not None:
            return f"observed mean {self.observed_output:,.0f} of {self.observed_from}"
        return f"observed mean {self.observed_output:,.0f} of {self.recorded_calls:,} call(s)"

    @property
    def speed_basis(self) -> str:
        """Where the row's time per call comes from."""
        if self.latency_s is not None and self.speed_from is None:
            speed = f", {self.tokens_per_s:,.1f} tokens/s" if self.tokens_per_s is not None else ""
            return f"speed: {self.recorded_calls:,} stored call(s), {self.latency_s:,.1f} s a call{speed}"
        if self.tokens_per_s is not None:
            return f"speed: {self.tokens_per_s:,.1f} tokens/s learned from {self.speed_from}"
        return f"speed: no stored call to learn from, assumed {ASSUMED_TOKENS_PER_S:g} tokens/s"

    @property
    def input_basis(self) -> str:
        if not self.pending_texts:
            return "exact prompts"
        basis = " and ".join(sorted(self.pending_basis))
        return f"{self.pending_texts:,} prompt(s) hold texts not written yet, counted at their {basis}"


@dataclass
class Estimate:
    """The estimate of a session: rows per stage and model, what is spent, the budget and the expected time."""

    session: str
    rows: list[EstimateRow]
    spent: float
    spent_unpriced: int
    budget: float | None
    time_s: float
    time_basis: str
    simulated: bool
    unanswered_usd: float = 0.0
    """USD estimated for requests billed without an answer (not in `spent`; counted against the budget)."""
    unanswered: int = 0

    @property
    def budget_left(self) -> float | None:
        """What the budget leaves: minus what was spent and what was billed without an answer."""
        if self.budget is None:
            return None
        return max(0.0, self.budget - self.spent - self.unanswered_usd)

    def _sum(self, attr: str) -> float | None:
        values = [getattr(r, attr) for r in self.rows]
        return None if any(v is None for v in values) else float(sum(values))

    @property
    def remaining_calls(self) -> int:
        return sum(r.remaining for r in self.rows)

    @property
    def planned_calls(self) -> int:
        return sum(r.planned for r in self.rows)

    @property
    def cost_remaining(self) -> float | None:
        return self._sum("cost_remaining")

    @property
    def worst_cost_remaining(self) -> float | None:
        return self._sum("worst_cost_remaining")

    @property
    def cost_total(self) -> float | None:
        return self._sum("cost_total")

    @property
    def unpriced_models(self) -> list[str]:
        return sorted({r.model for r in self.rows if r.price is None and r.remaining})


class _Counter:
    """Prompt tokens per call, with each fixed template and each stored text counted once per model."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.tokens = TokenCounter()
        self._fixed: dict[tuple[str, ...], int] = {}
        self._texts: dict[tuple[str, str], int] = {}

    def fixed(self, key: tuple[str, ...], model: str, messages: list[dict[str, str]]) -> int:
        n = self._fixed.get((model, *key))
        if n is None:
            n = self._fixed[(model, *key)] = self.tokens.messages(model, messages)
        return n

    def stored(self, model: str, text_id: str, text: str) -> int:
        n = self._texts.get((model, text_id))
        if n is None:
            n = self._texts[(model, text_id)] = self.tokens.text(model, text)
        return n


def _call_seconds(r: EstimateRow) -> tuple[float, bool]:
    """Seconds one remaining call of the row takes, and whether it rests on the assumed speed (nothing learned)."""
    if r.latency_s is not None and r.speed_from is None:
        return r.latency_s, False  # the entry's own stored calls
    out = r.output_remaining / r.remaining
    if r.tokens_per_s is not None:  # learned from other entries on the same model string
        return ASSUMED_FIRST_TOKEN_S + out / r.tokens_per_s, False
    return ASSUMED_FIRST_TOKEN_S + out / ASSUMED_TOKENS_PER_S, True


def _time(rows: list[EstimateRow], study: Study) -> tuple[float, str]:
    """Seconds the remaining calls take at the session's limits: the slowest entry, or the overall concurrency.

    Each entry's speed is learned from its stored calls (mean latency), else from the stored calls
    of other entries on the same model string (tokens per second), else assumed; the basis names
    the entries with nothing to learn from, so an assumed time is never mistaken for a measured one.
    """
    limits = study.session.limits
    groups: dict[int, list[EstimateRow]] = {}
    for r in rows:
        if r.remaining:
            groups.setdefault(id(r.endpoint), []).append(r)
    per_entry: dict[int, float] = {}
    work = 0.0
    assumed: set[str] = set()
    learned: dict[str, float] = {}
    for key, mine in groups.items():
        ep = mine[0].endpoint
        calls = sum(r.remaining for r in mine)
        busy = 0.0
        for r in mine:
            seconds, guessed = _call_seconds(r)
            if guessed:
                assumed.update(r.names)
            elif r.tokens_per_s is not None:
                learned.update({n: r.tokens_per_s for n in r.names})
            busy += r.remaining * seconds
        work += busy
        deployments = 1 + (len(ep.deployments) if ep is not None else 0)
        bounds = [busy / (limits.per_model_concurrency * deployments)]
        rpm = _sum_limit(ep, "rpm")
        tpm = _sum_limit(ep, "tpm")
        if rpm:
            bounds.append(calls / rpm * 60)
        if tpm:
            sent_tokens = sum(r.input_remaining + r.worst_output_remaining for r in mine)
            bounds.append(sent_tokens / tpm * 60)
        per_entry[key] = max(bounds)
    if not per_entry:
        return 0.0, "nothing left to send"
    seconds = max(max(per_entry.values()), work / limits.concurrency)
    endpoints = [r.endpoint for r in rows if r.endpoint is not None]
    basis = f"at concurrency {limits.concurrency}, {limits.per_model_concurrency} per model" + (
        ", rpm/tpm limits" if any(_sum_limit(e, "rpm") or _sum_limit(e, "tpm") for e in endpoints) else ""
    )
    if learned:
        basis += "; speed learned from stored calls: " + ", ".join(
            f"{n} {v:,.1f} tokens/s" for n, v in sorted(learned.items())
        )
    if assumed:
        basis += (
            f"; no stored call to learn speed from for {', '.join(sorted(assumed))}: assumed "
            f"{ASSUMED_FIRST_TOKEN_S:g} s + {ASSUMED_TOKENS_PER_S:g} output tokens/s (a local model may be far slower)"
        )
    elif not learned:
        basis += "; latency: observed means"
    return seconds, basis


def _sum_limit(ep: Endpoint | None, name: str) -> int | None:
    """The entry's limit summed over its deployments (None when the entry itself sets none)."""
    if ep is None or getattr(ep, name) is None:
        return None
    return int(getattr(ep, name)) + sum(getattr(d, name) or getattr(ep, name) for d in ep.deployments)


ESTIMATE_STAGES = ("automation", "assistance", DIALOGUE_STAGE, "worker", "judging")
"""The stages in the order `centaur check` lists them (a dialogue's calls come before its deliverable)."""

_QUESTION_TOKENS = 60
"""Tokens a worker's question is counted at before any is stored (a question of one or two sentences)."""


def _dialogue_rows(
    s: Session,
    worker: WorkerSpec,
    task_id: str,
    assistant: str,
    guidance: float,
    done: bool,
    row: Callable[[str, Endpoint, str], EstimateRow],
    add: Callable[..., None],
    counter: _Counter,
) -> float:
    """Plan one dialogue's calls (N - 1 questions, N - 1 answers); returns the tokens its rounds add to the
    worker's final prompt.

    Each call's prompt holds the task prompt, the assistance text and every earlier round, so the
    rounds' tokens grow with each turn; an answer is counted at the stage's observed mean output,
    else at max_tokens (worst case), a question at `_QUESTION_TOKENS`. A dialogue is counted done
    when its deliverable is stored (a dialogue cut short by a stopped run is counted whole: an upper bound).
    """
    ep = s.model(assistant)
    q_row, a_row = row(DIALOGUE_STAGE, worker, worker.name), row(DIALOGUE_STAGE, ep, assistant)
    answer = a_row.observed_output if a_row.observed_output is not None else float(a_row.max_tokens)
    question = q_row.observed_output if q_row.observed_output is not None else float(_QUESTION_TOKENS)
    u = counter.study.universal
    task = counter.study.task(task_id)
    q_base = counter.fixed(("dialogue-question", task_id), worker.model, worker_messages(u, task, ""))
    a_base = counter.fixed(("dialogue-answer", task_id), ep.model, assistance_messages(u, task))
    rounds = 0.0
    for _ in range(s.augmentation.turns - 1):
        add(q_row, q_base + guidance + rounds, done)
        add(a_row, a_base + guidance + rounds + question, done)
        rounds += question + answer
    return rounds


def estimate(study: Study, facts: EstimateFacts | None = None) -> Estimate:
    """The estimate of a session's calls, from its plan and what its database holds (read-only).

    Args:
        study: The session.
        facts: What the database holds; read from `study.database` (read-only) when None.

    Raises:
        StoreError: the database exists but cannot be read.
    """
    if facts is None:
        facts = estimate_facts(Path(study.database))
    s = study.session
    u = study.universal
    gen_max, judge_max = s.generation.max_tokens, s.judging.max_tokens
    counter = _Counter(study)
    rows: dict[tuple[str, str], EstimateRow] = {}
    stage_means: dict[str, float | None] = {}
    for stage in ESTIMATE_STAGES:
        used = [u for (st, _), u in facts.usage.items() if st == stage]
        n = sum(u.completion_calls for u in used)
        stage_means[stage] = sum(u.completion_tokens for u in used) / n if n else None

    worker_entries = s.worker_panel  # the one [worker], or each of a [[workers]] panel
    all_entries: list[tuple[str, Endpoint]] = [(m.name, m) for m in s.models]
    all_entries += [(w.name, w) for w in worker_entries] + [(j.name, j) for j in s.judges]
    sharing: dict[str, int] = {}
    for _, e in all_entries:
        sharing[e.model] = sharing.get(e.model, 0) + 1

    def learned_speed(model: str) -> float | None:
        """Tokens/s of the stored calls of the entries on one model string (all stages), None without any."""
        used = [u for (_, n), u in facts.entries.items() for name, e in all_entries if name == n and e.model == model]
        tokens, seconds = sum(u.completion_tokens for u in used), sum(u.latency_s for u in used)
        return tokens / seconds if tokens and seconds > 0 else None

    def row(stage: str, ep: Endpoint, name: str) -> EstimateRow:
        r = rows.get((stage, name))
        if r is None:
            max_tokens = judge_max if stage in ("judging", EXAM_STAGE) else gen_max
            r = rows[(stage, name)] = EstimateRow(stage, ep.model, [], price_of(ep), max_tokens, ep)
            # One entry alone on its model string: the model's calls are all its own (re-asks included).
            used = facts.usage.get((stage, ep.model)) if sharing.get(ep.model, 0) == 1 else None
            own = facts.entries.get((stage, name))
            if used is None:
                used = own
            if own is not None and own.calls:
                r.tokens_per_s = own.tokens_per_s
            else:
                r.tokens_per_s = learned_speed(ep.model)
                r.speed_from = f"other entries on {ep.model}" if r.tokens_per_s is not None else None
            if used is not None and used.calls:
                r.recorded_calls, r.recorded_input, r.recorded_output = (
                    used.calls,
                    used.prompt_tokens,
                    used.completion_tokens,
                )
                r.recorded_cost, r.recorded_unpriced = used.cost, used.unpriced
                r.observed_output = used.mean_completion
                r.latency_s = own.mean_latency_s if own is not None and own.calls else None
            elif stage_means.get(stage) is not None:  # another model's calls of the stage: their mean
                r.observed_output, r.observed_from = stage_means[stage], "the stage's other models"
        if name not in r.names:
            r.names.append(name)
        return r

    def expected_output(stage: str, model: str) -> tuple[float, str]:
        used = facts.usage.get((stage, model))
        if used is not None and used.mean_completion is not None:
            return used.mean_completion, "observed mean"
        return float(gen_max), "max_tokens"

    def add(r: EstimateRow, prompt: float, done: bool, pending: str | None = None) -> None:
        r.planned += 1
        if done:
            return
        r.remaining += 1
        r.input_remaining += round(prompt)
        out = r.observed_output if r.observed_output is not None else r.max_tokens
        r.output_remaining += round(out)
        r.worst_output_remaining += r.max_tokens
        if pending is not None:
            r.pending_texts += 1
            r.pending_basis.add(pending)

    worker = s.worker
    imported = s.imported_names
    for task_id in s.tasks:
        task = study.task(task_id)
        rubric = study.rubric(task_id)
        auto_msgs = automation_messages(u, task)
        assist_msgs = assistance_messages(u, task)
        plain_msgs = worker_messages(u, task, None)
        worker_empty = worker_messages(u, task, "")
        for run in range(1, s.runs + 1):
            for name in candidates_for(s, "automation"):
                if name in imported:
                    continue  # an imported output is never generated (`centaur import-outputs`)
                ep = s.model(name)
                n = counter.fixed(("automation", task_id), ep.model, auto_msgs)
                done = output_id(run, task_id, "automation", name, name) in facts.outputs
                add(row("automation", ep, name), n, done)
            for name in s.assistants:
                ep = s.model(name)
                n = counter.fixed(("assistance", task_id), ep.model, assist_msgs)
                add(row("assistance", ep, name), n, assistance_id(run, task_id, name) in facts.assistance)
            # Each assistance text (and each dialogue) goes to every worker of a panel; each worker has its own
            # plain baseline.
            for wk in s.worker_panel:
                for name in candidates_for(s, "augmentation"):
                    if name in imported:
                        continue
                    oid = output_id(run, task_id, "augmentation", name, wk.name)
                    r = row("worker", wk, wk.name)
                    if name == PLAIN:
                        add(r, counter.fixed(("plain", task_id), wk.model, plain_msgs), oid in facts.outputs)
                        continue
                    assistant = s.dialogue_assistant(name)
                    aid = assistance_id(run, task_id, assistant or name)
                    base = counter.fixed(("worker", task_id), wk.model, worker_empty)
                    text = facts.assistance.get(aid)
                    if text is not None:
                        guidance, basis = float(counter.stored(wk.model, aid, text)), None
                    else:
                        guidance, basis = expected_output("assistance", s.model(assistant or name).model)
                    if assistant is not None:  # a dialogue: its rounds first, then a longer final prompt
                        base += round(
                            _dialogue_rows(s, wk, task_id, assistant, guidance, oid in facts.outputs, row, add, counter)
                        )
                    add(r, base + guidance, oid in facts.outputs, basis)
        for mode in tournament_modes(s):
            judge_empty = judge_messages(u, task, rubric, "", "", s.judging.allow_ties)
            stage = "automation" if mode == "automation" else "worker"
            for run in range(1, s.runs + 1):
                for comp in comparisons(s, run, task_id, mode):
                    for judge in eligible_judges(s, comp):
                        r = row("judging", judge, judge.name)
                        base = counter.fixed(("judge", task_id), judge.model, judge_empty)
                        prompt, pending = float(base), None
                        for cand in comp.candidates:
                            oid = candidate_output_id(s, run, task_id, mode, cand)
                            text = facts.outputs.get(oid)
                            if text is not None:
                                prompt += counter.stored(judge.model, oid, text)
                            elif cand in imported or worker is None:
                                # not imported yet: its length is unknown until `centaur import-outputs`
                                guess, pending = float(gen_max), "max_tokens (output not imported yet)"
                                prompt += guess
                            else:
                                mw = mode_worker(s, mode)
                                producer = s.model(cand).model if mode == "automation" or mw is None else mw.model
                                guess, pending = expected_output(stage, producer)
                                prompt += guess
                        for presentation, _ in presented_orders(s, comp, judge.name):
                            add(r, prompt, (comp.id, judge.name, presentation) in facts.judged, pending)
    _exam_rows(study, facts, counter, row, add)
    order = (*ESTIMATE_STAGES, EXAM_STAGE)
    ordered = sorted(rows.values(), key=lambda r: (order.index(r.stage), r.model, r.names))
    seconds, basis = _time(ordered, study)
    return Estimate(
        session=s.name,
        rows=ordered,
        spent=facts.spent,
        spent_unpriced=facts.unpriced,
        budget=s.limits.max_cost_usd,
        time_s=seconds,
        time_basis=basis,
        simulated=s.simulated,
        unanswered_usd=facts.unanswered.usd,
        unanswered=facts.unanswered.requests,
    )


def _exam_rows(
    study: Study,
    facts: EstimateFacts,
    counter: _Counter,
    row: Callable[[str, Endpoint, str], EstimateRow],
    add: Callable[..., None],
) -> None:
    """The admission exam's calls (issue 26): each planted pair, per LLM judge, in both orders.

    Counted once the exam is planned (its pairs stored), or beforehand when the session sets
    `judging.admit_min_accuracy` (it means to run one): then every task has `exam_per_kind`
    pairs per flaw kind (an upper bound: a flaw kind may be not applicable in a task), each the
    mean length of the task's stored outputs twice (or max_tokens when none is stored).
    """
    s = study.session
    u = study.universal
    pairs: list[tuple[str, str, str | None]] = [(pid, task, oid) for pid, (task, oid) in facts.exam_pairs.items()]
    if not pairs and s.judging.admit_min_accuracy is not None:
        pairs = [
            (f"planned:{task}:{kind}:{slot}", task, None)
            for task in s.tasks
            for kind in FLAW_KINDS
            for slot in range(s.judging.exam_per_kind)
        ]
    for pair_id, task_id, oid in pairs:
        if task_id not in study.tasks:
            continue
        task, rubric = study.task(task_id), study.rubric(task_id)
        empty = judge_messages(u, task, rubric, "", "", s.judging.allow_ties)
        for judge in s.judges:
            prompt = float(counter.fixed(("judge", task_id), judge.model, empty))
            text = facts.outputs.get(oid) if oid is not None else None
            pending = None
            if text is not None:
                prompt += 2 * counter.stored(judge.model, oid or "", text)
            else:
                prompt += 2 * s.generation.max_tokens
                pending = "max_tokens (exam not planned yet)"
            r = row(EXAM_STAGE, judge, judge.name)
            for presentation in (1, 2):
                add(r, prompt, (pair_id, judge.name, presentation) in facts.exam_done, pending)


def duration_text(seconds: float) -> str:
    """A duration for people: "45 s", "12 min", "3.4 h", "2.1 days"."""
    if not math.isfinite(seconds):
        return "unbounded"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 172_800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def usd(value: float | None) -> str:
    """USD for people; None is "unknown price", never $0."""
    if value is None:
        return "unknown price"
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


def estimate_lines(est: Estimate) -> list[str]:
    """The estimate as `centaur check` prints it and the app shows it before a run."""
    lines = [
        "Estimate (litellm token counts of the real prompts; re-asks of invalid judge replies not included):",
        f"  {'stage':<10} {'model':<34} {'calls':>7} {'left':>7} {'input tok':>11} {'output tok':>11} "
        f"{'remaining':>14} {'total':>14}",
    ]
    for r in est.rows:
        lines.append(
            f"  {r.stage:<10} {r.model[:34]:<34} {r.planned:>7,} {r.remaining:>7,} {r.input_remaining:>11,} "
            f"{r.output_remaining:>11,} {usd(r.cost_remaining):>14} {usd(r.cost_total):>14}"
        )
        notes = [f"entry {', '.join(r.names)}", f"input: {r.input_basis}", f"output: {r.output_basis}"]
        if r.remaining:
            notes.append(r.speed_basis)
        if r.price is None and r.remaining:
            notes.append("no price: set input_cost_per_mtok and output_cost_per_mtok")
        elif r.price is not None:
            notes.append(f"price {r.price.source}: ${r.price.input * 1e6:g} / ${r.price.output * 1e6:g} per M in/out")
        lines.append("      " + "; ".join(notes))
    lines.append(
        f"  Remaining: {est.remaining_calls:,} of {est.planned_calls:,} calls, {usd(est.cost_remaining)} "
        f"(at most {usd(est.worst_cost_remaining)} with every reply at max_tokens); total {usd(est.cost_total)}, "
        f"of which {usd(est.spent)} spent"
        + (f" (+ {est.spent_unpriced:,} call(s) of unknown cost)" if est.spent_unpriced else "")
        + (
            f"; and {usd(est.unanswered_usd)} estimated for {est.unanswered:,} request(s) billed without an answer"
            if est.unanswered
            else ""
        )
    )
    if est.unpriced_models:
        lines.append(f"  Unknown price (not counted as $0): {', '.join(est.unpriced_models)}")
    if est.budget is not None:
        lines.append(f"  Budget max_cost_usd = {usd(est.budget)}: {usd(est.budget_left)} left")
    lines.append(f"  Expected time: {duration_text(est.time_s)} ({est.time_basis})")
    if est.simulated:
        lines.append("  SIMULATED models send nothing billable; their tokens are the simulation's.")
    return lines


def estimate_summary(est: Estimate) -> list[str]:
    """The estimate in a few short lines, per stage (the app's session screen, before a run)."""
    lines = [
        f"Before running: {est.remaining_calls:,} call(s) left, about {usd(est.cost_remaining)} "
        f"(at most {usd(est.worst_cost_remaining)}), {duration_text(est.time_s)} at the session's limits"
    ]
    for stage in (*ESTIMATE_STAGES, EXAM_STAGE):
        mine = [r for r in est.rows if r.stage == stage and r.remaining]
        if not mine:
            continue
        known = [r.cost_remaining for r in mine]
        cost = None if any(c is None for c in known) else sum(c for c in known if c is not None)
        tokens_in = sum(r.input_remaining for r in mine) / 1e6
        tokens_out = sum(r.output_remaining for r in mine) / 1e6
        lines.append(
            f"  {stage}: {sum(r.remaining for r in mine):,} calls, "
            f"{tokens_in:.2f}M in / {tokens_out:.2f}M out tokens, {usd(cost)}"
        )
    if est.unpriced_models:
        lines.append(f"  Unknown price: {', '.join(est.unpriced_models)}")
    if est.budget is not None:
        lines.append(f"  Budget {usd(est.budget)}: {usd(est.budget_left)} left")
    return lines
