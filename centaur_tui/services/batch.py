"""Provides what `centaur check` says about batch mode: which calls go through provider batches, at which price."""

from __future__ import annotations

from centaur_tui.domain.session import Endpoint
from centaur_tui.domain.study import Study


def batch_plan_lines(study: Study) -> list[str]:
    """One line per model in batch mode (stage, model, where its batch price comes from); empty when none.

    Imports litellm (its price map) only when a stage is in batch mode.
    """
    s = study.session
    entries: list[tuple[str, str, Endpoint]] = []
    if s.judging.mode == "batch":
        entries += [("judging", j.name, j) for j in s.judges]
    if s.generation.mode == "batch":
        entries += [("generation", m.name, m) for m in s.models]
        if s.worker is not None:
            entries.append(("generation", s.worker.name, s.worker))
    if not entries:
        return []
    from centaur_tui.llm.batch import batch_prices

    lines = [
        f"Batch mode (provider batch APIs; results within 24 h; poll every {s.batch.poll_interval_s:g} s, "
        + ("the run waits for them):" if s.batch.wait else "the run stops after sending, exit status 4):")
    ]
    for stage, name, ep in entries:
        batched = s.batched("judging" if stage == "judging" else "automation", ep)
        if not batched:
            lines.append(f"  {stage:<10} {name:<24} {ep.model}: no batch API, sent online ([batch] unsupported)")
            continue
        prices = batch_prices(ep, s.batch.discount)
        price = (
            f"${prices[0] * 1e6:,.4g} / ${prices[1] * 1e6:,.4g} per M input/output tokens ({prices[2]})"
            if prices is not None
            else "price unknown (set batch_input_cost_per_mtok and batch_output_cost_per_mtok)"
        )
        lines.append(f"  {stage:<10} {name:<24} {ep.model}: {price}")
    return lines
