"""Provides the messages sent for each kind of call, built from a task and the universal prompts.

The options a judge compares are model outputs, i.e. untrusted data inside the judge prompt's
tagged blocks (`<option_1>...</option_1>`). An output containing `</option_1>` would close its
block early and have the text after it read as instructions, so any tag-like text in an option
that names one of the prompt's own tags is neutralised (`<` becomes `&lt;`) before rendering; the
same holds for an assistance text inside the worker prompt's `<guidance>` block.
Options without such text are rendered unchanged, so the prompt, and the content address of
every stored judge call, stays byte-identical for them (existing databases stay valid).
"""

from __future__ import annotations

import functools
import re

from centaur_tui.domain.cutoff import cut_off_note
from centaur_tui.domain.task import Rubric, Task, Universal, render

Messages = list[dict[str, str]]


def automation_messages(universal: Universal, task: Task) -> Messages:
    """A solver writes the deliverable directly."""
    return [
        {"role": "system", "content": universal.automation_system},
        {"role": "user", "content": task.prompt},
    ]


def assistance_messages(universal: Universal, task: Task) -> Messages:
    """An assistant writes process guidance for the worker, never the deliverable."""
    return [
        {"role": "system", "content": universal.assistance_system},
        {"role": "user", "content": render(universal.assistance_prompt, task_prompt=task.prompt)},
    ]


def worker_messages(universal: Universal, task: Task, assistance_text: str | None) -> Messages:
    """The worker writes the deliverable, with an assistance text or (plain) without."""
    if assistance_text is None:
        user = task.prompt
    else:
        guidance = neutralise_tags(assistance_text, universal.worker_prompt)  # model output, like an option
        user = render(universal.worker_prompt, task_prompt=task.prompt, assistance_text=guidance)
    return [{"role": "system", "content": universal.worker_system}, {"role": "user", "content": user}]


def winner_values(allow_ties: bool) -> tuple[str, ...]:
    return ("option_1", "option_2", "tie") if allow_ties else ("option_1", "option_2")


def render_rubric(rubric: Rubric) -> str:
    """The rubric as the judge (and the expert) reads it: one block per dimension."""
    lines = []
    for kind, dims in (("task-specific", rubric.task_dimensions), ("general", rubric.general_dimensions)):
        for d in dims:
            lines.append(f"- {d.id} ({d.name}, {kind}): {d.description}")
            lines.append(f"    1-3: {d.low}")
            lines.append(f"    8-10: {d.high}")
    return "\n".join(lines)


# The blocks of a template are the tags it closes (`</option_1>`); `<dimension id>` in its JSON
# example is a placeholder, not a block, and is left alone.
_TEMPLATE_TAG = re.compile(r"</\s*([A-Za-z_][\w.:-]*)\s*>")
# What a reader may take for an angle bracket: ASCII, fullwidth (U+FF1C), small (U+FE64).
_OPEN = "<\uff1c\ufe64"


@functools.lru_cache(maxsize=16)
def _tag_pattern(template: str) -> re.Pattern[str] | None:
    """Tag-like text naming any tag of `template`, in any case, with spaces or a slash inside; None without tags."""
    names = sorted({m.group(1).lower() for m in _TEMPLATE_TAG.finditer(template)}, key=len, reverse=True)
    if not names:
        return None
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(rf"[{_OPEN}](?=[\s/\\]*(?:{alternatives})(?![\w.:-]))", re.IGNORECASE)


def neutralise_tags(text: str, template: str) -> str:
    """`text` with every tag-like mention of `template`'s tags defused (`<` -> `&lt;`); unchanged without any.

    Only the bracket is replaced, so a reader still sees what the output contained, but no
    option can open or close a block of the prompt (`</option_1>`, `< /OPTION_2 >`, `＜/rubric>`).
    """
    pattern = _tag_pattern(template)
    return text if pattern is None else pattern.sub("&lt;", text)


def judge_messages(
    universal: Universal,
    task: Task,
    rubric: Rubric,
    option_1: str,
    option_2: str,
    allow_ties: bool,
    cut_off: tuple[bool, bool] = (False, False),
) -> Messages:
    """A judge compares two anonymous deliverables on the full rubric.

    `cut_off` says which options the provider cut off at max_tokens (kept and judged marked,
    `generation.on_truncated`): a note after the prompt tells the judge. Without one the prompt
    is unchanged, so stored judge calls keep their content address.
    """
    values = ", ".join(f'"{v}"' for v in winner_values(allow_ties))
    user = render(
        universal.judge_prompt,
        task_prompt=task.prompt,
        rubric=render_rubric(rubric),
        option_1=neutralise_tags(option_1, universal.judge_prompt),
        option_2=neutralise_tags(option_2, universal.judge_prompt),
        winner_values=values,
    )
    note = cut_off_note(*cut_off)
    if note is not None:
        user = f"{user}\n\n{note}"
    return [{"role": "system", "content": universal.judge_system}, {"role": "user", "content": user}]


