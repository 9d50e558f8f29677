"""A worker panel (issue 28): planned, priced, run, resumed and reported per worker; planted truth recovered."""

from __future__ import annotations

import asyncio
import random
import textwrap
from pathlib import Path

import pytest

from centaur_tui.catalog import load_session
from centaur_tui.catalog.loader import load_tasks
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.plan import panel_modes, summarize, tournament_modes
from centaur_tui.domain.session import JudgeSimulation
from centaur_tui.llm.simulation import assistance, judge_reply, worker_deliverable
from centaur_tui.pipeline import Pipeline
from centaur_tui.pipeline.estimate import estimate
from centaur_tui.services.report import session_report
from centaur_tui.stats.workers import wilson
from centaur_tui.store import Store
from tests.support.sessions import TASKS

PANEL = """
name = "panel"
seed = {seed}
runs = {runs}
tasks = ["counseling", "tutoring"]
tasks_dir = "{tasks}"

[limits]
concurrency = 32
per_model_concurrency = 16
backoff_base_s = 0.0
backoff_max_s = 0.0

[[models]]
name = "Broad"
model = "simulated/broad"
family = "North"
automation = false
simulation = {{ coaching_skill = {{ default = 0.9 }}, specificity = 0.0 }}

[[models]]
name = "Deep"
model = "simulated/deep"
family = "South"
automation = false
simulation = {{ coaching_skill = {{ default = 0.5 }}, specificity = 1.0 }}

[[candidates]]
name = "Pro"
source = "imported"
family = "Human"
professional = true

[[workers]]
name = "Weak"
model = "simulated/weak"
family = "East"
simulation = {{ skill = {{ default = 0.2 }}, uses_specifics = 0.0 }}

[[workers]]
name = "Strong"
model = "simulated/strong"
family = "East"
simulation = {{ skill = {{ default = 0.9 }} }}

[[judges]]
name = "J1"
model = "simulated/j1"
family = "West"
simulation = {{ noise = 0.8 }}

[[judges]]
name = "J2"
model = "simulated/j2"
family = "Far"
simulation = {{ noise = 0.8 }}
"""


def _write(tmp_path: Path, seed: int = 3, runs: int = 2, extra: str = "") -> Path:
    path = tmp_path / "panel.toml"
    path.write_text(textwrap.dedent(PANEL.format(seed=seed, runs=runs, tasks=TASKS)) + extra, encoding="utf-8")
    return path


def test_the_panel_plans_one_tournament_per_worker_and_prices_every_call(tmp_path: Path) -> None:
    study = load_session(_write(tmp_path))
    s = study.session
    assert s.worker is not None and s.worker.name == "Weak" and [w.name for w in s.worker_panel] == ["Weak", "Strong"]
    assert panel_modes(s) == ("augmentation@Strong",)
    assert tournament_modes(s) == ("automation", "augmentation", "augmentation@Strong")
    plan = summarize(s)
    # 2 runs x 2 tasks: 2 assistance texts each, read by 2 workers, each with its own plain.
    assert plan.calls["assistance"] == 2 * 2 * 2 and plan.calls["worker"] == 2 * 2 * 3 * 2
    est = estimate(study)
    by_stage = {st: sum(r.planned for r in est.rows if r.stage == st) for st in ("assistance", "worker", "judging")}
    assert by_stage["worker"] == plan.calls["worker"]
    assert {n for r in est.rows if r.stage == "worker" for n in r.names} == {"Weak", "Strong"}
    assert by_stage["judging"] == plan.total_judgments


def test_a_panel_runs_sends_each_call_once_resumes_and_reports_per_worker(tmp_path: Path) -> None:
    path = _write(tmp_path)
    study = load_session(path)
    plan = summarize(study.session)
    store = Store(study.database)
    pipe = Pipeline(study, store)
    asyncio.run(pipe.run())
    counts = store.counts()
    # The professional's outputs are not imported: the automation tournament is blocked, the rest complete.
    assert counts.assistance_texts == plan.calls["assistance"]
    assert counts.outputs == plan.calls["worker"]
    assert sum(s.sent for s in pipe.progress.stages.values()) == counts.calls
    assert pipe.progress.stages["assistance"].done == plan.calls["assistance"]  # one count per text, not per worker
    workers = {r.worker for r in store.output_rows()}
    assert workers == {"Weak", "Strong"}
    store.close()
    again = Pipeline(load_session(path), Store(study.database))
    asyncio.run(again.run())
    assert sum(s.sent for s in again.progress.stages.values()) == 0  # nothing answered is sent twice
    again.store.close()

    doc = session_report(load_session(path), bootstrap=50, permutation=False).document
    assert doc.workers is not None and doc.workers.workers == ["Weak", "Strong"]
    assert {m.mode for m in doc.modes} >= {"augmentation", "augmentation@Strong"}
    assert len(doc.workers.stability) == 1 and doc.workers.stability[0].assistants == 2
    assert {(g.worker, g.assistant) for g in doc.workers.gains} == {
        (w, a) for w in ("Weak", "Strong") for a in ("Broad", "Deep")
    }
    assert all(g.comparisons == 2 * 2 and g.judgments == 2 * 2 * 2 for g in doc.workers.gains)
    # A professional is declared but none of its outputs is imported: the section says so.
    assert doc.professional is not None and doc.professional.rows == []
    assert doc.professional.note is not None
    from centaur_tui.report.render import to_markdown, to_text

    text = to_text(doc)
    assert "Worker panel" in to_markdown(doc)
    assert "Worker panel: the assistants' rank per worker" in text and "professional as the bar" in text

    # `--section workers` computes and prints the panel's section alone.
    from click.testing import CliRunner

    from centaur_tui.cli.main import cli

    alone = CliRunner().invoke(cli, ["report", str(path), "--section", "workers", "--bootstrap", "20"])
    assert alone.exit_code == 0, alone.output
    assert "Worker panel: the assistants' rank per worker" in alone.output
    assert "Best assistant per worker: Weak: " in alone.output and "professional as the bar" not in alone.output


