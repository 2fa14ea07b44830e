"""Reasoning Arena's pure core against hand-worked cases and independent references (Reasoning
Arena paper, §3-4): routing, soft outcomes, the live scheduler, and the Bradley-Terry fit (choix and a
Newton solver)."""

from __future__ import annotations

import random
from itertools import combinations

import choix
import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import kendalltau

from trainers.methods.arena.bt import bt_objective, fit_bt, minmax
from trainers.methods.arena.judge import SWAP
from trainers.methods.arena.tournament import (
    VERDICTS,
    LiveTournament,
    Match,
    arrival_order,
    mirror,
    round_robin_pairs,
    route,
    soft_outcome,
    win_rates,
)

GAMMAS = (0.51, 0.75, 0.9, 1.0)


def play(tournament: LiveTournament, judge) -> list[list[tuple[int, int]]]:
    """Run the schedule to the end with `judge(new, anchor) -> outcome`; the pairs asked per arrival."""
    asked = []
    while not tournament.finished:
        pairs = tournament.next_pairs()
        asked.append(pairs)
        tournament.record([judge(new, anchor) for new, anchor in pairs])
    return asked


def live_calls(n: int, anchors: int = 3) -> int:
    """The live schedule's judge calls for a group of n (§4): sum_{k=2..n} min(k-1, anchors)."""
    return sum(min(k - 1, anchors) for k in range(2, n + 1))


def noiseless(beta):
    """γ = 1 transitive judge: the stronger trace wins."""
    return lambda a, b: 1.0 if beta[a] > beta[b] else 0.0


def noisy(beta, rng: np.random.Generator):
    """Bradley-Terry judge: the first trace wins with probability σ(β_a - β_b)."""
    return lambda a, b: float(rng.random() < expit(beta[a] - beta[b]))


def live_fit(beta: np.ndarray, seed: int, judge) -> np.ndarray:
    order = list(range(len(beta)))
    random.Random(seed).shuffle(order)
    tournament = LiveTournament(order)
    play(tournament, judge)
    return fit_bt(tournament.matches, len(beta)).beta


def connected(matches, n: int) -> bool:
    reach, frontier = {0}, [0]
    while frontier:
        k = frontier.pop()
        for i, j, _ in matches:
            for a, b in ((i, j), (j, i)):
                if a == k and b not in reach:
                    reach.add(b)
                    frontier.append(b)
    return len(reach) == n


def random_soft_matches(rng: np.random.Generator, pairs) -> list[Match]:
    return [Match(i, j, float(o)) for (i, j), o in zip(pairs, rng.random(len(pairs)), strict=True)]


# --- routing (Eqs. 3-5) -----------------------------------------------------------------------------


def test_route_all_correct_all_incorrect_and_mixed():
    assert route([1, 1, 1, 1, 1, 1, 1, 1]) == "all_correct"
    assert route([0, 0, 0, 0, 0, 0, 0, 0]) == "all_incorrect"
    assert route([1, 0, 0, 0, 0, 0, 0, 0]) is None
    assert route([0.0, 1.0]) is None


def test_route_float_rewards_with_tiny_variance_and_a_single_trace():
    assert route([0.3, 0.3 + 1e-12, 0.3]) == "all_incorrect"
    assert route([0.9, 0.9 - 1e-12]) == "all_correct"
    assert route([0.3, 0.3 + 1e-6]) is None  # population std 5e-7 > atol 1e-8
    assert route([0.3, 0.3 + 1e-6], atol=1e-6) == "all_incorrect"
    assert route([1.0]) == "all_correct" and route([0.0]) == "all_incorrect"
    with pytest.raises(ValueError):
        route([])


# --- soft outcomes and the judge's A/B remap (Eq. 7) ------------------------------------------------


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("verdict", VERDICTS)
def test_outcomes_of_a_pair_sum_to_one(verdict, gamma):
    # A verdict on (i, j) read from j's side is the swapped one: o_ij + o_ji = 1, what mirroring assumes.
    o_ij = soft_outcome(verdict, gamma)
    o_ji = soft_outcome(SWAP[verdict], gamma)
    assert o_ij + o_ji == pytest.approx(1.0, abs=1e-15)
    assert mirror([Match(0, 1, o_ij)])[1].o == pytest.approx(o_ji, abs=1e-15)
    # A judge shown (j, i) that prefers the same trace gives the swapped verdict; remapped, it is unchanged.
    assert SWAP[SWAP[verdict]] == verdict