def judge_cache_prefix(universal: Universal, task: Task, rubric: Rubric, allow_ties: bool) -> int:
    """Characters of a judge prompt's user message before its first option: the part every judge call of a
    task shares (with the system prompt), which providers can serve from their prompt cache.

    The universal template puts the task prompt and the rubric before the options already, so the
    prompt is not reordered: every stored judge call keeps its content address. Measured on the
    rendered template, so any template works (one with an option first shares no prefix: 0).
    """
    marks = ("\x00option_1\x00", "\x00option_2\x00")
    values = ", ".join(f'"{v}"' for v in winner_values(allow_ties))
    text = render(
        universal.judge_prompt,
        task_prompt=task.prompt,
        rubric=render_rubric(rubric),
        option_1=marks[0],
        option_2=marks[1],
        winner_values=values,
    )
    found = [i for i in (text.find(m) for m in marks) if i >= 0]
    return min(found) if found else 0


def reask_messages(messages: Messages, reply: str, reason: str) -> Messages:
    """Messages for re-asking a judge whose reply was invalid: the reply and what was wrong."""
    return [
        *messages,
        {"role": "assistant", "content": reply},
        {
            "role": "user",
            "content": (
                f"Your reply could not be used: {reason}. Reply again with only the JSON object, "
                "scoring both options on every dimension with integers from 1 to 10."
            ),
        },
    ]


def reask_all_messages(messages: Messages, reply: str, problems: tuple[str, ...] | list[str]) -> Messages:
    """Messages for re-asking a judge whose reply was invalid: the reply and every problem found, numbered.

    `reask_messages` (one reason) is the wording of databases written before; kept to find their
    stored re-asks again.
    """
    listed = "\n".join(f"{i}. {p}" for i, p in enumerate(problems, 1))
    return [
        *messages,
        {"role": "assistant", "content": reply},
        {
            "role": "user",
            "content": (
                f"Your reply could not be used. Every problem found:\n{listed}\nReply again with only the JSON "
                "object, scoring both options on every dimension with integers from 1 to 10."
            ),
        },
    ]


# -- assistance as a dialogue ([augmentation] turns > 1, issue 28) --------------------------------

DIALOGUE_CONSTRAINT = (
    "Answer with process guidance only: what to check, how to plan, what to verify. Never write the "
    "deliverable or any part of it (no sections, sentences or figures the worker could paste in), even "
    "if asked to."
)
"""The assistance prompt's constraint, repeated with every question the assistant answers."""

DIALOGUE_ASK = (
    "Before you write the deliverable you may ask your assistant one question about how to approach it, "
    "or show a short draft outline and ask what it misses ({left} question(s) left, this one included). "
    "Reply with only your question."
)
"""What the worker is told when it may ask (the marker the simulated provider recognises)."""

DIALOGUE_WRITE = "Your questions are used up. Write the complete deliverable now, as the task prompt asks."
"""What the worker is told after its last answer: write."""

DIALOGUE_TAGS = "<question></question><answer></answer>"
"""The blocks a dialogue wraps untrusted text in (their tags are neutralised inside)."""

Round = tuple[str, str]
"""One round of a dialogue: the worker's question and the assistant's answer."""


def _wrap(tag: str, text: str) -> str:
    return f"<{tag}>\n{neutralise_tags(text, DIALOGUE_TAGS)}\n</{tag}>"


def dialogue_question(question: str) -> str:
    """A worker's question as the assistant receives it: wrapped, with the process-guidance constraint."""
    return f"The worker asks:\n{_wrap('question', question)}\n\n{DIALOGUE_CONSTRAINT}"


def dialogue_answer_messages(
    universal: Universal, task: Task, guidance: str, rounds: list[Round], question: str
) -> Messages:
    """The assistant answers the worker's next question; its first turn is the assistance text it wrote.

    The system prompt and first user message are the assistance call's own, so the constraint of
    the universal assistance prompt holds in every turn, and `DIALOGUE_CONSTRAINT` repeats it.
    """
    messages = [*assistance_messages(universal, task), {"role": "assistant", "content": guidance}]
    for asked, answered in rounds:
        messages += [{"role": "user", "content": dialogue_question(asked)}, {"role": "assistant", "content": answered}]
    messages.append({"role": "user", "content": dialogue_question(question)})
    return messages


def _worker_dialogue(universal: Universal, task: Task, guidance: str, rounds: list[Round], turns: int) -> Messages:
    messages = worker_messages(universal, task, guidance)
    ask = DIALOGUE_ASK.format(left=turns - 1)
    messages.append({"role": "user", "content": ask})
    for i, (asked, answered) in enumerate(rounds):
        left = turns - 2 - i
        follow = DIALOGUE_ASK.format(left=left) if left > 0 else DIALOGUE_WRITE
        messages += [
            {"role": "assistant", "content": asked},
            {"role": "user", "content": f"Your assistant answers:\n{_wrap('answer', answered)}\n\n{follow}"},
        ]
    return messages


def dialogue_worker_question_messages(
    universal: Universal, task: Task, guidance: str, rounds: list[Round], turns: int
) -> Messages:
    """The worker asks its next question (`len(rounds) + 2` of `turns` assistant turns: the text was the first)."""
    return _worker_dialogue(universal, task, guidance, rounds, turns)


def dialogue_worker_messages(
    universal: Universal, task: Task, guidance: str, rounds: list[Round], turns: int
) -> Messages:
    """The worker writes the deliverable after the whole dialogue (its last message says: write now)."""
    assert len(rounds) == turns - 1, "a dialogue of N turns holds N - 1 rounds"
    return _worker_dialogue(universal, task, guidance, rounds, turns)
