"""Tests of adjudication: the queue of disagreements, the blind view, storing apart, reopening, the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.adjudication import Verdict, disagreements, panel_verdict
from centaur_tui.domain.records import JudgmentRecord, ScoreRecord
from centaur_tui.services import adjudication as adj
from centaur_tui.store import Store, verify_store
from centaur_tui.store.adjudication import AdjudicationError as StoreAdjudicationError
from tests.support.experts import judged_session
from tests.support.reports import cli_doc

RATIONALE = "option two answers the question fully"
ADJUDICATOR = '\n[[experts]]\nid = "cat"\nname = "Cat Adjudicator"\nadjudicator = true\n'


def expert_verdict(store: Store, comparison_id: str, judge: str, winner: str, rationale: str = "") -> None:
    """Store a hand-made expert judgment (presented in stored order, scores favouring the winner)."""
    comp = store.comparisons()[comparison_id]
    a, b = comp.candidate_a, comp.candidate_b
    high, low = (a, b) if winner == a else (b, a)
    scores = (ScoreRecord(high, "overall", "general", 8), ScoreRecord(low, "overall", "general", 4))
    record = JudgmentRecord(
        comparison_id, judge, "expert", None, 1, a, b, winner, None, None, True, None,
        rationale or f"{judge} wrote this rationale about {winner}", None, 1, scores,
    )  # fmt: skip
    store.save_judgment(record)


def panel_majority(store: Store, comparison_id: str) -> str | None:
    rows = store.read(
        "SELECT winner FROM judgments WHERE comparison_id = ? AND judge_kind = 'llm' AND valid = 1", (comparison_id,)
    )
    return panel_verdict(r["winner"] for r in rows)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = judged_session(tmp_path)
    path.write_text(path.read_text(encoding="utf-8") + ADJUDICATOR, encoding="utf-8")
    return path


def _plant(path: Path) -> dict[str, str]:
    """Three comparisons: experts disagree (c1), agree (c2), one expert against the panel (c3)."""
    study = load_session(path)
    with Store(study.database) as store:
        comps = sorted(store.comparisons().values(), key=lambda c: c.id)
        found = [c for c in comps if panel_majority(store, c.id) is not None]
        c1, c2, c3 = found[0], found[1], found[2]
        expert_verdict(store, c1.id, "ann", c1.candidate_a)
        expert_verdict(store, c1.id, "bob", c1.candidate_b)
        expert_verdict(store, c2.id, "ann", c2.candidate_a)
        expert_verdict(store, c2.id, "bob", c2.candidate_a)
        panel = panel_majority(store, c3.id)
        other = c3.candidate_b if panel == c3.candidate_a else c3.candidate_a
        expert_verdict(store, c3.id, "ann", other)
    return {"c1": c1.id, "c2": c2.id, "c3": c3.id}


def test_the_rule_on_hand_made_verdicts() -> None:
    def v(cid: str, judge: str, kind: str, winner: str, n: int = 0) -> Verdict:
        return Verdict(cid, n, judge, kind, winner)  # type: ignore[arg-type]

    verdicts = [
        v("x", "ann", "expert", "A"), v("x", "bob", "expert", "B"),  # experts disagree
        v("y", "ann", "expert", "A"), v("y", "bob", "expert", "A"), v("y", "j1", "llm", "B"),
        v("z", "ann", "expert", "A"), v("z", "j1", "llm", "B"), v("z", "j2", "llm", "B"), v("z", "j3", "llm", "A"),
        v("w", "ann", "expert", "A"), v("w", "j1", "llm", "B"), v("w", "j2", "llm", "A"),  # a split panel
    ]  # fmt: skip
    assert disagreements(verdicts, "experts") == {"x": "experts disagree"}
    assert disagreements(verdicts, "experts_and_panel") == {
        "x": "experts disagree",
        "y": "an expert and the panel disagree",
        "z": "an expert and the panel disagree",
    }
    assert panel_verdict([]) is None and panel_verdict(["A", "B"]) is None and panel_verdict(["tie"]) == "tie"


def test_a_disagreement_is_queued_once_and_leaves_when_adjudicated(session: Path) -> None:
    ids = _plant(session)
    study = load_session(session)
    with Store(study.database) as store:
        queued = adj.queue(study, store)
        assert [e.key for e in queued] == [ids["c1"]] and queued[0].reason == "experts disagree"
        # A second revision of bob's verdict (same disagreement) does not queue it twice.
        comp = store.comparisons()[ids["c1"]]
        store.save_judgment(
            JudgmentRecord(
                comp.id,
                "bob",
                "expert",
                None,
                1,
                comp.candidate_a,
                comp.candidate_b,
                comp.candidate_b,
                None,
                None,
                True,
                None,
                "revised",
                None,
                1,
                (),
                revision=1,
            )
        )
        assert [e.key for e in adj.queue(study, store)] == [ids["c1"]]
        new = adj.record(study, store, ids["c1"], "option_1", RATIONALE)
        assert adj.queue(study, store) == []
        with pytest.raises(adj.AdjudicationError, match="not in the adjudication queue"):
            adj.record(study, store, ids["c1"], "option_2", RATIONALE)
        with pytest.raises(StoreAdjudicationError, match="already adjudicated"):  # the store's own guard
            from centaur_tui.store.adjudication import record_adjudication

            record_adjudication(store, ids["c1"], "organiser", 1, comp.candidate_a, RATIONALE, "x")
        assert adj.reopen(store, new) == ids["c1"]
        assert [e.key for e in adj.queue(study, store)] == [ids["c1"]]
        with pytest.raises(StoreAdjudicationError, match="already reopened"):
            adj.reopen(store, new)
        adj.record(study, store, ids["c1"], "option_2", RATIONALE)
        stored = adj.stored(store)
        assert [(a.id, a.reopened) for a in stored] == [(new, True), (new + 1, False)]
        assert verify_store(store).clean  # both tables are chained
        assert store.read_value("SELECT count(*) FROM judgments WHERE judge_kind = 'expert'") == 6


def test_the_panel_joins_only_when_the_session_says_so(session: Path) -> None:
    ids = _plant(session)
    text = session.read_text(encoding="utf-8")
    session.write_text(text.replace("[judging]\n", '[judging]\nadjudicate = "experts_and_panel"\n', 1), "utf-8")
    study = load_session(session)
    with Store(study.database) as store:
        queued = {e.key: e.reason for e in adj.queue(study, store)}
    assert queued[ids["c1"]] == "experts disagree"
    assert queued[ids["c3"]] == "an expert and the panel disagree"
    assert ids["c2"] not in queued or queued[ids["c2"]] == "an expert and the panel disagree"


def test_the_adjudicator_never_sees_whose_verdict_is_whose(session: Path) -> None:
    ids = _plant(session)
    study = load_session(session)
    names = {e.id for e in study.session.experts} | {e.name for e in study.session.experts}
    names |= {j.name for j in study.session.judges} | {j.model for j in study.session.judges}
    names |= {m.name for m in study.session.models} | {m.family for m in study.session.models}
    with Store(study.database) as store:
        item = adj.item(study, store, ids["c1"], "cat")
    assert len(item.verdicts) >= 2  # both experts, and the panel's judgments
    shown = json.dumps(
        [item.shown.task_prompt, item.shown.option_1, item.shown.option_2, item.reason]
        + [[v.label, v.winner, v.scores, v.rationale] for v in item.verdicts]
    )
    result = CliRunner().invoke(cli, ["adjudicate", str(session), "--as", "cat", "--show", ids["c1"]])
    assert result.exit_code == 0, result.output
    # The planted rationales sign themselves ("ann wrote ...", "bob wrote ..."): masked too.
    for text in (shown, result.output):
        for name in names:
            assert not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE), name
    assert {v.winner for v in item.verdicts} >= {"option 1", "option 2"}


def test_a_stored_adjudication_changes_no_statistic(session: Path) -> None:
    ids = _plant(session)
    before = cli_doc(session).model_dump(mode="json")
    study = load_session(session)
    with Store(study.database) as store:
        adj.record(study, store, ids["c1"], "option_1", RATIONALE)
    after = cli_doc(session).model_dump(mode="json")
    for doc in (before, after):
        doc.pop("record")  # the chain head moves: the adjudication is chained
    assert before == after


def test_the_cli_lists_records_and_reopens(session: Path) -> None:
    ids = _plant(session)
    run = CliRunner().invoke
    out = run(cli, ["adjudicate", str(session), "--list"])
    assert out.exit_code == 0 and ids["c1"] in out.output and "1 comparison(s) waiting" in out.output
    out = run(cli, ["adjudicate", str(session), "--record", ids["c1"], "--winner", "option_2", "--rationale", "short"])
    assert out.exit_code == 2 and "at least 20 characters" in out.output and "Traceback" not in out.output
    out = run(cli, ["adjudicate", str(session), "--record", ids["c1"], "--winner", "tie", "--rationale", RATIONALE])
    assert out.exit_code in (0, 2)
    out = run(cli, ["adjudicate", str(session), "--list"])
    assert "adjudication(s) stored" in out.output or "1 comparison(s) waiting" in out.output
    out = run(cli, ["adjudicate", str(session), "--reopen", "999"])
    assert out.exit_code == 2 and "no adjudication 999" in out.output
    out = run(cli, ["adjudicate", str(session), "--as", "ann", "--list"])
    assert out.exit_code == 2 and "not an adjudicator" in out.output
    out = run(cli, ["adjudicate", str(session), "--show", "nope"])
    assert out.exit_code == 2 and "not in the adjudication queue" in out.output
    out = run(cli, ["adjudicate", str(session)])
    assert out.exit_code == 2 and "exactly one of" in out.output
