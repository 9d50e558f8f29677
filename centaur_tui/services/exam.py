"""Provides the judges' admission exam use case: planted-flaw pairs asked of every LLM judge in both orders.

`run_exam` builds a session's planted-flaw pairs from its stored outputs and asks every LLM
judge each of them in both orders (`pipeline.exam`), holding the session's lock like a run.
What the report shows of it is read by `services/exam_report.py`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.study import Study

if TYPE_CHECKING:
    from centaur_tui.llm import Gateway
    from centaur_tui.pipeline.exam import ExamRunOutcome


class NoDeliverablesError(CentaurError):
    """The exam has nothing to plant flaws in: the session has no stored output."""


def run_exam(
    study: Study, per_kind: int | None = None, seed: int | None = None, gateway: Gateway | None = None
) -> ExamRunOutcome:
    """Plan the exam (stored with what was planted where) and ask every judge; stored answers are not asked again.

    Args:
        study: The session (its judges; `judging.exam_per_kind` when `per_kind` is None).
        per_kind: Planted pairs per task and flaw kind.
        seed: The exam's seed (None: the session's seed).
        gateway: Injected for tests.

    Raises:
        NoDeliverablesError: the session has no stored output to plant flaws in.
        SessionBusyError: a run of the session holds its lock.
        ProviderError: a provider refused every call of a judge's model.
    """
    from centaur_tui.pipeline.exam import Exam, exam_seed
    from centaur_tui.services.session import open_store, require_keys
    from centaur_tui.store import SessionLock, exam_sources

    n = study.session.judging.exam_per_kind if per_kind is None else per_kind
    require_keys(study)
    with open_store(study, title="Nothing to examine on") as store, SessionLock(store.path):
        if not exam_sources(store):
            raise NoDeliverablesError(
                f"{study.database} holds no complete output: run the session first (`centaur run "
                f"{study.session_file}`); the exam plants its flaws in stored deliverables",
                title="Nothing to examine on",
            )
        exam = Exam(study, store, gateway)
        return asyncio.run(exam.run(n, exam_seed(study, seed)))
