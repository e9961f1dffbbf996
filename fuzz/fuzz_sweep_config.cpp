// fuzz_sweep_config.cpp — libFuzzer target for sweep configs (harness/sweep/config_parse.cpp parse_config).
// An accepted config expands without error into runs whose run ids are unique (duplicates on
// any axis are refused), and renders each run's trainer arguments.
//   build/fuzz/fuzz_sweep_config fuzz/corpus/sweep_config
#include <set>

#include "fuzz_input.h"
#include "harness/sweep/config.h"
#include "core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dpscale;
  SweepConfig c;
  try {
    c = parse_config(fuzz::text_of(data, size), "fuzz.json");
  } catch (const InputError&) {
    return 0;
  }
  const std::vector<SweepRun> runs = expand(c, 2);
  std::set<std::string> ids;
  for (const SweepRun& p : runs) {
    fuzz::require(ids.insert(p.run_id(c.name)).second);
    fuzz::require(!p.args.empty());
  }
  fuzz::require(config_hash(c).size() == 16);
  return 0;
}
