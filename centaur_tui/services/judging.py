"""Provides the judging use cases every seat calls: queue, next place, draft, submit, skip and flag, revise.

The one home of an expert judge's rules (DESIGN.md, services): a draft is stored as a
judgment only when complete (`domain.blinding.missing`); practice and gold places are judged
like comparisons but stored apart, a practice place answers with its reference verdict; a
lower-average winner is stored with whether the expert confirmed it; a correction is the next
revision (append-only); a stored judgment deletes its draft. The app's judging screen, the
HTML seat (`open_judging`), a judging packet (`PacketJudging`, `export_packet`) and
`centaur judge` all go through `JudgingSource`; the store only reads and writes the rows.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from centaur_tui.domain.blinding import Blinding, Draft, JudgingItem, QueueItem, clean_text, missing
from centaur_tui.domain.guessing import GuessQuestion
from centaur_tui.domain.records import JudgmentRecord
from centaur_tui.domain.seat import MAX_FLAG_NOTE, JudgingError, check_state, expert_record, queue_item
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.domain.study import Study
from centaur_tui.domain.task import Rubric
from centaur_tui.services.session import expert

if TYPE_CHECKING:
    from centaur_tui.store import Store
    from centaur_tui.store.checks import CheckRow, ExpertChecks
    from centaur_tui.store.guesses import GuessPlace
    from centaur_tui.store.judging import AssignedComparison, JudgingRows, StoredExpertJudgment
    from centaur_tui.store.packets import PacketExport, PacketRows

__all__ = [
    "JudgingError",
    "JudgingSource",
    "PacketJudging",
    "SessionJudging",
    "export_packet",
    "open_judging",
    "open_packet",
    "reference_text",
    "require_complete",
]


class JudgingSource(Protocol):
    """Where a seat gets an expert's queue and puts their work (the session database, or a packet file)."""

    expert_name: str
    simulated: bool
    guidelines: str | None
    """The session's expert guidelines (Markdown, identities masked); None when it has none."""
    idle_seconds: float
    """A gap between keys or clicks longer than this counts only this long as active time."""
    can_revise: bool
    """Submitted judgments can be corrected here (`submitted_before`, `submitted_draft`, `revise`)."""
    keeps_notes: bool
    """A flag may carry a note for the researcher here (`set_state(..., note=)`)."""

    def queue(self) -> list[QueueItem]:
        """The expert's places, in queue order, with their states."""
        ...

    def item(self, key: str) -> JudgingItem:
        """What to show for one place (masked, cleaned, in presented order)."""
        ...

    def draft(self, key: str) -> Draft | None:
        """Saved partial work for one place, if any."""
        ...

    def resume_key(self) -> str | None:
        """The open place worked on last (its draft saved most recently), to resume there."""
        ...

    def draft_version(self, key: str) -> int:
        """The version of a place's saved draft (0: none), for a seat that refuses saves made on an older one."""
        ...

    def save_draft(self, key: str, draft: Draft, version: int, base: int | None = None) -> bool:
        """Save partial work; whether it was stored.

        Not stored (False): a version no higher than the stored one, or, when `base` is given,
        a stored draft whose version is not `base` (0: no draft), checked in the same write
        transaction: a page or tab that loaded an older draft never overwrites a newer one.
        """
        ...

    def submit(self, key: str, draft: Draft) -> None:
        """Store a complete judgment; raises JudgingError if it is incomplete or already stored."""
        ...

    def reference(self, key: str) -> str | None:
        """The reference verdict of a judged practice place (Markdown); None for any other place."""
        ...

    def set_state(self, key: str, state: str, note: str = "") -> None:
        """Mark a place pending, skipped or flagged; a flag's note (if any) is kept for the researcher."""
        ...

    def submitted_before(self, key: str | None) -> QueueItem | None:
        """The submitted place judged just before `key`'s (None: the latest); None when there is none."""
        ...

    def submitted_draft(self, key: str) -> Draft:
        """The latest stored judgment of a submitted place, as a draft in presented order."""
        ...

    def revise(self, key: str, draft: Draft) -> None:
        """Store a corrected judgment of a submitted place as its next revision."""
        ...

    def guess_question(self, key: str) -> GuessQuestion | None:
        """Issue 26: the optional free-text guess of who wrote option 1, once the place is judged (None: not asked)."""
        ...

    def save_guess(self, key: str, label: str) -> None:
        """Store the expert's free-text guess ('': don't know) apart from the judgment, which it never changes."""
        ...

    def close(self) -> None:
        """Release what the source holds."""
        ...


