"""The judging screen's colours meet WCAG AA in both themes, measured on the drawn screen; every control works by mouse.

Contrast is computed from the colours the screen is drawn with (the compositor's segments,
after the theme and app.tcss are applied), with WCAG 2's relative luminance and contrast
ratio: text at least 4.5:1 against its background; slider cells, the highlighted-slider
marker and the focus marks (the focused deliverable's border, the winner's focus bar) at
least 3:1. Disabled controls are exempt (WCAG 1.4.3), like decorative separators.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual import events

from centaur_tui.domain.errors import CentaurError
from centaur_tui.ui.app import THEMES, create_app
from centaur_tui.ui.screens.dialogs import ConfirmDialog
from centaur_tui.ui.widgets.document import DocumentView
from centaur_tui.ui.widgets.rubric import CELL, LABEL_WIDTH, RubricPanel, ScoreSlider, WinnerPicker
from tests.support.experts import judged_session
from tests.support.judging import RATIONALE, FrozenClock, assign, settle
from tests.support.waits import wait_for

TEXT = re.compile(r"[A-Za-z0-9]")
BORDER = set("╭╮╰╯─│▊▌▎▍┃━")


def luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG 2 relative luminance of an sRGB colour."""

    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG 2 contrast ratio (1 to 21)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_formula_gives_the_known_ratios() -> None:
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((255, 255, 255), (255, 255, 255)) == pytest.approx(1.0)
    assert contrast((118, 118, 118), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)  # the usual AA grey


def drawn(app) -> list[tuple[str, tuple[int, int, int], tuple[int, int, int], object]]:
    """Every non-blank segment on screen: (text, foreground, background, widget under it)."""
    out = []
    screen = app.screen
    for y, strip in enumerate(screen._compositor.render_strips()):
        x = 0
        for segment in strip:
            start, x = x, x + len(segment.text)
            style, text = segment.style, segment.text
            if style is None or not text.strip() or style.color is None or style.bgcolor is None:
                continue
            lead = len(text) - len(text.lstrip())
            widget, _ = screen.get_widget_at(start + lead, y)
            fg, bg = style.color.get_truecolor(), style.bgcolor.get_truecolor()
            out.append((text.strip(), tuple(fg), tuple(bg), widget))
    return out


def disabled(widget) -> bool:
    return any(getattr(w, "disabled", False) or w.has_class("-disabled") for w in widget.ancestors_with_self)


def failures(app, focus_widget=None) -> list[str]:
    bad = []
    for text, fg, bg, widget in drawn(app):
        ratio = contrast(fg, bg)
        where = f"{type(widget).__name__}#{widget.id}"
        if TEXT.search(text) and not disabled(widget) and ratio < 4.5:
            bad.append(f"text {text[:20]!r} in {where}: {ratio:.2f}:1 (needs 4.5)")
        elif isinstance(widget, ScoreSlider) and set(text) & set("█░▶") and ratio < 3.0:
            bad.append(f"slider cells {text[:12]!r}: {ratio:.2f}:1 (needs 3)")
        elif focus_widget is not None and widget is focus_widget and set(text) <= BORDER and ratio < 3.0:
            bad.append(f"focus mark {text[:8]!r} of {where}: {ratio:.2f}:1 (needs 3)")
    return bad


@pytest.mark.parametrize("theme", sorted(THEMES))
async def test_the_judging_screen_meets_wcag_aa_in_every_state(tmp_path: Path, theme: str) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 2)
    app = create_app(sessions_dir=path.parent, session=path, expert="ann", clock=FrozenClock(), theme=theme)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        await pilot.press("7", "3", "8")  # some cells filled, the third slider highlighted
        await pilot.pause()
        assert failures(app) == []
        one = screen.query_one("#option-1", DocumentView)
        one.focus()
        await pilot.pause()
        assert failures(app, focus_widget=one) == []
        winner = screen.query_one("#winner", WinnerPicker)
        winner.focus()
        winner.value = "option_2"
        await pilot.pause()
        assert failures(app, focus_widget=winner) == []
        screen.query_one("#rationale").focus()
        await pilot.pause()
        assert failures(app) == []


