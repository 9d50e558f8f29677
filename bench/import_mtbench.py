"""Benchmark: importing a winner-only file of MT-Bench's full size, then reporting it (not a test).

Run: .venv/bin/python bench/import_mtbench.py [--questions 80] [--humans 2] [--experts 60]

Builds, in a temporary folder, a session in MT-Bench's shape (80 questions x 2 turns as tasks,
its 6 models as imported candidates, `gpt4_pair` as an LLM judge, a pool of human experts) and a
JSONL file in the layout of lmsys/mt_bench_human_judgments: per comparison one `gpt4_pair` row
and `--humans` human rows with the two conversations (the published file has 2,400 + 3,355
rows). Times the check and store of `centaur import` (services.exchange.import_winner_file), the
same import again (idempotent: nothing stored) and the report with both judge kinds.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

from centaur_tui.catalog import load_session
from centaur_tui.services.exchange import import_winner_file
from centaur_tui.services.report import session_report

ROOT = Path(__file__).resolve().parent.parent
MODELS = {
    "gpt-4": "OpenAI",
    "gpt-3.5-turbo": "OpenAI",
    "claude-v1": "Anthropic",
    "vicuna-13b-v1.2": "LMSYS",
    "alpaca-13b": "Stanford",
    "llama-13b": "Meta",
}
TASK = """id = "{id}"
title = "MT-Bench {q}, turn {t}"
source = "external"
type = "human-facing"
deliverable = "An answer"
prompt = '''Question {q} of MT-Bench, turn {t}: answer the user's request helpfully and accurately.'''

[[dimensions]]
id = "helpfulness"
name = "Helpfulness"
description = "Whether the answer helps."
low = "Unhelpful."
high = "Very helpful."

[[dimensions]]
id = "accuracy"
name = "Accuracy"
description = "Whether the answer is correct."
low = "Wrong."
high = "Correct."

[[requirements]]
id = "answers"
label = "answers the question"
text = "Answers the question asked."
dimension = "helpfulness"

[[requirements]]
id = "correct"
label = "is correct"
text = "Is factually correct."
dimension = "accuracy"

[[requirements]]
id = "complete"
label = "is complete"
text = "Covers every part of the request."
dimension = "helpfulness"
"""


def build(folder: Path, questions: int, humans: int, experts: int, seed: int) -> tuple[Path, Path, int]:
    tasks = folder / "tasks"
    tasks.mkdir(parents=True)
    shutil.copy(ROOT / "tasks" / "universal.toml", tasks)
    ids = []
    for q in range(81, 81 + questions):
        for t in (1, 2):
            ids.append(f"mtbench_{q}_t{t}")
            (tasks / f"{ids[-1]}.toml").write_text(TASK.format(id=ids[-1], q=q, t=t), encoding="utf-8")
    session = folder / "mtbench.toml"
    candidates = "".join(
        f'\n[[candidates]]\nname = "{m}"\nsource = "imported"\nfamily = "{f}"\n' for m, f in MODELS.items()
    )
    expert_ids = [f"expert_{i}" for i in range(experts)]
    session.write_text(
        f'name = "mtbench"\nruns = 1\ntasks = {json.dumps(ids)}\ntasks_dir = "tasks"\n{candidates}'
        '\n[[judges]]\nname = "gpt4_pair"\nmodel = "openai/gpt-4-0613"\nfamily = "GPT-4 judge"\n'
        + "".join(f'\n[[experts]]\nid = "{e}"\nname = "{e}"\n' for e in expert_ids),
        encoding="utf-8",
    )
    rng = random.Random(seed)
    rows = []
    for q in range(81, 81 + questions):
        conv = {
            m: [
                {"content": f"Question {q}", "role": "user"},
                {"content": f"{m}'s first answer to question {q}. " * 20, "role": "assistant"},
                {"content": "A follow-up", "role": "user"},
                {"content": f"{m}'s second answer to question {q}. " * 20, "role": "assistant"},
            ]
            for m in MODELS
        }
        for t in (1, 2):
            for a, b in itertools.combinations(MODELS, 2):
                for judge in ["gpt4_pair", *rng.sample(expert_ids, humans)]:
                    ma, mb = (a, b) if rng.random() < 0.5 else (b, a)
                    winner = rng.choice(["model_a", "model_b", "tie", "tie (bothbad)"])
                    rows.append(
                        {
                            "question_id": q,
                            "model_a": ma,
                            "model_b": mb,
                            "winner": winner,
                            "judge": judge,
                            "conversation_a": conv[ma],
                            "conversation_b": conv[mb],
                            "turn": t,
                        }
                    )
    file = folder / "judgments.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return session, file, len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=80)
    parser.add_argument("--humans", type=int, default=2)
    parser.add_argument("--experts", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        session, file, n = build(Path(tmp), args.questions, args.humans, args.experts, args.seed)
        study = load_session(session)
        print(f"{n:,} rows, {file.stat().st_size / 1e6:.1f} MB, {len(study.session.tasks)} tasks")
        start = time.perf_counter()
        first = import_winner_file(study, file)
        stored = time.perf_counter() - start
        start = time.perf_counter()
        again = import_winner_file(study, file)
        repeat = time.perf_counter() - start
        assert first.summary.judgments is not None and again.summary.judgments is not None
        print(
            f"import: {stored:.2f} s ({n / stored:,.0f} rows/s), {first.summary.judgments.inserted:,} judgments, "
            f"{first.summary.inserted:,} outputs, {first.summary.comparisons:,} comparisons"
        )
        print(f"import again: {repeat:.2f} s, {again.summary.judgments.inserted} stored (ratio {repeat / stored:.2f})")
        start = time.perf_counter()
        report = session_report(study, judge_kinds=("llm", "expert"), bootstrap=0)
        took = time.perf_counter() - start
        print(
            f"report (both judge kinds, no bootstrap): {took:.2f} s; winner-only {report.document.counts.winner_only:,}"
        )


if __name__ == "__main__":
    main()
