"""Active allocation: the draw weights, the draws and their stored probabilities, the estimator, the seats."""

from __future__ import annotations

import itertools
import math
import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain import assignment as da
from centaur_tui.domain.assignment import AssignmentError, PoolComparison, plan_assignments
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.services.assign import assign_comparisons
from centaur_tui.services.judging import open_judging
from centaur_tui.stats import active, ppr
from centaur_tui.store import ExpertStore, Store
from tests.support.experts import judged_session
from tests.support.seat import with_judging
from tests.test_experts import complete_draft

ANN = ExpertSpec(id="ann", name="Ann")


def pool_of(winners: list[tuple[str, ...]]) -> list[PoolComparison]:
    return [PoolComparison(f"c{i:02d}", 1, "t", "automation", "A", "B", w) for i, w in enumerate(winners)]


# -- weights -----------------------------------------------------------------------------------


def test_panel_points_and_uncertainty_read_splits_flips_and_ties() -> None:
    pool = pool_of([("A", "A", "A"), ("A", "B"), ("tie", "tie"), ("A", "B", "B", "B"), (), ("Z",)])
    points = [da.panel_points(c) for c in pool]
    assert points == [1.0, 0.5, 0.5, 0.25, None, None]  # an unknown name is no verdict
    assert [da.uncertainty(p) for p in points] == [0.0, 1.0, 1.0, 0.5, None, None]


def test_without_expert_verdicts_the_design_is_uniform() -> None:
    pool = pool_of([("A", "A"), ("A", "B"), ()])
    assert da.active_weights(pool) == [1.0, 1.0, 1.0]
    flat = da.residual_model(pool, {})
    assert flat == (0.25,) * 5
    assert len(set(da.active_weights(pool, flat))) == 1


def test_the_floor_holds_and_an_unknown_comparison_weighs_like_the_average() -> None:
    pool = pool_of([("A", "A"), ("A", "B"), ()])
    model = (0.01, 0.1, 0.1, 0.1, 0.25)
    w = da.active_weights(pool, model)
    sds = [0.1, 0.5]
    f = da.ACTIVE_FLOOR
    gamma = f / (1 - f) * (sum(sds) / 2)
    assert w[:2] == pytest.approx([gamma + 0.1, gamma + 0.5])
    assert w[2] == pytest.approx(gamma + 0.3)  # judges all missing: the mean (uniform-like)
    # The uniform part is the floor's share of the pool's total weight.
    assert 3 * gamma / sum(w) == pytest.approx(f)


def test_the_residual_model_learns_where_the_panel_is_reliable() -> None:
    pool = pool_of([("A", "A")] * 30 + [("A", "B")] * 30)
    verdicts = {c.id: ("A",) for c in pool}  # experts always agree with a unanimous panel
    model = da.residual_model(pool, verdicts)
    assert model[0] == pytest.approx(3 * 0.25 / 33)  # 30 residuals of 0 shrunk by 3 pseudo-verdicts
    assert model[4] == pytest.approx(0.25)  # split panels: residual 0.25 either way
    w = da.active_weights(pool, model)
    assert w[-1] > 1.5 * w[0]


@pytest.mark.parametrize(
    ("floor", "model", "message"),
    [
        (0.0, None, "floor must be in"),
        (1.5, None, "floor must be in"),
        (0.3, (0.25, 0.25), "needs 5 positive values"),
        (0.3, (0.25, 0.0, 0.25, 0.25, 0.25), "needs 5 positive values"),
        (0.3, (0.25, float("nan"), 0.25, 0.25, 0.25), "needs 5 positive values"),
    ],
)
def test_bad_weights_are_refused(floor: float, model, message: str) -> None:
    with pytest.raises(AssignmentError, match=message):
        da.active_weights(pool_of([("A",)]), model, floor)


