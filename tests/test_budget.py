"""Budget: worst-case reservations, settling at the actual cost, and the latch that stops a run cleanly."""

from __future__ import annotations

import pytest

from centaur_tui.llm import CallFailed, NotSent
from centaur_tui.pipeline.budget import Budget, BudgetExceeded


def test_a_call_that_could_pass_the_budget_is_refused_and_nothing_after_it() -> None:
    b = Budget(1.0, spent=0.4)
    b.reserve("a", 0.3)
    b.reserve("b", 0.3)  # 0.4 + 0.3 + 0.3 = 1.0: exactly the budget is allowed
    with pytest.raises(BudgetExceeded) as err:
        b.reserve("c", 0.01)
    assert isinstance(err.value, NotSent) and isinstance(err.value, CallFailed)
    assert "max_cost_usd = $1.00" in str(err.value)
    b.settle("a", 0.05)  # cheaper than its worst case: room again, but the run has stopped
    with pytest.raises(BudgetExceeded):
        b.reserve("d", 0.01)
    assert b.stopped and b.refused == 2
    b.settle("b", None)  # no usage reported: its reservation counts as spent
    assert b.spent == pytest.approx(0.4 + 0.05 + 0.3) and b.reserved == {}
    assert b.left == pytest.approx(0.25)


def test_a_retry_replaces_its_own_reservation_and_a_failure_frees_it() -> None:
    b = Budget(1.0)
    b.reserve("a", 0.6)
    b.reserve("a", 0.6)  # the same call again (a retry): not counted twice
    assert b.committed == pytest.approx(0.6)
    b.release("a")
    assert b.committed == 0.0
    b.release("never reserved")  # harmless
    b.reserve("b", 1.0)
    assert not b.stopped


def test_a_zero_budget_refuses_the_first_call_that_costs_anything() -> None:
    b = Budget(0.0)
    b.reserve("free", 0.0)  # a call priced at 0 passes a zero budget
    with pytest.raises(BudgetExceeded):
        b.reserve("paid", 1e-9)
