"""Provides Store: the SQLite session database (WAL, foreign keys, busy timeout, short writes) and its pipeline tables.

Every write is one `BEGIN IMMEDIATE` transaction (a plain `BEGIN` lost writes to "database is
locked" with a second writer, see NOTES.md), committed right after each completed call, so a
killed process loses at most the calls still in flight. The schema comes from
`store.schema`, migrated on open. The other store modules use only the public surface here:
`path`, `read`, `read_table`, `read_value` and `write`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from centaur_tui.domain.errors import StoreError
from centaur_tui.domain.records import (
    CALL_ERROR_ROW_FIELDS,
    TIMEOUT_ERRORS,
    AssistanceRecord,
    CallErrorRow,
    CallFailure,
    CallRecord,
    ComparisonRecord,
    JudgmentRecord,
    JudgmentRow,
    OutputRecord,
    OutputRow,
    RowTable,
    ScoreRow,
    StoreCounts,
)
from centaur_tui.store import chain
from centaur_tui.store.connection import BUSY_TIMEOUT_MS, connect, immediate_transaction, utc_now
from centaur_tui.store.schema import SCHEMA_VERSION, migrate, schema_version

_JUDGMENT_ROWS_SQL = (
    "SELECT c.run, c.task, c.mode, j.comparison_id, j.judge, j.judge_kind, j.judge_family,"
    " j.option1, j.option2, j.winner, j.option1_mean, j.option2_mean, j.valid, j.invalid_reason,"
    " j.rationale, j.id AS judgment_id, j.presentation, j.revision, j.attempts, j.seconds"
    " FROM judgments j JOIN comparisons c ON c.id = j.comparison_id ORDER BY j.id"
)
"""One tidy row per judgment, in the export's column order (`judgment_rows`, `judgment_table`)."""


_CALL_COLUMNS = (
    "key, stage, model, sample, messages, params, response, prompt_tokens, completion_tokens, cost, latency_s,"
    " attempts, simulated, finish_reason, served_model, cached_tokens, deployment"
)
"""The columns of `calls` in the order of CallRecord's fields (`Store.call`)."""


def _flag(row: tuple[Any, ...], index: int) -> tuple[Any, ...]:
    """`row` with its SQLite 0/1 at `index` as a bool."""
    return (*row[:index], bool(row[index]), *row[index + 1 :])


class JudgeNameClashError(StoreError):
    """A judgment's judge shares its name with a judge of the other kind (an expert named like an LLM judge)."""

    title = "Judge name clash"


