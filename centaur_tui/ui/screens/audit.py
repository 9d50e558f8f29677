"""Provides the audit screen: every comparison and judgment behind one rank cell, down to the prompts and raw replies.

For researchers, not blinded (reached from the results screen only). Everything a model or
an expert wrote (outputs, assistance texts, rationales, prompts, replies, error messages) is
untrusted: it is cleaned of control characters and shown as `rich.text.Text`, which never
parses markup.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Header, Input, Select, Static
from textual.worker import get_current_worker

from centaur_tui.domain.blinding import clean_text
from centaur_tui.domain.study import Study
from centaur_tui.ui.screens.base import CentaurScreen
from centaur_tui.ui.widgets.footer import SteadyFooter

ALL = "*"


@dataclass(frozen=True)
class Row:
    """One line of the judgments table: a judgment, or a comparison nobody judged (judgment None)."""

    comparison: Any
    judgment: Any
    superseded: bool
    opponent: str
    outcome: str  # won, lost, tie, none (from the audited candidate's side)
    validity: str  # valid, invalid, superseded, unjudged


def outcome_of(judgment: Any, candidate: str) -> str:
    if judgment is None or not judgment.valid or judgment.winner is None:
        return "none"
    if judgment.winner == "tie":
        return "tie"
    return "won" if judgment.winner == candidate else "lost"


def rows_of(audit: Any) -> list[Row]:
    """Table rows of a `CellAudit`, comparisons in (run, id) order, judgments in stored order."""
    rows = []
    for comp in audit.comparisons:
        opponent = comp.opponent(audit.candidate)
        if not comp.judgments:
            rows.append(Row(comp, None, False, opponent, "none", "unjudged"))
        for aj in comp.judgments:
            j = aj.record
            validity = "superseded" if aj.superseded else ("valid" if j.valid else "invalid")
            rows.append(Row(comp, j, aj.superseded, opponent, outcome_of(j, audit.candidate), validity))
    return rows


def dialogue_text(turns: Any) -> str:
    """A dialogue's transcript: each question and what became of it (an answer, or the failure), in order."""
    lines = []
    for t in turns:
        lines.append(f"Q{t.turn} (worker, {t.asked_at or 'time not recorded'}): {t.question}")
        if t.outcome == "answered":
            lines.append(f"A{t.turn} (assistant, {t.answered_at or 'time not recorded'}): {t.answer}")
        else:
            lines.append(f"A{t.turn}: not answered ({t.outcome}: {t.error or 'no reason recorded'})")
    return "\n".join(lines)


def mean_text(mean: float | None) -> str:
    """A stated rubric mean as `7.25`, or `not stated` when the judgment has none (invalid, or no scores)."""
    if mean is None or mean != mean:  # NaN is the only value unequal to itself
        return "not stated"
    return f"{mean:.2f}"


def _messages_text(messages_json: str) -> str:
    try:
        messages = json.loads(messages_json)
    except ValueError:
        return messages_json
    if not isinstance(messages, list):
        return messages_json
    parts = []
    for m in messages:
        if isinstance(m, dict):
            parts.append(f"[{m.get('role', '?')}]\n{m.get('content', '')}")
        else:
            parts.append(str(m))
    return "\n\n".join(parts)


