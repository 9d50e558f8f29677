"""Provides the tidy frames every statistic reads, built from the lists of rows the store returns.

The store hands out plain lists of dicts (`Store.judgment_rows()`, `score_rows()`,
`output_rows()`) and comparison records (`Store.comparisons()`); this module turns them into
pandas frames and marks every judgment with a `status`, so each statistic can say how many
judgments it left out and why:

| status | meaning |
|---|---|
| `ok` | valid, eligible, latest revision, of a judge kind the report uses |
| `invalid` | the judge's reply stayed invalid (stored with its reason) |
| `superseded` | an older revision of a corrected judgment |
| `other_kind` | a judge kind the report leaves out (experts, when ranking by LLM judges) |
| `ineligible` | the judge's family wrote (or guided) one of the two outputs |
| `unknown_comparison` | the comparison is not in the session |
| `malformed` | marked valid, but its winner is none of option1, option2, tie |
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from centaur_tui.domain.plan import MODES
from centaur_tui.domain.session import PLAIN, Session

STATUSES = ("ok", "invalid", "superseded", "other_kind", "ineligible", "unknown_comparison", "malformed")
"""Every value of the judgments frame's `status` column, `ok` first."""

JUDGMENT_COLUMNS = (
    "run", "task", "mode", "comparison_id", "judge", "judge_kind", "judge_family", "option1", "option2",
    "winner", "option1_mean", "option2_mean", "valid", "invalid_reason", "rationale", "judgment_id",
    "presentation", "revision",
)
SCORE_COLUMNS = ("comparison_id", "judge", "candidate", "dimension", "dimension_kind", "score", "judgment_id")
COMPARISON_COLUMNS = ("id", "run", "task", "mode", "candidate_a", "candidate_b")
TIE = "tie"
"""The winner value of a tied judgment."""


@dataclass(frozen=True)
class Design:
    """What the statistics need to know about a session beyond its rows.

    Attributes:
        session: Session name, for titles.
        simulated: True when the data come from the simulated provider.
        tasks: Task ids in display order.
        candidate_order: Per mode, candidate names in display order (plain last).
        candidate_families: Family of each candidate's output (plain: the configured family or None).
        judge_families: Family of each LLM judge.
        model_families: Family of each candidate model (for criterion validity).
        release_order: Release order of models within their family (1 = oldest).
        plain: Name of the unaided-worker candidate.
        worker: Name of the fixed worker model, if any.
        general_dimensions: Ids of the general rubric dimensions, in order.
        rubric: Per task, every rubric dimension id (task-specific, then general).
    """

    session: str = ""
    simulated: bool = False
    tasks: tuple[str, ...] = ()
    candidate_order: dict[str, tuple[str, ...]] = field(default_factory=dict)
    candidate_families: dict[str, str | None] = field(default_factory=dict)
    judge_families: dict[str, str] = field(default_factory=dict)
    model_families: dict[str, str] = field(default_factory=dict)
    release_order: dict[str, int] = field(default_factory=dict)
    plain: str = PLAIN
    worker: str | None = None
    general_dimensions: tuple[str, ...] = ()
    rubric: dict[str, tuple[str, ...]] = field(default_factory=dict)


def design_from_session(
    session: Session,
    *,
    simulated: bool | None = None,
    general_dimensions: Iterable[str] = (),
    rubric: Mapping[str, Iterable[str]] | None = None,
) -> Design:
    """Describe a session for the statistics.

    Args:
        session: The validated session.
        simulated: Overrides `session.simulated` (the store's meta is the better witness).
        general_dimensions: Ids of the general dimensions (from the universal task file).
        rubric: Per task, all dimension ids; enables the check that every option was fully scored.

    Returns:
        The design.
    """
    families: dict[str, str | None] = {m.name: m.family for m in session.models}
    families[PLAIN] = session.judging.plain_family
    return Design(
        session=session.name,
        simulated=session.simulated if simulated is None else simulated,
        tasks=tuple(session.tasks),
        candidate_order={"automation": session.automation_candidates, "augmentation": session.augmentation_candidates},
        candidate_families=families,
        judge_families={j.name: j.family for j in session.judges},
        model_families={m.name: m.family for m in session.models},
        release_order={m.name: m.release_order for m in session.models if m.release_order is not None},
        plain=PLAIN,
        worker=session.worker.name,
        general_dimensions=tuple(general_dimensions),
        rubric={t: tuple(d) for t, d in (rubric or {}).items()},
    )


