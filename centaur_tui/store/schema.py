"""Provides the one schema of a session database, as numbered migrations applied on open, and a packet's schema.

Why a small runner on `PRAGMA user_version` rather than sqlite-utils' `Migrations` (4.2.1):
its `apply()` runs each migration inside `db.atomic()`, a plain `BEGIN`, which lost 27-39 of
400 writes to "database is locked" beside a second writer (NOTES.md); it records migrations by
name in a `_sqlite_migrations` table, so a database migrated by a newer program looks merely
"up to date" to an older one; and importing sqlite-utils cost 61 ms median at every start
against 2 ms for sqlite3 (see the package docstring). Here a migration is a tuple of SQL
statements run in one `BEGIN IMMEDIATE` transaction together with the new `user_version`, so
a migration is applied completely or not at all, and two processes opening the same old file
at once migrate it once (the second sees the new version after taking the write lock).

Migration 1 is the schema the store had before it was versioned (3874c43), every statement
`IF NOT EXISTS`: that code created the pipeline tables on open and the expert and work tables
on first use, so an old database may hold any subset of them; migration 1 completes it and
leaves what exists untouched. `meta.schema_version` follows `user_version`, because the
unversioned code refuses a database whose `meta.schema_version` is not 1: an old program
opening an upgraded file says so instead of misreading it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from centaur_tui.domain.cutoff import CUT_OFF_SQL
from centaur_tui.domain.errors import StoreError
from centaur_tui.store import chain
from centaur_tui.store.connection import immediate_transaction, utc_now


def _make_session_secret(conn: sqlite3.Connection) -> None:
    """Write the session secret (64 hex digits from `secrets`) unless the database has one (migration 23)."""
    import secrets

    conn.execute(
        "INSERT OR IGNORE INTO session_secret (id, secret, created_at) VALUES (1, ?, ?)",
        (secrets.token_hex(32), utc_now()),
    )


@dataclass(frozen=True)
class Migration:
    """One schema step: the statements that take a database from `version - 1` to `version`."""

    version: int
    summary: str
    statements: tuple[str, ...]
    backfill: Callable[[sqlite3.Connection], None] | None = None
    """Python run after the statements, in the same transaction (rows SQL alone cannot compute)."""


_PIPELINE_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, stage TEXT NOT NULL, model TEXT NOT NULL, sample TEXT NOT NULL,
    messages TEXT NOT NULL, params TEXT NOT NULL, response TEXT NOT NULL,
    prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL, latency_s REAL NOT NULL,
    attempts INTEGER NOT NULL, simulated INTEGER NOT NULL, created_at TEXT NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS call_errors (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, stage TEXT NOT NULL, model TEXT NOT NULL,
    attempt INTEGER NOT NULL, error_type TEXT NOT NULL, message TEXT NOT NULL, final INTEGER NOT NULL,
    created_at TEXT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS call_errors_key ON call_errors (key)",
    "CREATE INDEX IF NOT EXISTS calls_stage ON calls (stage)",
    """CREATE TABLE IF NOT EXISTS assistance_texts (
    id TEXT PRIMARY KEY, run INTEGER NOT NULL, task TEXT NOT NULL, assistant TEXT NOT NULL,
    text TEXT NOT NULL, call_key TEXT REFERENCES calls (key), created_at TEXT NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS outputs (
    id TEXT PRIMARY KEY, run INTEGER NOT NULL, task TEXT NOT NULL, mode TEXT NOT NULL,
    candidate TEXT NOT NULL, worker TEXT NOT NULL, worker_kind TEXT NOT NULL DEFAULT 'model',
    text TEXT NOT NULL, assistance_id TEXT REFERENCES assistance_texts (id),
    call_key TEXT REFERENCES calls (key), created_at TEXT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS outputs_tournament ON outputs (run, task, mode)",
    """CREATE TABLE IF NOT EXISTS comparisons (
    id TEXT PRIMARY KEY, run INTEGER NOT NULL, task TEXT NOT NULL, mode TEXT NOT NULL,
    candidate_a TEXT NOT NULL, candidate_b TEXT NOT NULL,
    output_a TEXT NOT NULL REFERENCES outputs (id), output_b TEXT NOT NULL REFERENCES outputs (id)
)""",
    "CREATE INDEX IF NOT EXISTS comparisons_tournament ON comparisons (run, task, mode)",
    """CREATE TABLE IF NOT EXISTS judgments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    comparison_id TEXT NOT NULL REFERENCES comparisons (id),
    judge TEXT NOT NULL, judge_kind TEXT NOT NULL, judge_family TEXT,
    presentation INTEGER NOT NULL, revision INTEGER NOT NULL DEFAULT 0,
    option1 TEXT NOT NULL, option2 TEXT NOT NULL, winner TEXT,
    option1_mean REAL, option2_mean REAL, valid INTEGER NOT NULL, invalid_reason TEXT,
    rationale TEXT, call_key TEXT REFERENCES calls (key), attempts INTEGER NOT NULL,
    seconds REAL, created_at TEXT NOT NULL,
    UNIQUE (comparison_id, judge, presentation, revision)
)""",
    "CREATE INDEX IF NOT EXISTS judgments_judge ON judgments (judge)",
    """CREATE TABLE IF NOT EXISTS scores (
    judgment_id INTEGER NOT NULL REFERENCES judgments (id), candidate TEXT NOT NULL,
    dimension TEXT NOT NULL, dimension_kind TEXT NOT NULL, score INTEGER NOT NULL,
    PRIMARY KEY (judgment_id, candidate, dimension)
)""",
)
"""The pipeline's tables: calls (the resume log), texts, tournaments, judgments and their scores."""

_EXPERT_TABLES = (
    # An expert's judging queue: comparison, place, strategy, presented order (`flipped`:
    # candidate_b shown as option 1), swapped-repeat flag, state (pending, skipped, flagged; an
    # assignment is done when its judgment exists, so a crash between two writes cannot leave
    # them disagreeing).
    """CREATE TABLE IF NOT EXISTS expert_assignments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        expert TEXT NOT NULL,
        comparison_id TEXT NOT NULL REFERENCES comparisons (id),
        presentation INTEGER NOT NULL,
        position INTEGER NOT NULL,
        strategy TEXT NOT NULL,
        flipped INTEGER NOT NULL,
        repeat INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT 'pending',
        created_at TEXT NOT NULL,
        UNIQUE (expert, comparison_id, presentation)
    )""",
    "CREATE INDEX IF NOT EXISTS expert_assignments_queue ON expert_assignments (expert, position)",
    # Partial judging work, saved as it is entered; the newest version wins.
    """CREATE TABLE IF NOT EXISTS expert_drafts (
        assignment_id INTEGER PRIMARY KEY REFERENCES expert_assignments (id),
        scores TEXT NOT NULL, winner TEXT, rationale TEXT NOT NULL, seconds REAL NOT NULL,
        version INTEGER NOT NULL, updated_at TEXT NOT NULL
    )""",
    # Every identity phrase masked in a text an expert was shown.
    """CREATE TABLE IF NOT EXISTS expert_maskings (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        assignment_id INTEGER NOT NULL REFERENCES expert_assignments (id),
        option INTEGER NOT NULL, output_id TEXT NOT NULL REFERENCES outputs (id),
        term TEXT NOT NULL, occurrences INTEGER NOT NULL, created_at TEXT NOT NULL,
        UNIQUE (assignment_id, option, term)
    )""",
    # Exported judging packets: their secret stays here, never in the packet file.
    """CREATE TABLE IF NOT EXISTS expert_packets (
        id TEXT PRIMARY KEY, expert TEXT NOT NULL, secret TEXT NOT NULL, items INTEGER NOT NULL,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS app_experts (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, tasks TEXT NOT NULL, created_at TEXT NOT NULL
    )""",
)
"""The tables of experts as judges (`assignments`, `judging`, `masking`, `packets` modules)."""

_WORK_TABLES = (
    # One row per (expert, task): the condition (an assistant's name or `plain`), the
    # assistance text used, and the place in the expert's queue.
    """CREATE TABLE IF NOT EXISTS work_assignments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        expert TEXT NOT NULL, task TEXT NOT NULL, condition TEXT NOT NULL,
        assistance_id TEXT REFERENCES assistance_texts (id),
        position INTEGER NOT NULL, created_at TEXT NOT NULL,
        UNIQUE (expert, task)
    )""",
    # The deliverable so far with its productivity measures; `locked` once submitted.
    """CREATE TABLE IF NOT EXISTS work_drafts (
        assignment_id INTEGER PRIMARY KEY REFERENCES work_assignments (id),
        text TEXT NOT NULL, seconds REAL NOT NULL, edits INTEGER NOT NULL, pastes INTEGER NOT NULL,
        version INTEGER NOT NULL, locked INTEGER NOT NULL DEFAULT 0, updated_at TEXT NOT NULL
    )""",
)
"""The tables of experts as workers (`work` module)."""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "the unversioned schema of 3874c43: pipeline, expert and work tables",
        _PIPELINE_TABLES + _WORK_TABLES + _EXPERT_TABLES,
    ),
    Migration(
        2,
        "the schema is versioned by user_version; the expert tables' own version row goes",
        ("DELETE FROM meta WHERE key = 'expert_schema_version'",),
    ),
    Migration(
        3,
        "the provider's finish reason of every call and failed attempt (NULL: not recorded)",
        ("ALTER TABLE calls ADD COLUMN finish_reason TEXT", "ALTER TABLE call_errors ADD COLUMN finish_reason TEXT"),
    ),
    # The key of the judging packets' HMAC (store.packets): one row, written on first need (the
    # first packet export) from Python's `secrets`, never into a packet. Created lazily rather
    # than here so that every database, also a copy made before its first export, gets its own.
    Migration(
        4,
        "the per-session secret that signs judging packets (its row is written on first need)",
        (
            "CREATE TABLE IF NOT EXISTS session_secret (id INTEGER PRIMARY KEY CHECK (id = 1),"
            " secret TEXT NOT NULL, created_at TEXT NOT NULL)",
        ),
    ),
    # 16 random bytes (128 bits) from SQLite's CSPRNG: two sessions with the same name, seed and
    # candidates (whose comparison ids are then equal) still tell their exports apart.
    Migration(
        5,
        "a random id of the session database (meta.session_id), which its CSV exports carry",
        ("INSERT OR IGNORE INTO meta (key, value) VALUES ('session_id', lower(hex(randomblob(16))))",),
    ),
    Migration(
        6,
        "every call in flight (key, stage, model, pid, started_at), written before it is sent and deleted "
        "when it is answered or fails: rows left by a killed run count the calls that may be billed twice",
        (
            """CREATE TABLE calls_in_flight (
    key TEXT PRIMARY KEY, stage TEXT NOT NULL, model TEXT NOT NULL, pid INTEGER NOT NULL, started_at TEXT NOT NULL
)""",
        ),
    ),
    # The work screen masks identities in the assistance text an expert reads; like the judging
    # screen's expert_maskings, each masked phrase is logged once per work assignment with its count.
    Migration(
        7,
        "the masking log of the work screen (identity phrases masked in the assistance text shown)",
        (
            """CREATE TABLE IF NOT EXISTS work_maskings (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        assignment_id INTEGER NOT NULL REFERENCES work_assignments (id),
        assistance_id TEXT NOT NULL REFERENCES assistance_texts (id),
        term TEXT NOT NULL, occurrences INTEGER NOT NULL, created_at TEXT NOT NULL,
        UNIQUE (assignment_id, term)
    )""",
        ),
    ),
    Migration(
        8,
        "the model the provider says served each call (a fallback may differ from the one asked; NULL: not recorded)",
        ("ALTER TABLE calls ADD COLUMN served_model TEXT",),
    ),
    # Outputs made elsewhere (`centaur import-outputs`, the conversations of a winner-only judgment
    # file) sit beside generated ones in the same tables; `origin` tells them apart, so no report or
    # audit takes an imported text for one a model wrote in this session. Winner-only judgments need
    # no column: judgments.option1_mean/option2_mean are nullable and a judgment may have no scores.
    Migration(
        9,
        "where each output comes from: outputs.origin ('generated', or 'imported' from a file)",
        ("ALTER TABLE outputs ADD COLUMN origin TEXT NOT NULL DEFAULT 'generated'",),
    ),
    # Batch mode (store/batches.py). A batch row is committed with all its requests before the
    # input file is uploaded, and `state` = 'creating' before the batch is created at the
    # provider, so a run killed at any point finds it again: the provider's batch id when it is
    # known, else the batch's metadata (`centaur_batch` = id) in the provider's list. `state` is
    # ours (preparing, uploaded, creating, submitted, collected); `status` the provider's.
    Migration(
        10,
        "batches sent through a provider's batch API and every request in them (custom_id, content address, state)",
        (
            """CREATE TABLE batches (
    id TEXT PRIMARY KEY, stage TEXT NOT NULL, model TEXT NOT NULL, provider TEXT NOT NULL,
    endpoint TEXT NOT NULL, state TEXT NOT NULL, status TEXT, input_file_id TEXT, provider_batch_id TEXT,
    output_file_id TEXT, error_file_id TEXT, requests INTEGER NOT NULL, completed INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0, message TEXT, pid INTEGER NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, ended_at TEXT
)""",
            """CREATE TABLE batch_requests (
    batch_id TEXT NOT NULL REFERENCES batches (id), custom_id TEXT NOT NULL, key TEXT NOT NULL,
    stage TEXT NOT NULL, model TEXT NOT NULL, sample TEXT NOT NULL, messages TEXT, params TEXT,
    state TEXT NOT NULL, message TEXT, updated_at TEXT NOT NULL,
    PRIMARY KEY (batch_id, custom_id)
)""",
            "CREATE INDEX batch_requests_key ON batch_requests (key, state)",
        ),
    ),
    Migration(
        11,
        "per call, the prompt tokens served from the provider's prompt cache and the deployment that answered "
        "(NULL: none reported / an entry without deployments)",
        ("ALTER TABLE calls ADD COLUMN cached_tokens INTEGER", "ALTER TABLE calls ADD COLUMN deployment TEXT"),
    ),
    # Issue 14 (the expert's seat), one self-contained step: what an expert judgment records beside
    # its verdict, and the practice and gold-check places, kept out of `judgments` so that no
    # statistic (every one reads `judgments`) can count them.
    Migration(
        12,
        "the expert's seat: active time and lower-average winners confirmed; practice and gold-check places",
        (
            "ALTER TABLE judgments ADD COLUMN active_seconds REAL",
            "ALTER TABLE judgments ADD COLUMN lower_average_confirmed INTEGER",
            "ALTER TABLE expert_drafts ADD COLUMN active_seconds REAL",
            """CREATE TABLE IF NOT EXISTS expert_checks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        token TEXT NOT NULL UNIQUE,
        expert TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('practice', 'gold')),
        ordinal INTEGER NOT NULL,
        after_position INTEGER NOT NULL,
        task TEXT NOT NULL,
        output_id TEXT NOT NULL REFERENCES outputs (id),
        degraded TEXT NOT NULL,
        degradation TEXT NOT NULL,
        intact_option INTEGER NOT NULL CHECK (intact_option IN (1, 2)),
        state TEXT NOT NULL DEFAULT 'pending',
        scores TEXT, winner TEXT, rationale TEXT NOT NULL DEFAULT '',
        seconds REAL NOT NULL DEFAULT 0, active_seconds REAL NOT NULL DEFAULT 0,
        version INTEGER NOT NULL DEFAULT -1, draft_at TEXT,
        judged_at TEXT, passed INTEGER,
        created_at TEXT NOT NULL,
        UNIQUE (expert, kind, ordinal)
    )""",
            "CREATE INDEX IF NOT EXISTS expert_checks_expert ON expert_checks (expert, kind)",
        ),
    ),
    # `centaur serve`: each expert's personal link. Only the SHA-256 of its token is stored (a
    # copy of the database opens no queue); a renewed or revoked link keeps its row with
    # `revoked_at` set, so the database says which links existed and when they ended.
    Migration(
        13,
        "the experts' personal links for `centaur serve` (token hashes only, revocations kept)",
        (
            """CREATE TABLE IF NOT EXISTS expert_links (
        id INTEGER PRIMARY KEY AUTOINCREMENT, expert TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL, revoked_at TEXT
    )""",
            "CREATE INDEX IF NOT EXISTS expert_links_expert ON expert_links (expert, revoked_at)",
        ),
    ),
    # Issue 22. A text the provider cut off at max_tokens (domain/cutoff.py) is never judged as
    # if complete: `cut_off` says the stored text ends at the limit (backfilled from its call's
    # finish_reason, so a database written before counts its cut-off texts too), `cut_off_reasks`
    # how many times it was asked again with a larger limit (generation.on_truncated = 'reask').
    # `failed_items` names the planned items whose call failed for good, so that an item never
    # sent (a stopped run) is not reported as failed; rows of items answered since are ignored.
    Migration(
        14,
        "texts cut off at max_tokens (cut_off, cut_off_reasks on outputs and assistance texts) and the planned "
        "items whose call failed for good (failed_items)",
        (
            "ALTER TABLE outputs ADD COLUMN cut_off INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE outputs ADD COLUMN cut_off_reasks INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE assistance_texts ADD COLUMN cut_off INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE assistance_texts ADD COLUMN cut_off_reasks INTEGER NOT NULL DEFAULT 0",
            f"UPDATE outputs SET cut_off = 1 WHERE call_key IN (SELECT key FROM calls WHERE lower(trim(finish_reason))"
            f" IN {CUT_OFF_SQL})",
            f"UPDATE assistance_texts SET cut_off = 1 WHERE call_key IN (SELECT key FROM calls WHERE"
            f" lower(trim(finish_reason)) IN {CUT_OFF_SQL})",
            """CREATE TABLE IF NOT EXISTS failed_items (
    item TEXT PRIMARY KEY, stage TEXT NOT NULL, call_key TEXT, error TEXT, created_at TEXT NOT NULL
)""",
        ),
    ),
    # Issue 23: spend the provider may have billed without an answer (a timed-out or broken reply,
    # a call in flight when a run stopped or was killed), estimated at the request's reservation
    # and counted toward max_cost_usd; `calls_in_flight.reserved_usd` keeps the reservation so a
    # killed run's calls are estimated on resume.
    Migration(
        15,
        "spend billed without an answer (unanswered_spend) and each call in flight's reservation",
        (
            "ALTER TABLE calls_in_flight ADD COLUMN reserved_usd REAL",
            """CREATE TABLE IF NOT EXISTS unanswered_spend (
        id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, stage TEXT NOT NULL, model TEXT NOT NULL,
        cause TEXT NOT NULL, error_type TEXT, usd REAL, created_at TEXT NOT NULL
    )""",
        ),
    ),
    # Issue 23: `centaur migrate` records each change of a session's identity it makes (a renamed
    # entry, a retired one) with the number of stored rows it touched; append-only. A retired
    # entry's items stay stored and the report leaves them out, counted (domain/identity.py).
    Migration(
        16,
        "the log of identity changes `centaur migrate` made (renamed and retired entries)",
        (
            """CREATE TABLE IF NOT EXISTS session_changes (
        id INTEGER PRIMARY KEY AUTOINCREMENT, action TEXT NOT NULL CHECK (action IN ('rename', 'retire')),
        kind TEXT NOT NULL, old TEXT NOT NULL, new TEXT, rows INTEGER NOT NULL, created_at TEXT NOT NULL
    )""",
        ),
    ),
    # Issue 27: the tamper-evident record (store/chain.py). Rows written before it are chained in
    # insertion order by the back-fill, in this migration's transaction, so an old database opens
    # with a chain that verifies clean.
    Migration(
        17,
        "a hash chain over judgments, submitted deliverables and masking logs (chain_seq, chain_content, "
        "chain_hash; meta.chain_head and chain_length), back-filled in insertion order",
        chain.migration_statements(),
        chain.backfill,
    ),
    # Issue 22: a generic task (`generic_tasks`) holds every question of imported data under one
    # task; each of its comparisons keeps the question's id and prompt text (NULL elsewhere: the
    # task file's prompt is the prompt). The comparison id includes the question, so one pair of
    # candidates meets once per question in the same (run, task, mode).
    Migration(
        18,
        "the question id and prompt text of a comparison of a generic task (NULL for a task of a file)",
        (
            "ALTER TABLE comparisons ADD COLUMN question TEXT",
            "ALTER TABLE comparisons ADD COLUMN prompt TEXT",
        ),
    ),
    # Issue 24: the note an expert gives when flagging a place (either seat), one row per flag
    # with a note (append-only: a second flag keeps the first note). `place` is the seat's key:
    # an assignment id, or a practice or gold check's token. The HTML seat kept them in `meta`
    # as `flag-note/EXPERT/PLACE` before: moved here (the place is what follows the last "/",
    # since no place key holds one), and out of `meta`.
    Migration(
        19,
        "expert_flag_notes: the note of a flagged place (moved out of meta's flag-note/ rows)",
        (
            """CREATE TABLE IF NOT EXISTS expert_flag_notes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        expert TEXT NOT NULL,
        place TEXT NOT NULL,
        note TEXT NOT NULL,
        noted_at TEXT NOT NULL
    )""",
            "CREATE INDEX IF NOT EXISTS expert_flag_notes_place ON expert_flag_notes (expert, place)",
            # rtrim(key, <key without "/">) is the key up to its last "/"; what follows is the place.
            """INSERT INTO expert_flag_notes (expert, place, note, noted_at)
    SELECT substr(head, 11, length(head) - 11), substr(key, length(head) + 1), value,
        strftime('%Y-%m-%dT%H:%M:%S+00:00', 'now')
    FROM (SELECT key, value, rtrim(key, replace(key, '/', '')) AS head FROM meta
          WHERE key LIKE 'flag-note/%/%' AND trim(value) != '')
    WHERE length(head) > 11 AND length(key) > length(head)
    ORDER BY key""",
            "DELETE FROM meta WHERE key LIKE 'flag-note/%'",
        ),
    ),
    # Issue 27 (the organiser's console and integrity signals): how many characters of an expert's
    # rationale came from a paste (NULL: not recorded: an LLM judge, a packet, a judgment stored
    # before), kept on the draft too so a reload keeps the count; and the organiser's own links to
    # the console page of `centaur serve`, apart from the experts' links so that no expert token
    # can ever open it (token hashes only, revocations kept, as for `expert_links`).
    Migration(
        20,
        "characters of an expert's rationale pasted (judgments.pasted_chars, expert_drafts.pasted_chars) and the "
        "organiser's console links (organiser_links)",
        (
            "ALTER TABLE judgments ADD COLUMN pasted_chars INTEGER",
            "ALTER TABLE expert_drafts ADD COLUMN pasted_chars INTEGER",
            """CREATE TABLE IF NOT EXISTS organiser_links (
        id INTEGER PRIMARY KEY AUTOINCREMENT, token_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL, revoked_at TEXT
    )""",
        ),
    ),
    # Issue 27: adjudication (store/adjudication.py). An adjudicator's final verdict on a
    # comparison the judges disagreed on, kept apart from `judgments` so that no statistic reads
    # it unless it asks; `winner` is the candidate's name (or 'tie'), `presentation` the order the
    # adjudicator saw (1: candidate_a first). A reopening is its own row (nothing is updated), so
    # the active adjudication of a comparison is its latest one without a reopening. Both chained.
    Migration(
        21,
        "adjudicated verdicts (adjudications) and their reopenings by hand (adjudication_reopenings), chained",
        (
            """CREATE TABLE IF NOT EXISTS adjudications (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        comparison_id TEXT NOT NULL REFERENCES comparisons (id),
        adjudicator TEXT NOT NULL, presentation INTEGER NOT NULL CHECK (presentation IN (1, 2)),
        winner TEXT NOT NULL, rationale TEXT NOT NULL, reason TEXT NOT NULL, created_at TEXT NOT NULL,
        chain_seq INTEGER, chain_content TEXT, chain_hash TEXT
    )""",
            "CREATE INDEX IF NOT EXISTS adjudications_comparison ON adjudications (comparison_id)",
            "CREATE INDEX IF NOT EXISTS adjudications_chain ON adjudications (chain_seq)",
            """CREATE TABLE IF NOT EXISTS adjudication_reopenings (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        adjudication_id INTEGER NOT NULL UNIQUE REFERENCES adjudications (id),
        reopened_by TEXT NOT NULL, note TEXT NOT NULL, created_at TEXT NOT NULL,
        chain_seq INTEGER, chain_content TEXT, chain_hash TEXT
    )""",
            "CREATE INDEX IF NOT EXISTS adjudication_reopenings_chain ON adjudication_reopenings (chain_seq)",
        ),
    ),
    # Issue 23: a batch whose status keeps coming back unreadable (garbage bytes, no batch object)
    # is counted across runs; at `pipeline.batching.MAX_UNREADABLE_POLLS` in a row it ends like a
    # lost batch, instead of leaving every run "not finished" for good.
    Migration(
        22,
        "unreadable status answers of a batch in a row, counted across runs (batches.unreadable_polls)",
        ("ALTER TABLE batches ADD COLUMN unreadable_polls INTEGER NOT NULL DEFAULT 0",),
    ),
    # Issue 23: every database holds its session secret from the start (it signs exports and
    # packets), so that `centaur export` only reads: an export made while a run holds the write
    # lock waited 10 s and failed when the export had to write the secret first.
    Migration(
        23,
        "a session secret in every database (signs exports and packets), made with Python's secrets module",
        (),
        _make_session_secret,
    ),
    # Issue 25: active allocation (`centaur assign --strategy active`). Each active place stores
    # the probability with which its draw picked the comparison, given the draws before it, so
    # the estimate can weight by it (stats/active.py); NULL for every other strategy.
    Migration(
        24,
        "the draw probability of an actively assigned place (expert_assignments.probability)",
        ("ALTER TABLE expert_assignments ADD COLUMN probability REAL",),
    ),
    # Issue 26: the judges' admission exam (store/exam.py). A planted-flaw pair is a stored
    # deliverable against a copy with one seeded flaw (or a slot no deliverable could fill: no
    # output_id, its description says why); a verdict is one judge's answer in one order
    # (presentation 1: the intact copy first), answered, invalid or failed, never dropped.
    Migration(
        25,
        "the judges' admission exam: planted-flaw pairs (exam_pairs) and each judge's verdicts (exam_verdicts)",
        (
            """CREATE TABLE IF NOT EXISTS exam_pairs (
        id TEXT PRIMARY KEY, seed TEXT NOT NULL, task TEXT NOT NULL, kind TEXT NOT NULL, slot INTEGER NOT NULL,
        output_id TEXT, flawed TEXT, line INTEGER, description TEXT NOT NULL, requirement TEXT,
        created_at TEXT NOT NULL
    )""",
            """CREATE TABLE IF NOT EXISTS exam_verdicts (
        pair_id TEXT NOT NULL REFERENCES exam_pairs (id), judge TEXT NOT NULL, model TEXT NOT NULL,
        presentation INTEGER NOT NULL CHECK (presentation IN (1, 2)),
        status TEXT NOT NULL CHECK (status IN ('answered', 'invalid', 'failed')),
        picked TEXT CHECK (picked IN ('intact', 'flawed', 'tie')), reason TEXT, call_key TEXT,
        attempts INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL,
        PRIMARY KEY (pair_id, judge, presentation)
    )""",
        ),
    ),
    Migration(
        26,
        "dialogue turns: a worker's questions and its assistant's answers, in order, with times (issue 28)",
        (
            """CREATE TABLE dialogue_turns (
    dialogue TEXT NOT NULL,
    turn INTEGER NOT NULL CHECK (turn >= 1),
    worker_kind TEXT NOT NULL CHECK (worker_kind IN ('model', 'expert')),
    assistant TEXT NOT NULL,
    question TEXT NOT NULL,
    answer TEXT,
    outcome TEXT NOT NULL CHECK (outcome IN ('answered', 'failed')),
    error TEXT,
    question_key TEXT,
    answer_key TEXT,
    asked_at TEXT NOT NULL,
    answered_at TEXT,
    seconds REAL,
    PRIMARY KEY (dialogue, turn)
)""",
            "CREATE INDEX dialogue_turns_assistant ON dialogue_turns (assistant)",
        ),
    ),
    # Issue 26: an expert's optional guess of who wrote option 1 of a comparison, asked after the
    # judgment on a share of places (`[blinding] guess_share`) and stored apart from it, so it can
    # never change a verdict. `label` is the expert's free text, cleaned and cut ('': don't know);
    # `guessed` the one candidate it names (NULL: none, or several); `truth` who wrote option 1;
    # `candidates` and `families` how many the comparison's task and mode had; `outcome` and
    # `family_outcome` what the text counts as (domain.guessing.score_guess). A second answer is a
    # new row; the newest counts.
    Migration(
        27,
        "experts' guesses of who wrote option 1 (expert_guesses), apart from their judgments",
        (
            """CREATE TABLE IF NOT EXISTS expert_guesses (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        assignment_id INTEGER NOT NULL REFERENCES expert_assignments (id),
        expert TEXT NOT NULL, option INTEGER NOT NULL CHECK (option IN (1, 2)),
        label TEXT NOT NULL, guessed TEXT, truth TEXT NOT NULL,
        candidates INTEGER NOT NULL CHECK (candidates >= 2), families INTEGER NOT NULL CHECK (families >= 1),
        outcome TEXT NOT NULL CHECK (outcome IN ('correct', 'incorrect', 'unmatched', 'family_only', 'dont_know')),
        family_outcome TEXT NOT NULL
            CHECK (family_outcome IN ('correct', 'incorrect', 'unmatched', 'dont_know', 'one_family')),
        created_at TEXT NOT NULL
    )""",
            "CREATE INDEX IF NOT EXISTS expert_guesses_place ON expert_guesses (assignment_id)",
        ),
    ),
)
"""Every schema step, in order; append new ones, never edit an applied one."""

