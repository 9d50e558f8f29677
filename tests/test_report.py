"""`centaur report` (text, JSON, Markdown, figures, SIMULATED DATA) and `centaur import` (validation, round trip)."""

from __future__ import annotations

import asyncio
import csv
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.formats.export import read_export
from centaur_tui.pipeline import Pipeline
from centaur_tui.store import ImportFileError, Store, option_score_rows, store_judgments


def _strict_json(text: str) -> dict:
    def no_constant(name: str) -> None:
        raise AssertionError(f"JSON holds {name}")

    return json.loads(text, parse_constant=no_constant)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small simulated session, run once: 2 runs, 1 task, 20% invalid judge replies (some stay invalid)."""
    from tests.support.sessions import small_session_toml

    folder = tmp_path_factory.mktemp("report")
    path = folder / "small.toml"
    path.write_text(
        small_session_toml(runs=2, tasks=("counseling",), faults="invalid_reply_rate = 0.35"), encoding="utf-8"
    )
    study = load_session(path)
    with Store(study.database) as store:
        asyncio.run(Pipeline(study, store).run())
        assert store.counts().invalid_judgments > 0
    return path


def test_report_prints_every_section_with_counts_and_says_simulated(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from matplotlib.figure import Figure

    titles: list[str] = []
    original = Figure.savefig

    def savefig(self: Figure, *args: object, **kwargs: object) -> None:
        titles.append(self._suptitle.get_text() if self._suptitle else "")
        original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    out = CliRunner().invoke(
        cli,
        [
            "report",
            str(session),
            "--json",
            str(tmp_path / "r.json"),
            "--markdown",
            str(tmp_path / "r.md"),
            "--figures",
            str(tmp_path / "figs"),
            "--bootstrap",
            "30",
        ],
    )
    assert out.exit_code == 0, out.output
    text = out.output
    for heading in (
        "Automation: rank of ranks by task (Figure 7)",
        "Augmentation: mean rank ± SE by task (Figure 11)",
        "Automation: overall ordering",
        "Best candidate by task and mode (Appendix D)",
        "Spearman correlation of mean ranks (Table 1)",
        "Inter-judge reliability (Appendix F)",
        "Choice-rubric consistency",
        "Rubric score vs win rate",
        "Criterion validity",
        "General-rubric profiles (augmentation",
        "Standardised rubric ranking",
        "Position bias",
    ):
        assert heading in text, heading
    assert text.count("SIMULATED DATA") >= 12
    assert "invalid" in text and "n = " in text
    long_lines = [line for line in text.splitlines() if len(line) > 120]
    assert long_lines == []

    doc = _strict_json((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert doc["schema"] == "centaur-report/1" and doc["simulated"] is True and "SIMULATED DATA" in doc["banner"]
    assert {m["mode"] for m in doc["modes"]} == {"automation", "augmentation"}
    invalid = doc["counts"]["by_status"]["invalid"]
    assert invalid > 0 and invalid == sum(m["excluded"].get("invalid", 0) for m in doc["modes"])
    assert doc["reliability"]["rows"][0]["excluded"]["invalid"] == invalid
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert md.startswith("# CentaurBench report: session small [SIMULATED DATA]") and "> **SIMULATED DATA" in md
    assert "| candidate |" in md

    pngs = sorted(p.name for p in (tmp_path / "figs").glob("*.png"))
    assert pngs == [
        "fig07_automation_rank_heatmap.png",
        "fig08_augmentation_rank_heatmap.png",
        "fig09_automation_vs_augmentation.png",
        "fig10_automation_mean_ranks.png",
        "fig11_augmentation_mean_ranks.png",
        "fig12_general_rubric_profiles.png",
        "fig13_validity.png",
        "fig14_reliability.png",
        "fig15_criterion_validity.png",
    ]
    assert all((tmp_path / "figs" / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert len(titles) == 9 and all(t.startswith("SIMULATED DATA") for t in titles)


def test_report_of_real_data_does_not_say_simulated(session: Path, tmp_path: Path) -> None:
    copy = _copy_session(session, tmp_path, keep_judgments=True)
    with Store(load_session(copy).database) as store:
        store.set_meta({"simulated": "false"})
    out = CliRunner().invoke(cli, ["report", str(copy), "--json", str(tmp_path / "r.json"), "--bootstrap", "0"])
    assert out.exit_code == 0, out.output
    assert "SIMULATED" not in out.output
    assert _strict_json((tmp_path / "r.json").read_text())["banner"] is None


def test_report_alternatives_and_errors(session: Path, write_session) -> None:
    for method in ("rank_per_judge", "pooled"):
        out = CliRunner().invoke(
            cli, ["report", str(session), "--rank-method", method, "--bootstrap", "0", "--no-exact-p"]
        )
        assert out.exit_code == 0, out.output
        assert (
            "each judge ranks" in out.output if method == "rank_per_judge" else "pooled over all judges" in out.output
        )
    never_run = CliRunner().invoke(cli, ["report", str(write_session(filename="other.toml"))])
    assert never_run.exit_code == 2 and "run the session first" in never_run.output


# -- import -------------------------------------------------------------------------------------


def _copy_session(session: Path, folder: Path, keep_judgments: bool = False) -> Path:
    """A copy of the session's database (same comparisons and outputs), without judgments unless kept."""
    study = load_session(session)
    target = folder / "copy.db"
    with sqlite3.connect(study.database) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    if not keep_judgments:
        with sqlite3.connect(target) as conn:
            conn.execute("DELETE FROM scores")
            conn.execute("DELETE FROM judgments")
            conn.execute("DELETE FROM sqlite_sequence WHERE name = 'judgments'")
    text = session.read_text(encoding="utf-8").replace("runs = 2", 'runs = 2\ndatabase = "copy.db"', 1)
    path = folder / "copy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _export(session: Path, out: Path) -> Path:
    result = CliRunner().invoke(cli, ["export", str(session), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _judgment_count(session: Path) -> int:
    with Store(load_session(session).database) as store:
        return store.counts().judgments


def test_export_then_import_into_a_fresh_copy_round_trips_exactly(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")
    copy = _copy_session(session, tmp_path)
    assert _judgment_count(copy) == 0
    out = CliRunner().invoke(cli, ["import", str(copy), str(a)])
    assert out.exit_code == 0, out.output
    n = sum(1 for _ in (a / "judgments.csv").open()) - 1
    assert f"{n:,} stored" in out.output and "0 already stored" in out.output
    b = _export(copy, tmp_path / "b")
    for name in ("judgments.csv", "scores.csv", "outputs.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    again = CliRunner().invoke(cli, ["import", str(copy), str(a)])
    assert again.exit_code == 0 and " 0 stored" in again.output and f"{n:,} already stored identically" in again.output
    assert _judgment_count(copy) == n


def _edit(src: Path, dst: Path, name: str, row: int, column: str, value: str) -> Path:
    shutil.copytree(src, dst)
    with (dst / name).open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    rows[row][column] = value
    with (dst / name).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return dst


def _first(a: Path, valid: bool) -> int:
    with (a / "judgments.csv").open(newline="") as fh:
        return next(i for i, r in enumerate(csv.DictReader(fh)) if (r["valid"] == "true") == valid)


@pytest.mark.parametrize(
    ("name", "column", "value", "message"),
    [
        ("judgments.csv", "winner", "Nobody", "column winner: 'Nobody' is not option1"),
        ("judgments.csv", "comparison_id", "c-unknown", "column comparison_id: unknown comparison 'c-unknown'"),
        ("judgments.csv", "valid", "maybe", "column valid: 'maybe' is not true or false"),
        ("judgments.csv", "mode", "augmentation", "column mode: 'augmentation' but comparison"),
        ("judgments.csv", "option1", "Zeta", "column option1: 'Zeta' is not a candidate of comparison"),
        ("judgments.csv", "judge_kind", "robot", "column judge_kind: 'robot' is not one of llm, expert"),
        ("scores.csv", "score", "11", "column score: '11' is not an integer from 1 to 10"),
        ("scores.csv", "score", "7.5", "column score: '7.5' is not an integer from 1 to 10"),
        ("scores.csv", "dimension", "charm", "column dimension: 'charm' is not a dimension of task 'counseling'"),
        ("scores.csv", "dimension_kind", "general", "column dimension_kind: 'general' but"),
    ],
)
def test_import_rejects_bad_rows_naming_file_row_and_column_and_writes_nothing(
    session: Path,
    tmp_path: Path,
    name: str,
    column: str,
    value: str,
    message: str,
) -> None:
    a = _export(session, tmp_path / "a")
    row = _first(a, valid=True) if name == "judgments.csv" else 0
    if column == "dimension_kind":
        with (a / "scores.csv").open(newline="") as fh:
            row = next(i for i, r in enumerate(csv.DictReader(fh)) if r["dimension_kind"] == "task")
    bad = _edit(a, tmp_path / "bad", name, row, column, value)
    copy = _copy_session(session, tmp_path)
    # Edited by hand, the files no longer match their signature: rows are checked all the same as external data.
    out = CliRunner().invoke(cli, ["import", str(copy), str(bad), "--external"])
    assert out.exit_code == 2, out.output
    assert f"{name} row {row + 1} (line {row + 2})" in out.output and message in out.output
    assert "nothing was imported" in out.output
    assert _judgment_count(copy) == 0


def test_import_checks_consistency_between_validity_winner_and_scores(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")
    invalid_row = _first(a, valid=False)
    bad = _edit(a, tmp_path / "bad1", "judgments.csv", invalid_row, "winner", "tie")
    comps, rubrics = _context(session)
    with pytest.raises(ImportFileError, match="given for an invalid judgment"):
        read_export(bad, comps, rubrics)
    # A valid judgment that loses one of its score rows.
    shutil.copytree(a, tmp_path / "bad2")
    lines = (a / "scores.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "bad2" / "scores.csv").write_text("".join(lines[:1] + lines[2:]), encoding="utf-8")
    with pytest.raises(ImportFileError, match=r"valid judgment lacks scores\.csv rows for"):
        read_export(tmp_path / "bad2", comps, rubrics)
    # Missing column (an unknown column is ignored and counted, not refused).
    shutil.copytree(a, tmp_path / "bad3")
    text = (a / "judgments.csv").read_text(encoding="utf-8").replace("rationale", "reasoning", 1)
    (tmp_path / "bad3" / "judgments.csv").write_text(text, encoding="utf-8")
    with pytest.raises(ImportFileError, match="missing column\\(s\\): rationale"):
        read_export(tmp_path / "bad3", comps, rubrics)


def _context(session: Path) -> tuple[dict, dict]:
    study = load_session(session)
    with Store(study.database) as store:
        comps = store.comparisons()
    return comps, {t: study.rubric(t) for t in study.tasks}


def test_a_changed_judgment_is_a_conflict_and_nothing_is_written(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")
    copy = _copy_session(session, tmp_path)
    assert CliRunner().invoke(cli, ["import", str(copy), str(a)]).exit_code == 0
    row = _first(a, valid=True)
    with (a / "judgments.csv").open(newline="") as fh:
        r = list(csv.DictReader(fh))[row]
    other = r["option2"] if r["winner"] == r["option1"] else r["option1"]
    changed = _edit(a, tmp_path / "changed", "judgments.csv", row, "winner", other)
    # Also a new revision of another judgment, which alone would be stored.
    with (changed / "judgments.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    extra = {
        **rows[row + 1],
        "revision": "1",
        "judgment_id": "",
        "valid": "false",
        "winner": "",
        "invalid_reason": "withdrawn by the expert",
        "option1_mean": "",
        "option2_mean": "",
    }
    with (changed / "judgments.csv").open("a", newline="", encoding="utf-8") as fh:
        csv.DictWriter(fh, fieldnames=list(rows[0])).writerow(extra)
    out = CliRunner().invoke(cli, ["import", str(copy), str(changed), "--external"])
    assert out.exit_code == 2 and "Import conflict" in out.output and "new revision" in out.output
    b = _export(copy, tmp_path / "b")
    assert (a / "judgments.csv").read_bytes() == (b / "judgments.csv").read_bytes()
    # Without the conflicting row, the new revision is stored and supersedes the old one.
    shutil.copytree(a, tmp_path / "revision")
    with (tmp_path / "revision" / "judgments.csv").open("a", newline="", encoding="utf-8") as fh:
        csv.DictWriter(fh, fieldnames=list(rows[0])).writerow(extra)
    out = CliRunner().invoke(cli, ["import", str(copy), str(tmp_path / "revision"), "--external"])
    assert out.exit_code == 0 and " 1 stored" in out.output, out.output
    report = CliRunner().invoke(cli, ["report", str(copy), "--bootstrap", "0", "--json", str(tmp_path / "r.json")])
    assert report.exit_code == 0, report.output
    assert _strict_json((tmp_path / "r.json").read_text())["counts"]["by_status"]["superseded"] == 1


def test_ids_are_kept_when_free_and_reassigned_when_taken(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")
    comps, rubrics = _context(session)
    records = read_export(a, comps, rubrics)
    copy = _copy_session(session, tmp_path)
    with Store(load_session(copy).database) as store:
        first = records[0]
        moved = type(first)(**{**first.__dict__, "presentation": 7})  # a new key that claims an existing id
        summary = store_judgments(store, records)
        assert (summary.inserted, summary.unchanged) == (len(records), 0)
        again = store_judgments(store, [moved])
        assert again.inserted == 1
        ids = [r.judgment_id for r in store.judgment_rows()]
        assert ids[: len(records)] == [r.id for r in records] and ids[-1] == max(ids) > max(r.id for r in records)
        agg = option_score_rows(store, ["instruction_following"])
        assert agg["columns"] == ["judgment_id", "candidate", "dims", "mean", "general"]
        assert len(agg["rows"]) == 2 * sum(r.valid for r in records) + 2 * moved.valid


def test_option_scores_pack_general_dimensions_and_fall_back_to_columns(session: Path) -> None:
    from centaur_tui.stats.frames import build_frames

    study = load_session(session)
    general = [d.id for d in study.universal.general_dimensions]
    with Store(study.database) as store:
        packed = option_score_rows(store, general)
        wide = option_score_rows(store, general + [f"extra{i}" for i in range(11)])  # 16 > 15: one column each
        rows = (store.judgment_rows(), store.score_rows(), [], store.comparisons())
    assert packed["packed"] == general and wide["packed"] == [] and wide["columns"][4] == f"dim:{general[0]}"
    a = build_frames(rows[0], None, [], rows[3], option_score_rows=packed).option_scores
    b = build_frames(rows[0], None, [], rows[3], option_score_rows=wide).option_scores
    c = build_frames(*rows).option_scores
    cols = ["judgment_id", "candidate", "dims", "mean", *(f"dim:{d}" for d in general)]
    key = ["judgment_id", "candidate"]
    for other in (b, c):
        left = a[cols].sort_values(key).reset_index(drop=True)
        right = other[cols].sort_values(key).reset_index(drop=True)
        assert left.astype(str).equals(right.astype(str))


def test_import_of_a_session_never_run_is_a_clear_error(write_session, tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["import", str(write_session(filename="other.toml")), str(tmp_path)])
    assert out.exit_code == 2 and "run the session first" in out.output


def test_aggregated_scores_give_the_same_report_as_every_score_row(session: Path) -> None:
    from centaur_tui.services.report import load_report_inputs, report_from_rows

    study = load_session(session)
    meta, rows = load_report_inputs(study)
    fast = report_from_rows(study, meta, rows, bootstrap=20).doc
    with Store(study.database) as store:
        raw = dict(rows, score_rows=store.score_rows(), option_score_rows=None, output_rows=store.output_rows())
    slow = report_from_rows(study, meta, raw, bootstrap=20).doc
    assert json.dumps(fast, sort_keys=True) == json.dumps(slow, sort_keys=True)


DOCUMENTED_TOP = [
    "schema",
    "session",
    "simulated",
    "banner",
    "options",
    "counts",
    "modes",
    "best_by_task",
    "cross_mode",
    "reliability",
    "validity",
    "experts",
    "ppr",
    "calibration",
    "outcomes",
    "record",
    "served",
    "blinding",
]
DOCUMENTED_MODE = [
    "mode",
    "candidates",
    "tasks",
    "runs",
    "n",
    "excluded",
    "missing_cells",
    "cells",
    "matrix",
    "overall",
    "bradley_terry",
    "bradley_terry_by_task",
]


def test_the_json_document_round_trips_byte_for_byte_in_the_documented_shape(session: Path, tmp_path: Path) -> None:
    from centaur_tui.report import ReportDocument

    out = CliRunner().invoke(
        cli, ["report", str(session), "--json", str(tmp_path / "r.json"), "--bootstrap", "20", "--quiet"]
    )
    assert out.exit_code == 0, out.output
    text = (tmp_path / "r.json").read_text(encoding="utf-8")
    document = ReportDocument.from_json(text)
    assert document.to_json() + "\n" == text  # same keys, same order, same numbers (3 stays 3, 3.0 stays 3.0)
    assert ReportDocument.from_dict(document.to_dict()) == document
    plain = _strict_json(text)
    assert list(plain) == DOCUMENTED_TOP and all(list(m) == DOCUMENTED_MODE for m in plain["modes"])
    assert document.schema_name == "centaur-report/1" and document.mode("automation") is not None
    assert list(plain["experts"]) == ["present", "note", "options"]  # no expert: absent parts stay absent, not null


def test_a_document_of_another_shape_is_refused(session: Path, tmp_path: Path) -> None:
    from pydantic import ValidationError

    from centaur_tui.report import ReportDocument
    from centaur_tui.services.report import session_report

    plain = session_report(load_session(session), bootstrap=0, permutation=False).doc
    changed = json.loads(json.dumps(plain))
    changed["modes"][0]["matrix"][0]["new_column"] = 1
    with pytest.raises(ValidationError, match="new_column"):
        ReportDocument.from_dict(changed)
    changed = json.loads(json.dumps(plain))
    changed["counts"]["runs"] = 2.0  # strict: a count never silently becomes a float
    with pytest.raises(ValidationError, match="runs"):
        ReportDocument.from_dict(changed)


def test_every_field_of_the_document_is_in_the_documented_schema() -> None:
    import re

    from pydantic import BaseModel

    from centaur_tui.report import document as module

    docs = (Path(__file__).resolve().parent.parent / "docs" / "report.md").read_text(encoding="utf-8")
    schema = docs.split("### JSON document (schema `centaur-report/1`)", 1)[1].split("\n```\n", 2)[1]
    documented = set(re.findall(r'"(\w+)"', schema))
    missing = {
        f"{model.__name__}.{field.alias or name}"
        for model in vars(module).values()
        if isinstance(model, type) and issubclass(model, BaseModel) and model.__module__ == module.__name__
        for name, field in model.model_fields.items()
        if (field.alias or name) not in documented
    }
    assert missing == set()
