"""Expert judging without the UI: blinding, assignment strategies, drafts, judgments, packets, CLI."""

from __future__ import annotations

import csv
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.assignment import (
    AssignmentError,
    ExistingAssignment,
    PoolComparison,
    plan_assignments,
)
from centaur_tui.domain.blinding import (
    MASK,
    Draft,
    QueueItem,
    blinding_for,
    clean_text,
    missing,
    next_open,
    presented_flip,
)
from centaur_tui.domain.seat import JudgingError
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.services.exchange import import_packet_into as import_packet
from centaur_tui.services.judging import PacketJudging, SessionJudging, export_packet
from centaur_tui.store import ExpertStore, PacketError, Store
from tests.support.experts import CANDIDATES, EXPERTS, FAMILIES, HOSTILE_SPELLINGS, HOSTILE_TEXT, judged_session


@pytest.fixture
def session_path(tmp_path: Path) -> Path:
    return judged_session(tmp_path)


def complete_draft(rubric, first: int = 7, second: int = 4, winner: str = "option_1") -> Draft:
    draft = Draft()
    for d in rubric.all:
        draft.set_score(d.id, 1, first)
        draft.set_score(d.id, 2, second)
    draft.winner = winner  # type: ignore[assignment]
    draft.rationale = "Option one meets more of the stated requirements."
    draft.seconds = 12.5
    return draft


# -- blinding ---------------------------------------------------------------------------------


def test_masking_catches_names_in_any_spelling_and_ai_self_references(write_session) -> None:
    session = load_session(write_session(extra=EXPERTS)).session
    blinding = blinding_for(session)
    text = (
        "As an AI language model, I (alpha) think Beta-and Gamma. Written by gpt 4 mini? "
        "I’m an AI. OpenAI and North made this. A plain reading of the brief. Alphabet stays."
    )
    masked, log = blinding.mask(text)
    for name in ("alpha)", "Beta-", "Gamma.", "gpt 4", "North", "OpenAI", "As an AI language model", "I’m an AI"):
        assert name.lower() not in masked.lower(), name
    assert "plain reading" in masked and "Alphabet stays" in masked
    assert masked.count(MASK) == 8
    assert {m.term for m in log} >= {"Alpha", "Beta", "Gamma", "North", "OpenAI"}


def test_model_names_match_across_separators() -> None:
    from centaur_tui.domain.blinding import Blinding

    blinding = Blinding.build(["GPT-5-Mini", "Claude-Opus-4.8"])
    for variant in ("GPT-5-Mini", "gpt 5 mini", "GPT5Mini", "gpt_5_mini", "claude opus 4.8", "Claude-Opus-4-8"):
        masked, log = blinding.mask(f"by {variant}.")
        assert masked == f"by {MASK}.", variant
        assert len(log) == 1


def test_blinding_file_adds_and_removes_terms(write_session) -> None:
    session = load_session(write_session()).session
    blinding = blinding_for(session, "# extra phrases\nAcme Labs\n!Copilot\n")
    masked, _ = blinding.mask("Acme Labs built Copilot.")
    assert masked == f"{MASK} built Copilot."


def test_clean_text_removes_control_characters_but_keeps_newlines_and_tabs() -> None:
    raw = "a\tb\r\nc\rd\x1b[31mred\x1b[0m\x07\x00e\u202eevil\x9b"
    assert clean_text(raw) == "a\tb\nc\nd[31mred[0me" + "evil"


def test_presented_order_is_seeded_per_expert_and_comparison_and_balanced() -> None:
    flips = [presented_flip(7, "ann", f"c{i}") for i in range(400)]
    assert flips == [presented_flip(7, "ann", f"c{i}") for i in range(400)]
    assert 0.4 < sum(flips) / len(flips) < 0.6
    assert flips != [presented_flip(7, "bob", f"c{i}") for i in range(400)]