def test_soft_outcome_values():
    assert [soft_outcome(v, 0.9) for v in VERDICTS] == [0.9, pytest.approx(0.1), 0.5]
    assert [soft_outcome(v, 1.0) for v in VERDICTS] == [1.0, 0.0, 0.5]
    assert [soft_outcome("Tie", g) for g in GAMMAS] == [0.5] * 4


def test_the_judges_remap_flips_a_and_b():
    assert [SWAP[v] for v in VERDICTS] == ["B", "A", "Tie"]
    # Trace j shown first wins ("A" on the screen) -> canonical "B": i's outcome is 1 - γ.
    assert soft_outcome(SWAP["A"], 0.75) == 0.25


@pytest.mark.parametrize("gamma", [0.5, 0.4, 1.01, -1.0])
def test_soft_outcome_rejects_gamma_outside_half_open_interval(gamma):
    with pytest.raises(ValueError, match="gamma"):
        soft_outcome("A", gamma)


def test_unknown_verdicts_are_rejected():
    with pytest.raises(ValueError):
        soft_outcome("C", 0.9)


def test_mirror_interleaves_each_match_with_its_reverse():
    assert mirror([Match(0, 1, 0.9), Match(2, 0, 0.5)]) == [
        (0, 1, 0.9),
        (1, 0, pytest.approx(0.1)),
        (2, 0, 0.5),
        (0, 2, 0.5),
    ]


def test_round_robin_pairs_and_win_rates_by_hand():
    assert round_robin_pairs(3) == [(0, 1), (0, 2), (1, 2)]
    assert len(round_robin_pairs(8)) == 28 and round_robin_pairs(1) == []
    matches = [Match(0, 1, 1.0), Match(0, 2, 0.5), Match(1, 2, 0.25)]
    # 0: (1 + 0.5)/2; 1: (0 + 0.25)/2; 2: (0.5 + 0.75)/2; Eq. 8 with N - 1 = 2.
    assert win_rates(matches, 3) == [0.75, 0.125, 0.625]
    assert win_rates([Match(0, 1, 0.75)], 4) == [0.75, 0.25, None, None]


def test_arrival_orders():
    assert arrival_order([5, 3, 5, 1], "length", random.Random(0)) == [3, 1, 0, 2]
    assert arrival_order([5, 3, 5, 1], "index", random.Random(0)) == [0, 1, 2, 3]
    shuffled = arrival_order([5, 3, 5, 1, 2, 2, 9, 4], "random", random.Random(7))
    expected = list(range(8))
    random.Random(7).shuffle(expected)
    assert shuffled == expected and sorted(shuffled) == list(range(8))
    with pytest.raises(ValueError, match="arrival"):
        arrival_order([1, 2], "fifo", random.Random(0))


# --- live scheduler (§4) ----------------------------------------------------------------------------


def test_live_call_counts_for_n_1_to_10():
    expected = [0, 1, 3, 6, 9, 12, 15, 18, 21, 24]
    assert [live_calls(n) for n in range(1, 11)] == expected
    assert [live_calls(n, anchors=1) for n in range(1, 6)] == [0, 1, 2, 3, 4]
    assert [live_calls(n, anchors=2) for n in range(1, 6)] == [0, 1, 3, 5, 7]
    for n in range(1, 11):
        for anchors in (1, 2, 3):
            rng = random.Random(n * 10 + anchors)
            tournament = LiveTournament(arrival_order([0] * n, "random", rng), anchors=anchors)
            play(tournament, lambda a, b, rng=rng: rng.choice((0.0, 0.25, 0.5, 1.0)))
            assert tournament.calls == live_calls(n, anchors)


