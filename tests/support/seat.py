"""Provides steps the expert's-seat tests share: session fields, judging practice and gold places and comparisons."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from centaur_tui.catalog import load_session
from centaur_tui.domain.blinding import Draft
from centaur_tui.services.judging import open_judging
from centaur_tui.store import Store
from tests.support.judging import RATIONALE


def with_judging(path: Path, *lines: str) -> Path:
    """The session file with these `[judging]` fields added."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("[judging]\n", "[judging]\n" + "".join(f"{x}\n" for x in lines), 1), encoding="utf-8")
    return path


def judge_checks(path: Path, expert: str, winner_of) -> None:
    """Submit every practice and gold place of an expert's queue; `winner_of(intact_option)` picks the winner."""

    study = load_session(path)
    with Store(study.database) as store:
        source = open_judging(study, store, expert)
        for q in source.queue():
            if not source.checks.owns(q.key):
                continue
            item = source.item(q.key)
            conn = sqlite3.connect(study.database)
            intact = conn.execute("SELECT intact_option FROM expert_checks WHERE token = ?", (q.key,)).fetchone()[0]
            conn.close()
            draft = Draft({d.id: [5, 5] for d in item.rubric.all}, winner_of(intact), RATIONALE, 30.0, 20.0)
            source.submit(q.key, draft)


def judge_comparisons(path: Path, expert: str) -> int:
    study = load_session(path)
    n = 0
    with Store(study.database) as store:
        source = open_judging(study, store, expert)
        for q in source.queue():
            if source.checks.owns(q.key):
                continue
            item = source.item(q.key)
            draft = Draft({d.id: [8, 3] for d in item.rubric.all}, "option_2", RATIONALE, 40.0 + n, 30.0)
            draft.confirmed_lower = True
            source.submit(q.key, draft)
            n += 1
    return n
