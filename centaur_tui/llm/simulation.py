"""Provides the simulation behind the simulated provider: seeded solvers, assistants, a worker and judges.

It is not a language model. It is registered with litellm as the custom provider `simulated`,
so the real litellm code path runs. Each call is seeded by its call key (sent as `seed`):
the same call gives the same text, repeated runs give distinct samples.

- Deliverables cover a task's requirements; a requirement is covered with probability
  logistic(8 (skill - difficulty)), and covered ones get 1-3 sentences of detail.
- Assistance texts point the worker at requirements (more, and more specifically, the
  higher the coaching skill) and a poor coach steers the worker away from some ("leave out
  ...", as in the paper's Table 2), so plain can beat assisted.
- The worker reads only its prompt: which requirements the assistance text points at or
  steers away from.
- Judges read only the two option texts: which requirements each covers and in how much
  detail, plus Gaussian noise and position bias. There is no channel to the author's identity,
  except the planted family preference below.
- Planted judge biases (`simulation.bias`, `simulation.flip`), which the simulated experts
  (pipeline/expert_sim.py) never have, so that LLM-only rankings are wrong in known ways: points
  for the longer option (per doubling of length), for more formatting, for an option of a given
  family, and a seeded share of decided verdicts reversed. Family preference stands for a judge
  recognising a family's style: the world remembers which family wrote (or, in augmentation,
  guided) each text it generated or the store holds (`World.learn_author`), which no real judge
  is told.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from centaur_tui.domain.session import Faults, JudgeBias, JudgeSimulation, ModelSimulation, WorkerSimulation
from centaur_tui.domain.study import Study
from centaur_tui.domain.task import PLACEHOLDER, Requirement, Task, Universal

_DETAILS = (
    "The figures the brief gives are used as stated, and each one is checked against its limit.",
    "Where the brief leaves a gap, the assumption is named and its effect on the result is shown.",
    "A worked example makes the point concrete for the reader.",
)
_FILLER = (
    "Read the whole prompt before starting and keep it open while working.",
    "Organise the answer with clear headings in a logical order.",
    "Keep the client's goal in view throughout.",
    "Make sure you understand the expectations of the task.",
)


@dataclass
class World:
    """What the simulation knows: the tasks, the universal prompts and every simulated model's knobs."""

    tasks: dict[str, Task]
    universal: Universal
    candidates: dict[str, ModelSimulation] = field(default_factory=dict)
    workers: dict[str, WorkerSimulation] = field(default_factory=dict)
    judges: dict[str, JudgeSimulation] = field(default_factory=dict)
    faults: Faults = field(default_factory=Faults)
    # Which study the world simulates (its session file): the provider counts attempts per
    # study, so runs of one session in one process meet fresh faults on every re-run, and
    # runs of other sessions earlier in the process change nothing.
    scope: str = ""
    # Family of each simulated model string, and of each text by its fingerprint (for the
    # planted family preference of a judge only; see the module docstring).
    families: dict[str, str] = field(default_factory=dict)
    authors: dict[str, str] = field(default_factory=dict)

    def learn_author(self, text: str, family: str | None) -> None:
        """Remember which family wrote (or guided) a text."""
        if family:
            with _WORLDS_LOCK:
                self.authors[fingerprint(text)] = family

    def family_of(self, text: str) -> str | None:
        """The family that wrote (or guided) a text, if the world saw it."""
        return self.authors.get(fingerprint(text))

    def __post_init__(self) -> None:
        u = self.universal
        self._kinds = {
            u.automation_system: "automation",
            u.assistance_system: "assistance",
            u.worker_system: "worker",
            u.judge_system: "judge",
        }
        self._judge_re = _template_regex(u.judge_prompt)
        self._worker_re = _template_regex(u.worker_prompt)

    def kind(self, system: str) -> str:
        kind = self._kinds.get(system)
        if kind is None:
            raise ValueError("simulated provider: unknown system prompt (not one of the session's universal prompts)")
        return kind

    def task_in(self, text: str) -> Task:
        for task in self.tasks.values():
            if task.prompt in text:
                return task
        raise ValueError("simulated provider: the prompt holds none of the session's tasks")


_WORLDS: dict[str, World] = {}
_WORLDS_LOCK = threading.Lock()


def register_world(world_id: str, world: World) -> None:
    """Make a world known to the provider; calls name it in `metadata={"simulation": world_id}`."""
    with _WORLDS_LOCK:
        _WORLDS[world_id] = world


