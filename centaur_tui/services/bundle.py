"""Provides `centaur bundle`: one folder a reviewer opens offline in a browser, byte-identical when built again.

The folder (see docs/record.md):

- `session.db`: a copy of the session database made with SQLite's backup API, first, without
  the session's and the packets' secrets (they sign exports and packets); every
  other file is built from that copy, so all of them show one state of the database, whose
  chain head (store/chain.py, verified on the copy) the manifest and the front page print;
- `index.html` (for anyone, experts included: names no model), `guidelines.html` (the expert
  guidelines as experts saw them, identities masked; only when the session has them), then
  the reviewers' pages, which name models, judges and experts: `report.html` (every section
  of `centaur report` as HTML tables, with the figures it draws), `judgments.html` with
  `data.js` and `browser.js` (every comparison, both outputs, every judgment in both orders
  with scores and rationale; offline search of rationales);
- `csv/`: `centaur export`'s files;
- `manifest.json`: the SHA-256 of every other file, the chain head, which pages are for whom.

No timestamp is written anywhere; JSON keys are sorted; figures are PNG without metadata.
The folder is written beside OUT under a temporary name and renamed into place when complete:
a failed build leaves nothing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.study import Study
from centaur_tui.services.session import SIMULATED_BANNER, open_store, stored_simulated

if TYPE_CHECKING:
    from centaur_tui.store import Store

BUNDLE_FORMAT = "centaur-bundle/1"
MANIFEST_NAME = "manifest.json"

FOR_ANYONE = "anyone (experts too): names no model"
FOR_REVIEWERS = "reviewers: names models, judges and experts"

PAGES: dict[str, tuple[str, str]] = {
    "index.html": (FOR_ANYONE, "this page: the chain head and every file"),
    "guidelines.html": (FOR_ANYONE, "the expert guidelines, as the experts saw them"),
    "report.html": (FOR_REVIEWERS, "every table and figure of `centaur report`"),
    "judgments.html": (FOR_REVIEWERS, "every comparison and judgment, with offline search of rationales"),
}
"""The bundle's pages and their audience: a page for anyone must never name a model (tests check)."""


class BundleError(CentaurError):
    """The bundle cannot be written where asked (nothing is written)."""


@dataclass(frozen=True)
class Bundle:
    """What `write_bundle` wrote: the folder, its files (relative paths, sorted), the chain head and its check."""

    folder: Path
    files: tuple[str, ...]
    head: str
    length: int
    clean: bool
    simulated: bool


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def browser_data(store: Store) -> dict[str, Any]:
    """Every comparison with its outputs and judgments (stable ids as in judgments.csv), for the browser."""
    from centaur_tui.pipeline.export import stable_rows

    judgments, scores = stable_rows(store.judgment_rows(), store.score_rows())
    by_judgment: dict[int, list[list[str | int]]] = {}
    for s in scores:
        by_judgment.setdefault(s.judgment_id, []).append([s.candidate, s.dimension, s.dimension_kind, s.score])
    keep = (
        "judgment_id",
        "judge",
        "judge_kind",
        "judge_family",
        "presentation",
        "revision",
        "option1",
        "option2",
        "winner",
        "valid",
        "invalid_reason",
        "rationale",
        "option1_mean",
        "option2_mean",
        "seconds",
    )
    by_comparison: dict[str, list[dict[str, object]]] = {}
    for j in judgments:
        row: dict[str, object] = {k: getattr(j, k) for k in keep}
        row["scores"] = by_judgment.get(j.judgment_id, [])
        by_comparison.setdefault(j.comparison_id, []).append(row)
    comparisons = sorted(store.comparisons().values(), key=lambda c: (c.run, c.task, c.mode, c.id))
    outputs = {
        o.output_id: {"candidate": o.candidate, "worker": o.worker, "text": o.text, "assistance": o.assistance_text}
        for o in store.output_rows()
    }
    return {
        "comparisons": [
            {
                "id": c.id,
                "run": c.run,
                "task": c.task,
                "mode": c.mode,
                "a": c.candidate_a,
                "b": c.candidate_b,
                "output_a": c.output_a,
                "output_b": c.output_b,
                "judgments": by_comparison.get(c.id, []),
            }
            for c in comparisons
        ],
        "outputs": outputs,
    }


