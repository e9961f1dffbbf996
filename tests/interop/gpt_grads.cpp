// gpt_grads.cpp — one forward/backward of a transformer on given tokens, for the PyTorch check
// (tests/interop/test_torch_gpt.py): writes the weights it used and every gradient, both as
// safetensors under Hugging Face GPT-2's names, the loss in the gradients' metadata.
//   gpt_grads MODEL SEQ_LEN TOKENS.npy OUT_DIR (--seed N | --init FILE)
// TOKENS.npy: int64 [B, SEQ_LEN + 1] (the trainers' --data npy --tokens format); the batch is all
// B rows, the gradient scale the trainers' 1/B (the mean over all B·SEQ_LEN positions).
#include <cstdio>
#include <exception>
#include <string>

#include "core/errors.h"
#include "models/cpu/cpu_device.h"
#include "models/data/token_data.h"
#include "models/gpt/gpt.h"
#include "models/io/safetensors.h"
#include "models/model_spec.h"

int main(int argc, char** argv) {
  using namespace dpscale;
  if (argc != 7) {
    std::fprintf(stderr, "usage: gpt_grads MODEL SEQ_LEN TOKENS.npy OUT_DIR (--seed N | --init FILE)\n");
    return 2;
  }
  try {
    const ModelSpec spec = parse_model_spec(argv[1], std::stoi(argv[2]));
    if (!spec.is_gpt()) throw InputError(std::string("not a transformer: ") + argv[1]);
    const Dataset d = load_token_npy(argv[3], spec.seq_len(), spec.out_width());
    const std::string out = argv[4], how = argv[5], value = argv[6];
    CpuDevice dev(1);
    Gpt m(dev, *spec.gpt, static_cast<int>(d.n));
    if (how == "--seed") {
      m.init_params(std::stoull(value));
    } else if (how == "--init") {
      m.params_from_host(load_checkpoint(value, m.layout()));
    } else {
      throw InputError("want --seed N or --init FILE, got " + how);
    }
    const int batch = static_cast<int>(d.n);
    m.forward(d.x.data(), batch);
    m.loss(d.y.data(), batch, 1.0f / static_cast<float>(batch));
    m.backward(d.x.data(), batch, nullptr);
    const float loss = m.loss_mean();
    save_checkpoint(out + "/weights.safetensors", m.layout(), m.params_to_host(), spec.checkpoint_metadata());
    std::vector<float> g(m.grads(), m.grads() + m.layout().param_buffer_count());
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", static_cast<double>(loss));
    save_checkpoint(out + "/grads.safetensors", m.layout(), g, {{"loss", text}});
    std::printf("loss %s\n", text);
    return 0;
  } catch (const InputError& e) {
    std::fprintf(stderr, "gpt_grads: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpt_grads: %s\n", e.what());
    return 1;
  }
}
