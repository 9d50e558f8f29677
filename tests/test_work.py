"""Experts as workers without the UI: the design, the session field, the work store, the human-arm tournaments."""

from __future__ import annotations

from collections import Counter
from itertools import product

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.errors import ConfigError
from centaur_tui.domain.seat import WorkDraft, WorkError
from centaur_tui.domain.session import PLAIN, HumanWorkerArm
from centaur_tui.domain.work_design import balance, design_work
from centaur_tui.pipeline import run_session
from centaur_tui.pipeline.human_arm import HUMAN_MODE, judge_human_arm
from centaur_tui.store import Store, WorkStore
from tests.support.work import ARM, arm_session


@pytest.mark.parametrize(
    "n_experts,n_tasks,n_assistants,plain",
    [(e, t, a, p) for e, t, a, p in product((1, 2, 3, 5), (1, 2, 4, 7), (0, 1, 2, 3), (True, False)) if a or p],
)
def test_design_each_task_once_and_balanced_within_one(n_experts, n_tasks, n_assistants, plain):
    arm = HumanWorkerArm(
        experts=tuple(f"e{i}" for i in range(n_experts)),
        tasks=tuple(f"t{i}" for i in range(n_tasks)),
        assistants=tuple(f"A{i}" for i in range(n_assistants)),
        include_plain=plain,
    )
    design = design_work(arm, seed=11)
    pairs = Counter((a.expert, a.task) for a in design)
    assert set(pairs.values()) == {1} and len(pairs) == n_experts * n_tasks  # every task once, no task twice
    spread = balance(design, arm.conditions)
    assert spread["task"] <= 1 and spread["expert"] <= 1
    for expert in arm.experts:
        assert sorted(a.position for a in design if a.expert == expert) == list(range(n_tasks))


def test_design_is_seeded_and_randomised():
    arm = HumanWorkerArm(experts=("a", "b", "c", "d"), tasks=tuple(f"t{i}" for i in range(6)), assistants=("X", "Y"))
    assert design_work(arm, 1) == design_work(arm, 1)
    assert design_work(arm, 1) != design_work(arm, 2)


def test_session_field_validated_with_file_and_field(write_session):
    study = load_session(arm_session(write_session))
    assert study.session.human_workers is not None
    assert study.session.human_workers.conditions == ("Alpha", "Gamma", PLAIN)
    for bad, field in (
        ('experts = ["ann", "zed"]', "human_workers.experts[1]"),
        ('tasks = ["menu_planning"]', "human_workers.tasks[0]"),
        ('assistants = ["Nope"]', "human_workers.assistants[0]"),
    ):
        key = bad.split(" ")[0]
        text = "\n".join(
            bad if line.startswith(key + " =") and i > ARM.index("[human_workers]") else line for i, line in _lines(ARM)
        )
        with pytest.raises(ConfigError) as err:
            load_session(arm_session(write_session, text))
        assert err.value.field == field, err.value


def _lines(text: str):
    pos = 0
    for line in text.split("\n"):
        yield pos, line
        pos += len(line) + 1


def test_assign_submit_judge_end_to_end(write_session):
    path = arm_session(write_session)
    study = load_session(path)
    with Store(study.database) as store:
        with pytest.raises(WorkError):  # no assistance texts before the pipeline ran
            WorkStore(store).assign(study)
        run_session(study, store)
        work = WorkStore(store)
        added, _design = work.assign(study)
        assert added == 6 and work.assign(study)[0] == 0  # assigning again adds nothing
        rows = work.assignments()
        for i, r in enumerate(rows):
            assert work.save_draft(r.id, WorkDraft(f"draft {i}", 1.0, 1, 0), version=1)
            assert not work.save_draft(r.id, WorkDraft("older", 1.0, 1, 0), version=0)  # newest wins
            work.submit(r.id, WorkDraft(f"## Plan {i}\n\nMy deliverable number {i}.", 30.0 + i, 5, 1), version=2)
        with pytest.raises(WorkError):
            work.submit(rows[0].id, WorkDraft("again", 1, 1, 0), version=3)
        assert not work.save_draft(rows[0].id, WorkDraft("after lock", 1, 1, 0), version=9)
        outputs = [o for o in store.outputs().values() if o.worker_kind == "expert"]
        assert len(outputs) == 6 and {o.mode for o in outputs} == {"augmentation"}
        assert all((o.assistance_id is None) == (o.candidate == PLAIN) for o in outputs)
        prod = work.productivity_rows()
        assert len(prod) == 6 and all(r.words >= 5 and r.edits == 5 and r.pastes == 1 for r in prod)

        outcome = judge_human_arm(study, store)
        comps = [c for c in store.comparisons().values() if c.mode == HUMAN_MODE]
        assert outcome.comparisons == len(comps) > 0
        assert all(c.candidate_a != c.candidate_b for c in comps)  # never two outputs of the same condition
        assert len({c.id for c in comps}) == len(comps)
        judged = [r for r in store.judgment_rows() if r.mode == HUMAN_MODE]
        assert judged and outcome.judgments_done == len(judged)
        families = {"Alpha": "North", "Gamma": "South"}
        by_id = {c.id: c for c in comps}
        for r in judged:  # leave-family-out by the assistant's family
            c = by_id[r.comparison_id]
            assert r.judge_family not in {families.get(c.candidate_a), families.get(c.candidate_b)}
        again = judge_human_arm(study, store)  # resumes: nothing new
        assert len([r for r in store.judgment_rows() if r.mode == HUMAN_MODE]) == len(judged)
        assert again.judgments_planned == outcome.judgments_planned


