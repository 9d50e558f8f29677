"""Benchmark: a Chatbot Arena-shaped file of 30,000 comparisons, imported in one command and reported (not a test).

Run: .venv/bin/python bench/import_scale.py [--comparisons 30000] [--judges 2000]

Builds, in a temporary folder, a study of people only (no LLM judge, no task file: one generic
task `arena`) with 20 imported candidates, and a JSONL file in the layout of
lmsys/chatbot_arena_conversations: one row per comparison with `question_id` (a hex id),
`model_a`, `model_b`, `winner` (model_a, model_b, tie, tie (bothbad)), `judge` (arena_user_N),
`conversation_a`/`conversation_b` (one user turn, one answer), `turn`, and fields the format does
not read (`anony`, `language`, `tstamp`, `num`). Times `centaur import` (check and store, with
`--new-judges-are-experts`), the same import again, and the full report (both judge kinds, no
bootstrap), each through the real CLI in this process.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from centaur_tui.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
MODELS = {
    **{f"arena-model-{i:02d}": f"Family{i // 2}" for i in range(20)},
}


def build(folder: Path, comparisons: int, judges: int, seed: int) -> tuple[Path, Path]:
    """The session (generic task, imported candidates, no judge) and its Arena-shaped JSONL file."""
    shutil.copytree(ROOT / "tasks", folder / "tasks")
    candidates = "".join(
        f'\n[[candidates]]\nname = "{m}"\nsource = "imported"\nfamily = "{f}"\n' for m, f in MODELS.items()
    )
    session = folder / "arena.toml"
    session.write_text(
        f'name = "arena"\nruns = 1\ngeneric_tasks = ["arena"]\ntasks_dir = "tasks"\n{candidates}', encoding="utf-8"
    )
    rng = random.Random(seed)
    names = list(MODELS)
    with (folder / "arena.jsonl").open("w", encoding="utf-8") as out:
        for n in range(comparisons):
            a, b = rng.sample(names, 2)
            question = f"Question number {n}: please explain topic {rng.randrange(10**6)} briefly."
            row = {
                "question_id": f"{rng.getrandbits(128):032x}",
                "model_a": a,
                "model_b": b,
                "winner": rng.choice(["model_a", "model_b", "tie", "tie (bothbad)"]),
                "judge": f"arena_user_{rng.randrange(judges)}",
                "conversation_a": [
                    {"role": "user", "content": question},
                    {"role": "assistant", "content": f"An answer of the first model to question {n}. " * 8},
                ],
                "conversation_b": [
                    {"role": "user", "content": question},
                    {"role": "assistant", "content": f"An answer of the second model to question {n}. " * 8},
                ],
                "turn": 1,
                "anony": True,
                "language": "English",
                "tstamp": 1682351591.1322,
                "num": n,
            }
            out.write(json.dumps(row) + "\n")
    return session, folder / "arena.jsonl"


def timed(*args: str) -> tuple[float, str]:
    start = time.perf_counter()
    result = CliRunner().invoke(cli, list(args))
    took = time.perf_counter() - start
    if result.exit_code != 0:
        raise SystemExit(f"centaur {' '.join(args)} exited {result.exit_code}:\n{result.output}")
    return took, result.output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparisons", type=int, default=30_000)
    parser.add_argument("--judges", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        session, file = build(Path(tmp), args.comparisons, args.judges, args.seed)
        print(f"{args.comparisons:,} comparisons, {file.stat().st_size / 1e6:.1f} MB")
        took, out = timed("import", str(session), str(file), "--new-judges-are-experts")
        print(f"import: {took:.2f} s ({args.comparisons / took:,.0f} rows/s)")
        print("  " + "\n  ".join(line for line in out.splitlines() if not line.startswith("  ")))
        again, out = timed("import", str(session), str(file))
        print(f"import again: {again:.2f} s (nothing stored: {'0 stored' in out})")
        full, _ = timed(
            "report", str(session), "--judges", "all", "--bootstrap", "0", "--quiet", "--json", f"{tmp}/r.json"
        )
        print(f"report (all judges, no bootstrap): {full:.2f} s")


if __name__ == "__main__":
    main()
