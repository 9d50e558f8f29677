"""Generated blinding test: every name, every spelling kind, as an expert sees it (issue 23, item 2).

For every built-in vendor name and every identity name of a session, each spelling kind below
(Markdown-split, code-split, link-split, strike-split, HTML-tag-split, character references,
backslash, zero-width joiner, case, Cyrillic look-alikes, full width, traditional Han) is
masked: in the masked source, in the text as a Markdown renderer shows it, on the judging
screen (Pilot, reading the rendered lines) and in a judging packet exported through the CLI.
A name counts as visible when its folded letters (case, look-alikes, invisible characters,
separators and traditional forms folded: domain/skeleton.py) appear in what is shown.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.blinding import DEFAULT_VENDOR_TERMS, MASK, blinding_for, session_terms
from centaur_tui.domain.hanzi import SIMPLIFIED, TRADITIONAL
from centaur_tui.domain.skeleton import SEPARATORS, fold
from centaur_tui.ui.widgets.document import DocumentView
from tests.support.experts import judged_session
from tests.support.judging import assign, settle
from tests.support.sessions import small_session_toml
from tests.test_ui_judging import open_judging

_CJK = re.compile("[\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_CYRILLIC = str.maketrans("aceopxyACEHKMOPTXB", "асеорхуАСЕНКМОРТХВ")
_TRADITIONAL = {s: t for t, s in zip(TRADITIONAL, SIMPLIFIED, strict=True) if t != s}


def _halves(name: str) -> tuple[str, str]:
    cut = max(1, len(name) // 2)
    return name[:cut], name[cut:]


def _split(template: str) -> Callable[[str], str]:
    def spell(name: str) -> str:
        a, b = _halves(name)
        return template.format(a=a, b=b)

    return spell


def _entity_dec(name: str) -> str:
    return f"&#{ord(name[0])};{name[1:]}"


def _entity_hex(name: str) -> str:
    return "".join(f"&#x{ord(ch):X};" if i % 2 == 0 else ch for i, ch in enumerate(name))


def _traditional(name: str) -> str:
    return "".join(_TRADITIONAL.get(ch, ch) for ch in name)


def _full_width(name: str) -> str:
    return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in name)


SPELLINGS: dict[str, Callable[[str], str]] = {
    "bold-split": _split("**{a}**{b}"),
    "italic-split": _split("_{a}_{b}"),
    "code-split": _split("`{a}`{b}"),
    "link-split": _split("[{a}](https://example.com/x){b}"),
    "strike-split": _split("~~{a}~~{b}"),
    "html-split": _split("{a}<i></i>{b}"),
    "comment-split": _split("{a}<!-- x -->{b}"),
    "backslash": _split("{a}\\{b}"),
    "zero-width-joiner": _split("{a}\u200d{b}"),
    "entity-decimal": _entity_dec,
    "entity-hex": _entity_hex,
    "upper": str.upper,
    "lower": str.lower,
    "swapcase": str.swapcase,
    "cyrillic-look-alikes": lambda name: name.translate(_CYRILLIC),
    "full-width": _full_width,
    "traditional-han": _traditional,
    "upper-cyrillic-look-alikes": lambda name: name.upper().translate(_CYRILLIC),
}
"""Spelling kinds: each turns a name into what a text may hold while a reader still reads the name."""


def _key(text: str) -> str:
    return "".join(ch for ch in fold(text) if ch not in SEPARATORS)


def _names(session_names: list[str]) -> list[str]:
    names = {*DEFAULT_VENDOR_TERMS, *session_names}
    return sorted(n for n in names if len(_key(n)) >= 2)


def _spelled(names: list[str]) -> list[tuple[str, str, str]]:
    """(kind, name, spelling) for every name and kind whose spelling differs from the name."""
    out = []
    for kind, spell in SPELLINGS.items():
        for name in names:
            spelled = spell(name)
            if spelled != name:
                out.append((kind, name, spelled))
    return out


_MD = MarkdownIt("commonmark")


def rendered(text: str) -> str:
    """What a Markdown renderer shows of a text: inline text, code and raw HTML (the screen shows it as text)."""
    parts: list[str] = []
    for token in _MD.parse(text):
        for child in token.children or []:
            if child.type in ("text", "code_inline", "html_inline"):
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append("\n")
        if token.type in ("code_block", "fence", "html_block"):
            parts.append(token.content)
        parts.append("\n")
    return "".join(parts)


class Shown:
    """A text as shown, folded once, asked for many names (folding 80 kB for each of 180 names took minutes)."""

    def __init__(self, text: str) -> None:
        self.folded = fold(text)
        self.keep = [i for i, ch in enumerate(self.folded) if ch not in SEPARATORS]
        self.stripped = "".join(self.folded[i] for i in self.keep)

    def reads(self, name: str) -> bool:
        """Whether a name can be read: its folded letters, separators between them ignored, as a word.

        A Latin, Greek or Cyrillic name must start and end at a word boundary ("East" is not read
        in "at least"); a Han, kana or Hangul name is read anywhere.
        """
        key, folded = _key(name), self.folded
        start = self.stripped.find(key)
        while start >= 0:
            if _CJK.match(key):
                return True
            first, last = self.keep[start], self.keep[start + len(key) - 1]
            before = folded[first - 1] if first else " "
            after = folded[last + 1] if last + 1 < len(folded) else " "
            if not before.isalpha() and not after.isalpha():
                return True
            start = self.stripped.find(key, start + 1)
        return False


def visible(name: str, shown: str) -> bool:
    return Shown(shown).reads(name)


def _line(spelled: str) -> str:
    return f"Report: {spelled} wrote it."


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("rendered")
    path = folder / "small.toml"
    path.write_text(small_session_toml(tasks=("counseling",)), encoding="utf-8")
    return load_session(path).session


@pytest.mark.parametrize("kind", list(SPELLINGS))
def test_every_name_spelled_this_way_is_masked_in_the_source_and_as_rendered(kind: str, small) -> None:
    blinding = blinding_for(small)
    names = _names(session_terms(small))
    leaks = []
    tried = 0
    for k, name, spelled in _spelled(names):
        if k != kind:
            continue
        tried += 1
        masked, _log = blinding.mask(_line(spelled))
        if MASK not in masked or visible(name, masked) or visible(name, rendered(masked)):
            leaks.append((name, spelled, masked))
    assert tried > 0
    assert leaks == [], f"{len(leaks)} of {tried} {kind} spellings leak: {leaks[:10]}"


def test_the_generated_cases_cover_every_built_in_and_session_name(small) -> None:
    names = _names(session_terms(small))
    cases = _spelled(names)
    assert {n for _k, n, _s in cases} == set(names)
    assert len(cases) > 1500  # about 180 names x 18 kinds, less the kinds that leave a name as it is
    spelled = {s for _k, _n, s in cases}
    assert {"**G**PT", "`Cla`ude", "[Cla](https://example.com/x)ude", "&#67;laude", "Cla\\ude", "КЛОД"} <= spelled


@pytest.mark.parametrize(
    "text",
    [
        "**GP**T-4.1",
        "`Cla`ude",
        "[Cl](x)aude",
        "&#67;laude",
        "Cl\\aude",
        "C\u200dlaude",
        "Сlaude",
        "克劳德",
        "克勞德",
        "通義千問",
        "ДЖЕМИНИ",
        "ЧАТГПТ",
        "ГИГАЧАТ",
    ],
)
def test_the_issues_examples_are_masked(text: str, small) -> None:
    masked, _ = blinding_for(small).mask(f"Written with {text} today.")
    assert masked.startswith("Written with ") and masked.endswith(" today.") and MASK in masked
    shown = rendered(masked)
    assert "Claude" not in shown and "GPT" not in shown and not visible(text, shown)


def test_ordinary_markdown_is_not_masked() -> None:
    """False positives: markup joining or decoding ordinary words must not make a name."""
    blinding = blinding_for(load_session(Path(__file__).resolve().parents[1] / "sessions" / "demo.toml").session)
    ordinary = (
        "**Grocery** list: _apples_, `pears` and ~~plums~~; see [the plan](https://example.com/plan).\n"
        "Income &amp; expenses &lt; budget; caf&eacute; receipts; a\\*b; <b>bold</b> <!-- note -->\n"
        "An alpaca at the zoo; the zodiac sign; Alice and Bob; a *clau*se; *gem* in*i*tial; the *co*de *pilot* study.\n"
        "КОД, МОДЕЛЬ, ОТЧЁТ; 報告書與預算; 计划与预算。\n"
    )
    masked, log = blinding.mask(ordinary)
    assert masked == ordinary and log == []


def _blob(names: list[str]) -> str:
    return "\n\n".join(_line(s) for _k, _n, s in _spelled(names))


def _stored_names(path: Path) -> list[str]:
    return _names(session_terms(load_session(path).session))


@pytest.mark.slow
async def test_the_judging_screen_shows_no_name_in_any_spelling(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    names = _stored_names(path)
    blob = _blob(names)
    study = load_session(path)
    with sqlite3.connect(study.database) as conn:
        conn.execute("UPDATE outputs SET text = ?", (blob,))
    app, running = open_judging(path, size=(160, 50))
    async with running as pilot:
        screen = await settle(pilot)
        shown = [v.rendered_text for v in screen.query(DocumentView)]
        assert len(shown) == 2 and all(MASK in s for s in shown)
        screen_text = app.screen_text()
    for text in [*shown, screen_text]:
        seen = Shown(text)
        assert [n for n in names if seen.reads(n)] == []
    # Every planted line shows a mask where its name stood.
    assert sum(s.count(MASK) for s in shown) >= 2 * len(_spelled(names))


def test_a_judging_packet_holds_no_name_in_any_spelling(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    names = _stored_names(path)
    blob = _blob(names)
    study = load_session(path)
    with sqlite3.connect(study.database) as conn:
        conn.execute("UPDATE outputs SET text = ?", (blob,))
    runner = CliRunner()
    assigned = runner.invoke(cli, ["assign", str(path), "--expert", "bob", "--n", "2"])
    assert assigned.exit_code == 0, assigned.output
    packet = tmp_path / "bob.packet"
    exported = runner.invoke(cli, ["packet", "export", str(path), "--expert", "bob", "--out", str(packet)])
    assert exported.exit_code == 0, exported.output
    with sqlite3.connect(packet) as conn:
        rows = conn.execute("SELECT task_title, task_prompt, deliverable, option_1, option_2 FROM items").fetchall()
    assert len(rows) == 2
    for row in rows:
        for text in row:
            for seen in (Shown(text), Shown(rendered(text))):
                assert [n for n in names if seen.reads(n)] == []
        assert row[3].count(MASK) >= len(_spelled(names))


def test_the_vendored_han_table_is_what_opencc_gives() -> None:
    """domain/hanzi.py is generated (the domain layer takes no library): regenerate when OpenCC changes."""
    pytest.importorskip("opencc")
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[1] / "scripts" / "gen_hanzi_table.py"
    proc = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