def test_cli_assign_work(write_session):
    path = arm_session(write_session)
    study = load_session(path)
    with Store(study.database) as store:
        run_session(study, store)
    result = CliRunner().invoke(cli, ["assign-work", str(path)])
    assert result.exit_code == 0, result.output
    assert "Assigned 6 new deliverable(s)" in result.output
    assert "per task 0, per expert 1, overall 0" in result.output  # 3 experts x 3 conditions: a Latin square
    result = CliRunner().invoke(cli, ["judge-work", str(path)])
    assert result.exit_code == 0, result.output
    assert "0 comparison(s)" in result.output


def test_report_ranks_conditions_for_human_workers_beside_the_worker_model(write_session):
    from centaur_tui.report import human_workers_text
    from centaur_tui.stats.human_arm import human_arm_section, productivity

    path = arm_session(write_session)
    study = load_session(path)
    with Store(study.database) as store:
        run_session(study, store)
        work = WorkStore(store)
        work.assign(study)
        for r in work.assignments():
            # Longer texts under Alpha's guidance: a planted effect the judges can see.
            body = " ".join(["requirement met"] * (40 if r.condition == "Alpha" else 8))
            work.submit(
                r.id,
                WorkDraft(f"## Deliverable\n\n{body}", 60.0 * (2 if r.condition == PLAIN else 1), 10, 0),
                version=1,
            )
        judge_human_arm(study, store)
    result = CliRunner().invoke(cli, ["work-report", str(path)])
    assert result.exit_code == 0, result.output
    assert "Which assistant helps human workers most" in result.output
    assert "Productivity per condition (6 submitted" in result.output
    from centaur_tui.services.report import session_report

    document = session_report(study, human_workers=False, bootstrap=0, permutation=False).document
    assert HUMAN_MODE in {m.mode for m in document.modes}  # its own tournament, apart from the model worker's
    model_arm = document.mode("augmentation")
    assert model_arm is not None and set(model_arm.candidates) == {"Alpha", "Beta", "Gamma", "Delta", PLAIN}
    with Store(study.database) as store:
        section = human_arm_section(document, WorkStore(store).productivity_rows())
    ranked = [r.condition for r in section.assistants.rows]
    assert sorted(ranked) == ["Alpha", "Gamma", PLAIN]
    assert section.assistants.spearman.n == 3
    table = productivity(WorkStore(Store(study.database)).productivity_rows())
    assert table.set_index("condition").loc[PLAIN, "mean_seconds"] == 120.0
    assert "Spearman" in human_workers_text(document.with_human_workers(section))


def test_the_work_screen_logs_and_counts_every_mask_it_inserts(write_session):
    """Issue 13: each masking on the work screen is logged (once per phrase and assignment) and counted truly."""
    from centaur_tui.domain.blinding import MASK
    from centaur_tui.services.writing import SessionWork
    from centaur_tui.store import work_masking_log
    from tests.support.experts import HOSTILE_SPELLINGS, HOSTILE_TEXT

    path = arm_session(write_session)
    study = load_session(path)
    with Store(study.database) as store:
        run_session(study, store)
        WorkStore(store).assign(study)
        with store.write() as c:
            c.execute("UPDATE assistance_texts SET text = text || ?", (HOSTILE_TEXT,))
        ann = next(e for e in study.session.experts if e.id == "ann")
        source = SessionWork(store, study, ann)
        assisted = [q.key for q in source.queue() if source.item(q.key).assistance is not None]
        assert assisted, "the arm gives ann at least one assisted task"
        source = SessionWork(store, study, ann)  # count afresh
        shown = [source.item(key).assistance or "" for key in assisted]
        blob = "\n".join(shown)
        for spelling in HOSTILE_SPELLINGS:
            assert spelling not in blob, spelling
        assert source.masked == blob.count(MASK) >= len(HOSTILE_SPELLINGS) * len(assisted)
        log = [r for r in work_masking_log(store) if r.expert == "ann"]
        assert sum(r.occurrences for r in log) == source.masked  # one row per phrase, with its count
        assert len({(r.task, r.term) for r in log}) == len(log)
        source.item(assisted[0])  # shown again: counted again, logged once
        assert len([r for r in work_masking_log(store) if r.expert == "ann"]) == len(log)
