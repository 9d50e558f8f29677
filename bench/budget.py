"""Provides the budget benchmark: the share of `max_cost_usd` a run spends before it stops (not a test).

Run: .venv/bin/python bench/budget.py [--runs 6] [--concurrency 8] [--latency 0.05]

A realistic fake provider (tests/support/provider_server.py on 127.0.0.1: usage counted with
cl100k_base as OpenAI counts it, deliverables of about 530 tokens against a `max_tokens` of 8,000,
judgments against 2,000, 0.05 s a reply) answers a session of `runs` x 15 calls through litellm's
real HTTP path at concurrency 16. A first run without a budget gives the full cost; then each
budget (25%, 50%, 75% of it) runs on a fresh database, and the benchmark reports the spent share:
what the run recorded (answered calls plus the estimate for requests billed without an answer)
over the budget, and what the provider billed by its own count over the budget. Targets (issue
23): at least 90% spent before the stop, never above 100% unless the provider over-reports (then
shown). A call is sent only when its worst case fits, so what stays unspent is below one call's
worst case (here about $0.017 of worst case against a typical $0.0013 reply).

Two hostile providers too: one stalling every 10th request past the client's timeout (billed,
the answer lost; each is estimated at its worst case, so the recorded share covers the billed
one), and one reporting 3x its usage (settled at its report; every reservation, in flight and
later, grows by the ratio).

Measured 2026-12-02 on the shared 2-core machine (other helpers' tests alongside), runs 6 (90
calls, full cost $0.2697), concurrency 16:

    honest       25%: recorded  90.0%, billed  90.0%; 25 of 90 calls; exit 5
    honest       50%: recorded  95.7%, billed  95.7%; 47 of 90 calls; exit 5
    honest       75%: recorded  96.4%, billed  96.4%; 69 of 90 calls; exit 5
    timeouts     50%: recorded  96.2% (31.3% estimated for 3 unanswered), billed  71.1%; exit 5
    over-report  50%: recorded  99.6%, billed  99.6%; over-reported $0.0042 in 1 call above its reservation

Before (main at 792a276: the first refused reservation stopped every later call, and the worst
cases of all calls in flight counted at once), the same honest runs spent 8.4%, 9.7% and 10.3% of
the 25%, 50% and 75% budgets (3, 7 and 11 calls); the timed-out requests were not counted at all.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.provider_server import PLANNED, http_session, provider_server  # noqa: E402 - after the path


def session(api_base: str, budget: float | None, runs: int, concurrency: int, timeout_s: float) -> str:
    limits = (f"max_cost_usd = {budget:.6f}\n" if budget is not None else "") + f"timeout_s = {timeout_s}\n"
    text = http_session(api_base, limits=limits)
    text = text.replace(
        "concurrency = 1\nper_model_concurrency = 1", f"concurrency = {concurrency}\nper_model_concurrency = 8"
    )
    # Budgets are kept against worst cases: a max_tokens far above the typical reply (8,000 for
    # deliverables of about 530 tokens) is where reservations starved the run before (issue 23).
    text = text.replace("[generation]\nmax_tokens = 1000", "[generation]\nmax_tokens = 8000")
    text = text.replace("[judging]\nmax_tokens = 400", "[judging]\nmax_tokens = 2000")
    return text.replace("runs = 1", f"runs = {runs}")


def run_once(text: str, folder: Path) -> tuple[Any, float, float]:
    """Run a session file; returns (outcome, recorded spend of answered calls, estimated unanswered spend)."""
    from centaur_tui.catalog import load_session
    from centaur_tui.services.run import run_study
    from centaur_tui.store import Store

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cost.toml"
    path.write_text(text, encoding="utf-8")
    study = load_session(path)
    with Store(study.database) as store:
        outcome = run_study(study, store)
    with sqlite3.connect(study.database) as conn:
        spent = conn.execute("SELECT coalesce(sum(cost), 0) FROM calls").fetchone()[0]
        unanswered = conn.execute("SELECT coalesce(sum(usd), 0) FROM unanswered_spend").fetchone()[0]
    return outcome, float(spent), float(unanswered)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    from centaur_tui.services.run import exit_status

    planned = PLANNED * args.runs
    tmp = Path(tempfile.mkdtemp(prefix="centaur-budget-"))
    started = time.perf_counter()
    with provider_server(words=400, latency_s=args.latency) as server:
        _, full, _ = run_once(session(server.api_base, None, args.runs, args.concurrency, 30.0), tmp / "full")
    print(f"full cost of {planned} calls: ${full:.4f} ({time.perf_counter() - started:.1f} s)")
    for share in (0.25, 0.5, 0.75):
        budget = full * share
        with provider_server(words=400, latency_s=args.latency) as server:
            outcome, spent, unanswered = run_once(
                session(server.api_base, budget, args.runs, args.concurrency, 30.0), tmp / f"honest{share}"
            )
            billed = server.billed()
            sent = server.answered
        print(
            f"honest      {share:4.0%}: recorded {(spent + unanswered) / budget:6.1%}, billed {billed / budget:6.1%}; "
            f"{sent} of {planned} calls; exit {exit_status(outcome)}"
        )
    budget = full * 0.5
    with provider_server(words=400, latency_s=args.latency, stall_every=10, stall_s=2.0) as server:
        outcome, spent, unanswered = run_once(
            session(server.api_base, budget, args.runs, args.concurrency, 1.0), tmp / "timeouts"
        )
        server.stall_done.wait(5)
        time.sleep(2.5)  # the last stalled request is billed once the server answers it, late
        billed = server.billed()
    p = outcome.progress
    print(
        f"timeouts     50%: recorded {(spent + unanswered) / budget:6.1%} ({unanswered / budget:.1%} estimated for "
        f"{p.unanswered} unanswered), billed {billed / budget:6.1%}; exit {exit_status(outcome)}"
    )
    with provider_server(words=400, latency_s=args.latency, report_factor=3.0) as server:
        outcome, spent, unanswered = run_once(
            session(server.api_base, budget, args.runs, args.concurrency, 30.0), tmp / "over"
        )
        billed = server.billed()
    p = outcome.progress
    print(
        f"over-report  50%: recorded {(spent + unanswered) / budget:6.1%}, billed {billed / budget:6.1%}; "
        f"over-reported ${p.over_reported:.4f} in {p.over_reports} call(s) above their reservations (shown)"
    )


if __name__ == "__main__":
    main()
