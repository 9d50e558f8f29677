"""Provides the tidy frames every statistic reads, built from the lists of rows the store returns.

The store hands out lists of typed rows (`Store.judgment_rows()`, `score_rows()`,
`output_rows()`; a RowTable for the report) and comparison records (`Store.comparisons()`); rows
read from a file come as dicts with the same keys. This module turns them into
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
| `retired` | a candidate or LLM judge that is no longer in the session (`centaur migrate --retire`) |
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from centaur_tui.domain.plan import MODES, candidates_for, panel_modes
from centaur_tui.domain.records import (
    OPTIONAL_JUDGMENT_COLUMNS,
    REQUIRED_JUDGMENT_COLUMNS,
    SCORE_COLUMNS,
    JudgmentRow,
    OutputRow,
    RowTable,
    ScoreRow,
)
from centaur_tui.domain.session import PLAIN, Session

STATUSES = (
    "ok",
    "invalid",
    "superseded",
    "other_kind",
    "ineligible",
    "unknown_comparison",
    "malformed",
    "retired",
    "not_admitted",
    "served_other_family",
)
"""Every value of the judgments frame's `status` column, `ok` first."""

JUDGMENT_COLUMNS = (*REQUIRED_JUDGMENT_COLUMNS, *OPTIONAL_JUDGMENT_COLUMNS[:3])
"""The judgments frame: the export's documented columns, then judgment_id, presentation, revision."""
DIM_PREFIX = "dim:"
"""Prefix of the option-scores columns holding one general dimension's score."""
PACK_BASE = 16
"""Base of the packed general-dimension scores of `option_score_rows` (store/importer.py)."""
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
    professional: frozenset[str] = frozenset()
    """Imported candidates marked `professional = true`: the human professional's deliverables (issue 28)."""
    retired_judges: frozenset[str] = frozenset()
    """LLM judges retired from the session (`centaur migrate --retire`): their judgments get status `retired`."""


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
    families.update({c.name: c.family for c in session.candidates})
    families[PLAIN] = session.judging.plain_family
    return Design(
        session=session.name,
        simulated=session.simulated if simulated is None else simulated,
        tasks=tuple(session.all_tasks),
        candidate_order={
            "automation": session.automation_candidates,
            "augmentation": session.augmentation_candidates,
            # Each further worker of a panel ranks the assistants and its own plain (issue 28).
            **{m: candidates_for(session, m) for m in panel_modes(session)},
        },
        candidate_families=families,
        judge_families={j.name: j.family for j in session.judges},
        model_families={
            **{m.name: m.family for m in session.models},
            **{c.name: c.family for c in session.candidates},
        },
        release_order={
            **{m.name: m.release_order for m in session.models if m.release_order is not None},
            **{c.name: c.release_order for c in session.candidates if c.release_order is not None},
        },
        plain=PLAIN,
        worker=session.worker.name if session.worker is not None else None,
        professional=frozenset(c.name for c in session.candidates if c.professional),
        general_dimensions=tuple(general_dimensions),
        rubric={t: tuple(d) for t, d in (rubric or {}).items()},
    )


ASSIGNMENT_COLUMNS = ("expert", "comparison_id", "strategy")
ACTIVE_COLUMNS = ("probability", "position")
"""Columns of `Frames.assignments` kept as numbers (NaN probability: not an active draw)."""
"""Columns of `Frames.assignments`."""