def test_the_domain_and_stats_weights_agree() -> None:
    rng = random.Random(3)
    names = ("A", "B", "tie")
    pool = pool_of([tuple(rng.choice(names) for _ in range(rng.randint(0, 6))) for _ in range(40)])
    model = (0.05, 0.12, 0.2, 0.22, 0.25)
    yhat = np.array([np.nan if da.panel_points(c) is None else da.panel_points(c) for c in pool])
    assert np.allclose(active.active_weights(yhat, np.array(model))[0], da.active_weights(pool, model))
    assert (
        active.FLOOR == da.ACTIVE_FLOOR and active.BIN_EDGES == da.ACTIVE_BIN_EDGES and active.PRIOR == da.ACTIVE_PRIOR
    )
    assert active.OVERLAP_Z == da.ACTIVE_OVERLAP_Z and active.STEER == da.ACTIVE_STEER


def _steering_pool(seed: int) -> tuple[list[da.PoolComparison], dict[str, list[str]]]:
    """Four candidates, 12 rounds; experts clearly rank A > B > (C ~ D): C and D overlap, A is apart."""
    rng = random.Random(seed)
    names = ("A", "B", "C", "D")
    strength = {"A": 3.0, "B": 1.5, "C": 0.0, "D": 0.0}
    pool, verdicts = [], {}
    for t in range(12):
        for i, x in enumerate(names):
            for y in names[i + 1 :]:
                cid = f"t{t}-{x}{y}"
                pool.append(
                    da.PoolComparison(cid, 0, f"t{t}", "m", x, y, (x, x, y) if rng.random() < 0.5 else (x, y, y))
                )
                p = 1.0 / (1.0 + math.exp(-(strength[x] - strength[y])))
                verdicts[cid] = [x if rng.random() < p else y]
    return pool, verdicts


def test_the_steering_raises_the_chance_of_overlapping_pairs() -> None:
    pool, verdicts = _steering_pool(5)
    steering = da.overlap_steering(pool, verdicts)
    model = da.residual_model(pool, verdicts)
    weights = dict(zip((c.id for c in pool), da.active_weights(pool, model, steering=steering), strict=True))
    flat = dict(zip((c.id for c in pool), da.active_weights(pool, model), strict=True))

    def share(w: dict[str, float], pair: str) -> float:
        return sum(v for k, v in w.items() if k.endswith(pair)) / sum(w.values())

    # The overlapping pair C-D gains chance; the separated pair A-D loses it.
    assert share(weights, "-CD") > share(flat, "-CD")
    assert share(weights, "-AD") < share(flat, "-AD")
    # The floor still holds: every comparison keeps at least floor / U of the weight.
    total = sum(weights.values())
    assert min(weights.values()) / total >= da.ACTIVE_FLOOR / len(pool) - 1e-12
    # Without expert verdicts (variances at the prior) every pair of a round robin overlaps about alike.
    unsteered = list(da.overlap_steering(pool, {}).values())
    assert max(unsteered) / min(unsteered) < 1.01
    # The vectorised weights agree with the domain's.
    k_of = {"A": 0, "B": 1, "C": 2, "D": 3}
    a = np.array([k_of[c.candidate_a] for c in pool])
    b = np.array([k_of[c.candidate_b] for c in pool])
    yhat = np.array([[da.panel_points(c) for c in pool]])
    y = np.array([[1.0 if verdicts[c.id][0] == c.candidate_a else 0.0 for c in pool]])
    got = active.overlap_steering(a, b, 4, yhat, y, np.ones_like(y, dtype=bool))[0]
    assert np.allclose(got, [steering[c.id] for c in pool])
    with pytest.raises(da.AssignmentError, match="at least 0"):
        da.overlap_steering(pool, verdicts, steer=-1.0)
    with pytest.raises(da.AssignmentError, match="positive and finite"):
        da.active_weights(pool, model, steering={pool[0].id: 0.0})


# -- draws -------------------------------------------------------------------------------------


def test_draws_are_without_replacement_with_the_probability_of_each_draw() -> None:
    pool = pool_of([()] * 4)
    weights = [1.0, 2.0, 3.0, 4.0]
    drawn = da.active_draws(pool, weights, 4, random.Random(1))
    assert sorted(c.id for c, _ in drawn) == [c.id for c in pool]
    left = 10.0
    for c, p in drawn:
        w = weights[int(c.id[1:])]
        assert p == pytest.approx(w / left)
        left -= w
    assert drawn[-1][1] == pytest.approx(1.0)