def flag_note(note: object) -> str:
    """A flag's note as kept: text with control characters replaced, trimmed, cut to MAX_FLAG_NOTE ("": none)."""
    if not isinstance(note, str):
        raise JudgingError("a flag's note must be text")
    return clean_text(note).strip()[:MAX_FLAG_NOTE]


def require_complete(draft: Draft, rubric: Rubric, allow_ties: bool, min_rationale: int) -> None:
    """Raise JudgingError naming what a draft still lacks (scores, winner, rationale): the one completeness rule."""
    lacks = missing(draft, rubric, allow_ties, min_rationale)
    if lacks:
        raise JudgingError("still missing: " + ", ".join(lacks))


def reference_text(check: CheckRow) -> str | None:
    """The reference verdict of a judged practice place, in words; None for a gold check or an open place."""
    if check.kind != "practice" or not check.judged:
        return None
    intact, copy = check.intact_option, 3 - check.intact_option
    chose = {"option_1": "Option 1", "option_2": "Option 2", "tie": "a tie"}.get(check.winner or "", "no winner")
    verdict = "You found it." if check.passed else "Yours differs: look again at what the copy leaves out."
    return (
        f"## Practice comparison: the reference verdict\n\n"
        f"**Option {intact} should win.** Option {copy} is a copy of option {intact} with "
        f"{check.degradation}: the requirements those parts met are missing from it.\n\n"
        f"You chose {chose}. {verdict}\n\n"
        f"Practice comparisons are never counted. Escape goes on to the next comparison."
    )


def stored_draft(judgment: StoredExpertJudgment) -> Draft:
    """A stored expert judgment as a draft in presented order (option 1 is the judgment's option1)."""
    position = {judgment.option1: 0, judgment.option2: 1}
    scores: dict[str, list[int | None]] = {}
    for candidate, dimension, score in judgment.scores:
        scores.setdefault(dimension, [None, None])[position[candidate]] = score
    winner = {judgment.option1: "option_1", judgment.option2: "option_2"}.get(judgment.winner or "", "tie")
    return Draft(scores, winner, judgment.rationale, judgment.seconds, judgment.active_seconds)  # type: ignore[arg-type]


