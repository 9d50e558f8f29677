"""Provides the loaders of tasks/ and sessions/ files; every error names the file and the field.

Files are untrusted input: before the models see them they must be UTF-8, at most
`MAX_FILE_BYTES`, hold no non-finite number (TOML allows `inf` and `nan`) and no credential
(keys come from the environment only). Nothing is written while loading; the database folder
is only checked to be creatable.
"""

from __future__ import annotations

import logging
import math
import os
import re
import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from centaur_tui.domain.blinding import blinding_for, blinding_problem, clean_text
from centaur_tui.domain.errors import ConfigError
from centaur_tui.domain.session import Session
from centaur_tui.domain.study import Study
from centaur_tui.domain.task import Task, Universal, generic_task
from centaur_tui.domain.untrusted import looks_like_secret

UNIVERSAL_FILE = "universal.toml"
"""File in the tasks folder holding the general dimensions and universal prompts."""

M = TypeVar("M", bound=BaseModel)

log = logging.getLogger(__name__)


MAX_FILE_BYTES = 1_000_000
"""Largest session or task file read; the biggest shipped one (tasks/universal.toml) is about 6 kB."""

# Keys that name a credential: never accepted in a file, at any depth (params included).
SECRET_KEYS = re.compile(
    r"^(?:api[_-]?key|key|secret|client[_-]?secret|password|passwd|token|api[_-]?token|access[_-]?token"
    r"|auth|authorization|bearer|x-api-key|aws_secret_access_key|private[_-]?key)$",
    re.IGNORECASE,
)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(str(path), None, "file not found") from None
    except IsADirectoryError:
        raise ConfigError(str(path), None, "is a folder, not a file") from None
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot read: {exc.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(str(path), None, f"larger than {MAX_FILE_BYTES:,} bytes: not a session or task file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            str(path), None, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line}); save the file as UTF-8"
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), None, f"malformed TOML: {exc}") from None
    _check_values(data, path, "")
    return data


def _check_values(node: Any, path: Path, where: str) -> None:
    """Refuse non-finite numbers and credentials anywhere in a parsed file, naming the field."""
    if isinstance(node, dict):
        for key, value in node.items():
            field = f"{where}.{key}" if where else str(key)
            if SECRET_KEYS.match(str(key)):
                raise ConfigError(
                    str(path),
                    field,
                    "looks like a credential: keys are never read from files; "
                    "name the environment variable that holds it with api_key_env",
                )
            _check_values(value, path, field)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _check_values(value, path, f"{where}[{i}]")
    elif isinstance(node, float) and not math.isfinite(node):
        raise ConfigError(str(path), where or "(top level)", f"{node} is not a finite number")
    elif isinstance(node, str) and looks_like_secret(node):
        raise ConfigError(
            str(path),
            where or "(top level)",
            "holds what looks like an API key: keys are never "
            "read from files; put it in an environment variable and name it with api_key_env",
        )


def _check_database_folder(database: Path, path: Path) -> None:
    """The database's folder exists or can be created: its nearest existing ancestor is a writable folder.

    Checked here so that a bad `database` fails before anything is created (the store would make
    the parent folders first and then fail).
    """
    if database.exists():
        if database.is_dir():
            raise ConfigError(str(path), "database", f"{database} is a folder, not a database file")
        return
    ancestor = database.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ConfigError(
            str(path), "database", f"cannot create the database folder {database.parent}: {ancestor} is not a folder"
        )
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ConfigError(
            str(path), "database", f"cannot create the database in {database.parent}: {ancestor} is not writable"
        )


def _loc(loc: tuple[Any, ...], data: Any) -> str:
    """Turn a pydantic location into a field path, naming list items by their name or id."""
    path = ""
    node = data
    for item in loc:
        if isinstance(item, int) and isinstance(node, list) and 0 <= item < len(node):
            node = node[item]
            label = (node.get("name") or node.get("id")) if isinstance(node, dict) else None
            path += f"[{item} {label!r}]" if label else f"[{item}]"
        else:
            path += f".{item}" if path else str(item)
            node = node.get(item) if isinstance(node, dict) else None
    return path or "(top level)"


def _validate(model: type[M], data: dict[str, Any], path: Path) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = _loc(tuple(err["loc"]), data)
        msg = err["msg"].removeprefix("Value error, ")
        more = f" (and {len(exc.errors()) - 1} more problem(s))" if len(exc.errors()) > 1 else ""
        raise ConfigError(str(path), field, msg + more) from None


def load_task(path: Path) -> Task:
    """Load one task file."""
    task = _validate(Task, _read_toml(path), path)
    if task.id != path.stem:
        raise ConfigError(str(path), "id", f"id {task.id!r} must match the file name {path.stem!r}")
    return task


def load_universal(tasks_dir: Path) -> Universal:
    """Load the general dimensions and universal prompts shared by all tasks."""
    return _validate(Universal, _read_toml(tasks_dir / UNIVERSAL_FILE), tasks_dir / UNIVERSAL_FILE)


