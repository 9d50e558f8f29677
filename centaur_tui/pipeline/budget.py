"""Provides Budget: the session's `max_cost_usd`, kept by reserving each call's worst case before it is sent.

Before a request leaves (its concurrency slot taken, `Calls._mark_sent`), its worst case is
reserved: its counted prompt tokens plus `max_tokens`, at the entry's price, times how much more
than that the provider has reported for a call of that model so far (1 until it over-reports).
A reservation that does not fit beside what is spent and reserved waits for calls in flight to
settle; only when it could pass the budget whatever they settle at (or nothing else is in flight)
is the call refused (`BudgetExceeded`). Each call decides for itself: a cheaper call later may
still fit. Before, one refusal stopped every later call and every concurrent worst case counted
at once: a $1.00 budget stopped after $0.055 (issue 23).

An answered call settles at what the provider reports, even above its reservation (an
over-report: counted and shown apart, and its model's reservations, in flight and later, grow by
the ratio);
at its reservation when no usage is reported. A failed attempt that may have been billed (a
timeout, a reply cut or broken: `CallFailure.maybe_billed`), or a request abandoned in flight
by a stopped run, turns its reservation into *unanswered* spend: an estimate at its worst case,
counted toward the budget and shown apart. Other failures free their reservation. What earlier
runs spent (the calls table) and estimated (`unanswered_spend`, also the calls a killed run
left in flight) counts too, so raising `max_cost_usd` and running again continues.
"""

from __future__ import annotations

