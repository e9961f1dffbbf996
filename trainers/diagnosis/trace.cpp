// trace.cpp — recording one rank's timeline and merging the ranks' into one trace file.
#include "trainers/diagnosis/trace.h"

#include <algorithm>

namespace dpscale {

using nlohmann::ordered_json;

namespace {
const char* track_name(Track t) {
  switch (t) {
    case Track::step: return "step";
    case Track::compute: return "compute";
    case Track::comm: return "comm (all-reduce)";
    case Track::loader: return "loader";
  }
  return "?";
}
const char* track_cat(Track t) {
  switch (t) {
    case Track::step: return "step";
    case Track::compute: return "compute";
    case Track::comm: return "comm";
    case Track::loader: return "loader";
  }
  return "?";
}
}  // namespace

Tracer::Tracer(TraceSteps steps, const ParamLayout& layout, const float* grads, std::unique_ptr<StampClock> device_clock)
    : steps_(steps), layout_(layout), grads_(grads), device_(std::move(device_clock)), origin_s_(steady_seconds()) {}

StampClock& Tracer::clock_of(Track t) { return t == Track::loader ? static_cast<StampClock&>(host_) : *device_; }

void Tracer::set_origin() {
  device_->anchor();
  origin_s_ = steady_seconds();
  last_read_s_ = origin_s_;
}

void Tracer::begin_step(int64_t step) {
  step_ = step;
  on_ = steps_.contains(step);
  call_index_ = 0;
  if (!on_) return;
  device_->anchor();  // a fresh tie to the host clock per traced step (stamp_clock.h)
  mark(Track::step);
}

void Tracer::mark(Track t) {
  if (on_) marks_[static_cast<int>(t)] = clock_of(t).stamp();
}

void Tracer::span(Track t, const std::string& name, ordered_json args) {
  if (!on_) return;
  const int end = clock_of(t).stamp();
  args["step"] = step_;
  spans_.push_back(Span{t, name, true, marks_[static_cast<int>(t)], end, 0.0, 0.0, std::move(args)});
  marks_[static_cast<int>(t)] = end;  // the next span on this track starts here
}

void Tracer::grad_ready(const FlatTensor& t) {
  if (!on_) return;
  span(Track::compute, "backward " + t.name(), ordered_json{{"tensor", t.index}, {"tensor_name", t.name()}});
}

void Tracer::end_step() {
  if (!on_) return;
  span(Track::step, "step " + std::to_string(step_), ordered_json::object());
}

void Tracer::add_calls(const std::vector<CallTiming>& calls, const std::vector<int64_t>& bytes) {
  if (!on_) return;
  for (size_t i = 0; i < calls.size(); ++i) {
    const CallTiming& c = calls[i];
    // The tensors the call covers: those whose offset lies in [offset, offset + count).
    const int64_t offset = c.data - grads_;
    int first = -1, last = -1;
    for (const FlatTensor& t : layout_.tensors()) {
      if (t.offset >= offset && t.offset < offset + static_cast<int64_t>(c.count)) {
        if (first < 0) first = t.index;
        last = t.index;
      }
    }
    ordered_json args{{"bytes", bytes.at(i)},
                      {"call", call_index_++},
                      {"first_tensor", first},
                      {"last_tensor", last},
                      {"queued_us", (c.queued_s - origin_s_) * 1e6},
                      {"step", step_}};
    spans_.push_back(Span{Track::comm, "all-reduce " + std::to_string(bytes.at(i)) + " B", false, -1, -1,
                          c.start_s, c.end_s, std::move(args)});
  }
}

void Tracer::contention(double run_delay_s, int64_t involuntary_switches) {
  const double now = steady_seconds();
  if (on_) {
    counters_.push_back(Counter{last_read_s_, run_delay_s, involuntary_switches});
    // The last traced step's values end with it.
    if (step_ == steps_.last) counters_.push_back(Counter{now, 0.0, 0});
  }
  last_read_s_ = now;
}

std::string Tracer::events_text() {
  ordered_json a = ordered_json::array();
  for (const Counter& c : counters_) {
    const double ts = (c.t_s - origin_s_) * 1e6;
    a.push_back({{"name", "run delay (ms per step)"}, {"ph", "C"}, {"ts", ts}, {"args", {{"ms", 1e3 * c.run_delay_s}}}});
    a.push_back({{"name", "involuntary switches (per step)"}, {"ph", "C"}, {"ts", ts},
                 {"args", {{"count", c.switches}}}});
  }
  for (Span& sp : spans_) {
    double start = sp.start_s, end = sp.end_s;
    if (sp.stamped) {
      start = sp.start_id >= 0 ? clock_of(sp.track).seconds(sp.start_id) : origin_s_;
      end = clock_of(sp.track).seconds(sp.end_id);
    }
    ordered_json e;
    e["name"] = sp.name;
    e["cat"] = track_cat(sp.track);
    e["ph"] = "X";
    e["ts"] = (start - origin_s_) * 1e6;
    e["dur"] = std::max(0.0, (end - start) * 1e6);
    e["tid"] = static_cast<int>(sp.track);
    e["args"] = sp.args;
    a.push_back(std::move(e));
  }
  return a.dump();
}

namespace {
// Whether event `e` of the straggler's process is a span of its cause.
bool slow_span(const ordered_json& e, const std::string& cause) {
  if (e.value("ph", "") != "X") return false;
  const int tid = e.value("tid", -1);
  if (cause == "compute") return tid == static_cast<int>(Track::compute) && e.value("name", "").rfind("backward", 0) == 0;
  if (cause == "loader") return tid == static_cast<int>(Track::loader);
  if (cause == "link") return tid == static_cast<int>(Track::comm);
  return false;
}
}  // namespace

std::string Tracer::merge(const std::vector<std::string>& per_rank, const ordered_json& meta, const TraceStraggler& straggler) {
  ordered_json events = ordered_json::array();
  for (size_t r = 0; r < per_rank.size(); ++r) {
    const int pid = static_cast<int>(r);
    const bool slow = pid == straggler.rank;
    const std::string label = straggler.contended ? "contended (" + straggler.cause + "), not a straggler"
                                                  : "straggler (" + straggler.cause + ")";
    const std::string name = "rank " + std::to_string(r) + (slow ? " — " + label : "");
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}});
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
    for (Track t : {Track::step, Track::compute, Track::comm, Track::loader}) {
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", static_cast<int>(t)},
                        {"args", {{"name", track_name(t)}}}});
    }
    for (ordered_json e : ordered_json::parse(per_rank[r])) {
      e["pid"] = pid;
      if (slow && slow_span(e, straggler.cause)) {
        // Chrome's trace viewer colours for "bad" and for "the machine was busy"
        e["cname"] = straggler.contended ? "yellow" : "terrible";
        e["args"][straggler.contended ? "contended" : "straggler"] = straggler.cause;
      }
      events.push_back(std::move(e));
    }
  }
  ordered_json other = meta;
  if (straggler.rank >= 0) {
    other[straggler.contended ? "contended" : "straggler"] = {{"rank", straggler.rank}, {"cause", straggler.cause}};
  }
  ordered_json file{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"otherData", other}};
  return file.dump();
}

}  // namespace dpscale
