"""Call keys name the session entry they belong to; an older database's keys are reused only when unambiguous.

Issue 12, item 4: two entries on one model string shared every reply (two judges agreed 100%,
the audit showed one candidate's reply for the other). `tests/data/store_v1.db` was written by
the old code, whose keys had no entry in them.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from centaur_tui.catalog import load_session
from centaur_tui.domain.plan import call_key_of, entry_json, legacy_key_owners
from centaur_tui.domain.session import Endpoint, JudgeSpec, ModelSpec, WorkerSpec
from centaur_tui.llm.gateway import CallResult
from centaur_tui.pipeline import Pipeline
from centaur_tui.pipeline.calls import Calls
from centaur_tui.pipeline.progress import Progress
from centaur_tui.store import Store

V1 = Path(__file__).resolve().parent / "data" / "store_v1.db"

SHARED_JUDGES = """
        [[judges]]
        name = "JudgeWestToo"
        model = "simulated/judge-west"
        family = "West"
        simulation = { noise = 0.5 }
"""
"""A fourth judge on the model string of JudgeWest: same family, same model, another entry."""


class RecordingGateway:
    """Answers every call with a reply naming its key, and remembers what was sent."""

    in_flight = 0

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def register_prices(self, endpoints: object) -> None:
        pass

    async def complete(self, request: Any) -> CallResult:
        self.sent.append(request)
        return CallResult(
            text=f"fresh reply {request.key}",
            prompt_tokens=1,
            completion_tokens=1,
            cost=None,
            latency_s=0.0,
            attempts=1,
            finish_reason="stop",
        )


def _judge(**changes: Any) -> JudgeSpec:
    return JudgeSpec(**{"name": "J", "family": "F", "model": "openai/gpt-4.1", **changes})


@pytest.mark.parametrize(
    "changes",
    [
        {"name": "J2"},
        {"family": "G"},
        {"api_base": "http://127.0.0.1:9/v1"},
        {"params": {"reasoning_effort": "low"}},
        {"params": {"top_p": 0.5}},
        {"model": "openai/gpt-4.1-mini"},
    ],
)
def test_every_part_of_the_entry_that_changes_the_request_or_names_it_changes_the_key(changes: dict[str, Any]) -> None:
    base, other = _judge(), _judge(**changes)
    assert entry_json(base) != entry_json(other)
    keys = {call_key_of(e.model, "[]", "{}", "judging:run1:attempt0", entry_json(e)) for e in (base, other)}
    assert len(keys) == 2


def test_the_key_that_pays_and_the_prices_do_not_change_the_key() -> None:
    base = _judge()
    same = _judge(api_key_env="OTHER_KEY", input_cost_per_mtok=1.0, output_cost_per_mtok=2.0)
    assert entry_json(base) == entry_json(same)


def test_a_model_a_worker_and_a_judge_with_one_name_and_model_are_three_entries() -> None:
    fields = {"name": "X", "family": "F", "model": "openai/gpt-4.1"}
    entries = {
        entry_json(ModelSpec(**fields)),
        entry_json(WorkerSpec(**fields)),
        entry_json(JudgeSpec(**fields)),
        entry_json(Endpoint(model="openai/gpt-4.1")),
    }
    assert len(entries) == 4


def test_the_structured_output_mode_and_the_sample_change_the_key() -> None:
    entry = entry_json(_judge())
    keys = {
        call_key_of("openai/gpt-4.1", "[]", json.dumps(params), sample, entry)
        for params in ({"max_tokens": 10}, {"max_tokens": 10, "response_format": {"type": "json_object"}})
        for sample in ("judging:run1:attempt0", "judging:run1:attempt1")
    }
    assert len(keys) == 4


def test_the_legacy_key_is_the_old_code_s_key_of_every_stored_call_in_the_v1_fixture() -> None:
    with sqlite3.connect(V1) as conn:
        rows = conn.execute("SELECT key, model, messages, params, sample FROM calls").fetchall()
    assert len(rows) == 42
    for key, model, messages, params, sample in rows:
        assert call_key_of(model, messages, params, sample) == key


def test_legacy_keys_belong_only_to_model_strings_of_one_entry(write_session) -> None:
    study = load_session(write_session(extra=SHARED_JUDGES))
    owners = legacy_key_owners(study.session)
    assert "simulated/judge-west" not in owners
    assert {"simulated/alpha", "simulated/worker", "simulated/judge-north"} <= owners


def _v1_study(write_session, extra: str = "") -> Any:
    """The v1 fixture's session as far as its calls need it (its models, worker and judges), one task."""
    return load_session(write_session(name="v1", tasks=("counseling",), extra=extra))