class SessionJudging:
    """An expert judging inside the session database (the app, or the HTML seat, on the machine holding it).

    Args:
        store: The session database.
        study: The session, for tasks, rubrics and ties.
        expert: Who is judging.
        blinding: What to mask; the session's blinding by default.
    """

    can_revise = True
    keeps_notes = True

    def __init__(self, store: Store, study: Study, expert: ExpertSpec, blinding: Blinding | None = None) -> None:
        from centaur_tui.store import ExpertChecks, session_blinding
        from centaur_tui.store.judging import JudgingRows

        self.store = store
        self.study = study
        self.expert = expert
        self.expert_name = expert.name
        self.blinding = blinding or session_blinding(study)
        self.simulated = store.meta().get("simulated", "true" if study.session.simulated else "false") == "true"
        self.min_rationale = study.session.judging.expert_min_rationale
        self.idle_seconds = float(study.session.judging.expert_idle_s)
        self.guidelines: str | None = self.blinding.mask(study.guidelines)[0] if study.guidelines else None
        self.rows: JudgingRows = JudgingRows(store, expert.id)
        self.checks: ExpertChecks = ExpertChecks(store, study, expert)
        self.masked = 0
        """Masks inserted by `item()` so far (the log keeps one row per phrase, not per occurrence)."""

    # -- the queue -------------------------------------------------------------------------

    def prepare_checks(self) -> int:
        """Make the practice and gold places the session asks for (`ExpertChecks.ensure`); how many were made."""
        return self.checks.ensure()

    def queue(self) -> list[QueueItem]:
        """The queue: practice places first, then the comparisons with the gold checks among them.

        Positions are renumbered 1..N in that order, so nothing in a place tells a gold check
        from a comparison but its opaque key, which no screen shows.
        """
        placed: list[tuple[tuple[int, int, int, int], QueueItem]] = []
        for p in self.rows.places():
            item = queue_item(str(p.id), 0, p.state, p.done, self.study.task(p.task).title)
            placed.append(((1, p.position, 0, 0), item))
        for c in self.checks.places():
            practice = c.kind == "practice"
            item = queue_item(c.token, 0, c.state, c.done, self.study.task(c.task).title, practice=practice)
            placed.append(((0, c.ordinal, 0, 0) if practice else (1, c.after_position, 1, c.ordinal), item))
        placed.sort(key=lambda p: p[0])
        return [replace(item, position=i) for i, (_, item) in enumerate(placed, start=1)]

    def next_place(self) -> QueueItem | None:
        """The place to judge next: where the expert stopped (the last draft saved), else the first open one."""
        open_items = [q for q in self.queue() if q.state != "done"]
        resume = self.resume_key()
        return next((q for q in open_items if q.key == resume), open_items[0] if open_items else None)

    def _unknown(self) -> JudgingError:
        return JudgingError(f"no such place in {self.expert.name}'s queue")

    @staticmethod
    def _assignment_id(key: str) -> int | None:
        """The assignment id a comparison's key stands for (ASCII digits only: int() also reads "٣" as 3)."""
        return int(key) if key.isascii() and key.isdigit() else None

    def _assignment(self, key: str) -> AssignedComparison:
        found = self._assignment_id(key)
        a = None if found is None else self.rows.assignment(found)
        if a is None:
            raise self._unknown()
        return a

    def _check(self, key: str) -> CheckRow:
        check = self.checks.row(key)
        if check is None:
            raise self._unknown()
        return check

    def _shown(
        self,
        task_id: str,
        key: str,
        one: str,
        two: str,
        cut_off: tuple[bool, bool] = (False, False),
        prompt: str | None = None,
    ) -> JudgingItem:
        task = self.study.task(task_id)
        return JudgingItem(
            key=key,
            task_title=task.title,
            task_prompt=clean_text(task.prompt) if prompt is None else prompt,
            deliverable=task.deliverable,
            rubric=self.study.rubric(task.id),
            option_1=one,
            option_2=two,
            allow_ties=self.study.session.judging.allow_ties,
            min_rationale=self.min_rationale,
            cut_off=cut_off,
        )

    def _present(self, text: str) -> str:
        """A deliverable cleaned and, with `[blinding] normalise_presentation`, in the one normalised layout.

        Normalised before masking, so the mask sees the words as the expert will.
        """
        from centaur_tui.domain.presentation import normalise

        cleaned = clean_text(text)
        return normalise(cleaned) if self.study.session.blinding.normalise_presentation else cleaned

    def item(self, key: str) -> JudgingItem:
        """One place as shown: task, rubric and both deliverables cleaned and masked, in presented order.

        Every masked phrase of a comparison is logged (`expert_maskings`); a practice or gold
        place is shown with the same fields, cleaning and masking.
        """
        from centaur_tui.store.masking import log_maskings

        if self.checks.owns(key):
            check = self._check(key)
            intact = self.blinding.mask(self._present(check.original))[0]
            degraded = self.blinding.mask(self._present(check.degraded))[0]
            one, two = (intact, degraded) if check.intact_option == 1 else (degraded, intact)
            return self._shown(check.task, key, one, two)
        a = self._assignment(key)
        ids = a.presented_outputs
        texts = self.rows.output_texts(ids)
        shown: list[str] = []
        log: list[tuple[int, int, str, str, int]] = []
        for option, output_id in enumerate(ids, start=1):
            text, masked = self.blinding.mask(self._present(texts[output_id][0]))
            shown.append(text)
            log.extend((a.id, option, output_id, m.term, m.occurrences) for m in masked)
            self.masked += sum(m.occurrences for m in masked)
        log_maskings(self.store, log)
        cut_off = (texts[ids[0]][1], texts[ids[1]][1])
        prompt = None
        if a.prompt:
            # A generic task's comparison shows its own question (imported data may name a model in
            # it): cleaned and masked like the deliverables.
            prompt, masked = self.blinding.mask(clean_text(a.prompt))
            self.masked += sum(m.occurrences for m in masked)
        return self._shown(a.task, key, shown[0], shown[1], cut_off, prompt)

    def reference(self, key: str) -> str | None:
        """The reference verdict of a judged practice place (Markdown); None for any other place."""
        if not self.checks.owns(key):
            return None
        check = self.checks.row(key)
        return None if check is None else reference_text(check)

    # -- drafts ----------------------------------------------------------------------------

    def draft(self, key: str) -> Draft | None:
        if self.checks.owns(key):
            return self.checks.draft(key)
        found = self._assignment_id(key)
        return None if found is None else self.rows.draft(found)

    def resume_key(self) -> str | None:
        found = self.rows.resume_id()
        return None if found is None else str(found)

    def draft_version(self, key: str) -> int:
        if self.checks.owns(key):
            return self.checks.draft_version(key)
        return self.rows.draft_version(self._assignment(key).id)

    def save_draft(self, key: str, draft: Draft, version: int, base: int | None = None) -> bool:
        if self.checks.owns(key):
            # False also for an older version, another base or a judged check (as for comparisons).
            saved = self.checks.save_draft(key, draft, version, base)
            if not saved and self.checks.row(key) is None:
                raise self._unknown()
            return saved
        return self.rows.save_draft(self._assignment(key).id, draft, version, base)

    # -- submitting ------------------------------------------------------------------------

    def _record(self, a: AssignedComparison, draft: Draft) -> JudgmentRecord:
        """The judgment record of a complete draft for this place (JudgingError when incomplete)."""
        rubric = self.study.rubric(a.task)
        require_complete(draft, rubric, self.study.session.judging.allow_ties, self.min_rationale)
        first, second = a.presented_candidates
        return expert_record(a.comparison_id, self.expert.id, a.presentation, first, second, rubric, draft)

    def submit(self, key: str, draft: Draft) -> None:
        """Store a complete judgment and delete its draft; a practice or gold verdict is stored apart.

        Raises:
            JudgingError: the place is not the expert's, the draft is incomplete, or it is judged already.
        """
        if self.checks.owns(key):
            check = self._check(key)
            rubric = self.study.rubric(check.task)
            require_complete(draft, rubric, self.study.session.judging.allow_ties, self.min_rationale)
            if not self.checks.store_verdict(key, draft, passed=draft.winner == f"option_{check.intact_option}"):
                raise JudgingError("this comparison is already judged; the stored judgment is kept")
            self.refill()
            return
        a = self._assignment(key)
        if not self.rows.store_judgment(a.id, self._record(a, draft)):
            raise JudgingError("this comparison is already judged; the stored judgment is kept")
        self.refill()

    def refill(self) -> bool:
        """Draw the next comparison by active allocation when the expert has none pending and the session says so.

        Active when `[judging] expert_next = "active"` or the expert's latest place was drawn
        actively (`services.assign.refills_actively`); the draw's probability is stored with the
        place. Whether a place was added (False: not active, places still pending, or nothing
        left that the expert may judge).
        """
        from centaur_tui.services.assign import draw_next, refills_actively

        if any(not p.done and p.state == "pending" for p in self.rows.places()):
            return False
        if not refills_actively(self.study, self.store, self.expert.id):
            return False
        return draw_next(self.study, self.store, self.expert.id) is not None

    def _guess_place(self, key: str) -> tuple[AssignedComparison, GuessPlace] | None:
        """The place and its task, mode and candidates, when this place is drawn for the guess (else None)."""
        from centaur_tui.domain.guessing import asks_guess
        from centaur_tui.store.guesses import guess_place
        from centaur_tui.store.packets import session_secret

        share = self.study.session.blinding.guess_share
        found = self._assignment_id(key)
        if share <= 0 or self.checks.owns(key) or found is None:
            return None
        secret = session_secret(self.store)
        if secret is None or not asks_guess(secret, self.expert.id, found, share):
            return None
        a = self._assignment(key)
        place = guess_place(self.store, a.id, a.presented_candidates)
        if place is None or len(place.candidates) < 2:
            return None
        return a, place

    def guess_question(self, key: str) -> GuessQuestion | None:
        """The free-text guess after a judgment, on the places drawn by `[blinding] guess_share` (None: not asked).

        Asked only once the place is judged; `answered` is the expert's own last text, if any (the
        only thing echoed back: never a candidate, a label or what the text matched).
        """
        from centaur_tui.store.guesses import guess_records

        drawn = self._guess_place(key)
        if drawn is None or self.rows.latest_judgment(drawn[0]) is None:
            return None
        a = drawn[0]
        given = [
            g.label for g in guess_records(self.store, self.expert.id) if g.assignment_id == a.id and g.option == 1
        ]
        return GuessQuestion(1, given[-1] if given else None)

    def save_guess(self, key: str, label: str) -> None:
        """Store a free-text guess apart from the judgment (a second answer is a new row; the newest counts).

        The text is cleaned (control characters out, cut to `MAX_GUESS_CHARS`) and matched against
        the comparison's candidates with the masking's matcher (domain.guessing).

        Raises:
            JudgingError: the place is not drawn for a guess, not judged yet, or the guess is not text.
        """
        from centaur_tui.domain.guessing import GuessMatcher, clean_guess, score_guess, suspects
        from centaur_tui.store.guesses import GuessRecord
        from centaur_tui.store.guesses import save_guess as store_guess

        drawn = self._guess_place(key)
        if drawn is None:
            raise JudgingError("no guess is asked on this place")
        a, place = drawn
        if self.rows.latest_judgment(a) is None:
            raise JudgingError("the guess comes after the judgment: judge this comparison first")
        if not isinstance(label, str):
            raise JudgingError("the guess must be text (empty: don't know)")
        text = clean_guess(label)
        pool = suspects(self.study.session, place.mode, place.candidates)
        truth = next(s for s in pool if s.name == place.presented[0])
        families = len({s.family or s.name for s in pool})
        found = GuessMatcher(pool).match(text)
        outcome, family_outcome = score_guess(found, truth, families)
        guessed = next(iter(found.candidates)) if len(found.candidates) == 1 else None
        record = GuessRecord(
            a.id, self.expert.id, 1, text, guessed, truth.name, len(pool), families, outcome, family_outcome
        )
        store_guess(self.store, record)

    def set_state(self, key: str, state: str, note: str = "") -> None:
        """Mark a place pending, skipped or flagged (JudgingError: an unknown state or place).

        A flag's note (control characters replaced, cut to `MAX_FLAG_NOTE` characters) is kept
        in `expert_flag_notes` for the researcher (the report's seat section); a blank note adds
        nothing, and a note with any other state is refused.
        """
        place_state = check_state(state)
        text = flag_note(note)
        if text and place_state != "flagged":
            raise JudgingError("only a flag takes a note")
        if self.checks.owns(key):
            if not self.checks.set_state(key, place_state):
                raise self._unknown()
        elif not self.rows.set_state(self._assignment(key).id, place_state):
            raise self._unknown()
        if text:
            self.rows.add_flag_note(key, text)
        if place_state != "pending":
            # Skipping or flagging the last pending place also finishes the queue. The skipped
            # active place cuts that expert's sequence for the estimate until it is judged.
            self.refill()

    def flag_notes(self, key: str) -> list[str]:
        """The expert's notes on a place they flagged, oldest first."""
        return self.rows.flag_notes(key)

    # -- revising a submitted judgment -----------------------------------------------------

    def submitted_before(self, key: str | None) -> QueueItem | None:
        """The expert's submitted place judged (latest revision stored) just before `key`'s, or the latest one.

        Stepping back from the latest submission: ctrl+z on the judging screen.
        """
        keys = [str(i) for i in self.rows.judged_latest_first()]
        following = keys.index(key) + 1 if key in keys else 0
        if following >= len(keys):
            return None
        return next((q for q in self.queue() if q.key == keys[following]), None)

    def submitted_draft(self, key: str) -> Draft:
        """The latest stored judgment of a submitted place, as a draft in presented order (to revise it)."""
        latest = self.rows.latest_judgment(self._assignment(key))
        if latest is None:
            raise JudgingError("this comparison has no stored judgment to revise")
        return stored_draft(latest)

    def revise(self, key: str, draft: Draft) -> None:
        """Store a corrected judgment of a submitted place: the next revision, which supersedes the earlier ones.

        The earlier revisions stay in the database (append-only); the statistics use the
        latest (the others get the status `superseded`).
        """
        a = self._assignment(key)
        latest = self.rows.latest_judgment(a)
        if latest is None:
            raise JudgingError("this comparison has no stored judgment to revise")
        record = replace(self._record(a, draft), revision=latest.revision + 1)
        if self.store.save_judgment(record) is None:
            raise JudgingError("this revision is already stored; the stored judgment is kept")

    def close(self) -> None:
        """The store belongs to the caller; nothing to release here."""


