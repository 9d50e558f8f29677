"""Provides the dialogs: assign comparisons, add an expert, read the prompt, confirm, flag, guess the author, help."""

from __future__ import annotations

import re
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.validation import Number, Regex
from textual.widgets import Button, Input, Label, Select, Static

from centaur_tui.domain.assignment import STRATEGIES
from centaur_tui.domain.blinding import JudgingItem
from centaur_tui.domain.guessing import GuessQuestion
from centaur_tui.domain.task import SLUG
from centaur_tui.ui.screens.base import CentaurModal
from centaur_tui.ui.widgets.document import DocumentView

STRATEGY_HELP = {
    "stratified": "spread over tasks, modes and candidate pairs",
    "overlap": "each comparison to K experts (expert-expert agreement)",
    "disagreement": "comparisons where the LLM judges split come first",
    "uniform-random": "a simple random sample (for prediction-powered rankings)",
    "active": "drawn with known probabilities, more where the LLM judges are unsure (no repeats)",
}


@dataclass(frozen=True)
class AssignRequest:
    """What the assign dialog asks for."""

    n: int
    strategy: str
    overlap: int
    repeat_share: float


class AssignDialog(CentaurModal):
    """Ask how many comparisons to assign to an expert, and how to choose them."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, expert_name: str) -> None:
        super().__init__()
        self.expert_name = expert_name

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Assign comparisons to {self.expert_name}", classes="dialog-title", markup=False)
            yield Label("How many")
            yield Input("20", id="assign-n", type="integer", validators=[Number(minimum=1)])
            yield Label("Strategy")
            yield Select(
                [(f"{s}: {STRATEGY_HELP[s]}", s) for s in STRATEGIES],
                value="stratified",
                allow_blank=False,
                id="assign-strategy",
            )
            yield Label("Overlap K (experts per comparison, for overlap)")
            yield Input("2", id="assign-overlap", type="integer", validators=[Number(minimum=2)])
            yield Label("Share of swapped repeats (0 to 0.5)")
            yield Input("0.1", id="assign-repeats", type="number", validators=[Number(minimum=0, maximum=0.5)])
            with Horizontal(classes="dialog-buttons"):
                yield Button("Assign", variant="primary", id="assign-ok")
                yield Button("Cancel", id="assign-cancel")

    @on(Button.Pressed, "#assign-ok")
    @on(Input.Submitted)
    def submit(self) -> None:
        inputs = [self.query_one(f"#{i}", Input) for i in ("assign-n", "assign-overlap", "assign-repeats")]
        invalid = [i for i in inputs if not i.is_valid]
        if invalid:
            invalid[0].focus()
            self.notify("Check the highlighted field.", severity="warning")
            return
        n, overlap, repeats = inputs
        strategy = self.query_one("#assign-strategy", Select).value
        self.dismiss(AssignRequest(int(n.value), str(strategy), int(overlap.value), float(repeats.value)))

    @on(Button.Pressed, "#assign-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True)
class NewExpert:
    id: str
    name: str
    tasks: tuple[str, ...]


class AddExpertDialog(CentaurModal):
    """Add an expert to the session database (the session file stays as it is)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, tasks: tuple[str, ...]) -> None:
        super().__init__()
        self.tasks = tasks

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Add an expert", classes="dialog-title")
            yield Label("Id (lowercase letters, digits, _)")
            yield Input(id="expert-id", validators=[Regex(SLUG, failure_description="lowercase id, e.g. expert_c")])
            yield Label("Display name")
            yield Input(id="expert-name", validators=[Regex(r".*\S.*", failure_description="a name is needed")])
            yield Label(f"Tasks they may judge (comma-separated; empty = all): {', '.join(self.tasks)}", markup=False)
            yield Input(id="expert-tasks")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Add", variant="primary", id="expert-ok")
                yield Button("Cancel", id="expert-cancel")

    @on(Button.Pressed, "#expert-ok")
    @on(Input.Submitted)
    def submit(self) -> None:
        ident = self.query_one("#expert-id", Input)
        name = self.query_one("#expert-name", Input)
        for field in (ident, name):
            field.validate(field.value)
            if not field.is_valid:
                field.focus()
                self.notify("Check the highlighted field.", severity="warning")
                return
        tasks = tuple(t for t in re.split(r"[,\s]+", self.query_one("#expert-tasks", Input).value) if t)
        unknown = [t for t in tasks if t not in self.tasks]
        if unknown:
            self.notify(f"Not tasks of this session: {', '.join(unknown)}", severity="warning")
            return
        self.dismiss(NewExpert(ident.value, name.value.strip(), tasks))

    @on(Button.Pressed, "#expert-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class PromptDialog(CentaurModal):
    """The task prompt and the deliverable asked for, over the judging screen."""

    EXPERT_SAFE = True

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("f2", "close", "Close", show=False),
    ]

    def __init__(self, item: JudgingItem) -> None:
        super().__init__()
        self.item = item

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog prompt-dialog"):
            yield Label(self.item.task_title, classes="dialog-title", markup=False)
            yield Static(f"Deliverable: {self.item.deliverable}", markup=False, classes="prompt-deliverable")
            yield DocumentView(self.item.task_prompt, id="prompt-text")
            yield Static("escape closes", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#prompt-text", DocumentView).focus()

    def action_close(self) -> None:
        self.dismiss(None)


class ConfirmDialog(CentaurModal):
    """A yes/no question; dismissed with True (y, or the first button) or False (n, escape, the second)."""

    EXPERT_SAFE = True

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog confirm-dialog"):
            yield Static(self.question, markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.yes} (y)", variant="primary", id="confirm-yes")
                yield Button(f"{self.no} (n)", id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()  # enter alone never overrides the question

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class FlagDialog(CentaurModal):
    """Flag a place to come back to it, with an optional note for the researcher.

    Dismissed with the note ("" for none) on enter or the Flag button, None on escape or Back.
    The note is kept through `services.judging` (`set_state`), as the HTML seat keeps its note.
    """

    EXPERT_SAFE = True

    BINDINGS = [Binding("escape", "cancel", "Back")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog confirm-dialog"):
            yield Static("Flag this comparison to come back to it after the others.", markup=False)
            yield Label("A note for the researcher (optional):", markup=False)
            yield Input(id="flag-note", max_length=2000, placeholder="what is odd about it")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Flag (enter)", variant="primary", id="flag-ok")
                yield Button("Back (escape)", id="flag-back")

    def on_mount(self) -> None:
        self.query_one("#flag-note", Input).focus()

    @on(Input.Submitted, "#flag-note")
    @on(Button.Pressed, "#flag-ok")
    def flag(self) -> None:
        self.dismiss(self.query_one("#flag-note", Input).value)

    @on(Button.Pressed, "#flag-back")
    def action_cancel(self) -> None:
        self.dismiss(None)


class GuessDialog(CentaurModal):
    """Issue 26: the optional guess after a judgment: who the expert thinks wrote option 1, in their own words.

    A free-text field and no list: the seat names no model, family or label. Enter stores the text
    (empty: don't know); escape stores nothing. The only text ever shown back is the expert's own
    last answer. The judgment is stored already; the answer never changes it.
    """

    EXPERT_SAFE = True

    BINDINGS = [Binding("escape", "cancel", "Skip the question")]

    def __init__(self, question: GuessQuestion) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        from centaur_tui.domain.guessing import MAX_GUESS_CHARS

        with Vertical(classes="dialog confirm-dialog"):
            yield Static(
                f"Your judgment is stored. Optional: {self.question.text} Your answer never changes the judgment.",
                markup=False,
            )
            yield Input(
                value=self.question.answered or "",
                placeholder="e.g. a model or a company; empty: don't know",
                max_length=MAX_GUESS_CHARS,
                id="guess-text",
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save (enter)", id="guess-save", variant="primary")
                yield Button("Skip (escape)", id="guess-skip")

    def on_mount(self) -> None:
        self.query_one("#guess-text", Input).focus()

    @on(Input.Submitted, "#guess-text")
    @on(Button.Pressed, "#guess-save")
    def chosen(self) -> None:
        self.dismiss(self.query_one("#guess-text", Input).value)

    @on(Button.Pressed, "#guess-skip")
    def action_cancel(self) -> None:
        self.dismiss(None)


def help_markdown(screen: Screen) -> str:
    """The screen's HELP text and every key that works on it now, as Markdown."""
    lines = [str(getattr(screen, "HELP", "") or "").strip(), "", "## Keys on this screen", ""]
    seen: set[str] = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not binding.description or binding.description in seen or not active.enabled:
            continue
        seen.add(binding.description)
        lines.append(f"- **{screen.app.get_key_display(binding)}**: {binding.description}")
        del key
    return "\n".join(lines)


class HelpDialog(CentaurModal):
    """The help of the screen below, in full and scrollable, over it (the side panel cut it after three keys)."""

    EXPERT_SAFE = True

    BINDINGS = [Binding("escape,f1,q", "close", "Close")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown  # markdown-it loads only when help is asked for

        with Vertical(classes="dialog help-dialog"):
            with VerticalScroll(id="help-text"):
                yield Markdown(self.text)
            yield Static("up/down/page keys scroll; escape or f1 closes", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#help-text", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