def _entry_for(study: Any, model: str) -> Any:
    s = study.session
    return next(e for e in (*s.models, s.worker, *s.judges) if e.model == model)


def _replay(study: Any, path: Path) -> tuple[RecordingGateway, dict[str, tuple[str, str]]]:
    """Ask every call the v1 fixture stored again, through Calls; returns what was sent and (key, reply) per old key."""
    with sqlite3.connect(V1) as conn:
        rows = conn.execute("SELECT key, stage, model, messages, params, sample, response FROM calls").fetchall()
    gateway = RecordingGateway()
    answers: dict[str, tuple[str, str]] = {}
    with Store(path) as store:
        stand_in: Any = gateway  # duck-typed: complete, in_flight, register_prices
        calls = Calls(study, store, Progress(session="v1", simulated=True), stand_in)
        calls.load()

        async def ask() -> None:
            for old_key, stage, model, messages, params, sample, _ in rows:
                key, reply = await calls.call(
                    stage, _entry_for(study, model), json.loads(messages), json.loads(params), sample
                )
                answers[old_key] = (key, reply)

        asyncio.run(ask())
        calls.close()
    return gateway, answers


def test_an_old_database_s_replies_are_reused_when_one_entry_owns_the_model_string(tmp_path, write_session) -> None:
    path = tmp_path / "v1.db"
    shutil.copy(V1, path)
    gateway, answers = _replay(_v1_study(write_session), path)
    with sqlite3.connect(V1) as conn:
        stored = dict(conn.execute("SELECT key, response FROM calls").fetchall())
    assert gateway.sent == []
    assert {old: reply for old, (_, reply) in answers.items()} == stored
    assert all(key == old for old, (key, _) in answers.items())


def test_old_replies_of_a_shared_model_string_are_reused_for_no_entry(tmp_path, write_session) -> None:
    path = tmp_path / "v1.db"
    shutil.copy(V1, path)
    gateway, answers = _replay(_v1_study(write_session, extra=SHARED_JUDGES), path)
    with sqlite3.connect(V1) as conn:
        west = {k for (k,) in conn.execute("SELECT key FROM calls WHERE model = 'simulated/judge-west'")}
    assert len(west) == 16
    assert {r.key for r in gateway.sent} == {answers[k][0] for k in west}  # sent again, under new keys
    assert all(answers[k][1].startswith("fresh reply") and answers[k][0] != k for k in west)
    others = set(answers) - west
    assert all(answers[k][0] == k for k in others)  # the unambiguous ones still come from the store
    with Store(path) as store:
        assert store.counts().calls == 42 + 16  # the old rows are kept, the new ones added beside them


def test_two_judges_on_one_model_string_never_share_a_reply(write_session) -> None:
    study = load_session(write_session(extra=SHARED_JUDGES))
    store = Store(study.database)
    asyncio.run(Pipeline(study, store).run())
    rows = store.read(
        "SELECT j.comparison_id, j.judge, j.call_key, c.response FROM judgments j JOIN calls c ON c.key = j.call_key"
        " WHERE j.judge IN ('JudgeWest', 'JudgeWestToo')"
    )
    by_judge: dict[str, dict[str, tuple[str, str]]] = {}
    for r in rows:
        by_judge.setdefault(r["judge"], {})[r["comparison_id"]] = (r["call_key"], r["response"])
    west, too = by_judge["JudgeWest"], by_judge["JudgeWestToo"]
    assert set(west) == set(too) and len(west) >= 10
    assert not {k for k, _ in west.values()} & {k for k, _ in too.values()}
    same_reply = sum(west[c][1] == too[c][1] for c in west)
    assert same_reply < len(west)  # the old shared key made this 100%
    store.close()