class AuditScreen(CentaurScreen):
    """The comparisons of one candidate in one task and mode, filterable, with everything each one links to.

    Args:
        study: The session.
        mode: The mode of the cell.
        task: The task of the cell.
        candidate: The candidate of the cell.
    """

    HELP = """\
## Audit trail

Every comparison of the candidate in this task and mode (all runs), one line per judgment
(invalid and superseded ones included, comparisons nobody judged too). The right pane shows
the highlighted judgment: verdict, validity, rationale and per-dimension scores, both
outputs, the assistance texts (augmentation), the exact prompts sent and the raw replies,
and the provider errors logged for those calls.

- **up / down**: move through the judgments
- **/**: search in the texts (rationale, outputs, assistance texts, replies, reasons)
- the selects filter by run, judge, outcome for the candidate, validity
- **ctrl+down / ctrl+up**: scroll the detail pane a page down / up, from anywhere on the screen
  (**shift+end / shift+home**: its end / top)
- **tab**: into the detail pane (then scroll it with the arrows, page up / page down, home / end)
- **escape**: back to the results
"""

    BINDINGS = [
        Binding("slash", "search", "Search", id="search", tooltip="Search in every text of the listed judgments."),
        Binding("escape", "back", "Back", id="back", tooltip="Back to the results."),
        # From the judgments table too (which keeps up / down / page keys for its rows); listed in F1 help.
        Binding("ctrl+down", "scroll_detail('page_down')", "Detail down", show=False),
        Binding("ctrl+up", "scroll_detail('page_up')", "Detail up", show=False),
        Binding("shift+end", "scroll_detail('end')", "Detail end", show=False),
        Binding("shift+home", "scroll_detail('home')", "Detail top", show=False),
    ]

    def __init__(
        self, study: Study, mode: str, task: str, candidate: str, comparisons: tuple[str, ...] | None = None
    ) -> None:
        super().__init__()
        self.study, self.mode, self.task_id, self.candidate = study, mode, task, candidate
        self.comparison_ids = comparisons
        """Given: these comparisons (a drill-down, a search hit), outcomes seen from `candidate` (may be empty)."""
        self.audit: Any = None
        self.rows: list[Row] = []
        self.shown: list[Row] = []

    def compose(self) -> ComposeResult:
        yield Header()
        title = (
            f"Audit: {len(self.comparison_ids)} comparison(s)"
            if self.comparison_ids is not None
            else f"Audit: {self.candidate} in {self.task_id} ({self.mode})"
        )
        yield Static(Text(title), id="audit-title", classes="screen-title")
        yield Static("", id="audit-banner", classes="simulated-banner", markup=False)
        with Horizontal(id="audit-filters"):
            yield Select([("all runs", ALL)], value=ALL, allow_blank=False, id="filter-run")
            yield Select([("all judges", ALL)], value=ALL, allow_blank=False, id="filter-judge")
            yield Select(
                [("any outcome", ALL), ("won", "won"), ("lost", "lost"), ("tie", "tie"), ("no verdict", "none")],
                value=ALL,
                allow_blank=False,
                id="filter-outcome",
            )
            yield Select(
                [
                    ("any validity", ALL),
                    ("valid", "valid"),
                    ("invalid", "invalid"),
                    ("superseded", "superseded"),
                    ("unjudged", "unjudged"),
                ],
                value=ALL,
                allow_blank=False,
                id="filter-validity",
            )
            yield Input(placeholder="search text", id="filter-search")
        with Horizontal(id="audit-body"):
            yield DataTable(id="audit-judgments", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="audit-detail-pane", can_focus=True):
                yield Static("Reading the judgments…", id="audit-detail")
        yield Static("", id="audit-status", markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        simulated = self.study.session.simulated
        banner = self.query_one("#audit-banner", Static)
        banner.update(
            "SIMULATED DATA: these texts and judgments come from the seeded simulated provider." if simulated else ""
        )
        banner.display = simulated
        table = self.query_one("#audit-judgments", DataTable)
        table.add_columns("run", "vs", "judge", "order", "winner", "valid")
        table.focus()
        self.load()

    @work(thread=True, exclusive=True, group="audit-load", exit_on_error=False)
    def load(self) -> None:
        """Read the cell's records off the event loop."""
        from centaur_tui.services.audit import cell_audit, comparisons_audit

        store = self.app.store_for(self.study)
        if self.comparison_ids is not None:
            audit, simulated = comparisons_audit(store, self.comparison_ids)
        else:
            audit, simulated = cell_audit(store, self.task_id, self.mode, self.candidate)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._loaded, audit, simulated)

    def _loaded(self, audit: Any, simulated: bool) -> None:
        self.audit = audit
        self.rows = rows_of(audit)
        banner = self.query_one("#audit-banner", Static)
        banner.display = simulated or banner.display
        runs = sorted({r.comparison.comparison.run for r in self.rows})
        judges = sorted({r.judgment.judge for r in self.rows if r.judgment is not None})
        self.query_one("#filter-run", Select).set_options([("all runs", ALL), *[(f"run {x}", str(x)) for x in runs]])
        # Judge names include expert ids typed by people: shown as Text, never as markup.
        self.query_one("#filter-judge", Select).set_options([("all judges", ALL), *[(Text(j), j) for j in judges]])
        self.apply_filters()

    # -- filters ------------------------------------------------------------------------------

    def _haystack(self, row: Row) -> str:
        comp = row.comparison
        parts = [o.text for o in comp.outputs.values()] + [a.text for a in comp.assistance.values()]
        j = row.judgment
        if j is not None:
            parts += [j.rationale or "", j.invalid_reason or "", j.judge]
            call = self.audit.calls.get(j.call_key) if j.call_key else None
            if call is not None:
                parts.append(call.response)
        return "\n".join(parts).lower()

    def _value(self, selector: str) -> str:
        value = self.query_one(selector, Select).value
        return ALL if value is Select.NULL else str(value)

    def apply_filters(self) -> None:
        run, judge = self._value("#filter-run"), self._value("#filter-judge")
        outcome, validity = self._value("#filter-outcome"), self._value("#filter-validity")
        term = self.query_one("#filter-search", Input).value.strip().lower()
        shown = [
            r
            for r in self.rows
            if (run == ALL or str(r.comparison.comparison.run) == run)
            and (judge == ALL or (r.judgment is not None and r.judgment.judge == judge))
            and (outcome == ALL or r.outcome == outcome)
            and (validity == ALL or r.validity == validity)
            and (not term or term in self._haystack(r))
        ]
        self.shown = shown
        table = self.query_one("#audit-judgments", DataTable)
        table.clear()
        for r in shown:
            j = r.judgment
            order = "" if j is None else ("first" if j.option1 == self.candidate else "second")
            winner = "" if j is None else (j.winner or "-")
            table.add_row(
                *[
                    Text(str(x))
                    for x in (
                        r.comparison.comparison.run,
                        r.opponent,
                        "(not judged)" if j is None else j.judge,
                        order,
                        winner,
                        r.validity,
                    )
                ]
            )
        total = len(self.rows)
        comps = len(self.audit.comparisons) if self.audit is not None else 0
        self.query_one("#audit-status", Static).update(
            f"{len(shown)} of {total} line(s) shown; {comps} comparison(s) of {self.candidate} in {self.task_id} "
            f"({self.mode})."
        )
        if shown:
            table.move_cursor(row=0)
            self.show_row(shown[0])
        else:
            self.query_one("#audit-detail", Static).update("No judgment matches the filters.")

    @on(Select.Changed)
    def filter_changed(self) -> None:
        if self.audit is not None:
            self.apply_filters()

    @on(Input.Changed, "#filter-search")
    def search_changed(self) -> None:
        if self.audit is not None:
            self.apply_filters()

    def action_search(self) -> None:
        self.query_one("#filter-search", Input).focus()

    # -- detail -------------------------------------------------------------------------------

    @on(DataTable.RowHighlighted, "#audit-judgments")
    def row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.shown):
            self.show_row(self.shown[event.cursor_row])

    def show_row(self, row: Row) -> None:
        self.current = row
        self.query_one("#audit-detail", Static).update(self.detail(row))
        self.query_one("#audit-detail-pane", VerticalScroll).scroll_home(animate=False)

    def detail(self, row: Row) -> Text:
        """Everything behind one line, as plain text with bold headings (no markup is parsed)."""
        out = Text()

        def head(title: str) -> None:
            if out:
                out.append("\n\n")
            out.append(title, style="bold")
            out.append("\n")

        def body(text: str | None) -> None:
            out.append(clean_text(text or "(empty)"))

        comp = row.comparison
        c = comp.comparison
        head(f"Comparison {c.id}: run {c.run}, {c.candidate_a} vs {c.candidate_b}")
        j = row.judgment
        if j is None:
            body("No judgment stored for this comparison.")
        else:
            head(
                f"Judgment {j.id} by {j.judge} ({j.judge_kind}{', family ' + j.judge_family if j.judge_family else ''})"
            )
            status = "superseded by a later revision" if row.superseded else ("valid" if j.valid else "INVALID")
            body(
                f"Shown first: {j.option1}; second: {j.option2}. Revision {j.revision}, {j.attempts} attempt(s). "
                f"Validity: {status}."
            )
            if not j.valid:
                body(f"\nReason: {j.invalid_reason or '(none given)'}")
            body(
                f"\nWinner: {j.winner or '(none)'}. Stated means: {j.option1} {mean_text(j.option1_mean)}, "
                f"{j.option2} {mean_text(j.option2_mean)}."
            )
            head("Rationale")
            body(j.rationale)
            if j.scores:
                head("Scores")
                dims: dict[str, dict[str, int]] = {}
                kinds: dict[str, str] = {}
                for s in j.scores:
                    dims.setdefault(s.dimension, {})[s.candidate] = s.score
                    kinds[s.dimension] = s.dimension_kind
                first, second = j.option1, j.option2
                width = max(len(d) for d in dims) + 2
                body(f"{'dimension':<{width}}{first[:12]:>12}  {second[:12]:>12}\n")
                body(
                    "\n".join(
                        f"{d + ('*' if kinds[d] == 'general' else ''):<{width}}{v.get(first, '-')!s:>12}  "
                        f"{v.get(second, '-')!s:>12}"
                        for d, v in dims.items()
                    )
                )
                body("\n(* general dimension)")
            self._call(out, head, body, j.call_key, "Judge prompt (exact messages sent)", "Judge raw reply")
        for cand in (c.candidate_a, c.candidate_b):
            o = comp.outputs.get(cand)
            head(f"Output of {cand}" + (f" (worker {o.worker}, {o.worker_kind})" if o is not None else ""))
            body(o.text if o is not None else "(output not stored)")
            a = comp.assistance.get(cand)
            if a is not None:
                head(f"Assistance text by {a.assistant}")
                body(a.text)
                self._call(out, head, body, a.call_key, f"Assistance prompt ({cand})", f"Assistance raw reply ({cand})")
            turns = comp.dialogues.get(cand, [])
            if turns:
                head(f"Dialogue before the deliverable ({len(turns)} question(s), in order)")
                body(dialogue_text(turns))
                for t in turns:
                    self._call(
                        out, head, body, t.answer_key, f"Answer {t.turn} prompt ({cand})", f"Answer {t.turn} reply"
                    )
            if o is not None:
                self._call(out, head, body, o.call_key, f"Output prompt ({cand})", f"Output raw reply ({cand})")
        return out

    def _call(self, out: Text, head: Any, body: Any, key: str | None, prompt_title: str, reply_title: str) -> None:
        if not key:
            return
        call = self.audit.calls.get(key)
        if call is not None:
            head(f"{prompt_title}: {call.model}, call {key[:12]}")
            body(_messages_text(call.messages_json))
            # A provider's fallback answers with another model than the one asked for: say which.
            served = f"served by {call.served_model}" if call.served_model else "served model not recorded"
            from centaur_tui.services.audit import served_flag

            flag = served_flag(call.model, call.served_model)
            if flag is not None:
                served = f"FLAGGED: {flag}"
            head(f"{reply_title} ({served}; stop reason {call.finish_reason or 'not recorded'})")
            body(call.response)
        errors = self.audit.errors.get(key, [])
        if errors:
            head(f"Provider errors of call {key[:12]} ({len(errors)})")
            body(
                "\n".join(
                    f"attempt {e.attempt}{' (final)' if e.final else ''}: {e.error_type}: {e.message}" for e in errors
                )
            )

    def action_scroll_detail(self, where: str) -> None:
        pane = self.query_one("#audit-detail-pane", VerticalScroll)
        if where == "page_down":
            pane.scroll_page_down(animate=False)
        elif where == "page_up":
            pane.scroll_page_up(animate=False)
        elif where == "end":
            pane.scroll_end(animate=False)
        else:
            pane.scroll_home(animate=False)

    def action_back(self) -> None:
        self.app.pop_screen()
