"""Provides the status use case: per mode (all tasks) and per task, for each pair: has the study answered?

Reads the session's expert judgments (valid, latest revision; practice and gold places are
never judgments) and hands each pair's comparisons to the stopping rule of `stats.stopping`:
"separated", "equivalent within +-margin", or "continue: about N more expert comparisons".
Standard library only below the store: the results screen calls it in the app's process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.session import PLAIN
from centaur_tui.domain.study import Study
from centaur_tui.stats.stopping import PairStatus, pair_status

ALL_TASKS = "all tasks"
"""The task of the pooled rows: every comparison of the pair in the mode, whatever its task."""

ROUGH_BELOW = 10
"""Below this many comparisons of a pair, "about N more" rests on an estimate too noisy to plan on: said so."""


@dataclass(frozen=True)
class PairRow:
    """One pair of candidates in one task and mode; `status.difference` is P(first wins) - P(second wins)."""

    task: str
    mode: str
    first: str
    second: str
    status: PairStatus
    available: int
    """Comparisons of the pair the session holds (judged by an expert or not)."""


@dataclass(frozen=True)
class StudyStatus:
    """Every pair's verdict, with what the verdicts rest on and what was left out."""

    alpha: float
    margin: float
    rows: list[PairRow]
    judgments: int
    """Expert judgments used."""
    left_out: dict[str, int] = field(default_factory=dict)
    """Expert judgments not used, by reason (invalid, superseded, retired candidate)."""
    pooled: list[PairRow] = field(default_factory=list)
    """Every pair per mode over all tasks (task `ALL_TASKS`): the same comparisons as `rows`, pooled.

    A pair meets once per task and run, so a task alone holds as many comparisons of it as the
    session has runs (3 in the paper's design): too few for any pair to be separated there.
    Pooled over tasks, the difference is the mode's (each task weighted by its comparisons of
    the pair, as drawn); `judgments`, `counts` and `unjudged` count `rows` only, never twice.
    """

    @property
    def unjudged(self) -> int:
        """Pairs without an expert comparison yet."""
        return sum(1 for r in self.rows if r.status.n == 0)

    @property
    def counts(self) -> dict[str, int]:
        """Pairs per verdict (per task)."""
        return _counts(self.rows)

    @property
    def pooled_counts(self) -> dict[str, int]:
        """Pairs per verdict, pooled over tasks."""
        return _counts(self.pooled)


def _counts(rows: list[PairRow]) -> dict[str, int]:
    out = {"separated": 0, "equivalent": 0, "continue": 0}
    for r in rows:
        out[r.status.verdict] += 1
    return out


def check_level(name: str, value: float | None) -> None:
    """Raise a CentaurError unless `value` is None or in (0, 1)."""
    if value is not None and not 0 < value < 1:
        raise CentaurError(f"{name} must be between 0 and 1, both excluded (got {value:g})", title="Status")


