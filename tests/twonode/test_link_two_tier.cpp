// test_link_two_tier.cpp — the two-tier link spec (--link intra=SPEC,inter=SPEC[,ranks-per-node=L])
// and the α-β time of ring, star and hier on a shape of nodes (contract/link_model.h), against
// the formulas typed in again here from textbook 15.2 (so the model does not check itself), and
// the refusal of every bad spec with one line naming --link and the part at fault.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "contract/link_model.h"
#include "core/errors.h"

namespace dpscale {
namespace {

TEST(TwoTierLink, ParsesPresetsCustomAndRanksPerNode) {
  const LinkModel m = parse_link("intra=nvlink,inter=ib100");
  EXPECT_TRUE(m.enabled());
  EXPECT_TRUE(m.two_tier);
  EXPECT_EQ(m.name, "two-tier");
  EXPECT_DOUBLE_EQ(m.alpha_us, 1.0);
  EXPECT_DOUBLE_EQ(m.gbps, 300.0);
  EXPECT_DOUBLE_EQ(m.inter_alpha_us, 5.0);
  EXPECT_DOUBLE_EQ(m.inter_gbps, 12.5);
  EXPECT_EQ(m.ranks_per_node, 0);  // the nodes MPI sees

  const LinkModel c = parse_link("inter=50:0.125,ranks-per-node=2,intra=2:8");  // any order
  EXPECT_DOUBLE_EQ(c.alpha_us, 2.0);
  EXPECT_DOUBLE_EQ(c.gbps, 8.0);
  EXPECT_DOUBLE_EQ(c.inter_alpha_us, 50.0);
  EXPECT_DOUBLE_EQ(c.inter_gbps, 0.125);
  EXPECT_EQ(c.ranks_per_node, 2);

  // One-tier specs are unchanged.
  EXPECT_FALSE(parse_link("ib100").two_tier);
  EXPECT_FALSE(parse_link("none").enabled());
}

// Each bad spec: an OptionError whose one line names --link and what is wrong.
void expect_refused(const std::string& spec, const std::string& words) {
  try {
    parse_link(spec);
    ADD_FAILURE() << "'" << spec << "' was accepted";
  } catch (const OptionError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("--link", 0), 0u) << msg;
    EXPECT_NE(msg.find(words), std::string::npos) << "'" << spec << "': " << msg << " (expected '" << words << "')";
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(TwoTierLink, RefusesBadSpecsWithOneLine) {
  expect_refused("intra=nvlink", "names no inter= tier");
  expect_refused("inter=ib100", "names no intra= tier");
  expect_refused("intra=nvlink,inter=ib100,extra=1", "unknown key 'extra'");
  expect_refused("intra=nvlink,intra=pcie4,inter=ib100", "'intra' given twice");
  expect_refused("intra=nvlink,,inter=ib100", "is not KEY=VALUE");
  expect_refused("intra=nvlink,ib100", "'ib100' in 'intra=nvlink,ib100' is not KEY=VALUE");
  expect_refused("=nvlink,inter=ib100", "is not KEY=VALUE");
  expect_refused("intra=none,inter=ib100", "intra=none: a tier needs a link");
  expect_refused("intra=nvlink,inter=fast", "inter=fast: unknown link 'fast'");
  // The one-tier bounds hold in each tier (kMaxAlphaUs, kMinGbps, kMaxGbps).
  expect_refused("intra=nvlink,inter=1e6:10", "latency (microseconds)");
  expect_refused("intra=0:1e-9,inter=ib100", "bandwidth (GB/s)");
  expect_refused("intra=nvlink,inter=5:1e6", "bandwidth (GB/s)");
  expect_refused("intra=nvlink,inter=ib100,ranks-per-node=0", "ranks-per-node");
  expect_refused("intra=nvlink,inter=ib100,ranks-per-node=two", "ranks-per-node");
  expect_refused("intra=nvlink,inter=ib100,ranks-per-node=5000", "ranks-per-node");
}

TEST(TwoTierLink, AllreduceNamesIncludeHier) {
  EXPECT_EQ(parse_allreduce_algo("hier"), AllreduceAlgo::hier);
  EXPECT_STREQ(allreduce_algo_name(AllreduceAlgo::hier), "hier");
}

// The formulas of link_model.h, written out again. 64 MB on 2 nodes of 2 (K = 4).
TEST(TwoTierLink, ModelledTimesByHand) {
  LinkModel m = parse_link("intra=2:8,inter=50:0.125");
  const double b = 64e6, ai = 2e-6, bi = 8e9, ae = 50e-6, be = 0.125e9;
  const NodeShape s{2, 2};
  // ring: 6 steps, each as slow as its inter-node hop.
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::ring, m, 64000000, s), 6 * (ae + b / 4 / be), 1e-12);
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::native, m, 64000000, s), 6 * (ae + b / 4 / be), 1e-12);
  // hier: 2(L-1) intra hops of B/L, 2(N-1) inter steps of B/N on the node's one link.
  const double hier = 2 * (ai + b / 2 / bi) + 2 * (ae + b / 2 / be);
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::hier, m, 64000000, s), hier, 1e-12);
  // star: rank 0 exchanges 1 buffer within its node, 2 across.
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::star, m, 64000000, s), 2 * (ai + b / bi) + 4 * (ae + b / be), 1e-12);
  // The point of hier: on the slow link it moves 1·B where the flat ring moves 1.5·B.
  EXPECT_LT(modelled_seconds(AllreduceAlgo::hier, m, 64000000, s), 0.7 * modelled_seconds(AllreduceAlgo::ring, m, 64000000, s));
  // Dilation multiplies everything.
  m.dilation = 10;
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::hier, m, 64000000, s), 10 * hier, 1e-11);
}

