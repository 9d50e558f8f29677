"""The report process behind the results screen: the CLI's document, kept while the data holds, survives a kill."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest

from centaur_tui.catalog import load_session
from centaur_tui.domain.errors import CentaurError
from centaur_tui.report import ReportDocument
from centaur_tui.services import report as report_service
from centaur_tui.services import report_disk_cache, report_process
from centaur_tui.services.report_cache import ReportCache
from centaur_tui.services.report_disk_cache import DiskCache
from centaur_tui.services.report_process import ReportProcess, warm_up
from centaur_tui.store import Store
from tests.support.experts import judged_session
from tests.support.reports import cli_doc


def same(a: ReportDocument | dict, b: ReportDocument | dict) -> bool:
    def plain(x: ReportDocument | dict) -> dict:
        return x.to_dict() if isinstance(x, ReportDocument) else x

    return json.dumps(plain(a), sort_keys=True) == json.dumps(plain(b), sort_keys=True)


def invalidate_one(database: Path) -> None:
    with Store(database) as store, store.write() as c:
        c.execute("UPDATE judgments SET valid = 0, invalid_reason = 'x' WHERE id = (SELECT min(id) FROM judgments)")


def count_computations(monkeypatch) -> list[int]:
    """A list that grows by one each time a report document is computed (not read from a cache)."""
    calls: list[int] = []
    real = report_service.session_report

    def counting(study, store=None, **options):
        if store is not None:  # the cache's call (cli_doc opens its own store)
            calls.append(1)
        return real(study, store, **options)

    monkeypatch.setattr(report_service, "session_report", counting)
    return calls


def test_the_cache_computes_only_when_what_the_report_reads_changed(tmp_path: Path, monkeypatch) -> None:
    path = judged_session(tmp_path)
    study = load_session(path)
    calls = count_computations(monkeypatch)
    cache = ReportCache()
    try:
        first = cache.doc(study)
        assert same(first, cli_doc(path))
        assert cache.doc(study) is first and len(calls) == 1  # unchanged: the kept document
        invalidate_one(study.database)  # a judgment became invalid: sum(valid) changed
        second = cache.doc(study)
        assert len(calls) == 2 and same(second, cli_doc(path)) and not same(second, first)
        with Store(study.database) as store:
            store.set_meta({"note": "changed"})  # meta is part of the report (simulated label)
        cache.doc(study)
        assert len(calls) == 3
        other = dataclasses.replace(study, session=study.session.model_copy(update={"description": "other"}))
        cache.doc(other)  # another session definition over the same database
        assert len(calls) == 4
    finally:
        cache.close()


@pytest.mark.slow
def test_the_process_returns_the_cli_document_and_survives_being_killed(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    study = load_session(path)
    process = ReportProcess()
    try:
        process.prefetch(study)  # computed ahead; the request below gets it
        assert same(process.doc(study), cli_doc(path))
        assert process.alive
        process._process.kill()  # as the OOM killer or a user would
        process._process.wait(timeout=30)
        invalidate_one(study.database)
        assert same(process.doc(study), cli_doc(path))  # started again, computed on the new data
        missing = dataclasses.replace(study, database=tmp_path / "nowhere.db")
        with pytest.raises(CentaurError, match="does not exist yet"):
            process.doc(missing)
        assert process.alive  # a refused request does not stop the process
    finally:
        process.close()
    assert not process.alive


def test_a_bug_in_the_process_comes_back_with_its_traceback() -> None:
    process = ReportProcess()
    try:
        with pytest.raises(RuntimeError, match="the statistics process failed: AttributeError") as info:
            process.doc("not a study")  # type: ignore[arg-type]
        assert "Traceback" in str(info.value)
        assert process.alive
    finally:
        process.close()


def test_warm_up_runs_the_statistics_on_a_small_synthetic_design(tmp_path: Path, monkeypatch) -> None:
    from centaur_tui.stats import report

    built: list[dict] = []

    def build_report(*args, **kwargs):
        result = original(*args, **kwargs)
        built.append(result.doc)
        return result

    original = report.build_report
    monkeypatch.setattr(report, "build_report", build_report)
    study = load_session(judged_session(tmp_path))
    before = {p: p.stat().st_mtime_ns for p in study.database.parent.rglob("*")}
    warm_up(study)
    # One report, over the synthetic design: one run of the session's first two tasks, both modes.
    assert len(built) == 1
    doc = built[0]
    assert [m["mode"] for m in doc["modes"]] == ["automation", "augmentation"]
    assert all(sorted(m["tasks"]) == sorted(study.session.tasks[:2]) for m in doc["modes"]), doc["modes"][0]["tasks"]
    assert doc["counts"]["by_status"].get("ok", 0) > 0
    # No database needed, nothing written: the session's folder is as it was.
    assert {p: p.stat().st_mtime_ns for p in study.database.parent.rglob("*")} == before


_APP_CHILD = """
import asyncio, sys
from pathlib import Path
from centaur_tui.ui.app import create_app
from centaur_tui.ui.screens.audit import AuditScreen
from centaur_tui.ui.screens.results import ResultsScreen
from centaur_tui.ui.screens.session import SessionScreen

