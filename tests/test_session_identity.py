"""A session file and its database agree, or every command says why not (issue 23, item 1).

Through the CLI (click's runner, in this process): a renamed or removed candidate, worker or
judge, a changed seed or model, and another session's file on the same database exit 2 with a
message naming the difference and what to do, and leave the database's judgment tables and
meta byte-identical; `centaur migrate --rename` keeps a renamed entry's stored items (a run
afterwards sends nothing), `--retire` keeps a removed entry's items out of every statistic,
counted in the report.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from centaur_tui.catalog import load_session
from centaur_tui.services.run import PipelineRun
from centaur_tui.store import Store
from tests.support.cli import centaur_here
from tests.support.sessions import small_session_toml


def centaur(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return centaur_here(*args)  # every path passed is absolute


def snapshot(db: Path) -> tuple[list[tuple[object, ...]], ...]:
    """Every row of the tables a refusal must leave untouched, in a fixed order."""
    with sqlite3.connect(db) as conn:
        return tuple(
            conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("judgments", "scores", "comparisons", "outputs", "meta", "calls", "session_changes")
        )


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small session, run once: 4 candidates, a worker, 3 judges, one task."""
    folder = tmp_path_factory.mktemp("identity")
    path = folder / "ident.toml"
    path.write_text(small_session_toml(name="ident", tasks=("counseling",)), encoding="utf-8")
    study = load_session(path)
    with Store(study.database) as store:
        outcome = PipelineRun(study, lambda: store).run()
    assert outcome is not None and outcome.complete
    return path


@pytest.fixture
def session(ran: Path, tmp_path: Path) -> Path:
    """A fresh copy of the run session (file and database) for one test to change."""
    text = ran.read_text(encoding="utf-8")
    path = tmp_path / "ident.toml"
    path.write_text(text, encoding="utf-8")
    with sqlite3.connect(ran.with_suffix(".db")) as src, sqlite3.connect(tmp_path / "ident.db") as dst:
        src.backup(dst)
    return path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def refused(session: Path, *commands: tuple[str, ...], expect: list[str]) -> None:
    """Each command exits 2 with every expected phrase in its message, and the database is untouched."""
    db = session.with_suffix(".db")
    before = snapshot(db)
    for command in commands:
        proc = centaur(*command, cwd=session.parent)
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr
        for phrase in expect:
            assert phrase in proc.stderr, (command, phrase, proc.stderr)
        assert snapshot(db) == before, command


def test_a_renamed_candidate_is_refused_by_every_command_naming_it_and_the_migrate_command(session: Path) -> None:
    edit(session, 'name = "Alpha"', 'name = "Alpha2"')
    refused(
        session,
        ("check", str(session)),
        ("run", str(session)),
        ("report", str(session)),
        ("export", str(session), "--out", str(session.parent / "out")),
        expect=[
            "Session file and database disagree",
            "candidate 'Alpha' has",
            "not in the session file",
            f"centaur migrate {session} --rename Alpha=Alpha2",
            f"centaur migrate {session} --retire Alpha",
        ],
    )
    assert not (session.parent / "out").exists()


def test_a_changed_seed_is_refused_and_meta_seed_kept(session: Path) -> None:
    edit(session, "seed = 7", "seed = 8")
    refused(
        session,
        ("check", str(session)),
        ("run", str(session)),
        ("report", str(session)),
        expect=["seed is 8", "made with seed 7"],
    )
    with sqlite3.connect(session.with_suffix(".db")) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'seed'").fetchone() == ("7",)


def test_another_session_file_on_the_same_database_is_refused_and_meta_session_kept(session: Path) -> None:
    other = session.parent / "other.toml"
    other.write_text(
        small_session_toml(name="other", tasks=("counseling",)).replace(
            'name = "other"', 'name = "other"\ndatabase = "ident.db"'
        ),
        encoding="utf-8",
    )
    refused(session, ("run", str(other)), ("report", str(other)), expect=["belongs to session 'ident'", "'other'"])
    with sqlite3.connect(session.with_suffix(".db")) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'session'").fetchone() == ("ident",)


