"""Provides blind expert judging as pure functions: masking, cleaning, seeded order, drafts and what they lack.

An expert never sees a model name, family, candidate id, run number or comparison id. What
reaches the judging screen (or a judging packet) is a `JudgingItem`: the task, its rubric and
the two deliverables, cleaned of control characters and with identity-revealing phrases
masked, in an order drawn per (expert, comparison) from the session seed.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from centaur_tui.domain.plan import digest
from centaur_tui.domain.session import PLAIN, JudgeSpec, ModelSpec, Session, WorkerSpec
from centaur_tui.domain.skeleton import SEPARATORS, fold, fold_char, fold_with_origin
from centaur_tui.domain.task import Rubric
from centaur_tui.domain.untrusted import CONTROL_CHARACTERS, visible_length

MASK = "[masked]"
"""What a masked phrase becomes. Shown literally: model text is rendered with markup off."""

MIN_RATIONALE_CHARS = 20
"""Minimum rationale length for expert judgments, until the session file can set it."""
MAX_RATIONALE_CHARS = 20_000
"""Longest expert rationale (about 3,000 words; the paper asks for a short one): a 50 MB one was stored before."""

DEFAULT_PHRASES: tuple[str, ...] = (
    "as an AI language model",
    "as a large language model",
    "as a language model",
    "as an AI assistant",
    "as an AI model",
    "as an AI",
    "I am an AI",
    "I'm an AI",
    "I am a language model",
    "I'm a language model",
    "I am a large language model",
    "I'm a large language model",
    "large language model developed by",
    "language model trained by",
    "as an AI developed by",
    "I was trained by",
    "I was developed by",
    "my knowledge cutoff",
    "my training data",
)
"""Self-references that reveal a machine author, whatever the model."""

DEFAULT_VENDOR_TERMS: tuple[str, ...] = (
    # Vendors and their products, distinctive enough to mask wherever they stand as a word.
    "OpenAI",
    "ChatGPT",
    "GPT",
    "DALL-E",
    "o1-mini",
    "o1-preview",
    "o1-pro",
    "o3-mini",
    "o3-pro",
    "o4-mini",
    "Anthropic",
    "Claude",
    "Opus",
    "Sonnet",
    "Google DeepMind",
    "DeepMind",
    "Google AI",
    "Gemini",
    "Gemma",
    "Bard",
    "LaMDA",
    "Meta AI",
    "Meta Llama",
    "Llama",
    "Mistral AI",
    "Mistral",
    "Mixtral",
    "Codestral",
    "Pixtral",
    "Ministral",
    "Magistral",
    "DeepSeek",
    "Qwen",
    "QwQ",
    "Tongyi",
    "Qianwen",
    "Alibaba",
    "Alibaba Cloud",
    "xAI",
    "Grok",
    "Cohere",
    "Command R",
    "Command R+",
    "Copilot",
    "Bing Chat",
    "Perplexity",
    "Moonshot AI",
    "Kimi",
    "Zhipu",
    "ChatGLM",
    "Baichuan",
    "ERNIE Bot",
    "Wenxin",
    "Yiyan",
    "Baidu",
    "Doubao",
    "ByteDance",
    "Hunyuan",
    "Tencent",
    "01.AI",
    "InternLM",
    "GigaChat",
    "YandexGPT",
    "Nemotron",
    # The same names in other scripts: matched as substrings (no word boundaries in CJK text).
    "通义千问",
    "通义",
    "千问",
    "阿里巴巴",
    "阿里云",
    "文心一言",
    "文心",
    "百度",
    "字节跳动",
    "豆包大模型",
    "智谱",
    "智谱清言",
    "月之暗面",
    "深度求索",
    "百川智能",
    "零一万物",
    "腾讯",
    "腾讯混元",
    "讯飞星火",
    "チャットGPT",
    "クロード",
    "ジェミニ",
    "챗GPT",
    "클로드",
    "제미나이",
    "ЧатГПТ",
    "Клод",
    "Джемини",
    # Transliterations in common use (press, app stores, Wikipedia in each language). No maintained
    # source lists brand transliterations, so they are curated here; case, traditional/simplified
    # and look-alike variants of every entry are matched by the folding (domain/skeleton.py).
    "克劳德",
    "商汤",
    "米斯特拉尔",
    "格罗克",
    "开放人工智能",
    "オープンAI",
    "オープンエーアイ",
    "アンソロピック",
    "アンスロピック",
    "ディープシーク",
    "ミストラル",
    "ジェミナイ",
    "チャットジーピーティー",
    "コパイロット",
    "クウェン",
    "챗지피티",
    "오픈AI",
    "오픈에이아이",
    "앤트로픽",
    "딥시크",
    "미스트랄",
    "그록",
    "코파일럿",
    "큐웬",
    "제미니",
    "Гемини",
    "Антропик",
    "ОпенЭйАй",
    "Дипсик",
    "Мистраль",
    "Грок",
    "Квен",
    "ГигаЧат",
    "ЯндексГПТ",
    "Клауд",
    "Копайлот",
    "Джемма",
)
"""Vendor and product names masked in every session, at word boundaries (CJK: anywhere)."""

WEAK_VENDOR_TERMS: tuple[str, ...] = (
    "Google",
    "Meta",
    "Microsoft",
    "Phi",
    "Haiku",
    "Yi",
    "GLM",
    "ERNIE",
    "Moonshot",
    "MiniMax",
    "Command",
    "o1",
    "o3",
    "o4",
    "PaLM",
    "Codex",
    "Sora",
    "Nova",
    "Amazon",
    "Granite",
    "Falcon",
    "Jamba",
    "Aya",
    "NVIDIA",
    "IBM",
    # Everyday Chinese words: 一言 "a word", 豆包 a bean bun, 百川 (海纳百川), 混元 a Taoist term.
    "一言",
    "豆包",
    "百川",
    "混元",
    "清言",
    # Transliterations that are everyday words: 双子座 the zodiac sign, 羊驼 and ラマ/라마/Лама a
    # llama, 谷歌 and 微软 the companies, Алиса a first name.
    "双子座",
    "羊驼",
    "谷歌",
    "微软",
    "ラマ",
    "라마",
    "Лама",
    "Алиса",
)
"""Names that are also everyday words or too short to mask alone ("Yield", "meta-analysis", "a
haiku", "Google Maps", "phi = 1.618"). Each is masked only where a version number follows it
("Phi-3", "Yi 1.5", "GLM-4.5") or where it touches another masked name ("Meta Llama", "Claude 3
Haiku", "OpenAI o3"). A session that names one as its own (a family "Google") masks it everywhere."""

MODEL_WORDS: tuple[str, ...] = (
    "mini",
    "nano",
    "micro",
    "pro",
    "plus",
    "max",
    "ultra",
    "turbo",
    "flash",
    "lite",
    "light",
    "large",
    "medium",
    "small",
    "instruct",
    "chat",
    "preview",
    "opus",
    "sonnet",
    "haiku",
    "oss",
    "coder",
    "vision",
    "omni",
    "reasoner",
    "thinking",
    "high",
    "latest",
    "exp",
    "fast",
    "air",
    "moe",
    "ai",
    "bot",
    "cloud",
)
"""Words that continue a model name ("GPT-4 Turbo", "Gemini 2.5 Flash-Lite", "Claude 3 Haiku"):
after a masked name they are masked with it, so no half of the name stays visible."""

_GENERIC_PARTS = frozenset(MODEL_WORDS) | {"model", "open", "base", "code", "next", "one", "two", "new", "deep"}

# In folded text (see domain.skeleton): separators between the characters of a name, any number.
_SEP = r"[ \n.\-]*"
# A Latin, Greek or Cyrillic letter or digit is a word character; CJK, kana and Hangul are not,
# so "用GPT写" still masks GPT.
_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
)
_BEFORE = rf"(?:(?<![^\W_])|(?<=[{_CJK}]))"
# After a name: no letter (a digit may follow: "GPT4", "qwen2.5"), an optional plural s.
_AFTER = rf"s?(?:(?![^\W\d_])|(?=[{_CJK}]))"
_CJK_CHAR = re.compile(f"[{_CJK}]")
_TOKEN_END = rf"(?:(?![^\W_])|(?=[{_CJK}]))"


def _suffix_regex() -> re.Pattern[str]:
    words = sorted({fold(w) for w in MODEL_WORDS}, key=lambda w: (-len(w), w))
    token = rf"(?:[0-9][0-9a-z]*|[a-z][0-9][0-9a-z]*|{'|'.join(map(re.escape, words))}){_TOKEN_END}\+*"
    # Separators inside a suffix: spaces and dashes, a dot only before a digit or letter ("4.1",
    # "Claude.ai"), a line break only after a hyphen ("GPT-\n4.1").
    sep = r"(?:[ \-]|\.(?=[0-9a-z])|(?<=-)\n)*"
    return re.compile(rf"\+*(?:{sep}{token})*")


_SUFFIX = _suffix_regex()
_GAP = re.compile(r"(?:'s)?[ \-]*")  # what may stand between two masked names to make them one


def _chars(term: str) -> str:
    """The folded characters of a term without separators: its key."""
    return "".join(ch for ch in fold(term) if ch not in SEPARATORS)


def _trie_regex(keys: list[str]) -> str:
    """One alternation for all keys, shared prefixes factored out, longer names tried first."""
    trie: dict[str, dict] = {}
    for key in keys:
        node = trie
        for ch in key:
            node = node.setdefault(ch, {})
        node[""] = {}

    def after(node: dict[str, dict]) -> str:
        # Where a name may end, an empty alternative; the boundary test comes once, after the
        # whole alternation (the engine backtracks into it): a boundary class at every one of
        # some 300 name ends made the pattern take 160 ms to compile instead of 20.
        children = [(ch, child) for ch, child in sorted(node.items()) if ch]
        if not children:
            return ""
        body = _SEP + "(?:" + "|".join(re.escape(ch) + after(child) for ch, child in children) + ")"
        return f"(?:{body}|)" if "" in node else body

    latin = {ch: n for ch, n in trie.items() if not _CJK_CHAR.match(ch)}
    cjk = {ch: n for ch, n in trie.items() if _CJK_CHAR.match(ch)}
    parts = []
    if latin:
        parts.append(
            _BEFORE + "(?:" + "|".join(re.escape(ch) + after(n) for ch, n in sorted(latin.items())) + ")" + _AFTER
        )
    if cjk:
        parts.append("(?:" + "|".join(re.escape(ch) + after(n) for ch, n in sorted(cjk.items())) + ")")
    return "|".join(parts)


def clean_text(text: str) -> str:
    """Make untrusted text safe to display: keep newlines and tabs, drop other control characters.

    Carriage returns become newlines (a bare CR would redraw the line over itself); escape
    sequences lose their ESC byte, so they show as inert text instead of reaching the terminal.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return CONTROL_CHARACTERS.sub("", text)


def session_terms(session: Session) -> list[str]:
    """Identity terms of a session: model, worker and judge names, families, model strings."""
    return sorted(_session_terms(session)[0])


def _session_terms(session: Session) -> tuple[set[str], set[str]]:
    """(terms masked alone, terms masked only next to a version or another name) of a session.

    Names, families and model strings are masked alone. Their parts ("Zephyr" of
    "Acme-Zephyr-7B", "o4" of "o4-mini") and litellm provider prefixes ("together_ai",
    "bedrock") are weak: masked next to a version ("Zephyr 7B") or another masked name. Masking
    them alone would hide every "judge" of a text in a session with a judge "judge-north"; the
    parts that identify on their own (Opus, Sonnet, Gemini) are in DEFAULT_VENDOR_TERMS.
    """
    strong: set[str] = set()
    weak: set[str] = set()
    endpoints: list[ModelSpec | WorkerSpec | JudgeSpec] = [*session.models, *session.judges]
    endpoints.extend(session.worker_panel)  # the one [worker], or each of a [[workers]] panel
    for c in session.candidates:
        # An imported candidate is an identity like a model: its name and family are masked alone,
        # the parts of its name next to a version or another name (as a model's are).
        strong.update((c.name, c.family))
        for part in re.split(r"[\s\-_./:]+", c.name):
            folded = fold(part)
            if (folded.isalpha() and len(folded) >= 3 and folded not in _GENERIC_PARTS) or re.fullmatch(
                r"[a-z][0-9]+[a-z]?", folded
            ):
                weak.add(part)
    for e in endpoints:
        strong.update((e.name, e.family))
        path = e.model.split("/")
        if path[0] == "simulated":
            path = path[1:]
        elif len(path) > 1:
            strong.add(e.model)
        for i in range(len(path)):
            strong.add("/".join(path[i:]))
        weak.update(path[:-1])
        for source in (e.name, path[-1]):
            for part in re.split(r"[\s\-_./:]+", source):
                folded = fold(part)
                if (folded.isalpha() and len(folded) >= 3 and folded not in _GENERIC_PARTS) or re.fullmatch(
                    r"[a-z][0-9]+[a-z]?", folded
                ):
                    weak.add(part)
    if session.judging.plain_family:
        strong.add(session.judging.plain_family)
    # `plain` names the unaided condition and is an everyday word; it reveals no model.
    strong = {t for t in strong if t.strip() and t.lower() != PLAIN}
    weak = {t for t in weak if t.strip() and t.lower() != PLAIN and t.lower() != "simulated"} - strong
    return strong, weak


def blinding_problem(name: str, blinding: Blinding) -> str | None:
    """Why an identity (a candidate name) would break blinding: a part of it stays visible after masking."""
    masked, _ = blinding.mask(name)
    left = masked.replace(MASK, "")
    if re.search(r"\w", left):
        return (
            f"{name!r} is not masked in full by the session's blinding (it leaves {masked!r}): a text quoting "
            "it would show experts who wrote it; rename the candidate (at least two letters or digits)"
        )
    return None


def parse_term_list(text: str) -> tuple[list[str], list[str]]:
    """Parse a blinding file: one phrase per line, `# comments`, `!phrase` removes a default.

    Returns:
        (phrases to add, phrases to remove).
    """
    add: list[str] = []
    remove: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        (remove if line.startswith("!") else add).append(line.lstrip("!").strip())
    return add, remove


@dataclass(frozen=True)
class Masking:
    """One phrase masked in one text, with how often it occurred."""

    term: str
    occurrences: int


@dataclass(frozen=True)
class Blinding:
    """A compiled list of identity-revealing phrases; `mask()` replaces each with MASK.

    Matching runs on the folded text (domain.skeleton: compatibility forms, case, invisible
    characters, dashes, spaces and look-alike letters folded) and treats separators between any
    two characters as optional, so "GPT-5-Mini", "gpt 5 mini", "GPT5Mini", "ＧＰＴ‑５ Mini",
    "G\u200bPT-5-Mini" and "Open  AI" all match. A match is mapped back onto the original text and
    extended over the version and model words that follow ("GPT" in "GPT‑4.1 Turbo" masks all
    of it); masked names separated only by separators become one mask ("Meta Llama 3").

    Attributes:
        terms: Phrases masked wherever they stand as a word.
        weak: Phrases masked only before a version number or next to another masked phrase.
        exceptions: Phrases left visible even where a term matches inside them.
    """

    terms: tuple[str, ...]
    weak: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()
    _strong_re: re.Pattern[str] | None = field(default=None, compare=False, repr=False)
    _weak_re: re.Pattern[str] | None = field(default=None, compare=False, repr=False)
    _except_re: re.Pattern[str] | None = field(default=None, compare=False, repr=False)
    _by_key: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(
        cls,
        terms: list[str] | tuple[str, ...],
        weak: list[str] | tuple[str, ...] = (),
        exceptions: list[str] | tuple[str, ...] = (),
    ) -> Blinding:
        """Compile terms (masked alone), weak terms and exceptions; the first spelling of a term names it."""
        by_key: dict[str, str] = {}
        strong_keys: list[str] = []
        weak_keys: list[str] = []
        for group, keys in ((terms, strong_keys), (weak, weak_keys)):
            for term in group:
                key = _chars(term.strip())
                # Two characters at least: a one-letter name would mask every "x" of a text.
                if len(key) < 2 or key in by_key:
                    continue
                by_key[key] = term.strip()
                keys.append(key)
        except_keys = [k for k in (_chars(e) for e in exceptions) if k]

        def compiled(keys: list[str]) -> re.Pattern[str] | None:
            return re.compile(_trie_regex(keys)) if keys else None

        return cls(
            tuple(by_key[k] for k in strong_keys),
            tuple(by_key[k] for k in weak_keys),
            tuple(exceptions),
            compiled(strong_keys),
            compiled(weak_keys),
            compiled(except_keys),
            by_key,
        )

    def _spans(self, folded: str) -> list[tuple[int, int, str]]:
        """(start, end, term) of every masked name in folded text, suffixes included, merged."""
        suffix = _SUFFIX
        found: list[tuple[int, int, str, bool, bool]] = []  # start, end, term, strong, version follows
        for regex, strong in ((self._strong_re, True), (self._weak_re, False)):
            if regex is None:
                continue
            for m in regex.finditer(folded):
                core_end = m.end()
                tail = suffix.match(folded, core_end)
                assert tail is not None  # the suffix pattern matches the empty string too
                end = tail.end()
                versioned = any(c.isdigit() for c in folded[core_end:end])
                found.append((m.start(), end, self._term_of(m.group()), strong, versioned))
        if self._except_re is not None and found:
            allowed = [(m.start(), m.end()) for m in self._except_re.finditer(folded)]
            found = [f for f in found if not any(a <= f[0] and f[1] <= b for a, b in allowed)]
        found.sort(key=lambda f: (f[0], -f[1]))
        # Drop a match inside another (a weak "Meta" inside a strong "Meta AI").
        kept: list[tuple[int, int, str, bool, bool]] = []
        for f in found:
            if kept and f[0] < kept[-1][1]:
                if f[3] and not kept[-1][3] and f[1] > kept[-1][1]:
                    kept[-1] = f
                continue
            kept.append(f)
        # Merge names that touch (only separators, or "'s", between them); a weak name counts
        # only in a group holding a strong name or followed by a version number.
        groups: list[list[tuple[int, int, str, bool, bool]]] = []
        for f in kept:
            if groups and _GAP.fullmatch(folded, groups[-1][-1][1], f[0]):
                groups[-1].append(f)
            else:
                groups.append([f])
        spans = []
        for g in groups:
            if any(f[3] or f[4] for f in g):
                lead = next((f for f in g if f[3]), g[0])
                spans.append((g[0][0], g[-1][1], lead[2]))
        return spans

    def _term_of(self, matched: str) -> str:
        key = "".join(ch for ch in matched if ch not in SEPARATORS)
        if key in self._by_key:
            return self._by_key[key]
        return self._by_key.get(key[:-1], matched)  # a plural "s" is not part of the key

    def mask(self, text: str) -> tuple[str, list[Masking]]:
        """Return the text with every identity phrase replaced by MASK, and what was masked.

        The occurrences of the returned maskings add up to the number of MASKs inserted.
        """
        if self._strong_re is None and self._weak_re is None:
            return text, []
        # Two readings: the source as written (a name in a link target or an HTML attribute) and
        # the text as rendered (a name split by markup or spelled with character references).
        found: list[tuple[int, int, str]] = []
        folded, origin = fold_with_origin(text)
        for start, end, term in self._spans(folded):
            a, b = (start, end) if origin is None else (origin[start], origin[end - 1] + 1)
            # Marks and invisible characters after the last letter belong to it ("Gemini" + U+0301).
            while origin is not None and b < len(text) and not fold_char(text[b]):
                b += 1
            found.append((a, b, term))
        view = rendered_view(text)
        if view is not None:
            shown, starts, ends = view
            folded, origin = fold_with_origin(shown)
            for start, end, term in self._spans(folded):
                va, vb = (start, end - 1) if origin is None else (origin[start], origin[end - 1])
                a, b = starts[va], ends[vb]
                while b < len(text) and not fold_char(text[b]):
                    b += 1
                found.append((a, b, term))
        if not found:
            return text, []
        found.sort(key=lambda f: (f[0], -f[1]))
        spans: list[list[Any]] = []
        for a, b, term in found:
            if spans and a < spans[-1][1]:  # overlapping readings of one name: one mask
                spans[-1][1] = max(spans[-1][1], b)
                continue
            spans.append([a, b, term])
        counts: dict[str, int] = {}
        out: list[str] = []
        last = 0
        for a, b, term in spans:
            out.append(text[last:a])
            out.append(MASK)
            last = b
            counts[term] = counts.get(term, 0) + 1
        out.append(text[last:])
        return "".join(out), [Masking(t, n) for t, n in sorted(counts.items())]


# What a Markdown renderer (the judging screen, the HTML seat) takes out of a text or turns into
# other characters: emphasis, code, strike-through and escape characters, a link's brackets and
# target, an image's "!", HTML tags and comments (shown as text by the judging screen, dropped
# by a browser), and character references (`&#67;`, `&#x43;`, `&eacute;`) which it decodes.
_MARKUP = re.compile(
    r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
    r"|\]\([^)\n]{0,2000}\)"
    r"|\]\[[^\]\n]{0,200}\]"
    r"|<!--.{0,2000}?-->"
    r"|</?[A-Za-z][^<>\n]{0,500}>"
    r"|[*_`~\\\[!]",
    re.DOTALL,
)


def rendered_view(text: str) -> tuple[str, list[int], list[int]] | None:
    """The text as a Markdown renderer shows it, with each character's place in the original.

    Markup characters, link targets and HTML tags are dropped and character references decoded,
    so a name split or disguised by them (`**GP**T`, `` `Cla`ude ``, `[Cl](x)aude`, `&#67;laude`,
    `Cl\\aude`, `Cl<i></i>aude`) reads whole, as an expert would read it.

    Returns:
        (view, starts, ends): the view and, per view character, the original span it came from
        (a decoded reference spans the whole reference); None when no markup is found (the view
        is the text itself).
    """
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    found = False
    for m in _MARKUP.finditer(text):
        a, b = m.span()
        token = m.group()
        if token[0] == "&":
            decoded = html.unescape(token)
            if decoded == token:  # not a reference the renderer knows: shown as written
                continue
        else:
            decoded = ""
        found = True
        pieces.append(text[pos:a])
        starts.extend(range(pos, a))
        ends.extend(range(pos + 1, a + 1))
        if decoded:
            pieces.append(decoded)
            starts.extend([a] * len(decoded))
            ends.extend([b] * len(decoded))
        pos = b
    if not found:
        return None
    pieces.append(text[pos:])
    starts.extend(range(pos, len(text)))
    ends.extend(range(pos + 1, len(text) + 1))
    return "".join(pieces), starts, ends


def blinding_for(session: Session, extra: str = "") -> Blinding:
    """The session's blinding: defaults, the session's identity terms, then the blinding file's edits.

    Args:
        session: The session whose model, family and judge names are masked.
        extra: Text of the session's blinding file (see `parse_term_list`): its phrases are
            masked alone; a `!phrase` removes that phrase from the defaults and keeps its
            occurrences visible ("!Google Maps").
    """
    add, remove = parse_term_list(extra)
    removed = {_chars(r) for r in remove}
    strong, weak = _session_terms(session)
    terms = [*DEFAULT_PHRASES, *sorted(strong), *DEFAULT_VENDOR_TERMS, *add]
    # A weak default the session names as its own (a family "Google") is masked alone.
    weak_terms = [*sorted(weak), *WEAK_VENDOR_TERMS]
    strong_keys = {_chars(t) for t in terms}
    return Blinding.build(
        [t for t in terms if _chars(t) not in removed],
        [t for t in weak_terms if _chars(t) not in removed and _chars(t) not in strong_keys],
        remove,
    )


def presented_flip(seed: int, expert: str, comparison_id: str) -> bool:
    """True when an expert sees candidate_b as option 1; seeded per (expert, comparison)."""
    return bool(int(digest("expert-order", seed, comparison_id, expert)[:8], 16) & 1)


# -- what the expert sees and enters ---------------------------------------------------------

Winner = Literal["option_1", "option_2", "tie"]
QueueState = Literal["pending", "skipped", "flagged", "done"]


@dataclass(frozen=True)
class QueueItem:
    """One place in an expert's queue. `key` is an opaque handle, never shown."""

    key: str
    position: int
    state: QueueState
    task_title: str
    practice: bool = False
    """A practice comparison (not counted; its reference verdict is shown after it). Gold checks are
    not marked here or anywhere the screen can see."""


@dataclass(frozen=True)
class JudgingItem:
    """Everything the judging screen shows for one comparison, and nothing that identifies it."""

    key: str
    task_title: str
    task_prompt: str
    deliverable: str
    rubric: Rubric
    option_1: str
    option_2: str
    allow_ties: bool
    min_rationale: int = MIN_RATIONALE_CHARS
    cut_off: tuple[bool, bool] = (False, False)
    """Whether option 1 / option 2 was cut off at max_tokens (the screen says so; generation.on_truncated)."""

    @property
    def cut_off_note(self) -> str | None:
        """What the expert is told about cut-off options, or None when neither was cut off."""
        one, two = self.cut_off
        if one and two:
            return "Both options were cut off at the length limit before their end: judge them as incomplete."
        if one or two:
            return f"Option {1 if one else 2} was cut off at the length limit before its end: judge it as incomplete."
        return None


@dataclass
class Draft:
    """An expert's work on one comparison so far, in presented order; saved as it is entered."""

    scores: dict[str, list[int | None]] = field(default_factory=dict)
    winner: Winner | None = None
    rationale: str = ""
    seconds: float = 0.0
    active_seconds: float | None = None
    """Of `seconds`, the time with a key or click at most `judging.expert_idle_s` before (idle excluded);
    None: not measured (a packet result, a draft saved before active time was kept)."""
    confirmed_lower: bool = False
    """The expert confirmed a winner whose rubric average is the lower one (asked on submit)."""
    pasted_chars: int | None = None
    """Characters pasted into the rationale so far (an integrity signal for the organiser, never a rule);
    None: not recorded (a packet, a draft saved before paste events were kept)."""

    def score(self, dimension: str, option: int) -> int | None:
        pair = self.scores.get(dimension)
        return pair[option - 1] if pair else None

    def set_score(self, dimension: str, option: int, value: int | None) -> None:
        if value is not None and not 1 <= value <= 10:
            raise ValueError(f"score {value} is outside 1-10")
        pair = self.scores.setdefault(dimension, [None, None])
        pair[option - 1] = value

    def to_json(self) -> str:
        return json.dumps(self.scores, sort_keys=True, separators=(",", ":"))

    @staticmethod
    def scores_from_json(text: str | None) -> dict[str, list[int | None]]:
        if not text:
            return {}
        data = json.loads(text)
        return {str(k): [v[0], v[1]] for k, v in data.items() if isinstance(v, list) and len(v) == 2}

    def is_empty(self) -> bool:
        return (
            not any(v is not None for pair in self.scores.values() for v in pair)
            and not self.winner
            and not self.rationale
        )


def missing(draft: Draft, rubric: Rubric, allow_ties: bool, min_rationale: int) -> list[str]:
    """What a draft still lacks before it can be submitted, in words for the footer; empty when complete."""
    lacks: list[str] = []
    unscored = sum(1 for d in rubric.all for o in (1, 2) if draft.score(d.id, o) is None)
    if unscored:
        lacks.append(f"{unscored} score{'s' if unscored != 1 else ''}")
    if draft.winner is None or (draft.winner == "tie" and not allow_ties):
        lacks.append("winner")
    length = visible_length(draft.rationale)  # zero-width characters and NULs do not count
    if length < min_rationale:
        lacks.append(f"rationale ({length}/{min_rationale} characters)")
    elif len(draft.rationale) > MAX_RATIONALE_CHARS:
        lacks.append(f"a shorter rationale ({len(draft.rationale):,}/{MAX_RATIONALE_CHARS:,} characters)")
    return lacks


_STATE_RANK = {"pending": 0, "skipped": 1, "flagged": 2}


def next_open(queue: list[QueueItem], after: int | None = None) -> QueueItem | None:
    """The place to judge next: pending first, then skipped, then flagged; within each, the
    first one after position `after` (wrapping round), so skipping moves forward."""
    open_items = [q for q in queue if q.state != "done"]
    if not open_items:
        return None
    return min(
        open_items,
        key=lambda q: (_STATE_RANK[q.state], after is not None and q.position <= after, q.position),
    )