def open_judging(study: Study, store: Store, expert_id: str) -> SessionJudging:
    """An expert's judging queue in the session database (what the judging screen and the HTML seat use).

    Makes the practice and gold places the session asks for first.

    Raises:
        CentaurError: no such expert.
    """
    source = SessionJudging(store, study, expert(study, store, expert_id))
    source.prepare_checks()  # practice and gold places (judging.expert_practice, expert_gold_rate)
    source.refill()  # an expert who came back to a finished queue under active allocation
    return source


# -- judging packets ---------------------------------------------------------------------------


class PacketJudging:
    """An expert judging from a packet file, on any machine (`centaur judge`); results are written into the file.

    The same rules as in the session: a result is stored only when complete, once; the
    session checks every result again when the packet is merged back (`import_packet`).
    A packet cannot revise a submitted judgment (its results are not the session's yet).

    Args:
        path: The packet file from `centaur packet export`.
    """

    can_revise = False
    keeps_notes = False
    """A packet has no place for a flag's note (its format is fixed by PACKET_VERSION)."""

    def __init__(self, path: Path) -> None:
        from centaur_tui.store.packets import PacketRows

        self.rows: PacketRows = PacketRows(path)
        meta = self.rows.meta
        self.expert_name = meta.expert_name
        self.simulated = meta.simulated
        self.allow_ties = meta.allow_ties
        self.min_rationale = meta.min_rationale
        self.guidelines = meta.guidelines
        """The session's expert guidelines as exported (masked there); None: the session has none."""
        self.idle_seconds = meta.idle_seconds

    def queue(self) -> list[QueueItem]:
        return [queue_item(p.token, p.position, p.state, p.done, p.task_title) for p in self.rows.places()]

    def item(self, key: str) -> JudgingItem:
        r = self.rows.item(key)
        if r is None:
            raise JudgingError("no such place in this packet")
        # A packet may have travelled: clean its texts again rather than trust the file.
        return JudgingItem(
            key=key,
            task_title=r.task_title,
            task_prompt=clean_text(r.task_prompt),
            deliverable=r.deliverable,
            rubric=r.rubric,
            option_1=clean_text(r.option_1),
            option_2=clean_text(r.option_2),
            allow_ties=self.allow_ties,
            min_rationale=self.min_rationale,
            cut_off=r.cut_off,
        )

    def draft(self, key: str) -> Draft | None:
        return self.rows.draft(key)

    def resume_key(self) -> str | None:
        return self.rows.resume_token()

    def draft_version(self, key: str) -> int:
        return self.rows.draft_version(key)

    def save_draft(self, key: str, draft: Draft, version: int, base: int | None = None) -> bool:
        if not self.rows.has(key):
            raise JudgingError("no such place in this packet")
        return self.rows.save_draft(key, draft, version, base)

    def submit(self, key: str, draft: Draft) -> None:
        item = self.item(key)
        require_complete(draft, item.rubric, item.allow_ties, item.min_rationale)
        if not self.rows.store_result(key, draft):
            raise JudgingError("this comparison is already judged; the stored judgment is kept")

    def reference(self, key: str) -> str | None:
        return None  # a packet holds comparisons only: practice stays in the app

    def set_state(self, key: str, state: str, note: str = "") -> None:
        place_state = check_state(state)
        if flag_note(note):
            raise JudgingError("a judging packet keeps no flag notes; flag in the session's app to leave one")
        if not self.rows.set_state(key, place_state):
            raise JudgingError("no such place in this packet")

    def submitted_before(self, key: str | None) -> QueueItem | None:
        return None

    def submitted_draft(self, key: str) -> Draft:
        raise JudgingError("a judging packet cannot revise a submitted judgment; revise it in the session's app")

    def revise(self, key: str, draft: Draft) -> None:
        raise JudgingError("a judging packet cannot revise a submitted judgment; revise it in the session's app")

    def guess_question(self, key: str) -> GuessQuestion | None:
        """No guess from a packet: the draw comes from the session secret, which a packet never holds."""
        return None

    def save_guess(self, key: str, label: str) -> None:
        """Refused: a packet asks no guess."""
        raise JudgingError("a judging packet asks no guess")

    def close(self) -> None:
        self.rows.close()