def test_both_a_worker_and_a_panel_are_refused_naming_the_field(tmp_path: Path) -> None:
    extra = '\n[worker]\nname = "Other"\nmodel = "simulated/other"\nfamily = "East"\n'
    with pytest.raises(CentaurError, match="not both"):
        load_session(_write(tmp_path, extra=extra))


def test_duplicate_worker_names_are_refused(tmp_path: Path) -> None:
    extra = '\n[[workers]]\nname = "Weak"\nmodel = "simulated/weak2"\nfamily = "East"\n'
    with pytest.raises(CentaurError, match="duplicate worker names: Weak"):
        load_session(_write(tmp_path, extra=extra))


def test_planted_best_assistant_per_worker_is_recovered_in_95_percent_of_seeds() -> None:
    """Direct simulation (the provider's own functions, no litellm): 20 seeds, 2 runs x 2 tasks, 2 judges."""
    tasks, universal = load_tasks(TASKS)
    workers = {"Weak": (0.2, 0.0), "Strong": (0.9, 1.0)}
    coaches = {"Broad": (0.9, 0.0), "Deep": (0.5, 1.0)}
    judge = JudgeSimulation(noise=0.8)
    recovered = 0
    for seed in range(20):
        rng = random.Random(seed)
        points = {w: dict.fromkeys([*coaches, "plain"], 0.0) for w in workers}
        for _run in range(2):
            for task in (tasks["counseling"], tasks["tutoring"]):
                texts = {a: assistance(task, sk, rng, sp) for a, (sk, sp) in coaches.items()} | {"plain": ""}
                for w, (skill, uses) in workers.items():
                    out = {a: worker_deliverable(task, skill, g, rng, uses) for a, g in texts.items()}
                    names = list(out)
                    for i, a in enumerate(names):
                        for b in names[i + 1 :]:
                            for _judge in range(2):
                                winner = judge_reply(task, universal, judge, out[a], out[b], True, rng)["winner"]
                                share = {"option_1": 1.0, "option_2": 0.0}.get(winner, 0.5)
                                points[w][a] += share
                                points[w][b] += 1 - share
        best = {w: max(coaches, key=points[w].__getitem__) for w in workers}
        recovered += best == {"Weak": "Broad", "Strong": "Deep"}
    assert recovered >= 19, recovered


@pytest.mark.parametrize("true_p", [0.2, 0.5, 0.8])
def test_the_wilson_interval_on_comparisons_covers_a_planted_rate(true_p: float) -> None:
    """40 studies of 30 comparisons x 3 judges who agree 80% of the time: the interval covers >= 90%."""
    rng = random.Random(int(true_p * 100))
    covered = 0
    for _ in range(40):
        wins, n = 0, 0
        for _c in range(30):
            truth = rng.random() < true_p
            for _j in range(3):
                wins += truth if rng.random() < 0.8 else rng.random() < true_p
                n += 1
        rate = wins / n
        expected = 0.8 * true_p + 0.2 * true_p
        low, high = wilson(rate * 30, 30)
        assert low is not None and high is not None
        covered += low <= expected <= high
    assert covered >= 36, covered


