// fake_sweep.h — a directory of fake trainers (shell scripts standing in for train_*), a config
// for them and a log of every call: the sweep loop's tests run `dpscale sweep` against it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness_util.h"

namespace dpscale {

using test::lines_of;
using test::make_record;
using test::pt;
using test::read_file;
using test::write_file;

// A directory of fake trainers, a config for them, and a log of every call.
struct FakeSweep {
  test::ScratchDir dir;
  std::string bin = dir.file("bin");
  std::string config = dir.file("fake.json");
  std::string out = dir.file("out.jsonl");
  std::string calls = dir.file("calls.log");

  FakeSweep() {
    std::filesystem::create_directories(bin);
    write_file(config, R"({"name": "fake", "models": ["small"], "modes": ["single", "naive", "interleaved", "bucketed"],
                           "world_sizes": [2], "bucket_caps_mb": [1], "link": "pcie4", "timeout_s": 30})");
    for (const char* m : {"single", "naive", "interleaved", "bucketed"}) behave(m, "ok");
  }
  // ok: print the record of that mode | fail: exit 3 with a message | hang: sleep in a grandchild
  // | silent: exit 0 without a record | wrong: print a single-device record | slow: ok after 0.7 s
  // | gated: ok once the file dir/release exists (at most 30 s); dir/gated.log names the sweep
  // that started it
  void behave(const std::string& mode, const std::string& how) {
    const SweepPoint p = mode == "single" ? pt("small", mode, 1) : pt("small", mode, 2, mode == "bucketed" ? 1.0 : std::optional<double>(), "pcie4");
    write_file(dir.file(mode + ".json"), to_json(make_record(how == "wrong" ? pt("small", "single", 1) : p, 0.5, 0.1)).dump());
    std::string body = "#!/bin/sh\necho \"" + mode + " $*\" >> " + calls + "\n";
    if (how == "ok" || how == "wrong") body += "echo '# fake banner' >&2\nprintf 'RESULTS_JSON: '\ncat " + dir.file(mode + ".json") + "\necho\n";
    if (how == "fail") body += "echo 'fake: boom' >&2\nexit 3\n";
    if (how == "hang") body += "echo $$ > " + dir.file("hang.sh.pid") + "\nsleep 60 &\necho $! > " + dir.file("hang.pid") + "\nwait\n";
    if (how == "slow") body += "sleep 0.7\nprintf 'RESULTS_JSON: '\ncat " + dir.file(mode + ".json") + "\necho\n";
    if (how == "silent") body += "exit 0\n";
    if (how == "gated") {
      // Which sweep started it: only sweep B of the lock race test runs with the gap hook set.
      body += "who=C\n[ -n \"$DPSCALE_TEST_OUT_LOCK_GAP\" ] && who=B\necho \"$who " + mode + "\" >> " +
              dir.file("gated.log") + "\n";
      body += "i=0\nwhile [ ! -e " + dir.file("release") + " ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done\n" +
              "printf 'RESULTS_JSON: '\ncat " + dir.file(mode + ".json") + "\necho\n";
    }
    write_file(bin + "/" + mode_named(mode).executable, body, true);
  }
  ProcessResult sweep(std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"sweep", config, "--out", out, "--bin-dir", bin, "--launcher", "none", "--disturbed-reruns", "0", "--probe-seconds", "0"};
    a.insert(a.end(), extra.begin(), extra.end());
    return test::dpscale(a, 120);
  }
  std::vector<std::string> called() { return lines_of(read_file(calls)); }
};

}  // namespace dpscale
