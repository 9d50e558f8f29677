"""Text tables wider than the page split into column blocks, each repeating the columns that name a row."""

from __future__ import annotations

import re

from centaur_tui.report.render import Section, _text_table


def _wide(key_columns: int = 1) -> Section:
    s = Section("wide", key_columns=key_columns)
    s.headers = ["judge", "flaw", *(f"number {i}" for i in range(12))]
    s.align = "ll" + "r" * 12
    s.rows = [
        ["J1", "wrong number", *(f"{i}.000" for i in range(12))],
        ["J2", "dropped", *("x" * 8 for _ in range(12))],
    ]
    return s


def _blocks(lines: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for line in lines:
        if line:
            out[-1].append(line)
        else:
            out.append([])
    return out


def test_each_block_repeats_the_key_columns_and_every_cell_is_shown_once() -> None:
    lines = _text_table(_wide(key_columns=2), width=60)
    blocks = _blocks(lines)
    assert len(blocks) >= 3
    for block in blocks:
        assert all(len(line) <= 60 for line in block)
        header, _rule, first, second = block
        assert header.startswith("judge  flaw")
        assert first.startswith("J1     wrong number") and second.startswith("J2     dropped")
    cells = [cell for line in lines for cell in re.split(r"\s{2,}", line.strip())]
    for i in range(12):
        assert cells.count(f"number {i}") == 1 and cells.count(f"{i}.000") == 1


def test_by_default_only_the_first_column_is_repeated() -> None:
    blocks = _blocks(_text_table(_wide(), width=60))
    assert len(blocks) >= 3
    assert all(block[2].startswith("J1") for block in blocks)
    assert "wrong number" in blocks[0][2] and all("wrong number" not in b[2] for b in blocks[1:])


def test_key_columns_wider_than_the_page_still_show_every_column() -> None:
    s = _wide(key_columns=2)
    s.rows[0][1] = "a flaw named at great length " * 3
    lines = _text_table(s, width=40)
    shown = " ".join(lines)
    assert all(f"number {i}" in shown for i in range(12))


def test_key_columns_above_the_table_width_leave_one_column_to_show() -> None:
    s = Section("narrow", key_columns=9, headers=["a", "b"], rows=[["1", "2"]])
    assert _text_table(s, width=80) == ["a  b", "-  -", "1  2"]
