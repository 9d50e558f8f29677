"""`centaur import` bound to its session (issue 13): foreign files refused whole, judges checked, distinct names."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.errors import CentaurError, ConfigError
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.formats.export import file_digests, read_export
from centaur_tui.pipeline import Pipeline
from centaur_tui.store import (
    ExpertStore,
    ImportConflictError,
    JudgeNameClashError,
    Store,
    export_manifest,
    store_judgments,
)
from tests.support.sessions import small_session_toml

EXPERTS = '\n[[experts]]\nid = "ann"\nname = "Ann"\n\n[[experts]]\nid = "bob"\nname = "Bob"\ntasks = ["tutoring"]\n'
TASKS = ("counseling", "tutoring")
Rows = list[dict[str, str]]


def _run(folder: Path, name: str = "small", judging: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    text = small_session_toml(name=name, runs=1, tasks=TASKS, extra=EXPERTS, judging=judging)
    path.write_text(text, encoding="utf-8")
    study = load_session(path)
    with Store(study.database) as store:
        asyncio.run(Pipeline(study, store).run())
    return path


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small simulated session (1 run, 1 task, experts ann and bob), run once."""
    return _run(tmp_path_factory.mktemp("binding"))


_EXPORTED: dict[Path, Path] = {}
"""Export folder -> the session file it was exported from (whose database re-signs an edited copy)."""


