"""The HTML judging packet: `centaur packet export --html`, judged offline in a browser, its results imported.

The unit tests build the results file as the page's script writes it; the browser test opens
the file from disk with every request counted, judges, clicks "Save results" and imports.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from tests.support.experts import CANDIDATES, FAMILIES, HOSTILE_SPELLINGS, HOSTILE_TEXT, judged_session
from tests.support.judging import RATIONALE, assign

DATA = re.compile(r'<script type="application/json" id="packet-data">(.*?)</script>', re.S)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = judged_session(tmp_path)
    assign(path, "ann", 2)
    assign(path, "bob", 1)
    return path


def _export(session: Path, expert: str, out: Path) -> dict:
    result = CliRunner().invoke(
        cli, ["packet", "export", str(session), "--expert", expert, "--out", str(out), "--html"]
    )
    assert result.exit_code == 0, result.output
    match = DATA.search(out.read_text(encoding="utf-8"))
    assert match
    return json.loads(match.group(1))


def _complete(dimensions: list[str], winner: str = "option_1") -> dict:
    return {
        "scores": {d: [8, 3] for d in dimensions},
        "winner": winner,
        "rationale": RATIONALE,
        "seconds": 40.0,
        "active_seconds": 30.0,
        "confirmed_lower": False,
    }


def _results(data: dict, **changes) -> dict:
    results = {
        "format": "centaur-html-packet-results",
        "version": 1,
        "packet_id": data["packetId"],
        "packet": data["packet"],
        "results": {p["token"]: _complete(p["dimensions"]) for p in data["places"][:1]},
        "drafts": {p["token"]: {"scores": {}, "winner": None, "rationale": "later"} for p in data["places"][1:]},
        "states": {p["token"]: "flagged" for p in data["places"][1:]},
    }
    results.update(changes)
    return results


def _judgments(session: Path, expert: str) -> int:
    conn = sqlite3.connect(load_session(session).database)
    try:
        return conn.execute(
            "SELECT count(*) FROM judgments WHERE judge = ? AND judge_kind = 'expert'", (expert,)
        ).fetchone()[0]
    finally:
        conn.close()


def test_the_html_packet_is_one_offline_file_masked_and_hash_locked(session: Path, tmp_path: Path) -> None:
    conn = sqlite3.connect(load_session(session).database)
    conn.execute("UPDATE outputs SET text = text || ?", (HOSTILE_TEXT + "\n<script>alert(1)</script>",))
    conn.commit()
    conn.close()
    out = tmp_path / "ann.html"
    data = _export(session, "ann", out)
    html = out.read_text(encoding="utf-8")
    assert len(data["places"]) == 2
    for name in (*CANDIDATES, *FAMILIES, "simulated/", *HOSTILE_SPELLINGS):
        assert name not in html, name
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)  # type: ignore[union-attr]
    assert "connect-src 'none'" in csp and "img-src 'none'" in csp and "unsafe" not in csp
    blocks = re.findall(r"<script>(.*?)</script>", html, re.S) + re.findall(r"<style>(.*?)</style>", html, re.S)
    assert len(blocks) == 2
    for block in blocks:
        digest = base64.b64encode(hashlib.sha256(block.encode("utf-8")).digest()).decode()
        assert f"'sha256-{digest}'" in csp
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", html)  # nothing loaded from anywhere
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    again = CliRunner().invoke(cli, ["packet", "export", str(session), "--expert", "ann", "--out", str(out), "--html"])
    assert again.exit_code == 2 and "exists already" in again.output


def test_results_import_through_the_packet_checks_and_twice_adds_nothing(session: Path, tmp_path: Path) -> None:
    data = _export(session, "ann", tmp_path / "ann.html")
    file = tmp_path / "results.json"
    file.write_text(json.dumps(_results(data)), encoding="utf-8")
    runner = CliRunner()
    first = runner.invoke(cli, ["packet", "import", str(session), str(file), "--expert", "ann"])
    assert first.exit_code == 0, first.output
    assert "1 new judgment(s)" in first.output and "1 stored as ann's drafts" in first.output
    assert _judgments(session, "ann") == 1
    again = runner.invoke(cli, ["packet", "import", str(session), str(file)])
    assert again.exit_code == 0 and "0 new judgment(s)" in again.output and "1 already stored" in again.output
    assert _judgments(session, "ann") == 1


def _tampered_packet(data: dict) -> str:
    raw = base64.b64decode(data["packet"])
    path = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path("/tmp")
    target = path / f"centaur-tamper-{hashlib.sha256(raw).hexdigest()[:12]}"
    target.write_bytes(raw)
    try:
        conn = sqlite3.connect(target)
        conn.execute("UPDATE items SET option_1 = option_1 || ' (edited)'")
        conn.commit()
        conn.close()
        return base64.b64encode(target.read_bytes()).decode()
    finally:
        target.unlink()


BAD = [
    ("truncated", None, "not well-formed JSON"),
    ("version", {"version": 2}, "field version"),
    ("format", {"format": "something-else"}, "field format"),
    ("no packet", {"packet": None}, "field packet"),
    ("packet not base64", {"packet": "%%%"}, "field packet"),
    ("packet not a packet", {"packet": base64.b64encode(b"SQLite format 3\x00 but not").decode()}, "packet"),
    ("results not an object", {"results": []}, "field results"),
]


@pytest.mark.parametrize(("label", "change", "named"), BAD, ids=[b[0] for b in BAD])
def test_a_broken_results_file_is_refused_whole(session: Path, tmp_path: Path, label: str, change, named: str) -> None:
    data = _export(session, "ann", tmp_path / "ann.html")
    file = tmp_path / "results.json"
    text = json.dumps(_results(data, **(change or {})))
    file.write_text(text[: len(text) // 2] if change is None else text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["packet", "import", str(session), str(file)])
    assert result.exit_code == 2, result.output
    assert named in result.output and "Traceback" not in result.output
    assert _judgments(session, "ann") == 0


def test_tampered_foreign_or_invalid_results_are_refused_naming_item_and_field(session: Path, tmp_path: Path) -> None:
    data = _export(session, "ann", tmp_path / "ann.html")
    token, dims = data["places"][0]["token"], data["places"][0]["dimensions"]
    runner = CliRunner()
    cases = [
        (_results(data, packet=_tampered_packet(data)), [], "changed"),
        (_results(data), ["--expert", "bob"], "bob"),
        (
            _results(data, results={token: {**_complete(dims), "scores": {dims[0]: [11, 3]}}}),
            [],
            f"results[{token[:24]}]",
        ),
        (_results(data, results={token: {**_complete(dims), "rationale": "short"}}), [], "rationale"),
        (_results(data, results={"not-a-token": _complete(dims)}), [], "no such place"),
        (_results(data, states={token: "done"}), [], "states["),
    ]
    for body, extra, named in cases:
        file = tmp_path / "bad.json"
        file.write_text(json.dumps(body), encoding="utf-8")
        result = runner.invoke(cli, ["packet", "import", str(session), str(file), *extra])
        assert result.exit_code == 2, (named, result.output)
        assert named in result.output and "Traceback" not in result.output, (named, result.output)
    assert _judgments(session, "ann") == 0
    other = judged_session(tmp_path / "other")
    other.write_text(other.read_text(encoding="utf-8").replace('name = "small"', 'name = "other"'), encoding="utf-8")
    file = tmp_path / "results.json"
    file.write_text(json.dumps(_results(data)), encoding="utf-8")
    foreign = runner.invoke(cli, ["packet", "import", str(other), str(file)])
    assert foreign.exit_code == 2 and "Traceback" not in foreign.output, foreign.output


@pytest.mark.slow
def test_the_html_packet_judged_offline_from_disk_then_imported(session: Path, tmp_path: Path) -> None:
    from tests.test_serve_browser import AXE, _browser

    executable = _browser()
    out = tmp_path / "ann.html"
    data = _export(session, "ann", out)
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-gpu"])
        context = chromium.new_context(accept_downloads=True, viewport={"width": 1400, "height": 900})
        context.on("request", lambda request: requests.append(request.url))
        context.route(re.compile(r"^(?!file://).*"), lambda route: route.abort())
        page = context.new_page()
        page.goto(out.as_uri())
        page.wait_for_selector("body[data-ready='1']")
        sliders = page.locator("section.place:not([hidden]) input.score")
        for i in range(sliders.count()):
            page.keyboard.press("9" if i % 2 == 0 else "2")
        page.keyboard.press("1")
        page.keyboard.type(RATIONALE)
        page.keyboard.press("Control+Enter")
        page.wait_for_selector("#progress:has-text('1 of 2 judged')")
        page.keyboard.press("4")  # a draft on the second comparison
        page.close()
        page = context.new_page()  # reopened: the progress is still there
        page.goto(out.as_uri())
        page.wait_for_selector("#progress:has-text('1 of 2 judged')")
        assert page.locator("section.place:not([hidden]) output.value").first.inner_text() == "4"
        with page.expect_download() as download:
            page.locator("#save-results").click()
        saved = tmp_path / "results.json"
        download.value.save_as(saved)
        axe = context.new_page()
        axe_context = chromium.new_context(bypass_csp=True)
        axe = axe_context.new_page()
        axe.goto(out.as_uri())
        axe.wait_for_selector("body[data-ready='1']")
        axe.add_script_tag(path=str(AXE))
        result = axe.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
        serious = [(v["id"], v["impact"]) for v in result["violations"] if v["impact"] in ("serious", "critical")]
        assert serious == []
        axe_context.close()
        context.close()
        chromium.close()
    assert all(url.startswith("file://") for url in requests), [u for u in requests if not u.startswith("file://")]
    results = json.loads(saved.read_text(encoding="utf-8"))
    assert results["packet"] == data["packet"] and len(results["results"]) == 1
    imported = CliRunner().invoke(cli, ["packet", "import", str(session), str(saved), "--expert", "ann"])
    assert imported.exit_code == 0, imported.output
    assert "1 new judgment(s)" in imported.output and "1 stored as ann's drafts" in imported.output
    assert _judgments(session, "ann") == 1


HOSTILE_RESULTS = [
    ("duplicated key", lambda text: text.replace('{"format"', '{"version": 1, "format"', 1), "appears twice"),
    ("nested deep", lambda text: text[:-1] + ', "x": ' + "[" * 10_000 + "]" * 10_000 + "}", "deep"),
    ("huge number", lambda text: text[:-1] + ', "x": ' + "9" * 5_000 + "}", "number"),
    ("lone surrogate", lambda text: text[:-1] + ', "x": "\\ud800"}', "surrogate"),
]


@pytest.mark.parametrize(("label", "change", "named"), HOSTILE_RESULTS, ids=[h[0] for h in HOSTILE_RESULTS])
def test_a_hostile_results_file_is_refused_by_the_one_reader(
    session: Path, tmp_path: Path, label: str, change, named: str
) -> None:
    data = _export(session, "ann", tmp_path / "ann.html")
    file = tmp_path / "results.json"
    file.write_text(change(json.dumps(_results(data))), encoding="utf-8")
    result = CliRunner().invoke(cli, ["packet", "import", str(session), str(file)])
    assert result.exit_code == 2, result.output
    assert named in result.output.lower() and "Traceback" not in result.output, result.output
    assert _judgments(session, "ann") == 0