// Shapes where nodes N and ranks per node L differ, so a formula that confuses the two gives
// another number (on 2 × 2 it cannot). Worked by hand from link_model.h, not computed from it:
// intra α_i = 2 µs, β_i = 8 GB/s; inter α_e = 50 µs, β_e = 0.125 GB/s; B = 12 MB, K = N·L = 6.
// One hop of x bytes costs α + x/β:
//   B     = 12e6  intra 2e-6 + 12e6/8e9 = 1.502e-3      inter 50e-6 + 12e6/0.125e9 = 0.09605
//   B/2   = 6e6   intra 2e-6 +  6e6/8e9 = 0.752e-3      inter 50e-6 +  6e6/0.125e9 = 0.04805
//   B/3   = 4e6   intra 2e-6 +  4e6/8e9 = 0.502e-3      inter 50e-6 +  4e6/0.125e9 = 0.03205
//   B/6   = 2e6   intra 2e-6 +  2e6/8e9 = 0.252e-3      inter 50e-6 +  2e6/0.125e9 = 0.01605
// ring/native (both shapes, K = 6): 2(K-1) = 10 steps of max(0.252e-3, 0.01605) = 0.1605 s
// star  2 × 3: 2(L-1) = 4 intra of B + 2(K-L) = 6 inter of B
//              = 4·1.502e-3 + 6·0.09605 = 0.006008 + 0.5763   = 0.582308 s
// star  3 × 2: 2(L-1) = 2 intra of B + 2(K-L) = 8 inter of B
//              = 2·1.502e-3 + 8·0.09605 = 0.003004 + 0.7684   = 0.771404 s
// hier  2 × 3: 2(L-1) = 4 intra of B/L = B/3 + 2(N-1) = 2 inter of B/N = B/2
//              = 4·0.502e-3 + 2·0.04805 = 0.002008 + 0.0961   = 0.098108 s
// hier  3 × 2: 2(L-1) = 2 intra of B/L = B/2 + 2(N-1) = 4 inter of B/N = B/3
//              = 2·0.752e-3 + 4·0.03205 = 0.001504 + 0.1282   = 0.129704 s
// (N and L swapped in star would give 2 × 3 the 3 × 2 answer and back; in hier 0.129704 for 2 × 3.)
TEST(TwoTierLink, ModelledTimesByHandOnUnequalShapes) {
  const LinkModel m = parse_link("intra=2:8,inter=50:0.125");
  const size_t b = 12000000;
  struct Case {
    NodeShape shape;
    double ring, star, hier;
  };
  for (const Case& c : {Case{NodeShape{2, 3}, 0.1605, 0.582308, 0.098108},
                        Case{NodeShape{3, 2}, 0.1605, 0.771404, 0.129704}}) {
    const std::string at = std::to_string(c.shape.nodes) + " nodes x " + std::to_string(c.shape.per_node) + " ranks";
    EXPECT_NEAR(modelled_seconds(AllreduceAlgo::ring, m, b, c.shape), c.ring, 1e-12) << at;
    EXPECT_NEAR(modelled_seconds(AllreduceAlgo::native, m, b, c.shape), c.ring, 1e-12) << at;
    EXPECT_NEAR(modelled_seconds(AllreduceAlgo::star, m, b, c.shape), c.star, 1e-12) << at;
    EXPECT_NEAR(modelled_seconds(AllreduceAlgo::hier, m, b, c.shape), c.hier, 1e-12) << at;
  }
  // The old form (K ranks) takes the shape from ranks-per-node: K = 6 as 2 × 3, then as 3 × 2.
  const LinkModel l3 = parse_link("intra=2:8,inter=50:0.125,ranks-per-node=3");
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::star, l3, b, 6), 0.582308, 1e-12);
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::hier, l3, b, 6), 0.098108, 1e-12);
  const LinkModel l2 = parse_link("intra=2:8,inter=50:0.125,ranks-per-node=2");
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::star, l2, b, 6), 0.771404, 1e-12);
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::hier, l2, b, 6), 0.129704, 1e-12);
  // A ring step lasts as long as its slower hop whichever tier that is: with the tiers swapped
  // the intra hop (0.01605 s) is the slow one and the ring still takes 10 · 0.01605 = 0.1605 s.
  const LinkModel slow_intra = parse_link("intra=50:0.125,inter=2:8");
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::ring, slow_intra, b, NodeShape{2, 3}), 0.1605, 1e-12);
}

