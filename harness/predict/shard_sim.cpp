// shard_sim.cpp — the sharded mode's step: stage 1 time-driven from backward's completions,
// stages 2 and 3 the trainer's parameter gate replayed against the channel (shard_sim.h).
#include "shard_sim.h"

#include <algorithm>
#include <stdexcept>

#include "contract/grad_wire.h"
#include "models/param_layout.h"
#include "trainers/buckets.h"
#include "trainers/shard_plan.h"

namespace dpscale::predict {

int64_t ShardStep::bytes(CollKind k) const {
  int64_t n = 0;
  for (const Collective& c : calls) {
    if (c.kind == k) n += c.nbytes;
  }
  return n;
}

namespace {

constexpr int64_t kFloat = static_cast<int64_t>(sizeof(float));

// The one channel: every collective in issue order, each starting when the one before has ended.
class Channel {
 public:
  Channel(ShardStep& s, const CollectiveSeconds& seconds) : s_(s), seconds_(seconds) {}
  // Queues a collective issued at `at`; returns when it will end.
  double issue(CollKind kind, int64_t nbytes, double at) {
    const double d = seconds_(kind, nbytes);
    Collective c{kind, nbytes, at, std::max(at, free_), 0};
    c.end = c.start + d;
    free_ = c.end;
    s_.times.busy += d;
    s_.times.starts.push_back(c.start);
    if (kind == CollKind::allreduce) ++s_.times.calls;
    s_.calls.push_back(c);
    return c.end;
  }
  double free() const { return free_; }

 private:
  ShardStep& s_;
  const CollectiveSeconds& seconds_;
  double free_ = 0;
};

void finish(ShardStep& s, const Channel& ch, double t_compute) {
  s.times.compute = t_compute;
  s.times.step = std::max(s.compute_end, ch.free());
  s.times.exposed = s.times.step - t_compute;
}

// Stage 1: bucketed's units all-reduced as backward completes them; the gathers after it.
ShardStep buckets_step(const ModelSpec& spec, const SyncSetup& sync, double t_c, const CollectiveSeconds& seconds) {
  const ParamLayout layout = spec.layout();
  const BackwardPlan plan = backward_plan(spec);
  // k = 1: every unit's floats, up to the next unit's offset, as plan_shards counts them at any K.
  const ShardPlan units = plan_shards(layout, assign_buckets(layout, sync.bucket_cap_mb, sync.first_bucket_mb), 1);
  ShardStep s;
  Channel ch(s, seconds);
  for (size_t u = 0; u < units.units.size(); ++u) {
    const ShardUnit& unit = units.units[u];
    const bool last = u + 1 == units.units.size();
    const double at = plan.tensors[static_cast<size_t>(unit.last_tensor)].ready * t_c;
    const size_t n = static_cast<size_t>(unit.count);
    // the loss slot rides in the last unit, as in bucketed
    ch.issue(CollKind::allreduce, static_cast<int64_t>(grad_wire_bytes(sync.grad_format, n + (last ? 1 : 0), last)), at);
  }
  // After backward (and the update, inside t_c): wait, then every unit all-gathered in fp32 and
  // the flag summed, all waited for.
  const double after = std::max(t_c, ch.free());
  for (const ShardUnit& unit : units.units) ch.issue(CollKind::allgather, unit.count * kFloat, after);
  ch.issue(CollKind::allreduce, kFloat, after);
  s.compute_end = t_c;
  finish(s, ch, t_c);
  return s;
}

// Stages 2 and 3: the gate of sync_sharded_params.cpp, replayed. Events are compute points
// (fractions of t_c); the clock is the compute done plus the waits so far. Stage 2's units are
// bucketed's buckets, all queued as forward begins (in the order forward reads them) and whole
// from there to the update: no release, no regather in backward.
class ParamGateSim {
 public:
  ParamGateSim(const ModelSpec& spec, const SyncSetup& sync, double t_c, const CollectiveSeconds& seconds)
      : layout_(spec.layout()), plan_(backward_plan(spec)), stage3_(sync.shard_stage == 3),
        units_(plan_shards(layout_,
                           stage3_ ? layer_units(layout_) : assign_buckets(layout_, sync.bucket_cap_mb, sync.first_bucket_mb),
                           1).units),
        ch_(s_, seconds), t_c_(t_c),
        prefetch_(std::max(0, sync.prefetch_units)), format_(sync.grad_format), n_(units_.size()),
        held_(n_, Held::shard), end_(n_, 0), root_(n_), fread_(n_, 2), bread_(n_, 2), done_(n_, 0) {
    for (size_t u = 0; u < n_; ++u) {
      const ShardUnit& unit = units_[u];
      root_[u] = stage3_ && layout_.tensors()[static_cast<size_t>(unit.first_tensor)].layer < 0;
      for (int t = unit.first_tensor; t <= unit.last_tensor; ++t) {
        const GradTensor& g = plan_.tensors[static_cast<size_t>(t)];
        fread_[u] = std::min(fread_[u], g.forward_read);
        if (g.backward_read >= 0) bread_[u] = std::min(bread_[u], g.backward_read);
        done_[u] = std::max(done_[u], g.ready);
      }
      if (!root_[u]) backward_order_.push_back(u);
    }
    forward_order_.assign(backward_order_.rbegin(), backward_order_.rend());
  }

