"""`centaur import-outputs` (issue 17): outputs made elsewhere, their comparisons, judged like generated ones.

Every broken or hostile file is refused whole with exit status 2, a message naming the file and
the line or field, and nothing written (the database is not even created); the same file twice
stores nothing new; another text for a stored output is refused.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import sqlite3
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.errors import ConfigError
from centaur_tui.formats.text import MAX_TEXT_CHARS
from centaur_tui.pipeline import Pipeline
from centaur_tui.store import Store, session_blinding
from tests.support.sessions import TASKS

IMPORTED = textwrap.dedent(
    """
    [[candidates]]
    name = "Zephyrine-7B"
    source = "imported"
    family = "Acme"

    [[candidates]]
    name = "Boreal 2"
    source = "imported"
    family = "Polar"

    [[candidates]]
    name = "Cirrus"
    source = "imported"
    family = "Sky"
    augmentation = true
    automation = false
    """
)
JUDGES = textwrap.dedent(
    """
    [[judges]]
    name = "JudgeNorth"
    model = "simulated/judge-north"
    family = "North"

    [[judges]]
    name = "JudgeSouth"
    model = "simulated/judge-south"
    family = "South"
    """
)
MODEL = textwrap.dedent(
    """
    [[models]]
    name = "Alpha"
    model = "simulated/alpha"
    family = "North"
    augmentation = false
    """
)


def _session(folder: Path, *, extra: str = "", models: str = "", runs: int = 1) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "byo.toml"
    path.write_text(
        f'name = "byo"\nruns = {runs}\ntasks = ["counseling", "tutoring"]\ntasks_dir = "{TASKS}"\n'
        f"[limits]\nbackoff_base_s = 0.0\n{models}{IMPORTED}{JUDGES}{extra}",
        encoding="utf-8",
    )
    return path


def _rows(n_tasks: int = 2) -> list[dict[str, str]]:
    rows = []
    for task in ("counseling", "tutoring")[:n_tasks]:
        for i, name in enumerate(("Zephyrine-7B", "Boreal 2")):
            rows.append(
                {"task": task, "candidate": name, "text": f"A deliverable for {task}, take {i}.\n\nSecond part."}
            )
    return rows


def _csv(rows: list[dict[str, str]], columns: list[str] | None = None) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns or list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _import(session: Path, file: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["import-outputs", str(session), str(file)])
    return result.exit_code, result.output


def test_outputs_are_stored_with_their_round_robin_and_reimport_is_idempotent(tmp_path: Path) -> None:
    session = _session(tmp_path)
    file = tmp_path / "outputs.csv"
    file.write_text(_csv(_rows()), encoding="utf-8")
    code, out = _import(session, file)
    assert code == 0, out
    assert "4 output(s) read; 4 stored (0 assistance text(s)), 0 already stored identically; 0 refused." in out
    assert "Comparisons: 2 new, 2 in the tournaments of these outputs." in out  # one pair per task
    code, out = _import(session, file)
    assert code == 0, out
    assert "0 stored (0 assistance text(s)), 4 already stored identically" in out and "Comparisons: 0 new, 2" in out
    with sqlite3.connect(tmp_path / "byo.db") as db:
        assert db.execute("SELECT count(*), min(origin), count(call_key) FROM outputs").fetchone() == (4, "imported", 0)
        assert db.execute("SELECT count(*) FROM comparisons").fetchone() == (2,)


def test_jsonl_with_mode_run_worker_and_assistance_text(tmp_path: Path) -> None:
    session = _session(tmp_path, runs=2)
    file = tmp_path / "outputs.jsonl"
    lines = [
        {"task": "counseling", "candidate": "Cirrus", "text": "Plan written by a person.", "mode": "augmentation",
         "run": 2, "worker": "nurse_7", "assistance_text": "Check the safety requirement first."},
        {"task": "counseling", "candidate": "Zephyrine-7B", "text": "Solved.", "mode": "automation", "run": 2},
    ]  # fmt: skip
    file.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    code, out = _import(session, file)
    assert code == 0, out
    assert "2 stored (1 assistance text(s))" in out
    with sqlite3.connect(tmp_path / "byo.db") as db:
        row = db.execute(
            "SELECT o.run, o.mode, o.worker, a.text FROM outputs o JOIN assistance_texts a ON a.id = o.assistance_id"
        ).fetchone()
    assert row == (2, "augmentation", "nurse_7", "Check the safety requirement first.")


def test_an_exported_outputs_csv_imports_as_it_is(tmp_path: Path) -> None:
    """`centaur export`'s outputs.csv (run, task, mode, candidate, worker, text, assistance_text, output_id)."""
    session = _session(tmp_path)
    columns = ["run", "task", "mode", "candidate", "worker", "text", "assistance_text", "output_id"]
    rows = [{**r, "run": "1", "mode": "automation", "worker": r["candidate"], "output_id": "o123"} for r in _rows()]
    file = tmp_path / "outputs.csv"
    file.write_text(_csv([{c: r.get(c, "") for c in columns} for r in rows], columns), encoding="utf-8")
    code, out = _import(session, file)
    assert code == 0 and "4 stored" in out, out
    with sqlite3.connect(tmp_path / "byo.db") as db:
        assert db.execute("SELECT count(*) FROM outputs WHERE id = 'o123'").fetchone() == (0,)


