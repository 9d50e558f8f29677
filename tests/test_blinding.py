"""Blinding against hostile spellings: folded text, whole variants masked, no false positives, true counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from centaur_tui.catalog import load_session
from centaur_tui.domain.blinding import MASK, Blinding, blinding_for
from centaur_tui.domain.skeleton import fold, fold_with_origin

from .conftest import small_session_toml

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = {name: load_session(ROOT / "sessions" / f"{name}.toml").session for name in ("demo", "paper")}

_CYRILLIC = str.maketrans("aceopxyACEHKMOPTXBi", "асеорхуАСЕНКМОРТХВі")
_SEPS = "-./_ "


def _between(sep: str):
    return lambda s: sep.join(s)


def _seps(new: str):
    return lambda s: "".join(new if ch in _SEPS else ch for ch in s)


def _full_width(s: str) -> str:
    return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else "\u3000" if ch == " " else ch for ch in s)


def _accents(s: str) -> str:
    return "".join(ch + "\u0301" if ch in "aeiouAEIOU" else ch for ch in s)


def _alternate(s: str) -> str:
    return "".join(ch.upper() if i % 2 else ch.lower() for i, ch in enumerate(s))


def _line_break(s: str) -> str:
    k = max(1, len(s) // 2)
    return s[:k] + "-\n" + s[k:]


VARIANTS = {
    "exact": lambda s: s,
    "upper": str.upper,
    "lower": str.lower,
    "alternating case": _alternate,
    "non-breaking hyphen": _seps("\u2011"),
    "en dash": _seps("\u2013"),
    "em dash": _seps("\u2014"),
    "minus sign": _seps("\u2212"),
    "spaces": _seps(" "),
    "double spaces": _seps("  "),
    "no-break spaces": _seps("\u00a0"),
    "joined": _seps(""),
    "zero-width space inside": _between("\u200b"),
    "zero-width joiner inside": _between("\u200d"),
    "soft hyphen inside": _between("\u00ad"),
    "word joiner inside": _between("\u2060"),
    "variation selector inside": _between("\ufe0f"),
    "full width": _full_width,
    "cyrillic look-alikes": lambda s: s.translate(_CYRILLIC),
    "combining accents": _accents,
    "line break": _line_break,
    "full width with zero-width spaces": lambda s: "\u200b".join(_full_width(s)),
}


def _identities(session) -> list[str]:
    out: set[str] = set()
    for e in [*session.models, session.worker, *session.judges]:
        out.update((e.name, e.family, e.model.removeprefix("simulated/")))
    return sorted(out)


CASES = [
    (name, ident, kind) for name, session in SESSIONS.items() for ident in _identities(session) for kind in VARIANTS
]


def test_every_identity_of_demo_and_paper_has_at_least_ten_variants() -> None:
    assert len(VARIANTS) >= 10
    assert {ident for _, ident, _ in CASES} >= {"GPT-4.1", "o4-mini", "Anthropic", "together_ai/openai/gpt-oss-120b"}


@pytest.mark.parametrize(("session_name", "identity", "kind"), CASES)
def test_every_variant_of_every_session_identity_is_masked_whole(session_name: str, identity: str, kind: str) -> None:
    blinding = _blinding(session_name)
    variant = VARIANTS[kind](identity)
    masked, log = blinding.mask(f"Report by {variant} for the client.")
    assert masked == f"Report by {MASK} for the client.", (variant, masked)
    assert sum(m.occurrences for m in log) == masked.count(MASK) == 1


_CACHE: dict[str, Blinding] = {}


def _blinding(session_name: str) -> Blinding:
    if session_name not in _CACHE:
        _CACHE[session_name] = blinding_for(SESSIONS[session_name])
    return _CACHE[session_name]


@pytest.fixture(scope="module")
def defaults(tmp_path_factory: pytest.TempPathFactory) -> Blinding:
    """The blinding of a session whose own names (Alpha, North...) are none of the vendors'."""
    path = tmp_path_factory.mktemp("blinding") / "small.toml"
    path.write_text(small_session_toml(), encoding="utf-8")
    return blinding_for(load_session(path).session)


