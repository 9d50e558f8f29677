"""Tests of `centaur bundle`: offline in headless Chromium with the network blocked, byte-identical, blind pages."""

from __future__ import annotations

import filecmp
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.services.bundle import FOR_ANYONE, PAGES
from tests.support.experts import CANDIDATES, FAMILIES, judged_session
from tests.support.judging import assign
from tests.support.seat import judge_comparisons

BROWSERS = ("/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromium-headless-shell")
PLANTED = "zebra-crossing argument about the ledger"


def _browser_path() -> str:
    found = next((b for b in BROWSERS if os.access(b, os.X_OK)), None) or shutil.which("chromium-headless-shell")
    if found is None:
        pytest.skip("chromium-headless-shell is not installed: the bundle's browser test cannot run")
    return found


def _bundle(session: Path, out: Path) -> None:
    result = CliRunner().invoke(cli, ["bundle", str(session), str(out)])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("bundle")
    session = judged_session(tmp)
    guidelines = session.parent / "guidelines.md"
    # A model's name planted in the guidelines: the expert-facing page must show it masked.
    guidelines.write_text(f"Judge carefully. Never mind {CANDIDATES[0]} or {FAMILIES[1]}.\n", encoding="utf-8")
    text = session.read_text(encoding="utf-8")
    session.write_text(text.replace("[judging]\n", '[judging]\nexpert_guidelines = "guidelines.md"\n', 1))
    assign(session, "ann", 4)
    assert judge_comparisons(session, "ann") == 4
    # The planted phrase goes in through the store's own write path: a judgment's rationale.
    from centaur_tui.store import Store

    with Store(load_session(session).database) as store:
        jid = store.read_value("SELECT min(id) FROM judgments WHERE judge_kind = 'expert'")
        row = store.read("SELECT * FROM judgments WHERE id = ?", (jid,))[0]
    _revise(session, row)
    first, second = tmp / "first", tmp / "second"
    _bundle(session, first)
    _bundle(session, second)
    return session, first, second


def _revise(session: Path, row: dict) -> None:
    from centaur_tui.domain.records import JudgmentRecord, ScoreRecord
    from centaur_tui.store import Store

    with Store(load_session(session).database) as store:
        scores = store.read(
            "SELECT candidate, dimension, dimension_kind, score FROM scores WHERE judgment_id = ?", (row["id"],)
        )
        keep = ("comparison_id", "judge", "judge_kind", "judge_family", "presentation", "option1", "option2")
        store.save_judgment(
            JudgmentRecord(
                **{k: row[k] for k in keep},
                winner=row["winner"],
                option1_mean=row["option1_mean"],
                option2_mean=row["option2_mean"],
                valid=True,
                invalid_reason=None,
                rationale=f"A revision: {PLANTED}.",
                call_key=None,
                attempts=1,
                scores=tuple(ScoreRecord(**s) for s in scores),
                revision=1,
            )
        )


def test_a_second_build_is_byte_identical(built: tuple[Path, Path, Path]) -> None:
    _, first, second = built
    names = sorted(p.relative_to(first).as_posix() for p in first.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(second).as_posix() for p in second.rglob("*") if p.is_file())
    _, mismatch, errors = filecmp.cmpfiles(first, second, names, shallow=False)
    assert mismatch == [] and errors == []


def test_the_manifest_hashes_every_file_and_carries_the_verified_head(built: tuple[Path, Path, Path]) -> None:
    session, first, _ = built
    manifest = json.loads((first / "manifest.json").read_text(encoding="utf-8"))
    files = sorted(p.relative_to(first).as_posix() for p in first.rglob("*") if p.is_file())
    assert sorted(manifest["files"]) == [f for f in files if f != "manifest.json"]
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((first / name).read_bytes()).hexdigest() == digest, name
    verify = CliRunner().invoke(cli, ["verify", str(session), "--json"])
    head = json.loads(verify.stdout)["head"]
    assert manifest["chain"]["head"] == head and manifest["chain"]["clean"]
    assert head in (first / "index.html").read_text(encoding="utf-8")
    assert {"csv/judgments.csv", "csv/scores.csv", "csv/outputs.csv", "csv/session.json", "session.db"} <= set(files)
    assert "exported_at" not in (first / "csv" / "session.json").read_text(encoding="utf-8")


