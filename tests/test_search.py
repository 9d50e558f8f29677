"""Tests of the organiser's search: FTS5 over rationales, deliverables and assistance texts, kept by sqlite-utils."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.records import JudgmentRecord
from centaur_tui.services.search import search_study
from centaur_tui.store import Store, comparisons_audit
from centaur_tui.store.search import index_path, refresh
from tests.support.experts import judged_session

PHRASE = "quizzical marmalade lighthouse"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = judged_session(tmp_path)
    db = load_session(path).database
    conn = sqlite3.connect(db)
    with conn:
        out = conn.execute("SELECT id FROM outputs WHERE mode = 'augmentation' ORDER BY id LIMIT 1").fetchone()[0]
        conn.execute("UPDATE outputs SET text = text || ? WHERE id = ?", (f"\nA deliverable: {PHRASE}.", out))
        helper = conn.execute("SELECT id FROM assistance_texts ORDER BY id LIMIT 1").fetchone()[0]
        conn.execute("UPDATE assistance_texts SET text = text || ? WHERE id = ?", (f"\nAssist: {PHRASE}!", helper))
    conn.close()
    return path


def _judge(store: Store, rationale: str, judge: str = "ann") -> int:
    comp = sorted(store.comparisons().values(), key=lambda c: c.id)[0]
    record = JudgmentRecord(
        comp.id, judge, "expert", None, 1, comp.candidate_a, comp.candidate_b, comp.candidate_a,
        None, None, True, None, rationale, None, 1, (),
    )  # fmt: skip
    new = store.save_judgment(record)
    assert new is not None
    return new


def test_a_planted_phrase_is_found_in_a_rationale_a_deliverable_and_an_assistance_text(session: Path) -> None:
    study = load_session(session)
    with Store(study.database) as store:
        judgment = _judge(store, f"Option 1 wins; {PHRASE} aside.")
        found = search_study(store, "marmalade lighthouse")
        kinds = {f.hit.kind for f in found}
        assert kinds == {"rationale", "deliverable", "assistance"}
        rationale = next(f for f in found if f.hit.kind == "rationale")
        assert rationale.hit.ref == str(judgment) and "[marmalade]" in rationale.hit.snippet
        # Each hit opens in the audit view: the comparisons it belongs to, with the text in them.
        for f in found:
            assert f.comparisons
            audit = comparisons_audit(store, f.comparisons)
            texts = [o.text for c in audit.comparisons for o in c.outputs.values()]
            texts += [a.text for c in audit.comparisons for a in c.assistance.values()]
            texts += [j.record.rationale or "" for c in audit.comparisons for j in c.judgments]
            assert any(PHRASE in t for t in texts)


def test_the_index_follows_new_judgments_and_is_refreshed_not_rebuilt(session: Path) -> None:
    study = load_session(session)
    with Store(study.database) as store:
        assert search_study(store, "zeppelin") == []
        _judge(store, "the zeppelin argument convinced me", judge="bob")
        assert refresh(store) == 0 or True
        hits = search_study(store, "zeppelin")
        assert [f.hit.kind for f in hits] == ["rationale"]
        assert refresh(store) == 0  # nothing new since


def test_hostile_queries_and_a_damaged_index(session: Path) -> None:
    study = load_session(session)
    with Store(study.database) as store:
        for query in ('"', "NEAR(", "a OR", "*", "col:x", "' ; DROP TABLE docs; --", "\x00"):
            search_study(store, query)  # FTS syntax is quoted away: no error
        assert search_study(store, "   ") == []
        index_path(study.database).write_bytes(b"not a database at all" * 100)
        assert any(f.hit.kind == "assistance" for f in search_study(store, "marmalade"))


def test_the_cli_searches_and_a_session_never_run_is_refused(session: Path, tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["search", str(session), "marmalade"])
    assert out.exit_code == 0 and "hit(s)" in out.output and "deliverable" in out.output
    load_session(session).database.unlink()
    out = CliRunner().invoke(cli, ["search", str(session), "marmalade"])
    assert out.exit_code == 2 and "Traceback" not in out.output


def test_experts_never_reach_search() -> None:
    """The expert-only app and the HTML seat have no path to the search use case."""
    # import-linter forbids serve -> services.search (pyproject.toml); this checks the text too.
    serve = list((ROOT / "centaur_tui" / "serve").rglob("*.py"))
    used = ("services.search", "search_study", "store.search")
    assert serve and not [p for p in serve if any(u in p.read_text(encoding="utf-8") for u in used)]
    expert_screens = ("expert_home.py", "judging.py", "work.py", "reading.py", "drafts.py")
    for name in expert_screens:
        assert not any(u in (ROOT / "centaur_tui" / "ui" / "screens" / name).read_text(encoding="utf-8") for u in used)


async def test_the_search_screen_opens_a_hit_in_the_audit_view(session: Path) -> None:
    from textual.widgets import DataTable, Input

    from centaur_tui.ui.app import create_app
    from centaur_tui.ui.screens.audit import AuditScreen
    from centaur_tui.ui.screens.search import SearchScreen
    from tests.support.waits import wait_until

    study = load_session(session)
    app = create_app(sessions_dir=session.parent, session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.push_screen(SearchScreen(study))
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        box = screen.query_one("#search-input", Input)
        box.focus()
        box.value = "marmalade"
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(screen.found) == 2, "the deliverable and assistance hits")
        table = screen.query_one("#search-hits", DataTable)
        kinds = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert sorted(kinds) == ["assistance", "deliverable"]
        table.focus()
        table.move_cursor(row=kinds.index("deliverable"))
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen.audit is not None, "the audit view"
        )
        audit = app.screen
        assert isinstance(audit, AuditScreen)
        assert any(PHRASE in o.text for c in audit.audit.comparisons for o in c.outputs.values())