@pytest.mark.parametrize(
    ("old", "new", "expect"),
    [
        ('name = "JudgeWest"', 'name = "JudgeWest2"', "judge 'JudgeWest' has"),
        ('name = "Worker"', 'name = "Worker2"', "worker 'Worker' has"),
        ('model = "simulated/beta"', 'model = "simulated/beta2"', "candidate 'Beta': model is 'simulated/beta2'"),
        (
            'family = "South"\n        simulation = { noise',
            'family = "Other"\n        simulation = { noise',
            "judge 'JudgeSouth': family",
        ),
    ],
    ids=["judge-renamed", "worker-renamed", "model-changed", "judge-family-changed"],
)
def test_a_changed_judge_worker_model_or_family_is_refused(session: Path, old: str, new: str, expect: str) -> None:
    edit(session, old, new)
    refused(session, ("run", str(session)), expect=[expect])


def test_a_removed_candidate_is_refused_until_retired_then_counted_out_of_the_report(session: Path) -> None:
    text = session.read_text(encoding="utf-8")
    start = text.index('[[models]]\n        name = "Delta"')
    end = text.index("[worker]")
    session.write_text(text[:start] + text[end:], encoding="utf-8")
    refused(session, ("report", str(session)), expect=["candidate 'Delta' has", "--retire Delta"])
    proc = centaur("migrate", str(session), "--retire", "Delta", cwd=session.parent)
    assert proc.returncode == 0, proc.stderr
    assert "retired candidate 'Delta'" in proc.stdout and "agree" in proc.stdout
    out = session.parent / "report.json"
    report = centaur("report", str(session), "--json", str(out), cwd=session.parent)
    assert report.returncode == 0, report.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    with sqlite3.connect(session.with_suffix(".db")) as conn:
        delta = conn.execute(
            "SELECT count(*) FROM judgments j JOIN comparisons c ON c.id = j.comparison_id"
            " WHERE 'Delta' IN (c.candidate_a, c.candidate_b)"
        ).fetchone()[0]
    assert delta > 0 and doc["counts"]["by_status"]["retired"] == delta  # stored, counted, never used
    assert "retired entry" in report.stdout
    ranked = json.dumps(doc["modes"])
    assert "Delta" not in ranked.replace('"retired"', "")
    with sqlite3.connect(session.with_suffix(".db")) as conn:
        assert conn.execute("SELECT count(*) FROM outputs WHERE candidate = 'Delta'").fetchone()[0] > 0
        assert conn.execute("SELECT action, kind, old FROM session_changes").fetchall() == [
            ("retire", "candidate", "Delta")
        ]
    # Running again sends nothing new for the others and nothing for Delta.
    run = centaur("run", str(session), "--quiet", cwd=session.parent)
    assert run.returncode == 0, run.stderr
    assert " 0 calls sent" in run.stdout


def test_migrate_rename_keeps_every_stored_item_and_a_run_afterwards_sends_nothing(session: Path) -> None:
    db = session.with_suffix(".db")
    with sqlite3.connect(db) as conn:
        before = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("calls", "judgments", "outputs")}
        alpha = conn.execute("SELECT count(*) FROM outputs WHERE candidate = 'Alpha'").fetchone()[0]
    edit(session, 'name = "Alpha"', 'name = "Zulu"')  # sorts after the others: comparisons swap their order
    edit(session, 'name = "JudgeNorth"', 'name = "JudgeN"')
    proc = centaur(
        "migrate", str(session), "--rename", "Alpha=Zulu", "--rename", "JudgeNorth=JudgeN", cwd=session.parent
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "renamed candidate 'Alpha' to 'Zulu'" in proc.stdout and "renamed judge 'JudgeNorth' to 'JudgeN'" in proc.stdout
    )
    with sqlite3.connect(db) as conn:
        after = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("calls", "judgments", "outputs")}
        assert after == before
        assert conn.execute("SELECT count(*) FROM outputs WHERE candidate = 'Zulu'").fetchone()[0] == alpha
        assert conn.execute("SELECT count(*) FROM outputs WHERE candidate = 'Alpha'").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM judgments WHERE judge = 'JudgeNorth'").fetchone()[0] == 0
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert [r[:3] for r in conn.execute("SELECT action, kind, old FROM session_changes ORDER BY id")] == [
            ("rename", "candidate", "Alpha"),
            ("rename", "judge", "JudgeNorth"),
        ]
    run = centaur("run", str(session), "--quiet", cwd=session.parent)
    assert run.returncode == 0, run.stderr + run.stdout
    assert " 0 calls sent" in run.stdout, run.stdout
    out = session.parent / "report.json"
    report = centaur("report", str(session), "--json", str(out), cwd=session.parent)
    assert report.returncode == 0, report.stderr
    ranked = json.dumps(json.loads(out.read_text(encoding="utf-8"))["modes"])
    assert '"Zulu"' in ranked and '"Alpha"' not in ranked and '"JudgeNorth"' not in ranked
    assert "retired entry" not in report.stdout
    # The rename rewrote chained rows: the chain was built again, and the head before each rename is kept.
    verified = centaur("verify", str(session), cwd=session.parent)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    with sqlite3.connect(db) as conn:
        kept = conn.execute("SELECT count(*) FROM meta WHERE key LIKE 'chain_head_before_change_%'").fetchone()[0]
    assert kept == 2


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (("--rename", "Nobody=Alpha"), "no stored item is named 'Nobody'"),
        (("--rename", "Alpha=Ghost"), "'Alpha' is still a candidate of the session file"),
        (("--rename", "Alpha"), "is not OLD=NEW"),
        (("--retire", "Alpha"), "still a candidate of the session file"),
        ((), "--rename OLD=NEW and/or --retire NAME"),
    ],
    ids=["unknown-old", "old-still-there", "no-equals", "retire-present", "nothing-asked"],
)
def test_migrate_refuses_what_does_not_apply_and_writes_nothing(
    session: Path, args: tuple[str, ...], expect: str
) -> None:
    refused(session, ("migrate", str(session), *args), expect=[expect])


