"""`centaur serve` in a real headless browser (Debian's chromium-headless-shell, driven by Playwright).

One server per module, started as `centaur serve SESSION --port 0`. Every page is real HTML, so
the tests read the page as well as the session database. Each browser context routes every
request through a counter: a request to any host but the server's is aborted and counted, and
each test ends by asserting that none was made. axe-core (the npm package, vendored in
tests/data) checks home, judging, writing and guidelines pages. Skipped only when the browser is
not installed (`make install` installs it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.judging import assign
from tests.support.seat import with_judging
from tests.support.work import work_session

pytestmark = pytest.mark.slow

BROWSERS = ("/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromium-headless-shell")
AXE = Path(__file__).parent / "data" / "axe-core-4.14.1.min.js"
RATIONALE = "clearer steps and fewer gaps in option one"
SHOTS = Path(os.environ.get("CENTAUR_SHOTS", "")) if os.environ.get("CENTAUR_SHOTS") else None
"""Set CENTAUR_SHOTS to a folder to keep the screenshots (to look at them)."""

MORE_EXPERTS = """
[[experts]]
id = "cy"
name = "Cy Example"

[[experts]]
id = "dee"
name = "Dee Example"
"""


def _browser() -> str:
    found = next((b for b in BROWSERS if os.access(b, os.X_OK)), None) or shutil.which("chromium-headless-shell")
    if found is None:
        pytest.skip(
            "chromium-headless-shell is not installed and could not be (make install runs "
            "`apt-get install chromium-headless-shell`): the browser tests of centaur serve cannot run"
        )
    return found


class Served:
    """The running server: its base URL, the printed links, the session database."""

    def __init__(self, process: subprocess.Popen[str], base: str, links: dict[str, str], session: Path) -> None:
        self.process = process
        self.base = base
        self.links = links
        self.session = session
        self.database = session.with_suffix(".db")

    def rows(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
        conn = sqlite3.connect(self.database, timeout=10)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "centaur_tui", *args], capture_output=True, text=True, timeout=60, check=True
        )
        return done.stdout


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    _browser()
    session = work_session(tmp_path_factory.mktemp("serve"))
    session.write_text(session.read_text(encoding="utf-8") + MORE_EXPERTS, encoding="utf-8")
    with_judging(session, 'expert_guidelines = "guide.md"')
    (session.parent / "guide.md").write_text("# Read first\n\nJudge by what each text does.\n", encoding="utf-8")
    for expert, n in (("ann", 3), ("bob", 2), ("cy", 2), ("dee", 1)):
        assign(session, expert, n)
    process = subprocess.Popen(
        [sys.executable, "-m", "centaur_tui", "serve", str(session), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("Stop with ctrl+c"):
            break
    text = "".join(lines)
    match = re.search(r"on (http://127\.0\.0\.1:\d+)", text)
    assert match, text + (process.stderr.read() if process.poll() is not None and process.stderr else "")
    links = dict(re.findall(r"^\s+(\w+) \(.*?\): (http://\S+/e/\S+)$", text, re.M))
    assert set(links) == {"ann", "bob", "cy", "dee"}, text
    yield Served(process, match.group(1), links, session)
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def browser(served: Served) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=_browser(), args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        yield chromium
        chromium.close()


class Outside:
    """Requests a page tried to send to any host but the server's (aborted, counted)."""

    def __init__(self, base: str) -> None:
        self.host = urlsplit(base).netloc
        self.blocked: list[str] = []
        self.local = 0

    def route(self, route) -> None:
        url = route.request.url
        if urlsplit(url).netloc == self.host:
            self.local += 1
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()


def _context(browser: object, served: Served, size: tuple[int, int] = (1400, 900), **options):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, **options)  # type: ignore[attr-defined]
    outside = Outside(served.base)
    context.route("**/*", outside.route)
    return context, outside


def _enter(context, served: Served, expert: str, path: str = "/judge"):
    page = context.new_page()
    page.goto(served.links[expert])
    page.wait_for_url(lambda address: "/e/" not in address, timeout=60_000)
    page.goto(served.base + path)
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    return page