SEEN_LEAKS = [
    # (text, what the expert must see): the spellings that got through before, and their kin.
    ("Open AI wrote this.", f"{MASK} wrote this."),
    ("Open  AI wrote this.", f"{MASK} wrote this."),
    ("Written by Opus.", f"Written by {MASK}."),
    ("Sonnet here.", f"{MASK} here."),
    ("Deep Seek says", f"{MASK} says"),
    ("Chat GPT says", f"{MASK} says"),
    ("o4-mini says", f"{MASK} says"),
    ("o4\u2011mini says", f"{MASK} says"),
    ("GPT\u20114.1 says", f"{MASK} says"),
    ("GPT\u20134.1 says", f"{MASK} says"),
    ("GPT\u20144.1 says", f"{MASK} says"),
    ("G\u200bPT-4.1 says", f"{MASK} says"),
    ("GPT-\u200b4.1 says", f"{MASK} says"),
    ("G\u200dP\u00adT-4.1 says", f"{MASK} says"),
    ("ＧＰＴ－４．１ says", f"{MASK} says"),
    ("GРТ-4.1 says", f"{MASK} says"),  # Cyrillic Р and Т
    ("Сlaude says", f"{MASK} says"),  # Cyrillic С
    ("cLaUdE says", f"{MASK} says"),
    ("Clau-\nde 3 Haiku says", f"{MASK} says"),
    ("GPT-\n4.1 says", f"{MASK} says"),
    ("the GPT-4.1 Turbo model", f"the {MASK} model"),
    ("Gemini 2.5 Flash-Lite wrote", f"{MASK} wrote"),
    ("Meta Llama 3.1 70B Instruct wrote", f"{MASK} wrote"),
    ("Claude 3 Haiku wrote", f"{MASK} wrote"),
    ("OpenAI's o3 wrote", f"{MASK} wrote"),
    ("DeepSeek\u2011R1\u20110528 wrote", f"{MASK} wrote"),
    ("Qwen2.5-Coder-32B-Instruct wrote", f"{MASK} wrote"),
    ("Yi-34B wrote", f"{MASK} wrote"),
    ("Phi-3-mini wrote", f"{MASK} wrote"),
    ("GLM-4.5-Air wrote", f"{MASK} wrote"),
    ("Command R+ by Cohere", f"{MASK} by {MASK}"),
    ("Kimi K2 wrote", f"{MASK} wrote"),
    ("我们使用通义千问来写这份报告。", f"我们使用{MASK}来写这份报告。"),
    ("由阿里巴巴开发的模型", f"由{MASK}开发的模型"),
    ("文心一言和豆包1.5", f"{MASK}和{MASK}"),
    ("一言以蔽之，海纳百川，豆包很好吃。", "一言以蔽之，海纳百川，豆包很好吃。"),
    ("我用GPT-4写的", f"我用{MASK}写的"),
    ("Я — ЧатГПТ.", f"Я — {MASK}."),
    ("GΡΤ-4 says", f"{MASK} says"),  # Greek capital Rho and Tau
    ("CIaude says", f"{MASK} says"),  # capital I for l
    ("𝐆𝐏𝐓-4 says", f"{MASK} says"),  # mathematical bold
    ("ⒼⓅⓉ says", f"{MASK} says"),  # circled letters
    ("G\u202ePT says", f"{MASK} says"),  # right-to-left override inside
    ("G\u3164PT says", f"{MASK} says"),  # Hangul filler, renders as nothing
    ("G.P.T. says", f"{MASK}. says"),
    ("Anthro-\npic says", f"{MASK} says"),
    ("Llama\u20113.1\u20118B\u2011Instruct says", f"{MASK} says"),
    ("As an AI language model, I cannot", f"{MASK}, I cannot"),
    ("I\u2019m an AI.", f"{MASK}."),
]


@pytest.mark.parametrize(("text", "expected"), SEEN_LEAKS)
def test_hostile_spellings_of_vendor_names_are_masked_whole(defaults: Blinding, text: str, expected: str) -> None:
    masked, log = defaults.mask(text)
    assert masked == expected
    assert sum(m.occurrences for m in log) == masked.count(MASK)


ORDINARY = """\
Yield on the bond was 4.1 percent. Metallica played while the meta-analysis ran. Philosophy of
tax: open an account, seek deep advice, and command the attention of your adviser. A haiku is a
short poem. The Phi coefficient was 0.3 and phi was about 1.618. We fit a GLM regression and a
minimax strategy. Nova Scotia, the Amazon rainforest, a falcon and a moonshot goal. Schedule C
lists income; keep receipts for every deduction, and file Form 1040 by April 15. The counsellor
listens, reflects feelings, and asks: what would help you most this week? Travel by train from
Lisbon to Porto; the menu has a gem of a salad. Claudette and Grokking are not names we mask.
Milestone 3: the plain reading of the brief, written by hand. Geminids light the sky in December.
"""


