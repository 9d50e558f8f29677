"""The expert's seat without the UI (issue 14): degraded copies, gold pass rates and who the report leaves out,
guidelines files, practice and gold places kept out of packets and statistics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.errors import ConfigError
from centaur_tui.domain.gold import MIN_WORDS, degrade
from centaur_tui.services.work import open_judging
from centaur_tui.store import Store
from tests.support.experts import judged_session
from tests.support.judging import assign
from tests.support.seat import judge_checks, judge_comparisons, with_judging

LONG = "\n\n".join(
    f"## Part {i}\n\nRequirement {i} is met: the figure for line {i} is 1,{i}00 and the reason is stated."
    for i in range(8)
)


# -- degraded copies ----------------------------------------------------------------------------


def test_a_degraded_copy_is_shorter_deterministic_and_keeps_the_opening() -> None:
    one, two = degrade(LONG, "s1"), degrade(LONG, "s1")
    assert one is not None and one == two
    assert len(one.text) < 0.85 * len(LONG) and one.text.startswith("## Part 0")
    assert "sections removed" in one.description
    assert all(line in LONG.splitlines() for line in one.text.splitlines())  # nothing added or rewritten
    assert degrade(LONG, "s2") != one  # another seed, another copy


@pytest.mark.parametrize(
    "text",
    ["", "   \n\n  ", "short text", "word " * (MIN_WORDS - 1), "\x1b[31m" * 100, "#\n" * 200],
)
def test_texts_too_short_to_degrade_give_none(text: str) -> None:
    assert degrade(text, "seed") is None


@pytest.mark.parametrize(
    "text",
    [
        " ".join(["wort"] * 300),  # one paragraph: cut by words
        "\n".join(f"{i}: {'x' * 5} ünïcødé 表" for i in range(100)),  # one block of lines
        "# A\n" + "\n\n".join("para " * 20 for _ in range(3)),
        '{"a": 1, "b": [' + ", ".join(str(i) for i in range(200)) + "]}",
    ],
)
def test_any_long_text_gets_a_strictly_shorter_copy(text: str) -> None:
    copy = degrade(text, "seed")
    assert copy is not None and 0 < len(copy.text.strip()) < len(text.strip())


# -- gold checks in queues and the report ---------------------------------------------------------


def test_gold_rate_sets_how_many_checks_each_queue_gets_and_grows_with_it(tmp_path: Path) -> None:
    path = with_judging(judged_session(tmp_path), "expert_gold_rate = 0.25", "expert_practice = 2")
    assign(path, "ann", 4)
    study = load_session(path)
    with Store(study.database) as store:
        queue = open_judging(study, store, "ann").queue()
        assert [q.practice for q in queue[:2]] == [True, True] and not any(q.practice for q in queue[2:])
        assert len(queue) == 4 + 2 + 1
        keys = [q.key for q in queue]
        assert open_judging(study, store, "ann").queue() == queue  # opening again makes nothing new
    assign(path, "ann", 4)
    with Store(study.database) as store:
        again = open_judging(study, store, "ann").queue()
    assert len(again) == 8 + 2 + 2 and set(keys) <= {q.key for q in again}
    assert [q.position for q in again] == list(range(1, 13))


def test_the_report_leaves_out_experts_below_the_gold_threshold_and_says_so(tmp_path: Path) -> None:
    path = with_judging(judged_session(tmp_path), "expert_gold_rate = 0.5")
    assign(path, "ann", 4)
    assign(path, "bob", 4)
    judge_checks(path, "ann", lambda intact: f"option_{3 - intact}")  # picks the degraded copy: fails
    judge_checks(path, "bob", lambda intact: f"option_{intact}")
    assert judge_comparisons(path, "ann") == 4 and judge_comparisons(path, "bob") == 4
    runner = CliRunner()
    kept = runner.invoke(
        cli,
        [
            "report",
            str(path),
            "--judges",
            "all",
            "--bootstrap",
            "0",
            "--no-exact-p",
            "--json",
            str(tmp_path / "all.json"),
        ],
    )
    assert kept.exit_code == 0, kept.output
    assert "No gold-check threshold" in kept.output
    out = runner.invoke(
        cli,
        [
            "report",
            str(path),
            "--judges",
            "all",
            "--bootstrap",
            "0",
            "--no-exact-p",
            "--min-gold-pass",
            "0.8",
            "--json",
            str(tmp_path / "cut.json"),
            "--markdown",
            str(tmp_path / "cut.md"),
        ],
    )
    assert out.exit_code == 0, out.output
    assert (
        "1 expert(s) left out of every statistic, with their 4 judgment(s): gold-check pass rate below 0.80: "
        "ann 0.00 (0 of 2)" in " ".join(out.output.split())
    )
    whole, cut = (json.loads((tmp_path / f).read_text()) for f in ("all.json", "cut.json"))
    assert cut["counts"]["judgments"] == whole["counts"]["judgments"] - 4  # ann's 4, said in the note
    assert "ann" in whole["counts"]["judges"] and "ann" not in cut["counts"]["judges"]
    rows = {r["expert"]: r for r in cut["seat"]["rows"]}
    assert rows["ann"]["left_out"] and not rows["bob"]["left_out"]
    assert (rows["bob"]["gold_passed"], rows["bob"]["gold_judged"], rows["bob"]["gold_pass_rate"]) == (2, 2, 1.0)
    assert rows["bob"]["lower_average"] == 4 and rows["bob"]["lower_average_confirmed"] == 4
    assert rows["bob"]["median_seconds"] == 41.5 and rows["bob"]["median_active_seconds"] == 30.0
    assert "Experts at work" in (tmp_path / "cut.md").read_text()
    bad = runner.invoke(cli, ["report", str(path), "--min-gold-pass", "1.5"])
    assert bad.exit_code == 2 and "min-gold-pass" in bad.output


def test_the_session_threshold_applies_and_an_expert_without_gold_is_kept_by_name(tmp_path: Path) -> None:
    from centaur_tui.services.report import seat_section

    path = with_judging(judged_session(tmp_path), "expert_min_gold_pass = 0.8")
    assign(path, "ann", 2)
    judge_comparisons(path, "ann")
    study = load_session(path)
    with Store(study.database) as store:
        seat = seat_section(study, store)
    assert seat.left_out == [] and seat.min_gold_pass == 0.8
    assert seat.note is not None and "no gold check judged" in seat.note and "ann" in seat.note


def test_packets_hold_no_practice_or_gold_place(tmp_path: Path) -> None:
    from centaur_tui.services.judging import PacketJudging, export_packet

    path = with_judging(judged_session(tmp_path), "expert_gold_rate = 0.5", "expert_practice = 1")
    assign(path, "ann", 4)
    study = load_session(path)
    with Store(study.database) as store:
        source = open_judging(study, store, "ann")
        assert len(source.queue()) == 7
        export_packet(store, study, source.expert, tmp_path / "a.packet")
    packet = PacketJudging(tmp_path / "a.packet")
    try:
        assert len(packet.queue()) == 4 and not any(q.practice for q in packet.queue())
    finally:
        packet.close()


# -- guidelines -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "file not found"),
        (b"\xff\xfe bad", "not UTF-8 text"),
        (b"  \n\n", "is empty"),
        ("dir", "is a folder"),
    ],
)
def test_a_bad_guidelines_file_names_the_file_and_the_field(tmp_path: Path, content, problem: str) -> None:
    path = with_judging(judged_session(tmp_path), 'expert_guidelines = "guide.md"')
    target = path.parent / "guide.md"
    if content == "dir":
        target.mkdir()
    elif content is not None:
        target.write_bytes(content)
    with pytest.raises(ConfigError) as err:
        load_session(path)
    assert "judging.expert_guidelines" in str(err.value) and problem in str(err.value) and "guide.md" in str(err.value)
    out = CliRunner().invoke(cli, ["check", str(path)])
    assert out.exit_code == 2 and "judging.expert_guidelines" in out.output and "Traceback" not in out.output


def test_guidelines_are_read_cleaned_and_masked_for_the_expert(tmp_path: Path) -> None:
    path = with_judging(judged_session(tmp_path), 'expert_guidelines = "guide.md"')
    (path.parent / "guide.md").write_text("# Read first\r\n\x1b[2JScore Alpha by what it does.\n", encoding="utf-8")
    study = load_session(path)
    assert study.guidelines == "# Read first\n[2JScore Alpha by what it does.\n"
    with Store(study.database) as store:
        source = open_judging(study, store, "ann")
    assert source.guidelines is not None and "Alpha" not in source.guidelines and "Read first" in source.guidelines


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("expert_gold_rate = 0.9", "judging.expert_gold_rate"),
        ('expert_gold_rate = "0.1"', "judging.expert_gold_rate"),
        ("expert_gold_rate = -0.1", "judging.expert_gold_rate"),
        ("expert_practice = -1", "judging.expert_practice"),
        ("expert_practice = 21", "judging.expert_practice"),
        ("expert_practice = 1.5", "judging.expert_practice"),
        ("expert_idle_s = 1.0", "judging.expert_idle_s"),
        ("expert_min_gold_pass = 1.5", "judging.expert_min_gold_pass"),
        ("expert_guidelines = 3", "judging.expert_guidelines"),
        ("expert_goldrate = 0.1", "judging.expert_goldrate"),
    ],
)
def test_bad_seat_fields_name_the_field_and_exit_2(tmp_path: Path, line: str, field: str) -> None:
    path = with_judging(judged_session(tmp_path), line)
    with pytest.raises(ConfigError) as err:
        load_session(path)
    assert field in str(err.value)
    out = CliRunner().invoke(cli, ["check", str(path)])
    assert out.exit_code == 2 and field in out.output and "Traceback" not in out.output
