"""Provides the exchange use cases: a session's judgments exported to and imported from CSV, and judging packets.

Each import wires the two halves that never meet below this layer: `formats` reads and checks
the file (no SQL), `store` writes what it holds in one transaction (no parsing).

A packet is a self-contained file of one expert's open assignments, for an expert who cannot
reach the machine holding the session: exported here, judged in the app anywhere
(`services.judging.open_packet`), merged back with `import_packet`. Each function opens and closes the
session's database itself, so a front end only names the session and the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from centaur_tui.domain.errors import ImportFileError
from centaur_tui.domain.study import Study
from centaur_tui.services.session import expert, open_store, stored_simulated

if TYPE_CHECKING:
    from centaur_tui.domain.session import ExpertSpec
    from centaur_tui.store import ImportSummary, OutputsSummary, PacketExport, PacketImport, Store

DEFAULT_TASK_TEMPLATE = "mtbench_{question_id}_t{turn}"
"""The task id of an MT-Bench row (`question_id` 81, `turn` 1: task `mtbench_81_t1`)."""


@dataclass(frozen=True)
class CsvExport:
    """Rows written per CSV file, the session.json that ties them to the session, and whether the data is simulated."""

    out_dir: Path
    written: dict[str, int]
    simulated: bool
    manifest: Path | None = None


def export_csv(study: Study, out_dir: Path) -> CsvExport:
    """Write judgments.csv, scores.csv, outputs.csv and session.json of a session into `out_dir`.

    Raises:
        NoDatabaseError: the session has not been run.
    """
    from centaur_tui.pipeline.export import export_session
    from centaur_tui.store import MANIFEST, session_secret

    with open_store(study, title="Nothing to export", readonly=True) as store:
        has_secret = session_secret(store) is not None
    if not has_secret:  # every database since migration 23 has one: an export only reads
        with open_store(study, title="Nothing to export") as store:
            session_secret(store, create=True)  # the key that signs the export; never exported
    with open_store(study, title="Nothing to export", readonly=True) as store:
        simulated = stored_simulated(store)
        written = export_session(store, out_dir, study.session.name)
    return CsvExport(out_dir, written, simulated, out_dir / MANIFEST)


@dataclass(frozen=True)
class CsvImport:
    """What an import stored, and whether the session's own judgments are simulated."""

    summary: ImportSummary
    simulated: bool


def import_csv(
    study: Study, directory: Path, *, add_experts: tuple[str, ...] = (), external: bool = False
) -> CsvImport:
    """Validate and store judgments from an export folder (judgments.csv, scores.csv) in a session's database.

    Args:
        study: The session.
        directory: The folder `centaur export` wrote (with its session.json).
        add_experts: Expert ids to register with the import; every other expert must be registered.
        external: Accept files this session did not sign (judgments made with another tool, or
            another session's): imported as external data, every other check still applies.

    Raises:
        NoDatabaseError: the session has not been run (its comparisons must be stored).
        CentaurError: the files are not signed by this session (and not `external`), do not fit the
            session, or conflict with stored judgments (nothing written).
    """
    from centaur_tui.formats.export import file_digests, read_export_folder
    from centaur_tui.formats.rules import ImportRules
    from centaur_tui.store import ExpertStore, store_judgments

    rubrics = {t: study.rubric(t) for t in study.tasks}
    with open_store(study, title="Nothing to import into") as store:
        simulated = stored_simulated(store)
        experts = {e.id: e for e in ExpertStore(store).experts(study)}
        rules = ImportRules(study.session, experts, add_experts)
        digests = file_digests(directory)
        unsigned = _check_signature(store, study, directory, digests, external=external)
        new = rules.new_experts()
        found = read_export_folder(directory, store.comparisons(), rubrics, rules)
        if file_digests(directory) != digests:  # the files changed between the check and the read
            raise ImportFileError(f"{directory}: the files changed while they were imported; nothing was imported")
        summary = store_judgments(store, found.judgments, new)
    return CsvImport(replace(summary, bound=unsigned is None, unsigned=unsigned, ignored=found.ignored), simulated)


def _check_signature(
    store: Store, study: Study, directory: Path, digests: dict[str, str], *, external: bool
) -> str | None:
    """Refuse files this session did not sign, unless `external`; returns why they are not signed (None: signed).

    Under `--external` the files are foreign by declaration: a session.json is still checked (a
    signed export of this session is imported as one), and any failure becomes the reason shown
    in the summary instead of a refusal.
    """
    from centaur_tui.formats.export import read_manifest
    from centaur_tui.store import MANIFEST, verify_manifest

    path = Path(directory) / MANIFEST
    try:
        if not os.path.lexists(path):
            raise ImportFileError(
                f"{path}: missing; nothing was imported. `centaur export` writes and signs it to tie the files "
                "to their session (comparison ids alone do not: two sessions with the same candidates share "
                "them). For judgments made with another tool, pass --external."
            )
        verify_manifest(store, study.session.name, path, read_manifest(path), digests)
    except ImportFileError as exc:
        if not external:
            raise
        return "no session.json" if not os.path.lexists(path) else str(exc).split(";")[0]
    return None


def export_packet(study: Study, expert_id: str, out: Path) -> tuple[ExpertSpec, PacketExport]:
    """Write a packet of an expert's open assignments, with no identities at all; returns (expert, what was written).

    Raises:
        NoDatabaseError: the session has not been run.
        PacketError: the file exists already, or the expert has nothing open.
    """
    from centaur_tui.services.judging import export_packet as write_packet

    with open_store(study) as store:
        who = expert(study, store, expert_id)
        return who, write_packet(store, study, who, out)