@dataclass
class Frames:
    """The tidy inputs of every statistic.

    String keys (task, mode, judge, candidates, winner, comparison_id) are pandas
    categoricals; all candidate-valued columns share one dtype whose categories are the
    candidate names in sorted order (plus "tie"), so they compare directly.

    Attributes:
        judgments: One row per stored judgment (valid or not) with the export's columns plus
            `candidate_a`/`candidate_b` (the pair sorted by name), `code` (0 = candidate_a
            wins, 1 = candidate_b wins, 2 = tie, -1 = no usable verdict), `winner_pos` (1 =
            the option shown first won, 2 = the second, 0 = tie, -1 = none), `status` (see
            the module docstring), `unit` (row of the comparison in `comparisons`, -1 if
            unknown), `option1_avg`/`option2_avg`/`option1_dims`/`option2_dims` (the
            recomputed unweighted mean of each option's rubric scores and their count) and
            `complete` (both options carry a full set of scores).
        scores: One row per rubric score, with the export's columns (empty when the frames
            were built from option-score rows).
        comparisons: One row per comparison of the session; `length_a`/`length_b` hold the
            length in characters of each candidate's output when the caller passed
            `comparison_lengths` (NaN otherwise).
        candidates: One row per (run, task, mode, candidate) of every tournament, so that a
            candidate with no valid judgment still takes part.
        design: What the session says about families, release order and rubrics.
        option_scores: One row per (judgment_id, candidate): `dims` (dimensions scored),
            `mean` (unweighted mean of its scores) and one `dim:<id>` column per general
            dimension with that score. Every rubric statistic reads this frame.
    """

    judgments: pd.DataFrame
    scores: pd.DataFrame
    comparisons: pd.DataFrame
    candidates: pd.DataFrame
    design: Design
    option_scores: pd.DataFrame = field(default_factory=pd.DataFrame)
    assignments: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(ASSIGNMENT_COLUMNS)))
    """One row per (expert, comparison_id) first place in a queue: the `strategy` that drew it."""

    @cached_property
    def ok(self) -> pd.DataFrame:
        """The judgments every statistic may use (status `ok`)."""
        return self.judgments[(self.judgments["status"] == "ok").to_numpy()]

    @cached_property
    def long(self) -> pd.DataFrame:
        """Two rows per usable judgment, one per option: what that candidate earned and scored.

        Columns: run, task, mode, judge, judgment_id, unit, candidate, opponent, points (1,
        0.5 or 0), shown_first, avg (the candidate's recomputed rubric average; NaN unless
        the judgment is completely scored).
        """
        ok = self.ok
        keys = ok[["run", "task", "mode", "judge", "judgment_id", "unit"]]
        pos = ok["winner_pos"].to_numpy()
        complete = ok["complete"].to_numpy()
        pts1 = np.where(pos == 1, 1.0, np.where(pos == 2, 0.0, 0.5))
        first = keys.assign(
            candidate=ok["option1"].to_numpy(),
            opponent=ok["option2"].to_numpy(),
            points=pts1,
            shown_first=True,
            avg=np.where(complete, ok["option1_avg"].to_numpy(), np.nan),
        )
        second = keys.assign(
            candidate=ok["option2"].to_numpy(),
            opponent=ok["option1"].to_numpy(),
            points=1.0 - pts1,
            shown_first=False,
            avg=np.where(complete, ok["option2_avg"].to_numpy(), np.nan),
        )
        return pd.concat([first, second], ignore_index=True)

    @property
    def runs(self) -> tuple[int, ...]:
        return tuple(sorted(self.candidates["run"].unique().tolist()))

    def tasks(self) -> list[str]:
        """Task ids in the design's order, then any others found in the data."""
        seen = {str(t) for t in self.candidates["task"].unique()} | {str(t) for t in self.comparisons["task"].unique()}
        ordered = [t for t in self.design.tasks if t in seen]
        return ordered + sorted(seen - set(ordered))

    def modes(self) -> list[str]:
        seen = {str(m) for m in self.candidates["mode"].unique()}
        return [m for m in MODES if m in seen] + sorted(seen - set(MODES))

    def candidate_names(self, mode: str) -> list[str]:
        """Candidates of a mode in display order: the design's order, others sorted, plain last."""
        seen = {str(c) for c in self.candidates.loc[self.candidates["mode"] == mode, "candidate"].unique()}
        ordered = [c for c in self.design.candidate_order.get(mode, ()) if c in seen and c != self.design.plain]
        rest = sorted(seen - set(ordered) - {self.design.plain})
        return ordered + rest + ([self.design.plain] if self.design.plain in seen else [])

    def with_judge_kinds(self, kinds: Iterable[str]) -> Frames:
        """The same frames with the statuses recomputed for other judge kinds (e.g. LLM judges and experts).

        Args:
            kinds: Judge kinds whose judgments become usable; the others get status `other_kind`.

        Returns:
            New frames sharing every other table with these.
        """
        j = _mark(self.judgments.copy(), self.comparisons, self.design, tuple(kinds))
        return dataclasses.replace(self, judgments=j)

    @property
    def has_lengths(self) -> bool:
        """True when output lengths are known for at least one comparison."""
        return "length_a" in self.comparisons and bool(self.comparisons["length_a"].notna().any())


