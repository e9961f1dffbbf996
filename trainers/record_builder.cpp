// record_builder.cpp — from per-rank epoch stats to the one record.
//
// Policies (stated, as nccl-tests states its own): an epoch's time is the slowest rank's; comm
// times are the mean over ranks of each rank's per-epoch average; compute_s is the epoch time
// minus that comm wait; the loss of an epoch is the mean over its steps.
#include "record_builder.h"

#include <algorithm>

namespace dpscale {

RunRecord build_record(const RecordContext& ctx, const PerRankEpochs& epochs, std::optional<double> test_accuracy) {
  const RankSetup& s = *ctx.setup;
  const ModeInfo& mode = mode_info(s.opts.mode);
  const TrainOptions& o = s.opts;
  RunRecord r;
  r.mode = mode.name;
  r.backend = backend_name(s.device->backend());
  r.device_name = s.device->name();
  r.cublas_math = s.device->gemm_math();
  const GemmReport gemm = s.device->gemm_report();
  r.gemm_library = gemm.info.library;
  r.gemm_kernel = gemm.info.kernel;
  r.gemm_pinned = gemm.info.pinned;
  r.gemm_choice = gemm.choice;
  r.gemm_passed_over = gemm.passed_over;
  r.model = s.spec.name;
  r.widths = s.spec.widths;
  r.n_params = s.spec.n_params();
  r.seq_len = s.spec.seq_len();
  r.tensor_count = static_cast<int64_t>(s.model->layout().tensors().size());
  r.largest_tensor_bytes = s.model->layout().largest_tensor_bytes();
  r.world_size = s.world_size;
  r.n_nodes = ctx.n_nodes;
  r.ranks_per_node = ctx.ranks_per_node;
  r.nodes = ctx.nodes;
  r.global_batch = o.batch_size;
  r.local_batch = s.local_batch;
  r.dataset = s.data.kind;
  r.n_samples = s.data.n;
  r.epochs = o.epochs;
  r.steps_per_epoch = s.steps_per_epoch;
  r.lr = o.lr;
  r.seed = o.seed;
  r.threads = o.device.threads;

  const auto& rank0 = epochs.front();
  const size_t n_epochs = rank0.size();
  double total_time = 0.0, wait_sum = 0.0, busy_sum = 0.0, ag_sum = 0.0, ag_wait_sum = 0.0;
  for (size_t e = 0; e < n_epochs; ++e) {
    double slowest = 0.0;
    for (const auto& rank_epochs : epochs) slowest = std::max(slowest, rank_epochs[e].time_s);
    r.epoch_times_s.push_back(slowest);
    total_time += slowest;
    r.steps += rank0[e].steps;
    r.loss_global.push_back(rank0[e].loss_global);
    r.loss_rank0.push_back(rank0[e].loss_local);
  }
  r.losses = r.loss_global;
  for (const auto& rank_epochs : epochs) {
    double t = 0.0;
    for (const EpochStats& st : rank_epochs) {
      t += st.time_s;
      wait_sum += st.wait_s;
      busy_sum += st.busy_s;
      ag_sum += st.allgather_s;
      ag_wait_sum += st.allgather_wait_s;
      r.peak_rss_bytes = std::max(r.peak_rss_bytes, st.peak_rss_bytes);
    }
    r.per_rank_epoch_s.push_back(n_epochs ? t / static_cast<double>(n_epochs) : 0.0);
  }
  const double per_epoch = n_epochs ? 1.0 / (static_cast<double>(n_epochs) * static_cast<double>(epochs.size())) : 0.0;
  r.avg_epoch_s = n_epochs ? total_time / static_cast<double>(n_epochs) : 0.0;
  // Every micro-batch is trained on: an optimizer step covers accum_steps batches of B rows.
  r.throughput_samples_per_s =
      total_time > 0 ? static_cast<double>(r.steps) * o.batch_size * o.accum_steps / total_time : 0.0;
  r.tokens_per_s = r.throughput_samples_per_s * r.seq_len;
  r.test_accuracy = test_accuracy;

  r.comm = ctx.comm;
  r.allreduce = ctx.allreduce;
  r.link = ctx.link.enabled() ? o.link : "none";
  if (ctx.link.enabled()) {
    r.link_alpha_us = ctx.link.alpha_us;
    r.link_gbps = ctx.link.gbps;
  }
  r.link_dilation = ctx.link.enabled() ? ctx.link.dilation : 1.0;
  // The wait goes where the mode table says: naive's whole comm phase, or the exposed wait.
  // The sharded trainer's wait for its all-gathers (0 for the other modes) is exposed
  // communication too: in the wait, so compute_s is compute (allgather_exposed_s says how much).
  const double wait = (wait_sum + ag_wait_sum) * per_epoch;
  if (mode.wait_field == WaitField::comm_s) r.comm_s = wait;
  if (mode.wait_field == WaitField::exposed_comm_s) r.exposed_comm_s = wait;
  if (mode.data_parallel) r.comm_busy_s = busy_sum * per_epoch;
  r.compute_s = r.avg_epoch_s - wait;  // a world of one never waits
  r.allreduce_calls_per_step = ctx.sync.calls_per_step;
  r.allreduce_bytes_per_step = ctx.sync.bytes_per_step;
  r.bucket_cap_mb = ctx.sync.bucket_cap_mb;
  r.first_bucket_mb = ctx.sync.first_bucket_mb;
  r.n_buckets = ctx.sync.n_buckets;
  r.bucket_bytes = ctx.sync.bucket_bytes;
  r.mpi_library = ctx.mpi_library;
  r.nccl_version = ctx.nccl_version;
  r.version = build_version();
  r.timestamp = ctx.timestamp;
  r.replicas_agree = ctx.replicas_agree;
  r.accum_steps = o.accum_steps;
  r.tf32 = o.device.tf32;
  r.finite_check = o.finite_check_every > 0 ? "optimizer" : "off";
  r.finite_check_every = o.finite_check_every;
  r.forward_epilogue = s.device->forward_epilogue();
  r.gpu_shared = ctx.gpu_shared;
  if (mode.data_parallel) r.grad_comm = o.grad_comm;
  if (ctx.sync.n_buckets) r.bucket_rule = o.bucket_rule;
  r.optimizer = o.optimizer;
  r.shard_stage = ctx.sync.shard_stage;
  r.prefetch_units = ctx.sync.prefetch_units;
  r.param_bytes_per_rank = ctx.sync.param_bytes;
  r.grad_bytes_per_rank = ctx.sync.grad_bytes;
  r.optim_bytes_per_rank = ctx.sync.optim_bytes;
  r.peak_device_bytes = static_cast<int64_t>(s.device->peak_allocated_bytes());
  r.reduce_scatter_bytes_per_step = ctx.sync.reduce_scatter_bytes_per_step;
  r.allgather_bytes_per_step = ctx.sync.allgather_bytes_per_step;
  r.allgather_s = ag_sum * per_epoch;
  r.allgather_exposed_s = ag_wait_sum * per_epoch;
  return r;
}

}  // namespace dpscale
