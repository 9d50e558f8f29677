"""Provides the dialogue stage: a model worker asks its assistant questions before writing ([augmentation] turns > 1).

A dialogue of N turns opens with the assistant's assistance text (turn 1, the assistance stage's
call, shared with the 1-turn candidate), then N - 1 rounds: the worker asks (a call to the worker
model), the assistant answers (a call to the assistant model, the assistance prompt's system and
first message kept, and its constraint repeated with each question). Each call is an ordinary
content-addressed call of `Calls` in the stage `dialogue`: planned and priced by `centaur check`,
answered once, read back from the store by a resumed run (whose messages, built from the stored
answers, are the same), stopped by a budget. The worker then writes the deliverable with the whole
transcript (`Pipeline._worker_output`); the transcript is stored with the output.
"""

from __future__ import annotations

from dataclasses import dataclass

from centaur_tui.domain.plan import DIALOGUE_STAGE
from centaur_tui.domain.prompts import (
    Messages,
    Round,
    dialogue_answer_messages,
    dialogue_worker_messages,
    dialogue_worker_question_messages,
)
from centaur_tui.domain.session import Endpoint
from centaur_tui.domain.study import Study
from centaur_tui.pipeline.calls import Calls


@dataclass(frozen=True)
class Transcript:
    """A finished dialogue: its rounds, the call keys of each (question, answer), and the worker's final messages."""

    rounds: list[Round]
    keys: list[tuple[str, str]]
    final_messages: Messages


async def run_dialogue(
    calls: Calls,
    study: Study,
    params: dict[str, object],
    run: int,
    task_id: str,
    assistant: Endpoint,
    worker: Endpoint,
    guidance: str,
) -> Transcript:
    """Ask and answer N - 1 rounds, one call at a time (each depends on the last); returns the transcript.

    Raises:
        CallFailed, BudgetExceeded: as `Calls.call` (the output it was for is then not written).
    """
    turns = study.session.augmentation.turns
    universal, task = study.universal, study.task(task_id)
    sample = f"{DIALOGUE_STAGE}:run{run}"
    rounds: list[Round] = []
    keys: list[tuple[str, str]] = []
    for _ in range(turns - 1):
        asking = dialogue_worker_question_messages(universal, task, guidance, rounds, turns)
        q_key, question = await calls.call(DIALOGUE_STAGE, worker, asking, dict(params), sample)
        answering = dialogue_answer_messages(universal, task, guidance, rounds, question)
        a_key, answer = await calls.call(DIALOGUE_STAGE, assistant, answering, dict(params), sample)
        rounds.append((question, answer))
        keys.append((q_key, a_key))
    return Transcript(rounds, keys, dialogue_worker_messages(universal, task, guidance, rounds, turns))