def _records(items: Any, columns: tuple[str, ...]) -> pd.DataFrame:
    """A frame from a RowTable, dicts, dataclass records or a mapping of id to record (only `columns` are read)."""
    if isinstance(items, RowTable):
        frame = (
            pd.DataFrame.from_records(items.rows, columns=list(items.columns))
            if items.rows
            else pd.DataFrame(columns=list(items.columns))
        )
        for c in columns:
            if c not in frame:
                frame[c] = None
        return frame[list(columns)]
    if isinstance(items, Mapping):
        items = list(items.values())
    items = items if isinstance(items, list) else list(items)
    if not items:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    if dataclasses.is_dataclass(items[0]):
        return pd.DataFrame({c: [getattr(r, c) for r in items] for c in columns}, columns=list(columns))
    if all(c in items[0] for c in columns):
        frame = pd.DataFrame.from_records(items, columns=list(columns))
    else:  # rows from another tool may lack optional columns
        frame = pd.DataFrame({c: [r.get(c) for r in items] for c in columns}, columns=list(columns))
    return frame


def _as_bool(values: pd.Series) -> pd.Series:
    if values.dtype == bool:
        return values
    if pd.api.types.is_numeric_dtype(values):
        return values.fillna(0).astype(bool)
    text = values.astype("string").str.strip().str.lower()
    return text.isin(["1", "true", "yes"]).fillna(False).astype(bool)


