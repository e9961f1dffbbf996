// safetensors.cpp — reader and writer of the safetensors container.
#include "safetensors.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "models/io/atomic_file.h"
#include "core/json_int.h"
#include "core/errors.h"
#include "models/finite_check.h"

namespace dpscale {

namespace {
constexpr uint64_t kMaxHeader = 100u << 20;  // the reference implementation's limit (100 MB)

size_t dtype_size(const std::string& dt) {
  static const std::map<std::string, size_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4},
      {"I16", 2}, {"I8", 1},  {"U8", 1},  {"BOOL", 1}, {"U16", 2}, {"U32", 4}, {"U64", 8}};
  auto it = sizes.find(dt);
  return it == sizes.end() ? 0 : it->second;
}
}  // namespace

StFile read_safetensors(const std::string& path) {
  const std::vector<char> b = read_whole_file(path, "safetensors");
  const std::string where = "safetensors '" + path + "'";
  if (b.size() < 8) throw InputError(where + ": truncated (no header length)");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(b[static_cast<size_t>(i)]);
  if (n > kMaxHeader || n > b.size() - 8) throw InputError(where + ": truncated or corrupt header length " + std::to_string(n));
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(b.begin() + 8, b.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": header is not valid JSON");
  }
  if (!header.is_object()) throw InputError(where + ": header is not a JSON object");
  const uint64_t buffer_size = b.size() - 8 - n;
  const char* buffer = b.data() + 8 + n;

  StFile file;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) throw InputError(where + ": __metadata__ is not an object");
      for (auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw InputError(where + ": metadata value of '" + k + "' is not a string");
        file.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    try {
      StTensor t;
      t.dtype = entry.at("dtype").get<std::string>();
      if (!json_integers_fit<int64_t>(entry.at("shape")) || !json_integers_fit<uint64_t>(entry.at("data_offsets"))) {
        throw InputError(where + ": tensor '" + name + "' has a shape or data_offsets that are not integers in range");
      }
      t.shape = entry.at("shape").get<std::vector<int64_t>>();
      auto off = entry.at("data_offsets").get<std::vector<uint64_t>>();
      const size_t isz = dtype_size(t.dtype);
      if (isz == 0) throw InputError(where + ": tensor '" + name + "' has unknown dtype '" + t.dtype + "'");
      if (off.size() != 2 || off[0] > off[1]) throw InputError(where + ": tensor '" + name + "' has bad data_offsets");
      if (off[1] > buffer_size) throw InputError(where + ": truncated: tensor '" + name + "' ends past the end of the file");
      uint64_t count = 1;
      for (int64_t d : t.shape) {
        if (d < 0) throw InputError(where + ": tensor '" + name + "' has a negative dimension");
        // Checked: a product that wrapped could match a short byte length.
        if (__builtin_mul_overflow(count, static_cast<uint64_t>(d), &count)) {
          throw InputError(where + ": tensor '" + name + "' has a shape whose element count overflows 64 bits");
        }
      }
      uint64_t nbytes = 0;
      if (__builtin_mul_overflow(count, static_cast<uint64_t>(isz), &nbytes) || nbytes != off[1] - off[0]) {
        throw InputError(where + ": tensor '" + name + "' shape does not match its byte length");
      }
      t.bytes.assign(buffer + off[0], buffer + off[1]);
      ranges.emplace_back(off[0], off[1]);
      file.tensors.emplace(name, std::move(t));
    } catch (const nlohmann::json::exception&) {
      throw InputError(where + ": tensor '" + name + "' has a malformed header entry");
    }
  }
  // The byte buffer must be covered exactly: no overlaps, no holes.
  std::sort(ranges.begin(), ranges.end());
  uint64_t pos = 0;
  for (auto [begin, end] : ranges) {
    if (begin != pos) throw InputError(where + ": data offsets overlap or leave a hole at byte " + std::to_string(pos));
    pos = end;
  }
  if (pos != buffer_size) throw InputError(where + ": " + std::to_string(buffer_size - pos) + " bytes after the last tensor");
  return file;
}