def test_hand_checked_five_trace_schedule():
    # True strengths β = [0, 3, 1, 4, 2]; arrivals 2, 0, 3, 1, 4; γ = 1 noiseless judge.
    #  2 arrives: nobody to play.
    #  0 plays [2] and loses                           -> wr 2: 1, 0: 0
    #  3 board [2, 0]: best 2, worst 0, median L[0] = 2 (dropped); beats both
    #                                                  -> wr 3: 1, 2: 1/2, 0: 0
    #  1 board [3, 2, 0]: best 3, worst 0, median L[1] = 2; loses to 3, beats 0 and 2
    #                                                  -> wr 3: 1, 1: 2/3, 2: 1/3, 0: 0
    #  4 board [3, 1, 2, 0]: best 3, worst 0, median L[(4-1)//2] = L[1] = 1; loses to 3 and 1, beats 0
    beta = [0.0, 3.0, 1.0, 4.0, 2.0]
    tournament = LiveTournament([2, 0, 3, 1, 4])
    asked = play(tournament, noiseless(beta))
    assert asked == [[], [(0, 2)], [(3, 2), (3, 0)], [(1, 3), (1, 0), (1, 2)], [(4, 3), (4, 0), (4, 1)]]
    assert [o for *_, o in tournament.matches] == [0, 1, 1, 0, 1, 1, 0, 1, 0]
    assert tournament.calls == 9 == live_calls(5)
    # Final win-rates 3: 4/4, 1: 3/4, 2: 1/3, 4: 1/3, 0: 0/4; 2 and 4 tie with one win each -> arrival.
    assert win_rates(tournament.matches, 5) == [0.0, 0.75, pytest.approx(1 / 3), 1.0, pytest.approx(1 / 3)]
    assert tournament.leaderboard() == [3, 1, 2, 4, 0]
    assert tournament.finished and tournament.next_pairs() == [] and tournament.anchors_for_next() == []


def test_fewer_anchors_keep_best_then_worst():
    # β rises with the index and traces arrive 0..3: every newcomer tops the board.
    one = LiveTournament([0, 1, 2, 3], anchors=1)
    assert play(one, noiseless([0, 1, 2, 3])) == [[], [(1, 0)], [(2, 1)], [(3, 2)]]
    two = LiveTournament([0, 1, 2, 3], anchors=2)
    assert play(two, noiseless([0, 1, 2, 3])) == [[], [(1, 0)], [(2, 1), (2, 0)], [(3, 2), (3, 0)]]


def test_noiseless_judge_best_and_worst_are_the_true_extremes_at_every_arrival():
    # Every arrival plays the current best and worst, so with γ = 1 exactly one arrived trace never lost
    # (the strongest) and exactly one never won (the weakest): they lead and close the board.
    for seed in range(50):
        rng = np.random.default_rng(seed)
        beta = rng.normal(size=8)
        order = rng.permutation(8).tolist()
        tournament = LiveTournament(order)
        while not tournament.finished:
            arrived = tournament.arrived
            anchors = tournament.anchors_for_next()
            if len(arrived) >= 1:
                assert anchors[0] == max(arrived, key=lambda k: beta[k])
            if len(arrived) >= 2:
                assert anchors[1] == min(arrived, key=lambda k: beta[k])
            if len(arrived) >= 3:
                assert anchors[2] not in anchors[:2]
            tournament.record([noiseless(beta)(a, b) for a, b in tournament.next_pairs()])


def test_opponents_are_distinct_earlier_arrivals_no_pair_twice_and_graph_connected():
    for seed in range(100):
        rng = random.Random(seed)
        n = rng.randint(2, 10)
        order = arrival_order([0] * n, "random", rng)
        tournament = LiveTournament(order)
        seen: set[frozenset[int]] = set()
        while not tournament.finished:
            arrived = set(tournament.arrived)
            pairs = tournament.next_pairs()
            new = order[len(arrived)]
            opponents = [b for _, b in pairs]
            assert all(a == new for a, _ in pairs)
            assert len(set(opponents)) == len(opponents) and set(opponents) <= arrived
            for a, b in pairs:
                assert frozenset((a, b)) not in seen
                seen.add(frozenset((a, b)))
            tournament.record([rng.choice((0.0, 0.1, 0.5, 0.9, 1.0)) for _ in pairs])
        assert connected(tournament.matches, n)
        assert len(tournament.matches) == tournament.calls == live_calls(n)


