#!/usr/bin/python3
"""test_changepoint.py — harness/history/dpscale_history/changepoint.py on examples worked by
hand from Matteson & James's definitions, and on series whose changes are known:

  energy_q        Q of [0,1,3,6] split 2|2: cross 16 -> 2/(2*2)*16 = 8, within 1 and 3 -> E = 4,
                  Q = 2*2/4 * 4 = 4. Of [0,0,0,5,5,5] split 3|3: cross 9*5 -> 10, E = 10,
                  Q = 9/6 * 10 = 15; split 2|4: cross 30 -> 7.5, Y's within 15/C(4,2) = 2.5,
                  E = 5, Q = 8/6 * 5 = 6.67.
                  With a right end: [0,0,0,5,5,5,0,0,0] at tau 3, kappa 6 is 15 again; with kappa
                  at the end Y = 555000: cross 2/18*45 = 5, Y's within 45/15 = 3, E = 2, Q = 4.
  fast path       q_grid equals energy_q at every (tau, kappa) of a random series.
  permutation p   [0,0,0,5,5,5] with 3 a side: only the split 3|3 exists; of the C(6,3) = 20 ways
                  to deal the values to the two sides, 2 give the observed Q (000|555, 555|000):
                  exact p = 0.1, which 9999 shuffles must approach.
  effect          Hodges-Lehmann of [0..4] -> [10..14]: differences 6..14 with counts 1..5..1,
                  median 10; C = floor(12.5 - 1.96 sqrt(25*11/12)) = 3: interval [d(3), d(23)]
                  = [7, 13]. Of [1,2,3] -> [4,5,6]: C = floor(4.5 - 4.49) = 0 -> 1: [1, 5].
  series          a 10% step in noise of 1% found at its index, two steps both, a flat series none.
And negative controls: the same series with the step removed reports nothing, and a mutated Q
(the within terms dropped) gives a different hand value, so the hand values can fail."""
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "history"))
sys.dont_write_bytecode = True
from dpscale_history import changepoint as cp  # noqa: E402


class WorkedExamples(unittest.TestCase):
    def test_energy_q_by_hand(self):
        self.assertAlmostEqual(cp.energy_q([0, 1, 3, 6], 2), 4.0)
        self.assertAlmostEqual(cp.energy_q([0, 0, 0, 5, 5, 5], 3), 15.0)
        self.assertAlmostEqual(cp.energy_q([0, 0, 0, 5, 5, 5], 2), 20.0 / 3)

    def test_energy_q_needs_two_a_side(self):
        with self.assertRaises(ValueError):
            cp.energy_q([1, 2, 3], 1)

    def test_fast_path_equals_the_definition(self):
        x = np.random.default_rng(7).normal(size=25)
        taus, kappas, q = cp.q_grid(x, 2)
        self.assertEqual(list(taus), list(range(2, 24)))
        self.assertEqual(list(kappas), list(range(4, 26)))
        checked = 0
        for i, t in enumerate(taus):
            for j, k in enumerate(kappas):
                if k - t < 2:
                    self.assertEqual(q[0, i, j], -np.inf)
                else:
                    self.assertAlmostEqual(q[0, i, j], cp.energy_q(x, t, k), places=9)
                    checked += 1
        self.assertEqual(checked, 22 * 23 // 2)  # every (tau, kappa) with 2 <= tau, tau + 2 <= kappa <= 25

    def test_energy_q_with_a_right_end(self):
        # [0,0,0,5,5,5,0,0,0] split 3|3 with kappa 6 leaves the recovery out: 15, as above.
        self.assertAlmostEqual(cp.energy_q([0, 0, 0, 5, 5, 5, 0, 0, 0], 3, 6), 15.0)
        # With kappa at the end Y = 5,5,5,0,0,0: cross 9*5/... = 2/18*45 = 5, Y's within
        # 9*5/C(6,2) = 3, E = 2, Q = 18/9 * 2 = 4: the dip hides.
        self.assertAlmostEqual(cp.energy_q([0, 0, 0, 5, 5, 5, 0, 0, 0], 3), 4.0)

    def test_best_split_by_hand(self):
        self.assertEqual(cp.best_split([0, 0, 0, 5, 5, 5], 2), (3, 15.0))
        self.assertIsNone(cp.best_split([0, 0, 0, 5, 5], 3))  # too short for 3 a side

    def test_permutation_p_against_its_exact_value(self):
        found = cp.e_divisive([0, 0, 0, 5, 5, 5], alpha=0.5, permutations=9999, min_size=3, seed=1)
        self.assertEqual(len(found), 1)
        self.assertEqual(found[0].index, 3)
        self.assertAlmostEqual(found[0].p, 0.1, delta=0.012)  # 3 binomial sd of 9999 draws: 0.009
        # At alpha 0.05 an exact p of 0.1 is not significant.
        self.assertEqual(cp.e_divisive([0, 0, 0, 5, 5, 5], alpha=0.05, permutations=999, min_size=3), [])

    def test_hodges_lehmann_interval_by_hand(self):
        self.assertEqual(cp.hodges_lehmann_interval([0, 1, 2, 3, 4], [10, 11, 12, 13, 14]), (10.0, 7.0, 13.0))
        self.assertEqual(cp.hodges_lehmann_interval([1, 2, 3], [4, 5, 6]), (3.0, 1.0, 5.0))
        shift, lo, hi = cp.hodges_lehmann_interval([4, 5, 6], [1, 2, 3])
        self.assertEqual((shift, lo, hi), (-3.0, -5.0, -1.0))

    def test_a_mutated_q_misses_the_hand_value(self):
        # Negative control: Q without its within-sample terms is another number for [0,1,3,6].
        x = np.array([0.0, 1, 3, 6])
        a, b = x[:2], x[2:]
        cross_only = 2 * 2 / 4 * (2 * np.abs(a[:, None] - b[None, :]).sum() / 4)
        self.assertNotAlmostEqual(cross_only, cp.energy_q(x, 2))


class Series(unittest.TestCase):
    def noisy(self, n, seed, sd=0.01):
        return 1.0 + np.random.default_rng(seed).normal(0, sd, n)

    def test_one_step_found_at_its_index(self):
        x = self.noisy(40, 3)
        x[23:] *= 0.9
        found = cp.e_divisive(x)
        self.assertEqual([c.index for c in found], [23])
        self.assertLessEqual(found[0].p, 0.01)

    def test_a_dip_that_recovers_is_two_changes(self):
        # Found only with the right end kappa searched (energy_q's second example).
        x = self.noisy(24, 6)
        x[8:16] *= 0.87
        self.assertEqual([c.index for c in cp.e_divisive(x)], [8, 16])

    def test_two_steps_both_found(self):
        x = self.noisy(60, 4)
        x[20:] *= 0.9
        x[45:] *= 1.12
        self.assertEqual([c.index for c in cp.e_divisive(x)], [20, 45])

    def test_flat_series_none(self):
        for seed in range(5):
            self.assertEqual(cp.e_divisive(self.noisy(40, 100 + seed)), [], seed)

    def test_same_series_same_answer(self):
        x = self.noisy(40, 5)
        x[10:] *= 1.05
        self.assertEqual(cp.e_divisive(x, seed=3), cp.e_divisive(x, seed=3))

    def test_short_or_bad_series(self):
        self.assertEqual(cp.e_divisive([1.0, 2.0, 3.0]), [])
        with self.assertRaises(ValueError):
            cp.e_divisive([1.0, float("nan"), 2.0, 3.0, 4.0, 5.0])


if __name__ == "__main__":
    unittest.main()
