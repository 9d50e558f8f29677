"""The calibration section end to end: simulated experts on a run session, `centaur report` text, JSON, Markdown."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from centaur_tui.cli.main import cli
from tests.support.experts import judged_session
from tests.test_ppr_session import _judge_assigned


def test_report_shows_naive_and_corrected_with_their_n_in_every_format(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    _judge_assigned(path, {"ann": ("uniform-random", 32), "bob": ("uniform-random", 16)})
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    args = ["report", str(path), "--section", "calibration", "--json", str(out), "--markdown", str(md)]
    res = CliRunner().invoke(cli, [*args, "--bootstrap", "50"])
    assert res.exit_code == 0, res.output
    c = json.loads(out.read_text())["calibration"]
    assert c["present"] and c["rows"] and c["min_labels"] == 10
    for r in c["rows"]:
        assert r["judged"] >= r["labels"] >= 0
        # Every row has its numbers or says why not; nothing is dropped silently.
        assert (r["corrected"] is not None) != (r["reason"] is not None)
        assert (r["rogan_gladen"] is not None) != (r["rg_reason"] is not None)
        if r["corrected"] is not None:
            assert r["ci_low"] <= r["corrected"] <= r["ci_high"] and r["labels"] >= 10
    # The small session holds 16 comparisons a mode (8 per candidate): too few labels, said per row.
    assert any((r["reason"] or "").startswith("too few expert labels") for r in c["rows"])
    assert c["too_few_labels"] == sum(1 for r in c["rows"] if (r["reason"] or "").startswith("too few"))
    assert {t["judge"] for t in c["tiers"]} and all(t["n"] >= 0 for t in c["tiers"])
    for text in (res.output, md.read_text()):
        assert "Judge calibration from expert labels" in text and "n labels" in text
        assert "Judge tiers against people" in text


def test_without_experts_the_section_says_so(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    out = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["report", str(path), "--section", "calibration", "--json", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    c = json.loads(out.read_text())["calibration"]
    assert c == {"present": False, "note": "no expert judgment: the judges cannot be calibrated"}