def test_unparsable_verdicts_count_as_calls_but_record_no_match():
    tournament = LiveTournament([0, 1, 2])
    tournament.record([])
    tournament.record([None])  # 1 vs 0 unparsable: neither has a match, both rank at 0.5 -> arrival
    assert tournament.calls == 1 and tournament.matches == []
    assert tournament.leaderboard() == [0, 1]
    assert tournament.next_pairs() == [(2, 0), (2, 1)]
    tournament.record([None, 0.0])
    assert tournament.calls == 3 and tournament.matches == [(2, 1, 0.0)]
    assert tournament.leaderboard() == [1, 0, 2]  # 1 at 1.0, unplayed 0 at 0.5, 2 at 0.0
    assert not connected(tournament.matches, 3)


def test_tie_rules_on_a_constructed_tie():
    # Arrivals 0, 1, 2, 3. 1 ties 0; 2 ties 0 and 1 (all at 0.5, no wins -> board [0, 1, 2] by arrival).
    # 3 plays best 0, worst 2, median 1: beats 0, loses to 2, ties 1.
    # Win-rates 2: 2/3 (1 win), 1: 1/2 (0 wins), 3: 1/2 (1 win), 0: 1/3.
    boards = {}
    for ties in ("wins", "arrival"):
        tournament = LiveTournament([0, 1, 2, 3], ties=ties)
        for outcomes in ([], [0.5], [0.5, 0.5]):
            tournament.record(outcomes)
        assert tournament.leaderboard() == [0, 1, 2]
        assert tournament.next_pairs() == [(3, 0), (3, 2), (3, 1)]
        tournament.record([1.0, 0.0, 0.5])
        boards[ties] = tournament.leaderboard()
    assert boards == {"wins": [2, 3, 1, 0], "arrival": [2, 1, 3, 0]}


def test_live_tournament_rejects_bad_input():
    with pytest.raises(ValueError, match="permutation"):
        LiveTournament([0, 2])
    with pytest.raises(ValueError, match="anchors"):
        LiveTournament([0, 1], anchors=4)
    with pytest.raises(ValueError, match="ties"):
        LiveTournament([0, 1], ties="random")
    tournament = LiveTournament([0, 1])
    tournament.record([])
    with pytest.raises(ValueError, match="expected 1"):
        tournament.record([1.0, 0.0])
    with pytest.raises(ValueError, match="outcome"):
        tournament.record([1.5])
    tournament.record([1.0])
    with pytest.raises(ValueError, match="arrived"):
        tournament.record([])


# --- Bradley-Terry recovery ------------------------------------------------------------------------


def test_live_schedule_and_bt_recover_a_noiseless_ranking():
    # A feasibility run (500 seeds): mean τ 0.87, extremes recovered every time.
    taus = []
    for seed in range(100):
        beta = np.random.default_rng(seed).normal(size=8)
        fitted = live_fit(beta, seed, noiseless(beta))
        taus.append(kendalltau(fitted, beta).statistic)
        assert fitted.argmax() == beta.argmax() and fitted.argmin() == beta.argmin()
    assert np.mean(taus) >= 0.8


def test_round_robin_and_bt_recover_a_noiseless_ranking_exactly():
    for seed in range(20):
        beta = np.random.default_rng(seed).normal(size=8)
        matches = [Match(i, j, noiseless(beta)(i, j)) for i, j in round_robin_pairs(8)]
        assert kendalltau(fit_bt(matches, 8).beta, beta).statistic == pytest.approx(1.0)


def test_live_schedule_and_bt_with_a_noisy_judge_beat_chance():
    # P(new wins) = σ(β_new - β_anchor); a feasibility run measured τ ≈ 0.58, random ranking has mean τ 0.
    taus = []
    for seed in range(100):
        rng = np.random.default_rng(seed)
        beta = rng.normal(size=8)
        fitted = live_fit(beta, seed, noisy(beta, rng))
        taus.append(kendalltau(fitted, beta).statistic)
    assert np.mean(taus) > 0.3


# --- Bradley-Terry numerics (Eq. 10) ----------------------------------------------------------------


def central_gradient(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])