@dataclass
class Frames:
    """The tidy inputs of every statistic.

    Attributes:
        judgments: One row per stored judgment (valid or not) with the export's columns plus
            `candidate_a`/`candidate_b` (the pair sorted by name), `code` (0 = candidate_a
            wins, 1 = candidate_b wins, 2 = tie, -1 = no usable verdict), `status` (see the
            module docstring), and `option1_avg`/`option2_avg`/`option1_dims`/`option2_dims`
            (the recomputed unweighted mean of each option's rubric scores and their count).
        scores: One row per rubric score, with the export's columns.
        comparisons: One row per comparison of the session.
        candidates: One row per (run, task, mode, candidate) of every tournament, so that a
            candidate with no valid judgment still takes part.
        design: What the session says about families, release order and rubrics.
    """

    judgments: pd.DataFrame
    scores: pd.DataFrame
    comparisons: pd.DataFrame
    candidates: pd.DataFrame
    design: Design

    @property
    def ok(self) -> pd.DataFrame:
        """The judgments every statistic may use (status `ok`)."""
        return self.judgments[self.judgments["status"] == "ok"]

    @property
    def runs(self) -> tuple[int, ...]:
        return tuple(sorted(self.candidates["run"].unique().tolist()))

    def tasks(self) -> list[str]:
        """Task ids in the design's order, then any others found in the data."""
        seen = set(self.candidates["task"].unique().tolist()) | set(self.comparisons["task"].unique().tolist())
        ordered = [t for t in self.design.tasks if t in seen]
        return ordered + sorted(seen - set(ordered))

    def modes(self) -> list[str]:
        seen = set(self.candidates["mode"].unique().tolist())
        return [m for m in MODES if m in seen] + sorted(seen - set(MODES))

    def candidate_names(self, mode: str) -> list[str]:
        """Candidates of a mode in display order: the design's order, others sorted, plain last."""
        seen = set(self.candidates.loc[self.candidates["mode"] == mode, "candidate"].unique().tolist())
        ordered = [c for c in self.design.candidate_order.get(mode, ()) if c in seen and c != self.design.plain]
        rest = sorted(seen - set(ordered) - {self.design.plain})
        return ordered + rest + ([self.design.plain] if self.design.plain in seen else [])


def _records(items: Any, columns: tuple[str, ...]) -> pd.DataFrame:
    """A frame from dicts, dataclass records or a mapping of id to record."""
    if isinstance(items, Mapping):
        items = list(items.values())
    items = list(items)
    if items and dataclasses.is_dataclass(items[0]):
        data = {c: [getattr(r, c) for r in items] for c in columns}
    else:
        data = {c: [r.get(c) for r in items] for c in columns}
    return pd.DataFrame(data, columns=list(columns))


def _as_bool(values: pd.Series) -> pd.Series:
    if values.dtype == bool:
        return values
    text = values.astype("string").str.strip().str.lower()
    return text.isin(["1", "true", "yes"]).astype(bool)


def build_frames(
    judgment_rows: Iterable[Mapping[str, Any]],
    score_rows: Iterable[Mapping[str, Any]],
    output_rows: Iterable[Mapping[str, Any]],
    comparisons: Any,
    design: Design | None = None,
    *,
    judge_kinds: Iterable[str] = ("llm",),
) -> Frames:
    """Build the tidy frames from the store's rows.

    Args:
        judgment_rows: `Store.judgment_rows()` (or rows with the same keys, e.g. read from judgments.csv).
        score_rows: `Store.score_rows()`.
        output_rows: `Store.output_rows()`; only run, task, mode and candidate are read.
        comparisons: `Store.comparisons()` (a mapping of id to record) or rows with the keys
            id, run, task, mode, candidate_a, candidate_b.
        design: Families, release order and rubrics of the session; without it no judgment is
            marked ineligible and criterion validity has no release order.
        judge_kinds: Judge kinds the statistics use; judgments of other kinds get status `other_kind`.

    Returns:
        The frames.
    """
    design = design or Design()
    comps = _records(comparisons, COMPARISON_COLUMNS)
    comps["run"] = comps["run"].astype("int64")

    j = _records(judgment_rows, JUDGMENT_COLUMNS)
    j["valid"] = _as_bool(j["valid"])
    for col in ("run", "presentation", "revision", "judgment_id"):
        j[col] = pd.to_numeric(j[col], errors="coerce").fillna(0).astype("int64")
    for col in ("option1_mean", "option2_mean"):
        j[col] = pd.to_numeric(j[col], errors="coerce").astype("float64")
    for col in ("winner", "invalid_reason", "rationale", "judge_family"):
        j[col] = j[col].astype(object).where(j[col].notna() & (j[col].astype(object) != ""), None)

    s = _records(score_rows, SCORE_COLUMNS)
    s["score"] = pd.to_numeric(s["score"], errors="coerce").astype("float64")
    s["judgment_id"] = pd.to_numeric(s["judgment_id"], errors="coerce").fillna(-1).astype("int64")

    o = _records(output_rows, ("run", "task", "mode", "candidate"))
    pairs = pd.concat(
        [comps[["run", "task", "mode", "candidate_a"]].set_axis(["run", "task", "mode", "candidate"], axis=1),
         comps[["run", "task", "mode", "candidate_b"]].set_axis(["run", "task", "mode", "candidate"], axis=1), o],
        ignore_index=True,
    )
    pairs["run"] = pairs["run"].astype("int64")
    candidates = pairs.drop_duplicates().sort_values(["mode", "task", "run", "candidate"]).reset_index(drop=True)

    j = _mark(j, comps, design, tuple(judge_kinds))
    j = _attach_averages(j, s)
    return Frames(judgments=j, scores=s, comparisons=comps, candidates=candidates, design=design)