class SlowGateway(RecordingGateway):
    """Answers after a pause, so that calls asked at once are in flight together; can fail on demand."""

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.fail = fail

    async def complete(self, request: Any) -> CallResult:
        await asyncio.sleep(0.05)
        if self.fail:
            self.sent.append(request)
            from centaur_tui.llm import CallFailed

            raise CallFailed("openai/x: ServiceUnavailableError: down", "ServiceUnavailableError", 3)
        return await super().complete(request)


@pytest.mark.parametrize("fail", [False, True])
def test_one_content_address_in_flight_twice_is_sent_once(write_session, fail: bool) -> None:
    """Two tasks asking one address at once (identical texts in two comparisons) share one request."""
    study = load_session(write_session(tasks=("counseling",)))
    judge = study.session.judges[0]
    gateway = SlowGateway(fail)
    messages = [{"role": "user", "content": "judge these identical texts"}]
    with Store(study.database) as store:
        stand_in: Any = gateway
        calls = Calls(study, store, Progress(session="s", simulated=True), stand_in)
        calls.load()

        async def ask_four_times() -> list[Any]:
            return await asyncio.gather(
                *(
                    calls.call_reply("judging", judge, messages, {"max_tokens": 10}, "judging:run1:attempt0")
                    for _ in range(4)
                ),
                return_exceptions=True,
            )

        results = asyncio.run(ask_four_times())
        calls.close()
        assert len(gateway.sent) == 1  # one request for four asks
        if fail:
            assert all(type(r).__name__ == "CallFailed" for r in results)
        else:
            assert len({r[0] for r in results}) == 1 and all(r[1].startswith("fresh reply") for r in results)
            assert store.read_value("SELECT count(*) FROM calls") == 1


# The demo's endpoints as the code before the later simulation knobs (judge bias, flip, flaw
# check, assistant specificity, worker uses_specifics) wrote their entries: a knob at its default
# must leave every stored call's content address as it was (`plan.LATER_KNOBS`).
DEMO_ENTRIES_BEFORE_LATER_KNOBS = {
    "ModelSpec:GPT-5-Mini": "6e48704d7f86b1cc",
    "ModelSpec:Claude-Opus-4.8": "cf897998656005a9",
    "ModelSpec:Claude-Sonnet-4.6": "24d4a366021dba52",
    "ModelSpec:Gemini-3.1-Pro": "08225283d9c60a66",
    "ModelSpec:DeepSeek-V3.1": "eed308a54fd17938",
    "ModelSpec:GPT-OSS-120B": "2193013505c2105f",
    "ModelSpec:GPT-O4-Mini": "9ef6382badd67fa6",
    "ModelSpec:GPT-4.1": "52d7923c08d3007e",
    "ModelSpec:GPT-O3-Mini": "3ebdf7e318640e70",
    "ModelSpec:GPT-3.5-Turbo": "7468f0718da76755",
    "JudgeSpec:Claude-Opus-4.8": "239ef2c089d3eb57",
    "JudgeSpec:DeepSeek-V3.1": "4e003b77d7102ba4",
    "JudgeSpec:Gemini-3.1-Pro": "7c5b20d291de60c1",
    "JudgeSpec:GPT-4.1": "9bd041029bc93d0b",
    "WorkerSpec:GPT-3.5-Turbo": "ff7a548de48fcf00",
}


def test_the_demo_s_entries_are_the_ones_its_stored_calls_were_addressed_with(tmp_path: Path) -> None:
    import hashlib
    import re

    # The demo now gives its candidates layouts (issue 26's `style`): without them, every knob is at its default.
    text = re.sub(r"(?m)^simulation\.style = \d+\n", "", Path("sessions/demo.toml").read_text(encoding="utf-8"))
    text = text.replace('tasks_dir = "../tasks"', f'tasks_dir = "{Path("tasks").resolve()}"')
    path = tmp_path / "demo.toml"
    path.write_text(text, encoding="utf-8")
    session = load_session(path).session
    endpoints = [*session.models, *session.judges, *([session.worker] if session.worker else [])]
    now = {f"{type(e).__name__}:{e.name}": hashlib.sha256(entry_json(e).encode()).hexdigest()[:16] for e in endpoints}
    assert now == DEMO_ENTRIES_BEFORE_LATER_KNOBS
