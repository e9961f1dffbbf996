// fuzz_results_line.cpp — libFuzzer target for what dpscale reads back: a results file
// (harness/results/results_file.cpp parse_results: JSON lines, the torn-line rule, sweep lines,
// contract/record.cpp record_from_json, duplicates) and a trainer's output (find_results_json
// then record_from_json, as judge_run reads it). An accepted record writes back (to_json) to
// JSON that reads back to the same record.
//   build/fuzz/fuzz_results_line fuzz/corpus/results_line
#include <set>

#include "contract/record.h"
#include "fuzz_input.h"
#include "harness/results/results_file.h"
#include "core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dpscale;
  const std::string text = fuzz::text_of(data, size);
  try {
    const ResultsFile f = parse_results(text, "fuzz.jsonl");
    for (const SweepEntry& e : f.entries) fuzz::require(e.ok == e.record.has_value());
  } catch (const InputError&) {
  }
  if (const auto j = find_results_json(text)) {
    RunRecord r;
    try {
      r = record_from_json(*j);
    } catch (const std::exception&) {  // judge_run's rule: the reason is recorded, the sweep goes on
      return 0;
    }
    const std::string once = to_json(r).dump();
    fuzz::require(to_json(record_from_json(nlohmann::json::parse(once))).dump() == once);
  }
  return 0;
}
