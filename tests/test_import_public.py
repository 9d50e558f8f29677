"""Public human-judgment data in one command each (issue 22): MT-Bench's and Chatbot Arena's layouts.

Each sample is written here in the published layout (no task file, no LLM judge, judge ids as
published), imported with one `centaur import` and reported; every expected figure is counted by
hand from the rows below.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.cli.main import cli
from tests.support.sessions import TASKS

MODELS = {"alpaca-13b": "Stanford", "claude-v1": "Anthropic", "gpt-3.5-turbo": "OpenAI", "vicuna-13b-v1.2": "LMSYS"}
SESSION = f'name = "{{name}}"\nruns = 1\ngeneric_tasks = ["{{task}}"]\ntasks_dir = "{TASKS}"\n' + "".join(
    f'\n[[candidates]]\nname = "{m}"\nsource = "imported"\nfamily = "{f}"\n' for m, f in MODELS.items()
)
UUID_1 = "2b1e8c1e-8f3a-4c7e-9d2b-5f6a7b8c9d0e"


def _conversation(question: str, model: str, second: str = "Rewrite it for a child.") -> list[dict[str, str]]:
    return [
        {"content": question, "role": "user"},
        {"content": f"{model} answers: {question.lower()}", "role": "assistant"},
        {"content": second, "role": "user"},
        {"content": f"{model}, second turn", "role": "assistant"},
    ]


def _mtbench(qid: int, a: str, b: str, winner: str, judge: str, turn: int = 1) -> dict[str, object]:
    question = f"Question {qid}: describe a trip to Hawaii."
    return {
        "question_id": qid,
        "model_a": a,
        "model_b": b,
        "winner": winner,
        "judge": judge,
        "conversation_a": _conversation(question, a),
        "conversation_b": _conversation(question, b),
        "turn": turn,
    }


# The public file's habits: published judge ids (author_0, expert_24, a UUID), one author voting
# twice on one comparison in both orders (rows 3 and 4), turn 2 of a question as its own question.
MTBENCH = [
    _mtbench(81, "claude-v1", "alpaca-13b", "model_a", "author_0"),  # 1: claude
    _mtbench(81, "claude-v1", "alpaca-13b", "model_a", "expert_24"),  # 2: claude
    _mtbench(81, "vicuna-13b-v1.2", "gpt-3.5-turbo", "model_b", "author_0"),  # 3: gpt-3.5
    _mtbench(81, "gpt-3.5-turbo", "vicuna-13b-v1.2", "model_b", "author_0"),  # 4: vicuna, the other order
    _mtbench(81, "vicuna-13b-v1.2", "gpt-3.5-turbo", "tie", "expert_24"),  # 5: tie
    _mtbench(82, "alpaca-13b", "claude-v1", "model_b", "author_0"),  # 6: claude
    _mtbench(82, "alpaca-13b", "claude-v1", "model_a", UUID_1),  # 7: alpaca
    _mtbench(82, "alpaca-13b", "claude-v1", "tie (bothbad)", "expert_24"),  # 8: tie
    _mtbench(81, "claude-v1", "alpaca-13b", "model_b", "author_0", turn=2),  # 9: alpaca, turn 2
    _mtbench(81, "claude-v1", "alpaca-13b", "model_b", "expert_24", turn=2),  # 10: alpaca, turn 2
    # The gpt4_pair split of the same file: GPT-4's verdict on each comparison.
    _mtbench(81, "claude-v1", "alpaca-13b", "model_a", "gpt4_pair"),  # 11: claude
    _mtbench(81, "vicuna-13b-v1.2", "gpt-3.5-turbo", "model_b", "gpt4_pair"),  # 12: gpt-3.5
    _mtbench(82, "alpaca-13b", "claude-v1", "model_b", "gpt4_pair"),  # 13: claude
    _mtbench(81, "claude-v1", "alpaca-13b", "model_b", "gpt4_pair", turn=2),  # 14: alpaca
]
GPT4 = '\n[[judges]]\nname = "gpt4_pair"\nmodel = "openai/gpt-4-0613"\nfamily = "GPT-4 judge"\n'


def _write(folder: Path, name: str, rows: list[dict[str, object]], *, crlf: bool, bom: bool) -> Path:
    text = "".join(json.dumps(r) + ("\r\n" if crlf else "\n") for r in rows)
    file = folder / name
    file.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))
    return file


def _study(folder: Path, name: str, task: str, extra: str = "") -> Path:
    session = folder / f"{name}.toml"
    session.write_text(SESSION.replace("{name}", name).replace("{task}", task) + extra, encoding="utf-8")
    return session


def _import(session: Path, file: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["import", str(session), str(file), *args])
    return result.exit_code, result.output


def _tables(db: Path) -> str:
    """A digest of every judgment-related table: byte-identical before and after a refused import."""
    if not db.exists():
        return "no database"
    with sqlite3.connect(db) as conn:
        rows = [
            conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
            for t in ("judgments", "comparisons", "outputs", "app_experts")
        ]
    return hashlib.sha256(repr(rows).encode()).hexdigest()


@pytest.fixture()
def mtbench(tmp_path: Path) -> tuple[Path, str]:
    session = _study(tmp_path, "mtbench", "mtbench", GPT4)
    file = _write(tmp_path, "human.jsonl", MTBENCH, crlf=True, bom=True)
    code, out = _import(session, file, "--new-judges-are-experts")
    assert code == 0, out
    return session, out


def test_mtbench_imports_in_one_command(mtbench: tuple[Path, str]) -> None:
    session, out = mtbench
    flat = " ".join(out.split())
    assert "14 winner-only judgment(s) read; 14 stored" in flat
    # Questions 81 t1 (claude/alpaca, vicuna/gpt-3.5), 82 t1 (alpaca/claude), 81 t2 (claude/alpaca).
    assert "comparisons: 4 new of 4" in flat
    assert "1 judgment(s) of a comparison the judge also judged in the other order" in flat
    assert f"Registered 3 expert(s): author_0, expert_24, {UUID_1}" in flat
    with sqlite3.connect(session.with_suffix(".db")) as db:
        assert db.execute("SELECT DISTINCT task FROM comparisons").fetchall() == [("mtbench",)]
        prompts = dict(db.execute("SELECT question, prompt FROM comparisons").fetchall())
        twice = db.execute(
            "SELECT presentation, option1, winner FROM judgments WHERE judge = 'author_0' AND option1 IN "
            "('vicuna-13b-v1.2', 'gpt-3.5-turbo') ORDER BY presentation"
        ).fetchall()
    assert prompts["mtbench_81_t1"] == "Question 81: describe a trip to Hawaii."
    assert prompts["mtbench_81_t2"] == "Question 81: describe a trip to Hawaii.\n\nRewrite it for a child."
    assert twice == [(0, "vicuna-13b-v1.2", "gpt-3.5-turbo"), (1, "gpt-3.5-turbo", "vicuna-13b-v1.2")]


def test_mtbench_agreement_matches_the_hand_count(mtbench: tuple[Path, str], tmp_path: Path) -> None:
    session, _ = mtbench
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        cli, ["report", str(session), "--judges", "all", "--bootstrap", "0", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    # A study of people only: nothing planned for an LLM, nothing to run.
    flat = " ".join(result.output.split())
    assert "No LLM call is planned in this session" in flat
    assert "run again" not in flat and "Planned" not in flat and "missing (" not in flat
    doc = json.loads(out.read_text(encoding="utf-8"))
    block = {b["block"]: b for b in doc["experts"]["agreement"]["blocks"]}["expert-expert"]
    # Pairs of experts on one comparison (first order of each: author_0's row 3, not row 4):
    # 81t1 claude/alpaca: author_0 claude, expert_24 claude -> agree.
    # 81t1 vicuna/gpt:    author_0 gpt-3.5 (row 3), expert_24 tie -> disagree.
    # 82t1 alpaca/claude: author_0 claude, UUID alpaca, expert_24 tie -> 3 pairs, 0 agree.
    # 81t2 claude/alpaca: author_0 alpaca, expert_24 alpaca -> agree.
    # 6 pairs, 2 agree; decisive pairs (no tie): 81t1 claude (agree), 82t1 author/UUID (disagree),
    # 81t2 (agree): 3, 2 agree.
    assert block["pairs"] == 6
    assert block["agreement"] == pytest.approx(2 / 6)
    assert block["decisive_pairs"] == 3
    assert block["decisive_agreement"] == pytest.approx(2 / 3)
    # Each expert's first verdict against GPT-4's: 81t1 claude/alpaca 2 of 2; vicuna/gpt-3.5 1 of 2
    # (expert_24's tie); 82t1 1 of 3 (author_0 only); 81t2 2 of 2: 6 of 9. Decisive (no tie): 6 of 7.
    llm = {b["block"]: b for b in doc["experts"]["agreement"]["blocks"]}["expert-LLM"]
    assert (llm["pairs"], llm["agreement"]) == (9, pytest.approx(6 / 9))
    assert (llm["decisive_pairs"], llm["decisive_agreement"]) == (7, pytest.approx(6 / 7))
    repeats = {r["judge"]: r for r in doc["experts"]["bias"]["repeats"]["rows"]}
    # author_0 judged vicuna/gpt-3.5 in both orders and changed sides: 1 pair, 0 the same.
    assert (repeats["author_0"]["n"], repeats["author_0"]["same"]) == (1, 0)


def test_importing_mtbench_again_stores_nothing(mtbench: tuple[Path, str], tmp_path: Path) -> None:
    session, _ = mtbench
    file = _write(tmp_path, "again.jsonl", MTBENCH, crlf=False, bom=False)
    code, out = _import(session, file)  # the experts are registered now: no flag needed
    assert code == 0, out
    assert "0 stored, 14 already stored identically" in out


@pytest.mark.parametrize(
    ("policy", "kept", "code"),
    [("refuse", None, 2), ("keep-first", "alpaca-13b", 0), ("keep-last", "claude-v1", 0)],
)
def test_a_duplicate_in_the_same_order_follows_the_policy(
    tmp_path: Path, policy: str, kept: str | None, code: int
) -> None:
    session = _study(tmp_path, "dup", "mtbench")
    rows = [*MTBENCH[:1], _mtbench(81, "claude-v1", "alpaca-13b", "model_b", "author_0")]
    rows[0] = {**rows[0], "winner": "model_b"}  # first: alpaca; second (same order): claude
    rows[1] = {**rows[1], "winner": "model_a"}
    file = _write(tmp_path, "dup.jsonl", rows, crlf=True, bom=False)
    got, out = _import(session, file, "--new-judges-are-experts", "--duplicates", policy)
    assert got == code, out
    if kept is None:
        flat = " ".join(out.split())
        assert "dup.jsonl line 2, field judge" in flat and "in this order twice (also line 1)" in flat
        assert not session.with_suffix(".db").exists()
        return
    assert "Duplicates: 1 repeated verdict(s)" in out
    with sqlite3.connect(session.with_suffix(".db")) as db:
        assert db.execute("SELECT winner FROM judgments").fetchall() == [(kept,)]


ARENA = [
    {"question_id": "a1f0", "model_a": "vicuna-13b-v1.2", "model_b": "alpaca-13b", "winner": "model_a"},
    {"question_id": "b2e1", "model_a": "claude-v1", "model_b": "gpt-3.5-turbo", "winner": "tie"},
    {"question_id": "c3d2", "model_a": "gpt-3.5-turbo", "model_b": "vicuna-13b-v1.2", "winner": "tie (bothbad)"},
    {"question_id": "d4c3", "model_a": "alpaca-13b", "model_b": "claude-v1", "winner": "model_b"},
    {"question_id": "e5b4", "model_a": "claude-v1", "model_b": "vicuna-13b-v1.2", "winner": "model_a"},
]


def _arena(rows: list[dict[str, str]]) -> list[dict[str, object]]:
    """Rows as lmsys/chatbot_arena_conversations publishes them, with fields the format does not read."""
    out: list[dict[str, object]] = []
    for n, r in enumerate(rows):
        question = f"Arena prompt {r['question_id']}"
        out.append(
            {
                **r,
                "judge": f"arena_user_{n % 2}",
                "conversation_a": _conversation(question, r["model_a"])[:2],
                "conversation_b": _conversation(question, r["model_b"])[:2],
                "turn": 1,
                "anony": True,
                "language": "English",
                "tstamp": 1682351591.1,
                "num": n,
            }
        )
    return out


def test_an_arena_set_imports_in_one_command_and_reports(tmp_path: Path) -> None:
    session = _study(tmp_path, "arena", "arena")
    file = _write(tmp_path, "arena.jsonl", _arena(ARENA), crlf=True, bom=True)
    code, out = _import(session, file, "--new-judges-are-experts")
    assert code == 0, out
    flat = " ".join(out.split())
    assert "5 winner-only judgment(s) read; 5 stored" in flat and "comparisons: 5 new of 5" in flat
    assert (
        "Ignored 3 column(s) not in the format: anony (5 record(s)), language (5 record(s)), num (5 record(s))" in flat
    )
    assert "Registered 2 expert(s): arena_user_0, arena_user_1" in flat
    result = CliRunner().invoke(cli, ["report", str(session), "--judges", "expert", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "No LLM call is planned in this session" in flat and "run again" not in flat
    with sqlite3.connect(session.with_suffix(".db")) as db:
        winners = db.execute("SELECT winner FROM judgments ORDER BY id").fetchall()
    # tie and tie (bothbad) are both a tie; a named winner is the candidate of that side.
    assert winners == [("vicuna-13b-v1.2",), ("tie",), ("tie",), ("claude-v1",), ("claude-v1",)]


HOSTILE = {
    "winner outside the set": ({"winner": "both"}, "field winner"),
    "judge id with a space": ({"judge": "arena user"}, "field judge"),
    "judge id of a candidate": ({"judge": "claude-v1"}, "field judge"),
    "unknown candidate": ({"model_b": "gpt-4"}, "field model_b"),
    "question id not a label": ({"question_id": "a\u202eb"}, "field question_id"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_bad_arena_line_names_file_line_field_and_writes_nothing(tmp_path: Path, case: str) -> None:
    change, where = HOSTILE[case]
    session = _study(tmp_path, "arena", "arena")
    good = _write(tmp_path, "good.jsonl", _arena(ARENA[:2]), crlf=False, bom=False)
    assert _import(session, good, "--new-judges-are-experts")[0] == 0
    before = _tables(session.with_suffix(".db"))
    rows = _arena(ARENA)
    rows[3] = {**rows[3], **change}
    file = _write(tmp_path, "bad.jsonl", rows, crlf=True, bom=False)
    code, out = _import(session, file, "--new-judges-are-experts")
    flat = " ".join(out.split())
    assert code == 2, out
    assert f"bad.jsonl line 4, {where}" in flat and "Traceback" not in out
    assert _tables(session.with_suffix(".db")) == before


def test_a_generic_task_the_session_does_not_declare_is_refused(tmp_path: Path) -> None:
    session = _study(tmp_path, "arena", "arena")
    file = _write(tmp_path, "a.jsonl", _arena(ARENA), crlf=False, bom=False)
    code, out = _import(session, file, "--generic-task", "chat", "--new-judges-are-experts")
    assert code == 2 and "--generic-task 'chat': not a generic task of this session" in out
    assert not session.with_suffix(".db").exists()


def test_a_study_of_people_only_gets_its_expert_agreement(tmp_path: Path) -> None:
    """No LLM judge: the experts' reference set is the comparisons two or more experts judged."""
    session = _study(tmp_path, "people", "mtbench")
    file = _write(tmp_path, "human.jsonl", MTBENCH[:10], crlf=True, bom=False)
    code, out = _import(session, file, "--new-judges-are-experts")
    assert code == 0, out
    json_file = tmp_path / "r.json"
    result = CliRunner().invoke(
        cli, ["report", str(session), "--judges", "expert", "--bootstrap", "0", "--json", str(json_file)]
    )
    assert result.exit_code == 0, result.output
    experts = json.loads(json_file.read_text(encoding="utf-8"))["experts"]
    # Every comparison has two or more experts (81t1 claude/alpaca, 81t1 vicuna/gpt-3.5, 82t1, 81t2).
    assert experts["counts"]["reference_comparisons"] == 4
    assert experts["counts"]["llm_judges"] == []
    blocks = {b["block"]: b for b in experts["agreement"]["blocks"]}
    # The hand count of test_mtbench_agreement_matches_the_hand_count: 6 expert pairs, 2 agree;
    # 3 decisive pairs, 2 agree. No LLM judge: no expert-LLM pair.
    assert (blocks["expert-expert"]["pairs"], blocks["expert-expert"]["agreement"]) == (6, pytest.approx(2 / 6))
    ee = blocks["expert-expert"]
    assert (ee["decisive_pairs"], ee["decisive_agreement"]) == (3, pytest.approx(2 / 3))
    assert blocks["expert-LLM"]["pairs"] == 0
    kappa = {(r["judge_1"], r["judge_2"]): r for r in experts["agreement"]["kappa"]}
    # author_0 and expert_24 share all four comparisons, coded in the pair sorted by name (0 first
    # wins, 1 second, 2 tie): author_0 1, 0, 1, 0; expert_24 1, 2, 2, 0: 2 of 4 agree; too few
    # shared comparisons for a kappa, and the reason says so.
    pair = kappa[("author_0", "expert_24")]
    assert (pair["n"], pair["agreement"], pair["kappa"]) == (4, pytest.approx(2 / 4), None)
    assert "shared comparisons (n = 4)" in pair["reason"]
    flat = " ".join(result.output.split())
    assert "No LLM judge: the reference set is the comparisons two or more experts judged" in flat


