"""Winner-only judgments in `centaur import` (issue 17): the documented CSV, MT-Bench's layout, hostile files.

A label outside the declared set is refused, never read as a tie; every problem names the file,
the line and the field, exits 2 and writes nothing.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.cli.main import cli
from tests.support.sessions import TASKS

DATA = Path(__file__).parent.parent / "examples" / "mtbench"
SESSION = f"""name = "byo"
runs = 1
tasks = ["counseling"]
tasks_dir = "{TASKS}"

[judging]
{{judging}}

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

[[judges]]
name = "JudgeAcme"
model = "simulated/judge-acme"
family = "Acme"

[[judges]]
name = "JudgeWest"
model = "simulated/judge-west"
family = "West"

[[experts]]
id = "ann"
name = "Ann"

[[experts]]
id = "bob"
name = "Bob"
tasks = ["counseling"]
"""
OUTPUTS = "task,candidate,text\n" + "".join(
    f"counseling,{name},Reply number {i} to Sam.\n" for i, name in enumerate(("Zephyrine-7B", "Boreal 2", "Cirrus"))
)
COLUMNS = ["task", "model_a", "model_b", "winner", "judge"]


def _session(folder: Path, judging: str = "") -> Path:
    path = folder / "byo.toml"
    path.write_text(SESSION.replace("{judging}", judging), encoding="utf-8")
    outputs = folder / "outputs.csv"
    outputs.write_text(OUTPUTS, encoding="utf-8")
    result = CliRunner().invoke(cli, ["import-outputs", str(path), str(outputs)])
    assert result.exit_code == 0, result.output
    return path


def _csv(rows: list[dict[str, str]]) -> str:
    columns = list(dict.fromkeys(c for r in rows for c in r))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n", restval="")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _judgment(**fields: str) -> dict[str, str]:
    return {"task": "counseling", "model_a": "Boreal 2", "model_b": "Zephyrine-7B", "winner": "model_a", **fields}


GOOD = [
    _judgment(judge="ann"),
    _judgment(judge="bob", winner="tie"),
    _judgment(judge="JudgeWest", winner="Zephyrine-7B"),
    _judgment(judge="ann", model_a="Cirrus", model_b="Boreal 2", winner="tie (bothbad)"),
]


def _import(session: Path, file: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["import", str(session), str(file), *args])
    return result.exit_code, result.output


def _judgments(session: Path) -> list[tuple]:
    with sqlite3.connect(session.with_suffix(".db")) as db:
        return db.execute(
            "SELECT j.judge, j.judge_kind, j.option1, j.option2, j.winner, j.option1_mean, "
            "(SELECT count(*) FROM scores s WHERE s.judgment_id = j.id) FROM judgments j ORDER BY j.id"
        ).fetchall()


def test_the_documented_csv_is_stored_winner_only(tmp_path: Path) -> None:
    session = _session(tmp_path)
    file = tmp_path / "winners.csv"
    file.write_text(_csv(GOOD), encoding="utf-8")
    code, out = _import(session, file)
    assert code == 0, out
    assert "4 winner-only judgment(s) read; 4 stored" in out
    assert _judgments(session) == [
        ("ann", "expert", "Boreal 2", "Zephyrine-7B", "Boreal 2", None, 0),
        ("bob", "expert", "Boreal 2", "Zephyrine-7B", "tie", None, 0),
        ("JudgeWest", "llm", "Boreal 2", "Zephyrine-7B", "Zephyrine-7B", None, 0),
        ("ann", "expert", "Cirrus", "Boreal 2", "tie", None, 0),
    ]
    code, out = _import(session, file)
    assert code == 0 and "0 stored, 4 already stored identically" in out


def test_a_changed_winner_is_a_conflict_and_nothing_is_written(tmp_path: Path) -> None:
    session = _session(tmp_path)
    file = tmp_path / "winners.csv"
    file.write_text(_csv(GOOD[:1]), encoding="utf-8")
    assert _import(session, file)[0] == 0
    file.write_text(_csv([GOOD[1], _judgment(judge="ann", winner="model_b")]), encoding="utf-8")
    code, out = _import(session, file)
    assert code == 2 and "already stored as id 1 with a different winner" in out and "Nothing was imported" in out
    assert len(_judgments(session)) == 1  # bob's new judgment was not stored either


HOSTILE = {
    "label outside the set": (_judgment(judge="ann", winner="both"), "field winner", "'both' is not one of"),
    "label in other case": (_judgment(judge="ann", winner="Tie"), "field winner", "never read as a tie"),
    "empty winner": (_judgment(judge="ann", winner=""), "field winner", "is not one of"),
    "winner not of the pair": (_judgment(judge="ann", winner="Cirrus"), "field winner", "'Cirrus' is not one of"),
    "unknown expert": (_judgment(judge="carol"), "field judge", "--add-experts"),
    "ineligible LLM judge": (_judgment(judge="JudgeAcme"), "field judge", "leave-family-out"),
    "task not in the session": (_judgment(judge="bob", task="tutoring"), "field task", "not a task of this session"),
    "unknown candidate": (_judgment(judge="ann", model_b="Nimbus"), "field model_b", "'Nimbus' is not an automation"),
    "same candidate twice": (_judgment(judge="ann", model_b="Boreal 2"), "field model_b", "the same candidate"),
    "judge kind unknown": (_judgment(judge="ann", judge_kind="robot"), "field judge_kind", "'robot'"),
    "judge kind mislabelled": (_judgment(judge="JudgeWest", judge_kind="expert"), "field judge", "is the name of LLM"),
    "control character in rationale": (_judgment(judge="ann", rationale="ok\x1b[31m"), "field rationale", "escape"),
    "run outside the session": (_judgment(judge="ann", run="3"), "field run", "1 to 1"),
    "twice by the same judge in the same order": (
        _judgment(judge="bob", winner="model_b"),
        "field judge",
        "in this order twice (also line 3); choose --duplicates keep-first or keep-last",
    ),
    "an LLM judge in the other order where the session judges one": (
        _judgment(judge="JudgeWest", model_a="Zephyrine-7B", model_b="Boreal 2"),
        "field model_a",
        'in the other order too (line 4); an LLM judge\'s second order needs [judging] orders = "both"',
    ),
    "unknown expert, an id nobody may hold": (
        _judgment(judge="Cirrus", judge_kind="expert"),
        "field judge",
        "is the name of imported candidate",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_bad_judgment_refuses_the_file(tmp_path: Path, case: str) -> None:
    row, field, message = HOSTILE[case]
    session = _session(tmp_path)
    before = session.with_suffix(".db").read_bytes()
    file = tmp_path / "winners.csv"
    file.write_text(_csv([*GOOD, row]), encoding="utf-8")
    code, out = _import(session, file)
    flat = " ".join(out.split())
    assert code == 2, out
    assert f"winners.csv line 6, {field}" in flat and message in flat, out
    assert "nothing was imported" in flat and "Traceback" not in out
    assert _judgments(session) == [] and session.with_suffix(".db").read_bytes() == before


def test_ties_are_refused_where_the_session_allows_none(tmp_path: Path) -> None:
    session = _session(tmp_path, judging="allow_ties = false")
    file = tmp_path / "winners.csv"
    file.write_text(_csv([GOOD[0], GOOD[3]]), encoding="utf-8")
    code, out = _import(session, file)
    assert code == 2 and "winners.csv line 3, field winner: 'tie', but this session does not allow ties" in out


def test_add_experts_registers_new_judges(tmp_path: Path) -> None:
    session = _session(tmp_path)
    file = tmp_path / "winners.jsonl"
    file.write_text(json.dumps(_judgment(judge="carol")) + "\n", encoding="utf-8")
    assert _import(session, file)[0] == 2
    code, out = _import(session, file, "--add-experts", "carol")
    assert code == 0 and "Registered 1 expert(s): carol" in out


def _mtbench(tmp_path: Path) -> Path:
    folder = tmp_path / "mtbench"
    shutil.copytree(DATA, folder)
    return folder / "mtbench.toml"


def _rows() -> list[dict]:
    return [json.loads(line) for line in (DATA / "mt_bench_human_judgments.jsonl").read_text().splitlines()]


def _mtbench_refuses(tmp_path: Path, rows: list[dict], *args: str) -> str:
    session = _mtbench(tmp_path)
    file = session.parent / "broken.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out = _import(session, file, *args)
    assert code == 2, out
    assert not session.with_suffix(".db").exists(), "a refused file must not create the database"
    return " ".join(out.split())


def test_mtbench_turn_two_needs_its_own_task(tmp_path: Path) -> None:
    rows = _rows()
    rows[5]["turn"] = 2
    out = _mtbench_refuses(tmp_path, rows)
    assert "broken.jsonl line 6, field question_id: 'mtbench_81_t2' (made from question_id and turn" in out


def test_mtbench_task_template_maps_questions(tmp_path: Path) -> None:
    out = _mtbench_refuses(tmp_path, _rows()[:3], "--task-template", "q{question_id}")
    assert "'q81' (made from question_id and turn by --task-template 'q{question_id}') is not a task" in out


def test_a_broken_task_template_is_refused(tmp_path: Path) -> None:
    for template in ("mtbench_{qid}", "{0}", "mtbench_{question_id"):
        out = _mtbench_refuses(
            tmp_path / template.replace("{", "(").replace("}", ")"), _rows()[:2], "--task-template", template
        )
        assert f"--task-template {template!r}: not a template of {{question_id}} and {{turn}}" in out


MTBENCH_HOSTILE = {
    "winner label": (lambda r: r.update(winner="model_c"), "field winner", "'model_c' is not one of"),
    "conversation without the turn": (
        lambda r: r.update(conversation_a=[{"role": "user", "content": "hi"}]),
        "field conversation_a",
        "no assistant answer for turn 1",
    ),
    "another text for the same output": (
        lambda r: r["conversation_b"][1].update(content="A different answer."),
        "field conversation_b",
        "another text for",
    ),
    "escape in a conversation": (
        lambda r: r["conversation_a"][1].update(content="\x1b]0;owned\x07 hi"),
        "field conversation_a",
        "escape sequence",
    ),
    "question id of the wrong type": (lambda r: r.update(question_id=[81]), "field question_id", "not a question id"),
    "model outside the session": (lambda r: r.update(model_a="gpt-4"), "field model_a", "'gpt-4' is not an automation"),
    "missing winner": (lambda r: r.pop("winner"), "field winner", "missing"),
    "judge as a list": (lambda r: r.update(judge=["expert_0"]), "field judge", "a JSON list, not a string"),
    "winner as a number": (lambda r: r.update(winner=1), "field winner", "1 is not one of"),
    "turn zero": (lambda r: r.update(turn=0), "field turn", "0 is not a turn number"),
}


@pytest.mark.parametrize("case", sorted(MTBENCH_HOSTILE))
def test_a_broken_mtbench_row_refuses_the_file(tmp_path: Path, case: str) -> None:
    change, field, message = MTBENCH_HOSTILE[case]
    rows = _rows()
    change(rows[7])
    out = _mtbench_refuses(tmp_path, rows)
    assert f"broken.jsonl line 8, {field}" in out and message in out, out


def test_a_row_without_conversations_needs_stored_outputs(tmp_path: Path) -> None:
    rows = _rows()
    for r in rows:
        r.pop("conversation_a")
        r.pop("conversation_b")
    out = _mtbench_refuses(tmp_path, rows)
    assert "broken.jsonl line 1, field conversation_a: no output of 'claude-v1'" in out


def test_export_folders_without_scores_are_winner_only(tmp_path: Path) -> None:
    """The export format with scores.csv left out (--external): every valid judgment is winner-only."""
    session = _session(tmp_path)
    with sqlite3.connect(session.with_suffix(".db")) as db:
        cid = db.execute(
            "SELECT id FROM comparisons WHERE candidate_a = 'Boreal 2' AND candidate_b = 'Cirrus'"
        ).fetchone()[0]
    folder = tmp_path / "external"
    folder.mkdir()
    row = {
        "run": "1", "task": "counseling", "mode": "automation", "comparison_id": cid, "judge": "ann",
        "judge_kind": "expert", "judge_family": "", "option1": "Cirrus", "option2": "Boreal 2", "winner": "Cirrus",
        "option1_mean": "", "option2_mean": "", "valid": "true", "invalid_reason": "", "rationale": "clearer",
    }  # fmt: skip
    (folder / "judgments.csv").write_text(_csv([row]), encoding="utf-8")
    code, out = _import(session, folder, "--external")
    assert code == 0, out
    assert "1 winner-only judgment(s) (no rubric scores): left out of rubric statistics." in out
    assert _judgments(session) == [("ann", "expert", "Cirrus", "Boreal 2", "Cirrus", None, 0)]
    # A partial set of scores is still refused: winner-only means no score at all.
    (folder / "scores.csv").write_text(
        "comparison_id,judge,candidate,dimension,dimension_kind,score,judgment_id\n"
        f"{cid},bob,Cirrus,empathic_reflection,task,7,\n",
        encoding="utf-8",
    )
    (folder / "judgments.csv").write_text(_csv([{**row, "judge": "bob"}]), encoding="utf-8")
    code, out = _import(session, folder, "--external")
    assert code == 2 and "valid judgment lacks scores.csv rows" in out