def _template_regex(template: str) -> re.Pattern[str]:
    """A regex that recovers the placeholder values from a rendered template."""
    pattern, last = "", 0
    for m in PLACEHOLDER.finditer(template):
        pattern += re.escape(template[last : m.start()]) + f"(?P<{m.group(1)}>.*?)"
        last = m.end()
    pattern += re.escape(template[last:])
    return re.compile("^" + pattern + "$", re.DOTALL)


def fingerprint(text: str) -> str:
    """A text's identity for `World.authors` (surrounding whitespace ignored)."""
    return hashlib.sha256(text.strip().encode("utf-8", "replace")).hexdigest()[:32]


_MARK = re.compile(r"^\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s|\|)|\*\*", re.MULTILINE)


def format_marks(text: str) -> int:
    """Formatting marks in a text: headings, list items, table rows and bold spans."""
    return len(_MARK.findall(text))


def _planted_points(
    bias: JudgeBias, texts: tuple[str, str], family_of: Callable[[str], str | None] | None
) -> tuple[float, float]:
    """Points a biased judge adds to each option for length, formatting and family."""
    if not bias.planted:
        return 0.0, 0.0
    lengths = [max(1, len(t.strip())) for t in texts]
    marks = [format_marks(t) for t in texts]
    out = []
    for i in (0, 1):
        other = 1 - i
        points = bias.length * math.log2(lengths[i] / lengths[other])
        points += bias.format * math.tanh((marks[i] - marks[other]) / 5.0)
        if bias.family and family_of is not None:
            points += bias.family.get(family_of(texts[i]) or "", 0.0)
        out.append(points)
    return out[0], out[1]


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _cover_prob(skill: float, req: Requirement) -> float:
    return _logistic(8.0 * (skill - req.difficulty))


# -- texts ------------------------------------------------------------------------------------


# Layouts of a deliverable (issue 26: candidates that write differently): heading of the title
# ("{}" is its text), heading of a section, bullet, emphasis of a label, blank lines between
# sections. The words never change, and each label stays on one line with its details (what the
# simulated judge reads).
_STYLES = (
    ("# {}", "## {}", "- ", "**", True),
    ("{0}\n" + "=" * 8, "### {}", "* ", "__", True),
    ("**{}**", "**{}**", "+ ", "", False),
    ("# {}", "{0}\n" + "-" * 8, "- ", "*", True),
    ("## {}", "#### {}", "\u2022 ", "_", False),
)


def deliverable(task: Task, coverage: dict[str, int], rng: random.Random, style: int = 0) -> str:
    """A readable skeleton deliverable: one bullet per covered requirement, with 1-3 detail sentences, in a layout."""
    title, section, bullet, mark, spaced = _STYLES[style]
    lines = [
        title.format(f"{task.title}: {task.deliverable}"),
        "",
        "This deliverable answers the brief point by point.",
    ]
    lines += [""] if spaced else []
    for dim in task.dimensions:
        reqs = [r for r in task.requirements if r.dimension == dim.id and coverage.get(r.id, 0) > 0]
        if not reqs:
            continue
        lines.append(section.format(dim.name))
        for r in reqs:
            details = " ".join(_DETAILS[: coverage[r.id]])
            lines.append(f"{bullet}{mark}{r.label}.{mark} {r.text} {details}")
        lines += [""] if spaced else []
    lines.append(rng.choice(["Next steps are listed above.", "Questions are welcome.", "This closes the brief."]))
    return "\n".join(lines)


def assistance(task: Task, skill: float, rng: random.Random, specificity: float | None = None) -> str:
    """A three-phase assistance text; poor coaches echo the prompt and steer the worker wrong.

    `specificity` (default: `skill`) is the chance a pointer asks for specifics. A weak worker gains
    most from broad pointers (requirements it would miss), a strong one from specific pointers
    (detail on what it covers anyway): the planted worker-dependent help of issue 28.
    """
    specificity = skill if specificity is None else specificity
    pointed, steered = [], []
    for r in task.requirements:
        if rng.random() < _logistic(8.0 * (skill - 0.8 * r.difficulty)):
            pointed.append(r)
        elif rng.random() < max(0.0, 0.55 - skill):
            steered.append(r)
    lines = ["## Phase 1: Requirements check"]
    for r in pointed:
        specific = " (be specific: give the exact figures and how you got them)" if rng.random() < specificity else ""
        lines.append(f"- Check: {r.label}.{specific}")
    for r in steered:
        lines.append(f"- Keep it lean: leave out {r.label}; it is not needed here.")
    lines.append(f"- {rng.choice(_FILLER)}")
    lines += ["", "## Phase 2: Execution plan"]
    steps = ["Draft the sections in the order of the requirements above.", rng.choice(_FILLER)]
    if skill > 0.6:
        steps.insert(0, "State your assumptions before the main content.")
    lines += [f"{i}. {s}" for i, s in enumerate(steps, 1)]
    lines += ["", "## Phase 3: Final checklist"]
    lines += [f"- [ ] {r.label}" for r in pointed] or ["- [ ] Re-read the prompt."]
    return "\n".join(lines)


