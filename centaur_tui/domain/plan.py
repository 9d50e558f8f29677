"""Provides the study design: tournaments, comparisons, eligibility, seeded order, call keys, counts."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Literal

from centaur_tui.domain.session import IMPORTED, PLAIN, Endpoint, JudgeSpec, ModelSpec, Session, WorkerSpec

Mode = Literal["automation", "augmentation"]
MODES: tuple[Mode, ...] = ("automation", "augmentation")
STAGES = ("automation", "assistance", "worker", "judging")


WORKER_MODE_PREFIX = "augmentation@"
"""Mode of a further worker's augmentation tournaments: `augmentation@<worker name>` (issue 28, a worker panel).

The panel's first worker keeps the mode `augmentation` (and every id a single `[worker]` has), so a
session without `[[workers]]` plans, stores and reports exactly what it did. Outputs keep the mode
`augmentation` and carry their worker (`output_id(..., worker)`, `outputs.worker`); only the tournament
(its comparisons) carries the worker in its mode, so each worker's tournament is ranked on its own."""


def worker_mode(worker: str, primary: str | None) -> str:
    """The tournament mode of a worker's augmentation deliverables (`augmentation` for the primary worker)."""
    return "augmentation" if worker == primary else WORKER_MODE_PREFIX + worker


def worker_modes(session: Session) -> tuple[tuple[str, WorkerSpec], ...]:
    """(tournament mode, worker) of every worker model of the session, the primary (`worker`) first."""
    primary = session.worker.name if session.worker is not None else None
    return tuple((worker_mode(w.name, primary), w) for w in session.worker_panel)


def panel_modes(session: Session) -> tuple[str, ...]:
    """The augmentation tournaments of further workers of a panel (empty for a single worker)."""
    return tuple(m for m, _ in worker_modes(session) if m != "augmentation")


def tournament_modes(session: Session) -> tuple[str, ...]:
    """Every tournament mode the pipeline plans: automation, augmentation, then one per further worker."""
    return (*MODES, *panel_modes(session))


def is_augmentation(mode: str) -> bool:
    """Whether a tournament mode is augmentation (the primary worker's or a further worker's)."""
    return mode == "augmentation" or mode.startswith(WORKER_MODE_PREFIX)


def mode_worker(session: Session, mode: str) -> WorkerSpec | None:
    """The worker whose deliverables a tournament mode holds (None for automation or without a worker)."""
    for m, w in worker_modes(session):
        if m == mode:
            return w
    return None


