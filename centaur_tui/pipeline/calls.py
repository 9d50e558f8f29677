"""Provides Calls: one session's content-addressed calls, answered from the store or sent through the gateway.

Both the generation stages (`Pipeline`) and judging (`Judging`) send their calls through one
`Calls`, so the call store, the resume log, the failure log and the progress counters are
kept in exactly one place.
"""

from __future__ import annotations

from typing import Any

from centaur_tui.domain.plan import call_key_of, canonical_json, seed_for
from centaur_tui.domain.records import CallFailure, CallRecord
from centaur_tui.domain.session import Endpoint
from centaur_tui.domain.study import Study
from centaur_tui.llm import CallFailed, CallRequest, FatalProviderError, Gateway, make_world
from centaur_tui.pipeline.progress import Progress
from centaur_tui.store import Store, clear_in_flight, mark_in_flight


class Calls:
    """Sends a session's calls once: a call answered before is read from the store, never sent again.

    Args:
        study: The session (its limits and endpoints).
        store: The session database (call store and failure log).
        progress: The counters to update per stage.
        gateway: Injected for tests; built from the session limits on the first call to send.
    """

    def __init__(self, study: Study, store: Store, progress: Progress, gateway: Gateway | None = None) -> None:
        self.study = study
        self.session = study.session
        self.store = store
        self.progress = progress
        self.gateway = gateway
        self.world_id: str | None = None
        self._answered: set[str] = set()
        self._prices_registered = False

    def load(self) -> None:
        """Read which calls are answered, and register the simulation world of a simulated session."""
        self._answered = self.store.answered_keys()
        if self.session.simulated and self.world_id is None:
            self.world_id, _ = make_world(self.study)

    @property
    def in_flight(self) -> int:
        return self.gateway.in_flight if self.gateway is not None else 0

    def _record_failure(self, failure: CallFailure) -> None:
        self.store.record_failure(failure)
        clear_in_flight(self.store, failure.key)  # this attempt is over; the retry is marked when it leaves
        if not failure.final:
            self.progress.retries += 1
        self.progress.last_error = f"{failure.model}: {failure.error_type}: {failure.message}"

    def _mark_sent(self, request: CallRequest) -> None:
        # Recorded as the request leaves (its concurrency slot taken, so at most `concurrency`
        # rows): a row left behind by a killed process counts a call that is sent again and may
        # have been billed twice (store/outcomes.py).
        mark_in_flight(self.store, request.key, request.stage, request.endpoint.model)

    def _ensure_gateway(self) -> Gateway:
        # Built on the first call that is not stored yet: resuming a finished session then
        # never imports litellm (about 3 s).
        if self.gateway is None:
            self.gateway = Gateway(self.session.limits, on_failure=self._record_failure, on_send=self._mark_sent)
        if not self._prices_registered:
            self.gateway.register_prices([*self.session.models, self.session.worker, *self.session.judges])
            self._prices_registered = True
        return self.gateway

    async def call(
        self, stage: str, endpoint: Endpoint, messages: list[dict[str, str]], params: dict[str, Any], sample: str
    ) -> tuple[str, str]:
        """Return (key, response text): from the store if answered before, else from the provider.

        Raises:
            CallFailed: every attempt failed (counted as failed in its stage).
            FatalProviderError: the provider refuses every call of this model.
        """
        key, text, _ = await self.call_reply(stage, endpoint, messages, params, sample)
        return key, text

    async def call_reply(
        self, stage: str, endpoint: Endpoint, messages: list[dict[str, str]], params: dict[str, Any], sample: str
    ) -> tuple[str, str, str | None]:
        """`call`, plus the provider's finish reason ("length": cut off at max_tokens).

        Raises:
            CallFailed: every attempt failed (counted as failed in its stage).
            FatalProviderError: the provider refuses every call of this model.
        """
        messages_json, params_json = canonical_json(messages), canonical_json(params)
        key = call_key_of(endpoint.model, messages_json, params_json, sample)
        stored = self.store.call_reply(key) if key in self._answered else None
        if stored is not None:
            return key, *stored
        extra: dict[str, Any] = {}
        if endpoint.simulated:
            # The simulated provider is seeded by the call key; a real model samples on its own.
            extra = {"seed": seed_for(key)}
        request = CallRequest(
            key=key, stage=stage, endpoint=endpoint, messages=messages, params={**params, **extra}, sample=sample,
            metadata={"simulation": self.world_id} if endpoint.simulated else {},
        )
        try:
            result = await self._ensure_gateway().complete(request)
        except BaseException as exc:  # failed, or cancelled by a stopped run: no longer in flight either way
            clear_in_flight(self.store, key)
            if isinstance(exc, CallFailed) and not isinstance(exc, FatalProviderError):
                self.progress.stages[stage].failed += 1
            raise
        st = self.progress.stages[stage]
        st.sent += 1
        st.prompt_tokens += result.prompt_tokens or 0
        st.completion_tokens += result.completion_tokens or 0
        if result.cost is None:
            st.cost_known = False
        else:
            st.cost += result.cost
        self.store.record_call(
            CallRecord(
                key=key, stage=stage, model=endpoint.model, sample=sample, messages_json=messages_json,
                params_json=params_json, response=result.text, prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens, cost=result.cost, latency_s=result.latency_s,
                attempts=result.attempts, simulated=endpoint.simulated, finish_reason=result.finish_reason,
            )
        )
        clear_in_flight(self.store, key)
        self._answered.add(key)
        return key, result.text, result.finish_reason
