// test_checkpoint_io.cpp — safetensors checkpoints (round trip, on-disk layout per the format,
// a hand-written file read back, bad files), .npy read/write, and the all-or-nothing writer.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <nlohmann/json.hpp>

#include "models/io/atomic_file.h"
#include "models/cpu/cpu_device.h"
#include "core/errors.h"
#include "models/mlp.h"
#include "models/io/npy.h"
#include "models/data/rng.h"
#include "models/io/safetensors.h"

namespace fs = std::filesystem;

namespace dpscale {
namespace {

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "dpscale-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Every entry of the directory, for "nothing half-written is left behind".
  std::set<std::string> entries() const {
    std::set<std::string> s;
    for (const auto& e : fs::directory_iterator(dir_)) s.insert(e.path().filename().string());
    return s;
  }
  fs::path dir_;
};

std::vector<char> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
// A throwing call's message must contain `needle`.
template <class F>
void expect_input_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no InputError (wanted one mentioning '" << needle << "')";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// Parameters with awkward bit patterns: a bit-exact round trip must keep all of them.
// Laid out as the model's flat buffer: the tensors at their offsets, zeros in the padding.
std::vector<float> awkward_params(const ParamLayout& layout) {
  std::vector<float> p(static_cast<size_t>(layout.param_buffer_count()), 0.0f);
  const CounterRng r(5, 5);
  for (const FlatTensor& t : layout.tensors()) {
    for (int64_t i = t.offset; i < t.offset + t.count; ++i) p[static_cast<size_t>(i)] = r.normal(static_cast<uint64_t>(i));
  }
  p[0] = -0.0f;
  p[1] = std::numeric_limits<float>::denorm_min();
  p[2] = std::numeric_limits<float>::max();
  p[3] = std::nextafter(1.0f, 2.0f);
  return p;
}

using ModelsSafetensors = TempDir;

TEST_F(ModelsSafetensors, SaveLoadRoundTripIsBitExact) {
  const MlpSpec spec{"custom", {7, 5, 3}};
  const ParamLayout layout(spec);
  const std::vector<float> p = awkward_params(layout);
  save_checkpoint(path("w.safetensors"), spec, layout, p);
  const std::vector<float> q = load_checkpoint(path("w.safetensors"), layout);
  ASSERT_EQ(q.size(), p.size());
  EXPECT_EQ(0, std::memcmp(p.data(), q.data(), p.size() * sizeof(float)));
  EXPECT_EQ(entries(), std::set<std::string>{"w.safetensors"});  // no temporary left

  // Through a model too: init, save, load into a fresh model, same bytes.
  CpuDevice dev(1);
  Mlp a(dev, spec, 2), b(dev, spec, 2);
  a.init_params(3);
  save_checkpoint(path("m.safetensors"), spec, a.layout(), a.params_to_host());
  b.params_from_host(load_checkpoint(path("m.safetensors"), b.layout()));
  EXPECT_EQ(checksum_floats(a.params_to_host()), checksum_floats(b.params_to_host()));
}

TEST_F(ModelsSafetensors, FileLayoutFollowsTheFormat) {
  const MlpSpec spec{"custom", {6, 4, 3, 2}};
  const ParamLayout layout(spec);
  const std::vector<float> p = awkward_params(layout);
  save_checkpoint(path("w.safetensors"), spec, layout, p);
  const std::vector<char> b = slurp(path("w.safetensors"));
  ASSERT_GE(b.size(), 8u);

  // 8 bytes: little-endian u64 header length N.
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(b[static_cast<size_t>(i)]);
  ASSERT_LE(8 + n, b.size());
  EXPECT_EQ(n % 8, 0u);  // padded so the buffer starts 8-byte aligned
  // N bytes of JSON (trailing spaces are allowed padding).
  const std::string header_text(b.data() + 8, n);
  EXPECT_EQ(header_text.front(), '{');
  const nlohmann::json h = nlohmann::json::parse(header_text);
  ASSERT_TRUE(h.is_object());
  const char* buffer = b.data() + 8 + n;
  const uint64_t buffer_size = b.size() - 8 - n;
  EXPECT_EQ(buffer_size, static_cast<uint64_t>(layout.n_params()) * 4);  // packed: no padding in the file

  std::set<std::string> names;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, entry] : h.items()) {
    if (name == "__metadata__") {
      for (const auto& [k, v] : entry.items()) EXPECT_TRUE(v.is_string()) << k;  // str -> str only
      EXPECT_EQ(entry.at("format"), "pt");
      EXPECT_EQ(entry.at("widths"), "6,4,3,2");
      continue;
    }
    names.insert(name);
    EXPECT_EQ(entry.at("dtype"), "F32") << name;
    const auto shape = entry.at("shape").get<std::vector<int64_t>>();
    const auto off = entry.at("data_offsets").get<std::vector<uint64_t>>();
    ASSERT_EQ(off.size(), 2u);
    ranges.emplace_back(off[0], off[1]);
    // The tensor of that name in the model's layout: shape [out, in] / [out], bytes equal.
    const FlatTensor* t = nullptr;
    for (const FlatTensor& v : layout.tensors()) t = v.name() == name ? &v : t;
    ASSERT_NE(t, nullptr) << "unexpected tensor " << name;
    const std::vector<int64_t> want = t->is_bias ? std::vector<int64_t>{t->rows} : std::vector<int64_t>{t->rows, t->cols};
    EXPECT_EQ(shape, want) << name;
    ASSERT_EQ(off[1] - off[0], static_cast<uint64_t>(t->nbytes())) << name;
    ASSERT_LE(off[1], buffer_size);
    EXPECT_EQ(0, std::memcmp(buffer + off[0], p.data() + t->offset, static_cast<size_t>(t->nbytes()))) << name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
                                          "layers.2.weight", "layers.2.bias"}));
  // Offsets cover [0, buffer_size) exactly: no holes, no overlaps.
  std::sort(ranges.begin(), ranges.end());
  uint64_t pos = 0;
  for (auto [lo, hi] : ranges) {
    EXPECT_EQ(lo, pos);
    pos = hi;
  }
  EXPECT_EQ(pos, buffer_size);
}