def test_missing_names_what_a_draft_lacks(write_session) -> None:
    study = load_session(write_session())
    rubric = study.rubric("counseling")
    draft = Draft()
    assert missing(draft, rubric, True, 20) == [
        f"{2 * len(rubric.all)} scores",
        "winner",
        "rationale (0/20 characters)",
    ]
    draft = complete_draft(rubric)
    assert missing(draft, rubric, True, 20) == []
    draft.winner = "tie"  # type: ignore[assignment]
    assert missing(draft, rubric, False, 20) == ["winner"]
    draft.rationale = "too short"
    assert missing(draft, rubric, True, 20) == ["rationale (9/20 characters)"]
    with pytest.raises(ValueError):
        draft.set_score(rubric.all[0].id, 1, 11)


def test_next_open_goes_forward_and_keeps_skipped_and_flagged_for_later() -> None:
    q = [QueueItem(str(i), i, s, "T") for i, s in enumerate(["done", "skipped", "pending", "flagged", "pending"], 1)]
    assert next_open(q).key == "3"
    assert next_open(q, after=3).key == "5"
    assert next_open(q, after=5).key == "3"
    only_later = [QueueItem("1", 1, "flagged", "T"), QueueItem("2", 2, "skipped", "T")]
    assert next_open(only_later).key == "2"
    assert next_open([QueueItem("1", 1, "done", "T")]) is None


# -- assignment -------------------------------------------------------------------------------


def synthetic_pool(tasks=("t1", "t2", "t3"), runs: int = 3, llm_split: bool = False) -> list[PoolComparison]:
    pool = []
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    for run in range(1, runs + 1):
        for task in tasks:
            for mode in ("automation", "augmentation"):
                for i, (a, b) in enumerate(pairs):
                    winners: tuple[str, ...] = (a, a, a)
                    if llm_split and run == 1 and i == 0:
                        winners = (a, b, "tie")
                    elif llm_split and run == 2 and i == 0:
                        winners = (a, a, b)
                    pool.append(PoolComparison(f"{run}{task}{mode}{a}{b}", run, task, mode, a, b, winners))
    return pool


EVERYONE = ExpertSpec(id="ann", name="Ann")


def test_stratified_spreads_over_tasks_modes_and_pairs() -> None:
    pool = synthetic_pool()
    plan = plan_assignments(pool, EVERYONE, [], 12, "stratified", seed=1)
    by_id = {c.id: c for c in pool}
    chosen = [by_id[p.comparison_id] for p in plan]
    assert len({c.id for c in chosen}) == 12
    assert set(Counter((c.task, c.mode) for c in chosen).values()) == {2}
    pairs = Counter((c.candidate_a, c.candidate_b) for c in chosen)
    assert max(pairs.values()) - min(pairs.values()) <= 1
    assert plan == plan_assignments(pool, EVERYONE, [], 12, "stratified", seed=1)
    assert plan != plan_assignments(pool, EVERYONE, [], 12, "stratified", seed=2)


def test_only_tasks_the_expert_may_judge_and_never_twice() -> None:
    pool = synthetic_pool()
    bob = ExpertSpec(id="bob", name="Bob", tasks=("t2",))
    first = plan_assignments(pool, bob, [], 100, "stratified", seed=1)
    assert len(first) == 18 and all("t2" in p.comparison_id for p in first)
    existing = [ExistingAssignment("bob", p.comparison_id, 0, p.flipped, False, i) for i, p in enumerate(first)]
    assert plan_assignments(pool, bob, existing, 5, "stratified", seed=1) == []


def test_experts_never_judge_a_comparison_holding_their_own_deliverable() -> None:
    import dataclasses

    pool = synthetic_pool()
    own = {c.id for c in pool[:5]}
    pool = [dataclasses.replace(c, authors=("ann", "zoe")) if c.id in own else c for c in pool]
    plan = plan_assignments(pool, EVERYONE, [], len(pool), "stratified", seed=1)
    assert len(plan) == len(pool) - 5 and not own & {p.comparison_id for p in plan}


