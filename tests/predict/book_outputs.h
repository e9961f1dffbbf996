// book_outputs.h — the textbook's printed outputs (Output 15.9.1 of section 15.9, Output 15.2.1
// of section 15.2), read from harness/predict/book/, where they are kept once, copied verbatim
// from the book's text; the plotter's reproduction report reads the same files. The tests
// compare `dpscale predict --textbook` with them character for character.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace dpscale::test {

// The file's text; a line naming the file when it cannot be read, so the comparison fails
// saying which.
inline std::string book_output(const std::string& name) {
  const std::string path = std::string(DPSCALE_SOURCE_DIR) + "/harness/predict/book/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) return "(cannot read " + path + ")\n";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline const std::string kOutput1591 = book_output("output-15.9.1.txt");
inline const std::string kOutput1521 = book_output("output-15.2.1.txt");

}  // namespace dpscale::test
