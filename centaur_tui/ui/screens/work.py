"""Provides the work screen: an expert writes deliverables, reading a masked assistance text (or none).

Nothing here names the assistant: the screen shows the task prompt, the assistance text with
identity phrases masked (`services.writing.SessionWork.item`), and the editor. The draft is saved 0.5 s after
the last change, at once when the expert moves to another task, leaves or quits, and is
restored on return; submitting asks for confirmation, then locks it and stores it as an output.
Time on task, edits (changes of the text), pastes and the final length are stored with it.
A submitted deliverable can be read again (ctrl+o, `SubmittedView`), never edited.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from centaur_tui.ui.screens.base import CentaurModal, CentaurScreen
from centaur_tui.ui.screens.drafts import DraftAutosave
from centaur_tui.ui.widgets.document import DocumentView
from centaur_tui.ui.widgets.footer import SteadyFooter

if TYPE_CHECKING:
    from centaur_tui.services.live_assistant import LiveAssistant, LiveState
    from centaur_tui.services.writing import WorkDraft, WorkItem, WorkQueueItem, WorkSource

"""Seconds after the last change before a draft is saved (a burst of typing saves once)."""

PLAIN_NOTE = "No assistance text for this task: write the deliverable on your own."


def format_seconds(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes:02d}:{secs:02d}"


class DeliverableEditor(TextArea):
    """The deliverable editor: a TextArea that reports pastes (counted as a productivity measure)."""

    @dataclass
    class Pasted(Message):
        characters: int

    # Textual calls `_on_paste` of every class in the MRO: TextArea's inserts the text after this.
    async def _on_paste(self, event: events.Paste) -> None:
        if not self.read_only and event.text:
            self.post_message(self.Pasted(len(event.text)))


class ConfirmSubmit(CentaurModal):
    """Ask before a deliverable is locked."""

    EXPERT_SAFE = True

    BINDINGS = [
        Binding("y", "answer(True)", "Submit"),
        Binding("n,escape", "answer(False)", "Keep editing"),
    ]

    def __init__(self, words: int) -> None:
        super().__init__()
        self.words = words

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Submit this deliverable?", classes="dialog-title")
            yield Static(f"{self.words} words. Once submitted it is locked and cannot be changed.", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Submit (y)", variant="primary", id="confirm-yes")
                yield Button("Keep editing (n)", id="confirm-no")

    @on(Button.Pressed, "#confirm-yes")
    def yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#confirm-no")
    def no(self) -> None:
        self.dismiss(False)

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


SUBMITTED_MARK = "SUBMITTED · read only: a submitted deliverable is locked and cannot be changed."


class SubmittedView(CentaurScreen):
    """Read the expert's submitted deliverables: the submitted tasks, and the text of the highlighted one, read only.

    Args:
        source: The expert's work queue (`centaur_tui.services.work.open_work`, rules in `services.writing`).
        items: The submitted places of the queue (`locked`), in queue order.
    """

    EXPERT_SAFE = True

    HELP = """\
## Submitted deliverables

Read what you submitted, as you wrote it. Submitted deliverables are locked: nothing here
can change them.

