"""Writes tests/data/ppi_reference.json: ppi-python's own estimates, which tests/test_ppr.py checks stats/ppr.py against.

ppi-python is not a dependency of centaur-tui (it pulls in numba, llvmlite, scikit-learn,
statsmodels and gdown). Run this in a separate virtual environment:

    python -m venv /tmp/ppivenv && /tmp/ppivenv/bin/pip install ppi-python==0.2.3 numpy==2.4.6 scipy==1.17.1 pandas==3.1.1
    /tmp/ppivenv/bin/python bench/ppi_reference.py > tests/data/ppi_reference.json
"""

# ruff: noqa
import json, numpy as np
from ppi_py import ppi_mean_pointestimate, ppi_mean_ci

rng = np.random.default_rng(7)
# three candidates, 30 labelled + 90 unlabelled comparisons
k = 3
a = rng.integers(0, k, 120)
b = (a + rng.integers(1, k, 120)) % k
yhat = rng.choice([0.0, 0.5, 1.0, 1 / 3, 2 / 3], 120)
y = np.clip(np.round(yhat + rng.normal(0, 0.4, 120)), 0, 1)
lab = np.zeros(120, bool)
lab[rng.choice(120, 30, replace=False)] = True
out = {
    "a": a.tolist(),
    "b": b.tolist(),
    "yhat": yhat.tolist(),
    "y": y.tolist(),
    "labeled": lab.tolist(),
    "k": k,
    "results": {},
}
for lam_name, lam in (("tuned", None), ("one", 1.0)):
    rows = []
    for m in range(k):
        inv = (a == m) | (b == m)
        pts_h = np.where(a == m, yhat, 1 - yhat)
        pts_y = np.where(a == m, y, 1 - y)
        L = inv & lab
        U = inv & ~lab
        est = float(np.asarray(ppi_mean_pointestimate(pts_y[L], pts_h[L], pts_h[U], lam=lam)).squeeze())
        lo, hi = ppi_mean_ci(pts_y[L], pts_h[L], pts_h[U], alpha=0.1, lam=lam)
        rows.append({"theta": est, "ci_low_90": float(np.squeeze(lo)), "ci_high_90": float(np.squeeze(hi))})
    out["results"][lam_name] = rows
import ppi_py, importlib.metadata as md

out["ppi_python"] = md.version("ppi-python")
print(json.dumps(out))
