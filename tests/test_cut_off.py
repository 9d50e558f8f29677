"""Texts cut off at max_tokens, through litellm's real HTTP path against a scripted OpenAI-compatible server.

A corpus of real-shaped cut-off replies (finish reason `length`, Anthropic's and Bedrock's
`max_tokens`, Gemini's `MAX_TOKENS`, the Responses API's `max_output_tokens`, vLLM's
`model_length`): every one is counted, and handled by each `generation.on_truncated` policy
(reask, judge_marked, exclude). Also: re-asks of a deterministic judge list every problem and
vary temperature and seed; outcomes "not sent (run stopped)" apart from "failed for good"; the
billed-twice notice kept until a run completes; `centaur check` per entry.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.cutoff import CUT_OFF_NOTE, is_cut_off, raised_max_tokens
from centaur_tui.domain.judgment import InvalidReply, parse_judge_reply
from centaur_tui.domain.outcomes import StoredFacts, session_outcomes
from centaur_tui.domain.prompts import judge_messages
from centaur_tui.pipeline.estimate import ASSUMED_TOKENS_PER_S, estimate, estimate_lines
from centaur_tui.services.run import run_study
from centaur_tui.store import Store, billed_twice_pending, clear_billed_twice, take_interrupted
from centaur_tui.store.schema import migrate
from centaur_tui.store.usage import EstimateFacts, StageModelUsage
from tests.support.hostile_server import HostileServer, Reply, hostile_server
from tests.support.provider_server import DIMENSION
from tests.support.sessions import TASKS

# The corpus: each generation model's stop reason when cut off, and the max_tokens from which it
# completes (None: never). Spellings as providers send them (litellm maps some to "length").
CORPUS: dict[str, tuple[str, int | None]] = {
    "alpha": ("length", 2000),  # OpenAI, llama.cpp, vLLM: complete once re-asked at 2,000
    "beta": ("max_tokens", None),  # Anthropic / Bedrock: cut off at every limit
    "worker": ("MAX_TOKENS", 4000),  # Gemini: complete at the cap (4 x 1,000)
}
VARIANTS = ("length", "max_tokens", "MAX_TOKENS", "max_output_tokens", "model_length", " Length ")
NOT_CUT = ("stop", "end_turn", "STOP", "content_filter", "tool_calls", "", None)


def _judgment(user: str, *, valid: bool = True) -> str:
    dims = list(dict.fromkeys(DIMENSION.findall(user)))
    if not valid:  # three problems at once: a score out of range, no winner, no rationale
        return json.dumps({"option_1": {"scores": {d: 11 for d in dims}}, "option_2": {"scores": {d: 5 for d in dims}}})
    return json.dumps(
        {
            "option_1": {"scores": {d: 6 for d in dims}, "average": 6.0},
            "option_2": {"scores": {d: 5 for d in dims}, "average": 5.0},
            "winner": "option_1",
            "rationale": "Option 1 covers the stated requirements more completely than option 2 does.",
        }
    )


def _completion(model: str, text: str, finish: str) -> Reply:
    return (
        200,
        {},
        {
            "id": "r",
            "object": "chat.completion",
            "created": 1,
            "model": model,
            "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 40, "total_tokens": 90},
        },
    )


def respond(body: dict[str, Any], headers: dict[str, str], *, invalid_judge: bool = False) -> Reply:
    model = str(body.get("model"))
    messages = body.get("messages") or []
    user = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if model.startswith("judge"):
        return _completion(model, _judgment(user, valid=not invalid_judge), "stop")
    reason, complete_at = CORPUS[model]
    limit = int(body.get("max_tokens") or 0)
    if complete_at is not None and limit >= complete_at:
        return _completion(model, f"The whole deliverable of {model}, ending properly.", "stop")
    return _completion(model, f"The deliverable of {model}, cut off in the mid", reason)


def session_toml(api_base: str, policy: str | None, *, judging: str = "") -> str:
    def entry(header: str, name: str, model: str, family: str) -> str:
        return (
            f'{header}\nname = "{name}"\nmodel = "openai/{model}"\nfamily = "{family}"\napi_base = "{api_base}"\n'
            "input_cost_per_mtok = 1.0\noutput_cost_per_mtok = 2.0\n"
        )

    on_truncated = f'on_truncated = "{policy}"\n' if policy else ""
    head = textwrap.dedent(
        f"""
        name = "cut"
        runs = 1
        tasks = ["counseling"]
        tasks_dir = "{TASKS}"

        [generation]
        max_tokens = 1000
        """
    )
    head += on_truncated + textwrap.dedent(
        """
        [judging]
        max_tokens = 400
        structured_output = false
        """
    )
    head += judging + textwrap.dedent(
        """
        [limits]
        concurrency = 2
        per_model_concurrency = 1
        backoff_base_s = 0.0
        backoff_max_s = 0.0
        """
    )
    return "\n".join(
        [
            head,
            entry("[[models]]", "Alpha", "alpha", "North"),
            entry("[[models]]", "Beta", "beta", "South"),
            entry("[worker]", "Worker", "worker", "Work"),
            entry("[[judges]]", "JudgeEast", "judge-east", "East"),
            entry("[[judges]]", "JudgeWest", "judge-west", "West"),
        ]
    )


@pytest.fixture
def server() -> Iterator[HostileServer]:
    with hostile_server(respond) as s:
        yield s


def rows(db: Path, sql: str) -> list[sqlite3.Row]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def run_cli(tmp_path: Path, text: str) -> tuple[Path, Any]:
    path = tmp_path / "cut.toml"
    path.write_text(text, encoding="utf-8")
    out = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
    return path, out


def generation_limits(server: HostileServer) -> dict[str, list[int]]:
    sent: dict[str, list[int]] = {}
    for body in server.requests:
        model = str(body["model"])
        if not model.startswith("judge"):
            sent.setdefault(model, []).append(int(body["max_tokens"]))
    return {k: sorted(v) for k, v in sent.items()}


def judge_prompts(server: HostileServer) -> list[str]:
    return [
        next(str(m["content"]) for m in b["messages"] if m["role"] == "user")
        for b in server.requests
        if str(b["model"]).startswith("judge")
    ]


# -- the corpus ----------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", VARIANTS)
def test_every_providers_cut_off_reason_counts(reason: str) -> None:
    assert is_cut_off(reason)


@pytest.mark.parametrize("reason", NOT_CUT)
def test_other_stop_reasons_are_not_cut_off(reason: str | None) -> None:
    assert not is_cut_off(reason)


@pytest.mark.parametrize(("limit", "cap", "raised"), [(1000, 4000, 2000), (3000, 4000, 4000), (4000, 4000, None)])
def test_a_re_ask_doubles_max_tokens_up_to_the_cap(limit: int, cap: int, raised: int | None) -> None:
    assert raised_max_tokens(limit, cap) == raised


# -- the three policies through the fake server ---------------------------------------------------


def test_reask_doubles_up_to_the_cap_and_marks_what_stays_cut_off(tmp_path: Path, server: HostileServer) -> None:
    path, out = run_cli(tmp_path, session_toml(server.api_base, None))  # the default policy: reask
    assert out.exit_code == 0, out.output
    db = path.with_suffix(".db")
    # Alpha completes at 2,000; Beta never does (1,000, 2,000, 4,000 = the cap); the worker at 4,000.
    # Automation and assistance both ask Alpha and Beta; the worker writes 3 outputs (plain, Alpha, Beta).
    limits = generation_limits(server)
    assert limits["alpha"] == [1000, 1000, 2000, 2000]
    assert limits["beta"] == [1000, 1000, 2000, 2000, 4000, 4000]
    assert limits["worker"] == [1000, 1000, 1000, 2000, 2000, 2000, 4000, 4000, 4000]
    outputs = {
        (r["mode"], r["candidate"]): (r["cut_off"], r["cut_off_reasks"])
        for r in rows(db, "SELECT mode, candidate, cut_off, cut_off_reasks FROM outputs")
    }
    assert outputs == {
        ("automation", "Alpha"): (0, 1),
        ("automation", "Beta"): (1, 2),
        ("augmentation", "plain"): (0, 2),
        ("augmentation", "Alpha"): (0, 2),
        ("augmentation", "Beta"): (0, 2),
    }
    helps = {r["assistant"]: (r["cut_off"], r["cut_off_reasks"]) for r in rows(db, "SELECT * FROM assistance_texts")}
    assert helps == {"Alpha": (0, 1), "Beta": (1, 2)}
    # Every judge prompt of the automation comparison says Beta's option was cut off; no other does.
    marked = [p for p in judge_prompts(server) if "cut off at the length limit" in p]
    automation = rows(
        db,
        "SELECT count(*) AS n FROM judgments j JOIN comparisons c ON c.id = j.comparison_id "
        "WHERE c.mode = 'automation'",
    )[0]["n"]
    assert len(marked) == automation > 0
    assert all(p.count("Note from the study") == 1 for p in marked)
    assert "Cut off at max_tokens: 2 stored text(s) (automation 1, assistance 1); on_truncated = reask." in out.output
    assert "12 call(s) asked again with a larger max_tokens" in out.output  # 1 + 2 + 2 x 3 + 1 + 2
    # The report counts them per stage and per candidate; the export has the column.
    report = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["report", str(path), "--json", str(report), "--bootstrap", "0", "--quiet"])
    assert res.exit_code == 0, res.output
    outcomes = json.loads(report.read_text())["outcomes"]
    assert outcomes["stages"]["automation"]["cut_off"] == 1 and outcomes["stages"]["assistance"]["cut_off"] == 1
    assert outcomes["candidates"]["Beta"]["cut_off"] == 1 and outcomes["candidates"]["Alpha"]["cut_off"] == 0
    assert outcomes["stages"]["judging"]["cut_off"] == automation
    text = CliRunner().invoke(cli, ["report", str(path), "--bootstrap", "0"]).output
    assert "Texts cut off at max_tokens" in text and "candidate Beta" in text
    res = CliRunner().invoke(cli, ["export", str(path), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    with (tmp_path / "out" / "outputs.csv").open(encoding="utf-8") as fh:
        exported = {(r["mode"], r["candidate"]): r["cut_off"] for r in csv.DictReader(fh)}
    assert exported[("automation", "Beta")] == "true"
    assert sum(v == "true" for v in exported.values()) == 1


def test_judge_marked_keeps_every_cut_off_text_and_tells_the_judges(tmp_path: Path, server: HostileServer) -> None:
    path, out = run_cli(tmp_path, session_toml(server.api_base, "judge_marked"))
    assert out.exit_code == 0, out.output
    db = path.with_suffix(".db")
    # Never re-asked: every generation call at max_tokens 1,000; all 7 texts cut off and counted.
    assert {v for limits in generation_limits(server).values() for v in limits} == {1000}
    assert rows(db, "SELECT count(*) AS n FROM outputs WHERE cut_off = 1")[0]["n"] == 5
    assert rows(db, "SELECT count(*) AS n FROM assistance_texts WHERE cut_off = 1")[0]["n"] == 2
    prompts = judge_prompts(server)
    assert prompts and all("each of the deliverables in <option_1> and <option_2>" in p for p in prompts)
    assert "Cut off at max_tokens: 7 stored text(s) (automation 2, assistance 2, worker 3)" in out.output
    judged = rows(db, "SELECT count(*) AS n FROM judgments")[0]["n"]
    assert f"{judged} judgment(s) were made of a comparison holding a cut-off output" in out.output


def test_exclude_judges_no_comparison_holding_a_cut_off_output_and_counts_them(
    tmp_path: Path, server: HostileServer
) -> None:
    path, out = run_cli(tmp_path, session_toml(server.api_base, "exclude"))
    assert out.exit_code == 0, out.output  # excluded by design: complete, not missing
    db = path.with_suffix(".db")
    # Every output is cut off (no re-ask): no comparison is stored, no judge is asked.
    assert not judge_prompts(server)
    assert rows(db, "SELECT count(*) AS n FROM comparisons")[0]["n"] == 0
    study = load_session(path)
    with Store(study.database) as store:
        from centaur_tui.store import stored_facts

        outcomes = session_outcomes(study.session, stored_facts(store))
    judging = outcomes.stages["judging"]
    assert judging.planned > 0 and judging.excluded == judging.planned and judging.missing == 0
    assert outcomes.complete
    assert f"{judging.planned} judgment(s) excluded (an output cut off)." in out.output
    report = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["report", str(path), "--json", str(report), "--bootstrap", "0", "--quiet"])
    assert res.exit_code == 0, res.output
    doc = json.loads(report.read_text())["outcomes"]
    assert doc["stages"]["judging"]["excluded"] == judging.planned and doc["on_truncated"] == "exclude"
    text = " ".join(CliRunner().invoke(cli, ["report", str(path), "--bootstrap", "0"]).output.split())
    assert f"{judging.planned} excluded (an output cut off at max_tokens)" in text
    assert "0 missing (0 failed for good, 0 not sent (run stopped), 0 blocked)" in text


def test_a_cut_off_judge_option_note_leaves_other_prompts_byte_identical() -> None:
    study = load_session(Path(__file__).parent.parent / "sessions" / "demo.toml")
    task = study.task(study.session.tasks[0])
    rubric = study.rubric(task.id)
    plain = judge_messages(study.universal, task, rubric, "one", "two", True)
    unmarked = judge_messages(study.universal, task, rubric, "one", "two", True, (False, False))
    marked = judge_messages(study.universal, task, rubric, "one", "two", True, (False, True))
    assert plain == unmarked
    assert marked[1]["content"].startswith(plain[1]["content"])
    assert marked[1]["content"].endswith(CUT_OFF_NOTE.format(which="the deliverable in <option_2>"))


# -- re-asks of an invalid judge reply ------------------------------------------------------------


def test_re_asks_of_a_deterministic_judge_list_every_problem_and_vary_temperature_and_seed(tmp_path: Path) -> None:
    with hostile_server(lambda b, h: respond(b, h, invalid_judge=True)) as server:
        path, out = run_cli(tmp_path, session_toml(server.api_base, "judge_marked"))
    assert out.exit_code == 0, out.output  # invalid judgments are stored: nothing is missing
    judge_bodies = [b for b in server.requests if str(b["model"]).startswith("judge")]
    firsts = [b for b in judge_bodies if len(b["messages"]) == 2]
    reasks = [b for b in judge_bodies if len(b["messages"]) > 2]
    judged = rows(path.with_suffix(".db"), "SELECT count(*) AS n FROM judgments")[0]["n"]
    # max_invalid_retries = 2 re-asks per judgment (first asks of identical prompts are shared; re-asks,
    # each with its own seed, are not)
    assert firsts and judged == 8 and len(reasks) == 2 * judged
    assert all(b["temperature"] == 0.0 and "seed" not in b for b in firsts)
    assert sorted({b["temperature"] for b in reasks}) == [0.2, 0.4]
    assert len({b["seed"] for b in reasks}) == len(reasks)  # a new seed on every re-ask
    last = reasks[0]["messages"][-1]["content"]
    assert "Every problem found:\n1. " in last
    assert "is outside 1-10" in last and "winner None is not one of" in last and "rationale is missing" in last
    reasons = [r["invalid_reason"] for r in rows(path.with_suffix(".db"), "SELECT invalid_reason FROM judgments")]
    assert reasons and all(
        re.search(r"re-ask 1: temperature 0\.2, seed \d+; re-ask 2: temperature 0\.4", r) for r in reasons
    )
    params = [
        json.loads(r["params"])
        for r in rows(path.with_suffix(".db"), "SELECT params FROM calls WHERE stage = 'judging'")
    ]
    assert sorted({p["temperature"] for p in params}) == [0.0, 0.2, 0.4]


def test_every_problem_of_a_reply_is_named() -> None:
    study = load_session(Path(__file__).parent.parent / "sessions" / "demo.toml")
    rubric = study.rubric(study.session.tasks[0])
    dims = [d.id for d in rubric.all]
    reply = json.dumps({"option_1": {"scores": {d: 0 for d in dims}}, "option_2": {}, "winner": "both"})
    with pytest.raises(InvalidReply) as err:
        parse_judge_reply(reply, rubric, allow_ties=True)
    problems = err.value.problems
    assert len(problems) == len(dims) + 3  # every score out of range, option_2, winner, rationale
    assert all(p in err.value.reason for p in problems)
    with pytest.raises(InvalidReply) as cut:
        parse_judge_reply('{"option_1": {"sc', rubric, allow_ties=True, finish_reason="MAX_TOKENS", max_tokens=400)
    assert cut.value.truncated and cut.value.reason == "cut off at max_tokens (400)"


# -- outcomes named truthfully --------------------------------------------------------------------


def test_not_sent_is_not_failed_for_good(tmp_path: Path) -> None:
    path = tmp_path / "cut.toml"
    path.write_text(session_toml("http://127.0.0.1:9/v1", None), encoding="utf-8")
    session = load_session(path).session
    from centaur_tui.domain.plan import output_id

    alpha = output_id(1, "counseling", "automation", "Alpha", "Alpha")
    facts = StoredFacts(frozenset(), frozenset(), {}, failed=frozenset({alpha}))
    o = session_outcomes(session, facts)
    assert (o.stages["automation"].failed, o.stages["automation"].not_sent) == (1, 1)
    assert o.failed == 1 and o.not_sent == 1 + o.stages["assistance"].not_sent + o.stages["worker"].not_sent
    assert sum(t.blocked for t in o.tasks.values()) == o.stages["judging"].blocked  # per-task rows count them


def test_a_stopped_run_is_reported_as_not_sent(tmp_path: Path, server: HostileServer) -> None:
    """A run stopped before any call: `centaur report` says not sent (run stopped), and 0 failed for good."""
    path = tmp_path / "cut.toml"
    path.write_text(session_toml(server.api_base, None), encoding="utf-8")
    study = load_session(path)
    with Store(study.database):
        pass  # the database exists, nothing was sent (as after a stop before the first answer)
    text = " ".join(CliRunner().invoke(cli, ["report", str(path), "--bootstrap", "0"]).output.split())
    # 2 automation, 2 assistance and the plain worker output not sent; 2 worker outputs and 8 judgments blocked.
    assert "Incomplete: 15 planned item(s) missing (0 failed for good, 5 not sent (run stopped), 10 blocked);" in text
    assert "0 call(s) failed for good (call_errors)" in text
    assert "7 missing (7 failed for good)" not in text


def test_the_billed_twice_counts_survive_until_a_run_completes(tmp_path: Path, server: HostileServer) -> None:
    path = tmp_path / "cut.toml"
    path.write_text(session_toml(server.api_base, None), encoding="utf-8")
    study = load_session(path)
    with Store(study.database) as store:
        # Two calls left in flight by a process that is gone (pid 2**22 + 1: above the largest pid_max of Linux).
        with store.write() as c:
            for key in ("k1", "k2"):
                c.execute(
                    "INSERT INTO calls_in_flight (key, stage, model, pid, started_at)"
                    " VALUES (?, 'automation', 'm', ?, 'x')",
                    (key, 4_194_305),
                )
        assert take_interrupted(store) == 2
        assert take_interrupted(store) == 0  # rows are gone ...
        assert billed_twice_pending(store) == (2, 0)  # ... the count stays, for a run stopped in turn
    with Store(study.database) as store:
        outcome = run_study(study, store)
        assert outcome.complete and outcome.interrupted == 2
        assert billed_twice_pending(store) == (0, 0)  # said by the completed run, then forgotten
        clear_billed_twice(store)


# -- older databases ------------------------------------------------------------------------------


def test_migration_marks_the_cut_off_texts_of_an_older_database(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        migrate(conn, db, target=13)
        now = "2026-01-01T00:00:00Z"
        for key, finish in (("k-cut", "length"), ("k-gem", "MAX_TOKENS"), ("k-ok", "stop"), ("k-none", None)):
            conn.execute(
                "INSERT INTO calls (key, stage, model, sample, messages, params, response, latency_s, attempts,"
                " simulated, created_at, finish_reason)"
                " VALUES (?, 'automation', 'm', 's', '[]', '{}', 'r', 1, 1, 0, ?, ?)",
                (key, now, finish),
            )
            conn.execute(
                "INSERT INTO outputs (id, run, task, mode, candidate, worker, worker_kind, text, call_key, created_at)"
                " VALUES (?, 1, 't', 'automation', ?, ?, 'model', 'x', ?, ?)",
                (f"o-{key}", key, key, key, now),
            )
        assert migrate(conn, db) >= 14
        cut = dict(conn.execute("SELECT call_key, cut_off FROM outputs").fetchall())
    finally:
        conn.close()
    assert cut == {"k-cut": 1, "k-gem": 1, "k-ok": 0, "k-none": 0}


# -- centaur check per entry ----------------------------------------------------------------------


def _two_entries_on_one_model(tmp_path: Path) -> Path:
    text = session_toml("http://127.0.0.1:9/v1", None)
    # Beta runs the same model string as Alpha, on another server at another price.
    text = text.replace('model = "openai/beta"', 'model = "openai/alpha"').replace(
        'name = "Beta"\nmodel = "openai/alpha"\nfamily = "South"\napi_base = "http://127.0.0.1:9/v1"\n'
        "input_cost_per_mtok = 1.0\noutput_cost_per_mtok = 2.0",
        'name = "Beta"\nmodel = "openai/alpha"\nfamily = "South"\napi_base = "http://127.0.0.1:10/v1"\n'
        "input_cost_per_mtok = 10.0\noutput_cost_per_mtok = 20.0",
    )
    path = tmp_path / "cut.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_check_prices_and_times_each_entry_apart_and_says_when_speed_is_assumed(tmp_path: Path) -> None:
    study = load_session(_two_entries_on_one_model(tmp_path))
    est = estimate(study, EstimateFacts())
    auto = {tuple(r.names): r for r in est.rows if r.stage == "automation"}
    assert set(auto) == {("Alpha",), ("Beta",)}  # one model string, two rows
    assert auto[("Beta",)].price.input == pytest.approx(10 * auto[("Alpha",)].price.input)
    assert auto[("Beta",)].cost_remaining == pytest.approx(10 * auto[("Alpha",)].cost_remaining)
    assert "no stored call to learn speed from for" in est.time_basis and "Alpha" in est.time_basis
    assert f"assumed {ASSUMED_TOKENS_PER_S:g} tokens/s" in "\n".join(estimate_lines(est))
    # Stored calls of Alpha at 4 tokens/s (a CPU model): Alpha's own speed, and Beta's learned from it.
    slow = StageModelUsage(
        calls=2, prompt_tokens=100, completion_tokens=400, completion_calls=2, cost=0.0, unpriced=0, latency_s=100.0
    )
    facts = EstimateFacts(entries={("automation", "Alpha"): slow})
    learned = estimate(study, facts)
    rows_ = {(r.stage, tuple(r.names)): r for r in learned.rows}
    assert rows_[("automation", ("Alpha",))].tokens_per_s == pytest.approx(4.0)
    assert rows_[("assistance", ("Beta",))].speed_from == "other entries on openai/alpha"
    assert learned.time_s > est.time_s  # slower than the 50 tokens/s assumption
    assert "speed learned from stored calls: Alpha 4.0 tokens/s" in learned.time_basis