// A file written here by hand (tensors in an unusual order, extra metadata, no padding) loads
// into the right places: the reader follows the format, not just our writer's habits.
TEST_F(ModelsSafetensors, ReadsAHandWrittenFile) {
  const MlpSpec spec{"custom", {3, 2}};  // layers.0.weight [2,3], layers.0.bias [2]
  const ParamLayout layout(spec);
  const float bias[2] = {0.5f, -0.5f};
  const float weight[6] = {1, 2, 3, 4, 5, 6};
  const std::string header =
      R"({"layers.0.bias":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("__metadata__":{"note":"hand"},)"
      R"("layers.0.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[8,32]}})";
  spit(path("h.safetensors"), le64(header.size()) + header + std::string(reinterpret_cast<const char*>(bias), 8) +
                                  std::string(reinterpret_cast<const char*>(weight), 24));
  const StFile f = read_safetensors(path("h.safetensors"));
  EXPECT_EQ(f.metadata.at("note"), "hand");
  const std::vector<float> p = load_checkpoint(path("h.safetensors"), layout);
  EXPECT_EQ(std::vector<float>(p.begin() + layout.weight(0).offset, p.begin() + layout.weight(0).offset + 6),
            std::vector<float>(weight, weight + 6));
  EXPECT_EQ(p[static_cast<size_t>(layout.bias(0).offset)], 0.5f);
  EXPECT_EQ(p[static_cast<size_t>(layout.bias(0).offset + 1)], -0.5f);
}