def digest(*parts: Any) -> str:
    """Stable SHA-256 hex digest of JSON-serialisable parts."""
    raw = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """Compact, key-sorted JSON: the form in which messages and parameters are hashed and stored."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def entry_json(endpoint: Endpoint) -> str:
    """The session entry a call belongs to, as canonical JSON: part of every call's content address.

    Everything that changes the request or names the entry is in it: the entry's kind, name and
    family, its model string, `api_base` and `params`, and for a simulated model its simulation
    settings (they change its replies). Two entries on one model string (two judges on
    `openai/gpt-4.1` with different names) therefore never share a reply. Left out on purpose:
    `api_key_env` (which key pays does not change the reply) and the token prices.
    """
    if isinstance(endpoint, ModelSpec):
        kind = "model"
    elif isinstance(endpoint, WorkerSpec):
        kind = "worker"
    elif isinstance(endpoint, JudgeSpec):
        kind = "judge"
    else:
        kind = "endpoint"
    entry: dict[str, Any] = {
        "kind": kind,
        "name": getattr(endpoint, "name", None),
        "family": getattr(endpoint, "family", None),
        "model": endpoint.model,
        "api_base": endpoint.api_base,
        "params": endpoint.params,
    }
    simulation = getattr(endpoint, "simulation", None)
    if endpoint.simulated and simulation is not None:
        knobs = simulation.model_dump(mode="json")
        for name, default in LATER_KNOBS.items():  # at its default, a knob added later leaves the address as it was
            if name in knobs and knobs[name] == default:
                del knobs[name]
        entry["simulation"] = knobs
    return canonical_json(entry)


LATER_KNOBS: dict[str, Any] = {
    "flaw_check": 0.0,  # judges (issue 26's exam)
    "bias": {"length": 0.0, "format": 0.0, "family": {}},  # judges (issue 25's planted biases)
    "flip": 0.0,  # judges
    "specificity": None,  # candidates as assistants (issue 28's worker panel)
    "uses_specifics": 1.0,  # workers
    "dialogue_skill": None,  # candidates in a dialogue ([augmentation] turns > 1)
    "style": 0,  # candidates' deliverable layout (issue 26's identifiability)
}
"""Simulation knobs added after databases were written, with their defaults: left out of `entry_json` at the
default, so the calls a simulated session stored before keep their content address (tests/test_call_keys.py
holds the entries of the demo's endpoints as the code before these knobs wrote them)."""


def call_key_of(model: str, messages_json: str, params_json: str, sample: str, entry: str | None = None) -> str:
    """Content address from already serialised parts (the pipeline stores the same strings).

    Args:
        model: The litellm model string.
        messages_json: `canonical_json(messages)`.
        params_json: `canonical_json(params)` of the per-call parameters (temperature,
            max_tokens, response_format: the structured-output mode).
        sample: The replicate (see `call_key`).
        entry: `entry_json` of the session entry the call belongs to. None gives the legacy
            key of databases written before entries were part of the address (schema 3 and
            older); the pipeline only looks those up (`pipeline.calls.Calls`), never writes them.
    """
    parts = (
        (model, messages_json, params_json, sample)
        if entry is None
        else (model, messages_json, params_json, sample, entry)
    )
    raw = "\x00".join(parts)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def call_key(
    model: str, messages: list[dict[str, str]], params: dict[str, Any], sample: str, entry: str | None = None
) -> str:
    """Content address of one provider call.

    `sample` names the replicate (stage and run, plus the attempt for judge re-asks), so
    repeated runs are distinct samples while an identical request in the same run is one call;
    `entry` (`entry_json`) names the session entry, so two entries never share a reply.
    """
    return call_key_of(model, canonical_json(messages), canonical_json(params), sample, entry)


def legacy_key_owners(session: Session) -> set[str]:
    """Model strings whose legacy call keys (no entry in the address) belong to exactly one session entry.

    A stored call of an older database is reused only for these: when two entries share a model
    string, its old replies cannot be told apart and are reused for neither (their calls are
    sent again, under keys of their own).
    """
    entries: dict[str, int] = Counter(e.model for e in session.endpoints)
    return {model for model, n in entries.items() if n == 1}


def seed_for(key: str) -> int:
    """A 31-bit seed derived from a call key (sent as `seed` to simulated models)."""
    return int(key[:8], 16) & 0x7FFFFFFF


DIALOGUE_STAGE = "dialogue"
"""The stage of a dialogue's question and answer calls; planned only when `[augmentation] turns` > 1."""


def dialogue_calls(turns: int) -> int:
    """Calls of one dialogue of `turns` assistant turns: a question and an answer per turn after the first."""
    return 2 * (turns - 1)


def output_id(run: int, task: str, mode: str, candidate: str, worker: str) -> str:
    return "o" + digest("output", run, task, mode, candidate, worker)[:16]


def candidate_output_id(session: Session, run: int, task: str, mode: str, candidate: str) -> str:
    """The id of a candidate's output in a tournament of the session.

    Generated automation outputs are written by the candidate itself, generated augmentation
    outputs by the session's worker; an imported candidate's output has an id of its own
    (`IMPORTED` in place of the worker), whoever wrote it (`outputs.worker` keeps that).
    """
    if candidate in session.imported_names:
        return output_id(run, task, mode, candidate, IMPORTED)
    if mode == "automation":
        return output_id(run, task, mode, candidate, candidate)
    spec = mode_worker(session, mode)
    worker = spec.name if spec is not None else ""
    # Every worker's deliverable is an `augmentation` output; its worker tells them apart.
    return output_id(run, task, "augmentation", candidate, worker)


def assistance_id(run: int, task: str, assistant: str) -> str:
    return "a" + digest("assistance", run, task, assistant)[:16]


@dataclass(frozen=True)
class Comparison:
    """One pair of a round-robin tournament; `candidate_a` < `candidate_b` (canonical order)."""

    run: int
    task: str
    mode: Mode
    candidate_a: str
    candidate_b: str
    worker: str = ""

    @property
    def id(self) -> str:
        # Opaque on purpose: comparison ids travel to experts and must reveal nothing.
        return (
            "c"
            + digest("comparison", self.run, self.task, self.mode, self.candidate_a, self.candidate_b, self.worker)[:16]
        )

    @property
    def candidates(self) -> tuple[str, str]:
        return (self.candidate_a, self.candidate_b)


def question_output_id(run: int, task: str, mode: str, candidate: str, question: str) -> str:
    """The id of an imported candidate's answer to one question of a generic task."""
    return output_id(run, task, mode, candidate, f"{IMPORTED}/{question}")


def question_comparison_id(run: int, task: str, mode: str, candidate_a: str, candidate_b: str, question: str) -> str:
    """The id of the comparison of two answers to one question of a generic task (opaque, like any comparison's)."""
    return "c" + digest("comparison", run, task, mode, candidate_a, candidate_b, "", question)[:16]


def candidates_for(session: Session, mode: str) -> tuple[str, ...]:
    if mode == "automation":
        return session.automation_candidates
    if mode == "augmentation":
        return session.augmentation_candidates
    # A further worker of a panel: the assistants, their dialogues and plain (imported outputs belong to no
    # worker of it).
    if is_augmentation(mode) and session.assistants:
        return (*session.assistants, *session.dialogue_candidates, PLAIN)
    return ()


def comparisons(session: Session, run: int, task: str, mode: str) -> list[Comparison]:
    """Round robin of one (run, task, mode): every unordered pair of candidates once."""
    names = sorted(candidates_for(session, mode))
    return [Comparison(run, task, mode, a, b) for a, b in combinations(names, 2)]  # type: ignore[arg-type]


def all_comparisons(session: Session) -> list[Comparison]:
    return [
        c
        for run in range(1, session.runs + 1)
        for task in session.tasks
        for mode in tournament_modes(session)
        for c in comparisons(session, run, task, mode)
    ]


def eligible_judges(session: Session, comparison: Comparison) -> list[JudgeSpec]:
    """Judges whose family wrote (or, in augmentation, guided) neither output."""
    families = {session.candidate_family(comparison.mode, c) for c in comparison.candidates}
    families.discard(None)
    return [j for j in session.judges if j.family not in families]


def presented_orders(session: Session, comparison: Comparison, judge: str) -> list[tuple[int, tuple[str, str]]]:
    """The order(s) in which a judge sees a comparison, as (presentation index, (first, second)).

    With `orders = "one"` the order is drawn per (comparison, judge) from the session seed;
    with `orders = "both"` the pair is judged twice, once in each order.
    """
    a, b = comparison.candidates
    if session.judging.orders == "both":
        return [(0, (a, b)), (1, (b, a))]
    flip = int(digest("order", session.seed, comparison.id, judge)[:8], 16) & 1
    return [(0, (b, a) if flip else (a, b))]


@dataclass
class PlanSummary:
    """What `centaur check` prints: the size of a session before any call is sent."""

    runs: int
    tasks: int
    calls: dict[str, int]
    comparisons: dict[str, int]
    judgments_per_judge: dict[str, int]
    comparisons_by_eligible: dict[int, int]
    judge_pairs: int
    orders: int = 1
    max_judging_calls: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def total_comparisons(self) -> int:
        return sum(self.comparisons.values())

    @property
    def total_judgments(self) -> int:
        return sum(self.judgments_per_judge.values())

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())


