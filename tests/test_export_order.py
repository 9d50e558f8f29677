"""Exports are ordered by a key of their content: the same data gives byte-identical files in any completion order."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner

from centaur_tui.cli.main import cli
from tests.support.sessions import small_session_toml

FILES = ("judgments.csv", "scores.csv", "outputs.csv")


def _run_and_export(tmp_path: Path, name: str, limits: str) -> tuple[Path, list[tuple[str, str, int]]]:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        small_session_toml(
            name=name,
            tasks=("counseling", "tutoring"),
            limits=limits,
            faults="latency_s = 0.002\ninvalid_reply_rate = 0.2",
        ),
        encoding="utf-8",
    )
    run = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
    assert run.exit_code == 0, run.output
    out = tmp_path / f"{name}-export"
    exported = CliRunner().invoke(cli, ["export", str(path), "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    with sqlite3.connect(tmp_path / f"{name}.db") as conn:
        order = conn.execute("SELECT comparison_id, judge, presentation FROM judgments ORDER BY id").fetchall()
    return out, order


def test_two_runs_with_different_completion_orders_export_byte_identical_files(tmp_path: Path) -> None:
    serial, serial_order = _run_and_export(tmp_path, "serial", "concurrency = 1\nper_model_concurrency = 1")
    wide, wide_order = _run_and_export(tmp_path, "wide", "concurrency = 64\nper_model_concurrency = 16")
    # The stores really differ in the order the judgments completed (and so in their row ids) ...
    assert sorted(serial_order) == sorted(wide_order) and serial_order != wide_order
    # ... and the files do not.
    for name in FILES:
        assert (serial / name).read_bytes() == (wide / name).read_bytes(), name
    lines = (serial / "judgments.csv").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + len(serial_order)