TEST_F(ModelsSafetensors, BadFilesAreInputErrors) {
  const MlpSpec spec{"custom", {3, 2}};
  const ParamLayout layout(spec);
  save_checkpoint(path("good.safetensors"), spec, layout, awkward_params(layout));
  const std::vector<char> good = slurp(path("good.safetensors"));
  const std::string g(good.begin(), good.end());
  auto load = [&](const std::string& name) { return [&, name] { load_checkpoint(path(name), layout); }; };

  expect_input_error(load("missing.safetensors"), "cannot open");
  spit(path("short.safetensors"), g.substr(0, 5));
  expect_input_error(load("short.safetensors"), "truncated");
  spit(path("cut.safetensors"), g.substr(0, g.size() - 4));  // last tensor's bytes cut short
  expect_input_error(load("cut.safetensors"), "truncated");
  spit(path("cuthdr.safetensors"), g.substr(0, 20));  // header length points past the end
  expect_input_error(load("cuthdr.safetensors"), "truncated");
  spit(path("notjson.safetensors"), le64(8) + "not json" + std::string(32, '\0'));
  expect_input_error(load("notjson.safetensors"), "not valid JSON");
  spit(path("array.safetensors"), le64(2) + "[]");
  expect_input_error(load("array.safetensors"), "not a JSON object");
  spit(path("huge.safetensors"), le64(1ULL << 62) + "{}");
  expect_input_error(load("huge.safetensors"), "header length");
  fs::create_directory(path("adir"));
  expect_input_error(load("adir"), "adir");  // a directory is not a checkpoint

  // Hand-written headers over `nbytes` zero bytes, each refused with the words given.
  struct BadHeader {
    const char* name;
    std::string header;
    size_t nbytes;
    const char* words;
  };
  const std::vector<BadHeader> bad_headers = {
      {"f64",
       R"({"layers.0.weight":{"dtype":"F64","shape":[2,3],"data_offsets":[0,48]},)"
       R"("layers.0.bias":{"dtype":"F32","shape":[2],"data_offsets":[48,56]}})", 56, "expected F32"},
      {"shape",
       R"({"layers.0.weight":{"dtype":"F32","shape":[3,2],"data_offsets":[0,24]},)"
       R"("layers.0.bias":{"dtype":"F32","shape":[2],"data_offsets":[24,32]}})", 32, "has shape [3, 2] but the model needs [2, 3]"},
      {"missing_bias", R"({"layers.0.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})", 24, "'layers.0.bias' is missing"},
      {"extra",
       R"({"layers.0.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
       R"("layers.0.bias":{"dtype":"F32","shape":[2],"data_offsets":[24,32]},)"
       R"("layers.1.weight":{"dtype":"F32","shape":[1],"data_offsets":[32,36]}})", 36, "does not belong"},
      {"overlap",
       R"({"layers.0.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
       R"("layers.0.bias":{"dtype":"F32","shape":[2],"data_offsets":[20,28]}})", 28, "overlap"},
      {"len",
       R"({"layers.0.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]},)"
       R"("layers.0.bias":{"dtype":"F32","shape":[2],"data_offsets":[20,28]}})", 28, "does not match its byte length"},
      {"entry", R"({"layers.0.weight":{"dtype":"F32"}})", 0, "malformed header entry"},
      // Dimensions and offsets are JSON integers in range, not floats the library would cast.
      {"floatdim",
       R"({"layers.0.weight":{"dtype":"F32","shape":[2,3.0e40],"data_offsets":[0,24]},)"
       R"("layers.0.bias":{"dtype":"F32","shape":[2],"data_offsets":[24,32]}})", 32, "not integers in range"},
      {"floatoff",
       R"({"layers.0.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,2.4e1]},)"
       R"("layers.0.bias":{"dtype":"F32","shape":[2],"data_offsets":[24,32]}})", 32, "not integers in range"},
      // 2^62 x 4 elements: the count wraps to 0 in 64 bits and would match an empty byte range.
      {"wrap",
       R"({"layers.0.weight":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]},)"
       R"("layers.0.bias":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8, "overflows 64 bits"},
  };
  for (const BadHeader& h : bad_headers) {
    SCOPED_TRACE(h.name);
    const std::string file = std::string(h.name) + ".safetensors";
    spit(path(file), le64(h.header.size()) + h.header + std::string(h.nbytes, '\0'));
    expect_input_error(load(file), h.words);
  }
}

