"""`[judging] expert_max_masks`: comparisons whose outputs needed too much masking are set aside from expert queues."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.errors import ConfigError
from centaur_tui.pipeline import Pipeline
from centaur_tui.store import Store
from tests.support.sessions import small_session_toml

EXPERT = '\n[[experts]]\nid = "ann"\nname = "Ann"\n'


def _session(folder: Path, judging: str) -> Path:
    path = folder / f"s{abs(hash(judging))}.toml"
    text = small_session_toml(runs=1, tasks=("counseling",), extra=EXPERT, judging=judging)
    path.write_text(text.replace("runs = 1", 'runs = 1\ndatabase = "small.db"', 1), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run session whose automation output of Alpha names Alpha three times (3 comparisons hold it)."""
    folder = tmp_path_factory.mktemp("masks")
    study = load_session(_session(folder, ""))
    with Store(study.database) as store:
        asyncio.run(Pipeline(study, store).run())
    with sqlite3.connect(study.database) as conn:
        conn.execute(
            "UPDATE outputs SET text = 'As Alpha I say: Alpha, Alpha.' || text"
            " WHERE candidate = 'Alpha' AND mode = 'automation'"
        )
    return folder


def _assigned(folder: Path) -> set[str]:
    with sqlite3.connect(folder / "small.db") as conn:
        rows = conn.execute(
            "SELECT a.comparison_id FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id"
            " WHERE c.mode = 'automation' AND 'Alpha' IN (c.candidate_a, c.candidate_b)"
        ).fetchall()
        conn.execute("DELETE FROM expert_assignments")
    return {r[0] for r in rows}


@pytest.mark.parametrize(("limit", "aside"), [(2, 3), (3, 0), (None, 0)])
def test_comparisons_masked_beyond_the_limit_are_set_aside_and_counted(
    folder: Path, limit: int | None, aside: int
) -> None:
    session = _session(folder, "" if limit is None else f"expert_max_masks = {limit}")
    out = CliRunner().invoke(cli, ["assign", str(session), "--expert", "ann", "--n", "1000"])
    assert out.exit_code == 0, out.output
    note = f"{aside} comparison(s) set aside: identity masked more than {limit} time(s)"
    assert (note in out.output) == bool(aside), out.output
    assert len(_assigned(folder)) == 3 - aside


def test_a_negative_limit_is_a_config_error_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_session(_session(tmp_path, "expert_max_masks = -1"))
    assert err.value.field == "judging.expert_max_masks"
