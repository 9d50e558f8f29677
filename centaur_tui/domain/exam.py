"""Provides the admission exam's planted flaws: a deliverable's copy with one seeded, checkable flaw, and the exam plan.

A judge of the panel is shown a deliverable against a copy of itself with exactly one flaw
planted, in both orders; the intact one should win both times (position-consistent). Three
kinds of flaw, each checkable against the task:

- `wrong_number`: one number of the deliverable (not a list marker) is changed to a wrong value;
- `dropped_requirement`: every line naming one of the task's requirements is removed;
- `contradicted_constraint`: after a line naming a requirement, a sentence saying that the
  requirement does not apply is inserted (the copy keeps all its content and is longer).

A kind that cannot be planted in a deliverable (no number, no requirement named, an empty
text) is *not applicable* there, with its reason; the plan says how many slots of each (task,
kind) stayed not applicable, never dropping them silently. Everything is a pure function of
the seed: the same outputs and seed give the same plan.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from centaur_tui.domain.plan import digest
from centaur_tui.domain.task import Task

FLAW_KINDS = ("wrong_number", "dropped_requirement", "contradicted_constraint")
"""Every kind of planted flaw, in report order."""

_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w])")
_LIST_MARKER = re.compile(r"^\s*\d+[.)]\s")
_WORD = re.compile(r"[a-z]{5,}")
_MIN_SHARED_WORDS = 3
"""A line names a requirement without its label when it shares this many words of 5+ letters with its text."""

CONTRADICTION = "Note: {label} does not apply to this case and can be ignored."
"""The sentence a `contradicted_constraint` copy inserts after the line naming the requirement."""


@dataclass(frozen=True)
class Planted:
    """A copy of a deliverable with one flaw, and where it is (for the report and the audit)."""

    kind: str
    text: str
    line: int
    """1-based line of the original where the flaw is (the changed, removed or preceding line)."""
    description: str
    requirement: str | None = None


@dataclass(frozen=True)
class NotApplicable:
    """Why a kind of flaw cannot be planted in one deliverable."""

    kind: str
    reason: str


@dataclass(frozen=True)
class ExamSource:
    """One stored deliverable the exam may plant flaws in."""

    output_id: str
    task: str
    mode: str
    candidate: str
    text: str


@dataclass(frozen=True)
class ExamPair:
    """One slot of the exam plan: a planted pair, or a slot no deliverable of the task could fill."""

    id: str
    task: str
    kind: str
    slot: int
    output_id: str | None
    flawed: str | None
    line: int | None
    description: str
    requirement: str | None = None

    @property
    def applicable(self) -> bool:
        return self.output_id is not None and self.flawed is not None


def _wrong(value: str, decimals: str | None, rng: random.Random) -> str:
    """A different value in the same format: 10-50 % off, at least 1 (never negative)."""
    n = int(value.replace(",", ""))
    step = max(1, round(n * rng.choice((0.1, 0.2, 0.25, 0.5))))
    wrong = n + step if n - step < 0 or rng.random() < 0.5 else n - step
    text = f"{wrong:,}" if "," in value else str(wrong)
    return text + (decimals or "")


def plant_number(text: str, seed: str) -> Planted | NotApplicable:
    """Change one number (seeded; never an ordered-list marker) to a wrong value."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        marker = _LIST_MARKER.match(line)
        start = marker.end() if marker else 0
        found += [(i, m) for m in _NUMBER.finditer(line) if m.start() >= start]
    if not found:
        return NotApplicable("wrong_number", "no number to change")
    rng = random.Random(seed)
    i, m = rng.choice(found)
    wrong = _wrong(m.group(1), m.group(2), rng)
    line = lines[i]
    lines[i] = line[: m.start()] + wrong + line[m.end() :]
    return Planted("wrong_number", "\n".join(lines), i + 1, f"line {i + 1}: {m.group(0)} changed to {wrong}")


def _named(text: str, task: Task) -> list[tuple[str, str, list[int]]]:
    """The requirements the text names, with the lines naming each: (id, label, 0-based lines)."""
    lines = [line.lower() for line in text.splitlines()]
    out = []
    for r in task.requirements:
        label = r.label.lower()
        at = [i for i, line in enumerate(lines) if label in line]
        if not at:
            words = set(_WORD.findall(r.text.lower()))
            at = [i for i, line in enumerate(lines) if len(words & set(_WORD.findall(line))) >= _MIN_SHARED_WORDS]
        if at:
            out.append((r.id, r.label, at))
    return out