def _mark(j: pd.DataFrame, comps: pd.DataFrame, design: Design, kinds: tuple[str, ...]) -> pd.DataFrame:
    """Add candidate_a/candidate_b, code and status to the judgments."""
    o1 = j["option1"].astype(object)
    o2 = j["option2"].astype(object)
    first_is_a = (o1.astype(str) <= o2.astype(str)).to_numpy()
    j["candidate_a"] = np.where(first_is_a, o1, o2)
    j["candidate_b"] = np.where(first_is_a, o2, o1)
    winner = j["winner"].astype(object)
    code = np.full(len(j), -1, dtype="int64")
    code[(winner == j["candidate_a"]).to_numpy()] = 0
    code[(winner == j["candidate_b"]).to_numpy()] = 1
    code[(winner == TIE).to_numpy()] = 2
    code[~j["valid"].to_numpy()] = -1

    status = np.full(len(j), "ok", dtype=object)
    status[(code == -1) & j["valid"].to_numpy()] = "malformed"
    status[~j["valid"].to_numpy()] = "invalid"
    fam = design.candidate_families
    if fam:
        fam_a = j["candidate_a"].map(lambda c: fam.get(c)).astype(object)
        fam_b = j["candidate_b"].map(lambda c: fam.get(c)).astype(object)
        jf = j["judge_family"].astype(object)
        ineligible = jf.notna() & ((jf == fam_a) | (jf == fam_b))
        status[ineligible.to_numpy()] = "ineligible"
    status[~j["comparison_id"].isin(comps["id"]).to_numpy()] = "unknown_comparison"
    status[~j["judge_kind"].isin(kinds).to_numpy()] = "other_kind"
    if len(j):
        latest = j.groupby(["comparison_id", "judge", "presentation"])["revision"].transform("max")
        status[(j["revision"] < latest).to_numpy()] = "superseded"
    j["code"] = code
    j["status"] = pd.Categorical(status, categories=list(STATUSES))
    return j


def _attach_averages(j: pd.DataFrame, s: pd.DataFrame) -> pd.DataFrame:
    """Add each option's recomputed rubric average and number of scored dimensions."""
    if len(s):
        avg = s.groupby(["judgment_id", "candidate"], sort=False)["score"].agg(["mean", "count"])
        avg = avg.reset_index()
    else:
        avg = pd.DataFrame({"judgment_id": pd.Series(dtype="int64"), "candidate": pd.Series(dtype=object),
                            "mean": pd.Series(dtype="float64"), "count": pd.Series(dtype="int64")})
    for opt in ("option1", "option2"):
        part = avg.rename(columns={"candidate": opt, "mean": f"{opt}_avg", "count": f"{opt}_dims"})
        part[opt] = part[opt].astype(object)
        j = j.merge(part, on=["judgment_id", opt], how="left")
        j[f"{opt}_dims"] = j[f"{opt}_dims"].fillna(0).astype("int64")
    return j


def status_counts(judgments: pd.DataFrame) -> dict[str, int]:
    """How many judgments of a frame have each status other than `ok` (zero counts left out)."""
    counts = judgments["status"].value_counts()
    return {k: int(counts.get(k, 0)) for k in STATUSES[1:] if int(counts.get(k, 0))}


def games(frames: Frames) -> pd.DataFrame:
    """Two rows per usable judgment, one per candidate: the points it earned (1, 0.5 or 0).

    Columns: run, task, mode, comparison_id, judgment_id, judge, candidate, opponent,
    points, shown_first.
    """
    ok = frames.ok
    base = ok[["run", "task", "mode", "comparison_id", "judgment_id", "judge"]]
    code = ok["code"].to_numpy()
    pts_a = np.where(code == 0, 1.0, np.where(code == 1, 0.0, 0.5))
    a = base.assign(candidate=ok["candidate_a"].to_numpy(), opponent=ok["candidate_b"].to_numpy(), points=pts_a,
                    shown_first=(ok["option1"] == ok["candidate_a"]).to_numpy())
    b = base.assign(candidate=ok["candidate_b"].to_numpy(), opponent=ok["candidate_a"].to_numpy(), points=1.0 - pts_a,
                    shown_first=(ok["option1"] == ok["candidate_b"]).to_numpy())
    return pd.concat([a, b], ignore_index=True)
