"""Provides ConsoleScreen: the organiser's console of an expert study (never in the expert-only app).

It renders `services.console.Console` by attribute; every figure is computed there, once, and the
console page of `centaur serve` shows the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Header, Static

from centaur_tui.ui.screens.base import CentaurScreen
from centaur_tui.ui.widgets.footer import SteadyFooter

if TYPE_CHECKING:
    from centaur_tui.domain.study import Study
    from centaur_tui.services.console import Console


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole}"


class ConsoleScreen(CentaurScreen):
    """The organiser's console: per expert pace, times, completion, checks, flags, signals; the burn-down."""

    EXPERT_SAFE = False  # the organiser's: every expert's figures, never one expert's seat

    HELP = """\
## The organiser's console

Per expert: **per h** judgments per hour of judging time (their judgments with a time, over the
sum of those times); **median** wall and active seconds per judgment; **done** judged places of
their queue; **gold** passed of judged; **practice** judged of made; **low avg** lower-average
winners confirmed of chosen; **skip/flag** open places marked so; **last seen** the latest work
stored.

Integrity signals (counted, never used to leave anything out; `--min-gold-pass` is the one
way to leave an expert out): **pasted** rationales at least half pasted, of those whose seat
recorded pastes; **too fast** judgments stored faster than both deliverables can be read at
1,000 words a minute; **repeated** rationales identical to one on another comparison;
**option 1** wins of option 1 among decided judgments, with the exact binomial p (`*` below 0.05).

The burn-down: places judged and left per task and mode; the expected finish is now plus the
places left at the study's pace (judgments per calendar hour, first to latest).

- **r**: read the figures again
- **escape**: back to the session
"""

    BINDINGS = [
        Binding("r", "refresh", "Refresh", id="refresh", tooltip="Read the figures again."),
        Binding("escape", "back", "Back", id="back", tooltip="Back to the session."),
    ]

    def __init__(self, study: Study) -> None:
        super().__init__()
        self.study = study
        self.console: Console | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(f"Console: session {self.study.session.name}", classes="screen-title", markup=False)
        with VerticalScroll(id="console-body"):
            yield Static("Reading the study…", id="console-summary", markup=False)
            yield Static("Experts", classes="panel-title")
            yield DataTable(id="console-experts", cursor_type="row")
            yield Static("Integrity signals (counted, never used to leave data out)", classes="panel-title")
            yield DataTable(id="console-signals", cursor_type="row")
            yield Static("Flag notes", classes="panel-title")
            yield Static("", id="console-notes", markup=False)
            yield Static("Burn-down", classes="panel-title")
            yield DataTable(id="console-burn", cursor_type="row")
        yield SteadyFooter()

    def on_mount(self) -> None:
        experts = self.query_one("#console-experts", DataTable)
        for label in (
            "expert",
            "per h",
            "median wall",
            "median active",
            "done",
            "gold",
            "practice",
            "low avg",
            "skip",
            "flag",
            "last seen",
        ):
            experts.add_column(label, key=label)
        signals = self.query_one("#console-signals", DataTable)
        for label in ("expert", "judgments", "pasted", "pasted chars", "too fast", "repeated", "option 1", "p"):
            signals.add_column(label, key=label)
        burn = self.query_one("#console-burn", DataTable)
        for label in ("task", "mode", "done", "left"):
            burn.add_column(label, key=label)
        experts.focus()
        self.load()

    @work(thread=True, exclusive=True, group="console-load", exit_on_error=False)
    def load(self) -> None:
        """Compute the console's figures on a thread (about 0.1 s for 5,000 judgments), then show them."""
        from centaur_tui.services.console import build_console

        console = build_console(self.study, self.app.store_for(self.study))
        self.app.call_from_thread(self.show_console, console)

    def show_console(self, console: Console) -> None:
        """Fill the tables from a computed console (by attribute; nothing is computed here)."""
        self.console = console
        experts = self.query_one("#console-experts", DataTable)
        signals = self.query_one("#console-signals", DataTable)
        burn = self.query_one("#console-burn", DataTable)
        for table in (experts, signals, burn):
            table.clear()
        notes: list[str] = []
        for e in console.experts:
            experts.add_row(
                e.name if e.name == e.expert else f"{e.name} ({e.expert})",
                _num(e.per_hour),
                _num(e.median_seconds),
                _num(e.median_active_seconds),
                _share(e.done, e.assigned),
                _share(e.gold_passed, e.gold_judged),
                _share(e.practice_done, e.practice_made),
                _share(e.lower_average_confirmed, e.lower_average),
                str(e.skipped),
                str(e.flagged),
                e.last_seen or "-",
                key=e.expert,
            )
            s = e.integrity
            p = "-" if s.order_p is None else f"{s.order_p:.3g}" + (" *" if s.follows_order else "")
            signals.add_row(
                e.expert,
                str(s.judgments),
                _share(s.pasted, s.paste_recorded),
                "-" if s.pasted_share is None else f"{s.pasted_share:.0%}",
                _share(s.too_fast, s.timed),
                str(s.repeated),
                _share(s.option1_wins, s.decided),
                p,
                key=e.expert,
            )
            notes += [f"{e.expert}, place {n.place}: {n.note}" for n in e.notes]
        for r in console.burn_down:
            burn.add_row(r.task, r.mode, str(r.done), str(r.left))
        pace = (
            "unknown (fewer than two judgments apart in time)"
            if console.pace_per_hour is None
            else (f"{console.pace_per_hour:,.1f} judgments per hour")
        )
        finish = "nothing left" if not console.left else (console.expected_finish or "unknown")
        summary = [
            f"{console.done:,} judged of {console.assigned:,} places; {console.left:,} left.",
            f"Pace: {pace}. Expected finish (UTC): {finish}. Read at {console.now}.",
            *console.notes,
        ]
        self.query_one("#console-summary", Static).update("\n".join(summary))
        self.query_one("#console-notes", Static).update("\n".join(notes) or "No flag notes.")

    def action_refresh(self) -> None:
        self.load()

    def action_back(self) -> None:
        self.app.pop_screen()
