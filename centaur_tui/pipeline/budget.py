"""Provides Budget: the session's `max_cost_usd`, kept by reserving each call's worst case before it is sent.

Before a request leaves (its concurrency slot taken, `Calls._mark_sent`), its worst-case cost is
reserved: its counted prompt tokens plus `max_tokens`, at the entry's price. A request whose
reservation would take spent + reserved past the budget is not sent (`BudgetExceeded`), and no
request after it either: the run stops cleanly, the calls in flight finish and settle. An
answered call settles at its actual cost (or at its reservation when the provider reported no
usage), a failed attempt frees its reservation. What was spent before this run (the calls
table's recorded cost) counts against the budget, so raising `max_cost_usd` and running
again continues where the run stopped; nothing stored is sent again.
"""

from __future__ import annotations

from centaur_tui.domain.errors import CentaurError
from centaur_tui.llm import CallFailed, NotSent


class BudgetError(CentaurError):
    """A budget that cannot be kept: a model of the session has no price."""

    title = "Budget"


class BudgetExceeded(CallFailed, NotSent):
    """A call not sent because it could pass the session's budget."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "BudgetExceeded", 0)


class Budget:
    """Spent + reserved USD of a session, against its `max_cost_usd`.

    Args:
        limit: The budget in USD.
        spent: USD spent before this run (recorded in the calls table).
    """

    def __init__(self, limit: float, spent: float = 0.0) -> None:
        self.limit = limit
        self.spent_before = spent
        self.spent = spent
        self.reserved: dict[str, float] = {}
        self.stopped = False
        self.refused = 0
        """Calls not sent because of the budget in this run."""

    @property
    def committed(self) -> float:
        return self.spent + sum(self.reserved.values())

    @property
    def left(self) -> float:
        return max(0.0, self.limit - self.spent)

    def reserve(self, key: str, worst_usd: float) -> None:
        """Reserve a call's worst case before it is sent (again, on a retry: the same key's reservation is replaced).

        Raises:
            BudgetExceeded: the reservation could pass the budget, or the budget stopped the run already.
        """
        if not self.stopped:
            others = self.committed - self.reserved.get(key, 0.0)
            if others + worst_usd <= self.limit:
                self.reserved[key] = worst_usd
                return
            self.stopped = True
        self.reserved.pop(key, None)
        self.refused += 1
        digits = 2 if self.limit >= 0.01 else 4
        raise BudgetExceeded(
            f"not sent: max_cost_usd = ${self.limit:,.{digits}f} would be passed (spent ${self.spent:,.4f}, "
            f"in flight up to ${sum(self.reserved.values()):,.4f}, this call up to ${worst_usd:,.4f})"
        )

    def settle(self, key: str, actual_usd: float | None) -> None:
        """An answered call: its actual cost replaces its reservation (the reservation when the cost is unknown)."""
        worst = self.reserved.pop(key, 0.0)
        self.spent += worst if actual_usd is None else actual_usd

    def release(self, key: str) -> None:
        """A call that failed or was abandoned: its reservation is freed."""
        self.reserved.pop(key, None)