def _check_target(out_dir: Path) -> None:
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise BundleError(
            f"{out_dir}: exists and is not an empty folder; give a new folder (nothing was written)",
            title="Bundle not written",
        )


def write_bundle(study: Study, out_dir: Path) -> Bundle:
    """Write the publishable bundle of a session into `out_dir` (new or empty).

    Raises:
        NoDatabaseError: the session has not been run.
        BundleError: `out_dir` is a file or a folder that is not empty.
    """
    from centaur_tui.store import Store, forget_secrets, verify_store

    _check_target(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
    try:
        with open_store(study, title="Nothing to bundle", readonly=True) as source:
            source.backup(work / "session.db")
        copy = replace(study, database=work / "session.db")
        with Store(copy.database) as writable:
            forget_secrets(writable)  # the copy is given away: it must not sign exports or packets
        with Store(copy.database, readonly=True) as store:
            check = verify_store(store)
            simulated = stored_simulated(store)
            _pages(copy, store, work, check.head, check.length, simulated)
        files = sorted(p.relative_to(work).as_posix() for p in work.rglob("*") if p.is_file())
        manifest = {
            "format": BUNDLE_FORMAT,
            "session": study.session.name,
            "simulated": simulated,
            "chain": {
                "head": check.head,
                "length": check.length,
                "clean": check.clean,
                "first_break": None if check.clean else vars(check.breaks[0]),
            },
            "pages": {name: audience for name, (audience, _) in PAGES.items() if (work / name).exists()},
            "files": {name: _sha256(work / name) for name in files},
        }
        (work / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        if out_dir.exists():
            out_dir.rmdir()  # empty (checked above)
        work.replace(out_dir)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return Bundle(out_dir, (*files, MANIFEST_NAME), check.head, check.length, check.clean, simulated)


def _pages(study: Study, store: Store, work: Path, head: str, length: int, simulated: bool) -> None:
    from centaur_tui.pipeline.export import export_session
    from centaur_tui.report import html
    from centaur_tui.report.render import human_worker_sections, sections
    from centaur_tui.services.report import session_report
    from centaur_tui.stats.figures import draw_all
    from centaur_tui.store import session_blinding

    banner = SIMULATED_BANNER if simulated else None
    name = study.session.name
    export_session(store, work / "csv", name, stamp=False)
    report = session_report(study, store=store)
    figures = [p.relative_to(work).as_posix() for p in draw_all(report, work / "figures")]
    doc = report.document
    pages = {
        "report.html": html.report_page(name, sections(doc) + human_worker_sections(doc), figures, banner),
        "judgments.html": html.judgments_page(name, banner),
    }
    if study.guidelines:
        pages["guidelines.html"] = html.guidelines_page(name, session_blinding(study).mask(study.guidelines)[0])
    listed = [(p, PAGES[p][0], PAGES[p][1]) for p in PAGES if p in pages or p == "index.html"]
    listed += [
        ("data.js", FOR_REVIEWERS, "the judgment browser's data"),
        ("session.db", FOR_REVIEWERS, "the session database (SQLite), as of the chain head"),
        ("csv/judgments.csv", FOR_REVIEWERS, "the export: judgments, scores, outputs, session.json"),
        (MANIFEST_NAME, "anyone", "SHA-256 of every file, the chain head, each page's audience"),
    ]
    pages["index.html"] = html.index_page(name, head, length, listed)
    for page, text in pages.items():
        (work / page).write_text(text, encoding="utf-8")
    (work / "data.js").write_text(html.browser_data(browser_data(store)), encoding="utf-8")
    for static in html.STATIC:
        (work / static).write_bytes(html.static_file(static))
