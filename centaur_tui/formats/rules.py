"""Provides the rules an imported judgment must meet: an eligible LLM judge of the session, or a registered expert."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from centaur_tui.domain.errors import ImportFileError
from centaur_tui.domain.plan import Comparison, Mode, eligible_judges
from centaur_tui.domain.records import ComparisonRecord
from centaur_tui.domain.session import ExpertSpec, Session


@dataclass(frozen=True)
class ImportRules:
    """Who may have judged what: the session's LLM judges, its experts and judging rules.

    Args:
        session: The session (judges, families, `allow_ties`, `orders`).
        experts: The registered experts (session file and app), by id.
        add_experts: Expert ids to register with this import (`--add-experts`).
        new_judges_are_experts: Any other judge that is not an LLM judge of the session is an expert
            to register (`--new-judges-are-experts`; its id is checked where it is read).
    """

    session: Session
    experts: Mapping[str, ExpertSpec]
    add_experts: tuple[str, ...] = ()
    new_judges_are_experts: bool = False

    def new_experts(self) -> list[ExpertSpec]:
        """The experts to register, checked (ImportFileError naming `--add-experts`); registered ones are skipped."""
        problems = []
        added: list[ExpertSpec] = []
        for expert_id in dict.fromkeys(self.add_experts):
            clash = self.session.name_clash(expert_id)
            if clash is not None:
                problems.append(f"{expert_id!r} is {clash}")
                continue
            try:
                spec = ExpertSpec(id=expert_id, name=expert_id)
            except ValueError:
                problems.append(f"{expert_id!r} is not an expert id (lowercase letters, digits, _; a letter first)")
                continue
            if expert_id not in self.experts:
                added.append(spec)
        if problems:
            raise ImportFileError("--add-experts: " + "; ".join(problems) + "; nothing was imported")
        return added

    def problems(
        self, comp: ComparisonRecord, kind: str, judge: str, family: str, presentation: int, winner: str | None
    ) -> list[tuple[str, str]]:
        """(column, problem) for each way a judgment does not fit the study; empty when it fits."""
        session = self.session
        out: list[tuple[str, str]] = []
        if winner == "tie" and not session.judging.allow_ties:
            out.append(("winner", "'tie', but this session does not allow ties ([judging] allow_ties = false)"))
        if kind == "llm":
            spec = next((j for j in session.judges if j.name == judge), None)
            if spec is None:
                known = ", ".join(j.name for j in session.judges)
                out.append(("judge", f"{judge!r} is not an LLM judge of this session (its judges: {known})"))
                return out
            if family and family != spec.family:
                out.append(("judge_family", f"{family!r} but LLM judge {judge!r} is of family {spec.family!r}"))
            orders = (0, 1) if session.judging.orders == "both" else (0,)
            if presentation not in orders:
                out.append(
                    (
                        "presentation",
                        f"{presentation} but this session judges each pair in "
                        f"{session.judging.orders} order(s) ([judging] orders)",
                    )
                )
            pair = Comparison(comp.run, comp.task, cast(Mode, comp.mode), comp.candidate_a, comp.candidate_b)
            try:
                eligible = {j.name for j in eligible_judges(session, pair)}
            except KeyError as exc:
                out.append(("comparison_id", f"candidate {exc.args[0]!r} of {comp.id} is not a model of this session"))
                return out
            if judge not in eligible:
                out.append(
                    (
                        "judge",
                        f"LLM judge {judge!r} (family {spec.family}) may not judge {comp.id}: it holds "
                        f"an output of family {spec.family} ({comp.candidate_a} vs {comp.candidate_b}; "
                        "leave-family-out)",
                    )
                )
            return out
        clash = session.name_clash(judge)
        if clash is not None:
            out.append(
                ("judge", f"expert {judge!r} is {clash}; an expert's id must differ from every judge and model name")
            )
            return out
        if family:
            out.append(("judge_family", f"{family!r} given for an expert (must be empty)"))
        expert = self.experts.get(judge)
        if expert is None and judge not in self.add_experts and not self.new_judges_are_experts:
            registered = sorted(self.experts)
            more = f" and {len(registered) - 20} more" if len(registered) > 20 else ""
            listed = ", ".join(registered[:20]) + more or "none"
            out.append(
                (
                    "judge",
                    f"{judge!r} is not an expert of this session (registered: {listed}); "
                    "register new experts with --add-experts, or every unknown judge with --new-judges-are-experts",
                )
            )
        elif expert is not None and expert.tasks and comp.task not in expert.tasks:
            out.append(("judge", f"expert {judge!r} judges only {', '.join(expert.tasks)}, not {comp.task!r}"))
        if presentation not in (0, 1):
            out.append(
                (
                    "presentation",
                    f"{presentation} but an expert judgment is presentation 0 or 1 (1: the swapped repeat)",
                )
            )
        return out