SCHEMA_VERSION = MIGRATIONS[-1].version
"""The version this program writes and reads."""


def schema_version(conn: sqlite3.Connection) -> int:
    """The version of an open database (0: never migrated, a file of the unversioned code or a new one)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, path: Path, target: int = SCHEMA_VERSION) -> int:
    """Bring a session database up to `target`, one BEGIN IMMEDIATE transaction per migration.

    Args:
        conn: An autocommit connection (`connection.connect`).
        path: The file, for error messages.
        target: The version to stop at (tests build older databases with it).

    Returns:
        The version the database has now.

    Raises:
        StoreError: the database was written by a newer program, or a migration failed.
    """
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: session database schema version {found} is newer than this program reads "
            f"(up to {SCHEMA_VERSION}); open it with a newer centaur-tui",
            title="Newer session database",
        )
    lock = threading.Lock()
    for step in MIGRATIONS[found:target]:
        with immediate_transaction(conn, lock) as c:
            if schema_version(c) >= step.version:  # another process migrated while we waited
                continue
            try:
                for statement in step.statements:
                    c.execute(statement)
                if step.backfill is not None:
                    step.backfill(c)
            except sqlite3.Error as exc:
                raise StoreError(f"{path}: schema migration {step.version} ({step.summary}) failed: {exc}") from None
            c.execute(f"PRAGMA user_version = {step.version:d}")
            c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(step.version),))
    return schema_version(conn)


PACKET_FORMAT = "centaur-judging-packet"
PACKET_VERSION = 4
"""A packet file says its format and version in `packet_meta`; a reader refuses any other version.
Version 2 (issue 13): `packet_meta` holds the session's name and fingerprint and the packet's
HMAC (`mac`), each item its own HMAC (`items.mac`, also over its `exported_state`, the state
`state` started from); a version 1 packet has neither and is
refused (export it again). Version 3 (issue 14): `packet_meta` may hold the session's expert
`guidelines` and holds `idle_s`, both under the packet's HMAC; drafts and results hold
`active_seconds`, results `confirmed_lower`; a version 2 packet is refused (export it again). Version 4
(issue 22): each item holds `cut_off` ("00", "10", "01" or "11": option 1 / option 2 was cut off at the
length limit), under the item's HMAC; a version 3 packet is refused (export it again)."""