  ShardStep run() {
    // Forward: the roots, then the first P layers queued; each layer's read in compute order.
    for (size_t u = 0; u < n_; ++u) {
      if (root_[u]) issue(u, 0);
    }
    if (stage3_) {
      for (int i = 0; i < prefetch_ && i < static_cast<int>(forward_order_.size()); ++i) issue(forward_order_[static_cast<size_t>(i)], 0);
    } else {
      for (size_t u : forward_order_) issue(u, 0);
    }
    // At a tie the roots first: the transformer's embedding reads wte and wpe before block 0.
    std::vector<std::pair<double, size_t>> reads;
    for (size_t u = 0; u < n_; ++u) reads.push_back({fread_[u], u});
    std::stable_sort(reads.begin(), reads.end(), [&](const auto& a, const auto& b) {
      return a.first < b.first || (a.first == b.first && root_[a.second] && !root_[b.second]);
    });
    for (const auto& [f, u] : reads) needed(u, f, forward_order_);
    // Backward begins: the layer forward ended with stays whole, as backward's first.
    if (!backward_order_.empty() && current_ != backward_order_.front()) release_current();
    current_ = kNone;
    // Backward's reads and completions in compute order (a completion first at a tie: a
    // tensor's gradient is written before the next read).
    struct Event {
      double at;
      bool read;
      size_t u;
    };
    std::vector<Event> events;
    for (size_t u = 0; u < n_; ++u) {
      if (stage3_ && bread_[u] <= 1) events.push_back({bread_[u], true, u});  // stage 2: whole since forward
      events.push_back({done_[u], false, u});
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const Event& a, const Event& b) { return a.at < b.at || (a.at == b.at && !a.read && b.read); });
    for (const Event& e : events) {
      if (e.read) {
        needed(e.u, e.at, backward_order_);
        continue;
      }
      const double now = clock(e.at);
      ch_.issue(CollKind::reduce_scatter, static_cast<int64_t>(grad_wire_bytes(format_, static_cast<size_t>(units_[e.u].count), false)), now);
      if (e.u + 1 == n_) ch_.issue(CollKind::allreduce, kFloat, now);  // the loss slot, behind the last
    }
    // The update (inside t_c), then the flag; finish() waits for every call, prefetches included.
    s_.compute_end = clock(1.0);
    ch_.issue(CollKind::allreduce, kFloat, s_.compute_end);
    finish(s_, ch_, t_c_);
    return s_;
  }

 private:
  enum class Held { shard, gathering, whole };
  static constexpr size_t kNone = static_cast<size_t>(-1);

  double clock(double fraction) const { return fraction * t_c_ + s_.gather_wait; }

  void issue(size_t u, double now) {
    if (held_[u] != Held::shard) return;
    end_[u] = ch_.issue(CollKind::allgather, units_[u].count * kFloat, now);
    held_[u] = Held::gathering;
  }

  void make_whole(size_t u, double now) {
    issue(u, now);
    if (held_[u] == Held::gathering && end_[u] > now) s_.gather_wait += end_[u] - now;
    held_[u] = Held::whole;
  }

  void release_current() {
    if (current_ != kNone && held_[current_] != Held::gathering) held_[current_] = Held::shard;
    current_ = kNone;
  }

  // ParamGate::param_needed for unit u at compute point f.
  void needed(size_t u, double f, const std::vector<size_t>& order) {
    const double now = clock(f);
    if (root_[u] || !stage3_) {
      make_whole(u, now);
      return;
    }
    if (u == current_) return;
    release_current();
    current_ = u;
    const size_t at = static_cast<size_t>(std::find(order.begin(), order.end(), u) - order.begin());
    issue(u, now);
    for (int i = 1; i <= prefetch_ && at + static_cast<size_t>(i) < order.size(); ++i) issue(order[at + static_cast<size_t>(i)], now);
    make_whole(u, now);
  }

  ParamLayout layout_;
  BackwardPlan plan_;
  bool stage3_;
  std::vector<ShardUnit> units_;
  ShardStep s_;
  Channel ch_;
  double t_c_;
  int prefetch_;
  GradFormat format_;
  size_t n_;
  std::vector<Held> held_;
  std::vector<double> end_;
  std::vector<bool> root_;
  std::vector<double> fread_, bread_, done_;  // per unit: first forward read, first backward read (2: none), complete
  std::vector<size_t> forward_order_, backward_order_;
  size_t current_ = kNone;
};

}  // namespace

ShardStep simulate_sharded(const ModelSpec& spec, const SyncSetup& sync, double t_compute, const CollectiveSeconds& seconds) {
  if (sync.mode != Mode::sharded) throw std::logic_error("predict: simulate_sharded of a mode that is not sharded");
  if (sync.shard_stage == 1) return buckets_step(spec, sync, t_compute, seconds);
  if (sync.shard_stage == 2 || sync.shard_stage == 3) return ParamGateSim(spec, sync, t_compute, seconds).run();
  throw std::logic_error("predict: no shard stage " + std::to_string(sync.shard_stage));
}

}  // namespace dpscale::predict
