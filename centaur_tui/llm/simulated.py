"""Provides the litellm custom provider behind `simulated/...` model strings (see simulation.py)."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from typing import Any

from litellm import CustomLLM
from litellm.types.utils import ModelResponse, Usage

from centaur_tui.domain.prompts import DIALOGUE_ASK
from centaur_tui.domain.session import Faults
from centaur_tui.domain.task import Task
from centaur_tui.llm.simulation import (
    _WORLDS,
    World,
    _cover_prob,
    assistance,
    corrupt,
    deliverable,
    dialogue_answer,
    dialogue_question,
    judge_reply,
    worker_deliverable,
)

_ASK_TAIL = DIALOGUE_ASK.rsplit(".", 2)[-2] + "."
"""How a worker's request for a question ends ("Reply with only your question.")."""


class SimulatedLLM(CustomLLM):
    """The litellm custom provider behind `simulated/...` model strings."""

    def __init__(self) -> None:
        super().__init__()
        self._attempts: Counter[tuple[Any, ...]] = Counter()

    def _respond(
        self,
        model: str,
        messages: list[dict[str, Any]],
        optional_params: dict[str, Any],
        litellm_params: dict[str, Any] | None,
    ) -> tuple[str, World]:
        metadata = (litellm_params or {}).get("metadata") or {}
        world = _WORLDS.get(str(metadata.get("simulation")))
        if world is None:
            raise ValueError("simulated provider: no simulation registered for this call (metadata.simulation)")
        seed = optional_params.get("seed", 0)
        name = "simulated/" + model
        system, user = messages[0]["content"], messages[1]["content"]
        kind = world.kind(system)
        task = world.task_in(user)
        rng = random.Random(f"{seed}|{name}|{kind}")
        if kind == "automation":
            knobs = world.candidates.get(name)
            if knobs is None:
                raise ValueError(f"simulated provider: {name} is not a candidate of this session")
            skill = knobs.automation_skill.for_task(task.id)
            text = deliverable(task, self._coverage(task, skill, rng), rng, knobs.style)
            world.learn_author(text, world.families.get(name))
            return text, world
        if kind == "assistance":
            knobs = world.candidates.get(name)
            if knobs is None:
                raise ValueError(f"simulated provider: {name} is not an assistant of this session")
            if len(messages) > 2:  # a worker's question in a dialogue ([augmentation] turns > 1)
                skill = (knobs.dialogue_skill or knobs.coaching_skill).for_task(task.id)
                return dialogue_answer(task, skill, rng), world
            text = assistance(task, knobs.coaching_skill.for_task(task.id), rng, knobs.specificity)
            world.learn_author(text, world.families.get(name))
            return text, world
        if kind == "worker":
            wknobs = world.workers.get(name)
            if wknobs is None:
                raise ValueError(f"simulated provider: {name} is not the worker of this session")
            match = world._worker_re.match(user)
            guidance = match.group("assistance_text") if match else ""
            if len(messages) > 2:  # a dialogue: asked for a question, or to write after the answers
                if str(messages[-1]["content"]).endswith(_ASK_TAIL):
                    return dialogue_question(rng), world
                answers = [str(m["content"]) for m in messages[2:] if m["role"] == "user"]
                guidance = "\n".join([guidance, *answers])
            skill = wknobs.skill.for_task(task.id)
            text = worker_deliverable(task, skill, guidance, rng, wknobs.uses_specifics)
            # For a judge's planted family preference: the family that guided the worker.
            world.learn_author(text, world.family_of(guidance) if guidance.strip() else None)
            return text, world
        jknobs = world.judges.get(name)
        if jknobs is None:
            raise ValueError(f"simulated provider: {name} is not a judge of this session")
        match = world._judge_re.match(user)
        if match is None:
            raise ValueError("simulated provider: the judge prompt does not match the session's template")
        allow_ties = '"tie"' in match.group("winner_values")
        reply = judge_reply(
            task,
            world.universal,
            jknobs,
            match.group("option_1"),
            match.group("option_2"),
            allow_ties,
            rng,
            world.family_of,
        )
        attempt_rng = random.Random(f"{seed}|{name}|invalid|{len(messages)}")
        if attempt_rng.random() < world.faults.invalid_reply_rate:
            return corrupt(reply, attempt_rng), world
        return json.dumps(reply), world

    @staticmethod
    def _coverage(task: Task, skill: float, rng: random.Random) -> dict[str, int]:
        coverage = {}
        for r in task.requirements:
            depth = 1 + (rng.random() < skill) + (rng.random() < skill * skill)
            coverage[r.id] = depth if rng.random() < _cover_prob(skill, r) else 0
        return coverage

    async def acompletion(
        self,
        model: str,
        messages: list,
        api_base: str,
        custom_prompt_dict: dict,
        model_response: ModelResponse,
        print_verbose: Any,
        encoding: Any,
        api_key: Any,
        logging_obj: Any,
        optional_params: dict,
        acompletion: Any = None,
        litellm_params: Any = None,
        logger_fn: Any = None,
        headers: Any = None,
        timeout: Any = None,
        client: Any = None,
    ) -> ModelResponse:
        import litellm

        metadata = (litellm_params or {}).get("metadata") or {}
        world = _WORLDS.get(str(metadata.get("simulation")))
        faults = world.faults if world else Faults()
        seed = optional_params.get("seed", 0)
        # Attempts are counted per study (World.scope): a run's faults depend on its session and
        # on the earlier runs of that session in this process, never on other sessions' calls.
        key = (world.scope if world else "", seed, model, len(messages))
        self._attempts[key] += 1
        fault_rng = random.Random(f"{seed}|{model}|{len(messages)}|attempt{self._attempts[key]}")
        if faults.latency_s > 0:
            jitter = 1 + faults.latency_jitter * (2 * fault_rng.random() - 1)
            await asyncio.sleep(faults.latency_s * jitter)
        if fault_rng.random() < faults.error_rate:
            cls = litellm.RateLimitError if fault_rng.random() < 0.5 else litellm.InternalServerError
            raise cls(message="simulated transient error", llm_provider="simulated", model=model)
        try:
            text, _ = self._respond(model, messages, optional_params, litellm_params)
        except ValueError as exc:
            # A configuration mismatch, not a transient fault: never retried.
            raise litellm.BadRequestError(message=str(exc), model=model, llm_provider="simulated") from None
        model_response.choices[0].message.content = text
        prompt_chars = sum(len(m.get("content") or "") for m in messages)
        usage = Usage(
            prompt_tokens=prompt_chars // 4 + 1,
            completion_tokens=len(text) // 4 + 1,
            total_tokens=prompt_chars // 4 + len(text) // 4 + 2,
        )
        model_response.usage = usage  # type: ignore[attr-defined]
        model_response.model = "simulated/" + model
        return model_response