PACKET_TABLES = (
    "CREATE TABLE IF NOT EXISTS packet_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS items (
        token TEXT PRIMARY KEY, position INTEGER NOT NULL, task_title TEXT NOT NULL, task_prompt TEXT NOT NULL,
        deliverable TEXT NOT NULL, rubric TEXT NOT NULL, option_1 TEXT NOT NULL, option_2 TEXT NOT NULL,
        exported_state TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'pending', mac TEXT NOT NULL,
        cut_off TEXT NOT NULL DEFAULT '00'
    )""",
    """CREATE TABLE IF NOT EXISTS drafts (
        token TEXT PRIMARY KEY REFERENCES items (token), scores TEXT NOT NULL, winner TEXT,
        rationale TEXT NOT NULL, seconds REAL NOT NULL, version INTEGER NOT NULL, updated_at TEXT NOT NULL,
        active_seconds REAL
    )""",
    """CREATE TABLE IF NOT EXISTS results (
        token TEXT PRIMARY KEY REFERENCES items (token), scores TEXT NOT NULL, winner TEXT NOT NULL,
        rationale TEXT NOT NULL, seconds REAL NOT NULL, judged_at TEXT NOT NULL,
        active_seconds REAL, confirmed_lower INTEGER NOT NULL DEFAULT 0
    )""",
)
"""A judging packet: a separate, short-lived file written once by `export_packet`, so it has a
format version (PACKET_VERSION) rather than migrations."""
