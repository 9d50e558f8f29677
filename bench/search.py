"""Benchmark: the organiser's search (FTS5, store/search.py) on a paper-scale simulated study (not a test).

Run: .venv/bin/python bench/search.py [--scale 1] [--repeats 20]

The paper's design (sessions/paper.toml: 10 candidates, 4 judges, 7 tasks, 10 runs) is judged
synthetically (`stats.synthetic`, as bench/report.py does) into a real session database; every
output gets a deliverable of about 400 words and every (run, task, assistant) an assistance
text of about 250 words, from a seeded vocabulary; every judgment keeps its synthetic rationale
with filler words added. One phrase is planted in one rationale, one deliverable and one
assistance text. Timed: the first build of the index (sqlite-utils), an incremental refresh
with nothing new, and the search of the planted phrase (refresh + read-only query), median of
`--repeats`. Target (issue 27): the search under 200 ms.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.report import build_store  # noqa: E402
from centaur_tui.catalog import load_session  # noqa: E402
from centaur_tui.services.search import search_study  # noqa: E402
from centaur_tui.store import Store  # noqa: E402
from centaur_tui.store.search import refresh  # noqa: E402

PHRASE = "quizzical marmalade lighthouse"
TARGET_MS = 200.0


def _words(rng: random.Random, vocabulary: list[str], n: int) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(n))


def fill_texts(store: Store, seed: int = 1) -> dict[str, int]:
    """Give every output a deliverable, add assistance texts, lengthen rationales; plant the phrase once in each."""
    rng = random.Random(seed)
    vocabulary = [f"{a}{b}" for a in ("plan", "risk", "goal", "step", "note", "case", "team", "cost") for b in
                  ("", "s", "ing", "ed", "er", "ful", "less", "wise", "ment", "ly", "ness", "ity")]  # fmt: skip
    outputs = store.read_table("SELECT id, run, task, candidate FROM outputs ORDER BY id").rows
    judgments = store.read_table("SELECT id FROM judgments ORDER BY id").rows
    assists = sorted({(r[1], r[2], r[3]) for r in outputs})
    with store.write() as c:
        c.executemany(
            "INSERT INTO assistance_texts (id, run, task, assistant, text, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    f"a{i}",
                    run,
                    task,
                    cand,
                    _words(rng, vocabulary, 250) + (f" {PHRASE}" if i == 7 else ""),
                    "2026-01-01",
                )
                for i, (run, task, cand) in enumerate(assists)
            ],
        )
        c.executemany(
            "UPDATE outputs SET text = ? WHERE id = ?",
            [(_words(rng, vocabulary, 400) + (f" {PHRASE}" if i == 11 else ""), r[0]) for i, r in enumerate(outputs)],
        )
        c.executemany(
            "UPDATE judgments SET rationale = coalesce(rationale, '') || ' ' || ? WHERE id = ?",
            [(_words(rng, vocabulary, 40) + (f" {PHRASE}" if i == 13 else ""), r[0]) for i, r in enumerate(judgments)],
        )
    return {"outputs": len(outputs), "assistance texts": len(assists), "judgments": len(judgments)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="centaur-bench-search-") as folder:
        study = load_session(ROOT / "sessions" / "paper.toml")
        db = Path(folder) / "paper.db"
        sizes = build_store(study, db)
        with Store(db) as store:
            sizes.update(fill_texts(store))
        with Store(db, readonly=True) as store:
            t0 = time.perf_counter()
            added = refresh(store)
            build = time.perf_counter() - t0
            t0 = time.perf_counter()
            refresh(store)
            again = time.perf_counter() - t0
            times, kinds = [], set()
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                found = search_study(store, PHRASE)
                times.append(time.perf_counter() - t0)
                kinds = {f.hit.kind for f in found}
        median_ms = statistics.median(times) * 1000
        print(f"study: {sizes}; {added:,} texts indexed")
        print(f"first build of the index: {build:.2f} s; refresh with nothing new: {again * 1000:.1f} ms")
        print(f"search of the planted phrase (refresh + query), median of {args.repeats}: {median_ms:.1f} ms "
              f"(max {max(times) * 1000:.1f} ms); found in {sorted(kinds)}")  # fmt: skip
        ok = kinds == {"rationale", "deliverable", "assistance"} and median_ms < TARGET_MS
        print(f"target < {TARGET_MS:.0f} ms and all three kinds found: {'met' if ok else 'NOT met'}")
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