def test_objective_by_hand_and_its_gradient_matches_finite_differences():
    # One match (0, 1, 0.75) at β = (1, 0): -(0.75 log σ(1) + 0.25 log σ(-1)) + 0.5 (1 + 0).
    value, grad = bt_objective(np.array([1.0, 0.0]), [Match(0, 1, 0.75)])
    assert value == pytest.approx(-(0.75 * np.log(expit(1)) + 0.25 * np.log(expit(-1))) + 0.5)
    assert grad == pytest.approx([expit(1) - 0.75 + 1.0, -(expit(1) - 0.75)])
    rng = np.random.default_rng(0)
    for l2 in (0.0, 0.5, 2.0):
        matches = mirror(random_soft_matches(rng, round_robin_pairs(6)[:11]))
        beta = rng.normal(scale=2.0, size=6)
        numeric = central_gradient(lambda b, m=matches, l2=l2: bt_objective(b, m, l2)[0], beta)
        np.testing.assert_allclose(bt_objective(beta, matches, l2)[1], numeric, atol=1e-7)


def test_objective_is_strictly_convex():
    # The likelihood's Hessian is PSD, the ridge adds 2·l2·I: every eigenvalue is at least 2·l2 = 1.
    rng = np.random.default_rng(1)
    matches = mirror(random_soft_matches(rng, round_robin_pairs(5)))
    for _ in range(10):
        beta = rng.normal(scale=3.0, size=5)
        rows = [lambda b, k=k: bt_objective(b, matches)[1][k] for k in range(5)]
        hessian = np.array([central_gradient(row, beta, h=1e-5) for row in rows])
        np.testing.assert_allclose(hessian, hessian.T, atol=1e-6)
        assert np.linalg.eigvalsh(hessian).min() >= 1.0 - 1e-6


def test_ridge_keeps_an_unbeaten_trace_finite():
    wins = [Match(0, j, 1.0) for j in range(1, 8)]
    matches = wins + [Match(i, j, 0.5) for i, j in combinations(range(1, 8), 2)]
    fit = fit_bt(matches, 8)
    assert fit.converged and np.isfinite(fit.beta).all()
    assert fit.beta.argmax() == 0 and 0 < fit.beta[0] < 5
    np.testing.assert_allclose(fit.beta[1:], fit.beta[1], atol=1e-5)  # the six others are interchangeable


def test_all_ties_give_zero_strengths_and_a_degenerate_minmax():
    fit = fit_bt([Match(i, j, 0.5) for i, j in round_robin_pairs(8)], 8)
    np.testing.assert_allclose(fit.beta, 0.0, atol=1e-6)
    assert fit.iterations == 0 and fit.converged  # the gradient at β = 0 is already 0
    rewards, degenerate = minmax(fit.beta)
    assert rewards == [0.5] * 8 and degenerate and not np.isnan(rewards).any()


def test_no_matches_and_unplayed_traces():
    fit = fit_bt([], 3)
    assert fit.beta.tolist() == [0.0, 0.0, 0.0] and fit.iterations == 0 and fit.converged
    fit = fit_bt([Match(0, 1, 1.0)], 3)
    assert abs(fit.beta[2]) < 1e-6 and fit.beta[0] == pytest.approx(-fit.beta[1], abs=1e-6)


def test_minmax_by_hand():
    assert minmax([1.0, 3.0, 2.0]) == ([0.0, 1.0, 0.5], False)
    assert minmax([-0.5, 0.5]) == ([0.0, 1.0], False)
    assert minmax([0.2, 0.2 + 1e-13]) == ([0.5, 0.5], True)


def test_mirroring_doubles_the_likelihood_weight():
    # L_mirrored(β; l2) = 2 · L_given(β; l2 / 2): the same optimum.
    rng = np.random.default_rng(2)
    for _ in range(5):
        matches = random_soft_matches(rng, [(i, j) for i, j in round_robin_pairs(7) if rng.random() < 0.5])
        mirrored = fit_bt(matches, 7, l2=0.5).beta
        np.testing.assert_allclose(fit_bt(matches, 7, l2=0.25, mirrored=False).beta, mirrored, atol=1e-4)


def test_mirrored_and_unmirrored_fits_order_a_complete_graph_alike():
    # On a complete graph the stationarity condition sum_j σ(β_i - β_j) + λ β_i = sum_j o_ij is increasing
    # in β_i, so both fits order by win-rate whatever the ridge weight.
    rng = np.random.default_rng(3)
    for _ in range(10):
        matches = random_soft_matches(rng, round_robin_pairs(8))
        mirrored, given = fit_bt(matches, 8).beta, fit_bt(matches, 8, mirrored=False).beta
        assert np.argsort(mirrored).tolist() == np.argsort(given).tolist()