async def main():
    app = create_app(sessions_dir=Path(sys.argv[1]).parent, session=Path(sys.argv[1]))
    async with app.run_test(size=(120, 40)) as pilot:
        async def until(check):
            for _ in range(3000):
                if check():
                    return
                await asyncio.sleep(0.01)
            raise SystemExit("timed out")
        await until(lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None)
        await pilot.press("s")
        await until(lambda: isinstance(app.screen, ResultsScreen) and app.screen.results is not None
                    and not app.screen.computing)
        for _ in range(8):  # every tab built (8 tabs: back to the first)
            await pilot.press("right_square_bracket")
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, AuditScreen) and app.screen.audit is not None)
        print(" ".join(m for m in ("pandas", "scipy", "krippendorff", "numpy") if m in sys.modules) or "none")

asyncio.run(main())
"""


@pytest.mark.slow
def test_the_apps_process_never_imports_the_statistics(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = judged_session(tmp_path)
    out = subprocess.run([sys.executable, "-c", _APP_CHILD, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [
        "none"
    ]  # results, every tab and an audit trail shown; pandas only in the report process


def test_a_process_that_cannot_start_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(report_process.sys, "executable", str(tmp_path / "no-python"))
    process = ReportProcess()
    with pytest.raises(CentaurError, match="the statistics process could not start"):
        process.doc(load_session(judged_session(tmp_path)))
    assert not process.alive


def test_documents_on_disk_serve_a_later_program_until_the_data_or_the_code_changes(
    tmp_path: Path, monkeypatch
) -> None:
    path = judged_session(tmp_path)
    study = load_session(path)
    calls = count_computations(monkeypatch)
    folder = tmp_path / "cache"
    first = ReportCache(folder)
    try:
        doc = first.doc(study)
    finally:
        first.close()
    assert len(calls) == 1 and len(list(folder.glob("*.json"))) == 1
    later = ReportCache(folder)  # another program, same data: read from disk
    try:
        assert same(later.doc(study), doc) and len(calls) == 1
        assert same(later.doc(study), cli_doc(path))
        invalidate_one(study.database)
        assert same(later.doc(study), cli_doc(path)) and len(calls) == 2  # new data: computed
    finally:
        later.close()
    real_version = report_disk_cache.code_version
    monkeypatch.setattr(report_disk_cache, "code_version", lambda: "other code")
    other = ReportCache(folder)
    try:
        other.doc(study)
        assert len(calls) == 3  # a document computed by other code is not reused
    finally:
        other.close()
    for broken in folder.glob("*.json"):
        broken.write_text("{half", encoding="utf-8")  # a half-written file: computed again, not an error
    monkeypatch.setattr(report_disk_cache, "code_version", real_version)
    again = ReportCache(folder)
    try:
        assert same(again.doc(study), cli_doc(path)) and len(calls) == 4
    finally:
        again.close()


def test_the_disk_cache_keeps_the_newest_documents_only(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(report_disk_cache, "CACHE_FILES", 2)
    cache = DiskCache(tmp_path)
    for n in range(4):
        cache.save(["key", n], ReportDocument.model_construct())
        time.sleep(0.03)  # distinct modification times, whatever the file system's clock step
    names = {cache.file(["key", n]).name for n in (2, 3)}  # type: ignore[union-attr]
    assert {p.name for p in tmp_path.glob("*.json")} == names
    assert not list(tmp_path.glob("*.tmp"))
