"""Writes tests/data/stopping_reference.json: the two-sided normal-mixture boundary in 50-digit arithmetic.

confseq (the authors' package) is sdist-only with a C++/Boost build that did not finish on
this machine, so the reference is the closed form of Howard et al. (2021), eq. (14),
sqrt((v + rho) log((v + rho) / (rho alpha^2))) with confseq's best_rho, evaluated in
`decimal` at 50 digits (an algebraic form other than the one in `stats.stopping`).

    .venv/bin/python bench/stopping_reference.py
"""

from __future__ import annotations

import json
from decimal import Decimal, getcontext
from pathlib import Path

getcontext().prec = 50


def bound(v: Decimal, alpha: Decimal, v_opt: Decimal, alpha_opt: Decimal) -> Decimal:
    la = (1 / alpha_opt).ln()
    rho = v_opt / (2 * la + (1 + 2 * la).ln())
    return ((v + rho) * ((v + rho) / (rho * alpha * alpha)).ln()).sqrt()


def main() -> None:
    cases = []
    for v in ("1", "7", "30", "100", "250", "1000", "123456"):
        for alpha, v_opt, alpha_opt in (("0.05", "100", "0.05"), ("0.1", "25", "0.05"), ("0.01", "400", "0.2")):
            b = bound(Decimal(v), Decimal(alpha), Decimal(v_opt), Decimal(alpha_opt))
            cases.append(
                {
                    "v": float(v),
                    "alpha": float(alpha),
                    "v_opt": float(v_opt),
                    "alpha_opt": float(alpha_opt),
                    "bound": float(b),
                }
            )
    out = Path(__file__).parent.parent / "tests" / "data" / "stopping_reference.json"
    out.write_text(json.dumps({"source": __doc__.splitlines()[0], "cases": cases}, indent=1) + "\n")
    print(f"{len(cases)} cases written to {out}")


if __name__ == "__main__":
    main()