def summarize(session: Session) -> PlanSummary:
    """Count calls per stage, comparisons, judgments per judge and judges per comparison."""
    n_runs, n_tasks = session.runs, len(session.tasks)
    auto, assistants = session.generated_automation, session.assistants
    orders = 2 if session.judging.orders == "both" else 1
    per_judge: Counter[str] = Counter({j.name: 0 for j in session.judges})
    by_eligible: Counter[int] = Counter()
    per_mode: Counter[str] = Counter()
    pairs = 0
    # Eligibility depends only on the pair, so count one (run, task) and scale.
    for mode in tournament_modes(session) if session.tasks else ():  # generic tasks only: nothing planned
        for c in comparisons(session, 1, session.tasks[0], mode):
            judges = eligible_judges(session, c)
            per_mode[mode] += n_runs * n_tasks
            by_eligible[len(judges)] += n_runs * n_tasks
            pairs += n_runs * n_tasks * len(judges) * (len(judges) - 1) // 2
            for j in judges:
                per_judge[j.name] += n_runs * n_tasks * orders
    judging = sum(per_judge.values())
    dialogues = len(session.dialogue_candidates)
    panel = max(1, len(session.worker_panel))
    calls = {
        "automation": n_runs * n_tasks * len(auto),
        "assistance": n_runs * n_tasks * len(assistants),
        # Each assistance text (and each dialogue) goes to every worker of the panel, and each worker has its
        # own plain baseline.
        "worker": n_runs * n_tasks * (len(assistants) + dialogues + 1 if assistants else 0) * panel,
        "judging": judging,
    }
    if dialogues:  # a question and an answer per turn after the first (turns = 1 plans no such stage)
        calls["dialogue"] = n_runs * n_tasks * dialogues * dialogue_calls(session.augmentation.turns) * panel
    summary = PlanSummary(
        runs=n_runs,
        tasks=n_tasks,
        calls=calls,
        comparisons=dict(per_mode),
        judgments_per_judge=dict(per_judge),
        comparisons_by_eligible=dict(sorted(by_eligible.items())),
        judge_pairs=pairs,
        orders=orders,
        max_judging_calls=judging * (1 + session.judging.max_invalid_retries),
    )
    if by_eligible.get(0):
        summary.notes.append(f"{by_eligible[0]} comparisons have no eligible judge and will stay unjudged")
    if by_eligible.get(1):
        summary.notes.append(f"{by_eligible[1]} comparisons have one eligible judge: no inter-judge agreement there")
    return summary
