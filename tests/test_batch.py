"""Batch mode through litellm's real batch SDK against a local fake of OpenAI's Files and Batches endpoints.

Generation runs online against the fake's chat endpoint, judge calls go through batches
(`[judging] mode = "batch"`); nothing of litellm is patched. The fake (tests/support/batch_server.py)
logs every request, so "sent twice" is checked on what the provider received.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.errors import ConfigError
from centaur_tui.pipeline import Pipeline
from centaur_tui.store import Store, batch_rows, check_no_double_send
from tests.support.batch_server import BatchServer, result_line

TASKS = Path(__file__).resolve().parent.parent / "tasks"
ROOT = Path(__file__).resolve().parent.parent


def session_text(api_base: str, mode: str = "batch", batch: str = "", name: str = "batched", runs: int = 1) -> str:
    def entry(kind: str, name: str, model: str, family: str, extra: str = "") -> str:
        return (
            f'[{kind}]\nname = "{name}"\nmodel = "openai/{model}"\napi_base = "{api_base}"\n'
            f'family = "{family}"\n{extra}\n'
        )

    return textwrap.dedent(
        f"""
        name = "{name}"
        seed = 5
        runs = {runs}
        tasks = ["counseling"]
        tasks_dir = "{TASKS}"

        [judging]
        mode = "{mode}"
        max_tokens = 400
        structured_output = false

        [batch]
        poll_interval_s = 0.02
        collect_s = 0.05
        {batch}

        [limits]
        concurrency = 8
        max_retries = 1
        backoff_base_s = 0.0
        backoff_max_s = 0.05
        timeout_s = 10.0
        """
    ) + "\n".join(
        [
            entry("[models]", "A", "gen-a", "North"),
            entry("[models]", "B", "gen-b", "South", "augmentation = false"),
            entry("[models]", "C", "gen-c", "Mid", "augmentation = false"),
            entry("worker", "W", "worker", "East"),
            entry(
                "[judges]", "J1", "gpt-4o-mini", "West", "batch_input_cost_per_mtok = 0.5\nbatch_output_cost_per_mtok = 2.0"
            ),
            entry("[judges]", "J2", "judge-two", "Central", "input_cost_per_mtok = 1.0\noutput_cost_per_mtok = 4.0"),
        ]
    )


def write(tmp_path: Path, text: str, name: str = "batched.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def run(path: Path) -> Any:
    study = load_session(path)
    with Store(study.database) as store:
        return asyncio.run(Pipeline(study, store).run())


def judgments(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(load_session(path).database) as conn:
        return conn.execute(
            "SELECT j.comparison_id, j.judge, j.presentation, j.option1, j.option2, j.winner, j.valid,"
            " j.invalid_reason, j.rationale, j.attempts, c.response,"
            " (SELECT group_concat(candidate || ':' || dimension || '=' || score, ',') FROM"
            "  (SELECT * FROM scores s WHERE s.judgment_id = j.id ORDER BY candidate, dimension))"
            " FROM judgments j JOIN calls c ON c.key = j.call_key ORDER BY j.comparison_id, j.judge, j.presentation"
        ).fetchall()


def query(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(load_session(path).database) as conn:
        return conn.execute(sql).fetchall()


# -- happy path -----------------------------------------------------------------------------------


def test_a_batch_run_stores_what_the_online_path_stores(tmp_path: Path) -> None:
    with BatchServer() as server:
        batched = write(tmp_path, session_text(server.api_base))
        online = write(tmp_path, session_text(server.api_base, mode="online", name="online"), "online.toml")
        outcome = run(batched)
        assert outcome.complete, outcome.outcomes
        sent = server.all_sent()
        judge_calls_online = sum(1 for r in server.online if r["model"] in ("gpt-4o-mini", "judge-two"))
        assert judge_calls_online == 0  # every judge call went through a batch
        assert run(online).complete
    rows_b, rows_o = judgments(batched), judgments(online)
    assert rows_b and rows_b == rows_o  # same comparisons, verdicts, scores, replies
    assert len(sent) == len(set(sent)) == len(rows_b)  # one request per judgment, none twice
    assert outcome.progress.stages["judging"].batched == len(rows_b)
    # One batch per judge model (both judges' calls gather in their own batch).
    batches = query(batched, "SELECT model, state, status, requests FROM batches ORDER BY model")
    assert [(m, s, st) for m, s, st, _ in batches] == [
        ("openai/gpt-4o-mini", "collected", "completed"),
        ("openai/judge-two", "collected", "completed"),
    ]
    assert sum(n for *_, n in batches) == len(rows_b)
    assert query(batched, "SELECT count(*) FROM batch_requests WHERE state != 'answered' OR messages IS NOT NULL") == [
        (0,)
    ]


def test_batch_prices_are_recorded_per_call(tmp_path: Path) -> None:
    with BatchServer() as server:
        path = write(tmp_path, session_text(server.api_base))
        assert run(path).complete
    costs = dict(
        query(
            path,
            "SELECT model, round(sum(cost), 9) / count(*) FROM calls WHERE stage = 'judging' GROUP BY model",
        )
    )
    # The fake reports 1,200 prompt and 150 completion tokens per reply.
    assert costs["openai/gpt-4o-mini"] == pytest.approx((1200 * 0.5 + 150 * 2.0) / 1e6)  # the session's batch price
    assert costs["openai/judge-two"] == pytest.approx((1200 * 1.0 + 150 * 4.0) / 1e6 * 0.5)  # online price x 0.5


# -- refusing what cannot be batched ----------------------------------------------------------------


def test_check_refuses_a_batched_judge_whose_provider_has_no_batch_api(tmp_path: Path) -> None:
    text = session_text("http://127.0.0.1:9/v1").replace('model = "openai/judge-two"', 'model = "anthropic/claude-x"')
    path = write(tmp_path, text)
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2, result.output
    assert "judges[1 'J2'].model" in result.output and "anthropic/claude-x" in result.output
    assert "no batch API" in result.output and "Traceback" not in result.output
    with pytest.raises(ConfigError):
        load_session(path)
    online = write(tmp_path, text.replace("[batch]", '[batch]\nunsupported = "online"'), "fallback.toml")
    study = load_session(online)
    assert not study.session.batched("judging", study.session.judge("J2"))
    assert study.session.batched("judging", study.session.judge("J1"))
