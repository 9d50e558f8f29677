"""Planted truth through the whole pipeline: the report's worker panel finds each worker's best assistant.

Three studies of tests/support/panel_truth.py (4 runs x 2 tasks; bench/workers.py runs 40 and more,
the numbers are in docs/statistics.md), each a full simulated run through litellm, reported by
`session_report`. The seeds are the first three, not chosen; at the bench's rate (97 of 100) all three
recover the truth.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.panel_truth import PLANTED, panel_best


@pytest.mark.slow
def test_the_workers_section_recovers_the_best_assistant_per_worker(tmp_path: Path) -> None:
    found = []
    for seed in range(3):
        folder = tmp_path / str(seed)
        folder.mkdir()
        found.append(panel_best(seed, folder))
    assert found == [PLANTED] * 3, found