def _export(session: Path, out: Path) -> Path:
    result = CliRunner().invoke(cli, ["export", str(session), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "session.json" in result.output
    _EXPORTED[out] = session
    return out


def _resign(folder: Path, session: Path) -> None:
    """Sign `folder`'s files again with `session`'s own secret: as if that session had exported these rows."""
    study = load_session(session)
    rows = json.loads((folder / "session.json").read_text(encoding="utf-8"))["rows"]
    with Store(study.database) as store:
        manifest = export_manifest(store, study.session.name, rows, file_digests(folder, tuple(rows)))
    (folder / "session.json").write_text(json.dumps(manifest), encoding="utf-8")


def _copy(session: Path, folder: Path, judging: str = "") -> Path:
    """The session over a copy of its database (same session_id) without judgments; `judging` edits the file."""
    study = load_session(session)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "copy.db"
    with sqlite3.connect(study.database) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    with sqlite3.connect(target) as conn:
        conn.execute("DELETE FROM scores")
        conn.execute("DELETE FROM judgments")
    text = small_session_toml(name=study.session.name, runs=1, tasks=TASKS, extra=EXPERTS, judging=judging)
    path = folder / "copy.toml"
    path.write_text(text.replace("runs = 1", 'runs = 1\ndatabase = "copy.db"', 1), encoding="utf-8")
    return path


def _judgment_tables(session: Path) -> str:
    """A digest of every row of the judgment tables (judgments, scores, app_experts), in rowid order."""
    h = hashlib.sha256()
    with sqlite3.connect(load_session(session).database) as conn:
        for table in ("judgments", "scores", "app_experts", "expert_assignments"):
            h.update(table.encode())
            for row in conn.execute(f"SELECT * FROM {table} ORDER BY rowid"):
                h.update(repr(row).encode())
    return h.hexdigest()


def _read(path: Path) -> Rows:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _write(path: Path, rows: Rows) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _edited(src: Path, dst: Path, edit: Callable[[Rows, Rows], None]) -> Path:
    """A copy of an export folder whose judgments.csv and scores.csv rows `edit` changed in place."""
    shutil.copytree(src, dst)
    judgments, scores = _read(dst / "judgments.csv"), _read(dst / "scores.csv")
    edit(judgments, scores)
    _write(dst / "judgments.csv", judgments)
    _write(dst / "scores.csv", scores)
    _resign(dst, _EXPORTED[src])  # these tests are about the rows: the signature is tested on its own
    return dst


def _as_expert(judgments: Rows, scores: Rows, expert: str, n: int = 3, task: str | None = None) -> list[int]:
    """Turn the first valid judgment of `n` different comparisons into judgments of `expert`; returns their rows."""
    seen: set[str] = set()
    picked = []
    for i, r in enumerate(judgments):
        if (
            r["valid"] == "true"
            and r["comparison_id"] not in seen
            and len(picked) < n
            and r["task"] == (task or r["task"])
        ):
            seen.add(r["comparison_id"])
            picked.append(i)
            ids = r["judgment_id"]
            r.update(judge=expert, judge_kind="expert", judge_family="", attempts="1", seconds="61.5")
            for s in scores:
                if s["judgment_id"] == ids:
                    s["judge"] = expert
    return picked


def _refused(session: Path, folder: Path, *extra: str, message: str) -> str:
    before = _judgment_tables(session)
    out = CliRunner().invoke(cli, ["import", str(session), str(folder), *extra])
    assert out.exit_code == 2, out.output
    assert message in out.output, out.output
    assert "Traceback" not in out.output and "nothing was imported" in out.output
    assert _judgment_tables(session) == before
    return out.output


def _families(session: Path) -> dict[str, str]:
    study = load_session(session)
    return {m.name: m.family for m in study.session.models}


# -- the happy path ---------------------------------------------------------------------------


def test_an_export_carries_its_session_and_imports_into_a_copy_with_a_summary_per_judge(
    session: Path, tmp_path: Path
) -> None:
    a = _export(session, tmp_path / "a")
    manifest = json.loads((a / "session.json").read_text(encoding="utf-8"))
    assert manifest["format"] == "centaur-export" and manifest["session"] == "small"
    with Store(load_session(session).database) as store:
        session_id = store.meta()["session_id"]
    assert len(manifest["fingerprint"]) == 32 and session_id not in json.dumps(manifest)
    assert manifest["rows"]["judgments.csv"] == len(_read(a / "judgments.csv"))
    experts = _edited(a, tmp_path / "experts", lambda j, s: _as_expert(j, s, "ann"))
    copy = _copy(session, tmp_path / "copy")
    out = CliRunner().invoke(cli, ["import", str(copy), str(experts)])
    assert out.exit_code == 0, out.output
    assert "  ann (expert): 3 stored, 0 already stored" in out.output
    assert "  JudgeWest (llm): " in out.output and "0 refused" in out.output
    again = CliRunner().invoke(cli, ["import", str(copy), str(experts)])
    assert again.exit_code == 0 and "  ann (expert): 0 stored, 3 already stored" in again.output


# -- foreign data: refused whole, exit 2, judgment tables unchanged byte for byte ---------------


def test_expert_judgments_exported_from_another_session_with_the_same_candidates_are_refused(
    session: Path, tmp_path: Path
) -> None:
    other = _run(tmp_path / "other")  # same file, same name: same comparison ids, another database
    with Store(load_session(other).database) as store, Store(load_session(session).database) as ours:
        assert set(store.comparisons()) == set(ours.comparisons())
    b = _export(other, tmp_path / "b")
    experts = _edited(b, tmp_path / "b-experts", lambda j, s: _as_expert(j, s, "ann"))
    assert CliRunner().invoke(cli, ["import", str(other), str(experts)]).exit_code == 0  # its own session's
    b2 = _export(other, tmp_path / "b2")
    out = _refused(
        session,
        b2,
        message="session.json, field fingerprint: these files were exported from another "
        "database of a session named 'small'",
    )
    assert "ann" not in out.split("fingerprint")[0]
    # The CSVs alone would fit this session: only the binding tells them apart.
    stripped = tmp_path / "stripped"
    shutil.copytree(b2, stripped)
    (stripped / "session.json").unlink()
    _refused(session, stripped, message="session.json: missing")
    copy = _copy(session, tmp_path / "copy")
    assert CliRunner().invoke(cli, ["import", str(copy), str(stripped), "--external"]).exit_code == 0


def test_a_session_of_another_name_and_a_broken_manifest_are_refused(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")
    renamed = tmp_path / "renamed"
    shutil.copytree(a, renamed)
    data = json.loads((renamed / "session.json").read_text(encoding="utf-8"))
    (renamed / "session.json").write_text(json.dumps({**data, "session": "paper", "fingerprint": "0" * 32}))
    _refused(session, renamed, message="exported from session 'paper'")
    copy = _copy(session, tmp_path / "copy")
    for name, text, message in (
        ("broken", "{not json", "session.json: not a JSON manifest (not JSON"),
        ("list", "[1, 2]", "session.json: not a JSON object"),
        (
            "version",
            json.dumps({**data, "version": 9}),
            "session.json, field format/version: 'centaur-export' version 9",
        ),
        ("old", json.dumps({**data, "version": 1}), "an export from before exports were signed"),
        ("twice", '{"format": "centaur-export", "format": "x"}', "key 'format' appears twice"),
        ("deep", "[" * 100 + "]" * 100, "nested deeper than 4 levels"),
    ):
        folder = tmp_path / name
        shutil.copytree(a, folder)
        (folder / "session.json").write_text(text, encoding="utf-8")
        _refused(session, folder, message=message)
        # Under --external the same files are foreign data by declaration: checked row by row, labelled.
        out = CliRunner().invoke(cli, ["import", str(copy), str(folder), "--external"])
        assert out.exit_code == 0, out.output
        assert "external data: not signed by this session" in out.output and "Traceback" not in out.output


def test_a_judge_not_in_the_session_is_refused(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")

    def edit(j: Rows, _s: Rows) -> None:
        j[0].update(judge="JudgeEast", judge_family="East")

    out = _refused(
        session,
        _edited(a, tmp_path / "bad", edit),
        message="judgments.csv row 1 (line 2), column judge: 'JudgeEast' is not an LLM judge of this session",
    )
    assert "Refused rows of judgments.csv per judge: JudgeEast (llm) 1" in out


def test_an_unknown_expert_is_refused_unless_added_explicitly(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")
    rows: list[int] = []
    folder = _edited(a, tmp_path / "zed", lambda j, s: rows.extend(_as_expert(j, s, "zed")))
    copy = _copy(session, tmp_path / "copy")
    out = _refused(
        copy,
        folder,
        message=f"judgments.csv row {rows[0] + 1} (line {rows[0] + 2}), column judge: 'zed' "
        "is not an expert of this session (registered: ann, bob)",
    )
    assert "--add-experts" in out and "zed (expert) 3" in out
    _refused(copy, folder, "--add-experts", "JudgeNorth,zed", message="--add-experts: 'JudgeNorth' is the name of")
    _refused(copy, folder, "--add-experts", "Zed!", message="--add-experts: 'Zed!' is not an expert id")
    ok = CliRunner().invoke(cli, ["import", str(copy), str(folder), "--add-experts", "zed"])
    assert ok.exit_code == 0, ok.output
    assert "zed (expert): 3 stored" in ok.output and "Registered expert(s): zed" in ok.output
    with Store(load_session(copy).database) as store:
        assert "zed" in {e.id for e in ExpertStore(store).experts(load_session(copy))}


def test_an_expert_outside_their_tasks_or_named_like_a_judge_is_refused(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")
    _refused(
        session,
        _edited(a, tmp_path / "bob", lambda j, s: _as_expert(j, s, "bob", n=1, task="counseling")),
        message="column judge: expert 'bob' judges only tutoring, not 'counseling'",
    )
    _refused(
        session,
        _edited(a, tmp_path / "named", lambda j, s: _as_expert(j, s, "JudgeWest", n=1)),
        message="column judge: expert 'JudgeWest' is the name of LLM judge 'JudgeWest'",
    )


def test_an_llm_judge_of_an_excluded_family_is_refused(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")
    families = _families(session)
    where: list[int] = []

    def edit(j: Rows, _s: Rows) -> None:
        # JudgeWest judged a comparison holding a North output; JudgeNorth may not have.
        i = next(
            i
            for i, r in enumerate(j)
            if r["judge"] == "JudgeWest"
            and r["mode"] == "automation"
            and "North" in (families[r["option1"]], families[r["option2"]])
        )
        j[i].update(judge="JudgeNorth", judge_family="North")
        where.append(i)

    folder = _edited(a, tmp_path / "family", edit)
    _refused(
        session,
        folder,
        message=f"row {where[0] + 1} (line {where[0] + 2}), column judge: LLM judge "
        "'JudgeNorth' (family North) may not judge",
    )
    wrong_family = _edited(a, tmp_path / "wrong", lambda j, _s: j[0].update(judge_family="Elsewhere"))
    _refused(session, wrong_family, message="column judge_family: 'Elsewhere' but LLM judge")


def test_a_tie_where_ties_are_not_allowed_is_refused(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")
    copy = _copy(session, tmp_path / "copy", judging="allow_ties = false")
    where: list[int] = []

    def edit(j: Rows, _s: Rows) -> None:
        i = next(i for i, r in enumerate(j) if r["valid"] == "true")
        j[i]["winner"] = "tie"
        where.append(i)

    _refused(
        copy,
        _edited(a, tmp_path / "tie", edit),
        message=f"row {where[0] + 1} (line {where[0] + 2}), column winner: 'tie', but this session does not allow ties",
    )


def test_one_foreign_row_among_good_ones_writes_nothing(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")
    copy = _copy(session, tmp_path / "copy")
    before = _judgment_tables(copy)

    def edit(j: Rows, s: Rows) -> None:
        _as_expert(j, s, "zed", n=1)

    _refused(copy, _edited(a, tmp_path / "mixed", edit), message="'zed' is not an expert")
    assert _judgment_tables(copy) == before


# -- distinct names ---------------------------------------------------------------------------


def test_the_loader_refuses_an_expert_id_equal_to_a_judge_model_or_worker_name(tmp_path: Path) -> None:
    base = small_session_toml(runs=1, tasks=("counseling",))
    cases = {
        "judge": ('\n[[judges]]\nname = "rex"\nmodel = "simulated/rex"\nfamily = "West2"\n', "LLM judge 'rex'"),
        "model": ('\n[[models]]\nname = "rex"\nmodel = "simulated/rex"\nfamily = "West2"\n', "model 'rex'"),
        "plain": ("", "'plain'"),
    }
    for case, (addition, said) in cases.items():
        expert = "plain" if case == "plain" else "rex"
        path = tmp_path / f"{case}.toml"
        path.write_text(base + addition + f'\n[[experts]]\nid = "{expert}"\nname = "R"\n', encoding="utf-8")
        with pytest.raises(ConfigError) as err:
            load_session(path)
        assert err.value.file == str(path) and err.value.field == f"experts[0 '{expert}'].id", case
        assert said in err.value.problem, case


def test_an_expert_added_in_the_app_may_not_take_a_judge_name(session: Path, tmp_path: Path) -> None:
    path = tmp_path / "slug.toml"
    path.write_text(
        small_session_toml(runs=1, tasks=("counseling",))
        + '\n[[judges]]\nname = "rex"\nmodel = "simulated/rex"\nfamily = "West2"\n',
        encoding="utf-8",
    )
    study = load_session(path)
    with Store(tmp_path / "slug.db") as store, pytest.raises(CentaurError, match="is the name of LLM judge 'rex'"):
        ExpertStore(store).add_expert(study, ExpertSpec(id="rex", name="Rex"))


def test_two_judges_of_different_kinds_with_the_same_name_never_dedupe_each_other(
    session: Path, tmp_path: Path
) -> None:
    study = load_session(session)
    a = _export(session, tmp_path / "a")
    with Store(study.database) as store:
        comps = store.comparisons()
    rubrics = {t: study.rubric(t) for t in study.tasks}
    llm = next(r for r in read_export(a, comps, rubrics) if r.valid)
    expert = type(llm)(**{**llm.__dict__, "judge_kind": "expert", "judge_family": None, "id": None})
    for first, second in ((llm, expert), (expert, llm)):
        path = tmp_path / f"{first.judge_kind}-first.db"
        shutil.copy(study.database, path)
        with sqlite3.connect(path) as conn:
            conn.execute("DELETE FROM scores")
            conn.execute("DELETE FROM judgments")
        with Store(path) as store:
            assert store.save_judgment(type(first)(**{**first.__dict__, "id": None})) is not None
            assert store.save_judgment(first) is None  # the same judge again: already stored
            before = store.read("SELECT * FROM judgments"), store.read("SELECT * FROM scores")
            with pytest.raises(JudgeNameClashError, match=f"{second.judge_kind} judge {second.judge!r} has the name"):
                store.save_judgment(second)
            with pytest.raises(ImportConflictError, match=f"has the name of an {first.judge_kind} judge"):
                store_judgments(store, [second])
            assert (store.read("SELECT * FROM judgments"), store.read("SELECT * FROM scores")) == before


# -- the signature (issue 23, item 8) ----------------------------------------------------------


def test_a_session_json_copied_beside_another_sessions_files_is_refused(session: Path, tmp_path: Path) -> None:
    """The attack of issue 23: another database's judgments with this session's own session.json beside them."""
    other = _run(tmp_path / "other")  # same session file: same comparison ids, another database and secret
    ours = _export(session, tmp_path / "ours")
    theirs = _export(other, tmp_path / "theirs")
    forged = _edited(theirs, tmp_path / "forged", lambda j, s: _as_expert(j, s, "ann"))
    shutil.copy(ours / "session.json", forged / "session.json")  # fingerprint and signature: this session's
    copy = _copy(session, tmp_path / "copy")
    out = _refused(copy, forged, message="judgments.csv: changed after the export (its SHA-256 is not the signed one)")
    assert "--external" in out and "centaur export" in out
    # A manifest made up to match the files (right fingerprint, files' SHA-256) without the secret.
    data = json.loads((ours / "session.json").read_text(encoding="utf-8"))
    data["files"] = file_digests(forged, ("judgments.csv", "scores.csv", "outputs.csv"))
    for signature in ("0" * 64, None):
        made_up = {**data, "signature": signature} if signature else {k: v for k, v in data.items() if k != "signature"}
        (forged / "session.json").write_text(json.dumps(made_up), encoding="utf-8")
        _refused(
            copy,
            forged,
            message="session.json, field signature: " + ("does not verify" if signature else "missing"),
        )
    accepted = CliRunner().invoke(cli, ["import", str(copy), str(forged), "--external"])
    assert accepted.exit_code == 0, accepted.output
    assert "ann (expert): 3 stored" in accepted.output
    assert "external data: not signed by this session (" in accepted.output
    assert "field signature: missing" in accepted.output


def test_a_tampered_or_removed_csv_is_refused_and_a_signed_export_round_trips(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")
    data = json.loads((a / "session.json").read_text(encoding="utf-8"))
    assert set(data["files"]) == {"judgments.csv", "scores.csv", "outputs.csv"} and len(data["signature"]) == 64
    with Store(load_session(session).database) as store:
        secret = store.read_value("SELECT secret FROM session_secret WHERE id = 1")
    assert secret and secret not in (a / "session.json").read_text(encoding="utf-8")
    copy = _copy(session, tmp_path / "copy")
    tampered = tmp_path / "tampered"
    shutil.copytree(a, tampered)
    rows = _read(tampered / "scores.csv")
    rows[0]["score"] = "1" if rows[0]["score"] != "1" else "2"
    _write(tampered / "scores.csv", rows)
    _refused(copy, tampered, message="scores.csv: changed after the export")
    removed = tmp_path / "removed"
    shutil.copytree(a, removed)
    (removed / "scores.csv").unlink()  # every judgment would turn winner-only
    _refused(copy, removed, message="scores.csv: is missing (it was exported and signed)")
    # The session.json's own fields are signed too: another session name with the rest kept.
    renamed = tmp_path / "renamed-field"
    shutil.copytree(a, renamed)
    (renamed / "session.json").write_text(json.dumps({**data, "rows": {}, "session": "small2"}), encoding="utf-8")
    _refused(copy, renamed, message="session.json, field signature: does not verify")
    out = CliRunner().invoke(cli, ["import", str(copy), str(a)])
    assert out.exit_code == 0, out.output
    assert "external data" not in out.output and "0 refused" in out.output
    again = _export(copy, tmp_path / "again")
    for name in ("judgments.csv", "scores.csv", "outputs.csv"):
        assert (again / name).read_bytes() == (a / name).read_bytes(), name
    assert json.loads((again / "session.json").read_text(encoding="utf-8"))["signature"] == data["signature"]
    signed_external = CliRunner().invoke(cli, ["import", str(copy), str(a), "--external"])
    assert signed_external.exit_code == 0 and "external data" not in signed_external.output


def test_a_session_json_that_is_a_fifo_is_refused_at_once(session: Path, tmp_path: Path) -> None:
    a = _export(session, tmp_path / "a")
    (a / "session.json").unlink()
    os.mkfifo(a / "session.json")
    _refused(session, a, message="session.json: a FIFO (named pipe), not a regular file")
