"""Provides the judging screen: two anonymised deliverables, the rubric sliders, the winner and a rationale.

Nothing on this screen names a model, family, candidate, run or comparison: it shows only
what a `JudgingItem` holds (task, rubric, masked texts in the presented order) and the place
in the expert's queue. Work is saved as it is entered (0.3 s after the last change, and at
once when the expert leaves the comparison or quits), so reopening resumes with the same values.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.strip import Strip
from textual.widgets import Button, Label, Static, TextArea
from textual.worker import get_current_worker

from centaur_tui.domain.blinding import Draft, JudgingItem, QueueItem, missing, next_open
from centaur_tui.domain.guessing import GuessQuestion
from centaur_tui.ui.screens.base import CentaurScreen
from centaur_tui.ui.screens.dialogs import ConfirmDialog, FlagDialog, PromptDialog
from centaur_tui.ui.screens.drafts import DraftAutosave
from centaur_tui.ui.screens.reading import READ, ReadingScreen
from centaur_tui.ui.widgets.document import DocumentView, render_markdown
from centaur_tui.ui.widgets.footer import SteadyFooter
from centaur_tui.ui.widgets.rubric import RubricPanel, WinnerPicker

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from textual import events

    from centaur_tui.services.judging import JudgingSource

NARROW = 100
"""Below this many columns the two deliverables are stacked instead of side by side."""

"""Seconds after the last change before a draft is saved (typing a rationale saves once)."""


class RationaleArea(TextArea):
    """The rationale editor: a TextArea that reports pastes (a terminal's paste; ctrl+v from the app's clipboard)."""

    @dataclass
    class Pasted(Message):
        characters: int

    # Textual calls `_on_paste` of every class in the MRO: TextArea's inserts the text after this.
    async def _on_paste(self, event: events.Paste) -> None:
        if not self.read_only and event.text:
            self.post_message(self.Pasted(len(event.text)))

    def action_paste(self) -> None:
        if not self.read_only and self.app.clipboard:
            self.post_message(self.Pasted(len(self.app.clipboard)))
        super().action_paste()


@dataclass(frozen=True)
class Prepared:
    """One place made ready in a thread: what to show, the saved draft, both texts laid out."""

    current: QueueItem | None
    item: JudgingItem | None
    draft: Draft
    layouts: tuple[tuple[int, list[Strip]], ...]
    revising: bool = False
    """A submitted judgment reopened to correct it (the draft is the stored judgment)."""


READING_BINDINGS = [
    Binding("f3", "read(1)", "Option 1", id="read-1", group=READ, tooltip="Read option 1 at full width."),
    Binding("f4", "read(2)", "Option 2", id="read-2", group=READ, tooltip="Read option 2 at full width."),
    Binding("f5", "differences", "Differences", id="differences", group=READ, tooltip="What differs between the two."),
    Binding(
        "ctrl+g", "link_scrolling", "Link scroll", id="link", tooltip="Scroll both deliverables together (or not)."
    ),
    Binding(
        "ctrl+o", "other_option", "Other option", id="other", tooltip="Show the other deliverable (narrow screens)."
    ),
]
"""Keys for reading the deliverables (none of them is used by the rubric, the winner or the rationale)."""

READING_ACTIONS = frozenset({"read", "differences", "link_scrolling", "other_option"})


def format_seconds(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes:02d}:{secs:02d}"


class JudgingScreen(DraftAutosave, CentaurScreen):
    """Judge an expert's queue, one comparison at a time.

    Args:
        source: Where the queue comes from and where work goes (session database or packet).
        standalone: The app was opened on this screen (a packet): leaving it quits the app.
    """

    EXPERT_SAFE = True

    HELP = """\
## Judging

Read both deliverables, score each option on every rubric dimension, pick the winner and
say why. You never see which model wrote what.

- **tab / shift+tab**: next / previous dimension
- **left / right**: change the highlighted slider (an empty slider starts at 5)
- **up / down**: previous / next slider
- **1-9, 0**: set the highlighted slider (0 = 10) and move on
- **=**: give the highlighted slider the other option's score and move on
- The dimension you score shows what 1-3 and 8-10 mean under its description.
- **1 / 2 / t** on the winner: option 1, option 2, tie (when allowed); **enter** takes the
  winner proposed from the rubric averages; either way you go on to the rationale
