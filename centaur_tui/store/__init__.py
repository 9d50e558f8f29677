"""Provides the session database: one SQLite file per session, the only place that touches SQL.

Callers import from here. The modules, each named by what it holds: `db` (Store: the
connection and the pipeline's tables), `schema` (every table, as numbered migrations),
`connection` (how a file is opened and written), `assignments` (experts and their judging
queues), `judging` (an expert's judging in the session database), `masking` (blinding and the
masking log), `packets` (judging packets), `work` (experts as workers), `importer` and
`imported` (storing imported judgments and outputs; `formats/` reads the files), `links`
(experts' personal links for `centaur serve`), `lock` (one run per session), `report_reads`
(what the report reads), `outcomes` (what every planned item's outcome is derived from; calls
in flight), `audit` (what the audit screens read).

sqlite-utils was dropped (it was kept for `Database.query`, dict rows, which `Store.read`
does in four lines): its `Migrations` runs each migration under a plain `BEGIN` (see
`schema`), and importing it, even with pandas and numpy hidden from it by the old `_lazy`
module, took 61 ms median (43 ms at best) against 2 ms for sqlite3: 20 fresh interpreters
each, load average 4 on 2 cores (203 ms against 14 ms in a busier minute; 1.1 s with pandas
not hidden). With the domain already loaded, as in the CLI, `import centaur_tui.store` went
from 44 ms to 27 ms median. Everything here uses the standard library's sqlite3.

Names are loaded on first use (PEP 562 `__getattr__`): the home screen needs `Store` and the
session overview's counts, not packets, imports, audits or work queues, and importing every
module up front cost about 50 ms of a 0.45 s launch (`python -X importtime`, issue 14).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from centaur_tui.store.batches import (
        BatchRequestRow,
        batch_counts,
        batch_overhead,
        batch_rows,
        batched_judgment_ids,
        batched_keys,
        batches_in_flight,
        check_no_double_send,
        collect_batch,
        open_batch,
        pending_keys,
        requests_of,
        unfinished_batches,
        update_batch,
    )
    from centaur_tui.store.checks import ExpertChecks, check_rows, seat_rows
    from centaur_tui.store.db import JudgeNameClashError, Store
    from centaur_tui.store.imported import (
        OutputsSummary,
        store_imported,
        stored_orders,
        stored_texts,
    )
    from centaur_tui.store.importer import (
        MANIFEST,
        ImportConflictError,
        ImportFileError,
        ImportSummary,
        JudgeTally,
        check_manifest,
        export_fingerprint,
        export_manifest,
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
        PacketRows,
        VerifiedPacket,
        export_packet,
        merge_packet,
        read_packet,
        session_fingerprint,
        verify_packet,
    )
    from centaur_tui.store.report_reads import (
        assignment_strategies,
        comparison_lengths,
        comparison_texts,
        fingerprint,
        option_score_rows,
        report_inputs,
    )
    from centaur_tui.store.schema import PACKET_FORMAT, PACKET_VERSION, SCHEMA_VERSION
    from centaur_tui.store.usage import EstimateFacts, StageModelUsage, estimate_facts, session_spend
    from centaur_tui.store.work import SessionWork, WorkDraft, WorkError, WorkItem, WorkQueueItem, WorkStore, word_count

_MODULE_OF = {
    "AuditComparison": "audit",
    "AuditJudgment": "audit",
    "BatchRequestRow": "batches",
    "CellAudit": "audit",
    "EstimateFacts": "usage",
    "ExpertChecks": "checks",
    "ExpertStore": "assignments",
    "ImportConflictError": "importer",
    "ImportFileError": "importer",
    "ImportSummary": "importer",
    "JudgeNameClashError": "db",
    "JudgeTally": "importer",
    "JudgingError": "judging",
    "JudgingSource": "judging",
    "LeftOut": "audit",
    "LinkState": "links",
    "LinkStore": "links",
    "MANIFEST": "importer",
    "OutputsSummary": "imported",
    "PACKET_FORMAT": "schema",
    "PACKET_VERSION": "schema",
    "PacketError": "packets",
    "PacketExport": "packets",
    "PacketImport": "packets",
    "PacketJudging": "packets",
    "PacketRefused": "packets",
    "SCHEMA_VERSION": "schema",
    "STATES": "judging",
    "SessionJudging": "judging",
    "SessionLock": "lock",
    "SessionState": "assignments",
    "SessionWork": "work",
    "StageModelUsage": "usage",
    "Store": "db",
    "WorkDraft": "work",
    "WorkError": "work",
    "WorkItem": "work",
    "WorkQueueItem": "work",
    "WorkStore": "work",
    "assignment_strategies": "report_reads",
    "batch_counts": "batches",
    "batch_overhead": "batches",
    "batch_rows": "batches",
    "batched_judgment_ids": "batches",
    "batched_keys": "batches",
    "batches_in_flight": "batches",
    "calls_of": "audit",
    "cell_audit": "audit",
    "check_manifest": "importer",
    "check_no_double_send": "batches",
    "check_rows": "checks",
    "clear_in_flight": "outcomes",
    "collect_batch": "batches",
    "comparison_lengths": "report_reads",
    "comparison_texts": "report_reads",
    "errors_of": "audit",
    "estimate_facts": "usage",
    "expert_record": "judging",
    "export_fingerprint": "importer",
    "export_manifest": "importer",
    "export_packet": "packets",
    "final_errors": "outcomes",
    "fingerprint": "report_reads",
    "left_out": "audit",
    "lock_holder": "lock",
    "lock_path": "lock",
    "mark_in_flight": "outcomes",
    "masking_log": "masking",
    "open_batch": "batches",
    "option_score_rows": "report_reads",
    "pending_keys": "batches",
    "read_blinding_file": "masking",
    "report_inputs": "report_reads",
    "requests_of": "batches",
    "seat_rows": "checks",
    "session_blinding": "masking",
    "session_fingerprint": "packets",
    "session_spend": "usage",
    "store_judgments": "importer",
    "stored_facts": "outcomes",
    "stored_orders": "imported",
    "stored_texts": "imported",
    "store_imported": "imported",
    "verify_packet": "packets",
    "merge_packet": "packets",
    "read_packet": "packets",
    "PacketRows": "packets",
    "VerifiedPacket": "packets",
    "take_interrupted": "outcomes",
    "unfinished_batches": "batches",
    "update_batch": "batches",
    "word_count": "work",
    "work_masking_log": "masking",
}
"""Where each public name lives (its module under centaur_tui.store)."""


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next lookup is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


__all__ = [
    "MANIFEST",
    "PACKET_FORMAT",
    "PACKET_VERSION",
    "SCHEMA_VERSION",
    "STATES",
    "AuditComparison",
    "AuditJudgment",
    "BatchRequestRow",
    "CellAudit",
    "EstimateFacts",
    "ExpertChecks",
    "ExpertStore",
    "ImportConflictError",
    "ImportFileError",
    "ImportSummary",
    "JudgeNameClashError",
    "JudgeTally",
    "JudgingError",
    "JudgingSource",
    "LeftOut",
    "LinkState",
    "LinkStore",
    "OutputsSummary",
    "PacketError",
    "PacketExport",
    "PacketImport",
    "PacketJudging",
    "PacketRefused",
    "PacketRows",
    "SessionJudging",
    "SessionLock",
    "SessionState",
    "SessionWork",
    "StageModelUsage",
    "Store",
    "VerifiedPacket",
    "WorkDraft",
    "WorkError",
    "WorkItem",
    "WorkQueueItem",
    "WorkStore",
    "assignment_strategies",
    "batch_counts",
    "batch_overhead",
    "batch_rows",
    "batched_judgment_ids",
    "batched_keys",
    "batches_in_flight",
    "calls_of",
    "cell_audit",
    "check_manifest",
    "check_no_double_send",
    "check_rows",
    "clear_in_flight",
    "collect_batch",
    "comparison_lengths",
    "comparison_texts",
    "errors_of",
    "estimate_facts",
    "expert_record",
    "export_fingerprint",
    "export_manifest",
    "export_packet",
    "final_errors",
    "fingerprint",
    "left_out",
    "lock_holder",
    "lock_path",
    "mark_in_flight",
    "masking_log",
    "merge_packet",
    "open_batch",
    "option_score_rows",
    "pending_keys",
    "read_blinding_file",
    "read_packet",
    "report_inputs",
    "requests_of",
    "seat_rows",
    "session_blinding",
    "session_fingerprint",
    "session_spend",
    "store_imported",
    "store_judgments",
    "stored_facts",
    "stored_orders",
    "stored_texts",
    "take_interrupted",
    "unfinished_batches",
    "update_batch",
    "verify_packet",
    "word_count",
    "work_masking_log",
]