import asyncio

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
    """Spent + unanswered + reserved USD of a session, against its `max_cost_usd`.

    Args:
        limit: The budget in USD.
        spent: USD of the answered calls before this run (recorded in the calls table).
        unanswered: USD estimated for requests billed without an answer before this run.
    """

    def __init__(self, limit: float, spent: float = 0.0, unanswered: float = 0.0) -> None:
        self.limit = limit
        self.spent = spent
        """USD of answered calls (what the provider reported, or the reservation when it reported nothing)."""
        self.unanswered = unanswered
        """USD estimated for requests the provider may have billed without an answer."""
        self.unanswered_calls = 0
        """Requests of this run counted in `unanswered`."""
        self.over_reported = 0.0
        """USD the provider reported above the reservations of the calls it answered (this run)."""
        self.over_reports = 0
        self.reserved: dict[str, float] = {}
        self._models: dict[str, str] = {}
        self._factor: dict[str, float] = {}
        self._reserved_factor: dict[str, float] = {}  # key -> the growth its reservation holds
        self._changed: asyncio.Event | None = None
        self.stopped = False
        """Whether a call was refused in this run (the run ends "stopped at the budget")."""
        self.refused = 0
        """Calls not sent because of the budget in this run."""

    @property
    def used(self) -> float:
        """Spent and estimated unanswered USD: what counts against the budget once nothing is in flight."""
        return self.spent + self.unanswered

    @property
    def committed(self) -> float:
        return self.used + sum(self.reserved.values())

    @property
    def left(self) -> float:
        return max(0.0, self.limit - self.used)

    def worst(self, worst_usd: float, model: str | None = None) -> float:
        """A call's worst case, grown by the model's over-reporting so far.

        A model not answered yet is grown by the largest ratio any model reported (the same
        provider may be behind it); one answered within its worst cases is not.
        """
        if model is not None and model in self._factor:
            return worst_usd * self._factor[model]
        return worst_usd * max(self._factor.values(), default=1.0)

    def _fits(self, key: str, worst: float) -> bool:
        return self.committed - self.reserved.get(key, 0.0) + worst <= self.limit

    def try_reserve(self, key: str, worst_usd: float, model: str | None = None) -> bool | None:
        """Reserve now if it fits (True); None when it may fit once calls in flight settle; False when it cannot."""
        worst = self.worst(worst_usd, model)
        if self._fits(key, worst):
            self.reserved[key] = worst
            self._reserved_factor[key] = worst / worst_usd if worst_usd else 1.0
            if model is not None:
                self._models[key] = model
            return True
        others = [k for k in self.reserved if k != key]
        # Settling never lowers `used`, so when even `used` alone leaves no room, waiting cannot help.
        if not others or self.used + worst > self.limit:
            return False
        return None

    async def reserve(self, key: str, worst_usd: float, model: str | None = None) -> None:
        """Reserve a call's worst case before it is sent, waiting for calls in flight to settle if need be.

        A retry replaces the same key's reservation.

        Raises:
            BudgetExceeded: the call could pass the budget whatever the calls in flight settle at.
        """
        while True:
            fits = self.try_reserve(key, worst_usd, model)
            if fits:
                return
            if fits is False:
                break
            if self._changed is None:
                self._changed = asyncio.Event()
            self._changed.clear()
            await self._changed.wait()
        self._refuse(key, self.worst(worst_usd, model))

    def reserve_now(self, key: str, worst_usd: float, model: str | None = None) -> None:
        """`reserve` without waiting: refused at once when it does not fit now.

        Raises:
            BudgetExceeded: it does not fit beside what is spent and reserved.
        """
        if not self.try_reserve(key, worst_usd, model):
            self._refuse(key, self.worst(worst_usd, model))

    def _refuse(self, key: str, worst: float) -> None:
        self.reserved.pop(key, None)
        self._reserved_factor.pop(key, None)
        self.stopped = True
        self.refused += 1
        digits = 2 if self.limit >= 0.01 else 4
        raise BudgetExceeded(
            f"not sent: max_cost_usd = ${self.limit:,.{digits}f} would be passed (spent ${self.used:,.4f}, "
            f"in flight up to ${sum(self.reserved.values()):,.4f}, this call up to ${worst:,.4f})"
        )

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()

    def settle(self, key: str, actual_usd: float | None) -> None:
        """An answered call: what the provider reports replaces its reservation (the reservation when it reports none).

        A report above the reservation is an over-report: settled at what it reports all the same,
        counted in `over_reported`, and the model's later worst cases grow by the ratio.
        """
        worst = self.reserved.pop(key, 0.0)
        self._reserved_factor.pop(key, None)
        model = self._models.pop(key, None)
        cost = worst if actual_usd is None else actual_usd
        if actual_usd is not None and actual_usd > worst * (1 + 1e-9):
            self.over_reported += actual_usd - worst
            self.over_reports += 1
            if model is not None and worst > 0:
                self._factor[model] = max(self._factor.get(model, 1.0), actual_usd / worst * 1.01)
                self._regrow()
        elif model is not None:
            self._factor.setdefault(model, 1.0)  # answered within its worst case: its own ratio from now on
        self.spent += cost
        self._wake()

    def _regrow(self) -> None:
        # The calls in flight were reserved before the provider over-reported: likely over-reporting
        # too, they are held at the new ratio, so the calls waiting behind them wait for their reports.
        for key, worst in self.reserved.items():
            model = self._models.get(key)
            base = worst / self._reserved_factor.get(key, 1.0)
            grown = self.worst(base, model)
            if grown > worst:
                self.reserved[key] = grown
                self._reserved_factor[key] = grown / base if base else 1.0

    def unanswered_attempt(self, key: str) -> float:
        """An attempt the provider may have billed without an answer: its reservation becomes unanswered spend.

        Returns:
            The USD estimated (its reservation; 0 when it had none).
        """
        worst = self.reserved.pop(key, 0.0)
        self._reserved_factor.pop(key, None)
        self._models.pop(key, None)
        self.unanswered += worst
        self.unanswered_calls += 1
        self._wake()
        return worst

    def release(self, key: str) -> None:
        """A call that failed without being billed: its reservation is freed."""
        self._models.pop(key, None)
        self._reserved_factor.pop(key, None)
        if self.reserved.pop(key, None) is not None:
            self._wake()
