"""The use-case layer without a front end: open, list, run, assign, judge, work, export/import, one judging part."""

from __future__ import annotations

from pathlib import Path

import pytest

from centaur_tui.domain.blinding import Draft, JudgingItem
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.plan import summarize
from centaur_tui.domain.study import Study
from centaur_tui.pipeline import Pipeline
from centaur_tui.pipeline.human_arm import HumanArmJudging
from centaur_tui.pipeline.judging import Judging
from centaur_tui.services import assign, exchange, run, session, work
from centaur_tui.store import Store

ARM = """
[[experts]]
id = "ann"
name = "Ann"

[[experts]]
id = "bob"
name = "Bob"

[human_workers]
experts = ["ann", "bob"]
tasks = ["counseling", "tutoring"]
assistants = ["Alpha", "Gamma"]
"""


def complete(item: JudgingItem) -> Draft:
    draft = Draft()
    for d in item.rubric.all:
        draft.set_score(d.id, 1, 8)
        draft.set_score(d.id, 2, 3)
    draft.winner = "option_1"
    draft.rationale = "Option one meets more of the stated requirements than option two."
    draft.seconds = 20.0
    return draft


def run_session_file(path: Path):
    study = session.open_session(path)
    with session.open_store(study, must_exist=False) as store:
        outcome = run.run_study(study, store)
    assert outcome.complete
    return study


def test_resolve_session_takes_a_bare_name_from_the_sessions_folder(tmp_path: Path, write_session, monkeypatch) -> None:
    path = write_session(filename="named.toml")
    monkeypatch.setenv("CENTAUR_SESSIONS", str(tmp_path))
    assert session.resolve_session("named") == tmp_path / "named.toml"
    assert session.resolve_session(str(path)) == path
    assert session.resolve_session("absent") == Path("absent")  # the loader then names what is missing
    assert session.open_session("named").session.name == "small"


def test_looking_at_a_session_never_run_creates_no_database(tmp_path: Path, write_session) -> None:
    path = write_session()
    (tmp_path / "broken.toml").write_text("name = [", encoding="utf-8")
    study = session.open_session(path)
    with pytest.raises(session.NoDatabaseError, match="run the session first"):
        session.open_store(study)
    opened: list[str] = []

    def store_for(study: Study) -> Store:
        opened.append(study.session.name)
        raise AssertionError("a session never run has no database to open")

    rows = session.list_sessions(tmp_path, store_for)
    assert [r.path.name for r in rows] == ["broken.toml", "small.toml"]
    assert rows[0].error and not rows[0].run
    assert not rows[1].run and rows[1].calls_left == summarize(study.session).total_calls
    assert session.overview(study, None).calls_left == summarize(study.session).total_calls
    assert opened == [] and not study.database.exists()


def test_run_assign_and_judge_through_the_services(write_session) -> None:
    study = run_session_file(write_session(extra=ARM))
    stores: list[Store] = []

    def store_for(study: Study) -> Store:
        stores.append(session.open_store(study))
        return stores[-1]

    rows = session.list_sessions(study.session_file.parent, store_for)
    for store in stores:
        store.close()
    assert rows[0].run and rows[0].calls_left == 0 and rows[0].llm_judgments == summarize(study.session).total_judgments
    with session.open_store(study) as store:
        result = assign.assign_comparisons(study, store, "ann", 3)
        assert result.added == 3 == result.assigned and result.judged == 0 and result.waiting == 3
        assert sum(result.tasks.values()) == sum(result.modes.values()) == 3
        with pytest.raises(CentaurError):
            assign.assign_comparisons(study, store, "nobody", 1)
        judged = []
        # As a seat answering one request at a time does: open the source, act, drop it.
        while (place := work.open_judging(study, store, "ann").next_place()) is not None:
            item = work.open_judging(study, store, "ann").item(place.key)
            assert place.key == item.key and place.key not in judged
            work.open_judging(study, store, "ann").submit(item.key, complete(item))
            judged.append(item.key)
        assert len(judged) == 3
        assert [q.state for q in work.open_judging(study, store, "ann").queue()] == ["done"] * 3
        assert session.overview(study, store).workload["ann"] == (3, 3)


def test_opening_an_empty_work_queue_assigns_the_arm_and_deliverables_are_judged(write_session) -> None:
    study = run_session_file(write_session(extra=ARM))
    with session.open_store(study) as store:
        assert session.overview(study, store).work == {}
        queue = work.open_work(study, store, "ann").queue()  # empty: the design is stored first
        assert len(queue) == 2
        assert session.overview(study, store).work == {"ann": (2, 0), "bob": (2, 0)}  # every worker at once
        assert work.assign_work(study, store).added == 0  # and only once
        for expert in ("ann", "bob"):
            while (place := work.open_work(study, store, expert).next_place()) is not None:
                source = work.open_work(study, store, expert)
                item, draft = source.item(place.key), source.draft(place.key) or work.WorkDraft()
                assert draft.text == ""
                draft.text = f"## Plan\n\nWhat {expert} wrote for {item.task_title}."
                source.submit(item.key, draft, version=1)
        assert session.overview(study, store).work == {"ann": (2, 2), "bob": (2, 2)}
        with pytest.raises(CentaurError, match="not one of the human workers"):
            work.open_work(study, store, "cy")
        outcome = work.judge_work(study, store)
        assert outcome.comparisons > 0 and outcome.judgments_done == outcome.judgments_planned > 0
        assert len(work.productivity_rows(store)) == 4


def test_export_then_import_stores_nothing_new(tmp_path: Path, write_session) -> None:
    study = run_session_file(write_session())
    exported = exchange.export_csv(study, tmp_path / "out")
    assert exported.simulated and exported.written["judgments.csv"] == summarize(study.session).total_judgments
    imported = exchange.import_csv(study, tmp_path / "out")
    assert imported.summary.inserted == 0 and imported.summary.unchanged == imported.summary.judgments > 0


def test_judging_is_one_component_composed_by_the_pipeline_and_the_human_arm(write_session) -> None:
    assert not issubclass(HumanArmJudging, Pipeline)
    study = session.open_session(write_session())
    with session.open_store(study, must_exist=False) as store:
        pipeline, arm = Pipeline(study, store), HumanArmJudging(study, store)
        assert isinstance(pipeline.judging, Judging) and isinstance(arm.judging, Judging)
        assert pipeline.judging.calls is pipeline.calls and arm.judging.calls is arm.calls
