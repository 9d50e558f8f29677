"""Winner-only judgments in MT-Bench's layout (issue 17): import -> report, figures checked against hand counts.

The fixture `examples/mtbench/` (the README's example) mirrors lmsys/mt_bench_human_judgments
(fields question_id, model_a, model_b, winner in {model_a, model_b, tie, tie (bothbad)}, judge, conversation_a,
conversation_b, turn): 3 questions x 4 of its models (6 pairs each) x 2 human experts, plus
GPT-4 as a pairwise judge (`gpt4_pair`): 54 rows, the options in the order shown, half of them
swapped. Every expected figure below is counted by hand from the verdict table `VERDICTS`,
written here independently of the file.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.cli.main import cli

DATA = Path(__file__).parent.parent / "examples" / "mtbench"
PAIRS = [
    ("alpaca-13b", "claude-v1"),
    ("alpaca-13b", "llama-13b"),
    ("alpaca-13b", "vicuna-13b-v1.2"),
    ("claude-v1", "llama-13b"),
    ("claude-v1", "vicuna-13b-v1.2"),
    ("llama-13b", "vicuna-13b-v1.2"),
]
# Per question, per judge, the verdict on each pair of PAIRS in canonical order: a = the first
# (by name) wins, b = the second, t = tie.
VERDICTS = {
    81: {"expert_0": "babaab", "expert_1": "babatb", "gpt4_pair": "babaab"},
    82: {"expert_0": "bababb", "expert_1": "btaaab", "gpt4_pair": "btbaab"},
    83: {"expert_0": "btbaab", "expert_1": "babaab", "gpt4_pair": "batabb"},
}


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture copied to a temporary folder (its database is written there), with a third expert to assign."""
    folder = tmp_path_factory.mktemp("mtbench") / "mtbench"
    shutil.copytree(DATA, folder)
    session = folder / "mtbench.toml"
    session.write_text(
        session.read_text(encoding="utf-8") + '\n[[experts]]\nid = "expert_2"\nname = "Expert 2"\n', encoding="utf-8"
    )
    result = CliRunner().invoke(cli, ["import", str(session), str(folder / "mt_bench_human_judgments.jsonl")])
    assert result.exit_code == 0, result.output
    assert "54 winner-only judgment(s) read; 54 stored, 0 already stored identically; 0 refused." in result.output
    assert "12 stored, 0 already stored; comparisons: 18 new of 18." in result.output
    return session


def _report(session: Path, tmp: Path, *args: str) -> tuple[dict, str]:
    out = tmp / "r.json"
    result = CliRunner().invoke(cli, ["report", str(session), "--bootstrap", "0", "--json", str(out), *args])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text(encoding="utf-8")), result.output


def test_the_database_holds_outputs_comparisons_and_winner_only_judgments(study: Path) -> None:
    with sqlite3.connect(study.with_suffix(".db")) as db:
        assert db.execute("SELECT count(*), min(origin), max(origin) FROM outputs").fetchone() == (
            12,
            "imported",
            "imported",
        )
        assert db.execute("SELECT count(*) FROM comparisons").fetchone() == (18,)
        assert db.execute("SELECT count(*), sum(valid), count(option1_mean) FROM judgments").fetchone() == (54, 54, 0)
        assert db.execute("SELECT count(*) FROM scores").fetchone() == (0,)
        # The answer of turn 1, not the whole conversation: no follow-up question in a stored text.
        assert db.execute("SELECT count(*) FROM outputs WHERE text LIKE '%second-turn%'").fetchone() == (0,)
        by_judge = dict(db.execute("SELECT judge, judge_kind FROM judgments GROUP BY judge").fetchall())
    assert by_judge == {"expert_0": "expert", "expert_1": "expert", "gpt4_pair": "llm"}


def test_agreement_and_win_rates_match_the_hand_counts(study: Path, tmp_path: Path) -> None:
    doc, text = _report(study, tmp_path, "--judges", "all")
    experts = doc["experts"]
    blocks = {b["block"]: b for b in experts["agreement"]["blocks"]}
    # expert_0 vs expert_1 differ on (claude, vicuna) of 81; (alpaca, llama), (alpaca, vicuna),
    # (claude, vicuna) of 82; (alpaca, llama) of 83: 13 of 18 agree. Both decisive: 15 pairs, 13 agree.
    assert blocks["expert-expert"]["pairs"] == 18
    assert blocks["expert-expert"]["agreement"] == pytest.approx(13 / 18)
    assert blocks["expert-expert"]["decisive_pairs"] == 15
    assert blocks["expert-expert"]["decisive_agreement"] == pytest.approx(13 / 15)
    # expert_0 vs gpt4_pair: 6 + 4 + 3 = 13 of 18; expert_1 vs gpt4_pair: 5 + 5 + 4 = 14 of 18.
    # Decisive: 6 of 6 + 4 of 5 + 3 of 4 = 13 of 15, and 5 of 5 + 4 of 5 + 4 of 5 = 13 of 15.
    assert blocks["expert-LLM"]["pairs"] == 36
    assert blocks["expert-LLM"]["agreement"] == pytest.approx(27 / 36)
    assert blocks["expert-LLM"]["decisive_pairs"] == 30
    assert blocks["expert-LLM"]["decisive_agreement"] == pytest.approx(26 / 30)
    assert blocks["LLM-LLM"]["pairs"] == 0  # one LLM judge: said, never a number
    kappa = {(k["judge_1"], k["judge_2"]): k for k in experts["agreement"]["kappa"]}
    assert kappa[("expert_0", "gpt4_pair")]["agreement"] == pytest.approx(13 / 18)
    assert kappa[("expert_1", "gpt4_pair")]["agreement"] == pytest.approx(14 / 18)
    # Cohen's kappa of the two experts: p_o = 13/18; marginals (A, B, tie) 7, 10, 1 and 8, 8, 2:
    # p_e = (7*8 + 10*8 + 1*2) / 18^2 = 138/324; kappa = (234 - 138) / (324 - 138) = 96/186.
    assert kappa[("expert_0", "expert_1")]["kappa"] == pytest.approx(96 / 186)

    # Win rates over all three questions: (wins + ties / 2) / games; experts 2 x 9 games, GPT-4 9.
    pooled = {
        r["candidate"]: r
        for r in experts["rankings"]["candidates"]
        if r["task"] not in ("mtbench_81_t1", "mtbench_82_t1", "mtbench_83_t1")
    }
    hand = {
        "claude-v1": (16.5 / 18, 8 / 9),
        "vicuna-13b-v1.2": (12.5 / 18, 6.5 / 9),
        "alpaca-13b": (6 / 18, 3 / 9),
        "llama-13b": (1 / 18, 0.5 / 9),
    }
    for name, (expert_rate, llm_rate) in hand.items():
        assert pooled[name]["expert_win_rate"] == pytest.approx(expert_rate), name
        assert pooled[name]["llm_win_rate"] == pytest.approx(llm_rate), name
        assert (pooled[name]["expert_games"], pooled[name]["llm_games"]) == (18, 9)
    # Every judgment counts in the pairwise statistics; none can enter a rubric one, and the report says so.
    assert doc["counts"]["by_status"]["ok"] == 54
    assert doc["counts"]["winner_only"] == 54 == doc["counts"]["winner_only_all_kinds"]
    assert "54 winner-only judgments left out of rubric statistics" in " ".join(text.split())
    consistency = {r["judge"]: r for r in doc["validity"]["choice_rubric"]["rows"]}
    assert consistency["(all judges)"]["missing_scores"] == 54 and consistency["(all judges)"]["n"] == 0