TEST_F(ModelsSafetensors, ModelShapeMismatchNamesTheTensor) {
  const MlpSpec big{"custom", {8, 6, 3}}, small{"custom", {8, 4, 3}};
  save_checkpoint(path("big.safetensors"), big, ParamLayout(big), awkward_params(ParamLayout(big)));
  expect_input_error([&] { load_checkpoint(path("big.safetensors"), ParamLayout(small)); },
                     "the model needs [");
}

using ModelsNpy = TempDir;

TEST_F(ModelsNpy, WriteReadRoundTrip) {
  const std::vector<float> f = {1.5f, -2.0f, 0.0f, 3.25f, -0.0f, 1e-40f};
  write_npy(path("f.npy"), "<f4", {2, 3}, f.data(), f.size() * 4);
  const NpyArray a = read_npy(path("f.npy"));
  EXPECT_EQ(a.descr, "<f4");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(a.data.size(), 24u);
  EXPECT_EQ(0, std::memcmp(a.data.data(), f.data(), 24));

  const std::vector<int64_t> l = {0, 9, 3, -1, int64_t{1} << 40};
  write_npy(path("l.npy"), "<i8", {5}, l.data(), l.size() * 8);
  const NpyArray b = read_npy(path("l.npy"));
  EXPECT_EQ(b.descr, "<i8");
  EXPECT_EQ(b.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(0, std::memcmp(b.data.data(), l.data(), 40));

  // The format: magic, version 1.0, header padded so the data start is 64-byte aligned.
  const std::vector<char> raw = slurp(path("f.npy"));
  EXPECT_EQ(std::string(raw.data(), 6), "\x93NUMPY");
  EXPECT_EQ(raw[6], 1);
  EXPECT_EQ(raw[7], 0);
  const size_t hlen = static_cast<unsigned char>(raw[8]) | (static_cast<unsigned char>(raw[9]) << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  EXPECT_EQ(raw[10 + hlen - 1], '\n');
  EXPECT_EQ(raw.size(), 10 + hlen + 24);
  EXPECT_NE(std::string(raw.data() + 10, hlen).find("'shape': (2, 3)"), std::string::npos);
  EXPECT_NE(std::string(slurp(path("l.npy")).data() + 10, 60).find("'shape': (5,)"), std::string::npos);
  EXPECT_EQ(entries(), (std::set<std::string>{"f.npy", "l.npy"}));
}

// Found by fuzz/fuzz_npy.cpp: a shape whose byte count overflows, or a dimension too
// large for int64, is refused as bad input (it used to wrap to a small count, or throw
// std::out_of_range from stoll: exit 1). A large shape that fits is held against the file size.
TEST_F(ModelsNpy, ShapesThatOverflowAreRefused) {
  auto header_only = [](const std::string& shape) {
    std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
    h += '\n';
    return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(h.size() & 0xff) + static_cast<char>(h.size() >> 8) + h;
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"(4611686018427387904, 4)", "declares more bytes than can exist"},            // 2^62 rows x 4 x 4 bytes = 2^66
      {"(99999999999999999999999, 2)", "dimension 99999999999999999999999 of shape"},  // beyond int64
      {"(1000000, 1000)", "truncated: expected 4000000000 data bytes, found 0"},         // fits: the file is short
  };
  for (const auto& [shape, words] : cases) {
    SCOPED_TRACE(shape);
    spit(path("big.npy"), header_only(shape));
    try {
      read_npy(path("big.npy"));
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
  // Control: an empty array with a zero dimension is valid.
  spit(path("empty.npy"), header_only("(0, 784)"));
  EXPECT_EQ(read_npy(path("empty.npy")).shape, (std::vector<int64_t>{0, 784}));
}

// Headers exactly as numpy writes them (v1.0 and v2.0), written here by hand.
TEST_F(ModelsNpy, ReadsNumpyWrittenHeaders) {
  auto npy = [](int major, const std::string& dict, const std::string& data) {
    std::string header = dict;
    const size_t prefix = major == 1 ? 10 : 12;
    header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    std::string s = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
    for (size_t i = 0; i < prefix - 8; ++i) s += static_cast<char>((header.size() >> (8 * i)) & 0xff);
    return s + header + data;
  };
  const int32_t labels[3] = {4, 0, 7};
  spit(path("v1.npy"), npy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }",
                           std::string(reinterpret_cast<const char*>(labels), 12)));
  spit(path("v2.npy"), npy(2, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }",
                           std::string(reinterpret_cast<const char*>(labels), 12)));
  for (const char* name : {"v1.npy", "v2.npy"}) {
    const NpyArray a = read_npy(path(name));
    EXPECT_EQ(a.descr, "<i4") << name;
    EXPECT_EQ(a.shape, std::vector<int64_t>{3}) << name;
    EXPECT_EQ(0, std::memcmp(a.data.data(), labels, 12)) << name;
  }
  const float x[6] = {1, 2, 3, 4, 5, 6};
  spit(path("x.npy"), npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }",
                          std::string(reinterpret_cast<const char*>(x), 24)));
  std::vector<float> fx;
  std::vector<int32_t> fy;
  int64_t n = 0;
  int dim = 0;
  load_npy_dataset(path("x.npy"), path("v1.npy"), fx, n, dim, fy);
  EXPECT_EQ(n, 3);
  EXPECT_EQ(dim, 2);
  EXPECT_EQ(fx, std::vector<float>(x, x + 6));
  EXPECT_EQ(fy, (std::vector<int32_t>{4, 0, 7}));
  // int64 labels are accepted too.
  const int64_t l64[3] = {1, 2, 3};
  write_npy(path("l64.npy"), "<i8", {3}, l64, 24);
  load_npy_dataset(path("x.npy"), path("l64.npy"), fx, n, dim, fy);
  EXPECT_EQ(fy, (std::vector<int32_t>{1, 2, 3}));
  // Features with no columns (found by fuzz_npy, which hit memcpy from a null pointer) or no rows.
  spit(path("x30.npy"), npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0), }", ""));
  expect_input_error([&] { load_npy_dataset(path("x30.npy"), path("v1.npy"), fx, n, dim, fy); },
                     "at least one row and one column, found [3, 0]");
  spit(path("x02.npy"), npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 2), }", ""));
  expect_input_error([&] { load_npy_dataset(path("x02.npy"), path("v1.npy"), fx, n, dim, fy); },
                     "at least one row and one column, found [0, 2]");

  // Bad files.
  auto read = [&](const std::string& name) { return [&, name] { read_npy(path(name)); }; };
  expect_input_error(read("nope.npy"), "cannot open");
  const std::string whole = npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }",
                                std::string(reinterpret_cast<const char*>(x), 24));
  spit(path("trunc.npy"), whole.substr(0, whole.size() - 5));
  expect_input_error(read("trunc.npy"), "truncated");
  spit(path("trunchdr.npy"), whole.substr(0, 30));
  expect_input_error(read("trunchdr.npy"), "truncated header");
  spit(path("magic.npy"), "PK\x03\x04 not an npy file at all");
  expect_input_error(read("magic.npy"), "bad magic");
  spit(path("fortran.npy"), npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2), }",
                                std::string(24, '\0')));
  expect_input_error(read("fortran.npy"), "Fortran");
  spit(path("f2.npy"), npy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }", std::string(6, '\0')));
  expect_input_error(read("f2.npy"), "unsupported dtype");
  spit(path("extra.npy"), whole + "xx");
  expect_input_error(read("extra.npy"), "unexpected bytes");
  fs::create_directory(path("adir.npy"));
  expect_input_error(read("adir.npy"), "adir.npy");

  // Wrong types and shapes for the npy dataset.
  const double d[6] = {1, 2, 3, 4, 5, 6};
  write_npy(path("f64.npy"), "<f8", {3, 2}, d, 48);
  expect_input_error([&] { load_npy_dataset(path("f64.npy"), path("v1.npy"), fx, n, dim, fy); },
                     "features must be float32");
  const float fl[3] = {0, 1, 2};
  write_npy(path("flab.npy"), "<f4", {3}, fl, 12);
  expect_input_error([&] { load_npy_dataset(path("x.npy"), path("flab.npy"), fx, n, dim, fy); },
                     "labels must be int32 or int64");
  write_npy(path("x1d.npy"), "<f4", {6}, x, 24);
  expect_input_error([&] { load_npy_dataset(path("x1d.npy"), path("v1.npy"), fx, n, dim, fy); }, "2-D");
  const int32_t two[2] = {0, 1};
  write_npy(path("two.npy"), "<i4", {2}, two, 8);
  expect_input_error([&] { load_npy_dataset(path("x.npy"), path("two.npy"), fx, n, dim, fy); },
                     "3 feature rows but 2 labels");
}

