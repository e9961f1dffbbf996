// atomic_file.h — whole-file reads and all-or-nothing writes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dpscale {

// Writes `parts` one after the other to a temporary file beside `path`, flushes it to disk and
// renames it over `path`: readers see the old file or the complete new one, never half of one.
// On failure the temporary is removed and InputError names `what` and the path.
void write_file_atomically(const std::string& path, const std::vector<std::string_view>& parts,
                           const std::string& what);

// Reads a whole file; InputError naming `what` and the path if it cannot be opened.
std::vector<char> read_whole_file(const std::string& path, const std::string& what);

}  // namespace dpscale