_QUESTIONS = (
    "Which requirement is the easiest to miss here, and how should I check it?",
    "Here is my draft outline: an introduction, the main analysis, a summary. What does it miss?",
    "What should I verify before I hand the deliverable in?",
    "In what order should I work through the requirements?",
)


def dialogue_question(rng: random.Random) -> str:
    """A simulated worker's question (the simulated assistant answers it without reading it)."""
    return rng.choice(_QUESTIONS)


def dialogue_answer(task: Task, skill: float, rng: random.Random) -> str:
    """A simulated assistant's answer to a worker's question: process guidance only, as good as its dialogue skill.

    A skilled answer points at more requirements (and asks for specifics); a poor one steers the
    worker away from some ("leave out ..."), which outweighs any pointing at them before, so a
    dialogue helps a good dialogue partner's worker and harms a poor one's.
    """
    lines = []
    for r in task.requirements:
        if rng.random() < _logistic(8.0 * (skill - 0.8 * r.difficulty)):
            specific = " (be specific: give the exact figures and how you got them)" if rng.random() < skill else ""
            lines.append(f"- Check: {r.label}.{specific}")
        elif rng.random() < max(0.0, 0.6 - skill):
            lines.append(f"- Keep it lean: leave out {r.label}; it is not needed here.")
    lines.append(f"- {rng.choice(_FILLER)}")
    return "\n".join(lines)


def read_guidance(task: Task, guidance: str) -> tuple[set[str], set[str], set[str]]:
    """What a worker takes from an assistance text: requirements pointed at, made specific, steered away."""
    pointed, specific, steered = set(), set(), set()
    for line in guidance.lower().splitlines():
        for r in task.requirements:
            label = r.label.lower()
            if label in line:
                # Judge the instruction around the label, not the label itself: a label such
                # as "validation without minimizing" is not an instruction to leave it out.
                rest = line.replace(label, " ")
                if "leave out" in rest or "without" in rest or "do not" in rest:
                    steered.add(r.id)
                else:
                    pointed.add(r.id)
                    if "be specific" in line:
                        specific.add(r.id)
    return pointed - steered, specific - steered, steered


def worker_deliverable(task: Task, skill: float, guidance: str, rng: random.Random, uses_specifics: float = 1.0) -> str:
    """The simulated worker's deliverable: its own coverage, lifted where the guidance points, cut where it steers.

    `uses_specifics` is the chance the worker acts on a "be specific" pointer (1: always, today's
    worker; drawn only below 1, so a default worker's texts are what they were).
    """
    pointed, specific, steered = read_guidance(task, guidance)
    if uses_specifics < 1.0:
        specific = {r for r in sorted(specific) if rng.random() < uses_specifics}
    coverage = {}
    for r in task.requirements:
        p = _cover_prob(skill, r)
        if r.id in pointed:
            p += (1 - p) * 0.75
        elif r.id in steered:
            p *= 0.15
        depth = 1 + (rng.random() < skill * 0.8) + (r.id in specific)
        coverage[r.id] = min(3, depth) if rng.random() < p else 0
    return deliverable(task, coverage, rng)


def read_deliverable(task: Task, text: str) -> dict[str, int]:
    """What a judge sees in a deliverable: per requirement, 0 if absent, else its detail level 1-3."""
    seen: dict[str, int] = {}
    lowered = text.lower()
    for r in task.requirements:
        at = lowered.find(r.label.lower())
        if at < 0:
            seen[r.id] = 0
            continue
        end = lowered.find("\n", at)
        line = lowered[at : end if end >= 0 else len(lowered)]
        seen[r.id] = 1 + sum(1 for d in _DETAILS[1:] if d.lower() in line)
    return seen


def _dimension_value(task: Task, seen: dict[str, int], dimension: str | None) -> float:
    reqs = [r for r in task.requirements if dimension is None or r.dimension == dimension]
    if not reqs:
        return 0.0
    return sum((0.55 + 0.15 * (seen[r.id] - 1)) if seen[r.id] else 0.0 for r in reqs) / len(reqs)


_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
_LIST_MARKER = re.compile(r"^\s*\d+[.)]\s")
_DENIALS = ("does not apply", "can be ignored", "not needed here")


