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
        comparisons_audit,
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
    from centaur_tui.store.chain import ChainBreak, ChainCheck, chain_head, verify_store
    from centaur_tui.store.checks import ExpertChecks, check_rows, seat_rows
    from centaur_tui.store.db import JudgeNameClashError, Store
    from centaur_tui.store.dialogue import DialogueTurn, all_dialogue_turns, dialogue_turns, save_dialogue_turns
    from centaur_tui.store.identity import (
        Change,
        changes,
        rename_entry,
        retire_entry,
        stored_identity,
        stored_identity_at,
    )
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
        export_fingerprint,
        export_manifest,
        store_judgments,
        verify_manifest,
    )
    from centaur_tui.store.judging import (
        AssignedComparison,
        AssignmentPlace,
        JudgingRows,
        StoredExpertJudgment,
        flag_note_rows,
    )
    from centaur_tui.store.links import LinkState, LinkStore, OrganiserLinkStore
    from centaur_tui.store.lock import SessionLock, lock_holder, lock_path
    from centaur_tui.store.masking import masking_log, read_blinding_file, session_blinding, work_masking_log
    from centaur_tui.store.outcomes import (
        billed_twice_pending,
        clear_billed_twice,
        clear_in_flight,
        final_errors,
        judgment_item,
        mark_in_flight,
        note_resent,
        record_failed_item,
        record_unanswered,
        stored_facts,
        take_interrupted,
    )
    from centaur_tui.store.packets import (
        PacketContents,
        PacketError,
        PacketExport,
        PacketImport,
        PacketMeta,
        PacketPlace,
        PacketRefused,
        PacketRows,
        VerifiedPacket,
        forget_secrets,
        merge_packet,
        read_packet,
        session_fingerprint,
        session_secret,
        verify_packet,
        write_packet,
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
    from centaur_tui.store.usage import (
        EstimateFacts,
        StageModelUsage,
        UnansweredSpend,
        answered_calls,
        estimate_facts,
        session_spend,
        unanswered_spend,
    )
    from centaur_tui.store.work import WorkAssignmentRow, WorkPlaceRow, WorkStore

_MODULE_OF = {
    "DialogueTurn": "dialogue",
    "all_dialogue_turns": "dialogue",
    "dialogue_turns": "dialogue",
    "save_dialogue_turns": "dialogue",
    "AssignedComparison": "judging",
    "AssignmentPlace": "judging",
    "JudgingRows": "judging",
    "StoredExpertJudgment": "judging",
    "PacketMeta": "packets",
    "PacketPlace": "packets",
    "PacketRows": "packets",
    "write_packet": "packets",
    "WorkAssignmentRow": "work",
    "WorkPlaceRow": "work",
    "AuditComparison": "audit",
    "AuditJudgment": "audit",
    "BatchRequestRow": "batches",
    "CellAudit": "audit",
    "Change": "identity",
    "EstimateFacts": "usage",
    "ExpertChecks": "checks",
    "ExpertStore": "assignments",
    "ImportConflictError": "importer",
    "ImportFileError": "importer",
    "ImportSummary": "importer",
    "JudgeNameClashError": "db",
    "JudgeTally": "importer",
    "LeftOut": "audit",
    "LinkState": "links",
    "LinkStore": "links",
    "OrganiserLinkStore": "links",
    "MANIFEST": "importer",
    "OutputsSummary": "imported",
    "PACKET_FORMAT": "schema",
    "PACKET_VERSION": "schema",
    "PacketError": "packets",
    "PacketExport": "packets",
    "PacketImport": "packets",
    "PacketRefused": "packets",
    "SCHEMA_VERSION": "schema",
    "SessionLock": "lock",
    "SessionState": "assignments",
    "StageModelUsage": "usage",
    "Store": "db",
    "WorkDraft": "work",
    "WorkError": "work",
    "WorkStore": "work",
    "assignment_strategies": "report_reads",
    "batch_counts": "batches",
    "batch_overhead": "batches",
    "batch_rows": "batches",
    "batched_judgment_ids": "batches",
    "batched_keys": "batches",
    "batches_in_flight": "batches",
    "calls_of": "audit",
    "changes": "identity",
    "cell_audit": "audit",
    "comparisons_audit": "audit",
    "verify_manifest": "importer",
    "check_no_double_send": "batches",
    "check_rows": "checks",
    "flag_note_rows": "judging",
    "clear_in_flight": "outcomes",
    "collect_batch": "batches",
    "comparison_lengths": "report_reads",
    "comparison_texts": "report_reads",
    "errors_of": "audit",
    "estimate_facts": "usage",
    "export_fingerprint": "importer",
    "export_manifest": "importer",
    "final_errors": "outcomes",
    "fingerprint": "report_reads",
    "ChainBreak": "chain",
    "ChainCheck": "chain",
    "chain_head": "chain",
    "verify_store": "chain",
    "left_out": "audit",
    "lock_holder": "lock",
    "lock_path": "lock",
    "mark_in_flight": "outcomes",
    "record_failed_item": "outcomes",
    "judgment_item": "outcomes",
    "billed_twice_pending": "outcomes",
    "clear_billed_twice": "outcomes",
    "note_resent": "outcomes",
    "record_unanswered": "outcomes",
    "masking_log": "masking",
    "open_batch": "batches",
    "option_score_rows": "report_reads",
    "pending_keys": "batches",
    "read_blinding_file": "masking",
    "rename_entry": "identity",
    "report_inputs": "report_reads",
    "requests_of": "batches",
    "retire_entry": "identity",
    "seat_rows": "checks",
    "session_blinding": "masking",
    "session_fingerprint": "packets",
    "session_spend": "usage",
    "UnansweredSpend": "usage",
    "unanswered_spend": "usage",
    "answered_calls": "usage",
    "store_judgments": "importer",
    "stored_facts": "outcomes",
    "stored_identity": "identity",
    "stored_identity_at": "identity",
    "stored_orders": "imported",
    "stored_texts": "imported",
    "store_imported": "imported",
    "verify_packet": "packets",
    "merge_packet": "packets",
    "forget_secrets": "packets",
    "session_secret": "packets",
    "read_packet": "packets",
    "PacketContents": "packets",
    "VerifiedPacket": "packets",
    "take_interrupted": "outcomes",
    "unfinished_batches": "batches",
    "update_batch": "batches",
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
    "AssignedComparison",
    "AssignmentPlace",
    "AuditComparison",
    "AuditJudgment",
    "BatchRequestRow",
    "CellAudit",
    "ChainBreak",
    "ChainCheck",
    "Change",
    "DialogueTurn",
    "EstimateFacts",
    "ExpertChecks",
    "ExpertStore",
    "ImportConflictError",
    "ImportFileError",
    "ImportSummary",
    "JudgeNameClashError",
    "JudgeTally",
    "JudgingRows",
    "LeftOut",
    "LinkState",
    "LinkStore",
    "OrganiserLinkStore",
    "OutputsSummary",
    "PacketContents",
    "PacketError",
    "PacketExport",
    "PacketImport",
    "PacketMeta",
    "PacketPlace",
    "PacketRefused",
    "PacketRows",
    "SessionLock",
    "SessionState",
    "StageModelUsage",
    "Store",
    "StoredExpertJudgment",
    "UnansweredSpend",
    "VerifiedPacket",
    "WorkAssignmentRow",
    "WorkDraft",
    "WorkError",
    "WorkPlaceRow",
    "WorkStore",
    "all_dialogue_turns",
    "answered_calls",
    "assignment_strategies",
    "batch_counts",
    "batch_overhead",
    "batch_rows",
    "batched_judgment_ids",
    "batched_keys",
    "batches_in_flight",
    "billed_twice_pending",
    "calls_of",
    "cell_audit",
    "chain_head",
    "changes",
    "check_no_double_send",
    "check_rows",
    "clear_billed_twice",
    "clear_in_flight",
    "collect_batch",
    "comparison_lengths",
    "comparison_texts",
    "comparisons_audit",
    "dialogue_turns",
    "errors_of",
    "estimate_facts",
    "export_fingerprint",
    "export_manifest",
    "final_errors",
    "fingerprint",
    "flag_note_rows",
    "forget_secrets",
    "judgment_item",
    "left_out",
    "lock_holder",
    "lock_path",
    "mark_in_flight",
    "masking_log",
    "merge_packet",
    "note_resent",
    "open_batch",
    "option_score_rows",
    "pending_keys",
    "read_blinding_file",
    "read_packet",
    "record_failed_item",
    "record_unanswered",
    "rename_entry",
    "report_inputs",
    "requests_of",
    "retire_entry",
    "save_dialogue_turns",
    "seat_rows",
    "session_blinding",
    "session_fingerprint",
    "session_secret",
    "session_spend",
    "store_imported",
    "store_judgments",
    "stored_facts",
    "stored_identity",
    "stored_identity_at",
    "stored_orders",
    "stored_texts",
    "take_interrupted",
    "unanswered_spend",
    "unfinished_batches",
    "update_batch",
    "verify_manifest",
    "verify_packet",
    "verify_store",
    "work_masking_log",
    "write_packet",
]
