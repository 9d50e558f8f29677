"""Provides the estimate use case: what a session's remaining calls will cost and take, before a run.

`centaur check` prints it and the app's session screen shows it before a run starts; both go
through `session_estimate`, which reads the database read-only (never migrating or creating
it) and sends nothing (litellm's tokenizers and price map are local files).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from centaur_tui.domain.study import Study
    from centaur_tui.pipeline.estimate import Estimate


def session_estimate(study: Study) -> Estimate:
    """The session's estimate: calls, tokens, USD and time per stage and model, total and remaining.

    Raises:
        StoreError: the session's database exists but cannot be read.
    """
    from centaur_tui.pipeline.estimate import estimate

    return estimate(study)


def estimate_text(est: Estimate) -> list[str]:
    """The estimate as lines of text (the CLI prints them, the app shows them)."""
    from centaur_tui.pipeline.estimate import estimate_lines

    return estimate_lines(est)


def estimate_summary_text(est: Estimate) -> list[str]:
    """The estimate in a few short lines per stage (the app's session screen)."""
    from centaur_tui.pipeline.estimate import estimate_summary

    return estimate_summary(est)