def study_status(study: Study, *, alpha: float | None = None, margin: float | None = None) -> StudyStatus:
    """The stopping rule for every pair of candidates with an expert comparison, per task and mode.

    Args:
        study: The session (its database must exist).
        alpha: Error level per pair (default: `[study] stop_alpha`).
        margin: Equivalence margin (default: `[study] equivalence_margin`).

    Raises:
        CentaurError: alpha or margin outside (0, 1), or the session has not been run.
    """
    from centaur_tui.store import Store

    check_level("the error level alpha", alpha)
    check_level("the equivalence margin", margin)
    params = study.session.study
    alpha = params.stop_alpha if alpha is None else alpha
    margin = params.equivalence_margin if margin is None else margin
    if not study.database.exists():
        raise CentaurError(f"{study.database} does not exist yet: run the session first", title="Nothing to judge")
    with Store(study.database, readonly=True) as store:
        comps = store.comparisons()
        rows = [r for r in store.judgment_rows() if r.judge_kind == "expert"]
    names = {m.name for m in study.session.models} | {c.name for c in study.session.candidates} | {PLAIN}
    latest: dict[tuple[str, str, int], int] = {}
    for r in rows:
        key = (r.comparison_id, r.judge, r.presentation)
        latest[key] = max(latest.get(key, -1), r.revision)
    left_out: dict[str, int] = {}
    per_comparison: dict[str, list[float]] = {}
    for r in rows:
        c = comps.get(r.comparison_id)
        if r.revision < latest[(r.comparison_id, r.judge, r.presentation)]:
            reason = "superseded"
        elif not r.valid or c is None or r.winner is None:
            reason = "invalid"
        elif c.candidate_a not in names or c.candidate_b not in names:
            reason = "retired candidate"
        else:
            first, second = sorted((c.candidate_a, c.candidate_b))
            z = 1.0 if r.winner == first else -1.0 if r.winner == second else 0.0 if r.winner == "tie" else None
            if z is None:
                reason = "invalid"
            else:
                per_comparison.setdefault(c.id, []).append(z)
                continue
        left_out[reason] = left_out.get(reason, 0) + 1
    # Several experts on one comparison are one observation (their mean): they saw the same two outputs.
    pairs: dict[tuple[str, str, str, str], tuple[list[float], int]] = {}

    def pair_of(c: Any) -> tuple[str, str, str, str]:
        first, second = sorted((c.candidate_a, c.candidate_b))
        return (c.task, c.mode, first, second)

    def pooled_of(c: Any) -> tuple[str, str, str, str]:
        return (ALL_TASKS, *pair_of(c)[1:])

    pooled: dict[tuple[str, str, str, str], tuple[list[float], int]] = {}
    for cid, zs in sorted(per_comparison.items()):
        for key_of, into in ((pair_of, pairs), (pooled_of, pooled)):
            obs, judged = into.get(key_of(comps[cid]), ([], 0))
            obs.append(sum(zs) / len(zs))
            into[key_of(comps[cid])] = (obs, judged + len(zs))
    available: dict[tuple[str, str, str, str], int] = {}
    for c in comps.values():
        for key_of, into in ((pair_of, pairs), (pooled_of, pooled)):
            available[key_of(c)] = available.get(key_of(c), 0) + 1
            if c.candidate_a in names and c.candidate_b in names:
                into.setdefault(key_of(c), ([], 0))  # every pair gets a line, judged or not yet

    def rows_of(found: dict[tuple[str, str, str, str], tuple[list[float], int]]) -> list[PairRow]:
        return [
            PairRow(*pair, pair_status(obs, alpha=alpha, margin=margin, judgments=judged), available[pair])
            for pair, (obs, judged) in sorted(found.items())
        ]

    out = rows_of(pairs)
    used = sum(r.status.judgments for r in out)
    return StudyStatus(alpha, margin, out, used, dict(sorted(left_out.items())), rows_of(pooled))


def summary(status: StudyStatus) -> str:
    """The verdicts counted, pooled over tasks (first) and per task, with what pooling means."""

    def part(rows: list[PairRow]) -> str:
        counts, unjudged = _counts(rows), sum(1 for r in rows if r.status.n == 0)
        return (
            f"{len(rows):,} pairs; separated {counts['separated']:,}, equivalent {counts['equivalent']:,}, "
            f"continue {counts['continue']:,} (of which {unjudged:,} without an expert comparison yet)"
        )

    return (
        f"Over all tasks of a mode: {part(status.pooled)}. "
        f"Per task: {part(status.rows)}. "
        f"Pooled over tasks, a pair's difference is the mode's, each task weighted by the comparisons drawn "
        f"(with uniformly random expert comparisons: by the comparisons it holds)."
    )


def describe(row: PairRow, margin: float) -> str:
    """The verdict in words, with its n."""
    s = row.status
    if s.verdict == "separated":
        better = row.first if s.difference > 0 else row.second
        return f"separated: {better} ahead (n = {s.n})"
    if s.verdict == "equivalent":
        return f"equivalent within +-{margin:g} (n = {s.n})"
    if s.n == 0:
        return f"continue: no expert comparison yet (n = 0 of {row.available:,} in the session)"
    if s.more is None:
        return f"continue: more than 10,000,000 more expert comparisons (n = {s.n})"
    text = f"continue: about {s.more:,} more expert comparisons to be {s.goal} (n = {s.n})"
    if s.n < ROUGH_BELOW:
        text += f"; rough: the estimate rests on {s.n} comparison(s)"
    if s.more > row.available - s.n:
        text += f"; the session holds {row.available - s.n:,} more of this pair: add runs"
    return text
