// rank_setup.cpp — one rank's local set-up, cheapest checks first.
#include "rank_setup.h"

#include "comm/communicator.h"
#include "comm/nccl_shared_gpu.h"
#include "contract/option_rules.h"
#include "core/errors.h"
#include "models/gemm/step_gemms.h"
#include "models/data/token_data.h"
#include "models/io/safetensors.h"
#include "models/memory_check.h"
#include "shard_plan.h"

namespace dpscale {

namespace {
template <class T>
void to_device(Device& dev, const std::vector<T>& host, DeviceBuffer<T>& buf, const T*& view) {
  if (dev.host_visible()) {
    view = host.data();  // CPU backend: use the host copy in place
    return;
  }
  buf = DeviceBuffer<T>(dev, host.size());
  dev.upload(buf.data(), host.data(), host.size() * sizeof(T));
  view = buf.data();
}
}  // namespace

std::unique_ptr<RankSetup> set_up_rank(const TrainOptions& opts, const RankPlace& place) {
  auto s = std::make_unique<RankSetup>();
  const int world_size = place.world_size;
  s->opts = opts;
  s->rank = place.rank;
  s->world_size = world_size;
  s->spec = parse_model_spec(opts.model, opts.seq_len);
  s->test_nonfinite = NonfiniteInjection::from_env(s->spec.mlp());
  check_model_options(opts);  // options of the other kind of model would be ignored: refused
  if (opts.batch_size % world_size != 0) {
    throw InputError("--batch-size " + std::to_string(opts.batch_size) + " is not divisible by the " +
                     std::to_string(world_size) + " ranks (each takes an equal contiguous shard)");
  }
  s->local_batch = opts.batch_size / world_size;
  s->link = parse_link(opts.link);
  s->dilation = parse_dilation(opts.link_dilation);
  s->link.dilation = s->dilation.factor;
  // Two-tier nodes that divide the ranks, hier with fp32 gradients: the rules a sweep checks too.
  check_option_rules(opts, world_size);
  s->algo = parse_allreduce_algo(opts.allreduce);
  s->grad_format = parse_grad_format(opts.grad_comm);
  // The checkpoint is read (once) before the data: a bad --init fails fast.
  std::vector<float> init_params;
  if (!opts.init_path.empty()) init_params = load_checkpoint(opts.init_path, s->spec.layout());

  DeviceOptions dopts = opts.device;
  dopts.gpu_index = place.gpu_index >= 0 ? place.gpu_index : place.local_rank;
  // --gemm auto chooses on this rank's own GEMMs: the model's step at the local batch.
  dopts.gemm_shapes = s->spec.step_gemms(s->local_batch);
  if (s->spec.is_gpt()) {
    // The transformer's CUDA path (models/cuda/gpt_ops_cuda.cu) compiles, but trains only once
    // tests/models/test_cuda_vs_cpu.cpp's TransformerStepAgrees has passed on a GPU: until then
    // it trains on the CPU backend, which --backend auto then means.
    if (opts.device.backend == "cuda") {
      throw InputError("--backend cuda: the transformer --model " + opts.model +
                       " trains on the CPU backend only (its CUDA path is not yet checked against the CPU on a GPU; use --backend cpu)");
    }
    dopts.backend = "cpu";
  }
  s->device = make_device(dopts);
  // Stage 3 releases what it is done with page by page (Device::release_pages); a device that
  // releases nothing would hold every parameter and gradient while the record counted shards.
  if (opts.mode == Mode::sharded && opts.shard_stage == 3 && s->device->page_bytes() == 0) {
    throw InputError("--shard-stage 3 runs on the CPU backend only (the " + std::string(backend_name(s->device->backend())) +
                     " backend cannot release a layer's memory after use; use --shard-stage 2 or --backend cpu)");
  }
  if (s->device->backend() == Backend::cuda && mode_info(opts.mode).data_parallel) {
    // One rank per GPU: NCCL refuses two ranks on one device, and would say so only after
    // every rank had joined the communicator. Say it here, before the first collective. Two
    // ranks on one GPU, judged by UUID (gpu_choice.h), not by how many GPUs a rank sees: under
    // a per-rank CUDA_VISIBLE_DEVICES each rank sees one, and that is right.
    if (!place.gpu_conflict.empty()) throw InputError(place.gpu_conflict);
    check_comm_options(Backend::cuda, s->link, s->algo);
    check_grad_format(Backend::cuda, s->grad_format);
    // Before the communicator's first NCCL call (nccl_shared_gpu.h).
    if (opts.share_gpu) apply_nccl_shared_gpu_env(place.rank);
    s->gpu_most_on_one = place.gpu_most_on_one;
  }
  if (opts.share_gpu && s->device->backend() != Backend::cuda) {
    throw InputError("--share-gpu: no GPU answers here (--backend " + opts.device.backend +
                     " chose the CPU, whose MPI ranks share no GPU)");
  }
  // The model's buffers, asked for before anything is allocated: on the CPU this
  // node's ranks share the physical memory; a GPU is one rank's.
  const bool on_cpu = s->device->backend() == Backend::cpu;
  check_fits("--model " + opts.model + " (" + std::to_string(s->spec.n_params()) + " parameters, batch " +
                 std::to_string(s->local_batch) + " per rank)",
             s->spec.bytes(s->local_batch, opts.momentum > 0), on_cpu ? place.local_size : 1,
             s->device->memory_bytes(), on_cpu ? "memory" : "GPU memory");
  check_diagnosis_options(opts, world_size, s->device->backend());

  s->data = s->spec.is_gpt() ? load_token_dataset(opts.data, s->spec.seq_len(), s->spec.out_width())
                             : load_dataset(opts.data, s->spec.in_width(), s->spec.out_width());
  // The batch, its accumulated step and the trace's steps against the samples: the rule a sweep
  // applies to every run of a config too.
  check_data_rules(opts, s->data.n);
  // An incomplete last step (fewer than accum_steps whole batches) is dropped.
  s->steps_per_epoch = s->data.n / (static_cast<int64_t>(opts.batch_size) * opts.accum_steps);
  to_device(*s->device, s->data.x, s->x_buf, s->x);
  to_device(*s->device, s->data.y, s->y_buf, s->y);
  if (s->data.n_test > 0) {
    to_device(*s->device, s->data.test_x, s->test_x_buf, s->test_x);
    to_device(*s->device, s->data.test_y, s->test_y_buf, s->test_y);
  }

  s->model = make_model(*s->device, s->spec, s->local_batch);
  // The sharded mode's units must split into K equal blocks: refused here, in the start-up
  // check's one line, rather than when the strategy is made.
  if (opts.mode == Mode::sharded) {
    plan_shards(s->model->layout(),
                opts.shard_stage == 3 ? layer_units(s->model->layout())
                                      : assign_buckets(s->model->layout(), opts.bucket_cap_mb, opts.first_bucket_mb,
                                                       parse_bucket_rule(opts.bucket_rule)),
                place.world_size);
  }
  if (!opts.init_path.empty()) {
    s->model->params_from_host(init_params);
  } else {
    s->model->init_params(opts.seed);
  }
  return s;
}

}  // namespace dpscale