def plant_dropped(text: str, task: Task, seed: str) -> Planted | NotApplicable:
    """Remove every line naming one requirement of the task (seeded), so the copy no longer meets it."""
    named = _named(text, task)
    if not named:
        return NotApplicable("dropped_requirement", "names none of the task's requirements")
    rng = random.Random(seed)
    rid, label, at = rng.choice(named)
    lines = text.splitlines()
    kept = [line for i, line in enumerate(lines) if i not in set(at)]
    if not "\n".join(kept).strip():
        return NotApplicable("dropped_requirement", "nothing would remain")
    where = ", ".join(str(i + 1) for i in at)
    return Planted(
        "dropped_requirement",
        "\n".join(kept),
        at[0] + 1,
        f"requirement {label!r} dropped: line(s) {where} removed",
        rid,
    )


def plant_contradiction(text: str, task: Task, seed: str) -> Planted | NotApplicable:
    """After the first line naming one requirement (seeded), say that the requirement does not apply."""
    named = _named(text, task)
    if not named:
        return NotApplicable("contradicted_constraint", "names none of the task's requirements")
    rng = random.Random(seed)
    rid, label, at = rng.choice(named)
    lines = text.splitlines()
    i = at[0]
    sentence = CONTRADICTION.format(label=label)
    lines.insert(i + 1, sentence)
    return Planted(
        "contradicted_constraint",
        "\n".join(lines),
        i + 1,
        f"after line {i + 1}: {sentence!r} contradicts requirement {label!r}",
        rid,
    )


def plant(kind: str, text: str, task: Task, seed: str) -> Planted | NotApplicable:
    """Plant one flaw of `kind` in `text`; NotApplicable with its reason when it cannot be."""
    if not text.strip():
        return NotApplicable(kind, "empty deliverable")
    if kind == "wrong_number":
        return plant_number(text, seed)
    if kind == "dropped_requirement":
        return plant_dropped(text, task, seed)
    if kind == "contradicted_constraint":
        return plant_contradiction(text, task, seed)
    raise ValueError(f"unknown flaw kind {kind!r} (one of {', '.join(FLAW_KINDS)})")


def exam_plan(tasks: dict[str, Task], sources: Iterable[ExamSource], per_kind: int, seed: int | str) -> list[ExamPair]:
    """Per task and kind, `per_kind` planted pairs from distinct deliverables (seeded), the rest not applicable.

    Deliverables are tried in a seeded order; a slot no deliverable of the task can fill is kept
    as a not-applicable pair whose description counts why each deliverable tried failed.
    """
    by_task: dict[str, list[ExamSource]] = {t: [] for t in tasks}
    for s in sources:
        if s.task in by_task:
            by_task[s.task].append(s)
    pairs: list[ExamPair] = []
    for task_id in sorted(by_task):
        task = tasks[task_id]
        outputs = sorted(by_task[task_id], key=lambda s: s.output_id)
        for kind in FLAW_KINDS:
            order: Sequence[ExamSource] = random.Random(f"{seed}|{task_id}|{kind}").sample(outputs, len(outputs))
            planted: list[tuple[ExamSource, Planted]] = []
            reasons: dict[str, int] = {}
            for s in order:
                if len(planted) == per_kind:
                    break
                got = plant(kind, s.text, task, f"{seed}|{task_id}|{kind}|{s.output_id}")
                if isinstance(got, Planted):
                    planted.append((s, got))
                else:
                    reasons[got.reason] = reasons.get(got.reason, 0) + 1
            for slot in range(per_kind):
                if slot < len(planted):
                    s, p = planted[slot]
                    pid = digest("exam", seed, task_id, kind, slot, s.output_id, p.text)[:24]
                    pairs.append(
                        ExamPair(pid, task_id, kind, slot, s.output_id, p.text, p.line, p.description, p.requirement)
                    )
                else:
                    why = "; ".join(f"{n} {reason}" for reason, n in sorted(reasons.items())) or "no deliverable"
                    tried = sum(reasons.values())
                    description = f"not applicable: {tried} deliverable(s) of the task tried ({why})"
                    pid = digest("exam", seed, task_id, kind, slot, None)[:24]
                    pairs.append(ExamPair(pid, task_id, kind, slot, None, None, None, description))
    return pairs


def exam_item(pair_id: str, judge: str, presentation: int) -> str:
    """The outcome item of one exam question (pair, judge, order): presentation 1 shows the intact copy first."""
    return f"exam:{pair_id}:{judge}:{presentation}"