def test_the_llm_ranking_follows_gpt4s_verdicts(study: Path, tmp_path: Path) -> None:
    doc, text = _report(study, tmp_path)  # default: LLM judges only
    assert doc["counts"]["by_status"] == {**doc["counts"]["by_status"], "ok": 18, "other_kind": 36}
    assert doc["counts"]["winner_only"] == 18 and doc["counts"]["winner_only_all_kinds"] == 54
    assert "18 winner-only judgments left out of rubric statistics" in " ".join(text.split())
    mode = doc["modes"][0]
    ranks = {(r["task"], r["candidate"]): r["mean_rank"] for r in mode["matrix"]}
    # One LLM judge, so its win rates order each task. Question 81 (babaab): claude 3 of 3, vicuna 2,
    # alpaca 1, llama 0. Question 82 (btbaab): claude 3, vicuna 2, alpaca and llama 0.5 each (average
    # rank 3.5). Question 83 (batabb): vicuna 2.5 beats claude 2, alpaca 1.5, llama 0.
    hand = {
        "mtbench_81_t1": {"claude-v1": 1, "vicuna-13b-v1.2": 2, "alpaca-13b": 3, "llama-13b": 4},
        "mtbench_82_t1": {"claude-v1": 1, "vicuna-13b-v1.2": 2, "alpaca-13b": 3.5, "llama-13b": 3.5},
        "mtbench_83_t1": {"vicuna-13b-v1.2": 1, "claude-v1": 2, "alpaca-13b": 3, "llama-13b": 4},
    }
    assert ranks == {(t, c): r for t, by in hand.items() for c, r in by.items()}
    assert {r["candidate"]: r["games"] for r in mode["bradley_terry"]} == dict.fromkeys(hand["mtbench_81_t1"], 9)


def test_importing_the_file_again_stores_nothing(study: Path) -> None:
    before = study.with_suffix(".db").read_bytes()
    result = CliRunner().invoke(cli, ["import", str(study), str(study.parent / "mt_bench_human_judgments.jsonl")])
    assert result.exit_code == 0, result.output
    assert "0 stored, 54 already stored identically" in result.output
    assert "0 stored, 12 already stored; comparisons: 0 new of 18." in result.output
    with sqlite3.connect(study.with_suffix(".db")) as db:
        assert db.execute("SELECT count(*) FROM judgments").fetchone() == (54,)
    assert len(before) > 0


def test_an_expert_is_not_assigned_what_they_judged_elsewhere(study: Path) -> None:
    result = CliRunner().invoke(cli, ["assign", str(study), "--expert", "expert_1", "--n", "5"])
    assert result.exit_code == 0, result.output
    assert "Assigned 0 place(s)" in result.output  # expert_1's 18 imported judgments cover every comparison


def test_imported_comparisons_reach_experts_blind(study: Path, tmp_path: Path) -> None:
    """Assignment and packets work on imported comparisons, and no candidate name reaches the expert."""
    runner = CliRunner()
    result = runner.invoke(cli, ["assign", str(study), "--expert", "expert_2", "--n", "18"])
    assert result.exit_code == 0, result.output
    packet = tmp_path / "expert_2.centaur-packet"
    result = runner.invoke(cli, ["packet", "export", str(study), "--expert", "expert_2", "--out", str(packet)])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(packet) as db:
        shown = [row for row in db.execute("SELECT option_1, option_2 FROM items")]
    assert len(shown) == 18
    texts = "\n".join(a + "\n" + b for a, b in shown).lower()
    for identity in ("alpaca", "claude", "llama", "vicuna", "as an ai language model", "stanford", "lmsys"):
        assert identity not in texts, identity
    # Vicuna's "As an AI language model" (question 81, a default phrase) and "Vicuna 13B here!"
    # (question 83: masked only because the session declares the imported candidate).
    assert "[masked] i have not travelled" in texts and "[masked] here!" in texts
