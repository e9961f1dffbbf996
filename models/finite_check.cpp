// finite_check.cpp — naming the first non-finite value of a flat parameter or gradient buffer.
#include "finite_check.h"

#include "param_layout.h"

namespace dpscale {

std::string describe_first_nonfinite(const ParamLayout& layout, const float* buf) {
  // Forward order (a state_dict's), so the first name is the one a reader of the checkpoint meets first.
  for (int index : layout.forward_order()) {
    {
      const FlatTensor* t = &layout.tensors()[static_cast<size_t>(index)];
      const int64_t i = first_nonfinite(buf + t->offset, t->count);
      if (i < 0) continue;
      // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "[" + to_string().
      std::string out = t->name();
      out += '[';
      out += std::to_string(t->is_bias ? i : i / t->cols);
      if (!t->is_bias) {
        out += ", ";
        out += std::to_string(i % t->cols);
      }
      out += "] is ";
      out += nonfinite_name(buf[t->offset + i]);
      return out;
    }
  }
  return "";
}

}  // namespace dpscale