def open_packet(file: Path) -> PacketJudging:
    """A packet file as a judging source for the app (the caller closes it); results are saved into the file.

    Raises:
        PacketError: the file is not a readable judging packet of this program's version.
    """
    return PacketJudging(file)


def export_packet(
    store: Store, study: Study, who: ExpertSpec, out: Path, blinding: Blinding | None = None
) -> PacketExport:
    """Write a judging packet of an expert's open comparisons, shown exactly as the app would show them.

    Practice and gold places stay in the app: a packet holds the expert's comparisons only.

    Raises:
        PacketError: the file exists, or the expert has nothing open.
    """
    from centaur_tui.store.packets import PacketError, PacketPlace, write_packet

    if out.exists():
        raise PacketError(f"{out} already exists; choose another file name")
    judging = SessionJudging(store, study, who, blinding)
    open_items = [q for q in judging.queue() if q.state != "done" and not judging.checks.owns(q.key)]
    if not open_items:
        raise PacketError(f"{who.id} has no open assignments; run `centaur assign` first")
    places = [
        PacketPlace(int(q.key), judging.item(q.key), q.state if q.state != "done" else "pending", judging.draft(q.key))
        for q in open_items
    ]
    return write_packet(
        store,
        study,
        who,
        out,
        places,
        min_rationale=judging.min_rationale,
        simulated=judging.simulated,
        idle_seconds=judging.idle_seconds,
        guidelines=judging.guidelines,
        maskings=judging.masked,
    )