async def test_the_measure_catches_low_contrast(tmp_path: Path) -> None:
    """The check above can fail: a murky theme (grey on grey) is caught, text and slider cells alike."""
    from textual.theme import Theme

    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    app = create_app(sessions_dir=path.parent, session=path, expert="ann", clock=FrozenClock())
    murky = Theme(name="murky", primary="#505050", accent="#606060", foreground="#707070", background="#404040")
    app.register_theme(murky)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.theme = "murky"
        await pilot.pause()
        found = failures(app)
        assert any(f.startswith("text") for f in found) and any(f.startswith("slider cells") for f in found)


async def test_f9_switches_to_high_contrast_and_back_and_an_unknown_theme_is_refused(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    app = create_app(sessions_dir=path.parent, session=path, expert="ann", clock=FrozenClock())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.theme == "textual-dark"
        await pilot.press("f9")
        assert app.theme == "high-contrast"
        await pilot.press("f9")
        assert app.theme == "textual-dark"
    with pytest.raises(CentaurError, match="unknown theme 'neon'"):
        create_app(theme="neon")


def test_the_theme_comes_from_the_cli_flag_or_the_environment(monkeypatch) -> None:
    from click.testing import CliRunner

    from centaur_tui.cli.main import cli
    from centaur_tui.domain.errors import SettingsError
    from centaur_tui.settings import settings

    monkeypatch.setenv("CENTAUR_THEME", "High-Contrast")
    assert settings().theme == "high-contrast"
    monkeypatch.setenv("CENTAUR_THEME", "neon")
    with pytest.raises(SettingsError, match="CENTAUR_THEME"):
        settings()
    out = CliRunner().invoke(cli, ["tui", "--theme", "neon"])
    assert out.exit_code == 2 and "'neon' is not one of 'default', 'high-contrast'" in out.output


# -- the mouse ---------------------------------------------------------------------------------


async def click(pilot, target, offset=(0, 0)) -> None:
    """Bring a control into view (as the expert scrolls the rubric column to it), then click it."""
    widget = pilot.app.screen.query_one(target) if isinstance(target, str) else target
    widget.scroll_visible(animate=False)
    await pilot.pause()
    assert await pilot.click(widget, offset=offset), f"the click missed {widget!r}"


async def test_every_judging_control_works_with_the_mouse(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 3)
    app = create_app(sessions_dir=path.parent, session=path, expert="ann", clock=FrozenClock())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        first = screen.current.key
        panel = screen.query_one(RubricPanel)
        rows = panel.rows()
        for row in (rows[0], rows[-1]):  # option 1 gets 8, option 2 gets 3, each by a click on its cell
            one, two = row.sliders()
            for slider, value in ((one, 8), (two, 3)):
                await click(pilot, slider, offset=(LABEL_WIDTH + CELL * (value - 1), 0))
                assert slider.value == value and screen.draft.score(row.dimension.id, slider.option) == value
        for row in rows[1:-1]:  # the rest as the keyboard tests do (about 1 s a click under Pilot)
            for option, value in ((1, 8), (2, 3)):
                panel.set_place(row.index, option)
                panel.action_set_score(value)
        await click(pilot, "#winner-option_2")
        assert screen.draft.winner == "option_2"
        await click(pilot, "#rationale")
        app.post_message(events.Paste(RATIONALE))
        await pilot.pause()
        await click(pilot, "#submit-button")  # the winner has the lower average: asked, answered by mouse
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), "the confirmation")
        await click(pilot, "#confirm-yes")
        screen = await settle(pilot)
        assert screen.current.key != first and any(q.key == first and q.state == "done" for q in screen.queue)
        second = screen.current.key
        await click(pilot, "#skip-button")
        screen = await settle(pilot)
        assert any(q.key == second and q.state == "skipped" for q in screen.queue)
        third = screen.current.key
        await click(pilot, "#flag-button")
        await wait_for(pilot, lambda: app.screen.query("#flag-ok"), "the flag dialog")
        await click(pilot, "#flag-ok")
        screen = await settle(pilot)
        assert any(q.key == third and q.state == "flagged" for q in screen.queue)
        view = screen.query_one("#option-1", DocumentView)
        await click(pilot, view)
        assert screen.focused is view
        before = view.scroll_y
        for _ in range(3):  # the wheel, as the driver sends it
            view.post_message(events.MouseScrollDown(view, 2, 2, 0, 1, 0, False, False, False))
        await pilot.pause()
        assert view.scroll_y > before or view.max_scroll_y == 0
