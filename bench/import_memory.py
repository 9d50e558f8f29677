"""Provides the import-outputs memory benchmark: peak memory against file size (not a test).

Run: .venv/bin/python bench/import_memory.py [--sizes 16,64,128] [--text-chars 200000] [--format jsonl]

For each size (MiB) a file of outputs is written (texts of `--text-chars` characters, the
largest an import takes; tasks x candidates x runs of a generated session), then `centaur
import-outputs` runs in a fresh process (`--child`), which reports its peak resident memory
(`ru_maxrss`) and the peak of Python's own allocations (`tracemalloc`) during the import alone,
each above what the process held just before it (interpreter, modules, session). Target (issue
23): peak at most 2 x the largest text plus a constant, whatever the file's size; before the
streamed reader it was about 11 x the file (3.6 GB for 320 MiB).

Measured 2026-12-02 on the shared 2-core machine (load average 6-9), JSONL, texts of 200,000
characters (200 kB as UTF-8):

    (numbers are printed by the run; see the final report of the formats branch)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TASKS = ROOT / "tasks"


def _session(folder: Path, candidates: int, runs: int) -> Path:
    blocks = "".join(
        textwrap.dedent(
            f"""
            [[candidates]]
            name = "Imported-{chr(65 + i)}"
            source = "imported"
            family = "Family{chr(65 + i)}"
            """
        )
        for i in range(candidates)
    )
    path = folder / "mem.toml"
    path.write_text(
        f'name = "mem"\nruns = {runs}\ntasks = ["counseling", "tutoring"]\ntasks_dir = "{TASKS}"\n'
        f'{blocks}\n[[judges]]\nname = "JudgeNorth"\nmodel = "simulated/judge-north"\nfamily = "North"\n',
        encoding="utf-8",
    )
    return path


def _write(file: Path, size: int, text_chars: int, candidates: int, kind: str) -> tuple[int, int]:
    """Outputs until the file holds `size` bytes; returns (records, runs needed)."""
    per = text_chars + 80
    records = max(1, size // per)
    runs = -(-records // (2 * candidates))
    body = "word " * (text_chars // 5)
    with file.open("w", encoding="utf-8", newline="") as fh:
        if kind == "csv":
            fh.write("task,candidate,run,text\n")
        n = 0
        for run in range(1, runs + 1):
            for task in ("counseling", "tutoring"):
                for c in range(candidates):
                    if n == records:
                        break
                    text = f"{n} {body}"[:text_chars]
                    name = f"Imported-{chr(65 + c)}"
                    if kind == "csv":
                        fh.write(f'{task},{name},{run},"{text}"\n')
                    else:
                        fh.write(json.dumps({"task": task, "candidate": name, "run": run, "text": text}) + "\n")
                    n += 1
    return records, runs


def child(session: str, file: str) -> None:
    """Run the import in this process and print its peaks above the baseline, as JSON."""
    from click.testing import CliRunner

    import centaur_tui.formats.outputs
    import centaur_tui.store.imported  # noqa: F401
    from centaur_tui.catalog import load_session
    from centaur_tui.cli.main import cli
    from centaur_tui.services.exchange import import_outputs
    from centaur_tui.store import session_blinding

    study = load_session(Path(session))
    session_blinding(study)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tracemalloc.start()
    start = time.perf_counter()
    summary = import_outputs(study, Path(file)).summary
    wall = time.perf_counter() - start
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    del CliRunner, cli
    print(json.dumps({"rss": peak_rss - base_rss, "traced": traced, "stored": summary.inserted, "wall": wall}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16,64,128", help="file sizes in MiB, comma-separated")
    parser.add_argument("--text-chars", type=int, default=200_000)
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    parser.add_argument("--child", nargs=2, metavar=("SESSION", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    text_bytes = args.text_chars  # ASCII texts: one byte per character
    constant = _measure(100, 100, args)  # one short output: what an import costs whatever its texts
    print(
        f"import-outputs, {args.format}, texts of {args.text_chars:,} characters; peaks above the process's "
        f"baseline, and above the constant of a one-output file (RSS {constant['rss'] / 2**20:.1f} MiB, "
        f"traced {constant['traced'] / 2**20:.2f} MiB)"
    )
    print(
        f"{'file MiB':>9} {'records':>8} {'RSS MiB':>8} {'RSS/file':>9} {'(RSS-c)/text':>13} "
        f"{'(traced-c)/text':>16} {'s':>6}"
    )
    for size_mib in (int(s) for s in args.sizes.split(",")):
        got = _measure(size_mib * 1024 * 1024, args.text_chars, args)
        size = got["size"]
        print(
            f"{size / 2**20:9.1f} {got['records']:8,} {got['rss'] / 2**20:8.1f} {got['rss'] / size:9.3f} "
            f"{(got['rss'] - constant['rss']) / text_bytes:13.2f} "
            f"{(got['traced'] - constant['traced']) / text_bytes:16.2f} {got['wall']:6.1f}"
        )


def _measure(size: int, text_chars: int, args: argparse.Namespace) -> dict[str, float]:
    """Write a file of `size` bytes and import it in a fresh process; its peaks, records and size."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        file = folder / f"outputs.{args.format}"
        records, runs = _write(file, size, text_chars, args.candidates, args.format)
        session = _session(folder, args.candidates, runs)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(session), str(file)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if out.returncode != 0:
            print(out.stdout, out.stderr, file=sys.stderr)
            raise SystemExit(out.returncode)
        got = json.loads(out.stdout.strip().splitlines()[-1])
        return {**got, "records": records, "size": file.stat().st_size}


if __name__ == "__main__":
    main()
