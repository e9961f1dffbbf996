// test_gpt_spec.cpp — the transformer's presets, --model gpt:... parsing, its layout (names,
// shapes, order, alignment), its checkpoints under Hugging Face GPT-2's names, and its token data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "models/cpu/cpu_device.h"
#include "models/data/token_data.h"
#include "models/gpt/gpt.h"
#include "models/io/npy.h"
#include "models/io/safetensors.h"
#include "models/model_spec.h"

namespace dpscale {
namespace {

std::string tmp(const std::string& name) { return ::testing::TempDir() + "gpt_spec_" + name; }

TEST(ModelsGptSpec, PresetsHaveGpt2sParameterCountsAndTensorCounts) {
  // Hugging Face's GPT2LMHeadModel (tied head counted once): 124,439,808 and 354,823,168.
  EXPECT_EQ(parse_gpt("gpt2-small", 0).n_params(), 124439808);
  EXPECT_EQ(parse_gpt("gpt2-medium", 0).n_params(), 354823168);
  const GptSpec small = parse_gpt("gpt2-small", 0);
  EXPECT_EQ(small.seq_len, 1024);  // 0 asks for the context
  const ParamLayout layout(gpt_tensors(small));
  EXPECT_EQ(layout.tensors().size(), 148u);
  EXPECT_EQ(layout.n_params(), small.n_params());
  EXPECT_EQ(layout.largest_tensor_bytes(), int64_t{50257} * 768 * 4);  // wte, 154 MB
  EXPECT_EQ(layout.tensors().back().name(), "wte.weight");
  EXPECT_EQ(layout.tensors().front().name(), "ln_f.weight");
  for (const FlatTensor& t : layout.tensors()) EXPECT_EQ(t.offset % kTensorAlignFloats, 0) << t.name();
  EXPECT_EQ(parse_model_spec("gpt-tiny", 32).key(), "gpt-tiny");
  EXPECT_EQ(parse_model_spec("gpt-tiny", 32).labels_per_sample(), 32);
  EXPECT_EQ(parse_model_spec("medium", 32).labels_per_sample(), 1);
}

TEST(ModelsGptSpec, CustomSpecRoundTripsAndBadSpecsNameTheirProblem) {
  const std::string text = "gpt:layers=3,dim=48,heads=6,vocab=300,context=16";
  const ModelSpec s = parse_model_spec(text, 8);
  EXPECT_EQ(s.key(), text);
  EXPECT_EQ(s.gpt->head_dim(), 8);
  EXPECT_EQ(s.seq_len(), 8);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"gpt:layers=3,dim=48,heads=5,vocab=300,context=16", "not divisible"},
      {"gpt:layers=3,dim=48,heads=6,vocab=300", "context= is missing"},
      {"gpt:layers=3,dim=48,heads=6,vocab=300,context=16,layers=2", "given twice"},
      {"gpt:layers=x,dim=48,heads=6,vocab=300,context=16", "not a whole number"},
      {"gpt:layers=0,dim=48,heads=6,vocab=300,context=16", "out of range"},
      {"gpt:depth=3,dim=48,heads=6,vocab=300,context=16", "unknown key 'depth'"},
      {"gpt3", "unknown transformer"},
  };
  for (const auto& [spec, words] : bad) {
    try {
      parse_model_spec(spec, 0);
      ADD_FAILURE() << spec << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--model"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_model_spec("gpt-tiny", 65), InputError);  // beyond the context 64
}

TEST(ModelsGptSpec, CheckpointUsesHuggingFaceNamesAndShapesAndRoundTrips) {
  CpuDevice dev(1);
  const GptSpec spec = parse_gpt("gpt-tiny", 16);
  Gpt m(dev, spec, 2);
  m.init_params(5);
  const std::string path = tmp("ckpt.safetensors");
  save_checkpoint(path, m.layout(), m.params_to_host(), {{"model", spec.key()}});
  const StFile f = read_safetensors(path);
  EXPECT_EQ(f.tensors.size(), 2u + 12 * 2 + 2);  // the tied head is not stored twice
  EXPECT_EQ(f.tensors.count("lm_head.weight"), 0u);
  EXPECT_EQ(f.tensors.at("wte.weight").shape, (std::vector<int64_t>{256, 64}));
  EXPECT_EQ(f.tensors.at("wpe.weight").shape, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(f.tensors.at("h.1.attn.c_attn.weight").shape, (std::vector<int64_t>{64, 192}));  // Conv1D [d, 3d]
  EXPECT_EQ(f.tensors.at("h.1.attn.c_attn.bias").shape, (std::vector<int64_t>{192}));
  EXPECT_EQ(f.tensors.at("h.0.mlp.c_proj.weight").shape, (std::vector<int64_t>{256, 64}));
  EXPECT_EQ(f.tensors.at("h.0.ln_1.weight").shape, (std::vector<int64_t>{64}));
  EXPECT_EQ(f.tensors.at("ln_f.bias").shape, (std::vector<int64_t>{64}));
  EXPECT_EQ(f.metadata.at("model"), "gpt-tiny");
  const std::vector<float> back = load_checkpoint(path, m.layout());
  EXPECT_EQ(back, m.params_to_host());
  // An MLP's layout refuses it, naming a missing tensor.
  EXPECT_THROW(load_checkpoint(path, parse_model_spec("784,10", 0).layout()), InputError);
  std::remove(path.c_str());
}

TEST(ModelsGptSpec, InitIsGpt2s) {
  CpuDevice dev(1);
  const GptSpec spec = parse_gpt("gpt:layers=4,dim=64,heads=4,vocab=512,context=32", 0);
  Gpt m(dev, spec, 1);
  m.init_params(1);
  const std::vector<float> p = m.params_to_host();
  auto stats = [&](const std::string& name) {
    for (const FlatTensor& t : m.layout().tensors()) {
      if (t.name() != name) continue;
      double s = 0, s2 = 0;
      for (int64_t j = 0; j < t.count; ++j) {
        s += p[t.offset + j];
        s2 += double{p[t.offset + j]} * p[t.offset + j];
      }
      return std::make_pair(s / t.count, std::sqrt(s2 / t.count));
    }
    return std::make_pair(-1.0, -1.0);
  };
  EXPECT_NEAR(stats("wte.weight").second, 0.02, 0.001);
  EXPECT_NEAR(stats("h.2.attn.c_attn.weight").second, 0.02, 0.001);
  EXPECT_NEAR(stats("h.2.mlp.c_proj.weight").second, 0.02 / std::sqrt(8.0), 0.0005);  // 1/√(2L), L = 4
  EXPECT_NEAR(stats("h.3.attn.c_proj.weight").second, 0.02 / std::sqrt(8.0), 0.0008);
  EXPECT_EQ(stats("h.0.ln_1.weight"), std::make_pair(1.0, 1.0));
  EXPECT_EQ(stats("h.0.ln_1.bias").second, 0.0);
  EXPECT_EQ(stats("h.0.mlp.c_fc.bias").second, 0.0);
}

TEST(ModelsGptData, SyntheticTokensDependOnTheGlobalSampleIndexOnly) {
  const Dataset a = make_synthetic_tokens(10, 8, 50, 3), b = make_synthetic_tokens(4, 8, 50, 3);
  ASSERT_EQ(a.x.size(), 80u);
  for (size_t i = 0; i < b.x.size(); ++i) ASSERT_EQ(a.x[i], b.x[i]);
  for (size_t i = 0; i < b.y.size(); ++i) ASSERT_EQ(a.y[i], b.y[i]);
  // Targets are the inputs one position later: y[i, j] = x[i, j + 1].
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j + 1 < 8; ++j) ASSERT_EQ(a.y[i * 8 + j], static_cast<int>(a.x[i * 8 + j + 1]));
  }
  EXPECT_NE(make_synthetic_tokens(4, 8, 50, 4).x, b.x);  // another seed, other tokens
}

TEST(ModelsGptData, NpyTokensAndTextLoadAndBadFilesAreOneInputError) {
  const std::string npy = tmp("tokens.npy");
  std::vector<int64_t> ids = {1, 2, 3, 4, 5, 6, 7, 8};  // two rows of seq 3 + 1
  write_npy(npy, "<i8", {2, 4}, ids.data(), ids.size() * 8);
  const Dataset d = load_token_npy(npy, 3, 10);
  EXPECT_EQ(d.n, 2);
  EXPECT_EQ(d.x, (std::vector<float>{1, 2, 3, 5, 6, 7}));
  EXPECT_EQ(d.y, (std::vector<int32_t>{2, 3, 4, 6, 7, 8}));
  EXPECT_THROW(load_token_npy(npy, 4, 10), InputError);  // rows of 4, not seq 4 + 1
  EXPECT_THROW(load_token_npy(npy, 3, 8), InputError);   // id 8 outside the vocabulary
  for (const char* descr : {"<i4", "<i8"}) {  // no rows: fuzz_token_data's seed regress_no_rows
    write_npy(npy, descr, {0, 4}, ids.data(), 0);
    EXPECT_THROW(load_token_npy(npy, 3, 10), InputError) << descr;
  }
  std::vector<float> f(8, 1.0f);
  write_npy(npy, "<f4", {2, 4}, f.data(), f.size() * 4);
  EXPECT_THROW(load_token_npy(npy, 3, 10), InputError);  // not integers
  const std::string txt = tmp("corpus.txt");
  std::ofstream(txt) << "abcdefg";
  const Dataset t = load_token_text(txt, 3, 256);
  EXPECT_EQ(t.n, 2);  // (7 - 1) / 3 windows
  EXPECT_EQ(t.x, (std::vector<float>{'a', 'b', 'c', 'd', 'e', 'f'}));
  EXPECT_EQ(t.y, (std::vector<int32_t>{'b', 'c', 'd', 'e', 'f', 'g'}));
  EXPECT_THROW(load_token_text(txt, 7, 256), InputError);  // no window of 8 bytes
  EXPECT_THROW(load_token_text(txt, 3, 100), InputError);  // bytes need vocabulary 256
  EXPECT_THROW(load_token_text(tmp("missing"), 3, 256), InputError);
  std::remove(npy.c_str());
  std::remove(txt.c_str());
}

}  // namespace
}  // namespace dpscale
