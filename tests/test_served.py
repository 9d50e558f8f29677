"""The model that served a judge call (issue 26): a fallback or alias is flagged, another family is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from centaur_tui.catalog import load_session
from centaur_tui.domain.served import classify_served, normal_model
from centaur_tui.report.render import to_json, to_text
from centaur_tui.services.audit import served_flag, served_mismatches
from centaur_tui.services.report import session_report
from centaur_tui.store import Store
from tests.support.sessions import small_session_toml
from tests.test_gateway_http import FaultServer, Reply, completion, http_session, run_pipeline, valid_judgment
from tests.test_gateway_http import server as server


def test_served_models_are_classified_against_the_scheduled_judge(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(small_session_toml(), encoding="utf-8")
    session = load_session(path).session

    def kind(served: str | None) -> tuple[str, str | None]:
        c = classify_served(session, 1, "JudgeWest", "simulated/judge-west", served)
        return c.kind, c.served_family

    assert kind("simulated/judge-west") == ("same", "West")
    assert kind("JUDGE-WEST (deployment d1)") == ("same", "West")
    assert kind(None) == ("not_recorded", None) and kind("  ") == ("not_recorded", None)
    assert kind("judge-west-2024-08-06") == ("alias", "West")
    assert kind("judge-west-latest") == ("alias", "West")
    assert kind("judge-west-mini") == ("other_family", None)  # a longer name is another model, family unknown
    assert kind("simulated/alpha") == ("other_family", "North")  # a candidate's model answered
    assert kind("gpt-4o") == ("other_family", None)
    assert normal_model("openai/GPT-4o (deployment x)") == "gpt-4o"
    assert served_flag("openai/judge", "judge") is None
    flag = served_flag("openai/judge", "gen-a")
    assert flag is not None and "gen-a" in flag and "fallback" in flag


def test_a_fallback_to_another_family_is_flagged_refused_and_counted(server: FaultServer, tmp_path: Path) -> None:
    path = tmp_path / "http.toml"
    path.write_text(http_session(server, judging='orders = "both"'), encoding="utf-8")
    full = valid_judgment(path)

    def respond(body: dict[str, Any]) -> Reply:
        status, headers, payload = completion(full if body["model"] == "judge" else "A deliverable.")
        # The judge's provider falls back to candidate A's model (family North) when option 1 is A's.
        fallback = body["model"] == "judge" and "A deliverable" in str(body["messages"])
        payload["model"] = "gen-a" if fallback else body["model"]
        return status, headers, payload

    server.respond = respond
    run_pipeline(path)
    study = load_session(path)
    with Store(study.database) as store:
        mismatched = served_mismatches(study, store)
    # Both presentations of the one comparison were served by gen-a (the texts are identical).
    assert [(c.kind, c.served, c.served_family) for c in mismatched] == [("other_family", "gen-a", "North")] * 2
    doc = session_report(study, bootstrap=0, permutation=False).document
    assert doc.served is not None and doc.served.refused == 2
    (row,) = doc.served.rows
    assert (row.judge, row.judgments, row.other_model, row.other_family, row.served) == ("J", 2, 2, 2, ["gen-a"])
    assert doc.counts.by_status["served_other_family"] == 2 and doc.counts.judges == []
    text = to_text(doc)
    assert "Models that served the judge calls" in text and "2 of them by another family" in text
    assert '"refused": 2' in to_json(doc)


def test_a_judge_served_by_its_own_model_is_not_flagged(server: FaultServer, tmp_path: Path) -> None:
    path = tmp_path / "http.toml"
    path.write_text(http_session(server), encoding="utf-8")
    full = valid_judgment(path)

    def respond(body: dict[str, Any]) -> Reply:
        status, headers, payload = completion(full if body["model"] == "judge" else "D.")
        payload["model"] = "judge-2025-01-01" if body["model"] == "judge" else body["model"]  # a dated alias
        return status, headers, payload

    server.respond = respond
    run_pipeline(path)
    study = load_session(path)
    with Store(study.database) as store:
        assert [c.kind for c in served_mismatches(study, store)] == ["alias"]
    doc = session_report(study, bootstrap=0, permutation=False).document
    assert doc.served is not None and doc.served.refused == 0 and doc.served.rows[0].other_model == 1
    assert "served_other_family" not in doc.counts.by_status or doc.counts.by_status["served_other_family"] == 0
    assert doc.counts.judges == ["J"]