def test_draw_frequencies_match_the_stated_probabilities() -> None:
    pool = pool_of([()] * 3)
    weights = [1.0, 1.0, 2.0]
    rng = random.Random(7)
    firsts = [da.active_draws(pool, weights, 1, rng)[0][0].id for _ in range(4000)]
    assert firsts.count("c02") / 4000 == pytest.approx(0.5, abs=0.03)


def test_a_zero_or_missing_weight_is_refused() -> None:
    pool = pool_of([()] * 2)
    with pytest.raises(AssignmentError, match="positive draw weight"):
        da.active_draws(pool, [1.0, 0.0], 1, random.Random(1))
    with pytest.raises(AssignmentError, match="one draw weight per comparison"):
        da.active_draws(pool, [1.0], 1, random.Random(1))


def test_plan_stores_probabilities_refuses_repeats_and_ends_when_nothing_is_left() -> None:
    pool = pool_of([("A", "A"), ("A", "B"), ()] * 3)
    planned = plan_assignments(pool, ANN, [], 5, "active", seed=4)
    assert len(planned) == 5 and len({p.comparison_id for p in planned}) == 5
    assert all(p.strategy == "active" and 0.0 < (p.probability or 0.0) <= 1.0 for p in planned)
    assert planned == plan_assignments(pool, ANN, [], 5, "active", seed=4)  # seeded
    with pytest.raises(AssignmentError, match="no swapped repeats"):
        plan_assignments(pool, ANN, [], 5, "active", seed=4, repeat_share=0.2)
    held = [da.ExistingAssignment("ann", c.id, 0, False, True, i) for i, c in enumerate(pool)]
    assert plan_assignments(pool, ANN, held, 3, "active", seed=4) == []


# -- the estimator -----------------------------------------------------------------------------


def test_the_estimate_is_exactly_unbiased_over_every_ordered_draw() -> None:
    """Enumerate every ordered pair of draws from 4 comparisons with unequal weights: E[theta] is the truth."""
    a, b, k = np.array([0, 0, 1, 1]), np.array([1, 2, 2, 2]), 3
    y = np.array([1.0, 0.0, 0.5, 1.0])
    yhat = np.array([0.75, 0.25, 0.5, np.nan])
    w = np.array([1.0, 2.0, 3.0, 1.5])
    ma, mb = ppr.incidence(a, b, k)
    truth = (ma @ y + mb @ (1 - y)) / (ma + mb).sum(1)
    for lam in ("zero", "one", 0.4):
        expected = np.zeros(k)
        for order in itertools.permutations(range(4), 2):
            prob, left, ps = 1.0, w.sum(), []
            for u in order:
                ps.append(w[u] / left)
                prob *= w[u] / left
                left -= w[u]
            est = active.active_estimate(
                a, b, k, yhat, np.array([order]), np.array([ps]), y[list(order)][None], lam=lam, min_labeled=0
            )
            expected += prob * est.theta[0]
        assert expected == pytest.approx(truth, abs=1e-12), lam


def test_the_estimate_stays_unbiased_when_the_steered_weights_follow_earlier_verdicts() -> None:
    """Every ordered triple of draws from 5 comparisons, each draw's weights refitted (residual model and
    overlap steering) on the verdicts drawn before it: E[theta] is still the truth exactly."""
    a, b, k = np.array([0, 0, 1, 1, 2]), np.array([1, 2, 2, 3, 3]), 4
    y = np.array([1.0, 0.0, 0.5, 1.0, 0.0])
    yhat = np.array([0.9, 0.3, 0.5, np.nan, 0.1])
    s, r2 = active.uncertainty(yhat[None]), (y - np.nan_to_num(yhat, nan=0.5)) ** 2
    ma, mb = ppr.incidence(a, b, k)
    truth = (ma @ y + mb @ (1 - y)) / (ma + mb).sum(1)
    expected = np.zeros(k)
    weights_seen = set()
    for order in itertools.permutations(range(5), 3):
        prob, ps = 1.0, []
        drawn = np.zeros((1, 5), dtype=bool)
        for u in order:
            model = active.residual_model(s, r2[None], drawn) if drawn.any() else None
            steer = active.overlap_steering(a, b, k, yhat[None], y[None], drawn)
            w = np.where(drawn, 0.0, active.active_weights(yhat[None], model, active.FLOOR, steer))[0]
            weights_seen.add(tuple(np.round(w / w.sum(), 9)))
            ps.append(w[u] / w.sum())
            prob *= ps[-1]
            drawn[0, u] = True
        est = active.active_estimate(
            a, b, k, yhat, np.array([order]), np.array([ps]), y[list(order)][None], lam=0.4, min_labeled=0
        )
        expected += prob * est.theta[0]
    assert len(weights_seen) > 10  # the weights did follow the verdicts
    assert expected == pytest.approx(truth, abs=1e-12)