- **up / down**: the submitted tasks
- **tab**: into the deliverable (then scroll it with the arrows, page up / page down)
- **escape**: back to writing
"""

    BINDINGS = [Binding("escape", "back", "Back", id="back", tooltip="Back to writing.")]

    def __init__(self, source: WorkSource, items: list[WorkQueueItem]) -> None:
        super().__init__()
        self.source = source
        self.items = items
        self.shown_key: int | None = None

    def compose(self) -> ComposeResult:
        yield Static(SUBMITTED_MARK, id="submitted-mark", markup=False)
        with Horizontal(id="submitted-body"):
            yield OptionList(
                *[Option(f"{n}. {i.task_title}", id=str(i.key)) for n, i in enumerate(self.items, start=1)],
                id="submitted-list",
            )
            yield DocumentView(id="submitted-text", classes="work-pane")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.query_one("#submitted-text").border_title = "Submitted deliverable (read only)"
        options = self.query_one("#submitted-list", OptionList)
        options.focus()
        if self.items:
            options.highlighted = 0
            self.read(self.items[0].key)

    @on(OptionList.OptionHighlighted, "#submitted-list")
    def highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id is not None:
            self.read(int(event.option.id))

    @work(thread=True, exclusive=True, group="submitted-read", exit_on_error=False)
    def read(self, key: int) -> None:
        """The stored text of one submitted deliverable, read off the event loop."""
        draft = self.source.draft(key)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_text, key, draft.text if draft is not None else "")

    def _show_text(self, key: int, text: str) -> None:
        self.shown_key = key
        title = next((i.task_title for i in self.items if i.key == key), "")
        self.query_one("#submitted-text").border_title = f"{title}: submitted (read only)"
        self.query_one("#submitted-text", DocumentView).set_text(text or "(empty)")

    def action_back(self) -> None:
        self.dismiss(None)


class AskAssistant(CentaurModal):
    """Ask your assistant (issue 28): the questions and answers so far, and a question to send.

    The question goes to this process's `LiveAssistant` (the app that runs the session makes the
    call, with the session's limits and budget); answers are shown masked, as plain text. Nothing
    here names the model: it is "your assistant".

    Args:
        assistant: The expert's live assistant (`SessionWork.assistant()`).
        key: The work assignment written now.
    """

    EXPERT_SAFE = True

    DEFAULT_CSS = """
    AskAssistant > Vertical {
        width: 90%;
        height: 80%;
        border: round $accent;
        padding: 0 1;
    }
    AskAssistant #ask-transcript {
        height: 1fr;
    }
    """

    BINDINGS = [Binding("escape", "close", "Back to writing", id="ask-close", tooltip="Back to your deliverable.")]

    def __init__(self, assistant: LiveAssistant, key: int) -> None:
        super().__init__()
        self.assistant = assistant
        self.key = key
        self.asking = False
        self.state: LiveState | None = None

    def compose(self) -> ComposeResult:
        from centaur_tui.services.live_assistant import MAX_QUESTION

        with Vertical():
            yield Label("Ask your assistant: process guidance only, never the deliverable itself.", id="ask-title")
            with VerticalScroll(id="ask-transcript"):
                yield Static("", id="ask-turns", markup=False)
            yield Static("", id="ask-left", markup=False)
            yield Input(placeholder="Your question (enter sends it)", id="ask-question", max_length=MAX_QUESTION)
            yield SteadyFooter()

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="ask-load", exit_on_error=False)
    def load(self) -> None:
        state = self.assistant.state(self.key)
        self.app.call_from_thread(self._show, state, None)

    def _show(self, state: LiveState, note: str | None) -> None:
        self.state = state
        lines = []
        for t in state.turns:
            lines.append(f"You ({t.asked_at}): {t.question}")
            lines.append(f"Your assistant ({t.answered_at}): {t.answer}" if t.answer is not None else f"({t.error})")
            lines.append("")
        self.query_one("#ask-turns", Static).update("\n".join(lines) or "No question asked yet.")
        left = f"{state.left} of {state.limit} question(s) left." if state.offered else "No assistant for this task."
        self.query_one("#ask-left", Static).update(left + (f" {note}" if note else ""))
        field = self.query_one("#ask-question", Input)
        field.disabled = not state.offered or state.left == 0 or self.asking
        if not field.disabled:
            field.focus()

    @on(Input.Submitted, "#ask-question")
    def send_question(self) -> None:
        field = self.query_one("#ask-question", Input)
        if self.asking or not field.value.strip():
            if not field.value.strip():
                self.notify("Write a question first.", title="Nothing to ask", severity="warning")
            return
        self.asking = True
        field.disabled = True
        self.query_one("#ask-left", Static).update("Asking your assistant…")
        self.ask(field.value)

    @work(thread=True, exclusive=True, group="ask", exit_on_error=False)
    def ask(self, question: str) -> None:
        """Send the question from a thread (the call and the database work never run on the UI's loop)."""
        from centaur_tui.domain.errors import CentaurError

        note: str | None = None
        try:
            turn = self.assistant.ask_blocking(self.key, question)
            note = "Answered." if turn.answer is not None else turn.error
            cleared = True
        except CentaurError as exc:
            self.app.call_from_thread(self.notify, str(exc), title=exc.title, severity="warning")
            cleared = False
        state = self.assistant.state(self.key)
        self.app.call_from_thread(self._asked, state, note, cleared)

    def _asked(self, state: LiveState, note: str | None, cleared: bool) -> None:
        self.asking = False
        if cleared:
            self.query_one("#ask-question", Input).value = ""
        self._show(state, note)

    def action_close(self) -> None:
        self.dismiss(None)


class WorkScreen(DraftAutosave, CentaurScreen):
    """Write an expert's assigned deliverables, one task at a time.

    Args:
        source: The expert's work queue (`centaur_tui.services.work.open_work`, rules in `services.writing`).
    """

    EXPERT_SAFE = True

    HELP = """\
## Writing a deliverable

Read the task and the assistance text (if any), then write the deliverable in Markdown.
Your work is saved as you type; leaving or quitting loses nothing.

- **ctrl+s**: submit (asks first; a submitted deliverable is locked)
- **ctrl+b**: next task (this draft is kept)
- **f2**: move between the task, the assistance text and the editor
- **f6**: ask your assistant a question about how to approach the task (when the session offers
  questions and the task has an assistance text); it answers with process guidance, never the deliverable
- **ctrl+o**: read your submitted deliverables (read only)
- **escape**: back; your draft is kept
- Paste with ctrl+v (or your terminal's paste); ctrl+backspace deletes a word
- In a web browser, write through the personal link the researcher sends (`centaur serve`): the
  same tasks, as a web page
"""

    SAVE_DELAY = 0.5

    BINDINGS = [
        Binding("ctrl+s", "submit", "Submit", id="submit", tooltip="Lock this deliverable and store it."),
        # Not ctrl+n: the HTML seat's browser keeps it (a new window), and both seats keep the same keys.
        Binding("ctrl+b", "next", "Next task", id="next", tooltip="Go to your next open task; this draft is kept."),
        Binding("f2", "cycle_focus", "Switch pane", id="cycle", tooltip="Task, assistance text, editor."),
        Binding(
            "f6",
            "ask",
            "Ask assistant",
            id="ask",
            priority=True,
            tooltip="Ask your assistant a question (assisted tasks).",
        ),
        Binding(
            "ctrl+o", "submitted", "Submitted", id="submitted", tooltip="Read your submitted deliverables (read only)."
        ),
        # Priority: the editor (tab indents) would otherwise take escape to release its focus.
        Binding("escape", "leave", "Back", id="leave", priority=True, tooltip="Leave; your draft is kept."),
    ]

    def __init__(self, source: WorkSource) -> None:
        super().__init__()
        self.source = source
        self.queue: list[WorkQueueItem] = []
        self.current: WorkQueueItem | None = None
        self.item: WorkItem | None = None
        self.draft: WorkDraft | None = None
        self.busy = True
        self.finished = False
        self._shown_at = 0.0
        self._base_seconds = 0.0

    def compose(self) -> ComposeResult:
        yield Static("", id="work-bar", markup=False)
        yield Static("", id="work-task", markup=False)
        if self.source.simulated:
            yield Static(
                "SIMULATED DATA: the assistance texts come from the simulated provider.",
                classes="simulated-banner",
                markup=False,
            )
        with Horizontal(id="work-body"):
            with Vertical(id="work-read"):
                yield DocumentView(id="work-prompt", classes="work-pane")
                yield DocumentView(id="work-assistance", classes="work-pane")
            yield DeliverableEditor(
                id="work-editor",
                soft_wrap=True,
                tab_behavior="indent",
                show_line_numbers=False,
                placeholder="Write the deliverable here (Markdown).",
            )
        yield Static("", id="work-done", markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.query_one("#work-prompt").border_title = "Task"
        self.query_one("#work-assistance").border_title = "Assistance text"
        self.query_one("#work-editor").border_title = "Your deliverable"
        self.query_one("#work-done").display = False
        self.set_interval(1.0, self._show_bar)
        self.open_next(None)

    # -- loading -------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="work-load", exit_on_error=False)
    def open_next(self, after: int | None) -> None:
        """Open the first open task after position `after` (wrapping), or the first open one."""
        from centaur_tui.services.writing import WorkDraft

        queue = self.source.queue()
        open_items = [q for q in queue if not q.locked]
        later = [q for q in open_items if after is not None and q.position > after]
        current = (later or open_items or [None])[0]
        item = self.source.item(current.key) if current is not None else None
        draft = (self.source.draft(current.key) or WorkDraft()) if current is not None else None
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, queue, current, item, draft)

    def _show(
        self, queue: list[WorkQueueItem], current: WorkQueueItem | None, item: WorkItem | None, draft: WorkDraft | None
    ) -> None:
        self.queue, self.current, self.item, self.draft = queue, current, item, draft
        self.finished = current is None
        self.query_one("#work-body").display = not self.finished
        done = self.query_one("#work-done", Static)
        done.display = self.finished
        self.busy = False
        if item is None or draft is None:
            done.update(
                f"All {len(queue)} task(s) are submitted. Thank you, {self.source.expert_name}."
                if queue
                else "No tasks are assigned to you yet. Ask the researcher to run assign-work."
            )
            self.query_one("#work-task", Static).update("")
            self._show_bar()
            self.refresh_bindings()
            return
        self._shown_at = self.app.clock()
        self._base_seconds = draft.seconds
        self.query_one("#work-task", Static).update(f"Task: {item.task_title}. Deliverable: {item.deliverable}")
        self.query_one("#work-prompt", DocumentView).set_text(item.task_prompt)
        self.query_one("#work-assistance", DocumentView).set_text(item.assistance if item.assistance else PLAIN_NOTE)
        editor = self.query_one("#work-editor", DeliverableEditor)
        if editor.text != draft.text:
            editor.load_text(draft.text)
        editor.focus()
        editor.move_cursor(editor.document.end)
        self._show_bar()
        self.refresh_bindings()

    # -- status --------------------------------------------------------------------------------

    @property
    def seconds(self) -> float:
        if self.item is None:
            return 0.0
        return self._base_seconds + max(0.0, self.app.clock() - self._shown_at)

    @property
    def words(self) -> int:
        from centaur_tui.services.writing import word_count

        return word_count(self.draft.text) if self.draft is not None else 0

    def _show_bar(self) -> None:
        parts = [self.source.expert_name]
        submitted = sum(q.locked for q in self.queue)
        if self.current is not None:
            place = next(i for i, q in enumerate(self.queue, start=1) if q.key == self.current.key)
            parts.append(f"task {place} of {len(self.queue)}")
        parts.append(f"{submitted} submitted")
        if self.item is not None:
            parts.append(f"{self.words} words")
            parts.append(f"time on task {format_seconds(self.seconds)}")
        self.query_one("#work-bar", Static).update(" · ".join(parts), layout=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "ask":  # shown only where a question can be asked: an assisted, open task
            if self.finished or self.item is None or not self.item.assistance or self._assistant() is None:
                return False
            return True if self.draft is not None and not self.draft.locked else None
        if action == "submitted":
            return True if any(q.locked for q in self.queue) else None
        if action in ("submit", "next", "cycle_focus"):
            if self.finished or self.item is None:
                return False
            if action == "submit":
                return True if self.draft is not None and self.draft.text.strip() else None
            if action == "next":
                return True if sum(not q.locked for q in self.queue) > 1 else None
        return True

    # -- typing --------------------------------------------------------------------------------

    @on(TextArea.Changed, "#work-editor")
    def text_changed(self, event: TextArea.Changed) -> None:
        text = event.text_area.text
        if self.item is None or self.draft is None or text == self.draft.text:
            return  # a loaded draft, not typing
        had_text = bool(self.draft.text.strip())
        self.draft.text = text
        self.draft.edits += 1
        self._changed()
        if had_text != bool(text.strip()):
            self.refresh_bindings()

    @on(DeliverableEditor.Pasted)
    def pasted(self) -> None:
        if self.draft is not None:
            self.draft.pastes += 1
            self._changed()

    def _changed(self) -> None:
        self._show_bar()
        self._draft_changed()

    def _snapshot(self) -> WorkDraft:
        assert self.draft is not None
        return replace(self.draft, seconds=round(self.seconds, 1))

    def _can_save(self) -> bool:
        return self.current is not None and self.draft is not None and not self.draft.locked

    # -- moving on -----------------------------------------------------------------------------

    def action_submit(self) -> None:
        if self.busy or self.check_action("submit", ()) is not True:
            if self.draft is not None and not self.draft.text.strip():
                self.notify("The deliverable is empty.", title="Not complete yet", severity="warning")
            return
        self.flush()

        def answer(ok: bool | None) -> None:
            if ok and self.current is not None:
                self.busy = True
                self.submit(self.current.key, self.current.position, self._snapshot(), self._version())

        self.app.push_screen(ConfirmSubmit(self.words), callback=answer)

    @work(thread=True, exclusive=True, group="work-load", exit_on_error=False)
    def submit(self, key: int, position: int, draft: WorkDraft, version: int) -> None:
        """Lock and store the deliverable, then open the next task."""
        try:
            self.source.submit(key, draft, version)
        except BaseException:
            self.app.call_from_thread(setattr, self, "busy", False)
            raise
        self.app.call_from_thread(self.notify, "Deliverable submitted.", title="Submitted")
        self.app.call_from_thread(self.open_next, position)

    def action_next(self) -> None:
        if self.busy or self.check_action("next", ()) is not True or self.current is None:
            return
        self.flush()
        self.busy = True
        self.open_next(self.current.position)

    def action_submitted(self) -> None:
        submitted = [q for q in self.queue if q.locked]
        if self.busy or not submitted:
            return
        self.flush()
        self.app.push_screen(SubmittedView(self.source, submitted))

    def _assistant(self) -> LiveAssistant | None:
        make = getattr(self.source, "assistant", None)  # a source without one (a test double) offers no questions
        assistant: LiveAssistant | None = make() if callable(make) else None
        return assistant if assistant is not None and assistant.limit > 0 else None

    def action_ask(self) -> None:
        assistant = self._assistant()
        if self.busy or self.current is None or assistant is None or self.check_action("ask", ()) is not True:
            return
        self.flush()  # the draft is saved before the dialogue: nothing lives only in memory
        self.app.push_screen(AskAssistant(assistant, self.current.key))

    def action_cycle_focus(self) -> None:
        panes = [self.query_one("#work-prompt"), self.query_one("#work-assistance"), self.query_one("#work-editor")]
        index = next((i for i, p in enumerate(panes) if p is self.focused), -1)
        panes[(index + 1) % len(panes)].focus()

    def action_leave(self) -> None:
        self.flush()
        self.dismiss(None)