def _shot(page, name: str) -> None:
    data = page.screenshot(full_page=True)
    assert len(data) > 5_000
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / f"{name}.png").write_bytes(data)


def _judgments(served: Served, expert: str) -> list[tuple]:
    return served.rows(
        "SELECT j.id, j.winner, j.option1, j.option2, j.rationale, j.seconds FROM judgments j"
        " WHERE j.judge = ? AND j.judge_kind = 'expert' ORDER BY j.id",
        (expert,),
    )


def _scores(served: Served, judgment_id: int) -> list[tuple[str, str, int]]:
    return served.rows("SELECT candidate, dimension, score FROM scores WHERE judgment_id = ?", (judgment_id,))


def _draft(served: Served, expert: str) -> tuple[dict, str | None, str] | None:
    rows = served.rows(
        "SELECT d.scores, d.winner, d.rationale FROM expert_drafts d JOIN expert_assignments a"
        " ON a.id = d.assignment_id WHERE a.expert = ? ORDER BY d.version DESC LIMIT 1",
        (expert,),
    )
    return (json.loads(rows[0][0]), rows[0][1], rows[0][2]) if rows else None


def _wait(page, condition, what: str, timeout: float = 60.0):
    """Poll the database until `condition()` holds; Playwright's own wait lets the page's requests
    through (the routes that count them are answered only while Playwright runs)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        page.wait_for_timeout(50)
    raise AssertionError(f"timed out waiting for {what}")


def _order(page) -> list[tuple[str, int]]:
    """(dimension, option) of each slider, in the page's order."""
    sliders = page.locator("input.score")
    return [
        (sliders.nth(i).get_attribute("data-dim") or "", int(sliders.nth(i).get_attribute("data-option") or 0))
        for i in range(sliders.count())
    ]


def _scored(scores: dict, order: list[tuple[str, int]]) -> list[int | None]:
    """A stored draft's scores in the page's slider order (the database keeps them sorted by dimension id)."""
    return [scores.get(dim, [None, None])[option - 1] for dim, option in order]


def test_a_complete_judgment_by_mouse_only(browser, served: Served) -> None:
    context, outside = _context(browser, served)
    page = _enter(context, served, "ann")
    sliders = page.locator("input.score")
    count = sliders.count()
    assert count >= 4
    for i in range(count):
        slider = sliders.nth(i)
        box = slider.bounding_box()
        assert box is not None
        option = slider.get_attribute("data-option")
        x = box["width"] - 2 if option == "1" else 2  # option 1 at the right end (10), option 2 at the left (1)
        slider.click(position={"x": x, "y": box["height"] / 2})
    page.get_by_role("radio", name="Option 1").click()
    page.locator("#rationale").click()
    page.locator("#rationale").fill(RATIONALE)  # text is typed; every choice above was a click
    page.wait_for_selector("#missing.complete")
    _shot(page, "judging-mouse")
    page.locator("#submit").click()
    page.wait_for_url(lambda url: "place=" in url or url.endswith("/judge"), timeout=60_000)
    [(judgment, winner, option1, _option2, rationale, seconds)] = _wait(
        page, lambda: _judgments(served, "ann"), "a judgment"
    )
    assert winner == option1 and rationale == RATIONALE and seconds > 0
    scores = _scores(served, judgment)
    assert len(scores) == count
    assert {s for c, _d, s in scores if c == option1} == {10}
    assert {s for c, _d, s in scores if c != option1} == {1}
    context.close()
    assert outside.blocked == [] and outside.local > 0


def test_a_complete_judgment_by_keyboard_only(browser, served: Served) -> None:
    context, outside = _context(browser, served)
    page = _enter(context, served, "ann")
    before = len(_judgments(served, "ann"))
    count = page.locator("input.score").count()
    for i in range(count):
        page.keyboard.press("8" if i % 2 == 0 else "3")
    page.keyboard.press("1")  # the winner: focus moved there after the last slider
    assert page.evaluate("document.activeElement.id") == "rationale"
    page.keyboard.type(RATIONALE)
    page.keyboard.press("Control+Enter")
    rows = _wait(page, lambda: (r := _judgments(served, "ann")) and len(r) > before and r, "the judgment")
    judgment, winner, option1, *_ = rows[-1]
    assert winner == option1
    scores = _scores(served, judgment)
    assert sorted({s for c, _d, s in scores if c == option1}) == [8]
    assert sorted({s for c, _d, s in scores if c != option1}) == [3]
    context.close()
    assert outside.blocked == []


