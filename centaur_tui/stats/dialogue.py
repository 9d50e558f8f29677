"""Provides the dialogue comparison: each assistant's rank at 1 turn and at N turns ([augmentation] turns, issue 28).

With `turns = N > 1` every assistant has two candidates in the augmentation tournament: its own
name (one assistance text, the paper's design) and its dialogue candidate (the same text, then
N - 1 rounds of questions and answers before the worker writes). Both sets are judged in one
round robin with plain, so each set's ranking comes from the judgments among its own candidates
and plain only (a sub-tournament), and the head-to-head column compares an assistant's two
candidates directly. Win rates pool runs, tasks and judges (ties count half); ranks use the
average method (1 = best). Every number says its games; nothing is excluded silently: the
augmentation judgments not used are counted by status.
"""

from __future__ import annotations

import math

import pandas as pd

from centaur_tui.report.document import DialogueRow, DialogueSection
from centaur_tui.stats.frames import Frames, status_counts

MODE = "augmentation"


def _points(ok: pd.DataFrame, members: set[str]) -> pd.DataFrame:
    """Per candidate: points and games over the judgments whose two candidates are both in `members`."""
    a, b = ok["candidate_a"].astype(str), ok["candidate_b"].astype(str)
    sub = ok[a.isin(members).to_numpy() & b.isin(members).to_numpy()]
    code = sub["code"].to_numpy()
    pa = pd.Series((code == 0) * 1.0 + (code == 2) * 0.5, index=sub.index)
    long = pd.concat(
        [
            pd.DataFrame({"candidate": sub["candidate_a"].astype(str), "points": pa}),
            pd.DataFrame({"candidate": sub["candidate_b"].astype(str), "points": 1.0 - pa}),
        ]
    )
    out = long.groupby("candidate")["points"].agg(["sum", "size"])
    return out.reindex(sorted(members)).fillna(0.0)


def _ranks(table: pd.DataFrame) -> dict[str, float | None]:
    rates = table["sum"] / table["size"].where(table["size"] > 0)
    ranks = rates.rank(ascending=False, method="average")
    return {c: (None if math.isnan(r) else float(r)) for c, r in ranks.items()}


def dialogue_section(frames: Frames, pairs: dict[str, str], turns: int, plain: str) -> DialogueSection:
    """The 1-turn and N-turn ranks of each assistant.

    Args:
        frames: The report's frames (their usable judgments of the augmentation mode are read).
        pairs: Each assistant's dialogue candidate (`Session.dialogue_candidates`), by assistant.
        turns: `[augmentation] turns`.
        plain: The unaided worker's candidate name.
    """
    j = frames.judgments
    aug = j[(j["mode"].astype(str) == MODE).to_numpy()]
    ok = aug[(aug["status"] == "ok").to_numpy()]
    one, many = set(pairs) | {plain}, set(pairs.values()) | {plain}
    t1, tn = _points(ok, one), _points(ok, many)
    r1, rn = _ranks(t1), _ranks(tn)
    rows = []
    n_head = 0
    for assistant, candidate in sorted(pairs.items()):
        head = _points(ok, {assistant, candidate})
        games = int(head.loc[candidate, "size"])
        n_head += games
        g1, gn = int(t1.loc[assistant, "size"]), int(tn.loc[candidate, "size"])
        reason = None if g1 and gn else "no usable judgment at 1 turn or at N turns"
        rows.append(
            DialogueRow(
                assistant=assistant,
                dialogue_candidate=candidate,
                rank_1=r1[assistant],
                win_rate_1=float(t1.loc[assistant, "sum"] / g1) if g1 else None,
                games_1=g1,
                rank_n=rn[candidate],
                win_rate_n=float(tn.loc[candidate, "sum"] / gn) if gn else None,
                games_n=gn,
                head_to_head=float(head.loc[candidate, "sum"] / games) if games else None,
                head_to_head_games=games,
                reason=reason,
            )
        )

    def used(members: set[str]) -> int:
        a, b = ok["candidate_a"].astype(str), ok["candidate_b"].astype(str)
        return int((a.isin(members) & b.isin(members)).sum())

    return DialogueSection(
        turns=turns,
        plain=plain,
        n_1=used(one),
        n_n=used(many),
        n_head_to_head=n_head,
        excluded=status_counts(aug),
        rows=rows,
    )