- If your winner has the lower rubric average, ctrl+s asks you to confirm (y / n); your
  choice stands
- **f2**: the task prompt
- **f6**: the guidelines for judging (when the session has them; shown once before your first
  comparison too)
- A practice comparison (the top line says so) is never counted; after it you see its reference
  verdict
- **ctrl+s**: submit (when everything is filled in; else it says what is missing)
- **ctrl+b**: skip for now; **ctrl+f**: flag for later, with a note for the researcher if you
  like (both come back after the others)
- **ctrl+z**: reopen the judgment you submitted last (again: the one before it) to correct
  it; ctrl+s stores the correction (your earlier judgment stays on record, superseded);
  escape goes back to where you were and leaves it unchanged
- **escape**: back; your work so far is kept
- Paste into the rationale with ctrl+v (or your terminal's paste); ctrl+backspace deletes a word
- In a web browser, judge through the personal link the researcher sends (`centaur serve`): the
  same queue and keys, as a web page

Click a deliverable and scroll it with the arrows, page keys or the mouse wheel (left / right:
a table wider than the pane).

- **f3 / f4**: option 1 / option 2 at full width; **f5**: what differs between the two
  (lines only in option 1 are marked 1, only in option 2 marked 2); escape comes back here
- **ctrl+g**: scroll the two deliverables together (again: separately)
- **ctrl+o** (narrow screens, one deliverable at a time): show the other option
"""

    BINDINGS = [
        Binding(
            "ctrl+s", "submit", "Submit", id="submit", tooltip="Store this judgment and go to the next comparison."
        ),
        # No ctrl+t, ctrl+n, ctrl+w or ctrl+l here: the HTML seat of `centaur serve` cannot have them
        # (a browser keeps them: new tab, new window, close, address bar) and both seats keep the
        # same keys (tests/test_serve.py checks).
        Binding("f2", "prompt", "Task prompt", id="prompt", tooltip="Show the task the deliverables answer."),
        Binding("f6", "guidelines", "Guidelines", id="guidelines", tooltip="Show the guidelines for judging."),
        Binding("ctrl+b", "skip", "Skip", id="skip", tooltip="Leave this comparison for now; it comes back later."),
        Binding("ctrl+f", "flag", "Flag for later", id="flag", tooltip="Mark this comparison to revisit."),
        Binding("escape", "leave", "Back", id="leave", tooltip="Leave judging; work so far is kept."),
        Binding(
            "ctrl+z",
            "revise",
            "Revise previous",
            id="revise",
            tooltip="Reopen the judgment you submitted last (again: the one before) to correct it.",
        ),
        *READING_BINDINGS,
    ]

    def __init__(self, source: JudgingSource, standalone: bool = False) -> None:
        super().__init__()
        self.source = source
        self.standalone = standalone
        self.queue: list[QueueItem] = []
        self.current: QueueItem | None = None
        self.item: JudgingItem | None = None
        self.draft = Draft()
        self.finished = False
        self.busy = True
        self._shown_at = 0.0
        self._base_seconds = 0.0
        self._active_base = 0.0
        self._active = 0.0
        self._last_activity = 0.0
        self.idle_seconds = float(source.idle_seconds)
        """A gap between keys or clicks longer than this counts only this long as active time."""
        self._missing_text = ""
        self._actions_state: tuple[bool, bool] | None = None
        self._prefetched: Prepared | None = None
        self.revising = False
        self._return_to: QueueItem | None = None  # the open place to go back to after a revision
        self.linked = False
        """The two deliverables scroll together."""
        self.shown_option = 1
        """The deliverable shown on a narrow screen (one at a time there)."""
        self._echo: tuple[str | None, int] | None = None
        self._leader: str | None = None
        """The id of the option the expert scrolled last (linked scrolling follows it)."""
        self._guidelines_offered = False

    # -- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("", id="judge-bar", markup=False)
        yield Static("", id="judge-task", markup=False)
        if self.source.simulated:
            yield Static(
                "SIMULATED DATA: these deliverables come from the simulated provider.",
                classes="simulated-banner",
                markup=False,
            )
        with Horizontal(id="judge-body"):
            with Horizontal(id="options"):
                yield DocumentView(id="option-1", classes="option")
                yield DocumentView(id="option-2", classes="option")
            with VerticalScroll(id="rubric"):
                yield Static(
                    "Score both options on every dimension: 1 = poor, 10 = excellent.", id="rubric-intro", markup=False
                )
                yield RubricPanel(id="rubric-panel")
                yield WinnerPicker(allow_ties=True, id="winner")
                yield Label("Rationale", id="rationale-label")
                yield RationaleArea(
                    id="rationale",
                    soft_wrap=True,
                    tab_behavior="focus",
                    show_line_numbers=False,
                    placeholder="Why does the winner win? Name the decisive differences.",
                )
                with Horizontal(id="judge-buttons"):
                    yield Button("Submit", id="submit-button", variant="primary", disabled=True)
                    yield Button("Skip", id="skip-button")
                    yield Button("Flag", id="flag-button")
        yield Static("", id="judge-done", markup=False)
        yield Static("Loading…", id="missing", markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.app.freeze_long_lived()
        # The scroll container is no focus stop: focused, it showed nothing and ate the digits.
        self.query_one("#rubric", VerticalScroll).can_focus = False
        self._title_options()
        self.query_one("#judge-done").display = False
        self._apply_width(self.size.width)
        self.set_interval(1.0, self._show_bar)
        self.open_first()

    def on_resize(self, event: events.Resize) -> None:
        self._apply_width(event.size.width)

    def _apply_width(self, width: int) -> None:
        self.set_class(0 < width < NARROW, "-narrow")
        self._title_options()

    # -- loading -------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="judging-load", exit_on_error=False)
    def open_first(self, widths: tuple[int, int] | None = None) -> None:
        """Open the place worked on last, or the first open one."""
        queue = self.source.queue()
        resume = self.source.resume_key()
        current = next((q for q in queue if q.key == resume and q.state != "done"), None) or next_open(queue)
        self._deliver(queue, self._prepare(current, widths or (0, 0)))

    @work(thread=True, exclusive=True, group="judging-load", exit_on_error=False)
    def open_place(self, place: QueueItem | None, widths: tuple[int, int]) -> None:
        """Open this place if it is still open, else the next open one."""
        queue = self.source.queue()
        current = next((q for q in queue if place is not None and q.key == place.key and q.state != "done"), None)
        self._deliver(queue, self._prepare(current or next_open(queue), widths))

    def _widths(self) -> tuple[int, int]:
        one, two = self.query(DocumentView).results(DocumentView)
        return one.scrollable_content_region.width, two.scrollable_content_region.width

    def _prepare(self, current: QueueItem | None, widths: tuple[int, int]) -> Prepared:
        """In a thread: read one place and lay out its texts at the panes' widths."""
        if current is None:
            return Prepared(None, None, Draft(), ())
        item = self.source.item(current.key)
        draft = self.source.draft(current.key) or Draft()
        layouts = tuple(
            (width, render_markdown(text, width)) if width > 0 else (0, [])
            for text, width in zip((item.option_1, item.option_2), widths, strict=True)
        )
        return Prepared(current, item, draft, layouts)

    def _deliver(self, queue: list[QueueItem], prepared: Prepared) -> None:
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, queue, prepared)  # type: ignore[arg-type]  # mypy 2.4 solves T | Awaitable[T] as Never for coroutines

    @work(thread=True, exclusive=True, group="judging-prefetch", exit_on_error=False)
    def prefetch(self, queue: list[QueueItem], current: QueueItem, widths: tuple[int, int]) -> None:
        """Prepare the place that comes after this one while the expert reads (next in < 100 ms)."""
        after = [q if q.key != current.key else QueueItem(q.key, q.position, "done", q.task_title) for q in queue]
        guess = next_open(after, after=current.position)
        if guess is not None and not get_current_worker().is_cancelled:
            self._prefetched = prepared = self._prepare(guess, widths)
            if prepared.item is not None:
                self.app.call_from_thread(self._reserve_rows, prepared.item)  # type: ignore[arg-type]  # mypy 2.4 solves T | Awaitable[T] as Never for coroutines

    async def _reserve_rows(self, item: JudgingItem) -> None:
        await self.query_one("#rubric-panel", RubricPanel).reserve(item.rubric)

    async def _show(self, queue: list[QueueItem], prepared: Prepared) -> None:
        current, item, draft = prepared.current, prepared.item, prepared.draft
        self.queue, self.current, self.item, self.draft = queue, current, item, draft
        self.revising = prepared.revising
        if not self.revising:
            self._return_to = None
        self.set_class(self.revising, "-revising")
        self.finished = current is None
        self.query_one("#judge-body").display = not self.finished
        done = self.query_one("#judge-done", Static)
        done.display = self.finished
        if item is None:
            judged = sum(q.state == "done" for q in queue)
            done.update(
                f"All {judged} comparison(s) in your queue are judged. Thank you, {self.source.expert_name}."
                if queue
                else "No comparisons are assigned to you yet. Ask the researcher for an assignment."
            )
            self.query_one("#judge-task", Static).update("")
            self.busy = False
            self._show_bar()
            self._show_missing()
            return
        self._shown_at = self._last_activity = self.app.clock()
        self._base_seconds = draft.seconds
        self._active_base = draft.active_seconds if draft.active_seconds is not None else 0.0
        if draft.pasted_chars is None and not self.revising:
            draft.pasted_chars = 0  # this seat records pastes from here on (a correction: not recorded)
        self._active = 0.0
        note = item.cut_off_note
        self.query_one("#judge-task", Static).update(
            f"Task: {item.task_title}. Deliverable: {item.deliverable}" + (f" NOTE: {note}" if note else "")
        )
        for view, text, layout in zip(
            self.query(DocumentView).results(DocumentView),
            (item.option_1, item.option_2),
            prepared.layouts,
            strict=True,
        ):
            view.set_text(text, layout)
        self._show_option(1)
        panel = self.query_one("#rubric-panel", RubricPanel)
        await panel.show(item.rubric, {d.id: (draft.score(d.id, 1), draft.score(d.id, 2)) for d in item.rubric.all})
        winner = self.query_one("#winner", WinnerPicker)
        winner.set_allow_ties(item.allow_ties)
        winner.value = draft.winner
        self._propose()
        rationale = self.query_one("#rationale", TextArea)
        if rationale.text != draft.rationale:
            rationale.load_text(draft.rationale)
        self.query_one("#rationale-label", Label).update(f"Rationale (at least {item.min_rationale} characters)")
        self.busy = False
        self._show_bar()
        self._show_missing()
        # At once, not after the next refresh: a deferred scroll home raced the panel's own scroll
        # to the highlighted dimension (RubricPanel._scroll_current), whichever ran last won.
        self.query_one("#rubric", VerticalScroll).scroll_home(animate=False, immediate=True)
        panel.focus(scroll_visible=False)
        assert current is not None
        # The sign a test driving the app from outside (a pseudo-terminal) has that keys now reach
        # this place's sliders: typing before it lost keys or put them on another slider.
        log.debug("judging screen ready: %s at place %s", self.source.expert_name, current.key)
        self.prefetch(queue, current, self._widths())
        if not self._guidelines_offered:
            self._guidelines_offered = True
            if self.guidelines and not any(q.state == "done" for q in queue):
                self.action_guidelines()  # before the first comparison

    @property
    def guidelines(self) -> str | None:
        """The session's guidelines for experts (Markdown), if it has any."""
        text = self.source.guidelines
        return text if text and text.strip() else None

    def action_guidelines(self) -> None:
        from centaur_tui.ui.screens.dialogs import HelpDialog

        if self.guidelines is not None:
            self.app.push_screen(HelpDialog(self.guidelines))

    # -- reading the deliverables ------------------------------------------------------------

    def _can_read(self, action: str) -> bool | None:
        if self.finished or self.item is None:
            return False
        if action == "other_option":
            return self.has_class("-narrow")
        return True

    def _options(self) -> tuple[DocumentView, DocumentView]:
        one, two = self.query(DocumentView).results(DocumentView)
        return one, two

    def _title_options(self) -> None:
        narrow = self.has_class("-narrow")
        link = " · scrolling together" if self.linked else ""
        for number, view in enumerate(self._options(), start=1):
            other = f" · ctrl+o: Option {3 - number}" if narrow else ""
            view.border_title = f"Option {number}{link}{other}"

    def _show_option(self, number: int) -> None:
        # On a narrow screen one deliverable fills the pane (the CSS hides the other): two
        # stacked at 80x24 left each 7 lines; alone it shows 17.
        self.shown_option = number
        for n, view in enumerate(self._options(), start=1):
            view.set_class(n == number, "-shown")

    def action_read(self, number: int) -> None:
        if self.item is not None and self._can_read("read"):
            self.app.push_screen(ReadingScreen(self.item.option_1, self.item.option_2, show=str(number)))

    def action_differences(self) -> None:
        if self.item is not None and self._can_read("differences"):
            self.app.push_screen(ReadingScreen(self.item.option_1, self.item.option_2, show="diff"))

    def action_link_scrolling(self) -> None:
        self.linked = not self.linked
        self._title_options()
        if self.linked:
            one, two = self._options()
            source = two if self.focused is two or (self.has_class("-narrow") and self.shown_option == 2) else one
            self._follow(source)
        self.notify(
            "The two deliverables scroll together." if self.linked else "The deliverables scroll separately.",
            title="Scrolling",
            timeout=2,
        )

    def action_other_option(self) -> None:
        if not self._can_read("other_option"):
            return
        self._show_option(3 - self.shown_option)
        shown = self._options()[self.shown_option - 1]
        if isinstance(self.focused, DocumentView):
            shown.focus()

    @on(DocumentView.Scrolled, ".option")
    def option_scrolled(self, event: DocumentView.Scrolled) -> None:
        if not self.linked:
            return
        if self._echo == (event.view.id, round(event.view.scroll_y)):
            self._echo = None  # the scroll this screen made to follow the other option
            return
        self._leader = event.view.id
        self._follow(event.view)

    @on(DocumentView.Rendered, ".option")
    def option_rendered(self, event: DocumentView.Rendered) -> None:
        if not self.linked:
            return
        # Laid out anew (shown on a narrow screen, resized, or its layout finished late): the two
        # are put back together at the position of the one the expert scrolled last. Always taking
        # the other one as the source pulled the expert's own option back when its layout finished
        # after the expert's scroll (seen on a busy machine: `end` undone, the two left at the top).
        source = (
            event.view if event.view.id == self._leader else next(v for v in self._options() if v is not event.view)
        )
        self._follow(source)

    def _follow(self, source: DocumentView) -> None:
        """Scroll the other option to the source's top line (as far as it goes)."""
        other = next(v for v in self._options() if v is not source)
        target = min(round(source.scroll_y), round(other.max_scroll_y))
        if round(other.scroll_y) != target:
            self._echo = (other.id, target)
            # At once, not after the next refresh: a deferred scroll let a late Scrolled of the
            # follower (its older position) be taken for the expert's own scroll, which pulled
            # the leader back; the two ended apart (seen on a busy machine, issue 21).
            other.scroll_to(y=target, animate=False, immediate=True)

    # -- status lines --------------------------------------------------------------------------

    @property
    def seconds(self) -> float:
        """Time spent on the current comparison, over all visits."""
        if self.item is None:
            return 0.0
        return self._base_seconds + max(0.0, self.app.clock() - self._shown_at)

    @property
    def active_seconds(self) -> float:
        """Of `seconds`, the time without idle periods: a gap between keys or clicks counts at most `idle_seconds`."""
        if self.item is None:
            return 0.0
        pending = min(max(0.0, self.app.clock() - self._last_activity), self.idle_seconds)
        return self._active_base + self._active + pending

    def note_activity(self) -> None:
        """A key, paste, click or scroll of the expert (the app calls this for every one, dialogs included)."""
        now = self.app.clock()
        if self.item is not None:
            self._active += min(max(0.0, now - self._last_activity), self.idle_seconds)
        self._last_activity = now

    def on_mouse_down(self) -> None:
        self.note_activity()  # Pilot's clicks reach the screen without passing the app's on_event

    def on_mouse_scroll_down(self) -> None:
        self.note_activity()

    def on_mouse_scroll_up(self) -> None:
        self.note_activity()

    def _show_bar(self) -> None:
        total = len(self.queue)
        judged = sum(q.state == "done" for q in self.queue)
        flagged = sum(q.state == "flagged" for q in self.queue)
        skipped = sum(q.state == "skipped" for q in self.queue)
        parts = [self.source.expert_name]
        if self.current is not None:
            place = next(i for i, q in enumerate(self.queue, start=1) if q.key == self.current.key)
            state = {"flagged": " (flagged)", "skipped": " (skipped before)"}.get(self.current.state, "")
            if self.revising:
                state = " (submitted before: revising it)"
            if self.current.practice:
                practice = [q for q in self.queue if q.practice]
                number = next(i for i, q in enumerate(practice, start=1) if q.key == self.current.key)
                parts.append(f"PRACTICE {number} of {len(practice)}, not counted{state}")
            else:
                parts.append(f"{place} of {total}{state}")
        parts.append(f"{judged} judged")
        if flagged:
            parts.append(f"{flagged} flagged")
        if skipped:
            parts.append(f"{skipped} skipped")
        if self.item is not None:
            parts.append(f"time on this comparison {format_seconds(self.seconds)}")
        self.query_one("#judge-bar", Static).update(" · ".join(parts), layout=False)

    def lacking(self) -> list[str]:
        if self.item is None:
            return []
        return missing(self.draft, self.item.rubric, self.item.allow_ties, self.item.min_rationale)

    def _show_missing(self) -> None:
        lacks = self.lacking()
        if self.finished:
            text = "Nothing left to judge. ctrl+z: revise your last judgment; escape: back"
        elif lacks:
            text = "Missing: " + ", ".join(lacks)
        elif self.revising:
            text = "Complete: ctrl+s stores the correction; escape leaves it unchanged."
        else:
            text = "Complete: ctrl+s submits."
        # Touch widgets only when something changed: every class change restyles, and a
        # bindings refresh rebuilds the footer (together about 60 ms a key at 120x40).
        if text != self._missing_text:
            self._missing_text = text
            line = self.query_one("#missing", Static)
            line.update(text, layout=False)  # one line, fixed height: no reflow of the screen
            line.set_class(not lacks and not self.finished, "-complete")
        actions = (bool(lacks), self.finished)
        if actions != self._actions_state:
            self._actions_state = actions
            self.query_one("#submit-button", Button).disabled = any(actions)
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in READING_ACTIONS:
            return self._can_read(action)
        if action == "revise":
            if not self.source.can_revise:
                return False  # packets: corrections are made in the session database
            return True if any(q.state == "done" for q in self.queue) else None
        if action in ("skip", "flag") and self.revising:
            return False
        if action == "guidelines":
            return self.guidelines is not None
        # Submit stays live when incomplete: ctrl+s then says what is missing (a dimmed binding
        # never runs, so the expert pressing it got no answer at all).
        return not (action in ("submit", "skip", "flag", "prompt") and (self.finished or self.item is None))

    # -- entering work -------------------------------------------------------------------------

    @on(RubricPanel.Changed)
    def score_changed(self, event: RubricPanel.Changed) -> None:
        self.draft.set_score(event.dimension, event.option, event.value)
        self._propose()
        self._changed()

    def averages(self) -> tuple[float, float] | None:
        """Each option's mean rubric score, once every dimension is scored for both."""
        if self.item is None:
            return None
        dims = self.item.rubric.all
        scores = [[self.draft.score(d.id, option) for d in dims] for option in (1, 2)]
        if not dims or any(v is None for side in scores for v in side):
            return None
        one, two = (sum(v for v in side if v is not None) / len(dims) for side in scores)
        return one, two

    def proposal_now(self) -> str | None:
        """The winner the sliders on screen propose, read from the widgets (their Changed messages may be queued)."""
        if self.item is None:
            return None
        rows = self.query_one("#rubric-panel", RubricPanel).rows()
        values = [[row.value(option) for row in rows] for option in (1, 2)]
        if not rows or any(v is None for side in values for v in side):
            return None
        one, two = (sum(v for v in side if v is not None) for side in values)
        if one != two:
            return "option_1" if one > two else "option_2"
        return "tie" if self.item.allow_ties else None

    def _propose(self) -> None:
        """Offer the winner the scores suggest (enter takes it); the expert's pick stays theirs."""
        means = self.averages()
        proposed: str | None = None
        if means is not None and self.item is not None:
            one, two = means
            if one != two:
                proposed = "option_1" if one > two else "option_2"
            elif self.item.allow_ties:
                proposed = "tie"
        self.query_one("#winner", WinnerPicker).proposed = proposed

    @on(WinnerPicker.Changed, "#winner")
    def winner_changed(self, event: WinnerPicker.Changed) -> None:
        self.draft.winner = event.value  # type: ignore[assignment]
        self._changed()

    @on(RationaleArea.Pasted)
    def rationale_pasted(self, event: RationaleArea.Pasted) -> None:
        """Count the pasted characters with the draft (an integrity signal the organiser sees, never a rule)."""
        if self.item is None or self.revising:
            return
        self.draft.pasted_chars = (self.draft.pasted_chars or 0) + event.characters
        self._draft_changed()

    @on(TextArea.Changed, "#rationale")
    def rationale_changed(self, event: TextArea.Changed) -> None:
        text = event.text_area.text
        if self.item is None or text == self.draft.rationale:
            return  # a loaded draft, not typing
        self.draft.rationale = text
        self._changed()

    def _changed(self) -> None:
        self._show_missing()
        self._draft_changed()

    def _snapshot(self) -> Draft:
        draft = copy.deepcopy(self.draft)
        draft.seconds = round(self.seconds, 1)
        draft.active_seconds = round(min(self.active_seconds, self.seconds), 1)
        return draft

    def _can_save(self) -> bool:
        # A correction in progress is not a draft: the stored judgment stands until ctrl+s.
        return self.current is not None and self.item is not None and not self.revising

    # -- moving on -----------------------------------------------------------------------------

    def missing_details(self) -> str:
        """What is missing, by name (scores, winner, rationale length), for ctrl+s on an incomplete judgment."""
        if self.item is None:
            return ""
        parts: list[str] = []
        unscored = [
            f"{d.name} option {o}" for d in self.item.rubric.all for o in (1, 2) if self.draft.score(d.id, o) is None
        ]
        if unscored:
            shown = ", ".join(unscored[:4]) + (", ..." if len(unscored) > 4 else "")
            parts.append(f"{len(unscored)} score{'s' if len(unscored) != 1 else ''} missing: {shown}")
        if self.draft.winner is None or (self.draft.winner == "tie" and not self.item.allow_ties):
            parts.append("no winner")
        length = len(self.draft.rationale.strip())
        if length < self.item.min_rationale:
            parts.append(f"rationale {length}/{self.item.min_rationale} characters")
        return "; ".join(parts)

    def against_averages(self) -> tuple[float, float] | None:
        """The (winner's, loser's) rubric averages when the chosen winner has the lower one, else None."""
        means = self.averages()
        if means is None or self.draft.winner not in ("option_1", "option_2"):
            return None
        mine, other = means if self.draft.winner == "option_1" else means[::-1]
        return (mine, other) if mine < other else None

    def action_submit(self) -> None:
        if self.busy or self.current is None or self.item is None or self.finished:
            return
        if self.lacking():
            self.notify(self.missing_details(), title="Not complete yet", severity="warning", markup=False)
            return
        against = self.against_averages()
        if against is not None:
            mine, other = against
            label = "Option 1" if self.draft.winner == "option_1" else "Option 2"
            question = (
                f"{label} wins, but its rubric average is lower ({mine:.1f} against {other:.1f}). Submit it as it is?"
            )
            self.app.push_screen(ConfirmDialog(question, yes="Submit", no="Back"), self._confirmed)
            return
        self.draft.confirmed_lower = False
        self._advance(self.current, "revise" if self.revising else "submit")

    def _confirmed(self, yes: bool | None) -> None:
        if yes and not self.busy and self.current is not None and not self.lacking():
            self.draft.confirmed_lower = True  # stored with the judgment; the report counts them per expert
            self._advance(self.current, "revise" if self.revising else "submit")

    def action_revise(self) -> None:
        """Reopen the last submitted judgment (from a revision: the one submitted before it)."""
        if self.busy or self.check_action("revise", ()) is not True:
            return
        if not self.revising:
            self.flush()  # the open place's draft, kept for when the correction is done
            self._return_to = self.current
        self._stop_saving()
        self._dirty = False
        self.busy = True
        self.open_revision(self.current.key if self.revising and self.current else None, self._widths())

    @work(thread=True, exclusive=True, group="judging-load", exit_on_error=False)
    def open_revision(self, before: str | None, widths: tuple[int, int]) -> None:
        """In a thread: the submitted place before `before` (or the latest), with its stored judgment as the draft."""
        try:
            target = self.source.submitted_before(before)
            if target is None:
                self.app.call_from_thread(self.notify, "No judgment submitted before this one.", title="Revise")
                self.app.call_from_thread(self._unbusy)
                return
            prepared = self._prepare(target, widths)
            prepared = Prepared(target, prepared.item, self.source.submitted_draft(target.key), prepared.layouts, True)
        except BaseException:
            self.app.call_from_thread(self._unbusy)
            raise
        self._deliver(self.source.queue(), prepared)

    def action_skip(self) -> None:
        if not self.busy and self.current is not None and self.check_action("skip", ()) is True:
            self._advance(self.current, "skipped")

    def action_flag(self) -> None:
        if not self.busy and self.current is not None and self.check_action("flag", ()) is True:
            if not getattr(self.source, "keeps_notes", False):  # a packet: no place for a note
                self._advance(self.current, "flagged")
                return
            current = self.current
            self.app.push_screen(FlagDialog(), lambda note: self._flagged(current, note))

    def _flagged(self, current: QueueItem, note: str | None) -> None:
        """The flag dialog's answer: None (escape) leaves the place as it was."""
        if note is not None and not self.busy and self.current is current:
            self._advance(current, "flagged", note)

    @on(Button.Pressed, "#submit-button")
    def submit_pressed(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#skip-button")
    def skip_pressed(self) -> None:
        self.action_skip()

    @on(Button.Pressed, "#flag-button")
    def flag_pressed(self) -> None:
        self.action_flag()

    def _advance(self, current: QueueItem, how: str, note: str = "") -> None:
        self._stop_saving()
        self._dirty = False
        # Keys pressed in the few ms until the next comparison shows are ignored; the footer is
        # not rebuilt for that moment (a rebuild costs about 30 ms of the 100 ms budget).
        self.busy = True
        self.advance(current, how, self._snapshot(), self._version(), self._widths(), note)

    @work(thread=True, exclusive=True, group="judging-load", exit_on_error=False)
    def advance(
        self, current: QueueItem, how: str, draft: Draft, version: int, widths: tuple[int, int], note: str = ""
    ) -> None:
        """Store the judgment (or the skip or flag), then load the next place."""
        reference: str | None = None
        question: GuessQuestion | None = None
        try:
            if how == "submit":
                self.source.submit(current.key, draft)
                if current.practice:
                    reference = self.source.reference(current.key)
                question = self.source.guess_question(current.key)
            elif how == "revise":
                self.source.revise(current.key, draft)
            else:
                self.source.save_draft(current.key, draft, version)
                self.source.set_state(current.key, how, note)
        except BaseException:
            self.app.call_from_thread(self._unbusy)
            raise
        queue = self.source.queue()
        back = self._return_to if how == "revise" else None
        following = next(
            (q for q in queue if back is not None and q.key == back.key and q.state != "done"), None
        ) or next_open(queue, after=current.position)
        ready = self._prefetched
        if (
            ready is not None
            and following is not None
            and ready.current is not None
            and ready.current.key == following.key
            and tuple(w for w, _ in ready.layouts) == widths
        ):
            prepared = Prepared(following, ready.item, ready.draft, ready.layouts)
        else:
            prepared = self._prepare(following, widths)
        self._deliver(queue, prepared)
        if reference is not None and not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_reference, reference)
        if question is not None and not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._ask_guess, current.key, question)

    def _ask_guess(self, key: str, question: GuessQuestion) -> None:
        """Issue 26: the optional free-text guess after a judgment; an answer is stored apart, escape stores nothing."""
        from centaur_tui.ui.screens.dialogs import GuessDialog

        def answered(label: str | None) -> None:
            if label is not None:
                self.save_guess(key, label)

        self.app.push_screen(GuessDialog(question), answered)

    @work(thread=True, group="judging-guess", exit_on_error=False)
    def save_guess(self, key: str, label: str) -> None:
        """Store the guess (`services.judging`); it never touches the judgment."""
        self.source.save_guess(key, label)

    def _show_reference(self, text: str) -> None:
        from centaur_tui.ui.screens.dialogs import HelpDialog

        self.app.push_screen(HelpDialog(text))

    def _unbusy(self) -> None:
        self.busy = False
        self._show_missing()

    def action_prompt(self) -> None:
        if self.item is not None:
            self.app.push_screen(PromptDialog(self.item))

    def action_leave(self) -> None:
        if self.revising:  # back to where the expert was; the stored judgment stays as it is
            if not self.busy:
                self.busy = True
                self.open_place(self._return_to, self._widths())
            return
        self.flush()
        if self.standalone:
            self.app.exit()
        else:
            self.dismiss(None)