def test_a_click_on_a_deliverable_then_digits_stores_every_digit_and_reload_loses_nothing(
    browser, served: Served
) -> None:
    context, outside = _context(browser, served)
    page = _enter(context, served, "bob")
    page.locator("#option-1-rendered").click()  # the click that swallowed 11 keys in the canvas seat
    order = _order(page)
    count = len(order)
    digits = [str((i % 9) + 1) for i in range(count)]
    for digit in digits:
        page.keyboard.press(digit)
    page.keyboard.press("2")  # winner: option 2
    page.keyboard.type("half a rationale")
    page.reload()  # at once: the page saves on its way out (keepalive)
    page.wait_for_selector("body[data-ready='1']")
    draft = _wait(page, lambda: (d := _draft(served, "bob")) and d[2] == "half a rationale" and d, "the draft saved")
    scores, winner, _ = draft
    assert _scored(scores, order) == [int(d) for d in digits] and winner == "option_2"
    shown = [page.locator("output.value").nth(i).inner_text() for i in range(count)]
    assert shown == digits
    assert page.locator("#rationale").input_value() == "half a rationale"
    assert page.locator('input[name="winner"][value="option_2"]').is_checked()
    context.close()
    assert outside.blocked == []


def test_closing_the_tab_mid_judgment_loses_nothing(browser, served: Served) -> None:
    context, outside = _context(browser, served)
    page = _enter(context, served, "bob")  # the place the test above left half done
    page.locator("#rationale").click()
    page.keyboard.press("End")
    page.keyboard.type(" and then some")
    page.close(run_before_unload=True)  # at once: the save goes out with the tab (keepalive)
    watcher = context.new_page()  # Playwright answers the page's routed requests while it waits here
    _wait(watcher, lambda: (d := _draft(served, "bob")) and d[2] == "half a rationale and then some", "the save")
    context.close()
    assert outside.blocked == []


def test_two_tabs_of_one_expert_never_overwrite_each_other_silently(browser, served: Served) -> None:
    context, outside = _context(browser, served)
    one = _enter(context, served, "cy")
    order = _order(one)
    two = context.new_page()
    two.goto(served.base + "/judge")
    two.wait_for_selector("body[data-ready='1']")
    one.bring_to_front()
    one.keyboard.press("9")
    _wait(one, lambda: (d := _draft(served, "cy")) and _scored(d[0], order)[0] == 9, "tab one's save")
    two.bring_to_front()
    two.keyboard.press("4")  # made on the old base: refused, and the tab reloads with tab one's work
    two.wait_for_selector("#notice:not([hidden])", timeout=60_000)
    assert "Another tab" in two.locator("#notice").inner_text()
    assert two.locator("output.value").first.inner_text() == "9"
    assert _scored(_draft(served, "cy")[0], order)[0] == 9  # type: ignore[index]
    two.keyboard.press("5")  # now on the current base: taken (on the first unscored slider)
    _wait(
        two,
        lambda: (d := _draft(served, "cy")) and _scored(d[0], order)[:2] == [9, 5],
        "tab two's save after the reload",
    )
    context.close()
    assert outside.blocked == []


def test_revocation_ends_an_open_page(browser, served: Served) -> None:
    context, outside = _context(browser, served)
    page = _enter(context, served, "dee")
    assert page.locator("#ended").is_hidden()
    served.cli("expert", "link", str(served.session), "dee", "--revoke")
    page.keyboard.press("6")  # the next save is refused
    page.wait_for_selector("#ended:not([hidden])", timeout=60_000)
    assert page.locator("#submit").is_disabled()
    assert _draft(served, "dee") is None
    page.goto(served.base + "/")
    assert "403" in page.content()
    context.close()
    assert outside.blocked == []


