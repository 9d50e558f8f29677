"""Provides the HTML judging packet's use cases: export a packet for one offline HTML file, import its results.

The HTML packet is the judging packet of `centaur packet export` (same items, masking, HMACs,
no practice or gold place) carried inside one HTML file: the packet file itself travels in it,
base64-encoded, beside what the page shows. The expert's browser keeps progress in its own
storage and "Save results" writes a results file: JSON holding the packet unchanged and the
expert's results, drafts and skipped or flagged places.

Import writes those into the carried packet through the packet's own judging source (what
`centaur judge` would have written), then checks and merges it exactly as a packet is checked
(`import_packet`: the items' HMACs, the session, the expert, every field), all or nothing.
Rendering the page is the front end's job (`serve.packet`): this module holds no HTML.
"""

from __future__ import annotations

import base64
import binascii
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from centaur_tui.domain.drafts import DraftFieldError, parse_draft
from centaur_tui.domain.errors import CentaurError
from centaur_tui.services.exchange import export_packet, import_packet
from centaur_tui.services.judging import open_packet

if TYPE_CHECKING:
    from centaur_tui.domain.session import ExpertSpec
    from centaur_tui.domain.study import Study
    from centaur_tui.store import PacketImport

RESULTS_FORMAT = "centaur-html-packet-results"
RESULTS_VERSION = 1
MAX_RESULTS_BYTES = 200_000_000
"""A results file larger than this is refused before it is read (200 MB)."""


class HtmlResultsError(CentaurError):
    """A results file that is not one an HTML packet writes, or that breaks its packet (file and field named)."""

    title = "HTML packet results refused"


@dataclass(frozen=True)
class PacketDimension:
    id: str
    name: str
    description: str
    low: str
    high: str


@dataclass(frozen=True)
class PacketPlace:
    """One comparison of the packet, as its page shows it (masked, cleaned, in presented order)."""

    token: str
    position: int
    task_title: str
    task_prompt: str
    deliverable: str
    dimensions: tuple[PacketDimension, ...]
    option_1: str
    option_2: str


@dataclass(frozen=True)
class HtmlPacket:
    """What an HTML packet holds: the packet file's bytes and every place's contents."""

    expert: ExpertSpec
    packet_id: str
    packet: bytes
    places: tuple[PacketPlace, ...]
    expert_name: str
    session_name: str
    simulated: bool
    allow_ties: bool
    min_rationale: int
    idle_seconds: float
    guidelines: str | None
    maskings: int


def export_html_packet(study: Study, expert_id: str) -> HtmlPacket:
    """An expert's open comparisons as a packet (the same as `packet export` writes), read back for one HTML page.

    Raises:
        NoDatabaseError: the session has not been run.
        PacketError: the expert has nothing open.
    """
    folder = Path(tempfile.mkdtemp(prefix="centaur-html-packet-"))
    try:
        path = folder / "packet"
        expert, written = export_packet(study, expert_id, path)
        source = open_packet(path)
        try:
            places = []
            for place in source.queue():
                item = source.item(place.key)
                places.append(
                    PacketPlace(
                        token=place.key,
                        position=place.position,
                        task_title=item.task_title,
                        task_prompt=item.task_prompt,
                        deliverable=item.deliverable,
                        dimensions=tuple(
                            PacketDimension(d.id, d.name, d.description, d.low, d.high) for d in item.rubric.all
                        ),
                        option_1=item.option_1,
                        option_2=item.option_2,
                    )
                )
            meta = source.rows.db.meta
            packet = HtmlPacket(
                expert=expert,
                packet_id=str(meta.get("packet_id", "")),
                packet=b"",
                places=tuple(places),
                expert_name=source.expert_name,
                session_name=study.session.name,
                simulated=source.simulated,
                allow_ties=source.allow_ties,
                min_rationale=source.min_rationale,
                idle_seconds=source.idle_seconds,
                guidelines=source.guidelines,
                maskings=written.maskings,
            )
        finally:
            source.close()
        return _with_bytes(packet, path.read_bytes())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _with_bytes(packet: HtmlPacket, data: bytes) -> HtmlPacket:
    return replace(packet, packet=data)


def is_html_results(file: Path) -> bool:
    """Whether a file looks like an HTML packet's results (JSON) rather than a packet (SQLite).

    Opened as the readers open files (formats.reader.open_regular: a FIFO or device is not
    waited on); anything that is not a readable regular file is "no", and the packet reader
    then says what it is.
    """
    from centaur_tui.domain.errors import ImportFileError
    from centaur_tui.formats.reader import open_regular

    try:
        with open_regular(file) as handle:
            start = handle.read(64).lstrip()
    except (OSError, ImportFileError):
        return False
    return start.startswith(b"{")