class Store:
    """The database of one session. One writer connection per process; safe across threads.

    Args:
        path: The SQLite file; created with its schema if missing (unless `readonly`).
        readonly: Open it read-only (`mode=ro`), for the commands that only read (`centaur
            report`, `centaur export`, the results screen): they never take the write lock, so
            they work while another program writes. A database that needs a schema upgrade is
            migrated first through a short read-write connection (the one moment such a
            command writes), then opened read-only; a missing file is a StoreError.
        busy_timeout_ms: How long one statement waits for another program's lock before a
            write raises DatabaseLockedError (the pipeline then waits on, tests set it small).
    """

    def __init__(self, path: Path | str, *, readonly: bool = False, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
        self.path = Path(path)
        self.readonly = readonly
        if readonly:
            self._conn = self._open_readonly(busy_timeout_ms)
            self._lock = threading.RLock()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect(self.path, busy_timeout_ms=busy_timeout_ms)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{self.path}: cannot open the session database ({exc})") from None
        try:
            migrate(conn, self.path)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{self.path}: not a session database ({exc})") from None
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._lock = threading.RLock()

    def _open_readonly(self, busy_timeout_ms: int) -> sqlite3.Connection:
        if not self.path.is_file():
            raise StoreError(f"{self.path}: no such session database (run the session first)")
        try:
            conn = connect(self.path, read_only=True, busy_timeout_ms=busy_timeout_ms)
            found = schema_version(conn)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open the session database read-only ({exc})") from None
        if found == SCHEMA_VERSION:
            return conn
        conn.close()
        if found > SCHEMA_VERSION:
            migrate_check = connect(self.path, read_only=True, busy_timeout_ms=busy_timeout_ms)
            try:
                migrate(migrate_check, self.path)  # raises the "newer program" error, writes nothing
            finally:
                migrate_check.close()
        # An older schema: upgraded once through a read-write connection (a reader of an old
        # file would otherwise see tables without the columns it reads), then read-only again.
        Store(self.path, busy_timeout_ms=busy_timeout_ms).close()
        try:
            return connect(self.path, read_only=True, busy_timeout_ms=busy_timeout_ms)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open the session database read-only ({exc})") from None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the surface the other store modules use ----------------------------------------------

    def write(self) -> AbstractContextManager[sqlite3.Connection]:
        """One short write transaction, started with BEGIN IMMEDIATE; yields the connection.

        Keep LLM awaits out of it: the write lock is held until the block ends.

        Raises:
            StoreError: the store was opened read-only.
            DatabaseLockedError: another program held the write lock beyond the busy timeout.
        """
        if self.readonly:
            raise StoreError(f"{self.path}: opened read-only; this command must not write to the session database")
        return immediate_transaction(self._conn, self._lock)

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: a consistent view of the whole file while writers go on; yields the connection.

        Only the store's own modules use the connection (store.chain reads the chain through it).
        """
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            finally:
                self._conn.execute("COMMIT")

    def backup(self, target: Path) -> None:
        """Copy the database to `target` with SQLite's backup API (a consistent copy while writers go on).

        Raises:
            StoreError: the copy could not be written.
        """
        try:
            out = sqlite3.connect(target)
            try:
                with self._lock:
                    self._conn.backup(out)
                # One file without a -wal beside it, whatever the source's journal mode.
                out.execute("PRAGMA journal_mode=DELETE")
            finally:
                out.close()
        except sqlite3.Error as exc:
            raise StoreError(f"{target}: cannot copy the session database there ({exc})") from None

    def read(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        """Rows of one query as dicts (column name to value), under the connection's lock."""
        with self._lock:
            cursor = self._conn.execute(sql, params)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def read_table(self, sql: str, params: tuple[Any, ...] = ()) -> RowTable:
        """Rows of one query as a RowTable (column names and tuples): cheaper than dicts for large reads."""
        with self._lock:
            cursor = self._conn.execute(sql, params)
            rows = cursor.fetchall()
            return RowTable(tuple(d[0] for d in cursor.description), rows)

    def read_value(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """The first column of the first row of one query (a count, a max), or None when it has no row."""
        with self._lock:
            row = self._conn.execute(sql, params).fetchone()
        return row[0] if row else None

    # -- meta ---------------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        return {r["key"]: r["value"] for r in self.read("SELECT key, value FROM meta")}

    def set_meta(self, values: dict[str, str]) -> None:
        with self.write() as c:
            c.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", list(values.items()))

    # -- calls --------------------------------------------------------------------------------

    def answered_keys(self) -> set[str]:
        with self._lock:
            return {row[0] for row in self._conn.execute("SELECT key FROM calls")}

    def call_response(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT response FROM calls WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def call_reply(self, key: str) -> tuple[str, str | None] | None:
        """(response, finish_reason) of a stored call, or None when it is not stored."""
        with self._lock:
            row = self._conn.execute("SELECT response, finish_reason FROM calls WHERE key = ?", (key,)).fetchone()
        return (row[0], row[1]) if row else None

    def call(self, key: str) -> CallRecord | None:
        """The stored call with this key (its messages and params as JSON, the raw reply), or None."""
        table = self.read_table(f"SELECT {_CALL_COLUMNS} FROM calls WHERE key = ?", (key,))
        return CallRecord(*_flag(table.rows[0], 12)) if table.rows else None

    @staticmethod
    def _insert_call(c: sqlite3.Connection, r: CallRecord) -> None:
        c.execute(
            "INSERT OR IGNORE INTO calls (key, stage, model, sample, messages, params, response, prompt_tokens,"
            " completion_tokens, cost, latency_s, attempts, simulated, created_at, finish_reason, served_model,"
            " cached_tokens, deployment) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                r.key,
                r.stage,
                r.model,
                r.sample,
                r.messages_json,
                r.params_json,
                r.response,
                r.prompt_tokens,
                r.completion_tokens,
                r.cost,
                r.latency_s,
                r.attempts,
                int(r.simulated),
                utc_now(),
                r.finish_reason,
                r.served_model,
                r.cached_tokens,
                r.deployment,
            ),
        )

    insert_call = _insert_call
    """Insert an answered call inside the caller's transaction (a batch's results: store/batches.py)."""

    def record_call(self, record: CallRecord) -> None:
        with self.write() as c:
            self._insert_call(c, record)

    def record_failure(self, failure: CallFailure) -> None:
        with self.write() as c:
            insert_failure_row(c, failure)

    # -- texts --------------------------------------------------------------------------------

    def save_assistance(self, record: AssistanceRecord, call: CallRecord | None = None) -> None:
        """Store an assistance text (and the call that produced it) in one transaction."""
        with self.write() as c:
            if call is not None:
                self._insert_call(c, call)
            c.execute(
                "INSERT OR IGNORE INTO assistance_texts (id, run, task, assistant, text, call_key, created_at,"
                " cut_off, cut_off_reasks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.run,
                    record.task,
                    record.assistant,
                    record.text,
                    record.call_key,
                    utc_now(),
                    int(record.cut_off),
                    record.cut_off_reasks,
                ),
            )

    def save_output(self, record: OutputRecord, call: CallRecord | None = None) -> None:
        """Store an output (and the call that produced it) in one transaction."""
        with self.write() as c:
            if call is not None:
                self._insert_call(c, call)
            c.execute(
                "INSERT OR IGNORE INTO outputs (id, run, task, mode, candidate, worker, worker_kind, text,"
                " assistance_id, call_key, created_at, cut_off, cut_off_reasks)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.run,
                    record.task,
                    record.mode,
                    record.candidate,
                    record.worker,
                    record.worker_kind,
                    record.text,
                    record.assistance_id,
                    record.call_key,
                    utc_now(),
                    int(record.cut_off),
                    record.cut_off_reasks,
                ),
            )

    def assistance_texts(self) -> dict[str, AssistanceRecord]:
        return {
            r["id"]: AssistanceRecord(
                r["id"],
                r["run"],
                r["task"],
                r["assistant"],
                r["text"],
                r["call_key"],
                bool(r["cut_off"]),
                r["cut_off_reasks"],
            )
            for r in self.read(
                "SELECT id, run, task, assistant, text, call_key, cut_off, cut_off_reasks FROM assistance_texts"
            )
        }

    def outputs(self) -> dict[str, OutputRecord]:
        return {
            r["id"]: OutputRecord(
                r["id"],
                r["run"],
                r["task"],
                r["mode"],
                r["candidate"],
                r["worker"],
                r["text"],
                r["assistance_id"],
                r["call_key"],
                r["worker_kind"],
                bool(r["cut_off"]),
                r["cut_off_reasks"],
            )
            for r in self.read("SELECT * FROM outputs")
        }

    # -- comparisons and judgments ------------------------------------------------------------

    def save_comparisons(self, records: list[ComparisonRecord]) -> None:
        with self.write() as c:
            c.executemany(
                "INSERT OR IGNORE INTO comparisons (id, run, task, mode, candidate_a, candidate_b, output_a, output_b)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(r.id, r.run, r.task, r.mode, r.candidate_a, r.candidate_b, r.output_a, r.output_b) for r in records],
            )

    def comparisons(self) -> dict[str, ComparisonRecord]:
        return {r["id"]: ComparisonRecord(**r) for r in self.read("SELECT * FROM comparisons")}

    def save_judgment(self, record: JudgmentRecord, calls: tuple[CallRecord, ...] = ()) -> int | None:
        """Store a judgment with its scores (and its calls) in one transaction.

        Returns the new row id, or None when the same (comparison, judge, presentation,
        revision) is already stored: judgments are never duplicated.
        """
        with self.write() as c:
            for call in calls:
                self._insert_call(c, call)
            cur = insert_judgment_row(c, record, or_ignore=True)
            if cur.rowcount == 0:
                # Same key stored: "already stored" only when the same kind of judge stored it;
                # an expert named like an LLM judge must not lose judgments silently (issue 13).
                kind = c.execute(
                    "SELECT judge_kind FROM judgments WHERE comparison_id = ? AND judge = ? AND presentation = ?"
                    " AND revision = ?",
                    (record.comparison_id, record.judge, record.presentation, record.revision),
                ).fetchone()
                if kind is not None and kind[0] != record.judge_kind:
                    raise JudgeNameClashError(
                        f"{record.judge_kind} judge {record.judge!r} has the name of an {kind[0]} judge whose judgment"
                        f" of {record.comparison_id} (presentation {record.presentation}, revision {record.revision})"
                        " is stored; nothing was written. Give the expert another id."
                    )
                return None
            judgment_id = cur.lastrowid
            insert_scores(c, judgment_id, record)
            chain.append(c, "judgments", judgment_id)
            return judgment_id

    def judged_slots(self) -> set[tuple[str, str, int]]:
        """(comparison_id, judge, presentation) of every stored LLM judgment (the pipeline's resume set).

        LLM only: an expert's judgment under the same name must not pass for the judge's.
        """
        with self._lock:
            return {
                tuple(r)
                for r in self._conn.execute(
                    "SELECT comparison_id, judge, presentation FROM judgments WHERE judge_kind = 'llm'"
                )
            }

    # -- counts and exports -------------------------------------------------------------------

    def counts(self) -> StoreCounts:
        """Totals for progress displays: rows per table, judgments by validity, tokens and cost."""
        with self._lock:
            q = lambda sql, args=(): self._conn.execute(sql, args).fetchone()  # noqa: E731
            calls, p_tok, c_tok, cost = q(
                "SELECT count(*), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), sum(cost)"
                " FROM calls"
            )
            by_stage = dict(self._conn.execute("SELECT stage, count(*) FROM calls GROUP BY stage").fetchall())
            valid, invalid = q("SELECT coalesce(sum(valid), 0), coalesce(sum(1 - valid), 0) FROM judgments")
            return StoreCounts(
                calls=calls,
                calls_by_stage=by_stage,
                prompt_tokens=p_tok,
                completion_tokens=c_tok,
                cost=cost,
                call_errors=q("SELECT count(*) FROM call_errors")[0],
                timeouts=q(
                    f"SELECT count(*) FROM call_errors WHERE error_type IN ({', '.join('?' * len(TIMEOUT_ERRORS))})",
                    TIMEOUT_ERRORS,
                )[0],
                assistance_texts=q("SELECT count(*) FROM assistance_texts")[0],
                outputs=q("SELECT count(*) FROM outputs")[0],
                comparisons=q("SELECT count(*) FROM comparisons")[0],
                judgments=valid + invalid,
                valid_judgments=valid,
                invalid_judgments=invalid,
            )

    def judgment_rows(self) -> list[JudgmentRow]:
        """One tidy row per judgment (valid or not), in the export's column order."""
        return [JudgmentRow(*_flag(r, 12)) for r in self.read_table(_JUDGMENT_ROWS_SQL).rows]

    def judgment_table(self) -> RowTable:
        """`judgment_rows()` as a RowTable (the report's read)."""
        return self.read_table(_JUDGMENT_ROWS_SQL)

    def comparison_table(self) -> RowTable:
        """Every comparison (the columns of ComparisonRecord) as a RowTable (the report's read)."""
        return self.read_table(
            "SELECT id, run, task, mode, candidate_a, candidate_b, output_a, output_b FROM comparisons"
        )

    def score_rows(self) -> list[ScoreRow]:
        """Every rubric score with its judgment's comparison and judge, in the store's order."""
        table = self.read_table(
            "SELECT j.comparison_id, j.judge, s.candidate, s.dimension, s.dimension_kind, s.score,"
            " s.judgment_id FROM scores s JOIN judgments j ON j.id = s.judgment_id ORDER BY s.judgment_id, s.rowid"
        )
        return [ScoreRow(*r) for r in table.rows]

    def output_rows(self) -> list[OutputRow]:
        """Every output with its assistance text, in (run, task, mode, candidate) order."""
        table = self.read_table(
            "SELECT o.run, o.task, o.mode, o.candidate, o.worker, o.text, a.text AS assistance_text, o.id AS output_id,"
            " o.cut_off FROM outputs o LEFT JOIN assistance_texts a ON a.id = o.assistance_id"
            " ORDER BY o.run, o.task, o.mode, o.candidate"
        )
        return [OutputRow(*_flag(r, 8)) for r in table.rows]

    def error_rows(self) -> list[CallErrorRow]:
        """Every failed attempt of a provider call (`call_errors`), oldest first."""
        table = self.read_table(f"SELECT {', '.join(CALL_ERROR_ROW_FIELDS)} FROM call_errors ORDER BY id")
        return [CallErrorRow(*_flag(r, 7)) for r in table.rows]


