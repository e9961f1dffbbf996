#!/usr/bin/env python3
"""test_gate_stats.py — harness/report/gate.py's statistics on inputs small enough to work by hand:
the Hodges-Lehmann shift, Holm's adjustment, the two-sample p (Mann-Whitney and KS, Bonferroni
over the two), the verdict rule at its edges, Holm applied per curve and not across curves, and
the reasons an undecided point gives; and the paired test of `dpscale ab` (Wilcoxon signed-rank,
the one-sample Hodges-Lehmann estimate, its interval) on ratios with known shifts."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "report"))
import gate  # noqa: E402

# A document's constants, as dpscale compare writes them (harness/report/gate.h); inputs here.
CONSTANTS = {"alpha": 0.05, "min_effect": 0.03, "min_samples": 3}


class Stats(unittest.TestCase):
    def test_hodges_lehmann_is_the_median_pairwise_difference(self):
        # differences of [1,2,3] and [0,0]: 1,1,2,2,3,3 -> median 2; of [1,2,10] and [0]: 1,2,10 -> 2
        self.assertEqual(gate.hodges_lehmann([1, 2, 3], [0, 0]), 2.0)
        self.assertEqual(gate.hodges_lehmann([1, 2, 10], [0]), 2.0)  # the mean would say 4.33

    def test_holm(self):
        # sorted 0.01, 0.03, 0.04 times 3, 2, 1: 0.03, 0.06, 0.04 -> monotone: 0.03, 0.06, 0.06
        self.assertEqual(gate.holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
        self.assertEqual(gate.holm([0.5, None, 0.01]), [0.5, None, 0.02])
        self.assertEqual(gate.holm([0.9, 0.8]), [1.0, 1.0])  # 0.8 x 2 capped at 1, then monotone

    def test_two_sample_p_complete_separation_of_five_and_five(self):
        # Exact: 2 of the C(10,5) = 252 orderings are as extreme, two-sided, for both tests;
        # times 2 for taking the smaller of two tests.
        p = gate.two_sample_p([1.0, 2, 3, 4, 5], [6.0, 7, 8, 9, 10])
        self.assertAlmostEqual(p, 2 * 2 / 252, places=6)
        self.assertEqual(gate.two_sample_p([1.0, 1, 1], [1.0, 1, 1]), 1.0)

    def test_pct_is_a_change_of_the_ratio(self):
        self.assertAlmostEqual(gate.pct(math.log(0.95)), -5.0)

    def decide(self, effect, lo, hi, p):
        r = {"effect_pct": effect, "ci_pct": [lo, hi], "why": []}
        return gate.decide(r, p, 0.05, 0.03), r

    def test_verdict_rule(self):
        self.assertEqual(self.decide(-5.0, -7.0, -3.5, 0.01)[0], "regression")
        self.assertEqual(self.decide(-3.0, -4.0, -2.0, 0.01)[0], "regression")  # exactly the minimum counts
        self.assertEqual(self.decide(+5.0, 3.0, 7.0, 0.01)[0], "improvement")
        self.assertEqual(self.decide(-1.0, -2.9, 0.8, 0.30)[0], "same")
        self.assertEqual(self.decide(-1.5, -2.5, -0.5, 0.01)[0], "same")  # real but under 3%, 3% ruled out
        v, r = self.decide(-2.0, -4.0, 0.5, 0.20)
        self.assertEqual(v, "undecided")
        self.assertIn("a loss of 3% or more is not ruled out (interval reaches -4.0%)", r["why"][0])
        v, r = self.decide(-2.5, -3.5, -1.5, 0.01)
        self.assertEqual(v, "undecided")
        self.assertIn("significant, but the effect -2.5% is under the 3%", r["why"][0])
        self.assertEqual(self.decide(-5.0, -7.0, -3.5, 0.06)[0], "undecided")  # large but not significant

    def test_a_line_below_the_minimum_catches_a_loss_of_exactly_the_minimum(self):
        at = lambda e, lo, hi, p: gate.decide({"effect_pct": e, "ci_pct": [lo, hi], "why": []}, p, 0.05, 0.04, 0.75)
        # A true 4% loss: the estimate just under 4%, beyond the 3% line.
        self.assertEqual(at(-3.8, -4.6, -3.1, 0.01), "regression")
        self.assertEqual(gate.decide({"effect_pct": -3.8, "ci_pct": [-4.6, -3.1], "why": []}, 0.01, 0.05, 0.04),
                         "undecided")  # the estimate rule (line 1): not caught
        self.assertEqual(at(+3.8, 3.1, 4.6, 0.01), "improvement")
        self.assertEqual(at(-3.0, -3.5, -2.5, 0.01), "regression")  # exactly the line counts
        # Significant but under the line: same when a 4% loss is ruled out, undecided when the interval reaches it.
        self.assertEqual(at(-2.9, -3.9, -1.9, 0.01), "same")
        self.assertEqual(at(-2.9, -4.4, -1.2, 0.01), "undecided")
        # Not significant: no verdict, however large.
        self.assertEqual(at(-5.0, -7.0, 0.5, 0.20), "undecided")

    def test_a_line_outside_0_1_is_refused(self):
        for bad in ("half", 0, 1.5, True):
            doc = dict(CONSTANTS, points=[], min_effect_line=bad)
            with self.assertRaises(gate.BadDocument):
                gate.run_gate(doc)

    def point(self, curve, now, base, disturbed=()):
        return {"key": {"model": "m", "mode": curve, "world_size": 2}, "describe": curve, "curve": curve,
                "status": "compared", "now": {"samples": now, "disturbed": list(disturbed)}, "base": {"samples": base}}

    def test_holm_is_per_curve(self):
        base = [1.00, 1.01, 0.99, 1.005, 0.995, 1.002]
        worse = [0.90, 0.91, 0.89, 0.905, 0.895, 0.902]
        # One curve of two points, both 10% worse: adjusted p = raw p times 2, then times 1.
        doc = dict(CONSTANTS, points=[self.point("a", worse, base), self.point("a", worse, base), self.point("b", worse, base)])
        gate.run_gate(doc)
        raw = gate.two_sample_p(gate.np.log(worse), gate.np.log(base))
        ps = [p["result"]["p_holm"] for p in doc["points"]]
        self.assertAlmostEqual(ps[0], 2 * raw)
        self.assertAlmostEqual(ps[1], 2 * raw)
        self.assertAlmostEqual(ps[2], raw)  # alone in curve b: no adjustment
        self.assertEqual([p["result"]["verdict"] for p in doc["points"]], ["regression"] * 3)

    def test_too_few_samples_say_why(self):
        doc = dict(CONSTANTS, points=[self.point("a", [0.5, 0.5], [1.0, 1.0, 1.0], ["round 3: probe -31%, others 0.95 CPU, load 2.9"])])
        gate.run_gate(doc)
        r = doc["points"][0]["result"]
        self.assertEqual(r["verdict"], "undecided")
        self.assertEqual(r["why"], ["2 undisturbed sample(s) in new, 3 needed; machine busy: round 3: probe -31%, "
                                    "others 0.95 CPU, load 2.9"])

    def test_failed_points_are_regressions_and_missing_ones_are_not(self):
        doc = dict(CONSTANTS, points=[{"key": {}, "describe": "x", "status": "failed", "why": "every run failed in the new file"},
                                      {"key": {}, "describe": "y", "status": "missing", "why": "not in the new file"}])
        gate.run_gate(doc)
        self.assertEqual(doc["points"][0]["result"]["verdict"], "regression")
        self.assertEqual(doc["points"][1]["result"]["verdict"], "missing")

    def test_a_document_without_its_constants_is_refused(self):
        for missing in CONSTANTS:
            doc = {k: v for k, v in CONSTANTS.items() if k != missing}
            with self.assertRaises(gate.BadDocument) as e:
                gate.run_gate(dict(doc, points=[]))
            self.assertIn(missing, str(e.exception))
        with self.assertRaises(gate.BadDocument):
            gate.run_gate(dict(CONSTANTS, min_samples=2.5, points=[]))

    def test_min_samples_is_the_documents(self):
        # Two samples a side: undecided at min_samples 3, tested at 2.
        two = dict(CONSTANTS, points=[self.point("a", [0.5, 0.51], [1.0, 1.01])])
        gate.run_gate(two)
        self.assertEqual(two["points"][0]["result"]["why"][0], "2 undisturbed sample(s) in new, 3 needed")
        gate.run_gate(dict(two, min_samples=2))
        self.assertIsNotNone(two["points"][0]["result"]["p"])


    def test_the_two_sample_effect_is_the_hodges_lehmann_shift(self):
        # Catches: the effect as the difference of the two medians instead of the Hodges-Lehmann
        # shift (judge_point). Each side's median is near 0 (the medians differ by 0.05%), but 20
        # of the 36 differences are near -0.2 or below: the 18th and 19th smallest are -0.198 and
        # -0.197, so the shift is -0.1975 in log units.
        x = [0.001, 0.002, 0.003, 0.004, -0.2, -0.21]
        y = [0.0, 0.0005, 0.0015, 0.0025, 0.2, 0.21]
        doc = dict(CONSTANTS, points=[self.point("a", [math.exp(v) for v in x], [math.exp(v) for v in y])])
        gate.run_gate(doc)
        r = doc["points"][0]["result"]
        self.assertAlmostEqual(r["effect_pct"], gate.pct(-0.1975), places=9)
        self.assertAlmostEqual(r["effect_pct"], -17.92, places=2)


class Paired(unittest.TestCase):
    def test_walsh_median_is_the_one_sample_hodges_lehmann(self):
        # Walsh averages of [1, 2, 10]: 1, 1.5, 5.5, 2, 6, 10 -> sorted 1 1.5 2 5.5 6 10 -> 3.75
        self.assertEqual(float(gate.walsh_median([1.0, 2.0, 10.0])), 3.75)
        self.assertEqual(float(gate.walsh_median([-1.0, 1.0])), 0.0)

    def test_signed_rank_p_exact(self):
        # Six differences of one sign: 2 of the 2^6 sign patterns are as extreme, two-sided.
        self.assertAlmostEqual(gate.paired_p([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]), 2 / 64)
        self.assertAlmostEqual(gate.paired_p([-0.1, -0.2, -0.3, -0.4, -0.5, -0.6]), 2 / 64)
        # Negative control: signs that balance (ranks 1+4+5 = 10 of 21 against 11) say nothing.
        self.assertGreater(gate.paired_p([0.1, -0.2, -0.3, 0.4, 0.5, -0.6]), 0.8)
        self.assertEqual(gate.paired_p([0.0, 0.0, 0.0]), 1.0)

    def paired_point(self, ratios, curve="throughput m naive"):
        return {"key": {"model": "m", "mode": "naive", "world_size": 2}, "describe": "p", "curve": curve,
                "status": "compared", "test": "paired",
                "pairs": {"ratios": ratios, "left_out": [], "alike": [], "base_median": 100.0, "now_median": 95.0}}

    def test_a_known_shift_is_found_and_no_shift_is_same(self):
        noise = [1.000, 1.012, 0.989, 1.007, 0.995, 1.011]
        # B 5% slower each round, over noise: regression near -5%, its interval around it.
        doc = dict(CONSTANTS, points=[self.paired_point([0.95 * n for n in noise])])
        gate.run_gate(doc)
        r = doc["points"][0]["result"]
        self.assertEqual(r["verdict"], "regression")
        self.assertAlmostEqual(r["effect_pct"], -4.8, delta=0.6)
        self.assertLess(r["ci_pct"][0], r["effect_pct"])
        self.assertGreater(r["ci_pct"][1], r["effect_pct"])
        # Negative control: the same noise and no shift.
        doc = dict(CONSTANTS, points=[self.paired_point(noise)])
        gate.run_gate(doc)
        self.assertEqual(doc["points"][0]["result"]["verdict"], "same")

    def test_too_few_pairs_say_why(self):
        p = self.paired_point([0.5, 0.5])
        p["pairs"]["left_out"] = ["round 3: A run delay 40% of the epochs"]
        doc = dict(CONSTANTS, points=[p])
        gate.run_gate(doc)
        r = doc["points"][0]["result"]
        self.assertEqual(r["verdict"], "undecided")
        self.assertEqual(r["why"], ["2 pair(s) fit to judge, 3 needed; round 3: A run delay 40% of the epochs"])

    def test_the_paired_effect_is_the_walsh_median_not_the_median(self):
        # Catches: the effect as a plain median of the log ratios instead of the one-sample
        # Hodges-Lehmann estimate (judge_paired). Four rounds lost 0.5-0.8%, two lost 12-13%: the
        # median is -0.75%, under the 3% that counts. Of the 21 Walsh averages, the three among the
        # two large losses and seven of the eight across small and large lie below -0.0625; the
        # 11th (the median) is (-0.005 - 0.12) / 2 = -0.0625, a 6.1% loss, significant in every
        # round: a regression.
        d = [-0.005, -0.006, -0.007, -0.008, -0.12, -0.13]
        doc = dict(CONSTANTS, points=[self.paired_point([math.exp(v) for v in d])])
        gate.run_gate(doc)
        r = doc["points"][0]["result"]
        self.assertAlmostEqual(r["effect_pct"], gate.pct(-0.0625), places=9)
        self.assertAlmostEqual(r["p_holm"], 2 / 64)
        self.assertEqual(r["verdict"], "regression")

    def test_exactly_min_samples_pairs_are_judged(self):
        # Catches: the minimum sample count compared with `<=` instead of `<` (judge_paired):
        # three pairs at min_samples 3 would be refused. Three ratios within 0.2% of 1: tested
        # (a p, an interval) and "same"; two are too few.
        doc = dict(CONSTANTS, points=[self.paired_point([1.001, 0.999, 1.002])])
        gate.run_gate(doc)
        r = doc["points"][0]["result"]
        self.assertEqual(r["n_now"], 3)
        self.assertIsNotNone(r["p"])
        self.assertIsNotNone(r["ci_pct"])
        self.assertEqual(r["verdict"], "same")
        doc = dict(CONSTANTS, points=[self.paired_point([1.001, 0.999])])
        gate.run_gate(doc)
        self.assertEqual(doc["points"][0]["result"]["verdict"], "undecided")
        self.assertIsNone(doc["points"][0]["result"]["p"])


if __name__ == "__main__":
    unittest.main()
