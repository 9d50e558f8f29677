"""A whole session through litellm's real HTTP path against a server that fails every fifth request.

Every fault kind of `tests/support/fault_server.py` appears (429 with Retry-After, 500, 503,
connection reset, truncated body, invalid JSON, no choices, null content, cut at max_tokens,
invalid judgment, slower than the timeout). The run must end complete (exit 0) or incomplete
(exit 3), every failed attempt must be in `call_errors`, and the report's counts must be the
database's. About 60 requests; 6-16 s on a busy 2-core machine (litellm's import, one 2 s timeout).
"""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from tests.support.fault_server import ANSWERS, FAULTS, ChaosServer

TASKS = Path(__file__).resolve().parent.parent / "tasks"
JUDGES = ("j1", "j2")


def _session(api_base: str) -> str:
    def model(kind: str, name: str, model: str, family: str, extra: str = "") -> str:
        return (
            f'[{kind}]\nname = "{name}"\nmodel = "openai/{model}"\napi_base = "{api_base}"\n'
            f'family = "{family}"\n{extra}\n'
        )

    return textwrap.dedent(
        f"""
        name = "chaos"
        seed = 5
        runs = 4
        tasks = ["counseling"]
        tasks_dir = "{TASKS}"

        [judging]
        max_tokens = 64
        structured_output = false

        [limits]
        concurrency = 8
        per_model_concurrency = 4
        max_retries = 2
        backoff_base_s = 0.0
        backoff_max_s = 0.05
        timeout_s = 2.0
        """
    ) + "\n".join(
        [
            model("[models]", "A", "gen-a", "North", "augmentation = true"),
            model("[models]", "B", "gen-b", "South", "augmentation = false"),
            model("[models]", "C", "gen-c", "Mid", "augmentation = false"),
            model("worker", "W", "worker", "East"),
            model("[judges]", "J1", "j1", "West"),
            model("[judges]", "J2", "j2", "Central"),
        ]
    )


def _db(path: Path, sql: str) -> Any:
    with sqlite3.connect(load_session(path).database) as conn:
        return conn.execute(sql).fetchone()[0]


@pytest.mark.slow
def test_every_fault_kind_through_real_http_ends_accounted_for(tmp_path: Path) -> None:
    path = tmp_path / "chaos.toml"
    path.write_text(_session("http://127.0.0.1:1/v1"), encoding="utf-8")  # the port is set below
    rubric = load_session(path).rubric("counseling")
    scores = {d.id: 7 for d in rubric.all}
    judgment = json.dumps(
        {
            "option_1": {"scores": scores},
            "option_2": {"scores": {**scores, rubric.all[0].id: 4}},
            "winner": "option_1",
            "rationale": "Option 1 covers more of the task.",
        }
    )

    def is_judge(body: dict[str, Any]) -> bool:
        return body.get("model") in JUDGES

    def answer(body: dict[str, Any]) -> str:
        return judgment if is_judge(body) else f"Deliverable of {body.get('model')}, written with care."

    chaos = ChaosServer(answer, is_judge, every=5, slow_s=2.6)  # beyond timeout_s = 2
    path.write_text(_session(chaos.api_base), encoding="utf-8")
    with chaos.running():
        out = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert out.exception is None or isinstance(out.exception, SystemExit), out.output  # no traceback
        assert out.exit_code in (0, 3), out.output
        assert set(chaos.counts()) == set(FAULTS), chaos.counts()

        calls, errors = _db(path, "SELECT count(*) FROM calls"), _db(path, "SELECT count(*) FROM call_errors")
        # Every request the server saw is a stored answer or a failed attempt in call_errors, and
        # every fault that is not an answer is a failed attempt.
        assert chaos.requests == calls + errors, (chaos.requests, calls, errors)
        assert errors == sum(n for kind, n in chaos.counts().items() if kind not in ANSWERS)
        assert _db(path, "SELECT count(*) FROM calls_in_flight") == 0

        report_file = tmp_path / "report.json"
        report = CliRunner().invoke(
            cli, ["report", str(path), "--json", str(report_file), "--bootstrap", "0", "--quiet"]
        )
        assert report.exit_code == 0, report.output
        doc = json.loads(report_file.read_text(encoding="utf-8"))
        stages = doc["outcomes"]["stages"]
        assert stages["automation"]["answered"] == _db(path, "SELECT count(*) FROM outputs WHERE mode = 'automation'")
        assert stages["assistance"]["answered"] == _db(path, "SELECT count(*) FROM assistance_texts")
        assert stages["worker"]["answered"] == _db(path, "SELECT count(*) FROM outputs WHERE mode = 'augmentation'")
        assert stages["judging"]["answered"] == _db(path, "SELECT count(*) FROM judgments WHERE valid = 1")
        assert stages["judging"]["invalid"] == _db(path, "SELECT count(*) FROM judgments WHERE valid = 0")
        assert doc["counts"]["judgments"] == stages["judging"]["answered"] + stages["judging"]["invalid"]
        assert doc["outcomes"]["failed_calls"] == _db(
            path, "SELECT count(DISTINCT key) FROM call_errors WHERE final = 1 AND key NOT IN (SELECT key FROM calls)"
        )
        for row in (*stages.values(), *doc["outcomes"]["judges"].values()):
            assert row["planned"] == row["answered"] + row["invalid"] + row["failed"] + row["blocked"]
        complete = doc["outcomes"]["complete"]
        assert complete == (out.exit_code == 0) and ("Incomplete:" in out.output) == (not complete), out.output

        # A re-run retries what failed for good; with the faults off it completes.
        chaos.enabled = False
        again = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert again.exit_code == 0, again.output