def test_overlap_gives_each_comparison_to_k_experts() -> None:
    pool = synthetic_pool()
    existing: list[ExistingAssignment] = []
    for expert in ("ann", "bob", "cy"):
        plan = plan_assignments(pool, ExpertSpec(id=expert, name=expert), existing, 10, "overlap", seed=3, overlap=2)
        existing += [ExistingAssignment(expert, p.comparison_id, 0, p.flipped, False, i) for i, p in enumerate(plan)]
    per_comparison = Counter(a.comparison_id for a in existing)
    assert max(per_comparison.values()) == 2
    bob = {a.comparison_id for a in existing if a.expert == "bob"}
    ann = {a.comparison_id for a in existing if a.expert == "ann"}
    assert bob == ann  # the second expert gets the first one's comparisons first
    with pytest.raises(AssignmentError):
        plan_assignments(pool, EVERYONE, [], 5, "overlap", seed=3, overlap=1)


def test_disagreement_puts_split_llm_verdicts_first() -> None:
    pool = synthetic_pool(llm_split=True)
    plan = plan_assignments(pool, EVERYONE, [], 8, "disagreement", seed=1)
    splits = [next(c.split for c in pool if c.id == p.comparison_id) for p in plan]
    assert splits[:6] == [pytest.approx(2 / 3)] * 6
    assert splits[6:] == [pytest.approx(1 / 3)] * 2
    chosen = [next(c for c in pool if c.id == p.comparison_id) for p in plan[:6]]
    assert len({(c.task, c.mode) for c in chosen}) == 6


def test_swapped_repeats_come_back_later_with_the_options_swapped() -> None:
    pool = synthetic_pool()
    plan = plan_assignments(pool, EVERYONE, [], 20, "stratified", seed=5, repeat_share=0.2)
    repeats = [(i, p) for i, p in enumerate(plan) if p.repeat]
    assert len(plan) == 20 and len(repeats) == 4
    for i, r in repeats:
        first = next(j for j, p in enumerate(plan) if p.comparison_id == r.comparison_id and not p.repeat)
        assert i - first > 4  # at least a quarter of the 16 new ones in between
        assert r.presentation == 1 and r.flipped != plan[first].flipped
    # Later batches repeat what the expert already judged first.
    existing = [
        ExistingAssignment("ann", p.comparison_id, p.presentation, p.flipped, i < 3, i) for i, p in enumerate(plan)
    ]
    more = plan_assignments(pool, EVERYONE, existing, 10, "stratified", seed=5, repeat_share=0.3)
    repeated = {p.comparison_id for p in more if p.repeat}
    judged = {p.comparison_id for p in plan[:3] if not p.repeat}
    already = {p.comparison_id for p in plan if p.repeat}
    assert len(repeated) == 3 and judged - already <= repeated and not repeated & already


def test_assignment_errors_are_for_people() -> None:
    with pytest.raises(AssignmentError, match="unknown strategy"):
        plan_assignments([], EVERYONE, [], 5, "random", seed=1)
    with pytest.raises(AssignmentError, match="repeat share"):
        plan_assignments([], EVERYONE, [], 5, "stratified", seed=1, repeat_share=1.0)


# -- the store --------------------------------------------------------------------------------


def assign(store: Store, study, expert_id: str, n: int, **kwargs) -> ExpertSpec:
    experts = ExpertStore(store)
    expert = experts.expert(study, expert_id)
    planned = plan_assignments(
        experts.pool(),
        expert,
        experts.existing(),
        n,
        kwargs.pop("strategy", "stratified"),
        study.session.seed,
        **kwargs,
    )
    experts.add_assignments(expert.id, planned)
    return expert