def visible_flaws(task: Task, text: str) -> int:
    """Flaws a checking judge finds in a deliverable: numbers the task never gives, requirements said not to apply."""
    known = [task.title, task.prompt, task.deliverable, *(r.text for r in task.requirements)]
    anywhere = set(_NUMBER.findall(" ".join(known)))
    own = {r.label.lower(): Counter(_NUMBER.findall(f"{r.label} {r.text}")) for r in task.requirements}
    found = 0
    for line in text.lower().splitlines():
        numbers = Counter(_NUMBER.findall(_LIST_MARKER.sub("", line)))
        # A line about one requirement is checked against that requirement's own figures, count by count.
        given = next((g for label, g in own.items() if label in line), None)
        found += sum((numbers - given).values()) if given is not None else sum(1 for n in numbers if n not in anywhere)
        if any(d in line for d in _DENIALS) and any(r.label.lower() in line for r in task.requirements):
            found += 1
    return found


def judge_reply(
    task: Task,
    universal: Universal,
    knobs: JudgeSimulation,
    text_1: str,
    text_2: str,
    allow_ties: bool,
    rng: random.Random,
    family_of: Callable[[str], str | None] | None = None,
) -> dict[str, Any]:
    """Score both options on every dimension from what they visibly cover, with noise and bias.

    A judge with planted biases (`knobs.bias`) adds their points to every score of an option;
    with `knobs.flip`, a seeded share of decided verdicts is reversed (the scores stay, as a
    judge whose choice contradicts its own rubric). `family_of` names the family behind a text
    (the world's memory); without it the family preference is inert (the simulated experts).
    """
    planted = _planted_points(knobs.bias, (text_1, text_2), family_of)
    options = []
    for index, text in enumerate((text_1, text_2)):
        seen = read_deliverable(task, text)
        overall = _dimension_value(task, seen, None)
        scores = {}
        for dim in task.dimensions:
            scores[dim.id] = 1 + 9 * _dimension_value(task, seen, dim.id)
        for dim in universal.general_dimensions:
            scores[dim.id] = 1.5 + 8 * overall
        bias = (knobs.position_bias if index == 0 else 0.0) + planted[index]
        if knobs.flaw_check:
            bias -= knobs.flaw_check * visible_flaws(task, text)
        ints = {k: int(min(10, max(1, round(v + bias + rng.gauss(0, knobs.noise))))) for k, v in scores.items()}
        options.append(ints)
    means = [sum(o.values()) / len(o) for o in options]
    gap = means[0] - means[1]
    if allow_ties and abs(gap) < knobs.tie_margin:
        winner = "tie"
    elif gap == 0:
        winner = "option_1" if rng.random() < 0.5 else "option_2"
    else:
        winner = "option_1" if gap > 0 else "option_2"
    # Drawn apart from the scores' noise, so a flip share of 0 gives the very replies of before.
    if knobs.flip > 0 and winner != "tie" and rng.random() < knobs.flip:
        winner = "option_2" if winner == "option_1" else "option_1"
    better = "Option 1" if winner == "option_1" else "Option 2"
    rationale = (
        "Both options cover the brief about equally well."
        if winner == "tie"
        else f"{better} covers more of the stated requirements and explains them in more detail."
    )
    return {
        "option_1": {"scores": options[0], "average": round(means[0], 2)},
        "option_2": {"scores": options[1], "average": round(means[1], 2)},
        "winner": winner,
        "rationale": rationale,
    }


def corrupt(reply: dict[str, Any], rng: random.Random) -> str:
    """An invalid judge reply of one of the kinds real judges produce."""
    kind = rng.randrange(4)
    if kind == 0:
        return "Option 1 is better overall; it is clearer and more complete."
    if kind == 1:
        broken = json.loads(json.dumps(reply))
        broken["option_2"]["scores"].pop(next(iter(broken["option_2"]["scores"])))
        return json.dumps(broken)
    if kind == 2:
        broken = json.loads(json.dumps(reply))
        key = next(iter(broken["option_1"]["scores"]))
        broken["option_1"]["scores"][key] = 11
        return json.dumps(broken)
    return json.dumps({**reply, "winner": "both"})


def make_world(study: Study) -> tuple[str, World]:
    """Build (and register) the simulation world of a study; returns its id for call metadata."""
    s = study.session
    scope = f"{s.name}:{study.session_file}"
    world = World(tasks=dict(study.tasks), universal=study.universal, faults=s.faults, scope=scope)
    for m in s.models:
        if m.simulated:
            world.candidates[m.model] = m.simulation
            world.families[m.model] = m.family
    for worker in s.worker_panel:
        if worker.simulated:
            world.workers[worker.model] = worker.simulation
    for j in s.judges:
        if j.simulated:
            world.judges[j.model] = j.simulation
    world_id = f"{scope}:{id(world)}"
    register_world(world_id, world)
    return world_id, world