def _read_results(file: Path) -> dict[str, Any]:
    from centaur_tui.domain.errors import ImportFileError
    from centaur_tui.formats.reader import LIMITS, loads, open_regular

    # The one reader's limits (regular file only, JSON depth and number length, no duplicated keys).
    limits = replace(LIMITS, file_bytes=MAX_RESULTS_BYTES)
    try:
        with open_regular(file, limits) as handle:
            raw = handle.read()
        data = loads(raw.decode("utf-8"), limits)
    except ImportFileError as exc:
        raise HtmlResultsError(str(exc)) from None
    except UnicodeDecodeError:
        raise HtmlResultsError(f"{file}: not UTF-8 text, not a results file of an HTML packet") from None
    except ValueError as exc:
        raise HtmlResultsError(f"{file}: not well-formed JSON (truncated or damaged?): {exc}") from None
    if not isinstance(data, dict):
        raise HtmlResultsError(f"{file}: a JSON object is needed")
    if data.get("format") != RESULTS_FORMAT:
        raise HtmlResultsError(f"{file}: field format: {str(data.get('format'))[:60]!r} is not {RESULTS_FORMAT!r}")
    if data.get("version") != RESULTS_VERSION:
        raise HtmlResultsError(
            f"{file}: field version: {str(data.get('version'))[:20]!r}; this program reads version {RESULTS_VERSION}"
        )
    for name in ("results", "drafts", "states"):
        if not isinstance(data.get(name, {}), dict):
            raise HtmlResultsError(f"{file}: field {name}: an object keyed by place is needed")
    return data


def import_html_results(study: Study, file: Path, expert_id: str | None = None) -> PacketImport:
    """Check an HTML packet's results file completely, then merge it as its packet would be merged.

    Raises:
        HtmlResultsError: the file is not a results file of an HTML packet (its field named).
        PacketError: the carried packet is not one of this session (or of that expert).
        PacketRefused: an item was changed, or a result or draft breaks the session's rules (nothing written).
    """
    data = _read_results(file)
    encoded = data.get("packet")
    if not isinstance(encoded, str):
        raise HtmlResultsError(f"{file}: field packet: the packet the page carried is missing")
    try:
        packet = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise HtmlResultsError(f"{file}: field packet: not base64 (damaged?)") from None
    folder = Path(tempfile.mkdtemp(prefix="centaur-html-results-"))
    try:
        path = folder / "packet"
        path.write_bytes(packet)
        problems: list[str] = []
        try:
            source = open_packet(path)
        except CentaurError as exc:
            raise HtmlResultsError(f"{file}: field packet: {exc}") from None
        try:
            places = {q.key: q for q in source.queue()}
            version = time.time_ns()
            for section in ("drafts", "results"):
                for token, value in data.get(section, {}).items():
                    where = f"{section}[{str(token)[:24]}]"
                    if token not in places:
                        problems.append(f"{where}: no such place in the packet")
                        continue
                    dimensions = [d.id for d in source.item(token).rubric.all]
                    try:
                        draft = parse_draft(value, dimensions, where=where)
                    except DraftFieldError as exc:
                        problems.append(str(exc))
                        continue
                    try:
                        if section == "drafts":
                            version += 1
                            source.save_draft(token, draft, version)
                        else:
                            source.submit(token, draft)
                    except CentaurError as exc:
                        problems.append(f"{where}: {exc}")
            for token, state in data.get("states", {}).items():
                where = f"states[{str(token)[:24]}]"
                if token not in places:
                    problems.append(f"{where}: no such place in the packet")
                elif state not in ("pending", "skipped", "flagged"):
                    problems.append(f"{where}: {str(state)[:20]!r} is not pending, skipped or flagged")
                else:
                    source.set_state(token, state)
        finally:
            source.close()
        if problems:
            listed = "\n  ".join(problems[:20]) + (
                f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            )
            raise HtmlResultsError(f"{file}: refused, nothing imported ({len(problems)} problem(s)):\n  {listed}")
        return import_packet(study, path, expert_id)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def packet_base64(packet: HtmlPacket) -> str:
    """The packet's bytes as the page carries them (base64), for the front end to embed."""
    return base64.b64encode(packet.packet).decode("ascii")
