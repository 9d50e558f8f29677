"""Hostile files against every reader (issue 23 items 5-7), through the real CLI.

Each refused file: exit status 2, a message naming the file, the line (or item) and the field,
no traceback, and the database's judgment and output tables byte-identical before and after. A
FIFO path must be refused at once (opened without blocking), a packet's view or trigger must
never run, and what a tampered packet shows on the judge's terminal is cleaned. CRLF, a UTF-8
byte-order mark and undocumented columns are read alike by every reader (the columns counted).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from centaur_tui.cli.main import cli
from centaur_tui.formats.problems import Problems
from centaur_tui.formats.reader import Limits, loads, read_records
from centaur_tui.services.judging import PacketJudging
from tests.support.experts import judged_session
from tests.test_import_winners import GOOD, _csv
from tests.test_import_winners import _session as winners_session
from tests.test_packet_trust import edit, export, judge
from tests.test_packet_trust import table_hash as packet_tables

TABLES = ("judgments", "scores", "outputs", "comparisons", "assistance_texts", "app_experts")
"""What an import could change; each is hashed row by row before and after a refused file."""
CEILING_S = 120
"""A generous ceiling for a command that used to hang (a FIFO): a hang fails the test instead of the suite."""


def tables(database: Path) -> dict[str, str]:
    conn = sqlite3.connect(database)
    try:
        return {
            t: hashlib.sha256(repr(conn.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall()).encode()).hexdigest()
            for t in TABLES
        }
    finally:
        conn.close()


def run(*args: object) -> Result:
    """The CLI in a thread, so that a hang fails this test (after CEILING_S) instead of blocking the run."""
    box: list[Result] = []
    worker = threading.Thread(target=lambda: box.append(CliRunner().invoke(cli, [str(a) for a in args])), daemon=True)
    worker.start()
    worker.join(CEILING_S)
    assert box, f"centaur {' '.join(map(str, args))} did not return: it hangs"
    return box[0]


def refused(result: Result, *words: str) -> str:
    out = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output and "\x1b" not in result.output, result.output
    for word in words:
        assert word in out, (word, out)
    return out


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    """A session of imported outputs with four winner-only judgments stored."""
    session = winners_session(tmp_path)
    file = tmp_path / "good.csv"
    file.write_text(_csv(GOOD), encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", str(session), str(file)])
    assert result.exit_code == 0, result.output
    return session


def _line(**fields: object) -> str:
    return json.dumps(fields, ensure_ascii=False)


DEEP = "[" * 100_000 + "]" * 100_000
OUT = '{"task": "counseling", "candidate": "Cirrus", "mode": "augmentation", '

# -- import-outputs ----------------------------------------------------------------------------------

OUTPUTS: dict[str, tuple[str, bytes, tuple[str, ...]]] = {
    "jsonl nested 100,000 deep": ("o.jsonl", (OUT + '"text": ' + DEEP + "}\n").encode(), ("line 1", "nested deeper")),
    "jsonl nested 33 deep": ("o.jsonl", (OUT + '"text": ' + "[" * 33 + "]" * 33 + "}\n").encode(), ("nested deeper",)),
    "jsonl 5,000-digit integer": (
        "o.jsonl",
        (OUT + '"text": "t", "run": ' + "9" * 5000 + "}\n").encode(),
        ("line 1", "5,000 characters"),
    ),
    "jsonl 1e400": ("o.jsonl", (OUT + '"text": "t", "run": 1e400}\n').encode(), ("1e400 is out of range",)),
    "jsonl NaN": ("o.jsonl", (OUT + '"text": "t", "run": NaN}\n').encode(), ("NaN is not a number",)),
    "jsonl -Infinity": ("o.jsonl", (OUT + '"text": "t", "run": -Infinity}\n').encode(), ("-Infinity is not a number",)),
    "jsonl duplicated key": (
        "o.jsonl",
        (OUT + '"text": "a", "text": "b"}\n').encode(),
        ("line 1", "'text' appears twice"),
    ),
    "jsonl duplicated nested key": (
        "o.jsonl",
        (OUT + '"text": "a", "extra": {"k": 1, "k": 2}}\n').encode(),
        ("line 1", "'k' appears twice"),
    ),
    "jsonl lone high surrogate": (
        "o.jsonl",
        (OUT + '"text": "a\\ud800b"}\n').encode(),
        ("line 1, field text", "lone surrogate (U+D800)"),
    ),
    "jsonl lone low surrogate": ("o.jsonl", (OUT + '"text": "\\udfff"}\n').encode(), ("field text", "U+DFFF")),
    "jsonl surrogate in a key": (
        "o.jsonl",
        (OUT + '"text": "t", "\\ud83d": 1}\n').encode(),
        ("line 1", "lone surrogate"),
    ),
    "jsonl escape sequence": (
        "o.jsonl",
        (OUT + '"text": "title \\u001b]0;pwned\\u0007"}\n').encode(),
        ("field text", "an escape sequence (U+001B)"),
    ),
    "jsonl right-to-left override": (
        "o.jsonl",
        (OUT + '"text": "abc\\u202edef"}\n').encode(),
        ("bidirectional override",),
    ),
    "jsonl NUL": ("o.jsonl", (OUT + '"text": "a\\u0000b"}\n').encode(), ("field text", "control character (U+0000)")),
    "jsonl bad UTF-8 on line 2": (
        "o.jsonl",
        (OUT + '"text": "ok"}\n').encode() + b'{"task": "counseling", "text": "\xff"}\n',
        ("line 2", "not UTF-8"),
    ),
    "jsonl UTF-16": ("o.jsonl", (OUT + '"text": "ok"}\n').encode("utf-16"), ("UTF-16",)),
    "jsonl top-level array": ("o.jsonl", b'["counseling", "Cirrus"]\n', ("line 1", "a JSON list, not an object")),
    "jsonl text of 200,001 characters": (
        "o.jsonl",
        (OUT + '"text": "' + "w" * 200_001 + '"}\n').encode(),
        ("field text", "200,001 characters"),
    ),
    "jsonl escape in the worker": (
        "o.jsonl",
        (OUT + '"text": "t", "worker": "ann\\u001b[2J"}\n').encode(),
        ("field worker", "escape sequence"),
    ),
    "csv NUL in a cell": (
        "o.csv",
        b"task,candidate,text\ncounseling,Boreal 2,a\x00b\n",
        ("line 2, field text", "U+0000"),
    ),
    "csv bare CR in a quoted cell": (
        "o.csv",
        b'task,candidate,text\ncounseling,Boreal 2,"one\rtwo"\n',
        ("field text", "control character (U+000D)"),
    ),
    "csv right-to-left override": (
        "o.csv",
        "task,candidate,text\ncounseling,Boreal 2,abc\u202edef\n".encode(),
        ("field text", "bidirectional override"),
    ),
    "csv bad UTF-8 on line 3": (
        "o.csv",
        b"task,candidate,text\ncounseling,Boreal 2,fine\ncounseling,Cirrus,caf\xe9\n",
        ("line 3: not UTF-8",),
    ),
    "csv 5,000-digit run": (
        "o.csv",
        b"task,candidate,text,run\ncounseling,Boreal 2,t," + b"9" * 5000 + b"\n",
        ("line 2, field run", "..."),
    ),
}


@pytest.mark.parametrize("case", sorted(OUTPUTS))
def test_a_hostile_outputs_file_is_refused_and_nothing_is_written(judged: Path, case: str) -> None:
    name, data, words = OUTPUTS[case]
    file = judged.parent / name
    file.write_bytes(data)
    before = tables(judged.with_suffix(".db"))
    refused(run("import-outputs", judged, file), name, *words)
    assert tables(judged.with_suffix(".db")) == before


# -- winner-only judgments and --task-template -------------------------------------------------------

WIN = '{"task": "counseling", "model_a": "Boreal 2", "model_b": "Zephyrine-7B", "judge": "ann", '

WINNERS: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "conversation nested 100,000 deep": (
        (WIN + '"winner": "tie", "conversation_a": ' + DEEP + "}\n").encode(),
        ("line 1", "nested deeper"),
    ),
    "duplicated winner": (
        (WIN + '"winner": "model_a", "winner": "model_b"}\n').encode(),
        ("line 1", "'winner' appears twice"),
    ),
    "5,000-digit turn": (
        (WIN + '"winner": "tie", "turn": ' + "7" * 5000 + "}\n").encode(),
        ("line 1", "5,000 characters"),
    ),
    "lone surrogate in the rationale": (
        (WIN + '"winner": "tie", "rationale": "\\udc00"}\n').encode(),
        ("field rationale", "lone surrogate"),
    ),
    "escape sequence in the rationale": (
        (WIN + '"winner": "tie", "rationale": "\\u001b]0;title\\u0007"}\n').encode(),
        ("field rationale", "escape sequence"),
    ),
    "escape sequence in the judge": (
        b'{"task": "counseling", "model_a": "Boreal 2", "model_b": "Zephyrine-7B", "winner": "tie", '
        b'"judge": "a\\u001bb"}\n',
        ("field judge", "escape sequence"),
    ),
}


@pytest.mark.parametrize("case", sorted(WINNERS))
def test_a_hostile_winner_file_is_refused_and_nothing_is_written(judged: Path, case: str) -> None:
    data, words = WINNERS[case]
    file = judged.parent / "winners.jsonl"
    file.write_bytes(data)
    before = tables(judged.with_suffix(".db"))
    refused(run("import", judged, file), "winners.jsonl", *words)
    assert tables(judged.with_suffix(".db")) == before


TEMPLATES = {
    "width 10^10": ("{question_id:10000000000}", "takes no format spec"),
    "fill and width": ("mt_{turn:>99999}", "takes no format spec"),
    "conversion": ("{question_id!r}", "takes no format spec or conversion"),
    "attribute": ("{question_id.__class__}", "unknown field"),
    "index": ("{question_id[0]}", "unknown field"),
    "positional": ("{0}", "unknown field"),
    "unclosed": ("mt_{question_id", "not a template"),
    "over 200 characters": ("x" * 201 + "{question_id}", "214 characters, more than 200"),
}


@pytest.mark.parametrize("case", sorted(TEMPLATES))
def test_a_task_template_is_bounded(tmp_path: Path, case: str) -> None:
    template, words = TEMPLATES[case]
    session = winners_session(tmp_path)
    file = tmp_path / "mt.jsonl"
    file.write_text(
        '{"question_id": 81, "model_a": "Boreal 2", "model_b": "Cirrus", "winner": "tie", "judge": "ann"}\n'
    )
    before = tables(session.with_suffix(".db"))
    refused(run("import", session, file, "--task-template", template), "--task-template", words)
    assert tables(session.with_suffix(".db")) == before


# -- paths that are not regular files ----------------------------------------------------------------


def _fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


NOT_FILES: dict[str, tuple[Callable[[Path], list[object]], str]] = {
    "outputs from a FIFO": (lambda s: ["import-outputs", s, _fifo(s.parent, "o.jsonl")], "FIFO"),
    "winner-only from a FIFO": (lambda s: ["import", s, _fifo(s.parent, "w.csv")], "FIFO"),
    "packet import from a FIFO": (lambda s: ["packet", "import", s, _fifo(s.parent, "p.packet")], "not a regular file"),
    "judge a FIFO": (lambda s: ["judge", _fifo(s.parent, "j.packet")], "not a regular file"),
    "outputs from a character device": (lambda s: ["import-outputs", s, Path(os.devnull)], "unknown format"),
    "outputs from a folder": (lambda s: ["import-outputs", s, _folder(s.parent / "dir.csv")], "is a directory"),
}


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
@pytest.mark.parametrize("case", sorted(NOT_FILES))
def test_a_path_that_is_not_a_regular_file_is_refused_at_once(judged: Path, case: str) -> None:
    args, words = NOT_FILES[case]
    before = tables(judged.with_suffix(".db"))
    refused(run(*args(judged)), words)
    assert tables(judged.with_suffix(".db")) == before


def test_a_device_named_like_a_data_file_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "null.jsonl"
    link.symlink_to(os.devnull)
    problems = Problems(str(link))
    with pytest.raises(Exception, match="a character device, not a regular file"):
        list(read_records(link, ("task",), (), problems))


# -- judging packets ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def packet_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return judged_session(tmp_path_factory.mktemp("packets"))


def _result(column: str, value: object) -> Callable[[Path], None]:
    def tamper(packet: Path) -> None:
        edit(
            packet,
            f"UPDATE results SET {column} = ? WHERE token = (SELECT token FROM items WHERE position = 2)",
            params=(value,),
        )

    return tamper


def _scores(raw: str) -> Callable[[Path], None]:
    return _result("scores", raw)


RECURSIVE = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n"

PACKETS: dict[str, tuple[Callable[[Path], None], tuple[str, ...]]] = {
    "rationale of 25 zero-width spaces": (
        _result("rationale", "\u200b" * 25),
        ("field rationale", "0 characters (25 invisible"),
    ),
    "rationale of 25 NULs": (_result("rationale", "\x00" * 25), ("field rationale", "U+0000")),
    "rationale of 25 Hangul fillers": (_result("rationale", "\u3164" * 25), ("field rationale", "0 characters")),
    "rationale of BOMs and joiners": (
        _result("rationale", "ok" + "\ufeff\u200d" * 12),
        ("field rationale", "2 characters"),
    ),
    "rationale with an OSC title": (
        _result("rationale", "Option one is better \x1b]0;owned\x07 by far."),
        ("field rationale", "escape sequence"),
    ),
    "rationale with U+202E": (
        _result("rationale", "Option one is better \u202e by far, really."),
        ("bidirectional override",),
    ),
    "rationale of 50 MB": (
        _result("rationale", "r" * 50_000_000),
        ("field rationale", "50,000,000 characters, more than 20,000"),
    ),
    "seconds 1e308": (_result("seconds", 1e308), ("field seconds", "out of range")),
    "seconds -1e308": (_result("seconds", -1e308), ("field seconds", "out of range")),
    "active seconds 1e308": (_result("active_seconds", 1e308), ("field active_seconds", "out of range")),
    "scores with a duplicated key": (_scores('{"a": [1, 2], "a": [3, 4]}'), ("field scores", "'a' appears twice")),
    "scores nested 100,000 deep": (_scores(DEEP), ("field scores", "nested deeper")),
    "scores with a 5,000-digit score": (
        _scores('{"x": [' + "1" * 5000 + ", 2]}"),
        ("field scores", "5,000 characters"),
    ),
    "scores with NaN": (_scores('{"x": [NaN, 2]}'), ("field scores", "NaN")),
    "results as an endless view": (
        lambda p: edit(p, "ALTER TABLE results RENAME TO old_results", f"CREATE VIEW results AS {RECURSIVE}"),
        ("not a readable judging packet", "'results' is a view"),
    ),
    "a view beside the tables": (lambda p: edit(p, f"CREATE VIEW spin AS {RECURSIVE}"), ("holds view 'spin'",)),
    "a trigger on results": (
        lambda p: edit(p, "CREATE TRIGGER t AFTER UPDATE ON results BEGIN DELETE FROM items; END"),
        ("holds trigger 't'",),
    ),
}


@pytest.mark.parametrize("case", sorted(PACKETS))
def test_a_hostile_packet_result_is_refused_and_nothing_is_written(
    packet_session: Path, tmp_path: Path, case: str
) -> None:
    tamper, words = PACKETS[case]
    database = packet_session.with_suffix(".db")
    packet = tmp_path / "bob.packet"
    export(packet_session, "bob", packet, n=3)
    judge(packet, results=3)
    tamper(packet)
    before = packet_tables(database)
    refused(run("packet", "import", packet_session, packet), "bob.packet", *words)
    assert packet_tables(database) == before


def test_the_judge_sees_a_tampered_packet_cleaned(packet_session: Path, tmp_path: Path) -> None:
    """Names, titles, rubric texts and guidelines reach the terminal without escape sequences (issue 23 item 6)."""
    packet = export(packet_session, "ann", tmp_path / "ann.packet", n=2)
    osc = "\x1b]0;pwned\x07"
    conn = sqlite3.connect(packet)
    rubric = json.loads(conn.execute("SELECT rubric FROM items WHERE position = 1").fetchone()[0])
    rubric["task_dimensions"][0]["name"] = f"Accuracy{osc}"
    with conn:
        conn.execute("UPDATE packet_meta SET value = ? WHERE key = 'expert_name'", (f"Ann{osc}\u202e",))
        conn.execute("INSERT OR REPLACE INTO packet_meta (key, value) VALUES ('guidelines', ?)", (f"Be fair{osc}",))
        conn.execute(
            "UPDATE items SET task_title = ?, deliverable = ?, rubric = ? WHERE position = 1",
            (f"Title{osc}\r\nsecond line", "Memo\x1b[2J", json.dumps(rubric)),
        )
    conn.close()
    source = PacketJudging(packet)
    try:
        key = source.queue()[0].key
        item = source.item(key)
        shown = [
            source.expert_name,
            source.guidelines or "",
            source.queue()[0].task_title,
            item.task_title,
            item.deliverable,
            item.rubric.all[0].name,
        ]
    finally:
        source.close()
    for text in shown:
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text and "\r" not in text, repr(text)
    assert source.expert_name.startswith("Ann") and item.task_title == "Title second line"


# -- what every reader accepts alike -----------------------------------------------------------------

GOOD_OUTPUTS = 'task,candidate,text,model\ncounseling,Boreal 2,"Reply number 1 to Sam.",x\n'


@pytest.mark.parametrize(
    "case",
    ["csv CRLF", "csv BOM", "csv BOM and CRLF", "jsonl CRLF", "jsonl BOM"],
)
def test_crlf_a_bom_and_extra_columns_are_read_alike(judged: Path, case: str) -> None:
    if case.startswith("csv"):
        text = GOOD_OUTPUTS
        file = judged.parent / "again.csv"
    else:
        text = (
            json.dumps({"task": "counseling", "candidate": "Boreal 2", "text": "Reply number 1 to Sam.", "model": "x"})
            + "\n"
        )
        file = judged.parent / "again.jsonl"
    data = text.replace("\n", "\r\n") if "CRLF" in case else text
    file.write_bytes((b"\xef\xbb\xbf" if "BOM" in case else b"") + data.encode())
    before = tables(judged.with_suffix(".db"))
    result = run("import-outputs", judged, file)
    assert result.exit_code == 0, result.output
    assert "1 output(s) read; 0 stored" in result.output and "1 already stored identically" in result.output
    assert "Ignored 1 column(s) not in the format: model (1 record(s))" in result.output
    assert tables(judged.with_suffix(".db")) == before


def test_a_winner_file_with_crlf_and_a_bom_is_read(judged: Path) -> None:
    file = judged.parent / "winners.csv"
    file.write_bytes(b"\xef\xbb\xbf" + _csv(GOOD).replace("\n", "\r\n").encode())
    result = run("import", judged, file)
    assert result.exit_code == 0, result.output
    assert "0 stored, 4 already stored identically" in result.output


def test_a_crlf_cell_keeps_its_line_breaks_as_lf(tmp_path: Path) -> None:
    file = tmp_path / "o.csv"
    file.write_bytes(b'task,candidate,text\r\ncounseling,Boreal 2,"one\r\ntwo"\r\n')
    records = list(read_records(file, ("task", "candidate", "text"), (), Problems(str(file))))
    assert [r.values["text"] for r in records] == ["one\ntwo"]


# -- the reader's limits, directly -------------------------------------------------------------------

SMALL = Limits(record_bytes=64, depth=3, number_chars=5)


@pytest.mark.parametrize(
    ("case", "text", "message"),
    [
        ("depth 4 of 3", "[[[[1]]]]", "nested deeper than 3"),
        ("number of 6 characters", "123456", "6 characters"),
        ("float of 6 characters", "1.2345", "6 characters"),
        ("key twice, deep", '{"a": {"b": 1, "b": 1}}', "'b' appears twice"),
        ("not JSON", "{'a': 1}", "not JSON"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 30 else "",
)
def test_json_limits_are_clear_errors(case: str, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        loads(text, SMALL)


def test_a_jsonl_line_over_the_record_limit_is_a_problem_of_its_line(tmp_path: Path) -> None:
    file = tmp_path / "big.jsonl"
    file.write_bytes(b'{"task": "' + b"x" * 200 + b'"}\n{"task": "ok"}\n')
    problems = Problems(str(file))
    records = list(read_records(file, ("task",), (), problems, limits=SMALL))
    assert [r.line for r in records] == [2]
    assert problems.items == [f"{file} line 1: longer than 64 bytes (one record per line)"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
@pytest.mark.parametrize("name", ["judgments.csv", "scores.csv"])
def test_an_export_folder_holding_a_fifo_is_refused_at_once(packet_session: Path, tmp_path: Path, name: str) -> None:
    folder = tmp_path / "export"
    exported = CliRunner().invoke(cli, ["export", str(packet_session), "--out", str(folder)])
    assert exported.exit_code == 0, exported.output
    (folder / name).unlink()
    os.mkfifo(folder / name)
    before = packet_tables(packet_session.with_suffix(".db"))
    refused(run("import", packet_session, folder), name, "a FIFO (named pipe), not a regular file")
    assert packet_tables(packet_session.with_suffix(".db")) == before


def test_every_statement_on_a_packet_has_a_time_limit(
    packet_session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The progress handler interrupts a statement past READ_LIMIT_S (set to 0 here: every read is over it)."""
    import centaur_tui.store.packets as packets

    packet = export(packet_session, "bob", tmp_path / "bob.packet", n=1)
    monkeypatch.setattr(packets, "READ_LIMIT_S", 0.0)
    monkeypatch.setattr(packets, "PROGRESS_STEPS", 1)
    before = packet_tables(packet_session.with_suffix(".db"))
    refused(run("packet", "import", packet_session, packet), "bob.packet", "took longer than 0 s")
    assert packet_tables(packet_session.with_suffix(".db")) == before


@pytest.mark.parametrize(
    ("case", "rationale", "lacks"),
    [
        ("25 zero-width spaces", "\u200b" * 25, "rationale (0/20 characters)"),
        ("NULs around a word", "\x00" * 20 + "fine", "rationale (4/20 characters)"),
        ("over 20,000 characters", "r" * 20_001, "a shorter rationale (20,001/20,000 characters)"),
    ],
    ids=["zero-width", "nul", "too-long"],
)
def test_the_app_asks_for_the_rationale_import_would_accept(case: str, rationale: str, lacks: str) -> None:
    """The seat's completeness check counts visible characters and caps the length as packet import does."""
    from centaur_tui.domain.blinding import Draft, missing
    from centaur_tui.domain.task import Rubric

    draft = Draft(winner="option_1", rationale=rationale)
    assert lacks in missing(draft, Rubric(task_dimensions=(), general_dimensions=()), False, 20)