@pytest.mark.parametrize(
    ("p", "y", "message"),
    [
        ([[0.5, 0.0]], [[1.0, 0.0]], "in \\(0, 1\\]"),
        ([[0.5, 1.5]], [[1.0, 0.0]], "in \\(0, 1\\]"),
        ([[0.5, np.nan]], [[1.0, 0.0]], "in \\(0, 1\\]"),
        ([[0.5, 0.5]], [[1.0, np.nan]], "needs the expert's verdict"),
        ([[0.5]], [[1.0, 0.0]], "differ in shape"),
    ],
)
def test_the_estimator_refuses_impossible_draws(p, y, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        active.active_estimate(np.array([0, 1]), np.array([1, 2]), 3, np.array([[0.5, 0.5]]), np.array([[0, 1]]), p, y)


@pytest.fixture(scope="module")
def studies() -> active.ActiveStudies:
    return active.active_studies(60, k=5, tasks=24, spread=3.0, seed=11)


@pytest.mark.parametrize("design", ["uniform", "active"])
def test_planted_truth_coverage_holds(studies: active.ActiveStudies, design: str) -> None:
    """60 seeded studies, 100 expert comparisons of 240: per-candidate 90% intervals and 90% rank-sets cover."""
    rng = np.random.default_rng(5)
    if design == "uniform":
        idx, p = active.successive_draws(np.ones_like(studies.yhat), 100, rng)
    else:
        idx, p = active.staged_draws(studies.yhat, studies.y, 100, 4, rng)
    est = active.active_estimate(
        studies.a, studies.b, studies.k, studies.yhat, idx, p, np.take_along_axis(studies.y, idx, -1)
    )
    z = np.abs(est.theta - studies.theta) / est.se
    assert np.mean(z < 1.645) >= 0.84  # 300 intervals: 0.90 nominal, 0.84 is 3 SE below
    low, high = ppr.rank_sets(est.theta, est.sigma, 0.1)
    assert ppr.covers(low, high, ppr.ranks_of(studies.theta)).mean() >= 0.88
    assert np.all(est.labeled.sum(-1) == 200)  # every draw involves two candidates


def test_a_candidate_never_drawn_is_not_ordered(studies: active.ActiveStudies) -> None:
    keep = np.flatnonzero((studies.a != 0) & (studies.b != 0))[:30]
    p = np.full((1, 30), 0.5)
    est = active.active_estimate(
        studies.a, studies.b, studies.k, studies.yhat[:1], keep[None], p, studies.y[:1, keep], min_labeled=1
    )
    assert np.isnan(est.theta[0, 0]) and np.isfinite(est.theta[0, 1:]).all()
    low, high = ppr.rank_sets(est.theta[0], est.sigma[0])
    assert (low[0], high[0]) == (1, studies.k)


# -- the store, the command and the seats ------------------------------------------------------


def test_assign_active_stores_each_draw_probability(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    out = CliRunner().invoke(cli, ["assign", str(path), "--expert", "ann", "--n", "5", "--strategy", "active"])
    assert out.exit_code == 0, out.output
    assert "draw probabilities" in out.output and "stored with each place" in out.output
    with sqlite3.connect(path.with_suffix(".db")) as db:
        rows = db.execute(
            "SELECT strategy, probability FROM expert_assignments WHERE expert = 'ann' ORDER BY position"
        ).fetchall()
    assert len(rows) == 5 and all(s == "active" and 0.0 < p <= 1.0 for s, p in rows)
    # No expert verdict yet: uniform, the first draw 1 / (comparisons ann may judge).
    assert rows[0][1] == pytest.approx(1 / 32)
    out = CliRunner().invoke(cli, ["assign", str(path), "--expert", "ann", "--n", "2", "--strategy", "stratified"])
    with sqlite3.connect(path.with_suffix(".db")) as db:
        assert db.execute("SELECT count(*) FROM expert_assignments WHERE probability IS NULL").fetchone()[0] == 2


def test_invalid_strategy_combinations_exit_2_and_write_nothing(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    args = ["assign", str(path), "--expert", "ann", "--n", "3"]
    out = CliRunner().invoke(cli, [*args, "--strategy", "active", "--repeat-share", "0.2"])
    assert out.exit_code == 2 and "no swapped repeats" in out.output and "Traceback" not in out.output
    out = CliRunner().invoke(cli, [*args, "--strategy", "activ"])
    assert out.exit_code == 2 and "active" in out.output
    with sqlite3.connect(path.with_suffix(".db")) as db:
        assert db.execute("SELECT count(*) FROM expert_assignments").fetchone()[0] == 0


def _judge_all(path: Path, expert: str) -> int:
    """Submit every pending comparison of the expert's queue through the seat's use case; how many."""
    study = load_session(path)
    done = 0
    with Store(study.database) as store:
        source = open_judging(study, store, expert)
        while (place := next((q for q in source.queue() if q.state == "pending"), None)) is not None and done < 50:
            source.submit(place.key, complete_draft(source.item(place.key).rubric))
            done += 1
    return done


def test_an_actively_assigned_expert_gets_the_next_draw_until_nothing_is_left(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    study = load_session(path)
    with Store(study.database) as store:
        assign_comparisons(study, store, "ann", 2, "active")
    assert _judge_all(path, "ann") == 32  # 2 assigned, then one drawn after each submission, to the end
    with Store(study.database) as store:
        probs = ExpertStore(store).active_probabilities("ann")
        assert len(probs) == 32 and probs[-1][1] == pytest.approx(1.0)  # the last comparison left: certain
        assert ExpertStore(store).workload()["ann"] == (32, 32)
        again = open_judging(study, store, "ann")  # nothing left: no error, no new place
        assert not again.refill() and ExpertStore(store).workload()["ann"] == (32, 32)


def test_skipping_the_last_active_place_draws_the_next(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    study = load_session(path)
    with Store(study.database) as store:
        assign_comparisons(study, store, "ann", 1, "active")
        source = open_judging(study, store, "ann")
        source.set_state(source.queue()[0].key, "skipped")
        assert [q.state for q in source.queue()] == ["skipped", "pending"]
        assert len(ExpertStore(store).active_probabilities("ann")) == 2


def test_a_stratified_queue_is_not_refilled_unless_the_session_says_active(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    study = load_session(path)
    with Store(study.database) as store:
        assign_comparisons(study, store, "ann", 2, "stratified")
    assert _judge_all(path, "ann") == 2
    with_judging(path, 'expert_next = "active"')
    study = load_session(path)
    with Store(study.database) as store:
        source = open_judging(study, store, "ann")  # the setting: a finished queue gets its next draw
        assert ExpertStore(store).workload()["ann"] == (3, 2)
        assert len(ExpertStore(store).active_probabilities("ann")) == 1
        assert not source.refill()  # one pending already


def test_a_bad_expert_next_setting_names_the_field(tmp_path: Path) -> None:
    path = with_judging(judged_session(tmp_path), 'expert_next = "sometimes"')
    out = CliRunner().invoke(cli, ["assign", str(path), "--expert", "ann", "--n", "1"])
    assert out.exit_code == 2 and "expert_next" in out.output


def test_the_report_weights_active_draws_and_counts_what_it_could_not_use(tmp_path: Path) -> None:
    import json

    from centaur_tui.domain.assignment import PlannedAssignment
    from centaur_tui.domain.session import JudgeSimulation
    from centaur_tui.pipeline.expert_sim import simulate_expert_judgments
    from centaur_tui.store import comparison_texts, store_judgments

    path = judged_session(tmp_path)
    study = load_session(path)
    with Store(study.database) as store:
        assign_comparisons(study, store, "ann", 2, "stratified")  # known values before the draws
        assign_comparisons(study, store, "ann", 12, "active")
        assign_comparisons(study, store, "bob", 1, "active")  # one draw: too few for a sequence
        places = [
            (a.expert, PlannedAssignment(a.comparison_id, a.presentation, a.flipped, "?"))
            for a in ExpertStore(store).existing()
            if a.position != 10  # ann's 10th place stays unjudged: her sequence is cut there
        ]
        records = simulate_expert_judgments(
            study, store.comparisons(), comparison_texts(store), places, JudgeSimulation(noise=0.5)
        )
        store_judgments(store, records)
    out = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["report", str(path), "--json", str(out), "--quiet", "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    act = doc["active"]
    assert act["experts"] == 1 and act["draws"] == 7 and act["draws_not_used"] == 5 + 1
    assert sum(m["draws"] for m in act["modes"]) == 7 * len(act["modes"])  # a sequence spans the modes
    for m in act["modes"]:
        assert all(1 <= r["low"] <= r["high"] <= m["candidates"] for r in m["rows"])
        assert set(m["mean_set_size"]) == {"active", "experts_only"}
    assert doc["ppr"]["excluded_not_random"].get("active") == 12  # judged active draws: PPR leaves them out, counted
    text = CliRunner().invoke(cli, ["report", str(path), "--bootstrap", "0"])
    assert "Rankings from active draws" in text.output and "active draw(s) of 1 expert(s) used" in text.output


def test_every_strategy_has_a_line_in_the_app_dialog() -> None:
    from centaur_tui.domain.assignment import STRATEGIES
    from centaur_tui.ui.screens.dialogs import STRATEGY_HELP

    assert set(STRATEGY_HELP) == set(STRATEGIES)


def test_the_report_estimator_agrees_with_the_vectorised_one(studies: active.ActiveStudies) -> None:
    """One expert's sequence with no other places: `active_rankings`' arithmetic equals `active_estimate`'s."""
    rng = np.random.default_rng(2)
    idx, p = active.staged_draws(studies.yhat[:1], studies.y[:1], 40, 4, rng)
    y = np.take_along_axis(studies.y[:1], idx, -1)
    want = active.active_estimate(studies.a, studies.b, studies.k, studies.yhat[:1], idx, p, y)
    k = studies.k
    ma, mb = ppr.incidence(studies.a, studies.b, k)
    n_m = (ma + mb).sum(1)
    yc = np.nan_to_num(studies.yhat[0], nan=0.5) - 0.5
    mean_all = ((ma - mb) @ yc) / n_m
    sign = (ma - mb).T
    events = [(sign[u] * (y[0, t] - 0.5), sign[u] * yc[u], float(p[0, t])) for t, u in enumerate(idx[0])]
    got = active._expert_estimate(k, n_m, mean_all, events, "tuned")
    assert got is not None
    assert (
        np.allclose(got[0], want.theta[0]) and np.allclose(got[1], want.sigma[0]) and np.allclose(got[2], want.lam[0])
    )


def test_the_simulator_takes_a_leaderboard_of_its_own() -> None:
    """Close leaders (bench/active.py's world): the truth orders as the qualities given; a wrong count is refused."""
    st = active.active_studies(40, k=4, tasks=30, qualities=(1.0, 0.9, -0.5, -1.5), expert_scale=3.0, seed=2)
    assert (ppr.ranks_of(st.theta.mean(0, keepdims=True))[0] == [1, 2, 3, 4]).all()
    gap = st.theta[:, 0] - st.theta[:, 1]
    assert 0 < gap.mean() < (st.theta[:, 1] - st.theta[:, 2]).mean()
    with pytest.raises(ValueError, match="k = 4"):
        active.active_studies(2, k=4, qualities=(1.0, 0.0))