def test_writing_with_preview_then_submitted_read_only(browser, served: Served) -> None:
    context, outside = _context(browser, served)
    page = _enter(context, served, "ann", "/write")
    editor = page.locator("#editor")
    editor.click()
    page.keyboard.type("# My plan\n\nStep one <script>alert(1)</script>")
    page.wait_for_selector("#preview h3", timeout=60_000)
    assert page.locator("#preview h3").inner_text() == "My plan"
    assert page.locator("#preview script").count() == 0
    page.locator("#submit").click()
    page.locator("#confirm-submit-yes").click()
    page.wait_for_selector("#editor[readonly]", timeout=60_000)
    rows = served.rows("SELECT text FROM outputs WHERE worker = 'ann' AND worker_kind = 'expert'")
    assert rows == [("# My plan\n\nStep one <script>alert(1)</script>",)]
    context.close()
    assert outside.blocked == []


def test_the_deliverables_stack_on_a_narrow_window(browser, served: Served) -> None:
    context, outside = _context(browser, served, size=(600, 900))
    page = _enter(context, served, "cy")
    one = page.locator("#option-1").bounding_box()
    two = page.locator("#option-2").bounding_box()
    assert one is not None and two is not None
    assert two["y"] >= one["y"] + one["height"] - 1 and abs(two["x"] - one["x"]) < 2
    _shot(page, "judging-narrow")
    context.close()
    assert outside.blocked == []


def _axe(page) -> list[tuple[str, str, list[object]]]:
    """axe-core's serious and critical violations on the page as it stands (its id, impact, first targets)."""
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize("path", ["/", "/judge", "/write", "/guidelines"])
def test_axe_finds_no_serious_or_critical_violation(browser, served: Served, path: str) -> None:
    # The page's CSP forbids any script not served by the seat; axe is injected by the test, so
    # this context alone bypasses the CSP.
    context, outside = _context(browser, served, bypass_csp=True)
    page = _enter(context, served, "bob", path) if path in ("/judge", "/write") else None
    if page is None:
        page = context.new_page()
        page.goto(served.links["bob"])
        page.wait_for_url(lambda address: "/e/" not in address, timeout=60_000)
        page.goto(served.base + path)
    assert _axe(page) == []
    _shot(page, "axe" + path.replace("/", "-"))
    context.close()
    assert outside.blocked == []


@pytest.mark.parametrize("path", ["/", "/judge", "/write"])
def test_usable_at_200_percent_zoom(browser, served: Served, path: str) -> None:
    # A 1400x900 window at 200% zoom lays out as 700x450 CSS pixels at 2 device pixels each.
    context, outside = _context(browser, served, size=(700, 450), device_scale_factor=2)
    page = context.new_page()
    page.goto(served.links["cy"])
    page.wait_for_url(lambda address: "/e/" not in address, timeout=60_000)
    page.goto(served.base + path)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1, f"{path} scrolls sideways by {overflow} px at 200% zoom"
    _shot(page, "zoom200" + path.replace("/", "-"))
    context.close()
    assert outside.blocked == []


@pytest.mark.parametrize(
    ("name", "size", "scale"),
    [
        ("zoom200", (700, 450), 2),  # a 1400x900 window at 200% zoom: 700x450 CSS pixels
        ("width320", (320, 640), 1),  # the narrowest phone width WCAG's reflow criterion names
    ],
)
def test_the_judging_page_passes_axe_at_200_percent_zoom_and_320_px(
    browser, served: Served, name: str, size: tuple[int, int], scale: int
) -> None:
    context, outside = _context(browser, served, size=size, device_scale_factor=scale, bypass_csp=True)
    page = _enter(context, served, "cy")
    assert page.locator("#option-1").is_visible() and page.locator("form").count() >= 1
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1, f"/judge scrolls sideways by {overflow} px at {name}"
    # Every slider keeps a track to drag (at 320 px it once kept 26 px beside its label: a bare thumb).
    widths = page.eval_on_selector_all("input[type=range]", "els => els.map(e => e.getBoundingClientRect().width)")
    assert widths and min(widths) >= 150, widths
    assert _axe(page) == []
    _shot(page, "axe-judge-" + name)
    context.close()
    assert outside.blocked == []
