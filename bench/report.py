"""Benchmark: `centaur report` without figures on synthetic stores at the paper's scale and 10x (not a test).

Run: .venv/bin/python bench/report.py [--scales 1,10] [--bootstrap 200] [--keep DIR]

For each scale the paper's design (sessions/paper.toml: 10 candidates, 4 judges, 7 tasks,
10 runs) is enlarged by multiplying the runs (10x = 100 runs = 63,000 comparisons), judged
synthetically (`centaur_tui.stats.synthetic`, 2% invalid), and written to a real SQLite
session database (outputs, comparisons, and judgments with scores through the importer).
Then the report path is timed exactly as `centaur report` runs it:

    store reads  Store.meta(), judgment_rows(), comparisons(); the scores aggregated per
                 (judgment, option) in SQL (store/importer.py: option_score_rows) start in a
                 worker thread here and are awaited inside build_frames
    frames       build_frames (tidy frames, statuses, rubric averages; includes waiting for
                 the score aggregate)
    statistics   build_report (every statistic, Bradley-Terry bootstrap, exact p-values)
    render       text, Markdown and JSON of the document

Targets (issue 3): total < 2 s at the paper's scale, < 10 s at 10x.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from centaur_tui.catalog import load_session  # noqa: E402
from centaur_tui.domain.records import JudgmentRecord, ScoreRecord  # noqa: E402
from centaur_tui.domain.study import Study  # noqa: E402
from centaur_tui.report import to_json, to_markdown, to_text  # noqa: E402
from centaur_tui.services.report import load_report_inputs  # noqa: E402
from centaur_tui.stats.frames import build_frames, design_from_session  # noqa: E402
from centaur_tui.stats.report import ReportOptions, build_report  # noqa: E402
from centaur_tui.stats.synthetic import synthetic_rows  # noqa: E402
from centaur_tui.store import Store, store_judgments  # noqa: E402

TARGETS = {1: 2.0, 10: 10.0}


def build_store(study: Study, path: Path) -> dict[str, int]:
    """Write a synthetic judged session into a fresh database; returns its sizes."""
    s = study.session
    rubric = {t: [(d, study.rubric(t).kind(d)) for d in study.rubric(t).ids] for t in s.tasks}
    rows = synthetic_rows(s, rubric, seed=1, noise=1.2, invalid_rate=0.02)
    by_id: dict[int, list[ScoreRecord]] = {}
    for r in rows.score_rows:
        by_id.setdefault(r.judgment_id, []).append(ScoreRecord(r.candidate, r.dimension, r.dimension_kind, r.score))
    records = [
        JudgmentRecord(
            comparison_id=r.comparison_id,
            judge=r.judge,
            judge_kind="llm",
            judge_family=r.judge_family,
            presentation=r.presentation,
            option1=r.option1,
            option2=r.option2,
            winner=r.winner,
            option1_mean=r.option1_mean,
            option2_mean=r.option2_mean,
            valid=r.valid,
            invalid_reason=r.invalid_reason,
            rationale=r.rationale,
            call_key=None,
            attempts=r.attempts,
            scores=tuple(by_id.get(r.judgment_id, ())),
            id=r.judgment_id,
        )
        for r in rows.judgment_rows
    ]
    with Store(path) as store:
        with store.write() as c:  # one transaction for the outputs: the bench is not a writer to optimise
            c.executemany(
                "INSERT INTO outputs (id, run, task, mode, candidate, worker, worker_kind, text, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, 'model', '', '2026-01-01')",
                [(o.output_id, o.run, o.task, o.mode, o.candidate, o.worker) for o in rows.output_rows],
            )
        store.save_comparisons(rows.comparisons)
        store_judgments(store, records)
        store.set_meta({"session": s.name, "simulated": "true"})
        counts = store.counts()
    return {
        "comparisons": counts.comparisons,
        "judgments": counts.judgments,
        "invalid": counts.invalid_judgments,
        "scores": len(rows.score_rows),
    }


def time_report(study: Study, options: dict[str, object]) -> dict[str, float]:
    """Time one report without figures as `centaur report` builds it, stage by stage (wall seconds)."""
    t0, c0 = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(1) as pool:  # as `centaur report` does: the score aggregate overlaps the rest
        meta, rows = load_report_inputs(study, pool)
        t1 = time.perf_counter()
        design = design_from_session(
            study.session,
            simulated=meta.get("simulated") == "true",
            general_dimensions=[d.id for d in study.universal.general_dimensions],
            rubric={t: study.rubric(t).ids for t in study.tasks},
        )
        frames = build_frames(design=design, **rows)
    t2 = time.perf_counter()
    report = build_report(frames, ReportOptions(**options))  # type: ignore[arg-type]
    t3 = time.perf_counter()
    text = to_text(report.document)
    md = to_markdown(report.document)
    js = to_json(report.document)
    t4 = time.perf_counter()
    assert "SIMULATED DATA" in text and "SIMULATED DATA" in md and len(js) > 1000
    return {
        "store reads": t1 - t0,
        "frames": t2 - t1,
        "statistics": t3 - t2,
        "render": t4 - t3,
        "total": t4 - t0,
        "cpu (all threads)": time.process_time() - c0,
    }


def time_raw_scores(study: Study) -> float:
    """Seconds to read every score row with `Store.score_rows()` (the path the report avoids)."""
    t0 = time.perf_counter()
    with Store(study.database) as store:
        store.score_rows()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,10", help="Comma-separated multiples of the paper's 10 runs.")
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3, help="Timed repeats per scale; the best is reported.")
    parser.add_argument("--keep", type=Path, default=None, help="Keep the databases in this folder.")
    args = parser.parse_args()
    paper = load_session(ROOT / "sessions" / "paper.toml")
    folder = Path(tempfile.mkdtemp(prefix="centaur-bench-report-")) if args.keep is None else args.keep
    folder.mkdir(parents=True, exist_ok=True)
    options = {"bootstrap": args.bootstrap}
    print(f"Report benchmark (no figures); bootstrap {args.bootstrap}; best of {args.repeat} runs per scale")
    results = []
    try:
        for scale in (int(x) for x in args.scales.split(",")):
            session = paper.session.model_copy(update={"runs": paper.session.runs * scale, "name": f"paper-x{scale}"})
            study = Study(
                session=session,
                tasks=paper.tasks,
                universal=paper.universal,
                session_file=paper.session_file,
                database=folder / f"paper-x{scale}.db",
            )
            if study.database.exists():
                study.database.unlink()
            t = time.perf_counter()
            size = build_store(study, study.database)
            setup = time.perf_counter() - t
            best: dict[str, float] | None = None
            for _ in range(args.repeat):
                timing = time_report(study, options)
                if best is None or timing["total"] < best["total"]:
                    best = timing
            assert best is not None
            target = TARGETS.get(scale)
            verdict = (
                ""
                if target is None
                else (f"target < {target:.0f} s: " + ("met" if best["total"] < target else "MISSED"))
            )
            print(
                f"\nscale x{scale}: {size['comparisons']:,} comparisons, {size['judgments']:,} judgments "
                f"({size['invalid']:,} invalid), {size['scores']:,} scores; store built in {setup:.1f} s"
            )
            for stage, seconds in best.items():
                print(f"  {stage:<18} {seconds:7.2f} s")
            print(f"  {verdict}")
            print(
                f"  (for comparison: Store.score_rows() alone, which the report does not call, takes "
                f"{time_raw_scores(study):.2f} s)"
            )
            results.append((scale, size, best))
        if len(results) >= 2:
            (s1, z1, b1), (s2, z2, b2) = results[0], results[-1]
            print(
                f"\nx{s2} / x{s1}: judgments {z2['judgments'] / z1['judgments']:.1f}x, "
                f"time {b2['total'] / b1['total']:.1f}x"
            )
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