def import_packet(study: Study, file: Path, expert_id: str | None = None) -> PacketImport:
    """Check a judged packet completely, then merge its results and drafts all at once; importing again adds nothing.

    Args:
        study: The session the packet was exported from.
        file: The packet file.
        expert_id: When given, the packet must be this expert's.

    Raises:
        PacketError: the file is not a packet of this session (or of that expert).
        PacketRefused: an item was changed, or a result or draft breaks the session's rules (nothing written).
    """
    with open_store(study) as store:
        return import_packet_into(store, study, file, expert_id)


def import_packet_into(store: Store, study: Study, file: Path, expert_id: str | None = None) -> PacketImport:
    """`import_packet` into an open session database: the store reads and verifies, formats checks, the store merges."""
    from centaur_tui.formats.packet import check_packet_rows
    from centaur_tui.store import merge_packet, verify_packet

    packet = verify_packet(store, study, file, expert_id)
    rules = study.session.judging
    results = check_packet_rows(
        file,
        packet.rows.results,
        packet.rows.drafts,
        packet.places(),
        study.rubric,
        allow_ties=rules.allow_ties,
        min_rationale=rules.expert_min_rationale,
        owner=packet.owner,
    )
    return merge_packet(store, study, packet, results)


@dataclass(frozen=True)
class OutputsImport:
    """What an import of outputs or winner-only judgments stored, and whether the session's own data is simulated."""

    summary: OutputsSummary
    simulated: bool


def import_outputs(study: Study, file: Path) -> OutputsImport:
    """Check an outputs file (CSV or JSONL) completely, then store its outputs and their round-robin comparisons.

    The database is created when the session has none yet (a session of imported outputs only
    has no run before its import).

    Raises:
        CentaurError: the file does not fit the session, or disagrees with stored outputs (nothing written).
    """
    from centaur_tui.formats.outputs import output_texts, read_outputs
    from centaur_tui.store import ExpertStore, session_blinding, store_imported

    # Checked before the database is opened: a refused file leaves no new database behind.
    existing = study.database.exists()
    experts = {e.id for e in study.session.experts}
    if existing:
        with open_store(study, readonly=True) as store:
            experts |= {e.id for e in ExpertStore(store).experts(study)}
    found = read_outputs(file, study.session, session_blinding(study), experts)
    with open_store(study, must_exist=False) as store:
        # The texts are read again as they are written (one at a time): the file is never held whole.
        summary = store_imported(
            store, study.session, output_texts(found), path=str(file), expert_workers=found.expert_workers
        )
        return OutputsImport(replace(summary, ignored=found.ignored), stored_simulated(store))


@dataclass(frozen=True)
class WinnerImport:
    """What an import of a winner-only judgment file stored, and what it left out or registered."""

    summary: OutputsSummary
    simulated: bool
    duplicates: int
    """Verdicts left out under `--duplicates keep-first|keep-last`."""
    second_order: int
    """Judgments in the other order of a comparison the judge also judged (presentation 1)."""
    new_judges: tuple[str, ...]
    """Judges registered as experts by `--new-judges-are-experts`."""


def import_winner_file(
    study: Study,
    file: Path,
    *,
    add_experts: tuple[str, ...] = (),
    task_template: str = DEFAULT_TASK_TEMPLATE,
    generic_task: str | None = None,
    duplicates: str = "refuse",
    new_judges_are_experts: bool = False,
) -> WinnerImport:
    """Check a winner-only judgment file (documented CSV/JSONL or MT-Bench's layout), then store it all at once.

    The comparisons a row refers to are built where missing, and the conversations it gives
    become imported outputs of imported candidates (MT-Bench's `conversation_a`/`conversation_b`).
    Under a generic task (`generic_task`, or the session's only generic task when it has no task
    file), every question of the file is a comparison of that task with its own prompt.

    Raises:
        CentaurError: the file does not fit the session or conflicts with what is stored (nothing written).
    """
    from centaur_tui.formats.rules import ImportRules
    from centaur_tui.formats.winners import read_winner_judgments
    from centaur_tui.store import ExpertStore, session_blinding, store_imported, stored_orders, stored_texts

    session = study.session
    if generic_task is None and not session.tasks and len(session.generic_tasks) == 1:
        generic_task = session.generic_tasks[0]  # the documented default: nothing else can hold the rows
    # Checked before the database is opened for writing: a refused file leaves no new database behind.
    experts = {e.id: e for e in session.experts}
    texts: dict[str, str] = {}
    comparisons = {}
    orders: dict[tuple[str, str], dict[str, int]] = {}
    if study.database.exists():
        with open_store(study, readonly=True) as store:
            experts = {e.id: e for e in ExpertStore(store).experts(study)}
            texts, comparisons, orders = stored_texts(store), store.comparisons(), stored_orders(store)
    rules = ImportRules(session, experts, add_experts, new_judges_are_experts)
    rules.new_experts()
    found = read_winner_judgments(
        file,
        texts,
        comparisons,
        rules,
        session_blinding(study),
        task_template=task_template,
        generic_task=generic_task,
        duplicates=duplicates,
        new_judges_are_experts=new_judges_are_experts,
        stored_orders=orders,
    )
    from centaur_tui.domain.session import ExpertSpec

    new_experts = rules.new_experts() + [ExpertSpec(id=j, name=j) for j in found.new_judges]
    with open_store(study, must_exist=False) as store:
        summary = store_imported(
            store,
            session,
            found.outputs,
            path=str(file),
            judgments=found.judgments,
            new_experts=new_experts,
            tournaments=found.tournaments,
            comparisons=found.comparisons,
        )
        summary = replace(summary, unchanged=summary.unchanged + found.stored_conversations, ignored=found.ignored)
        return WinnerImport(
            summary, stored_simulated(store), found.duplicates, found.second_order, tuple(found.new_judges)
        )
