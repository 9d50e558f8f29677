"""A corpus of malformed session, task and import files, each through the real CLI.

Every case must exit 2 with one clear line naming the file and the field, without a
traceback, and write nothing: no database is created for a bad session or task file, and a
bad import leaves the database byte-identical.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.cli.main import cli
from tests.support.sessions import TASKS, small_session_toml

KEY = "sk-proj-" + "A1b2C3d4" * 5


def session(**kwargs: object) -> str:
    return small_session_toml(name="bad", tasks=("counseling",), **kwargs)  # type: ignore[arg-type]


BASE = session()


def sub(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def alpha(extra: str) -> str:
    """The session with `extra` lines added to its first model (Alpha)."""
    return sub('family = "North"\n', 'family = "North"\n' + extra + "\n")


def model_block(i: int) -> str:
    return f'\n[[models]]\nname = "M{i}"\nmodel = "simulated/m{i}"\nfamily = "F{i}"\n'


@dataclass(frozen=True)
class Case:
    id: str
    file: str  # name of the file the error must name
    field: str  # text naming the field (or the problem, for whole-file problems)
    session: bytes | str = BASE  # the session file
    task: Callable[[str], bytes | str] | None = None  # rewrites tasks/counseling.toml
    universal: Callable[[str], bytes | str] | None = None  # rewrites tasks/universal.toml


S = "bad.toml"
SESSION_CASES = [
    Case("non-utf8-byte", S, "not UTF-8", BASE.encode().replace(b"seed = 7", b'seed = 7\ndescription = "caf\xff"')),
    Case("latin1", S, "not UTF-8", sub("seed = 7", 'seed = 7\ndescription = "café"').encode("latin-1")),
    Case("utf16", S, "not UTF-8", BASE.encode("utf-16")),
    Case("runs-huge", S, "runs", sub("runs = 1", "runs = 10000000")),
    Case("runs-zero", S, "runs", sub("runs = 1", "runs = 0")),
    Case("runs-string", S, "runs", sub("runs = 1", 'runs = "3"')),
    Case("runs-float", S, "runs", sub("runs = 1", "runs = 1.5")),
    Case("runs-inf", S, "runs", sub("runs = 1", "runs = inf")),
    Case("seed-huge", S, "seed", sub("seed = 7", "seed = 9223372036854775807\nx_seed = 1")),
    Case("timeout-inf", S, "limits.timeout_s", sub("[limits]\n", "[limits]\ntimeout_s = inf\n")),
    Case("timeout-nan", S, "limits.timeout_s", sub("[limits]\n", "[limits]\ntimeout_s = nan\n")),
    Case("timeout-huge", S, "limits.timeout_s", sub("[limits]\n", "[limits]\ntimeout_s = 1e12\n")),
    Case("backoff-neg-inf", S, "limits.backoff_max_s", sub("backoff_max_s = 0.0", "backoff_max_s = -inf")),
    Case("latency-nan", S, "faults.latency_s", session(faults="latency_s = nan")),
    Case("noise-inf", S, "simulation.noise", sub("simulation = { noise = 0.5 }", "simulation = { noise = inf }")),
    Case("skill-nan", S, "automation_skill.default", sub("{ default = 0.9 }", "{ default = nan }")),
    Case("params-api-key", S, "params.api_key", alpha('params = { api_key = "x" }')),
    Case("params-key", S, "params.key", alpha('params = { key = "abc" }')),
    Case("api-key-field", S, "api_key", alpha(f'api_key = "{KEY}"')),
    Case("token-field", S, "token", sub("seed = 7", 'seed = 7\ntoken = "abcdef"')),
    Case("sk-value", S, "description", sub("seed = 7", 'seed = 7\ndescription = "sk-abcdef123456"')),
    Case("sk-in-params", S, "params.hint", alpha(f'params = {{ hint = "{KEY}" }}')),
    Case("bearer-value", S, "api_key_env", alpha('api_key_env = "Bearer abcdefgh12345"')),
    Case("params-reserved-model", S, "params", alpha('params = { model = "x/y" }')),
    Case(
        "params-too-many",
        S,
        "params",
        sub(
            'family = "North"\n', 'family = "North"\nparams = { ' + ", ".join(f"p{i} = {i}" for i in range(40)) + " }\n"
        ),
    ),
    Case("params-long-string", S, "params", alpha(f'params = {{ p = "{"x" * 5000}" }}')),
    Case("unknown-top", S, "colour", sub("seed = 7", 'seed = 7\ncolour = "blue"')),
    Case("unknown-limits", S, "limits.speed", sub("[limits]\n", "[limits]\nspeed = 3\n")),
    Case("tasks-string", S, "tasks", sub('tasks = ["counseling"]', 'tasks = "counseling"')),
    Case("ties-string", S, "judging.allow_ties", session(judging='allow_ties = "yes"')),
    Case(
        "gen-max-tokens",
        S,
        "generation.max_tokens",
        sub("[judging]", "[generation]\nmax_tokens = 1000000000\n\n[judging]"),
    ),
    Case("judge-max-tokens", S, "judging.max_tokens", session(judging="max_tokens = 1000000000000")),
    Case("name-long", S, "name", sub('name = "bad"', f'name = "{"n" * 10000}"')),
    Case("description-long", S, "description", sub("seed = 7", f'seed = 7\ndescription = "{"d" * 20000}"')),
    Case("model-long", S, "model", sub('model = "simulated/alpha"', f'model = "simulated/{"a" * 500}"')),
    Case(
        "tasks-many",
        S,
        "tasks",
        sub('tasks = ["counseling"]', "tasks = [" + ", ".join(f'"t{i}"' for i in range(600)) + "]"),
    ),
    Case("models-many", S, "models", BASE + "".join(model_block(i) for i in range(70))),
    Case("database-under-a-file", S, "database", sub("seed = 7", 'seed = 7\ndatabase = "bad.toml/sub/x.db"')),
    Case("database-is-a-folder", S, "database", sub("seed = 7", 'seed = 7\ndatabase = "tasks"')),
    Case("malformed-toml", S, "malformed TOML", sub("seed = 7", "seed = = 7")),
    Case("nul-char", S, "malformed TOML", sub('name = "bad"', 'name = "b\x00ad"')),
    Case("too-big", S, "larger than", BASE + "#" * 1_100_000 + "\n"),
    Case(
        "tasks-dir-missing", "nowhere", "tasks folder not found", sub(f'tasks_dir = "{TASKS}"', 'tasks_dir = "nowhere"')
    ),
    Case("unknown-task", S, "tasks[0]", sub('tasks = ["counseling"]', 'tasks = ["no_such_task"]')),
    Case("concurrency-zero", S, "limits.concurrency", sub("concurrency = 32", "concurrency = 0")),
    Case("api-base-scheme", S, "api_base", alpha('api_base = "ftp://x"')),
    Case(
        "expert-password",
        S,
        "experts[0].password",
        BASE + '\n[[experts]]\nid = "a"\nname = "A"\npassword = "hunter22"\n',
    ),
]


def _task(old: str, new: str) -> Callable[[str], str]:
    def rewrite(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return rewrite


C, U = "counseling.toml", "universal.toml"
TASK_CASES = [
    Case("task-non-utf8", C, "not UTF-8", task=lambda t: t.encode("utf-8") + b"\n# \xc3\x28\n"),
    Case("task-utf16", C, "not UTF-8", task=lambda t: t.encode("utf-16")),
    Case("task-prompt-huge", C, "prompt", task=_task("prompt = ", f'prompt = "{"p" * 200_000}"\nx_prompt = ')),
    Case(
        "task-difficulty-nan",
        C,
        "difficulty",
        task=lambda t: (
            t + '\n[[requirements]]\nid = "zz"\nlabel = "zzz zz"\n'
            'text = "z"\ndimension = "empathic_reflection"\ndifficulty = nan\n'
        ),
    ),
    Case("task-unknown-field", C, "colour", task=lambda t: 'colour = "red"\n' + t),
    Case(
        "task-title-type",
        C,
        "title",
        task=lambda t: "title = 3\n" + "\n".join(line for line in t.splitlines() if not line.startswith("title =")),
    ),
    Case("task-api-key", C, "api_key", task=lambda t: 'api_key = "abcdefgh"\n' + t),
    Case(
        "task-sk-in-prompt",
        C,
        "prompt",
        task=_task("prompt = ", f'prompt = "Use the key {KEY} please, thanks a lot"\nx = '),
    ),
    Case("task-malformed", C, "malformed TOML", task=lambda t: t + "\n[[[broken\n"),
    Case(
        "task-requirements-many",
        C,
        "requirements",
        task=lambda t: (
            t
            + "".join(
                f'\n[[requirements]]\nid = "r{i}"\nlabel = "req {i}"\ntext = "t"\ndimension = "empathic_reflection"\n'
                for i in range(300)
            )
        ),
    ),
    Case("universal-non-utf8", U, "not UTF-8", universal=lambda t: t.encode("latin-1", "replace") + b"\n# \xe9\n"),
    Case(
        "universal-prompt-huge",
        U,
        "judge_prompt",
        universal=_task("judge_prompt = '''", "judge_prompt = '''" + "j" * 200_000),
    ),
    Case(
        "universal-inf",
        U,
        "general_dimensions",
        universal=lambda t: t.replace("[[general_dimensions]]", "[[general_dimensions]]\nweight = inf", 1),
    ),
]


EMPTY = hashlib.sha256(b"").hexdigest()


def _files(root: Path) -> dict[str, str]:
    """Every file's digest. SQLite's -shm index and an empty -wal are left out: a read-only
    open (`centaur export`) leaves them beside the database and the next read-write close
    removes them, with nothing written; a -wal holding frames is data and is compared."""
    digests = {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
    return {
        name: digest
        for name, digest in digests.items()
        if not name.endswith("-shm") and not (name.endswith("-wal") and digest == EMPTY)
    }


def check_refused(args: list[str], case_file: str, field: str, root: Path) -> str:
    before = _files(root)
    result = CliRunner().invoke(cli, args)
    output = result.output
    assert result.exit_code == 2, output
    assert "Traceback" not in output and not isinstance(result.exception, (AssertionError, TypeError, KeyError))
    assert case_file in output, output
    assert field in output, output
    assert _files(root) == before, "something was written"
    return output


@pytest.mark.parametrize("case", SESSION_CASES + TASK_CASES, ids=lambda c: c.id)
def test_a_malformed_session_or_task_file_is_refused_naming_file_and_field(case: Case, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(TASKS, tasks)
    for name, rewrite in ((C, case.task), (U, case.universal)):
        if rewrite is not None:
            new = rewrite((tasks / name).read_text(encoding="utf-8"))
            (tasks / name).write_bytes(new if isinstance(new, bytes) else new.encode("utf-8"))
    text = case.session
    if isinstance(text, str):
        text = text.replace(f'tasks_dir = "{TASKS}"', 'tasks_dir = "tasks"').encode("utf-8")
    else:
        text = text.replace(f'tasks_dir = "{TASKS}"'.encode(), b'tasks_dir = "tasks"')
    (tmp_path / S).write_bytes(text)
    check_refused(["run", str(tmp_path / S), "--quiet"], case.file, case.field, tmp_path)
    assert not (tmp_path / "bad.db").exists()


def test_a_refused_file_gives_one_line_on_stderr_from_a_real_process(tmp_path: Path) -> None:
    (tmp_path / S).write_bytes(BASE.replace("runs = 1", "runs = 10000000").encode())
    proc = subprocess.run(
        [sys.executable, "-m", "centaur_tui.cli", "run", str(tmp_path / S)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "runs" in proc.stderr and S in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [S]


# -- import files ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A run session (simulated, 1 task) and its export: (session file, export folder)."""
    root = tmp_path_factory.mktemp("import")
    path = root / "imp.toml"
    path.write_text(small_session_toml(name="imp", tasks=("counseling",)), encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(cli, ["run", str(path), "--quiet"]).exit_code == 0
    assert runner.invoke(cli, ["export", str(path), "--out", str(root / "export")]).exit_code == 0
    return path, root / "export"


def _csv_edit(name: str, edit: Callable[[list[str]], list[str] | bytes]) -> tuple[str, Callable[[Path], None]]:
    def apply(folder: Path) -> None:
        file = folder / name
        out = edit(file.read_text(encoding="utf-8").splitlines())
        file.write_bytes(out if isinstance(out, bytes) else ("\n".join(out) + "\n").encode("utf-8"))

    return name, apply


def _drop_column(column: str) -> Callable[[list[str]], list[str]]:
    def edit(lines: list[str]) -> list[str]:
        header = lines[0].split(",")
        i = header.index(column)
        return [",".join(c for j, c in enumerate(line.split(",")) if j != i) for line in lines]

    return edit


def _set_cell(column: str, value: str, row: int = 1) -> Callable[[list[str]], list[str]]:
    def edit(lines: list[str]) -> list[str]:
        header = lines[0].split(",")
        cells = lines[row].split(",")
        cells[header.index(column)] = value
        return [*lines[:row], ",".join(cells), *lines[row + 1 :]]

    return edit


J, SC = "judgments.csv", "scores.csv"
IMPORT_CASES = [
    ("missing-winner", *_csv_edit(J, _drop_column("winner")), "winner"),
    ("missing-score", *_csv_edit(SC, _drop_column("score")), "score"),
    ("missing-judge", *_csv_edit(SC, _drop_column("judge")), "judge"),
    ("score-word", *_csv_edit(SC, _set_cell("score", "ten")), "score"),
    ("score-nan", *_csv_edit(SC, _set_cell("score", "nan")), "score"),
    ("score-out-of-range", *_csv_edit(SC, _set_cell("score", "11")), "score"),
    ("score-float", *_csv_edit(SC, _set_cell("score", "7.5")), "score"),
    ("mean-inf", *_csv_edit(J, _set_cell("option1_mean", "inf")), "option1_mean"),
    ("winner-unknown", *_csv_edit(J, _set_cell("winner", "option_9")), "winner"),
    ("judgment-id-word", *_csv_edit(J, _set_cell("judgment_id", "abc")), "judgment_id"),
    ("latin1", *_csv_edit(J, lambda ls: ("\n".join(ls) + "\ncafé\n").encode("latin-1")), "not UTF-8"),
    ("utf16", *_csv_edit(SC, lambda ls: ("\n".join(ls) + "\n").encode("utf-16")), "not UTF-8"),
    ("huge-field", *_csv_edit(J, _set_cell("rationale", "r" * 2_000_000)), "more than 200,000"),
    ("duplicate-judgment-row", *_csv_edit(J, lambda ls: [*ls, ls[1]]), "comparison_id"),
    ("duplicate-score-row", *_csv_edit(SC, lambda ls: [*ls, ls[1]]), "dimension"),
    ("empty-judgments", *_csv_edit(J, lambda ls: b""), "header"),
    ("unbalanced-quote", *_csv_edit(J, lambda ls: [ls[0], '1,"counseling,' + ls[1]]), "row"),
    ("nul-byte", *_csv_edit(SC, lambda ls: ("\n".join(ls) + "\n").replace("task", "ta\x00sk", 1).encode()), SC),
    ("unknown-comparison", *_csv_edit(J, _set_cell("comparison_id", "cdoesnotexist")), "comparison_id"),
    ("too-few-cells", *_csv_edit(SC, lambda ls: [*ls[:1], "c1,JudgeSouth", *ls[2:]]), SC),
]


@pytest.mark.parametrize(("case_id", "file", "apply", "field"), IMPORT_CASES, ids=[c[0] for c in IMPORT_CASES])
def test_a_malformed_import_is_refused_and_the_database_is_unchanged(
    judged: tuple[Path, Path], tmp_path: Path, case_id: str, file: str, apply: Callable[[Path], None], field: str
) -> None:
    session, export = judged
    folder = tmp_path / "in"
    shutil.copytree(export, folder)
    apply(folder)
    # Edited files no longer match the export's signature: brought in as external data, every row check applies.
    check_refused(["import", str(session), str(folder), "--external"], file, field, session.parent)


def test_the_corpus_holds_at_least_60_files() -> None:
    assert len(SESSION_CASES) + len(TASK_CASES) + len(IMPORT_CASES) >= 60


def test_an_export_saved_with_a_byte_order_mark_imports_as_the_same_judgments(
    judged: tuple[Path, Path], tmp_path: Path
) -> None:
    """Spreadsheets save "CSV UTF-8" with a BOM; its first column must still be `run`, not an unknown one."""
    session, export = judged
    folder = tmp_path / "bom"
    shutil.copytree(export, folder)
    for name in (J, SC):
        (folder / name).write_bytes(b"\xef\xbb\xbf" + (folder / name).read_bytes())
    before = _files(session.parent)
    # A BOM changes the bytes the export signed: external data, read as the same judgments.
    result = CliRunner().invoke(cli, ["import", str(session), str(folder), "--external"])
    assert result.exit_code == 0, result.output
    assert "0 stored" in result.output and "already stored identically" in result.output
    assert _files(session.parent) == before