def test_a_changed_text_is_refused_as_a_conflict_and_nothing_is_written(tmp_path: Path) -> None:
    session = _session(tmp_path)
    file = tmp_path / "outputs.csv"
    file.write_text(_csv(_rows()), encoding="utf-8")
    assert _import(session, file)[0] == 0
    rows = _rows()
    rows[0]["text"] = "Another text."
    file.write_text(_csv(rows), encoding="utf-8")
    before = (tmp_path / "byo.db").stat().st_size
    code, out = _import(session, file)
    assert code == 2, out
    assert "line 2" in out and "already stored with a different text" in out and "Nothing was imported" in out
    with sqlite3.connect(tmp_path / "byo.db") as db:
        assert db.execute("SELECT count(*) FROM outputs").fetchone() == (4,)
    assert (tmp_path / "byo.db").stat().st_size == before


ESC = "\x1b"


def _row(**fields: str) -> dict[str, str]:
    """A row for Boreal 2 on counseling, with `fields` changed."""
    return {"task": "counseling", "candidate": "Boreal 2", "text": "t", **fields}


HOSTILE_ROWS = {
    "unknown task": (_row(task="astrology"), "field task", "astrology"),
    "task not in the session": (_row(task="menu_planning"), "field task", "not a task of this session"),
    "empty text": (_row(text="  \n "), "field text", "empty"),
    "escape sequence": (_row(text=f"hi {ESC}[2J{ESC}]0;pwn\x07"), "field text", "escape sequence (U+001B)"),
    "control character": (_row(text="a\x00b"), "field text", "control character (U+0000)"),
    "bidi override": (_row(text="abc\u202edcb"), "field text", "U+202E"),
    "unknown candidate": (_row(candidate="Mystery"), "field candidate", "unknown candidate 'Mystery'"),
    "generated candidate": (_row(candidate="plain"), "field candidate", "generated candidate"),
    "wrong mode for the candidate": (_row(candidate="Cirrus"), "field candidate", "does not take part in automation"),
    "bad mode": (_row(mode="hybrid"), "field mode", "'hybrid'"),
    "run out of range": (_row(run="2"), "field run", "1 to 1"),
    "assistance text in automation": (_row(assistance_text="a"), "field assistance_text", "automation"),
    "worker with a bell": (_row(worker="a\x07b"), "field worker", "control character"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_ROWS))
def test_a_bad_row_refuses_the_whole_file(tmp_path: Path, case: str) -> None:
    row, field, message = HOSTILE_ROWS[case]
    session = _session(tmp_path)
    rows = [*_rows(), row]
    columns = ["task", "candidate", "text", "mode", "run", "worker", "assistance_text"]
    for suffix in (".csv", ".jsonl"):
        file = tmp_path / f"outputs{suffix}"
        if suffix == ".csv":
            file.write_text(_csv([{c: r.get(c, "") for c in columns} for r in rows], columns), encoding="utf-8")
            line = "line 14"  # the header, then four good rows of three lines each (a text holds two newlines)
        else:
            file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
            line = "line 5"
        code, out = _import(session, file)
        assert code == 2, (suffix, out)
        flat = " ".join(out.split())
        assert f"{file.name} {line}, {field}" in flat.replace(str(tmp_path) + "/", ""), (suffix, out)
        assert message in flat, (suffix, out)
        assert "nothing was imported" in flat and "Traceback" not in out
        assert not (tmp_path / "byo.db").exists(), "a refused file must not create the database"


