"""Provides the session database: one SQLite file per session, the only place that touches SQL.

Callers import from here. The modules, each named by what it holds: `db` (Store: the
connection and the pipeline's tables), `schema` (every table, as numbered migrations),
`connection` (how a file is opened and written), `assignments` (experts and their judging
queues), `judging` (an expert's judging in the session database), `masking` (blinding and the
masking log), `packets` (judging packets), `work` (experts as workers), `importer` (importing
exported judgments), `links` (experts' personal links for `centaur serve`), `lock` (one run
per session), `report_reads` (what the report reads), `outcomes` (what every planned item's
outcome is derived from; calls in flight), `audit` (what the audit screens read).

sqlite-utils was dropped (it was kept for `Database.query`, dict rows, which `Store.read`
does in four lines): its `Migrations` runs each migration under a plain `BEGIN` (see
`schema`), and importing it, even with pandas and numpy hidden from it by the old `_lazy`
module, took 61 ms median (43 ms at best) against 2 ms for sqlite3: 20 fresh interpreters
each, load average 4 on 2 cores (203 ms against 14 ms in a busier minute; 1.1 s with pandas
not hidden). With the domain already loaded, as in the CLI, `import centaur_tui.store` went
from 44 ms to 27 ms median. Everything here uses the standard library's sqlite3.
"""

from centaur_tui.store.assignments import ExpertStore, SessionState
from centaur_tui.store.audit import (
    AuditComparison,
    AuditJudgment,
    CellAudit,
    LeftOut,
    calls_of,
    cell_audit,
    errors_of,
    left_out,
)
from centaur_tui.store.db import JudgeNameClashError, Store
from centaur_tui.store.importer import (
    MANIFEST,
    ImportConflictError,
    ImportFileError,
    ImportRules,
    ImportSummary,
    JudgeTally,
    check_manifest,
    export_fingerprint,
    export_manifest,
    import_export,
    read_export,
    store_judgments,
)
from centaur_tui.store.judging import STATES, JudgingError, JudgingSource, SessionJudging, expert_record
from centaur_tui.store.links import LinkState, LinkStore
from centaur_tui.store.lock import SessionLock, lock_holder, lock_path
from centaur_tui.store.masking import masking_log, read_blinding_file, session_blinding, work_masking_log
from centaur_tui.store.outcomes import clear_in_flight, final_errors, mark_in_flight, stored_facts, take_interrupted
from centaur_tui.store.packets import (
    PacketError,
    PacketExport,
    PacketImport,
    PacketJudging,
    PacketRefused,
    export_packet,
    import_packet,
    session_fingerprint,
)
from centaur_tui.store.report_reads import (
    comparison_lengths,
    comparison_texts,
    fingerprint,
    option_score_rows,
    report_inputs,
)
from centaur_tui.store.schema import PACKET_FORMAT, PACKET_VERSION, SCHEMA_VERSION
from centaur_tui.store.work import (
    SessionWork,
    WorkDraft,
    WorkError,
    WorkItem,
    WorkQueueItem,
    WorkStore,
    word_count,
)

__all__ = [
    "MANIFEST",
    "PACKET_FORMAT",
    "PACKET_VERSION",
    "SCHEMA_VERSION",
    "STATES",
    "AuditComparison",
    "AuditJudgment",
    "CellAudit",
    "ExpertStore",
    "ImportConflictError",
    "ImportFileError",
    "ImportRules",
    "ImportSummary",
    "JudgeNameClashError",
    "JudgeTally",
    "JudgingError",
    "JudgingSource",
    "LeftOut",
    "LinkState",
    "LinkStore",
    "PacketError",
    "PacketExport",
    "PacketImport",
    "PacketJudging",
    "PacketRefused",
    "SessionJudging",
    "SessionLock",
    "SessionState",
    "SessionWork",
    "Store",
    "WorkDraft",
    "WorkError",
    "WorkItem",
    "WorkQueueItem",
    "WorkStore",
    "calls_of",
    "cell_audit",
    "check_manifest",
    "clear_in_flight",
    "comparison_lengths",
    "comparison_texts",
    "errors_of",
    "expert_record",
    "export_fingerprint",
    "export_manifest",
    "export_packet",
    "final_errors",
    "fingerprint",
    "import_export",
    "import_packet",
    "left_out",
    "lock_holder",
    "lock_path",
    "mark_in_flight",
    "masking_log",
    "option_score_rows",
    "read_blinding_file",
    "read_export",
    "report_inputs",
    "session_blinding",
    "session_fingerprint",
    "store_judgments",
    "stored_facts",
    "take_interrupted",
    "word_count",
    "work_masking_log",
]