def test_expert_judgments_land_in_the_judgments_table_and_the_export(session_path: Path, tmp_path: Path) -> None:
    study = load_session(session_path)
    with Store(study.database) as store:
        expert = assign(store, study, "ann", 3)
        judging = SessionJudging(store, study, expert)
        queue = judging.queue()
        assert [q.state for q in queue] == ["pending"] * 3
        item = judging.item(queue[0].key)
        judging.submit(queue[0].key, complete_draft(item.rubric))
        with pytest.raises(JudgingError, match="already judged"):
            judging.submit(queue[0].key, complete_draft(item.rubric))
        with pytest.raises(JudgingError, match="still missing"):
            judging.submit(queue[1].key, Draft())
        rows = [r for r in store.judgment_rows() if r.judge_kind == "expert"]
        assert len(rows) == 1
        row = rows[0]
        assert row.judge == "ann" and row.judge_family is None and row.seconds == 12.5
        a = store.read("SELECT * FROM expert_assignments WHERE id = ?", (int(queue[0].key),))[0]
        comparison = store.comparisons()[a["comparison_id"]]
        first = comparison.candidate_b if a["flipped"] else comparison.candidate_a
        assert row.option1 == first and row.winner == first and row.option1_mean == 7.0
        scores = [s for s in store.score_rows() if s.judge == "ann"]
        assert len(scores) == 2 * len(item.rubric.all)
        assert {s.score for s in scores if s.candidate == first} == {7}
        assert judging.queue()[0].state == "done"
        assert ExpertStore(store).workload()["ann"] == (3, 1)
    out = CliRunner().invoke(cli, ["export", str(session_path), "--out", str(tmp_path / "csv")])
    assert out.exit_code == 0, out.output
    with (tmp_path / "csv" / "judgments.csv").open() as fh:
        assert sum(r["judge_kind"] == "expert" for r in csv.DictReader(fh)) == 1


def test_drafts_restore_and_an_older_save_never_overwrites_a_newer_one(session_path: Path) -> None:
    study = load_session(session_path)
    with Store(study.database) as store:
        judging = SessionJudging(store, study, assign(store, study, "ann", 2))
        key = judging.queue()[1].key
        draft = Draft(winner="option_2", rationale="half", seconds=3.0)
        draft.set_score("empathic_reflection", 1, 8)
        judging.save_draft(key, draft, version=10)
        judging.save_draft(key, Draft(rationale="stale"), version=9)
        restored = judging.draft(key)
        assert restored == draft
        assert judging.resume_key() == key
        judging.set_state(key, "flagged")
        assert judging.queue()[1].state == "flagged"
        with pytest.raises(JudgingError):
            judging.set_state(key, "done")


def test_masked_phrases_are_logged_and_never_shown(session_path: Path) -> None:
    study = load_session(session_path)
    with Store(study.database) as store:
        judging = SessionJudging(store, study, assign(store, study, "ann", 1))
        key = judging.queue()[0].key
        a = store.read(
            "SELECT c.output_a FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id WHERE a.id = ?",
            (int(key),),
        )[0]
    with sqlite3.connect(study.database) as conn:
        conn.execute(
            "UPDATE outputs SET text = ? WHERE id = ?",
            ("As an AI language model trained by North, I, Alpha, answer.", a["output_a"]),
        )
    with Store(study.database) as store:
        judging = SessionJudging(store, study, ExpertStore(store).expert(study, "ann"))
        item = judging.item(key)
        shown = item.option_1 + item.option_2
        assert "North" not in shown and "Alpha" not in shown and "language model" not in shown
        judging.item(key)  # opening again logs nothing new
        log = ExpertStore(store).maskings()
    assert {m.term for m in log} == {"as an AI language model", "North", "Alpha"}
    assert all(m.expert == "ann" and m.output_id == a["output_a"] for m in log)


# -- packets and the CLI ----------------------------------------------------------------------


