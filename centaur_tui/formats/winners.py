"""Provides the reading of winner-only judgment files: the documented CSV/JSONL, or MT-Bench's layout.

Columns: `task` (or MT-Bench's `question_id`, turned into a task id by a template), `model_a`,
`model_b` (the options in the order shown), `winner` (model_a, model_b, tie, tie (bothbad), or a
candidate's name), `judge`; optionally `turn` (default 1), `run`, `mode`, `judge_kind` (default:
llm for one of the session's LLM judges, expert otherwise), `rationale`, and
`conversation_a`/`conversation_b` (the texts judged: a string, or MT-Bench's list of messages,
of which the assistant's answer of the turn is taken). Any other column is ignored and counted.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from centaur_tui.domain.blinding import Blinding
from centaur_tui.domain.errors import ImportFileError
from centaur_tui.domain.plan import (
    Comparison,
    Mode,
    candidate_output_id,
    candidates_for,
    question_comparison_id,
    question_output_id,
)
from centaur_tui.domain.records import ComparisonRecord, ImportedOutput, JudgmentRecord
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.formats.outputs import candidate_problem, mode_and_run
from centaur_tui.formats.problems import Problems
from centaur_tui.formats.reader import LIMITS, Limits, peek_columns, read_records
from centaur_tui.formats.rules import ImportRules
from centaur_tui.formats.text import MAX_TEXT_CHARS, brief, int_value, label_problem, text_problem

WINNER_OPTIONAL = (
    "prompt",
    "turn",
    "run",
    "mode",
    "judge_kind",
    "rationale",
    "conversation_a",
    "conversation_b",
    "tstamp",
)
"""Optional columns of a winner-only file; `tstamp` (Chatbot Arena's time stamp) is read and ignored."""
WINNER_LABELS = {"model_a": 0, "model_b": 1, "tie": 2, "tie (bothbad)": 2}
"""MT-Bench's winner labels: the option shown first (model_a) or second, or a tie (`tie (bothbad)`: both bad)."""
MAX_TEMPLATE_CHARS = 200
"""Longest `--task-template`: a task id is a short slug."""
DUPLICATES = ("refuse", "keep-first", "keep-last")
"""What to do with a second verdict of one judge on one comparison in the same order (`--duplicates`)."""


def check_task_template(template: str) -> None:
    """Refuse a task template other than text with `{question_id}` and `{turn}` fields, unformatted.

    A format spec is refused: `{question_id:10000000000}` asked for a 10 GB string (MemoryError).

    Raises:
        ImportFileError: naming `--task-template` and what is wrong.
    """

    def bad(why: str) -> ImportFileError:
        return ImportFileError(
            f"--task-template {brief(template)}: not a template of {{question_id}} and {{turn}} ({why}); "
            "e.g. mtbench_{question_id}_t{turn}; nothing was imported"
        )

    if len(template) > MAX_TEMPLATE_CHARS:
        raise bad(f"{len(template):,} characters, more than {MAX_TEMPLATE_CHARS}")
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise bad(f"not a template ({exc})") from None
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if name not in ("question_id", "turn"):
            raise bad(f"unknown field {{{name}}}")
        if spec or conversion:
            raise bad(f"{{{name}}} takes no format spec or conversion")


def _conversation_text(value: Any, turn: int) -> str | None:
    """The answer of turn `turn` in a conversation (MT-Bench: a list of {role, content}), or the text itself."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        answers = [m.get("content") for m in value if isinstance(m, dict) and m.get("role") == "assistant"]
        if len(answers) >= turn and isinstance(answers[turn - 1], str):
            return cast(str, answers[turn - 1])
    return None


def _conversation_prompt(value: Any, turn: int) -> str | None:
    """The user's messages up to turn `turn` of an MT-Bench conversation (the question judged), or None."""
    if not isinstance(value, list):
        return None
    asked = [m.get("content") for m in value if isinstance(m, dict) and m.get("role") == "user"][:turn]
    if len(asked) < turn or not all(isinstance(a, str) for a in asked):
        return None
    return "\n\n".join(cast(list[str], asked))


@dataclass(frozen=True)
class WinnerFile:
    """What a winner-only judgment file holds, checked: the judgments and the outputs it brings."""

    judgments: list[JudgmentRecord]
    outputs: list[ImportedOutput]
    tournaments: set[tuple[int, str, str]]
    """(run, task, mode) of every judgment: their comparisons are built where missing."""
    stored_conversations: int = 0
    """Outputs the file's conversations give that were stored already (with the same text)."""
    ignored: dict[str, int] = field(default_factory=dict)
    """Undocumented columns (or JSON fields) and how many records held them; they were not read."""
    comparisons: list[ComparisonRecord] = field(default_factory=list)
    """New comparisons of generic tasks (one per question and pair), stored as they are."""
    new_judges: list[str] = field(default_factory=list)
    """Judge ids the file uses that were registered as experts (`--new-judges-are-experts`), in file order."""
    duplicates: int = 0
    """Verdicts left out under `--duplicates keep-first` or `keep-last` (a judge's repeat in one order)."""
    second_order: int = 0
    """Judgments of a comparison a judge also judged in the other order (stored as presentation 1)."""


class _WinnerReader:
    """The records of one winner-only file, checked as they are read."""

    def __init__(
        self,
        path: Path,
        stored_outputs: Mapping[str, str],
        stored: Mapping[str, ComparisonRecord],
        rules: ImportRules,
        blinding: Blinding,
        task_template: str,
        *,
        generic_task: str | None = None,
        duplicates: str = "refuse",
        new_judges_are_experts: bool = False,
        stored_orders: Mapping[tuple[str, str], Mapping[str, int]] | None = None,
    ) -> None:
        self.generic = generic_task
        self.duplicates = duplicates
        self.new_judges_are_experts = new_judges_are_experts
        self.new_judges: dict[str, int] = {}
        self.refused_judges: dict[str, str] = {}
        # (comparison, judge) -> {option1 -> (presentation, line or 0 when stored, index in judgments or -1)}
        self.orders: dict[tuple[str, str], dict[str, tuple[int, int, int]]] = {
            key: {first: (p, 0, -1) for first, p in seen.items()} for key, seen in (stored_orders or {}).items()
        }
        self.dropped: set[int] = set()
        self.duplicate_count = 0
        self.second_order = 0
        self.new_comparisons: dict[str, ComparisonRecord] = {}
        self.prompts: dict[str, tuple[str | None, int]] = {}
        self.session = rules.session
        self.rules = rules
        self.blinding = blinding
        self.template = task_template
        self.has_task = "task" in peek_columns(path)
        self.problems = Problems(str(path))
        self.stored_outputs = stored_outputs
        self.comparisons = dict(stored)
        self.judges = {j.name for j in self.session.judges}
        self.checked: dict[str, str | None] = {}
        self.new_outputs: dict[str, ImportedOutput] = {}
        self.already: set[str] = set()
        self.judgments: list[JudgmentRecord] = []

    def columns(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        required = ("task" if self.has_task else "question_id", "model_a", "model_b", "winner", "judge")
        return required, WINNER_OPTIONAL + (("question_id",) if self.has_task else ())

    def record(self, line: int, rec: dict[str, Any]) -> None:
        before = self.problems.count
        turn_value = rec.get("turn", 1)
        try:
            turn = int_value(turn_value if turn_value != "" else 1, 1, 100)
        except ValueError:
            self.problems.add(line, "turn", f"{brief(turn_value)} is not a turn number (1, 2, ...)")
            return
        found = self._task(line, rec, turn)
        if found is None:
            return
        task, question = found
        mode, run = mode_and_run(self.session, rec, line, self.problems)
        names = self._names(line, rec, mode)
        judge, kind = self._judge(line, rec)
        winner = self._winner(line, rec, names)
        rationale = rec.get("rationale")
        if rationale == "":
            rationale = None
        if rationale is not None:
            bad = text_problem(rationale, limit=MAX_TEXT_CHARS)
            if bad is not None:
                self.problems.add(line, "rationale", bad)
        if self.problems.count != before:
            return
        assert mode is not None and run is not None
        prompt = self._prompt(line, rec, question, turn) if question is not None else None
        self._conversations(line, rec, task, mode, run, names, turn, question)
        if self.problems.count != before:
            return
        self._judgment(line, task, mode, run, names, judge, kind, winner, rationale, question, prompt)

    def _task(self, line: int, rec: dict[str, Any], turn: int) -> tuple[str, str | None] | None:
        """(task, question): the row's task; under a generic task, the task and the row's question id."""
        if self.has_task:
            task = rec["task"]
            if not isinstance(task, str):
                self.problems.add(line, "task", f"a JSON {type(task).__name__}, not a string")
                return None
        else:
            qid = rec["question_id"]
            if isinstance(qid, bool) or not isinstance(qid, (int, str)) or not str(qid).strip():
                self.problems.add(line, "question_id", f"{brief(qid)} is not a question id")
                return None
            task = self.template.format(question_id=str(qid).strip()[:MAX_TEMPLATE_CHARS], turn=turn)
        if self.generic is not None:
            bad = label_problem(task)
            if bad is not None:
                self.problems.add(line, "task" if self.has_task else "question_id", bad)
                return None
            return self.generic, task
        if task not in self.session.tasks:
            made = "" if self.has_task else f" (made from question_id and turn by --task-template {self.template!r})"
            self.problems.add(
                line,
                "task" if self.has_task else "question_id",
                f"{brief(task)}{made} is not a task of this session (its tasks: {', '.join(self.session.tasks)}; "
                "or put every question under a generic task: --generic-task NAME)",
            )
        return task, None

    def _prompt(self, line: int, rec: dict[str, Any], question: str, turn: int) -> str | None:
        """The question's prompt text: the `prompt` column, else the user's messages of `conversation_a`."""
        value = rec.get("prompt")
        column = "prompt"
        if value is None or value == "":
            value, column = _conversation_prompt(rec.get("conversation_a"), turn), "conversation_a"
        if value is None:
            return None
        bad = (
            f"a JSON {type(value).__name__}, not a string"
            if not isinstance(value, str)
            else text_problem(value, limit=MAX_TEXT_CHARS)
        )
        if bad is not None:
            self.problems.add(line, column, bad)
            return None
        known = self.prompts.get(question)
        if known is None:
            self.prompts[question] = (value, line)
        elif known[0] != value:
            self.problems.add(line, column, f"another prompt for question {brief(question)} than line {known[1]}")
        return cast(str, value)

    def _names(self, line: int, rec: dict[str, Any], mode: Mode | None) -> list[str]:
        session = self.session
        names: list[str] = []
        for column in ("model_a", "model_b"):
            name = rec[column]
            bad = label_problem(name)
            if bad is None and mode is not None and name not in candidates_for(session, mode):
                known = ", ".join(candidates_for(session, mode)) or "none"
                article = "an" if mode[0] in "aeiou" else "a"
                bad = f"{name!r} is not {article} {mode} candidate of this session (its candidates: {known})"
            if bad is None and name in session.imported_names:
                bad = candidate_problem(session, name, mode or "automation", self.blinding, self.checked)
            if bad is not None:
                self.problems.add(line, column, bad)
            names.append(name if isinstance(name, str) else "")
        if names[0] == names[1] and names[0]:
            self.problems.add(line, "model_b", "the same candidate as model_a")
        return names

    def _judge(self, line: int, rec: dict[str, Any]) -> tuple[str, str]:
        judge = rec["judge"]
        bad = label_problem(judge)
        if bad is not None:
            self.problems.add(line, "judge", bad)
        kind = rec.get("judge_kind", "") or ("llm" if isinstance(judge, str) and judge in self.judges else "expert")
        if kind not in ("llm", "expert"):
            self.problems.add(line, "judge_kind", f"{brief(kind)} is not llm or expert")
        elif kind == "expert" and bad is None and self.new_judges_are_experts:
            self._new_judge(line, judge)
        return judge, kind

    def _new_judge(self, line: int, judge: str) -> None:
        """Register a judge the session does not know as an expert (`--new-judges-are-experts`), id as it is."""
        if judge in self.rules.experts or judge in self.rules.add_experts or judge in self.new_judges:
            return
        why = self.refused_judges.get(judge)
        if why is None and judge not in self.refused_judges:
            clash = self.session.name_clash(judge)
            if clash is not None:
                why = f"{judge!r} is {clash}: it cannot be registered as an expert"
            else:
                try:
                    ExpertSpec(id=judge, name=judge)
                except ValueError:
                    why = (
                        f"{brief(judge)} cannot be an expert id (letters, digits and _ . @ : -, a letter or "
                        "digit first, at most 200 characters)"
                    )
            self.refused_judges[judge] = why or ""
        if why:
            self.problems.add(line, "judge", why)
            return
        self.new_judges[judge] = line

    def _winner(self, line: int, rec: dict[str, Any], names: list[str]) -> str | None:
        text = rec["winner"]
        if isinstance(text, str) and text.strip() in WINNER_LABELS:
            pick = WINNER_LABELS[text.strip()]
            return "tie" if pick == 2 else names[pick]
        if isinstance(text, str) and text.strip() in names and text.strip():
            return text.strip()
        self.problems.add(
            line,
            "winner",
            f"{brief(text)} is not one of {', '.join(WINNER_LABELS)} (or the name of model_a or model_b); "
            "a label outside this set is refused, never read as a tie",
        )
        return None

    def _output_id(self, run: int, task: str, mode: Mode, name: str, question: str | None) -> str:
        if question is None:
            return candidate_output_id(self.session, run, task, mode, name)
        return question_output_id(run, task, mode, name, question)

    def _conversations(
        self,
        line: int,
        rec: dict[str, Any],
        task: str,
        mode: Mode,
        run: int,
        names: list[str],
        turn: int,
        question: str | None,
    ) -> None:
        """The texts of the row (MT-Bench's conversations) become imported outputs where none is stored."""
        session = self.session
        for column, name in (("conversation_a", names[0]), ("conversation_b", names[1])):
            oid = self._output_id(run, task, mode, name, question)
            value = rec.get(column)
            if value is None:
                if oid not in self.stored_outputs and oid not in self.new_outputs:
                    self.problems.add(
                        line,
                        column,
                        f"no output of {name!r} for task {task!r}, {mode}, run {run} is stored and the row gives "
                        "none (import outputs first, or give the conversations)",
                    )
                continue
            text = _conversation_text(value, turn)
            bad = (
                f"has no assistant answer for turn {turn}" if text is None else text_problem(text, limit=MAX_TEXT_CHARS)
            )
            if bad is not None:
                self.problems.add(line, column, bad)
                continue
            assert text is not None
            new = self.new_outputs.get(oid)
            known_text = self.stored_outputs.get(oid, new.text if new is not None else None)
            if oid in self.stored_outputs:
                self.already.add(oid)
            if known_text is not None:
                if known_text != text:
                    where = "stored" if oid in self.stored_outputs else f"line {new.line if new else '?'}"
                    self.problems.add(line, column, f"another text for {name!r} on task {task!r} than the one {where}")
                continue
            if name not in session.imported_names:
                self.problems.add(
                    line,
                    column,
                    f"{name!r} is a generated candidate with no stored output for task {task!r}, run {run}: "
                    "run the session first (only imported candidates take their text from the file)",
                )
                continue
            worker = name if mode == "automation" else "imported"
            self.new_outputs[oid] = ImportedOutput(line, run, task, mode, name, worker, text, question=question)

    def _judgment(
        self,
        line: int,
        task: str,
        mode: Mode,
        run: int,
        names: list[str],
        judge: str,
        kind: str,
        winner: str | None,
        rationale: str | None,
        question: str | None,
        prompt: str | None,
    ) -> None:
        session = self.session
        a, b = sorted(names)
        cid = (
            Comparison(run, task, mode, a, b).id
            if question is None
            else question_comparison_id(run, task, mode, a, b, question)
        )
        if cid not in self.comparisons:
            ids = {n: self._output_id(run, task, mode, n, question) for n in (a, b)}
            record = ComparisonRecord(cid, run, task, mode, a, b, ids[a], ids[b], question, prompt)
            self.comparisons[cid] = record
            if question is not None:
                self.new_comparisons[cid] = record
        seen = self.orders.setdefault((cid, judge), {})
        earlier = seen.get(names[0])
        presentation = earlier[0] if earlier is not None else len(seen)
        found = self.rules.problems(self.comparisons[cid], kind, judge, "", presentation, winner)
        for column, message in found:
            if column == "presentation":
                column = "model_a"
                other = min((at for _, at, _ in seen.values()), default=0)
                message = (
                    f"{judge!r} judged {names[1]} vs {names[0]} in the other order too "
                    f"({f'line {other}' if other else 'stored'}); "
                    f'an LLM judge\'s second order needs [judging] orders = "both"'
                )
            self.problems.add(line, column, message)
        if found:
            return
        if earlier is not None:
            if earlier[1] == 0:  # stored: the store tells an identical one (unchanged) from a conflict
                pass
            elif self.duplicates == "refuse":
                self.problems.add(
                    line,
                    "judge",
                    f"{judge!r} judged {names[0]} vs {names[1]} on {brief(question or task)} in this order twice "
                    f"(also line {earlier[1]}); choose --duplicates keep-first or keep-last",
                )
                return
            elif self.duplicates == "keep-first":
                self.duplicate_count += 1
                return
            else:  # keep-last: the earlier verdict is left out
                self.duplicate_count += 1
                self.dropped.add(earlier[2])
        elif seen:
            self.second_order += 1
        seen[names[0]] = (presentation, line, len(self.judgments))
        self.judgments.append(
            JudgmentRecord(
                comparison_id=cid,
                judge=judge,
                judge_kind="llm" if kind == "llm" else "expert",
                judge_family=session.judge(judge).family if kind == "llm" else None,
                presentation=presentation,
                option1=names[0],
                option2=names[1],
                winner=winner,
                option1_mean=None,
                option2_mean=None,
                valid=True,
                invalid_reason=None,
                rationale=rationale,
                call_key=None,
                attempts=1,
            )
        )


def read_winner_judgments(
    path: Path,
    stored_outputs: Mapping[str, str],
    stored: Mapping[str, ComparisonRecord],
    rules: ImportRules,
    blinding: Blinding,
    *,
    task_template: str = "mtbench_{question_id}_t{turn}",
    generic_task: str | None = None,
    duplicates: str = "refuse",
    new_judges_are_experts: bool = False,
    stored_orders: Mapping[tuple[str, str], Mapping[str, int]] | None = None,
    limits: Limits = LIMITS,
) -> WinnerFile:
    """Read and check a winner-only judgment file (the documented CSV/JSONL, or MT-Bench's layout).

    The comparison a row refers to must be stored, or be buildable: both outputs stored, or
    given in the row for an imported candidate. Rules as for any import (`ImportRules`): an
    eligible LLM judge of the session or a registered expert, ties only where allowed.

    A judge's verdict on a comparison in the order it first saw it is presentation 0, in the
    other order presentation 1 (MT-Bench has authors who voted on both orders); a second verdict
    in the same order is a duplicate, handled by `duplicates`.

    Args:
        path: The file.
        stored_outputs: Text of every stored output, by id.
        stored: The stored comparisons, by id.
        rules: Who may have judged what.
        blinding: The session's blinding (an imported candidate's name must be masked in full).
        task_template: The task id of an MT-Bench row (or the question id under a generic task),
            from its `question_id` and `turn`.
        generic_task: A generic task of the session: every row's task (or templated question id)
            becomes a question of it, with its prompt kept on the comparison.
        duplicates: `refuse` (a problem naming both lines), `keep-first` or `keep-last` (the other is
            left out and counted).
        new_judges_are_experts: A judge the session does not know is registered as an expert.
        stored_orders: (comparison, judge) -> {option1: presentation} of the stored judgments.
        limits: The reader's limits.

    Raises:
        ImportFileError: listing every problem (line and field); nothing is returned.
    """
    check_task_template(task_template)
    if duplicates not in DUPLICATES:
        raise ImportFileError(f"--duplicates {brief(duplicates)}: not one of {', '.join(DUPLICATES)}")
    if generic_task is not None and generic_task not in rules.session.generic_tasks:
        declared = ", ".join(rules.session.generic_tasks) or "none"
        raise ImportFileError(
            f"--generic-task {brief(generic_task)}: not a generic task of this session (its generic_tasks: "
            f"{declared}); add generic_tasks = [{generic_task!r}] to the session file; nothing was imported"
        )
    reader = _WinnerReader(
        path,
        stored_outputs,
        stored,
        rules,
        blinding,
        task_template,
        generic_task=generic_task,
        duplicates=duplicates,
        new_judges_are_experts=new_judges_are_experts,
        stored_orders=stored_orders,
    )
    required, optional = reader.columns()
    for line, _, rec in read_records(path, required, optional, reader.problems, limits=limits):
        reader.record(line, rec)
    if not reader.judgments and not reader.problems.count:
        reader.problems.add(None, None, "no judgment in the file")
    reader.problems.raise_if_any()
    judgments = [j for i, j in enumerate(reader.judgments) if i not in reader.dropped]
    comps = reader.comparisons
    tournaments = {(c.run, c.task, c.mode) for c in (comps[j.comparison_id] for j in judgments) if c.question is None}
    return WinnerFile(
        judgments,
        list(reader.new_outputs.values()),
        tournaments,
        len(reader.already),
        dict(reader.problems.ignored),
        list(reader.new_comparisons.values()),
        list(reader.new_judges),
        reader.duplicate_count,
        reader.second_order,
    )