def test_ordinary_text_is_left_alone(defaults: Blinding) -> None:
    masked, log = defaults.mask(ORDINARY)
    assert masked == ORDINARY and log == []


def test_ordinary_text_is_left_alone_with_the_demo_sessions_names() -> None:
    masked, log = _blinding("demo").mask(ORDINARY)
    assert masked == ORDINARY and log == []


def test_common_words_count_only_next_to_a_version_or_a_name(defaults: Blinding) -> None:
    assert defaults.mask("Google Maps and Meta")[0] == "Google Maps and Meta"
    assert defaults.mask("Google Gemini and Meta's Llama 3")[0] == f"{MASK} and {MASK}"
    # A session that names Google as a family masks it everywhere.
    assert _blinding("demo").mask("Google Maps")[0] == f"{MASK} Maps"


def test_parts_of_session_names_are_weak(write_session) -> None:
    text = small_session_toml().replace('name = "Alpha"', 'name = "Acme-Zephyr-7B"')
    blinding = blinding_for(load_session(write_session(text)).session)
    masked, _ = blinding.mask("Acme Zephyr 7B and Zephyr 8B wrote; a zephyr blew; the judge and the worker agreed.")
    # "judge" (of judge-north) and "worker" parts are everyday words: only the whole names mask.
    assert masked == f"{MASK} and {MASK} wrote; a zephyr blew; the judge and the {MASK} agreed."


def test_blinding_file_exceptions_stay_visible() -> None:
    blinding = blinding_for(SESSIONS["demo"], "Acme Labs\n!Google Maps\n")
    masked, log = blinding.mask("Acme Labs: use Google Maps, not Google.")
    assert masked == f"{MASK}: use Google Maps, not {MASK}."
    assert {(m.term, m.occurrences) for m in log} == {("Acme Labs", 1), ("Google", 1)}


def test_a_session_naming_its_model_in_another_script(write_session) -> None:
    text = (
        small_session_toml()
        .replace('name = "Alpha"', 'name = "通义千问"')
        .replace(
            'model = "simulated/alpha"\n        family = "North"',
            'model = "simulated/alpha"\n        family = "阿里巴巴"',
        )
    )
    blinding = blinding_for(load_session(write_session(text)).session)
    output = "".join(f"第{i}点：通义千问（阿里巴巴）建议先核对收入。\n" for i in range(40))
    masked, log = blinding.mask(output)
    assert "通义" not in masked and "阿里" not in masked
    assert masked.count(MASK) == 80 == sum(m.occurrences for m in log)
    assert masked.startswith(f"第0点：{MASK}（{MASK}）建议先核对收入。")


def test_the_count_equals_the_masks_inserted() -> None:
    blinding = _blinding("paper")
    parts = [VARIANTS[kind](ident) for ident in _identities(SESSIONS["paper"]) for kind in VARIANTS]
    text = " and then ".join(parts)
    masked, log = blinding.mask(text)
    assert masked.count(MASK) == len(parts) == sum(m.occurrences for m in log)
    assert masked.replace(MASK, "").replace(" and then ", "") == ""


def test_folding_maps_back_onto_the_original() -> None:
    assert fold("ＧＰＴ－４．１") == "gpt-4.1"
    assert fold("GРТ\u2014Сlaude") == "gpt-ciaude"  # l and I meet at i
    folded, origin = fold_with_origin("a\u200bb\u00adc")
    assert folded == "abc" and origin == [0, 2, 4]
    assert fold_with_origin("plain ascii")[1] is None


def test_masking_a_50_kb_deliverable_masks_every_mention() -> None:
    # Its speed (about 21 ms here, 128 ms before folding) is bench/blinding.py's to measure:
    # a test timing it failed on a busy machine and told nothing (issue 21).
    blinding = _blinding("demo")
    sentence = "The client should report income on Schedule C and keep receipts; GPT\u20114.1 said so. "
    text = sentence * (50_000 // len(sentence))
    masked, log = blinding.mask(text)
    assert masked.count(MASK) == text.count("GPT") == sum(m.occurrences for m in log)