def test_packet_export_masks_hostile_spellings_and_counts_the_masks(session_path: Path, tmp_path: Path) -> None:
    study = load_session(session_path)
    with sqlite3.connect(study.database) as conn:
        conn.execute("UPDATE outputs SET text = text || ?", (HOSTILE_TEXT,))
    conn.close()
    runner = CliRunner()
    out = runner.invoke(cli, ["assign", str(session_path), "--expert", "bob", "--n", "3"])
    assert out.exit_code == 0, out.output
    with Store(study.database) as store:  # items seen before the export are masked (and logged) again
        judging = SessionJudging(store, study, ExpertStore(store).expert(study, "bob"))
        judging.item(judging.queue()[0].key)
    packet = tmp_path / "bob.packet"
    out = runner.invoke(cli, ["packet", "export", str(session_path), "--expert", "bob", "--out", str(packet)])
    assert out.exit_code == 0, out.output
    source = PacketJudging(packet)
    shown = [getattr(source.item(q.key), f"option_{o}") for q in source.queue() for o in (1, 2)]
    source.close()
    blob = "\n".join(shown)
    for spelling in (*HOSTILE_SPELLINGS, "通义", "4.1 wrote", "mini wrote"):
        assert spelling not in blob, spelling
    assert blob.count(f"{MASK} wrote this") == len(shown) * len(HOSTILE_SPELLINGS)
    # The count printed is the number of masks in the packet, not the number of new log rows.
    assert f"{blob.count(MASK)} identity phrase(s) masked" in out.output, out.output
    assert blob.count(MASK) > 0


def test_packet_round_trip_holds_no_identities_and_imports_idempotently(session_path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["assign", str(session_path), "--expert", "bob", "--n", "4", "--repeat-share", "0.25"])
    assert out.exit_code == 0, out.output
    assert "3 new comparison(s), 1 swapped repeat(s)" in out.output
    packet = tmp_path / "bob.packet"
    out = runner.invoke(cli, ["packet", "export", str(session_path), "--expert", "bob", "--out", str(packet)])
    assert out.exit_code == 0, out.output
    study = load_session(session_path)
    with Store(study.database) as store:
        secrets = {c.id for c in store.comparisons().values()} | set(store.outputs())
    raw = packet.read_bytes().decode("utf-8", "replace")
    for identity in (*CANDIDATES, *FAMILIES, "simulated/", "judge-", *secrets):
        assert identity not in raw, identity
    assert not list(tmp_path.glob("bob.packet-*")), "the packet must be one self-contained file"

    source = PacketJudging(packet)
    queue = source.queue()
    assert len(queue) == 4 and all(q.task_title == "Counseling" for q in queue)
    for q in queue[:2]:
        source.submit(q.key, complete_draft(source.item(q.key).rubric))
    source.save_draft(queue[2].key, Draft(rationale="unfinished"), version=1)
    source.close()

    for expected in ("2 new judgment(s), 0 already stored, 2 still open", "0 new judgment(s), 2 already stored"):
        out = runner.invoke(cli, ["packet", "import", str(session_path), str(packet)])
        assert out.exit_code == 0 and expected in out.output, out.output
    with Store(study.database) as store:
        assert ExpertStore(store).workload()["bob"] == (4, 2)


def test_packet_import_refuses_another_sessions_packet(session_path: Path, tmp_path: Path, write_session) -> None:
    study = load_session(session_path)
    with Store(study.database) as store:
        expert = assign(store, study, "ann", 2)
        export_packet(store, study, expert, tmp_path / "ann.packet")
        with pytest.raises(PacketError, match="already exists"):
            export_packet(store, study, expert, tmp_path / "ann.packet")
    other = load_session(write_session(name="other", filename="other.toml"))
    with Store(other.database) as store, pytest.raises(PacketError, match="another session"):
        import_packet(store, other, tmp_path / "ann.packet")
    (tmp_path / "junk.packet").write_text("not a database")
    with pytest.raises(PacketError, match="not a judging packet"):
        PacketJudging(tmp_path / "junk.packet")


def test_assign_cli_errors_name_the_problem(session_path: Path, write_session) -> None:
    out = CliRunner().invoke(cli, ["assign", str(session_path), "--expert", "zed", "--n", "2"])
    assert out.exit_code == 2 and "no expert 'zed'" in out.output and "ann, bob" in out.output
    never_run = write_session(name="fresh", filename="fresh.toml", extra=EXPERTS)
    out = CliRunner().invoke(cli, ["assign", str(never_run), "--expert", "ann", "--n", "2"])
    assert out.exit_code == 2 and "run the session first" in out.output
