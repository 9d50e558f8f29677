"""The typed report: option defaults defined once, absent sections left out, renderers fed by attribute."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from centaur_tui.domain.report_options import REPORT_DEFAULTS, SESSION_OPTIONS, ReportOptions
from centaur_tui.domain.session import StatisticsParams
from centaur_tui.report import ReportDocument, sections, to_json, to_markdown, to_text
from centaur_tui.report.document import ExpertOptionsDoc, ExpertsSection, OutcomeRow, OutcomesSection
from centaur_tui.stats.report import build_report
from tests.support.frames import Data


def _data() -> Data:
    d = Data()
    for run in (1, 2):
        for x, y, w in (("A", "B", "A"), ("A", "C", "A"), ("B", "C", "C")):
            d.judge(run, "t", "automation", x, y, "J1", w)
            d.judge(run, "t", "automation", x, y, "J2", w)
    return d


def test_every_front_end_takes_the_report_defaults_from_one_place() -> None:
    from centaur_tui.cli.report_cmd import report
    from centaur_tui.stats.alt_test import EPSILON
    from centaur_tui.stats.experts import ExpertOptions
    from centaur_tui.stats.ppr import PPROptions

    flags = {p.name: p.default for p in report.params}
    d = REPORT_DEFAULTS
    assert flags["rank_method"] == d.rank_method and flags["bootstrap"] == d.bootstrap and flags["seed"] == d.seed
    assert (flags["alt_epsilon"], flags["alt_min_experts"]) == (d.alt_epsilon, d.alt_min_experts_per_item)
    assert (flags["ppr_alpha"], flags["ppr_method"], flags["ppr_lam"]) == (d.ppr_alpha, d.ppr_method, d.ppr_lam)
    assert flags["ppr_min_labeled"] == d.ppr_min_labeled and (flags["judges"],) == d.judge_kinds
    session = StatisticsParams()
    assert {name: getattr(session, name) for name in SESSION_OPTIONS} == {
        name: getattr(d, name) for name in SESSION_OPTIONS
    }
    expert, ppr = ExpertOptions(), PPROptions()
    assert (expert.bootstrap, expert.confidence, expert.seed) == (d.bootstrap, d.confidence, d.seed)
    assert (expert.epsilon, EPSILON, expert.alt_min_experts_per_item) == (
        d.alt_epsilon,
        d.alt_epsilon,
        d.alt_min_experts_per_item,
    )
    assert (ppr.alpha, ppr.method, ppr.lam, ppr.min_labeled) == (d.ppr_alpha, d.ppr_method, d.ppr_lam, 10)


def test_a_session_fixes_some_options_and_a_flag_given_wins() -> None:
    fixed = StatisticsParams(ppr_alpha=0.2, alt_min_experts_per_item=2)
    options = ReportOptions.for_session(fixed, bootstrap=5)
    assert (options.ppr_alpha, options.alt_min_experts_per_item, options.bootstrap) == (0.2, 2, 5)
    assert ReportOptions.for_session(fixed, ppr_alpha=0.3).ppr_alpha == 0.3
    assert ReportOptions.for_session() == REPORT_DEFAULTS
    with pytest.raises(TypeError, match="bootstrapp"):
        ReportOptions.for_session(fixed, bootstrapp=5)


def test_absent_sections_are_left_out_not_written_as_null() -> None:
    options = ExpertOptionsDoc(
        bootstrap=0,
        confidence=0.95,
        epsilon=0.2,
        fdr_q=0.05,
        alt_min_items=30,
        alt_min_experts_per_item=3,
        loo_min_others=1,
    )
    # Passing None explicitly is the same as not passing it: the key is absent either way.
    for section in (
        ExpertsSection(present=False, note="none", options=options),
        ExpertsSection(present=False, note="none", options=options, counts=None, headline=None),
    ):
        assert list(section.to_dict()) == ["present", "note", "options"]
    row = OutcomeRow(planned=1, answered=1, invalid=0, failed=0, blocked=0, missing=0)
    plain = OutcomesSection(complete=True, stages={"judging": row}, judges={}, modes={}, failed_calls=0)
    assert "batched_judgments" not in plain.to_dict() and "batches_in_flight" not in plain.to_dict()
    batched = plain.model_copy(update={"batched_judgments": 0, "batches_in_flight": 0})
    assert batched.to_dict()["batched_judgments"] == 0 and batched.to_dict()["batches_in_flight"] == 0


def test_the_built_document_round_trips_and_renders_the_same_from_its_dict(tmp_path: Path) -> None:
    document = build_report(_data().frames(), ReportOptions(bootstrap=0)).document
    text = to_json(document)
    again = ReportDocument.from_json(text)
    assert again == document and to_json(again) == text
    assert "ppr" in json.loads(text) and "outcomes" not in json.loads(text) and "seat" not in json.loads(text)
    plain = document.to_dict()
    assert to_text(plain) == to_text(document) and to_markdown(plain) == to_markdown(document)
    assert [s.title for s in sections(plain)] == [s.title for s in sections(document)]


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda d: d.pop("experts"), id="a section missing"),
        pytest.param(lambda d: d["counts"].update(runs="2"), id="a count as text"),
        pytest.param(lambda d: d["modes"][0]["overall"][0].update(mean_rank="1.5"), id="a rank as text"),
        pytest.param(lambda d: d.update(seat={"rows": "none"}), id="a broken optional section"),
    ],
)
def test_a_renderer_given_a_broken_dict_refuses_it_by_field(change) -> None:
    plain = build_report(_data().frames(), ReportOptions(bootstrap=0)).doc
    broken = json.loads(json.dumps(plain))
    change(broken)
    with pytest.raises(ValidationError):
        to_text(broken)