def _categorical(values: pd.Series, dtype: pd.CategoricalDtype | None = None) -> pd.Categorical:
    """Strings as a categorical (empty strings and None become missing); categories in first-seen order
    unless a dtype is given (values outside its categories become missing)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(object)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    uniques = pd.Index([str(u) for u in uniques], dtype=object)
    if dtype is None:
        keep = np.flatnonzero(uniques != "")
        remap = np.full(len(uniques) + 1, -1)
        remap[keep] = np.arange(len(keep))
        categories = uniques[keep]
    else:
        remap = np.append(dtype.categories.get_indexer(uniques), -1)
        categories = None
    new = np.where(codes >= 0, remap[codes], -1)
    if dtype is None:
        return pd.Categorical.from_codes(new, categories=categories)
    return pd.Categorical.from_codes(new, dtype=dtype)


def build_frames(
    judgment_rows: Iterable[Mapping[str, Any]] | Iterable[JudgmentRow] | RowTable,
    score_rows: Iterable[Mapping[str, Any]] | Iterable[ScoreRow] | None,
    output_rows: Iterable[Mapping[str, Any]] | Iterable[OutputRow] | None,
    comparisons: Any,
    design: Design | None = None,
    *,
    judge_kinds: Iterable[str] = ("llm",),
    option_score_rows: Any = None,
    comparison_lengths: Any = None,
    assignment_rows: RowTable | Iterable[Mapping[str, Any]] | None = None,
    retired_judges: Iterable[str] = (),
    judgment_status: Mapping[int, str] | None = None,
) -> Frames:
    """Build the tidy frames from the store's rows.

    Args:
        judgment_rows: `Store.judgment_rows()` (or rows with the same keys, e.g. read from judgments.csv).
        score_rows: `Store.score_rows()`; may be None when `option_score_rows` is given.
        output_rows: `Store.output_rows()` (only run, task, mode and candidate are read), or
            None: every candidate with an output appears in its tournament's comparisons
            unless the tournament has a single output, so comparisons alone define the
            tournaments.
        comparisons: `Store.comparisons()` (a mapping of id to record) or rows with the keys
            id, run, task, mode, candidate_a, candidate_b.
        design: Families, release order and rubrics of the session; without it no judgment is
            marked ineligible and criterion validity has no release order.
        judge_kinds: Judge kinds the statistics use; judgments of other kinds get status `other_kind`.
        option_score_rows: Scores already aggregated per (judgment_id, candidate), with keys
            judgment_id, candidate, dims, mean and `dim:<id>` per general dimension: dicts,
            or the {"columns", "rows", "packed"} mapping that
            `centaur_tui.store.option_score_rows` returns, or a Future of either (resolved only when needed, so the
            caller can read them in a thread meanwhile); used instead of `score_rows`, which hold about
            ten times as many rows.
        comparison_lengths: Output lengths per comparison, for the length bias of judges:
            rows with keys comparison_id, length_a, length_b (`centaur_tui.store.
            comparison_lengths`), or None (length statistics are then NaN with a reason).
        assignment_rows: Which strategy drew each expert's comparison: a RowTable or rows with columns
            expert, comparison_id, strategy (`centaur_tui.store.assignment_strategies`); None: unknown
            (prediction-powered rankings then treat no expert subset as random).
        retired_judges: LLM judges retired from the session (`centaur migrate --retire`): their
            judgments get status `retired`, as do those of comparisons holding a candidate that
            the design's `candidate_order` no longer lists.
        judgment_status: Judgment id -> a status the session's records impose (issue 26):
            `not_admitted` (its judge failed the admission exam, `judging.admit_enforce`) or
            `served_other_family` (a model of another family answered the call).

    Returns:
        The frames.
    """
    design = design or Design()
    if retired_judges:
        design = dataclasses.replace(design, retired_judges=design.retired_judges | frozenset(retired_judges))
    comps = _records(comparisons, COMPARISON_COLUMNS)
    comps["run"] = pd.to_numeric(comps["run"]).astype("int64")
    comps = _attach_lengths(comps, comparison_lengths)
    j = _records(judgment_rows, JUDGMENT_COLUMNS)
    o = _records(output_rows or [], ("run", "task", "mode", "candidate"))

    # One dtype for every candidate-valued column, categories sorted by name: candidate_a is
    # then simply the smaller code of the two options.
    names: set[str] = set()
    for column in (comps["candidate_a"], comps["candidate_b"], o["candidate"], j["option1"], j["option2"], j["winner"]):
        names.update(str(x) for x in pd.unique(column.dropna()))
    names.discard("")
    cand = pd.CategoricalDtype(sorted({str(n) for n in names} | {TIE}))
    for col in ("candidate_a", "candidate_b"):
        comps[col] = _categorical(comps[col], cand)
    o["candidate"] = _categorical(o["candidate"], cand)

    j["valid"] = _as_bool(j["valid"])
    for col in ("run", "presentation", "revision", "judgment_id"):
        j[col] = pd.to_numeric(j[col], errors="coerce").fillna(0).astype("int64")
    for col in ("option1_mean", "option2_mean"):
        j[col] = pd.to_numeric(j[col], errors="coerce").astype("float64")
    for col in ("invalid_reason", "rationale"):
        j[col] = j[col].astype(object).where(j[col].notna() & (j[col].astype(object) != ""), None)
    for col in ("option1", "option2", "winner"):
        j[col] = _categorical(j[col], cand)
    for col in ("task", "mode", "judge", "judge_kind", "judge_family", "comparison_id"):
        j[col] = _categorical(j[col])

    pairs = pd.concat(
        [
            comps[["run", "task", "mode", "candidate_a"]].set_axis(["run", "task", "mode", "candidate"], axis=1),
            comps[["run", "task", "mode", "candidate_b"]].set_axis(["run", "task", "mode", "candidate"], axis=1),
            o,
        ],
        ignore_index=True,
    )
    pairs["run"] = pd.to_numeric(pairs["run"]).astype("int64")
    pairs["candidate"] = pairs["candidate"].astype(cand)
    candidates = (
        pairs.dropna().drop_duplicates().sort_values(["mode", "task", "run", "candidate"]).reset_index(drop=True)
    )
    if design.candidate_order:
        # A candidate the session no longer has (retired) takes no place in any tournament it ranks.
        keep = [
            mode not in design.candidate_order or str(c) in design.candidate_order[mode]
            for mode, c in zip(candidates["mode"], candidates["candidate"], strict=True)
        ]
        # A boolean array, not a list: `frame[[]]` would select no columns (a session with no comparison).
        candidates = candidates[np.array(keep, dtype=bool)].reset_index(drop=True)

    j = _mark(j, comps, design, tuple(judge_kinds), judgment_status)
    if option_score_rows is not None:
        s = _records([], SCORE_COLUMNS)
        if hasattr(option_score_rows, "result"):  # a Future: the caller overlapped the read with our work
            option_score_rows = option_score_rows.result()
        option = _option_rows(option_score_rows, cand)
    else:
        s = _records(score_rows or [], SCORE_COLUMNS)
        s["score"] = pd.to_numeric(s["score"], errors="coerce").astype("float64")
        s["judgment_id"] = pd.to_numeric(s["judgment_id"], errors="coerce").fillna(-1).astype("int64")
        s["candidate"] = _categorical(s["candidate"], cand)
        option = option_scores_from(s, design.general_dimensions)

    j = _attach_averages(j, option, design)
    if not isinstance(assignment_rows, RowTable):
        assignment_rows = list(assignment_rows or [])
    assignments = _records(assignment_rows, ASSIGNMENT_COLUMNS + ACTIVE_COLUMNS)
    for col in ASSIGNMENT_COLUMNS:
        assignments[col] = assignments[col].astype(str)
    for col in ACTIVE_COLUMNS:  # an active draw's probability and its queue position (stats/active.py)
        assignments[col] = pd.to_numeric(assignments[col], errors="coerce").astype("float64")
    return Frames(
        judgments=j,
        scores=s,
        comparisons=comps,
        candidates=candidates,
        design=design,
        option_scores=option,
        assignments=assignments,
    )


def _attach_lengths(comps: pd.DataFrame, lengths: Any) -> pd.DataFrame:
    """Add length_a/length_b (characters of each candidate's output; NaN when unknown)."""
    comps["length_a"] = np.nan
    comps["length_b"] = np.nan
    if lengths is None:
        return comps
    rows = _records(lengths, ("comparison_id", "length_a", "length_b"))
    at = pd.Index(comps["id"].astype(str)).get_indexer(rows["comparison_id"].astype(str))
    keep = at >= 0
    for col in ("length_a", "length_b"):
        values = pd.to_numeric(rows[col], errors="coerce").to_numpy(dtype=float)
        column = comps[col].to_numpy(dtype=float).copy()
        column[at[keep]] = values[keep]
        comps[col] = column
    return comps


def _option_rows(rows: Any, cand: pd.CategoricalDtype) -> pd.DataFrame:
    packed: list[str] = []
    if isinstance(rows, Mapping):
        columns, data, packed = list(rows["columns"]), rows["rows"], list(rows.get("packed", []))
    else:
        data = rows if isinstance(rows, list) else list(rows)
        columns = list(data[0].keys()) if data else ["judgment_id", "candidate", "dims", "mean"]
    out = pd.DataFrame.from_records(data, columns=columns) if len(data) else pd.DataFrame(columns=columns)
    if packed:
        # Unpack the general-dimension scores: digit k (base 16) is the k-th dimension, 0 = not scored.
        value = pd.to_numeric(out.pop("general")).fillna(0).to_numpy(dtype="int64")
        for k, dim in enumerate(packed):
            digit = (value // PACK_BASE**k) % PACK_BASE
            out[DIM_PREFIX + dim] = np.where(digit > 0, digit, np.nan)
        columns = [*columns[:-1], *(DIM_PREFIX + d for d in packed)]
    out["judgment_id"] = pd.to_numeric(out["judgment_id"]).astype("int64")
    out["candidate"] = _categorical(out["candidate"], cand)
    out["dims"] = pd.to_numeric(out["dims"]).astype("int64")
    for c in columns:
        if c == "mean" or c.startswith(DIM_PREFIX):
            out[c] = pd.to_numeric(out[c], errors="coerce").astype("float64")
    return out


def option_scores_from(scores: pd.DataFrame, general_dimensions: Iterable[str] = ()) -> pd.DataFrame:
    """Aggregate a scores frame per (judgment_id, candidate): dims, mean, and one column per general dimension.

    Args:
        scores: Rows with judgment_id, candidate, dimension, dimension_kind, score.
        general_dimensions: Dimensions to spread into `dim:<id>` columns; default: those
            whose dimension_kind is "general".

    Returns:
        The option-scores frame (see `Frames`).
    """
    general = list(general_dimensions) or sorted(
        scores.loc[scores["dimension_kind"] == "general", "dimension"].unique()
    )
    keys = ["judgment_id", "candidate"]
    if scores.empty:
        return pd.DataFrame(
            {
                "judgment_id": pd.Series(dtype="int64"),
                "candidate": scores["candidate"],
                "dims": pd.Series(dtype="int64"),
                "mean": pd.Series(dtype="float64"),
                **{DIM_PREFIX + d: pd.Series(dtype="float64") for d in general},
            }
        )
    agg = scores.groupby(keys, sort=False)["score"].agg(dims="count", mean="mean")
    wide = scores[scores["dimension"].isin(general)].pivot_table(
        index=keys, columns="dimension", values="score", aggfunc="first", sort=False
    )
    wide = wide.reindex(columns=general).rename(columns=lambda d: DIM_PREFIX + d)
    wide.columns.name = None
    return agg.join(wide).reset_index()


def _mark(
    j: pd.DataFrame,
    comps: pd.DataFrame,
    design: Design,
    kinds: tuple[str, ...],
    imposed: Mapping[int, str] | None = None,
) -> pd.DataFrame:
    """Add candidate_a/candidate_b, code, winner_pos, unit and status to the judgments."""
    cand = j["option1"].dtype
    c1 = j["option1"].cat.codes.to_numpy()
    c2 = j["option2"].cat.codes.to_numpy()
    cw = j["winner"].cat.codes.to_numpy()
    valid = j["valid"].to_numpy()
    a, b = np.minimum(c1, c2), np.maximum(c1, c2)
    j["candidate_a"] = pd.Categorical.from_codes(a, dtype=cand)
    j["candidate_b"] = pd.Categorical.from_codes(b, dtype=cand)
    tie = cand.categories.get_loc(TIE)
    code = np.full(len(j), -1, dtype="int64")
    code[cw == a] = 0
    code[cw == b] = 1
    code[cw == tie] = 2
    code[(~valid) | (cw < 0) | (c1 < 0) | (c2 < 0)] = -1
    pos = np.full(len(j), -1, dtype="int64")
    pos[cw == c1] = 1
    pos[cw == c2] = 2
    pos[cw == tie] = 0
    pos[code == -1] = -1
    j["code"] = code
    j["winner_pos"] = pos
    j["unit"] = pd.Index(comps["id"]).get_indexer(j["comparison_id"].astype(object))

    status = np.full(len(j), "ok", dtype=object)
    status[(code == -1) & valid] = "malformed"
    status[~valid] = "invalid"
    fam = design.candidate_families
    if fam and len(j):
        cat_fam = np.array([fam.get(c) for c in cand.categories], dtype=object)
        fam_a = np.where(a >= 0, cat_fam[a], None)
        fam_b = np.where(b >= 0, cat_fam[b], None)
        jf = j["judge_family"].astype(object).to_numpy()
        ineligible = pd.notna(jf) & ((jf == fam_a) | (jf == fam_b))
        status[ineligible] = "ineligible"
    status[j["unit"].to_numpy() < 0] = "unknown_comparison"
    status[~j["judge_kind"].isin(kinds).to_numpy()] = "other_kind"
    retired_judges = design.retired_judges
    if len(j) and (design.candidate_order or retired_judges):
        # Items of entries no longer in the session: stored, never counted (issue 23).
        names = np.array([str(c) for c in cand.categories], dtype=object)
        modes = j["mode"].astype(object).to_numpy()
        allowed = {m: set(c) for m, c in design.candidate_order.items()}
        gone = np.zeros(len(j), dtype=bool)
        known = (a >= 0) & (b >= 0)
        for m, listed in allowed.items():
            ok = np.array([n in listed or n == TIE for n in names], dtype=bool)
            rows = (modes == m) & known
            gone[rows] = ~ok[a[rows]] | ~ok[b[rows]]
        if retired_judges:
            gone |= (
                j["judge"].astype(object).isin(retired_judges) & (j["judge_kind"].astype(object) == "llm")
            ).to_numpy()
        status[gone] = "retired"
    if imposed and len(j):
        ids = j["judgment_id"].to_numpy()
        for value in ("not_admitted", "served_other_family"):
            chosen = [i for i, v in imposed.items() if v == value]
            if chosen:
                status[np.isin(ids, chosen) & (status == "ok")] = value
    if len(j) and (j["revision"] > 0).any():
        latest = j.groupby(["comparison_id", "judge", "presentation"], observed=True)["revision"].transform("max")
        status[(j["revision"] < latest).to_numpy()] = "superseded"
    j["status"] = pd.Categorical(status, categories=list(STATUSES))
    return j


def _attach_averages(j: pd.DataFrame, option: pd.DataFrame, design: Design) -> pd.DataFrame:
    """Add each option's recomputed rubric average, number of scored dimensions and `complete`.

    With the session's rubric known, complete means both options scored on every dimension
    of the task; without it, both scored on the same, non-zero number of dimensions.
    """
    index = pd.MultiIndex.from_arrays([option["judgment_id"].to_numpy(), option["candidate"].cat.codes.to_numpy()])
    # A sentinel at the end: get_indexer's -1 (not found) then reads NaN / 0 dimensions.
    means = np.append(option["mean"].to_numpy(dtype=float), np.nan)
    dims = np.append(option["dims"].to_numpy(dtype="int64"), 0)
    for opt in ("option1", "option2"):
        at = index.get_indexer(pd.MultiIndex.from_arrays([j["judgment_id"].to_numpy(), j[opt].cat.codes.to_numpy()]))
        j[f"{opt}_avg"] = means[at]
        j[f"{opt}_dims"] = dims[at]
    d1, d2 = j["option1_dims"].to_numpy(), j["option2_dims"].to_numpy()
    complete = (d1 > 0) & (d1 == d2)
    if design.rubric:
        expected = j["task"].astype(object).map({t: len(d) for t, d in design.rubric.items()}).fillna(0).to_numpy()
        complete &= (expected == 0) | (d1 == expected)
    j["complete"] = complete
    return j


def status_counts(judgments: pd.DataFrame) -> dict[str, int]:
    """How many judgments of a frame have each status other than `ok` (zero counts left out)."""
    counts = judgments["status"].value_counts()
    return {k: int(counts.get(k, 0)) for k in STATUSES[1:] if int(counts.get(k, 0))}


def status_table(judgments: pd.DataFrame, by: str) -> dict[Any, dict[str, int]]:
    """`status_counts` per value of a column, in one pass."""
    sub = judgments[judgments["status"] != "ok"]
    if sub.empty:
        return {}
    counts = sub.groupby([by, "status"], observed=True).size()
    out: dict[Any, dict[str, int]] = {}
    for (key, status), n in counts.items():
        if n:
            out.setdefault(key, {})[str(status)] = int(n)
    return {k: {s: v[s] for s in STATUSES[1:] if s in v} for k, v in out.items()}
