"""Provides the agreement matrix: every expert against every LLM judge and every other expert, per dimension.

For each pair of judges and each dimension (the winner, then each rubric dimension), the
comparisons both labelled (domain/agreement.py), how many labels agree, the share that agree
and Cohen's kappa over the three labels (a, b, tie); kappa is left out (None) below
`KAPPA_MIN_N` shared comparisons or when chance agreement is 1. The drill-down
(services/audit.py) lists exactly the `n - agree` comparisons of a cell.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from centaur_tui.domain.agreement import WINNER, Label
from centaur_tui.report.document import AgreementCell, AgreementMatrixSection
from centaur_tui.stats.agreement import KAPPA_MIN_N, kappa_from_confusion

VALUES = ("a", "b", "tie")


def _pairs(kinds: dict[str, str]) -> list[tuple[str, str]]:
    experts = sorted(j for j, k in kinds.items() if k == "expert")
    others = sorted(j for j, k in kinds.items() if k != "expert")
    pairs = [(e, o) for e in experts for o in others]
    pairs += [(a, b) for i, a in enumerate(experts) for b in experts[i + 1 :]]
    return pairs


def agreement_matrix(found: Iterable[Label], reference: str = "judgments") -> AgreementMatrixSection | None:
    """The matrix of a session's labels; None without any expert label.

    Args:
        found: Every label (`domain.agreement.labels`), the adjudicated verdicts among them
            (judge kind "adjudicated") when the report asks for them as reference labels.
        reference: What the section states about its reference labels.
    """
    frame = pd.DataFrame([(x.comparison_id, x.judge, x.judge_kind, x.dimension, x.value) for x in found],
                         columns=["comparison_id", "judge", "kind", "dimension", "value"])  # fmt: skip
    if frame.empty or not (frame["kind"] == "expert").any():
        return None
    kinds = dict(zip(frame["judge"], frame["kind"], strict=True))
    dims = [WINNER, *sorted(set(frame["dimension"]) - {WINNER})]
    code = frame["value"].map({v: i for i, v in enumerate(VALUES)}).to_numpy()
    frame = frame.assign(code=code)
    cells: list[AgreementCell] = []
    for dim in dims:
        wide = frame[frame["dimension"] == dim].pivot(index="comparison_id", columns="judge", values="code")
        for a, b in _pairs(kinds):
            if a not in wide or b not in wide:
                continue
            both = wide[[a, b]].dropna().to_numpy(dtype=int)
            n = int(both.shape[0])
            if n == 0:
                continue
            agree = int((both[:, 0] == both[:, 1]).sum())
            confusion = np.zeros(9)
            np.add.at(confusion, both[:, 0] * 3 + both[:, 1], 1)
            kappa = float(kappa_from_confusion(confusion))
            cells.append(
                AgreementCell(
                    judge_a=a,
                    kind_a=kinds[a],
                    judge_b=b,
                    kind_b=kinds[b],
                    dimension=dim,
                    n=n,
                    agree=agree,
                    agreement=agree / n,
                    kappa=None if n < KAPPA_MIN_N or math.isnan(kappa) else kappa,
                )
            )
    return AgreementMatrixSection(reference=reference, dimensions=dims, kappa_min_n=KAPPA_MIN_N, cells=cells)