def test_a_text_over_the_limit_and_a_duplicate_are_refused(tmp_path: Path) -> None:
    session = _session(tmp_path)
    rows = [*_rows(), {"task": "counseling", "candidate": "Zephyrine-7B", "text": "again"}]
    rows[1]["text"] = "w" * (MAX_TEXT_CHARS + 1)
    file = tmp_path / "outputs.csv"
    file.write_text(_csv(rows), encoding="utf-8")
    limit = csv.field_size_limit()
    code, out = _import(session, file)
    assert csv.field_size_limit() == limit  # raised for the read only: the export-format import keeps its own
    flat = " ".join(out.split())
    assert code == 2
    assert "outputs.csv line 5, field text: 200,001 characters, more than 200,000" in flat
    assert "outputs.csv line 12, field candidate: a second output of 'Zephyrine-7B' for task 'counseling'" in flat
    assert "(also line 2)" in flat and "2 problem(s)" in flat
    assert not (tmp_path / "byo.db").exists()


BAD_FILES = {
    "UTF-16": (_csv(_rows()).encode("utf-16"), "UTF-16"),
    "latin-1": (_csv(_rows()).replace("take", "také").encode("latin-1"), "line 2: not UTF-8"),
    "missing column": (b"task,candidate\ncounseling,Boreal 2\n", "missing column(s): text"),
    "duplicate column": (b"task,candidate,text,text\ncounseling,Boreal 2,a,b\n", "duplicate column(s): text"),
    "short row": (b"task,candidate,text\ncounseling,Boreal 2\n", "line 2: 2 cell(s) but the header has 3"),
    "unclosed quote": (b'task,candidate,text\ncounseling,Boreal 2,"never closed\n', "malformed CSV"),
    "empty": (b"", "empty file"),
    "header only": (b"task,candidate,text\n", "no output in the file"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_broken_csv_file_is_refused(tmp_path: Path, case: str) -> None:
    data, message = BAD_FILES[case]
    session = _session(tmp_path)
    file = tmp_path / "outputs.csv"
    file.write_bytes(data)
    code, out = _import(session, file)
    assert code == 2, out
    assert message in " ".join(out.split()) and "outputs.csv" in out and "Traceback" not in out
    assert not (tmp_path / "byo.db").exists()


BOREAL = '"task": "counseling", "candidate": "Boreal 2"'
BAD_JSONL = {
    "array": ('["counseling", "Boreal 2", "t"]', "line 1: a JSON list, not an object"),
    "not JSON": ("{task: counseling}", "line 1: not JSON"),
    "string": ('"just text"', "line 1: a JSON str, not an object"),
    "missing key": ("{" + BOREAL + "}", "line 1, field text: missing"),
    "null text": ("{" + BOREAL + ', "text": null}', "line 1, field text: missing"),
    "number as text": ("{" + BOREAL + ', "text": 42}', "field text: a JSON int, not a string"),
    "bool as run": ("{" + BOREAL + ', "text": "t", "run": true}', "field run"),
    "candidate as list": ('{"task": "counseling", "candidate": ["Boreal 2"], "text": "t"}', "a JSON list"),
}


@pytest.mark.parametrize("case", sorted(BAD_JSONL))
def test_a_broken_jsonl_line_is_refused(tmp_path: Path, case: str) -> None:
    line, message = BAD_JSONL[case]
    session = _session(tmp_path)
    file = tmp_path / "outputs.jsonl"
    file.write_text(line + "\n" + json.dumps(_rows()[0]) + "\n", encoding="utf-8")
    code, out = _import(session, file)
    assert code == 2, out
    assert message in " ".join(out.split()) and "outputs.jsonl" in out and "Traceback" not in out
    assert not (tmp_path / "byo.db").exists()


def test_other_extensions_and_missing_files_are_refused(tmp_path: Path) -> None:
    session = _session(tmp_path)
    file = tmp_path / "outputs.xlsx"
    file.write_text(_csv(_rows()), encoding="utf-8")
    code, out = _import(session, file)
    assert code == 2 and "unknown format '.xlsx'" in out
    code, out = _import(session, tmp_path / "none.csv")
    assert code == 2 and "file not found" in out
    assert not (tmp_path / "byo.db").exists()


@pytest.mark.parametrize("name", ["Q", "x", "7"])
def test_a_candidate_name_blinding_cannot_mask_is_refused_by_the_loader(tmp_path: Path, name: str) -> None:
    path = _session(tmp_path, extra=f'\n[[candidates]]\nname = "{name}"\nsource = "imported"\nfamily = "Zed"\n')
    with pytest.raises(ConfigError) as err:
        load_session(path)
    assert f"candidates[3 '{name}'].name" in str(err.value) and "not masked in full" in str(err.value)


def test_session_file_rules_for_imported_candidates(tmp_path: Path) -> None:
    def problem(extra: str, models: str = "") -> str:
        path = _session(tmp_path, extra=extra, models=models)
        with pytest.raises(ConfigError) as err:
            load_session(path)
        return str(err.value)

    assert "duplicate candidate names: Boreal 2" in problem(
        '\n[[candidates]]\nname = "Boreal 2"\nsource = "imported"\nfamily = "X"\n'
    )
    assert "source" in problem('\n[[candidates]]\nname = "Nimbus"\nsource = "generated"\nfamily = "X"\n')
    assert "both a model and an imported candidate: Boreal 2" in problem(
        "", models='[[models]]\nname = "Boreal 2"\nmodel = "simulated/b"\nfamily = "Polar"\naugmentation = false\n'
    )
    assert "[worker] is required" in problem(
        "", models='[[models]]\nname = "Aug"\nmodel = "simulated/a"\nfamily = "A"\n'
    )


def test_an_expert_named_like_an_imported_candidate_is_refused(tmp_path: Path) -> None:
    path = _session(tmp_path, extra='\n[[experts]]\nid = "cirrus"\nname = "C"\n')
    load_session(path)  # ids are lowercase: "cirrus" is not "Cirrus"
    study = load_session(path)
    assert study.session.name_clash("Cirrus") == "the name of imported candidate 'Cirrus'"


def test_imported_outputs_are_judged_by_llm_judges_beside_generated_ones(tmp_path: Path) -> None:
    """A mixed session: Alpha is generated, the others imported; only Alpha's and the judges' calls are made."""
    session = _session(tmp_path, models=MODEL)
    file = tmp_path / "outputs.csv"
    file.write_text(_csv(_rows(n_tasks=1)), encoding="utf-8")  # counseling only: tutoring stays blocked
    assert _import(session, file)[0] == 0
    study = load_session(session)
    with Store(study.database) as store:
        outcome = asyncio.run(Pipeline(study, store).run())
        stages = outcome.outcomes.stages
        assert stages["automation"].planned == 2 and stages["automation"].answered == 2  # Alpha x 2 tasks
        # counseling: 3 pairs (Alpha-Boreal, Alpha-Zephyrine, Boreal-Zephyrine); JudgeNorth may not judge
        # Alpha's (North): 1 + 3 = 4 judgments. tutoring: 3 pairs blocked (no imported output) = 4 blocked.
        assert stages["judging"].answered == 4 and stages["judging"].blocked == 4
        calls = dict(store.read_table("SELECT stage, count(*) FROM calls GROUP BY stage").rows)
        assert calls == {"automation": 2, "judging": 4}
        judged = store.read("SELECT DISTINCT c.candidate_a, c.candidate_b FROM judgments j JOIN comparisons c"
                            " ON c.id = j.comparison_id")  # fmt: skip
    assert {(r["candidate_a"], r["candidate_b"]) for r in judged} == {
        ("Alpha", "Boreal 2"),
        ("Alpha", "Zephyrine-7B"),
        ("Boreal 2", "Zephyrine-7B"),
    }
    assert not outcome.complete  # tutoring's imported outputs are missing: said, not hidden


def test_a_session_of_imported_outputs_only_needs_no_worker_and_no_generation(tmp_path: Path) -> None:
    session = _session(tmp_path)
    file = tmp_path / "outputs.csv"
    file.write_text(_csv(_rows()), encoding="utf-8")
    assert _import(session, file)[0] == 0
    study = load_session(session)
    assert study.session.worker is None and study.session.models == ()
    with Store(study.database) as store:
        outcome = asyncio.run(Pipeline(study, store).run())
        assert outcome.complete
        assert dict(store.read_table("SELECT stage, count(*) FROM calls GROUP BY stage").rows) == {"judging": 4}
    check = CliRunner().invoke(cli, ["check", str(session)])
    assert check.exit_code == 0 and "3 imported candidate(s): Boreal 2, Cirrus, Zephyrine-7B" in check.output
    report = CliRunner().invoke(cli, ["report", str(session), "--bootstrap", "0"])
    assert report.exit_code == 0, report.output
    assert "Boreal 2" in report.output and "winner-only" not in report.output  # LLM judges score every rubric


def test_imported_candidate_names_are_masked_for_experts(tmp_path: Path) -> None:
    study = load_session(_session(tmp_path))
    masked, log = session_blinding(study).mask("I am Zephyrine 7B, better than boreal-2, says Acme.")
    assert "zephyrine" not in masked.lower() and "boreal" not in masked.lower() and "acme" not in masked.lower()
    assert {m.term for m in log} >= {"Acme"}
