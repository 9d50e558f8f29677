"""Provides hand-made judgments in the store's row format, turned into frames (`Data`), and a three-way example."""

from __future__ import annotations

from typing import Any

from centaur_tui.stats.frames import Design, Frames, build_frames


class Data:
    """A small hand-made session: judgments with their scores, in the store's row format."""

    def __init__(self) -> None:
        self.judgments: list[dict[str, Any]] = []
        self.scores: list[dict[str, Any]] = []
        self.comparisons: dict[str, dict[str, Any]] = {}

    def comparison(self, run: int, task: str, mode: str, x: str, y: str) -> str:
        a, b = sorted((x, y))
        cid = f"c:{mode}:{task}:{run}:{a}:{b}"
        self.comparisons.setdefault(
            cid, {"id": cid, "run": run, "task": task, "mode": mode, "candidate_a": a, "candidate_b": b}
        )
        return cid

    def judge(
        self,
        run: int,
        task: str,
        mode: str,
        first: str,
        second: str,
        judge: str,
        winner: str | None,
        *,
        valid: bool = True,
        scores: tuple[dict[str, int], dict[str, int]] | None = None,
        family: str | None = None,
        kind: str = "llm",
        presentation: int = 0,
        revision: int = 0,
        stated: tuple[float | None, float | None] = (None, None),
    ) -> int:
        """Add one judgment (first = option1, the option shown first); returns its judgment_id."""
        cid = self.comparison(run, task, mode, first, second)
        jid = len(self.judgments) + 1
        self.judgments.append(
            {
                "run": run,
                "task": task,
                "mode": mode,
                "comparison_id": cid,
                "judge": judge,
                "judge_kind": kind,
                "judge_family": family,
                "option1": first,
                "option2": second,
                "winner": winner if valid else None,
                "option1_mean": stated[0],
                "option2_mean": stated[1],
                "valid": int(valid),
                "invalid_reason": None if valid else "invalid after 3 attempt(s): no JSON",
                "rationale": "r",
                "judgment_id": jid,
                "presentation": presentation,
                "revision": revision,
                "attempts": 1,
                "seconds": None,
            }
        )
        if scores is not None and valid:
            for cand, dims in zip((first, second), scores, strict=True):
                for dim, value in dims.items():
                    self.scores.append(
                        {
                            "comparison_id": cid,
                            "judge": judge,
                            "candidate": cand,
                            "dimension": dim,
                            "dimension_kind": "general" if dim.startswith("g") else "task",
                            "score": value,
                            "judgment_id": jid,
                        }
                    )
        return jid

    def frames(self, design: Design | None = None, **kwargs: Any) -> Frames:
        return build_frames(self.judgments, self.scores, [], list(self.comparisons.values()), design, **kwargs)


def three_way() -> Data:
    """Run 1, task t, automation: A, B, C. J1 judges all three pairs, J2 only A-B (hand-computed in the tests)."""
    d = Data()
    d.judge(1, "t", "automation", "A", "B", "J1", "A")
    d.judge(1, "t", "automation", "C", "A", "J1", "tie")
    d.judge(1, "t", "automation", "B", "C", "J1", "C")
    d.judge(1, "t", "automation", "B", "A", "J2", "B")
    return d