def load_tasks(tasks_dir: Path) -> tuple[dict[str, Task], Universal]:
    """Load every task file in a folder (all *.toml but universal.toml), sorted by id."""
    if not tasks_dir.is_dir():
        raise ConfigError(str(tasks_dir), None, "tasks folder not found")
    universal = load_universal(tasks_dir)
    general = {d.id for d in universal.general_dimensions}
    tasks: dict[str, Task] = {}
    for path in sorted(tasks_dir.glob("*.toml")):
        if path.name == UNIVERSAL_FILE:
            continue
        task = load_task(path)
        clash = general & {d.id for d in task.dimensions}
        if clash:
            raise ConfigError(str(path), "dimensions", f"ids {sorted(clash)} clash with general dimensions")
        tasks[task.id] = task
    return tasks, universal


def load_session(path: Path | str) -> Study:
    """Load and validate a session file with its tasks; nothing is written."""
    path = Path(path)
    data = _read_toml(path)
    session = _validate(Session, data, path)
    tasks_dir = (path.parent / session.tasks_dir).resolve()
    all_tasks, universal = load_tasks(tasks_dir)
    for i, task_id in enumerate(session.tasks):
        if task_id not in all_tasks:
            known = ", ".join(sorted(all_tasks)) or "none"
            raise ConfigError(str(path), f"tasks[{i}]", f"unknown task {task_id!r} (known: {known})")
    for i, task_id in enumerate(session.generic_tasks):
        if task_id in all_tasks:
            raise ConfigError(
                str(path),
                f"generic_tasks[{i}]",
                f"{task_id!r} is the id of a task file in {tasks_dir}: a generic task needs an id of its own",
            )
    for i, expert in enumerate(session.experts):
        for task_id in expert.tasks:
            if task_id not in session.all_tasks:
                raise ConfigError(
                    str(path), f"experts[{i} {expert.id!r}].tasks", f"task {task_id!r} is not in this session"
                )
    for i, model in enumerate(session.models):
        for knob in ("automation_skill", "coaching_skill"):
            for task_id in getattr(model.simulation, knob).tasks:
                if task_id not in all_tasks:
                    raise ConfigError(
                        str(path), f"models[{i} {model.name!r}].simulation.{knob}.tasks", f"unknown task {task_id!r}"
                    )
    if session.candidates:
        blinding = blinding_for(session)
        for i, candidate in enumerate(session.candidates):
            problem = blinding_problem(candidate.name, blinding)
            if problem is not None:
                raise ConfigError(str(path), f"candidates[{i} {candidate.name!r}].name", problem)
    for field, problem in session.human_worker_problems():
        raise ConfigError(str(path), field, problem)
    for field, problem in session.name_problems():
        raise ConfigError(str(path), field, problem)
    for field, problem in session.batch_problems():
        raise ConfigError(str(path), field, problem)
    batched = [j for j in session.judges if session.batched("judging", j)] + [
        m for m in session.models if session.batched("automation", m)
    ]
    if session.limits.max_cost_usd is not None and batched:
        # The budget reserves each call's worst case as its request leaves the gateway; batched
        # calls leave through the provider's batch API, where no such reservation is made yet.
        raise ConfigError(
            str(path),
            "limits.max_cost_usd",
            "a budget cannot be kept in batch mode yet (batched calls are not reserved against it); "
            'remove max_cost_usd or set the stages\' mode = "online"',
        )
    database = (path.parent / (session.database or f"{session.name}.db")).resolve()
    _check_database_folder(database, path)
    tasks = {t: all_tasks[t] for t in session.tasks}
    tasks.update({t: generic_task(t) for t in session.generic_tasks})
    guidelines = _read_guidelines(path, session.judging.expert_guidelines)
    log.info(
        "session %s read from %s: %d task(s), %d run(s), database %s",
        session.name,
        path,
        len(tasks),
        session.runs,
        database,
    )
    return Study(
        session=session,
        tasks=tasks,
        universal=universal,
        session_file=path.resolve(),
        database=database,
        guidelines=guidelines,
    )


MAX_GUIDELINES_CHARS = 100_000
"""Like every text of a session file: guidelines are read whole and shown whole."""


def _read_guidelines(path: Path, name: str | None) -> str | None:
    """The expert guidelines file named by `judging.expert_guidelines` (relative to the session file), checked."""
    if name is None:
        return None
    field = "judging.expert_guidelines"
    target = path.parent / name
    try:
        with target.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(str(path), field, f"{target}: file not found") from None
    except IsADirectoryError:
        raise ConfigError(str(path), field, f"{target} is a folder, not a Markdown file") from None
    except OSError as exc:
        raise ConfigError(str(path), field, f"{target}: cannot read: {exc.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(str(path), field, f"{target}: larger than {MAX_FILE_BYTES:,} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            str(path), field, f"{target}: not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line})"
        ) from None
    if len(text) > MAX_GUIDELINES_CHARS:
        raise ConfigError(str(path), field, f"{target}: {len(text):,} characters; at most {MAX_GUIDELINES_CHARS:,}")
    if not text.strip():
        raise ConfigError(str(path), field, f"{target} is empty")
    return clean_text(text)