@pytest.mark.parametrize(
    ("model", "why"),
    [
        ('model = "simulated/weak"', "settings are kept per model string"),
        ('model = "openai/gpt-x"\napi_base = "http://127.0.0.1:9/v1"', "one worker twice"),
    ],
)
def test_two_panel_workers_on_one_model_string_are_refused_naming_both(tmp_path: Path, model: str, why: str) -> None:
    from click.testing import CliRunner

    from centaur_tui.cli.main import cli

    path = _write(tmp_path)
    text = path.read_text(encoding="utf-8").replace('model = "simulated/weak"', model)
    path.write_text(text + f'\n[[workers]]\nname = "Twin"\n{model}\nfamily = "East"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2, result.output
    assert "workers[0 'Weak'] and workers[2 'Twin']" in result.output and why in result.output
    assert str(path) in result.output and "Traceback" not in result.output
    assert not (tmp_path / "panel.db").exists()


def test_one_real_model_with_other_params_is_a_panel_worker_of_its_own(tmp_path: Path) -> None:
    path = _write(tmp_path)
    text = path.read_text(encoding="utf-8").replace('model = "simulated/weak"', 'model = "openai/gpt-x"')
    text += '\n[[workers]]\nname = "Cool"\nmodel = "openai/gpt-x"\nfamily = "East"\nparams = { temperature = 0.0 }\n'
    path.write_text(text, encoding="utf-8")
    assert [w.name for w in load_session(path).session.worker_panel] == ["Weak", "Strong", "Cool"]


HUMANS = """
[[experts]]
id = "ann"
name = "Ann"

[[experts]]
id = "bob"
name = "Bob"

[[workers]]
expert = "ann"
"""


def test_a_human_worker_in_the_panel_joins_the_human_worker_arm(tmp_path: Path) -> None:
    from centaur_tui.services.work import assign_work

    study = load_session(_write(tmp_path, runs=1, extra=HUMANS))
    s = study.session
    assert [w.name for w in s.worker_panel] == ["Weak", "Strong"]  # the worker models' tournaments as before
    arm = s.human_workers
    assert arm is not None and arm.experts == ("ann",)
    assert arm.tasks == ("counseling", "tutoring") and arm.conditions == ("Broad", "Deep", "plain")
    with Store(study.database) as store:
        asyncio.run(Pipeline(study, store).run())  # the assistance texts the human worker reads
        result = assign_work(study, store)
    assert {a.expert for a in result.design} == {"ann"} and len(result.design) == 2  # each task once


def test_a_panel_human_worker_is_added_to_an_explicit_arm(tmp_path: Path) -> None:
    extra = HUMANS + '\n[human_workers]\nexperts = ["bob"]\ntasks = ["tutoring"]\nassistants = ["Deep"]\n'
    arm = load_session(_write(tmp_path, extra=extra)).session.human_workers
    assert arm is not None and arm.experts == ("bob", "ann") and arm.tasks == ("tutoring",)
    # Named twice (in the panel and in the arm): refused, naming the arm's field.
    twice = HUMANS + '\n[human_workers]\nexperts = ["ann"]\ntasks = ["tutoring"]\n'
    with pytest.raises(CentaurError, match=r"human_workers.experts\[1\].*'ann' is listed twice"):
        load_session(_write(tmp_path, extra=twice))


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('expert = "ann"\nmodel = "simulated/ann"', r"workers\[2\] is a human worker .* only its expert id; model"),
        ('expert = "zed"', r"human_workers.experts\[0\].*unknown expert 'zed'"),
    ],
)
def test_a_broken_human_worker_entry_is_refused_naming_it(tmp_path: Path, entry: str, message: str) -> None:
    extra = '\n[[experts]]\nid = "ann"\nname = "Ann"\n\n[[workers]]\n' + entry + "\n"
    with pytest.raises(CentaurError, match=message):
        load_session(_write(tmp_path, extra=extra))


def test_a_panel_of_human_workers_only_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path)
    text = path.read_text(encoding="utf-8")
    head, _, _ = text.partition("[[workers]]")
    judges = text[text.index("[[judges]]") :]
    path.write_text(head + '[[experts]]\nid = "ann"\nname = "Ann"\n\n[[workers]]\nexpert = "ann"\n\n' + judges)
    with pytest.raises(CentaurError, match="human workers only: add a worker model"):
        load_session(path)


def test_the_panel_s_simulation_knobs_enter_call_keys_only_when_set() -> None:
    """At their defaults the new knobs leave every call key as it was before the panel (old databases resume)."""
    import json

    from centaur_tui.domain.plan import entry_json
    from centaur_tui.domain.session import ModelSpec, WorkerSpec

    worker = WorkerSpec(name="W", family="F", model="simulated/w")
    model = ModelSpec(name="M", family="F", model="simulated/m")
    assert "uses_specifics" not in json.loads(entry_json(worker))["simulation"]
    assert "specificity" not in json.loads(entry_json(model))["simulation"]
    picky = worker.model_copy(update={"simulation": worker.simulation.model_copy(update={"uses_specifics": 0.5})})
    assert json.loads(entry_json(picky))["simulation"]["uses_specifics"] == 0.5
    broad = model.model_copy(update={"simulation": model.simulation.model_copy(update={"specificity": 0.0})})
    assert json.loads(entry_json(broad))["simulation"]["specificity"] == 0.0