def test_migrate_refuses_a_rename_onto_a_name_the_file_lacks_or_one_with_items_and_a_retired_worker(
    session: Path,
) -> None:
    edit(session, 'name = "Alpha"', 'name = "Alpha2"')
    refused(session, ("migrate", str(session), "--rename", "Alpha=Ghost"), expect=["'Ghost' is not a candidate"])
    refused(session, ("migrate", str(session), "--rename", "Alpha=Beta"), expect=["'Beta' already has"])
    edit(session, 'name = "Worker"', 'name = "Worker2"')
    refused(session, ("migrate", str(session), "--retire", "Worker"), expect=["a new worker needs a database"])


def test_free_changes_are_accepted_new_model_judge_runs_limits(session: Path) -> None:
    edit(session, "runs = 1", "runs = 2")
    edit(session, "concurrency = 32", "concurrency = 8")
    extra = """
        [[judges]]
        name = "JudgeEast2"
        model = "simulated/judge-east2"
        family = "Far"
        simulation = { noise = 0.5 }
    """
    session.write_text(session.read_text(encoding="utf-8") + extra, encoding="utf-8")
    proc = centaur("check", str(session), cwd=session.parent)
    assert proc.returncode == 0, proc.stderr
    report = centaur("report", str(session), cwd=session.parent)
    assert report.returncode == 0, report.stderr


async def test_the_app_lists_a_session_file_on_another_sessions_database_as_invalid(tmp_path: Path) -> None:
    from textual.widgets import DataTable

    from centaur_tui.ui.app import create_app
    from centaur_tui.ui.screens.home import HomeScreen
    from tests.support.experts import judged_session
    from tests.support.waits import wait_for

    path = judged_session(tmp_path)
    folder = path.parent
    # Listed after small.toml: the database is already open in the app when the twin is read.
    twin = path.read_text(encoding="utf-8").replace('name = "small"', 'name = "twin"\ndatabase = "small.db"', 1)
    (folder / "twin.toml").write_text(twin, encoding="utf-8")
    before = snapshot(folder / "small.db")
    app = create_app(sessions_dir=folder)
    async with app.run_test(size=(160, 30)) as pilot:
        home = app.screen
        assert isinstance(home, HomeScreen)
        await wait_for(pilot, lambda: home.loaded, "the sessions to be read")
        table = home.query_one("#sessions", DataTable)
        rows = {str(table.get_row_at(i)[0]): [str(c) for c in table.get_row_at(i)] for i in range(table.row_count)}
        assert rows["twin"][1] == "invalid" and rows["small"][1] == "simulated"
        error = next(r.error for r in home.rows if r.name == "twin")
        assert error is not None and "belongs to session 'small'" in error
    assert snapshot(folder / "small.db") == before
