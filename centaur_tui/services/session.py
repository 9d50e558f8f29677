"""Provides the session use cases: find a session file, load it, check its keys, open its database, read its state.

Every front end (the CLI, the app, a browser server) opens a session through these functions,
so "a bare name means sessions/NAME.toml", "looking at a session never creates its database"
and "a run refuses when a key is missing" are written once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from centaur_tui.domain.errors import CentaurError, UnknownSessionError

if TYPE_CHECKING:
    # Only for annotations: the home screen imports this module on the event loop, and the
    # domain models bring pydantic (about 130 ms), which is imported in the reading thread.
    from centaur_tui.domain.session import Endpoint, ExpertSpec
    from centaur_tui.domain.study import Study
    from centaur_tui.store import Store

SIMULATED_BANNER = "SIMULATED DATA: calls go to the seeded simulated provider, not to language models."


class NoDatabaseError(CentaurError):
    """The session has not been run: its database does not exist yet."""

    def __init__(self, message: str, title: str = "No comparisons yet") -> None:
        super().__init__(message, title=title)


def sessions_dir() -> Path:
    """Folder of the session files: $CENTAUR_SESSIONS, or ./sessions."""
    from centaur_tui.settings import settings

    return settings().sessions


def tasks_dir() -> Path:
    """Folder of the task files: $CENTAUR_TASKS, or ./tasks."""
    from centaur_tui.settings import settings

    return settings().tasks


def resolve_session(value: str) -> Path:
    """Accept a session file path or a bare name in the sessions folder (`demo` -> sessions/demo.toml)."""
    path = Path(value)
    if path.exists() or path.suffix == ".toml":
        return path
    candidate = sessions_dir() / f"{value}.toml"
    return candidate if candidate.exists() else path


def find_session(value: str | Path) -> Path:
    """The session file a command names (a path, or a bare name in the sessions folder), which must exist.

    Raises:
        UnknownSessionError: No such file: "nosuch: no such session file sessions/nosuch.toml"
            (one wording for every command, naming the file looked for; exit status 2).
    """
    text = str(value)
    path = resolve_session(text)
    if path.is_file():
        return path
    if path.is_dir():
        raise UnknownSessionError(f"{text}: is a folder, not a session file")
    looked = path if path.suffix == ".toml" or len(path.parts) > 1 else sessions_dir() / f"{text}.toml"
    message = f"{text}: no such session file" if looked == path else f"{text}: no such session file {looked}"
    raise UnknownSessionError(message)


def open_session(value: str | Path) -> Study:
    """Find and load a session file with its tasks.

    Raises:
        UnknownSessionError: The file does not exist (`find_session`).
        CentaurError: The file is invalid (the loader's errors).
    """
    from centaur_tui.catalog import load_session

    return load_session(find_session(value))


def endpoints(study: Study) -> list[tuple[str, Endpoint]]:
    """Every endpoint a run calls, with its name: candidate models, the worker, the judges."""
    s = study.session
    worker: list[tuple[str, Endpoint]] = [(s.worker.name, s.worker)] if s.worker is not None else []
    return [(m.name, m) for m in s.models] + worker + [(j.name, j) for j in s.judges]


def missing_keys(study: Study) -> list[tuple[str, str, str]]:
    """(endpoint name, model, environment variable) for every API key a run needs and does not have."""
    from centaur_tui.llm import missing_keys as endpoint_missing

    return sorted({(name, e.model, var) for name, e in endpoints(study) for var in endpoint_missing(e)})


def require_keys(study: Study) -> None:
    """Refuse before any call when a real model's key is not set.

    Raises:
        MissingKeyError: a key is missing.
    """
    from centaur_tui.llm import require_keys as require

    require(endpoints(study))


def open_store(
    study: Study, *, must_exist: bool = True, title: str = "No comparisons yet", readonly: bool = False
) -> Store:
    """The session's database (the caller closes it; `with open_store(study) as store:`).

    Args:
        study: The session.
        must_exist: Refuse when the session has never been run, instead of creating an empty database.
        title: Title of that refusal (what the user was trying to do).
        readonly: Open it read-only (`Store(readonly=True)`): for use cases that only read, which
            then never wait for (or block) a writer.

    Raises:
        NoDatabaseError: `must_exist` and the database does not exist yet.
    """
    from centaur_tui.store import Store

    if must_exist and not study.database.exists():
        raise NoDatabaseError(
            f"{study.database} does not exist yet: run the session first (`centaur run {study.session_file}`)",
            title=title,
        )
    from centaur_tui.services.identity import check_identity

    store = Store(study.database, readonly=readonly)
    try:
        check_identity(study, store)
    except BaseException:
        store.close()
        raise
    return store


def stored_simulated(store: Store) -> bool:
    """Whether the stored calls of a database came from the simulated provider (as the run recorded it)."""
    return store.meta().get("simulated") == "true"


@dataclass(frozen=True)
class SessionOverview:
    """What a session's database holds, for an overview screen (read in a thread)."""

    calls_by_stage: dict[str, int]
    llm_judgments: int
    calls_left: int
    tokens: int
    cost: float | None
    errors: int
    comparisons: int
    experts: list[ExpertSpec]
    workload: dict[str, tuple[int, int]]
    """Per expert (places assigned, judged)."""
    simulated: bool
    work: dict[str, tuple[int, int]] | None = None
    """Per expert (tasks assigned, deliverables submitted) for sessions with `[human_workers]`, else None."""
    llm_invalid: int = 0
    """LLM judgments stored invalid, of `llm_judgments` (the overview's invalid column)."""
    seat: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    """Per expert (lower-average winners, gold checks judged, gold checks passed), as the report's seat section."""


def overview(study: Study, store: Store | None) -> SessionOverview:
    """The overview of a session; `store` None (never run) gives the plan without touching the disk."""
    from centaur_tui.domain.plan import summarize

    if store is None:
        plan = summarize(study.session)
        return SessionOverview(
            {}, 0, plan.total_calls, 0, None, 0, 0, list(study.session.experts), {}, study.session.simulated
        )
    from centaur_tui.store import ExpertStore, WorkStore

    experts = ExpertStore(store)
    counts = store.counts()
    summary = experts.state(study)
    return SessionOverview(
        calls_by_stage=counts.calls_by_stage,
        llm_judgments=summary.llm_judgments,
        calls_left=summary.calls_left,
        tokens=counts.prompt_tokens + counts.completion_tokens,
        cost=counts.cost,
        errors=counts.call_errors,
        comparisons=counts.comparisons,
        experts=experts.experts(study),
        workload=experts.workload(),
        simulated=summary.simulated,
        work=WorkStore(store).workload() if study.session.human_workers is not None else None,
        llm_invalid=summary.llm_invalid,
        seat=_seat(study, store),
    )


def _seat(study: Study, store: Store) -> dict[str, tuple[int, int, int]]:
    from centaur_tui.services.report import seat_section

    return {r.expert: (r.lower_average, r.gold_judged, r.gold_passed) for r in seat_section(study, store).rows}


@dataclass(frozen=True)
class SessionRow:
    """A sessions list's line: a session file, whether it was run, its calls and judgments (or why it is invalid)."""

    path: Path
    name: str
    description: str
    simulated: bool
    run: bool
    calls_done: int = 0
    calls_left: int = 0
    llm_judgments: int = 0
    expert_judgments: int = 0
    expert_waiting: int = 0
    error: str | None = None


def session_row(path: Path, store_for: Callable[[Study], Store]) -> SessionRow:
    """The sessions-list line of one session file; an invalid file gives a row with its error, never raises.

    Args:
        path: The session file.
        store_for: Opens (or returns the already open) database of a session that has one;
            a session never run is shown from its plan, without creating its database.
    """
    from centaur_tui.domain.plan import summarize
    from centaur_tui.store import ExpertStore

    try:
        study = open_session(path)
    except CentaurError as exc:
        return SessionRow(path, path.stem, "", False, False, error=exc.message)
    s = study.session
    if not study.database.exists():
        return SessionRow(path, s.name, s.description, s.simulated, False, calls_left=summarize(s).total_calls)
    try:
        state = ExpertStore(store_for(study)).state(study)
    except CentaurError as exc:
        return SessionRow(path, s.name, s.description, s.simulated, False, error=exc.message)
    return SessionRow(
        path,
        s.name,
        s.description,
        state.simulated,
        True,
        state.calls_done,
        state.calls_left,
        state.llm_judgments,
        state.expert_judgments,
        state.expert_waiting,
    )


def list_sessions(folder: Path, store_for: Callable[[Study], Store]) -> list[SessionRow]:
    """The session files of a folder (`*.toml`, by name), one row each (see `session_row`)."""
    return [session_row(path, store_for) for path in sorted(Path(folder).glob("*.toml"))]


def add_expert(study: Study, store: Store, expert_id: str, name: str, tasks: tuple[str, ...] = ()) -> ExpertSpec:
    """Add an expert to a session's database (in addition to those of the session file).

    Raises:
        CentaurError: the id is taken or a task is unknown (the store's checks).
    """
    from centaur_tui.domain.session import ExpertSpec
    from centaur_tui.store import ExpertStore

    expert = ExpertSpec(id=expert_id, name=name, tasks=tasks)
    ExpertStore(store).add_expert(study, expert)
    return expert


def expert(study: Study, store: Store, expert_id: str) -> ExpertSpec:
    """One expert of the session (file or database).

    Raises:
        CentaurError: no such expert.
    """
    from centaur_tui.store import ExpertStore

    return ExpertStore(store).expert(study, expert_id)
