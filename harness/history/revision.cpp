// revision.cpp — --rev and --rev-time (revision.h).
#include "harness/history/revision.h"

#include <ctime>
#include <regex>

#include "core/errors.h"
#include "harness/common/subprocess.h"

namespace dpscale::history {

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string utc_iso(const std::string& text, const std::string& what) {
  static const std::regex iso(
      R"((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)");
  std::smatch m;
  const std::string bad = (what.empty() ? "" : what + " ") + "'" + text + "' is not an ISO 8601 time (e.g. 2026-11-26T08:00:00Z)";
  if (!std::regex_match(text, m, iso)) throw InputError(bad);
  std::tm t{};
  t.tm_year = std::stoi(m[1]) - 1900;
  t.tm_mon = std::stoi(m[2]) - 1;
  t.tm_mday = std::stoi(m[3]);
  t.tm_hour = std::stoi(m[4]);
  t.tm_min = std::stoi(m[5]);
  t.tm_sec = m[6].matched ? std::stoi(m[6]) : 0;
  const std::tm asked = t;
  time_t secs = ::timegm(&t);
  // timegm normalises February 30th into March: a date that moved did not exist.
  if (t.tm_mday != asked.tm_mday || t.tm_mon != asked.tm_mon || asked.tm_hour > 23 || asked.tm_min > 59 ||
      asked.tm_sec > 60) {
    throw InputError(bad + ": no such date or time");
  }
  if (m[7].matched && m[7] != "Z") {
    const std::string z = m[7];
    const int sign = z[0] == '-' ? -1 : 1;
    const std::string digits = z.substr(1, 2) + z.substr(z.size() - 2);
    const int offset_min = std::stoi(digits.substr(0, 2)) * 60 + std::stoi(digits.substr(2, 2));
    secs -= sign * offset_min * 60;
  }
  char buf[32];
  std::tm utc{};
  ::gmtime_r(&secs, &utc);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

Revision resolve_revision(const std::string& rev, const std::string& rev_time, const std::string& flag) {
  const std::string time_flag = flag + "-time";
  if (rev.empty()) throw InputError(flag + " is empty");
  Revision r;
  r.name = rev;
  ProcessOptions po;
  po.timeout_s = 30;
  // `--end-of-options`-free: a REV starting with '-' is no revision git would take, so refuse it.
  if (rev[0] == '-') throw InputError(flag + " '" + rev + "' cannot start with '-'");
  const ProcessResult p = run_process({"git", "rev-parse", "--verify", "--quiet", rev + "^{commit}"}, po);
  if (!p.spawn_failed && p.exit_code == 0) {
    if (!rev_time.empty()) {
      throw InputError(flag + " " + rev + " is a commit of this repository: its commit time orders it (leave out " + time_flag + ")");
    }
    r.commit_id = trimmed(p.out);
    const ProcessResult t = run_process({"git", "show", "-s", "--format=%cI", r.commit_id}, po);
    if (t.exit_code != 0) throw InputError("git cannot show commit " + r.commit_id + ": " + trimmed(t.err));
    r.commit_time = utc_iso(trimmed(t.out), "the commit time of " + rev);
    return r;
  }
  if (rev_time.empty()) {
    throw InputError(flag + " " + rev + " is not a commit of the repository here: give its time with " + time_flag + " ISO");
  }
  r.commit_time = utc_iso(rev_time, time_flag);
  return r;
}

}  // namespace dpscale::history