using ModelsAtomicWrite = TempDir;

TEST_F(ModelsAtomicWrite, WritesAllPartsAndLeavesNoTemporary) {
  write_file_atomically(path("out.bin"), {"abc", std::string_view("\0de", 3), ""}, "test");
  const std::vector<char> b = slurp(path("out.bin"));
  EXPECT_EQ(std::string(b.begin(), b.end()), std::string("abc\0de", 6));
  write_file_atomically(path("out.bin"), {"new"}, "test");  // replaces
  const std::vector<char> c = slurp(path("out.bin"));
  EXPECT_EQ(std::string(c.begin(), c.end()), "new");
  EXPECT_EQ(entries(), std::set<std::string>{"out.bin"});
}

TEST_F(ModelsAtomicWrite, TargetIsADirectory) {
  fs::create_directory(path("target"));
  spit(path("target/keep"), "x");
  expect_input_error([&] { write_file_atomically(path("target"), {"data"}, "--save"); }, "--save");
  EXPECT_EQ(entries(), std::set<std::string>{"target"});  // no temporary left beside it
  EXPECT_TRUE(fs::is_directory(path("target")));
  EXPECT_TRUE(fs::exists(path("target/keep")));
}

TEST_F(ModelsAtomicWrite, MissingDirectory) {
  expect_input_error([&] { write_file_atomically(path("no/such/dir/out.bin"), {"data"}, "--save"); },
                     "cannot write");
  EXPECT_TRUE(entries().empty());
}