def insert_judgment_row(c: sqlite3.Connection, record: JudgmentRecord, *, or_ignore: bool = False) -> sqlite3.Cursor:
    """Insert a judgment's row inside the caller's transaction (`Store.save_judgment`, packet import).

    With `or_ignore`, a row with the same (comparison, judge, presentation, revision) is left
    alone and the cursor's rowcount is 0.
    """
    verb = "INSERT OR IGNORE" if or_ignore else "INSERT"
    return c.execute(
        f"{verb} INTO judgments (comparison_id, judge, judge_kind, judge_family, presentation, revision, option1,"
        " option2, winner, option1_mean, option2_mean, valid, invalid_reason, rationale, call_key, attempts, seconds,"
        " active_seconds, lower_average_confirmed, pasted_chars, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.comparison_id,
            record.judge,
            record.judge_kind,
            record.judge_family,
            record.presentation,
            record.revision,
            record.option1,
            record.option2,
            record.winner,
            record.option1_mean,
            record.option2_mean,
            int(record.valid),
            record.invalid_reason,
            record.rationale,
            record.call_key,
            record.attempts,
            record.seconds,
            record.active_seconds,
            None if record.lower_average_confirmed is None else int(record.lower_average_confirmed),
            record.pasted_chars,
            utc_now(),
        ),
    )


def insert_scores(c: sqlite3.Connection, judgment_id: int | None, record: JudgmentRecord) -> None:
    """Insert a judgment's rubric scores inside the caller's transaction (then `chain.append` the judgment)."""
    c.executemany(
        "INSERT INTO scores (judgment_id, candidate, dimension, dimension_kind, score) VALUES (?, ?, ?, ?, ?)",
        [(judgment_id, s.candidate, s.dimension, s.dimension_kind, s.score) for s in record.scores],
    )


def insert_failure_row(c: sqlite3.Connection, failure: CallFailure) -> None:
    """Insert one failed attempt into call_errors inside the caller's transaction."""
    c.execute(
        "INSERT INTO call_errors (key, stage, model, attempt, error_type, message, final, created_at,"
        " finish_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            failure.key,
            failure.stage,
            failure.model,
            failure.attempt,
            failure.error_type,
            failure.message[:2000],
            int(failure.final),
            utc_now(),
            failure.finish_reason,
        ),
    )