TEST(TwoTierLink, OneNodeAndOneTierReduceToTheRing) {
  const LinkModel one = parse_link("ib100");
  const double b = 1e6, a = 5e-6, beta = 12.5e9;
  for (int k : {2, 3, 4, 8}) {
    const double ring = 2 * (k - 1) * (a + b / k / beta);
    // Old form (K ranks, one node) and the shape form agree; hier on one node is the ring.
    EXPECT_NEAR(modelled_seconds(AllreduceAlgo::ring, one, 1000000, k), ring, 1e-15);
    EXPECT_NEAR(modelled_seconds(AllreduceAlgo::ring, one, 1000000, NodeShape{1, k}), ring, 1e-15);
    EXPECT_NEAR(modelled_seconds(AllreduceAlgo::hier, one, 1000000, NodeShape{1, k}), ring, 1e-15);
    EXPECT_NEAR(modelled_seconds(AllreduceAlgo::star, one, 1000000, k), 2 * (k - 1) * (a + b / beta), 1e-15);
  }
  // One rank per node: hier is a ring across nodes.
  const LinkModel two = parse_link("intra=nvlink,inter=ib100");
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::hier, two, 1000000, NodeShape{4, 1}), 6 * (a + b / 4 / beta), 1e-15);
  // The old form takes its shape from ranks-per-node: 4 ranks as 2 nodes of 2.
  const LinkModel rpn = parse_link("intra=nvlink,inter=ib100,ranks-per-node=2");
  EXPECT_DOUBLE_EQ(modelled_seconds(AllreduceAlgo::hier, rpn, 1000000, 4),
                   modelled_seconds(AllreduceAlgo::hier, rpn, 1000000, NodeShape{2, 2}));
  EXPECT_EQ(modelled_seconds(AllreduceAlgo::ring, LinkModel{}, 1000000, NodeShape{2, 2}), 0.0);
}

}  // namespace
}  // namespace dpscale