def test_on_an_incomplete_graph_the_order_can_depend_on_the_ridge_weight():
    # "The same ordering" holds on complete graphs only: 1 beat 0, 0 beat 2 and 3, 4 beat 1. With the
    # paper's (mirrored) weight 1's win over 0 decides; with half the likelihood weight 0's two wins do.
    matches = [Match(0, 1, 0.0), Match(0, 2, 1.0), Match(0, 3, 1.0), Match(1, 4, 0.0)]
    mirrored, given = fit_bt(matches, 5).beta, fit_bt(matches, 5, mirrored=False).beta
    assert mirrored[1] > mirrored[0] + 0.01 and given[0] > given[1] + 0.05


# --- independent references -------------------------------------------------------------------------


def choix_beta(matches, n: int, l2: float) -> np.ndarray:
    """choix 0.4.1 minimises alpha·||θ||² + NLL (opt.py, PairwiseFcts.objective: `penalty * sum(params**2)`
    plus one logaddexp per (winner, loser)). Our mirrored objective is 2·NLL + l2·||β||², half of which is
    NLL + (l2/2)·||β||²: the same minimiser with alpha = l2 / 2."""
    data = [(i, j) if o == 1.0 else (j, i) for i, j, o in matches]
    return choix.opt_pairwise(n, data, alpha=l2 / 2, method="Newton-CG", tol=1e-10)


@pytest.mark.parametrize("l2", [0.5, 0.1, 2.0])
def test_hard_outcome_fits_agree_with_choix(l2):
    rng = np.random.default_rng(4)
    graphs = [[Match(0, 1, 1.0), Match(1, 2, 1.0), Match(2, 0, 1.0), Match(3, 0, 0.0)]]  # a cycle and a tail
    graphs.append([Match(i, j, float(rng.random() < 0.7)) for i, j in round_robin_pairs(6)])
    for seed in range(5):
        beta = np.random.default_rng(seed).normal(size=8)
        order = list(range(8))
        random.Random(seed).shuffle(order)
        tournament = LiveTournament(order)
        play(tournament, noiseless(beta))
        graphs.append(tournament.matches)
    for matches in graphs:
        n = 1 + max(max(i, j) for i, j, _ in matches)
        np.testing.assert_allclose(fit_bt(matches, n, l2).beta, choix_beta(matches, n, l2), atol=1e-4)


def newton_beta(matches, n: int, l2: float) -> np.ndarray:
    """Newton's method on Eq. 10 over the mirrored matches, with its exact Hessian:
    2·l2·I + sum σ(d)σ(-d) (e_i - e_j)(e_i - e_j)ᵀ."""
    data = mirror(matches)
    beta = np.zeros(n)
    for _ in range(100):
        grad, hess = 2 * l2 * beta, 2 * l2 * np.eye(n)
        for i, j, o in data:
            p = expit(beta[i] - beta[j])
            grad[i] += p - o
            grad[j] -= p - o
            e = np.zeros(n)
            e[i], e[j] = 1.0, -1.0
            hess += p * (1 - p) * np.outer(e, e)
        step = np.linalg.solve(hess, grad)
        beta = beta - step
        if np.abs(step).max() < 1e-13:
            return beta
    raise AssertionError("Newton did not converge")


def test_soft_outcome_fits_agree_with_newtons_method():
    rng = np.random.default_rng(5)
    for n in (3, 5, 8):
        for _ in range(3):
            pairs = [p for p in round_robin_pairs(n) if rng.random() < 0.6] or [(0, 1)]
            matches = random_soft_matches(rng, pairs)
            fit = fit_bt(matches, n)
            assert fit.converged
            np.testing.assert_allclose(fit.beta, newton_beta(matches, n, 0.5), atol=1e-5)


def test_round_robin_win_rates_rank_like_the_bt_fit():
    rng = np.random.default_rng(6)
    for n in (4, 6, 8):
        for _ in range(5):
            matches = random_soft_matches(rng, round_robin_pairs(n))
            rates = np.array(win_rates(matches, n))
            assert np.argsort(rates).tolist() == np.argsort(fit_bt(matches, n).beta).tolist()
