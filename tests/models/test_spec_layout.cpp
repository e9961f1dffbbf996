// test_spec_layout.cpp — the workshop's presets, --model parsing, and the flat parameter layout
// (backward order: last layer first, weight then bias, each tensor on a 64-float boundary with
// zero padding between, loss slot right after the last tensor).
#include <gtest/gtest.h>

#include "core/errors.h"
#include "models/mlp_spec.h"
#include "models/param_layout.h"

namespace dpscale {
namespace {

// Independent count: Σ in·out + out over the layers.
int64_t count_params(const std::vector<int>& w) {
  int64_t n = 0;
  for (size_t i = 0; i + 1 < w.size(); ++i) n += int64_t{w[i]} * w[i + 1] + w[i + 1];
  return n;
}

TEST(ModelsPresets, ExactWorkshopParameterCounts) {
  struct Case {
    const char* name;
    std::vector<int> widths;
    int64_t n_params;
  };
  const Case cases[] = {
      {"small", {784, 1024, 512, 256, 10}, 1462538},
      {"medium", {784, 2048, 2048, 1024, 512, 10}, 8432138},
      {"large", {784, 4096, 4096, 2048, 2048, 1024, 512, 10}, 35211786},
      {"xlarge", {784, 4096, 4096, 4096, 2048, 2048, 1024, 512, 10}, 51993098},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const MlpSpec spec = parse_model(c.name);
    EXPECT_EQ(spec.name, c.name);
    EXPECT_EQ(spec.widths, c.widths);
    EXPECT_EQ(spec.n_params(), c.n_params);
    EXPECT_EQ(count_params(spec.widths), c.n_params);
    EXPECT_EQ(ParamLayout(spec).n_params(), c.n_params);
    EXPECT_EQ(spec.in_width(), 784);
    EXPECT_EQ(spec.out_width(), 10);
    EXPECT_EQ(spec.n_layers(), static_cast<int>(c.widths.size()) - 1);
  }
  EXPECT_EQ(preset_names(), (std::vector<std::string>{"small", "medium", "large", "xlarge"}));
}

TEST(ModelsParseModel, CustomWidths) {
  MlpSpec s = parse_model("784,256,10");
  EXPECT_EQ(s.name, "custom");
  EXPECT_EQ(s.widths, (std::vector<int>{784, 256, 10}));
  EXPECT_EQ(s.n_params(), 784 * 256 + 256 + 256 * 10 + 10);
  EXPECT_EQ(s.max_width(), 784);

  s = parse_model("3,2");  // a single linear layer
  EXPECT_EQ(s.widths, (std::vector<int>{3, 2}));
  EXPECT_EQ(s.n_layers(), 1);
  EXPECT_EQ(s.n_params(), 8);

  s = parse_model("5,4,3,2");
  EXPECT_EQ(s.n_params(), 5 * 4 + 4 + 4 * 3 + 3 + 3 * 2 + 2);
  EXPECT_EQ(widths_to_string(s.widths), "5,4,3,2");
}

TEST(ModelsParseModel, RejectsBadText) {
  const char* bad[] = {"tiny", "", "784", "784,,10", "784,abc,10", "784,8.5,10", ",784,10", "784,10,",
                       "784,0,10", "784,-8,10", "784, 8,10", "784,8,1", "784,99999999999,10"};
  for (const char* text : bad) {
    SCOPED_TRACE(text);
    try {
      parse_model(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--model"), std::string::npos) << e.what();
    }
  }
}

TEST(ModelsParamLayout, BackwardOrderOnHandWorkedModel) {
  // widths 5,4,3,2: layer 2 (3->2), layer 1 (4->3), layer 0 (5->4), each weight then bias,
  // every one at the next multiple of 64 floats.
  const ParamLayout L(parse_model("5,4,3,2"));
  struct Want {
    const char* name;
    int64_t offset, count;
    int rows, cols;
  };
  const Want want[] = {{"layers.2.weight", 0, 6, 2, 3},    {"layers.2.bias", 64, 2, 2, 1},
                       {"layers.1.weight", 128, 12, 3, 4}, {"layers.1.bias", 192, 3, 3, 1},
                       {"layers.0.weight", 256, 20, 4, 5}, {"layers.0.bias", 320, 4, 4, 1}};
  ASSERT_EQ(L.tensors().size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    const FlatTensor& t = L.tensors()[i];
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(t.name(), want[i].name);
    EXPECT_EQ(t.index, static_cast<int>(i));
    EXPECT_EQ(t.offset, want[i].offset);
    EXPECT_EQ(t.count, want[i].count);
    EXPECT_EQ(t.rows, want[i].rows);
    EXPECT_EQ(t.cols, want[i].cols);
    EXPECT_EQ(t.nbytes(), want[i].count * 4);
  }
  EXPECT_EQ(L.n_params(), 47);            // the parameters, not the padding
  EXPECT_EQ(L.param_buffer_count(), 324);  // ends where layers.0.bias ends
  EXPECT_EQ(L.loss_slot(), 324);
  EXPECT_EQ(L.grad_buffer_count(), 325);
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(L.weight(l).layer, l);
    EXPECT_FALSE(L.weight(l).is_bias);
    EXPECT_EQ(L.bias(l).layer, l);
    EXPECT_TRUE(L.bias(l).is_bias);
    EXPECT_EQ(L.bias(l).offset, L.weight(l).offset + 64);  // every weight here is under 64 floats
  }
}

TEST(ModelsParamLayout, PresetsAreInBackwardOrderWithMinimalPadding) {
  for (const std::string& name : preset_names()) {
    SCOPED_TRACE(name);
    const MlpSpec spec = parse_model(name);
    const ParamLayout L(spec);
    const int n = spec.n_layers();
    ASSERT_EQ(static_cast<int>(L.tensors().size()), 2 * n);
    int64_t pos = 0, n_params = 0;
    for (int i = 0; i < 2 * n; ++i) {
      const FlatTensor& t = L.tensors()[i];
      const int layer = n - 1 - i / 2;  // last layer first
      EXPECT_EQ(t.layer, layer);
      EXPECT_EQ(t.is_bias, i % 2 == 1);  // weight, then bias
      // No overlap, and no gap beyond what reaches the next 64-float boundary.
      EXPECT_GE(t.offset, pos);
      EXPECT_LT(t.offset - pos, kTensorAlignFloats);
      const int64_t want = t.is_bias ? spec.widths[layer + 1]
                                     : int64_t{spec.widths[layer + 1]} * spec.widths[layer];
      EXPECT_EQ(t.count, want);
      n_params += t.count;
      pos = t.offset + t.count;
    }
    EXPECT_EQ(n_params, spec.n_params());             // the tensors are the parameters
    EXPECT_EQ(L.n_params(), spec.n_params());
    EXPECT_EQ(L.param_buffer_count(), pos);    // the buffer ends with the last tensor
    EXPECT_EQ(L.loss_slot(), pos);             // the loss slot right after it
    EXPECT_EQ(L.grad_buffer_count(), pos + 1);
  }
}

// cuBLAS and NCCL get pointers into the flat buffers at these offsets: each must sit on a
// 256-byte boundary (64 floats; the buffers themselves come 256-byte aligned), whatever the
// widths, odd ones and a 10-float bias included.
TEST(ModelsParamLayout, EveryTensorOffsetIsAMultipleOf64Floats) {
  std::vector<std::string> models = preset_names();
  for (const char* m : {"784,10", "784,64,32,10", "5,4,3,2", "3,1,1,1,7", "785,33,17,10", "1,2"}) models.push_back(m);
  for (const std::string& model : models) {
    const ParamLayout L(parse_model(model));
    for (const FlatTensor& t : L.tensors()) {
      EXPECT_EQ(t.offset % 64, 0) << model << " " << t.name() << " at float " << t.offset;
    }
  }
}

}  // namespace
}  // namespace dpscale