void save_checkpoint(const std::string& path, const MlpSpec& spec, const ParamLayout& layout,
                     const std::vector<float>& params) {
  save_checkpoint(path, layout, params, {{"widths", widths_to_string(spec.widths)}});
}

void save_checkpoint(const std::string& path, const ParamLayout& layout, const std::vector<float>& params,
                     const std::map<std::string, std::string>& metadata) {
  if (static_cast<int64_t>(params.size()) != layout.param_buffer_count()) {
    throw std::invalid_argument("save_checkpoint: the parameters are not the layout's flat buffer");
  }
  // Never a checkpoint that would only poison the next run's --init.
  if (const std::string bad = describe_first_nonfinite(layout, params.data()); !bad.empty()) {
    throw InputError("--save '" + path + "': refusing to write non-finite weights: " + bad);
  }
  // Forward order (layers.0.weight, layers.0.bias, ...; wte, wpe, h.0.ln_1, ...), as a state_dict lists them.
  std::vector<const FlatTensor*> order;
  for (int i : layout.forward_order()) order.push_back(&layout.tensors()[static_cast<size_t>(i)]);
  nlohmann::ordered_json header;
  nlohmann::ordered_json meta = {{"format", "pt"}, {"producer", "dpscale"}};
  for (const auto& [k, v] : metadata) meta[k] = v;
  header["__metadata__"] = meta;
  uint64_t offset = 0;
  for (const FlatTensor* t : order) {
    header[t->name()] = {{"dtype", "F32"}, {"shape", t->shape()}, {"data_offsets", {offset, offset + static_cast<uint64_t>(t->nbytes())}}};
    offset += static_cast<uint64_t>(t->nbytes());
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');  // keep the buffer 8-byte aligned
  std::string len(8, '\0');
  for (int i = 0; i < 8; ++i) len[static_cast<size_t>(i)] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  std::vector<std::string_view> parts = {len, json};
  for (const FlatTensor* t : order) {
    parts.emplace_back(reinterpret_cast<const char*>(params.data() + t->offset), static_cast<size_t>(t->nbytes()));
  }
  write_file_atomically(path, parts, "--save");
}

std::vector<float> load_checkpoint(const std::string& path, const ParamLayout& layout) {
  StFile f = read_safetensors(path);
  const std::string where = "--init '" + path + "'";
  std::vector<float> params(static_cast<size_t>(layout.param_buffer_count()), 0.0f);  // padding zero
  for (const FlatTensor& t : layout.tensors()) {
    auto it = f.tensors.find(t.name());
    if (it == f.tensors.end()) throw InputError(where + ": tensor '" + t.name() + "' is missing");
    const StTensor& st = it->second;
    const std::vector<int64_t> want = t.shape();
    auto shape_str = [](const std::vector<int64_t>& s) {
      std::string r = "[";
      for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
      return r + "]";
    };
    if (st.shape != want) {
      throw InputError(where + ": tensor '" + t.name() + "' has shape " + shape_str(st.shape) +
                       " but the model needs " + shape_str(want));
    }
    if (st.dtype != "F32") throw InputError(where + ": tensor '" + t.name() + "' is " + st.dtype + ", expected F32");
    std::memcpy(params.data() + t.offset, st.bytes.data(), st.bytes.size());
  }
  if (const std::string bad = describe_first_nonfinite(layout, params.data()); !bad.empty()) {
    throw InputError(where + ": non-finite weight: " + bad);
  }
  if (f.tensors.size() != layout.tensors().size()) {
    for (const auto& entry : f.tensors) {
      const std::string& name = entry.first;  // not a structured binding: clang < 16 cannot capture one
      bool known = std::any_of(layout.tensors().begin(), layout.tensors().end(),
                               [&](const FlatTensor& t) { return t.name() == name; });
      if (!known) throw InputError(where + ": tensor '" + name + "' does not belong to this model");
    }
  }
  return params;
}

}  // namespace dpscale