def test_report_section_computes_and_prints_one_section(mtbench: tuple[Path, str], tmp_path: Path) -> None:
    session, _ = mtbench
    full_json, one_json = tmp_path / "full.json", tmp_path / "one.json"
    base = ["report", str(session), "--judges", "all", "--bootstrap", "0"]
    full = CliRunner().invoke(cli, [*base, "--json", str(full_json)])
    one = CliRunner().invoke(cli, [*base, "--section", "experts", "--json", str(one_json)])
    assert full.exit_code == 0 and one.exit_code == 0, one.output
    assert "Experts vs LLM judges" in one.output and "Experts vs LLM judges" in full.output
    for other in ("Inter-judge reliability", "rank of ranks", "Best candidate"):
        assert other in full.output and other not in one.output
    whole, alone = (json.loads(f.read_text(encoding="utf-8")) for f in (full_json, one_json))
    assert alone["section"] == "experts" and "section" not in whole
    assert alone["experts"] == whole["experts"] and alone["counts"] == whole["counts"]
    assert alone["reliability"]["rows"] == [] and alone["modes"] == []


def test_report_section_names_its_choices(mtbench: tuple[Path, str]) -> None:
    session, _ = mtbench
    help_text = " ".join(CliRunner().invoke(cli, ["report", "--help"]).output.split()).replace("- ", "-")
    from centaur_tui.domain.report_options import REPORT_SECTIONS

    assert ", ".join(REPORT_SECTIONS) in help_text
    bad = CliRunner().invoke(cli, ["report", str(session), "--section", "agreement"])
    assert bad.exit_code == 2
    assert "'agreement' is not one of" in bad.output and "'reliability'" in bad.output
    both = CliRunner().invoke(cli, ["report", str(session), "--section", "experts", "--figures", "figs"])
    assert both.exit_code == 2 and "--figures" in both.output and not Path("figs").exists()