def test_pages_for_anyone_name_no_model(built: tuple[Path, Path, Path]) -> None:
    session, first, _ = built
    study = load_session(session)
    names = set(CANDIDATES) | set(FAMILIES) | {j.name for j in study.session.judges}
    names |= {m.model for m in study.session.models} | {j.model for j in study.session.judges}
    anyone = [p for p, (audience, _) in PAGES.items() if audience == FOR_ANYONE]
    assert anyone == ["index.html", "guidelines.html"]
    for page in anyone:
        text = (first / page).read_text(encoding="utf-8").casefold()
        assert [n for n in names if n.casefold() in text] == [], page
    assert "judge carefully" in (first / "guidelines.html").read_text(encoding="utf-8").casefold()
    # The reviewers' pages do name them (said on the front page).
    assert CANDIDATES[0] in (first / "data.js").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=_browser_path(), args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        yield chromium
        chromium.close()


@pytest.mark.slow
@pytest.mark.parametrize("page_name", ["index.html", "guidelines.html", "report.html", "judgments.html"])
def test_every_page_renders_offline_with_no_request_beyond_file(built, browser, page_name: str) -> None:
    _, first, _ = built
    context = browser.new_context()
    page = context.new_page()
    outside: list[str] = []
    loaded: list[str] = []
    errors: list[str] = []

    def route(r) -> None:
        url = r.request.url
        if url.startswith("file://"):
            loaded.append(url)
            r.continue_()
        else:
            outside.append(url)
            r.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((first / page_name).as_uri())
    page.wait_for_load_state("load")
    assert outside == [] and errors == []
    assert page.locator("h1").first.inner_text()
    if page_name == "report.html":
        images = page.locator("img")
        assert images.count() >= 5
        assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")
    context.close()


@pytest.mark.slow
def test_the_judgment_browser_finds_a_planted_phrase_offline(built, browser) -> None:
    _, first, _ = built
    context = browser.new_context()
    page = context.new_page()
    outside: list[str] = []
    page.route(
        "**/*",
        lambda r: r.continue_() if r.request.url.startswith("file://") else (outside.append(r.request.url), r.abort()),
    )
    page.goto((first / "judgments.html").as_uri())
    total = page.locator("details.comparison").count()
    assert total == 32
    page.fill("#q", "ZEBRA-crossing argument")
    page.wait_for_function("document.querySelectorAll('details.comparison').length === 1")
    assert page.locator(".rationale", has_text=PLANTED).count() == 1
    assert page.locator("#count").inner_text() == "1 of 32 comparison(s)"
    page.fill("#q", "no rationale holds this phrase qq")
    page.wait_for_function("document.querySelectorAll('details.comparison').length === 0")
    assert outside == []
    context.close()


def test_a_folder_that_is_not_empty_is_refused_with_nothing_written(built, tmp_path: Path) -> None:
    session, _, _ = built
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    result = CliRunner().invoke(cli, ["bundle", str(session), str(out)])
    assert result.exit_code == 2 and "not an empty folder" in result.stderr and "Traceback" not in result.output
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["taken"]


def test_a_session_never_run_is_refused(tmp_path: Path, built) -> None:
    session, _, _ = built
    fresh = tmp_path / "s"
    fresh.mkdir()
    target = fresh / session.name
    shutil.copy(session, target)
    for extra in session.parent.iterdir():
        if extra.suffix in (".md",) or extra.is_dir():
            if extra.is_dir():
                shutil.copytree(extra, fresh / extra.name)
            else:
                shutil.copy(extra, fresh / extra.name)
    result = CliRunner().invoke(cli, ["bundle", str(target), str(tmp_path / "out")])
    assert result.exit_code == 2 and "run the session first" in result.stderr
    assert not (tmp_path / "out").exists()


def test_the_bundled_database_holds_no_secret_and_its_export_signs_nothing(
    built: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """A reviewer's copy must not sign exports or packets as the session (issue 23)."""
    import sqlite3

    session = built[0]
    exported = CliRunner().invoke(cli, ["export", str(session), "--out", str(tmp_path / "export")])
    assert exported.exit_code == 0, exported.output  # the first export writes the session secret
    with sqlite3.connect(load_session(session).database) as conn:
        (secret,) = conn.execute("SELECT secret FROM session_secret").fetchone()
    _bundle(session, tmp_path / "bundle")
    db = tmp_path / "bundle" / "session.db"
    assert secret.encode() not in db.read_bytes()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM session_secret").fetchone() == (0,)
    manifest = json.loads((tmp_path / "bundle" / "csv" / "session.json").read_text(encoding="utf-8"))
    assert "signature" not in manifest and set(manifest["files"]) == {"judgments.csv", "scores.csv", "outputs.csv"}
    refused = CliRunner().invoke(cli, ["import", str(session), str(tmp_path / "bundle" / "csv")])
    assert refused.exit_code == 2 and "field signature: missing" in refused.output, refused.output