// A write that fails half-way (here: the file-size limit, as a full disk would) removes its
// temporary and leaves the previous file untouched.
TEST_F(ModelsAtomicWrite, FailureMidWriteKeepsOldFileAndLeavesNoPartialFile) {
  spit(path("ckpt"), "old contents");
  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG from write() instead of a signal
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string big(64 * 1024, 'x');
  bool threw = false;
  std::string msg;
  try {
    write_file_atomically(path("ckpt"), {"header", big}, "--save");
  } catch (const InputError& e) {
    threw = true;
    msg = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_NE(msg.find("writing"), std::string::npos) << msg;
  EXPECT_EQ(entries(), std::set<std::string>{"ckpt"});
  const std::vector<char> b = slurp(path("ckpt"));
  EXPECT_EQ(std::string(b.begin(), b.end()), "old contents");
}

TEST_F(ModelsAtomicWrite, ReadWholeFileErrors) {
  expect_input_error([&] { read_whole_file(path("none"), "thing"); }, "thing: cannot open");
  fs::create_directory(path("d"));
  expect_input_error([&] { read_whole_file(path("d"), "thing"); }, "thing");
  spit(path("empty"), "");
  EXPECT_TRUE(read_whole_file(path("empty"), "thing").empty());
}

}  // namespace
}  // namespace dpscale
