// Interop with PyTorch (Debian's /usr/bin/python3 + tests/golden/st_io.py): files written here load
// in torch with the right values, torch's files load here, and both write identical bytes.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "ingot/io/safetensors.h"
#include "io_test_util.h"
#include "test_support.h"

using namespace ingot;
using ingot::test::ScratchDir;

namespace {

const char* const kPython = "/usr/bin/python3";

bool have_torch() {
  const std::string cmd = std::string(kPython) + " -c 'import torch' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// The values both sides agree on, from the flat index i (torch.arange on the Python side).
Tensor pattern(DType dtype, const Shape& shape) {
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::Bool) {
      v[i] = i % 3 == 0;
    } else if (dtype == DType::U8) {
      v[i] = static_cast<double>(i % 7) * 30;
    } else {
      v[i] = static_cast<double>(i % 7) - 3;
    }
  }
  return Tensor::from_vector(v, shape).to(dtype);
}

// Checks the C++-written file, writes torch's version of it, and a torch file with new tensors.
const char* const kScript = R"PY(
import sys
import torch
golden, src, plain, doubled, resaved = sys.argv[1:6]
sys.path.insert(0, golden)
import st_io

NAMES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16, "BF16": torch.bfloat16,
         "I64": torch.int64, "I32": torch.int32, "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool}

def pattern(dt, shape):
    i = torch.arange(int(torch.tensor(shape).prod()) if shape else 1)
    v = (i % 3 == 0) if dt == torch.bool else (i % 7) * 30 if dt == torch.uint8 else (i % 7) - 3
    return v.to(dt).reshape(shape)

t, meta = st_io.load_file(src)
crc = meta.pop("ingot_crc32")  # (Ingot's checksum: one more string for torch)
assert meta == {"source": "ingot", "note": "caf\u00e9"}, meta
st_io.save_file(t, resaved + ".meta", dict(meta, ingot_crc32=crc))  # torch's writer, Ingot's checksum
for name, dt in NAMES.items():
    assert t[name].dtype == dt and torch.equal(t[name], pattern(dt, [2, 3, 4])), name
assert torch.equal(t["transposed"], pattern(torch.float32, [3, 4]).t()), t["transposed"]
assert t["scalar"].shape == () and t["scalar"].item() == 2.5
assert t["empty"].shape == (0, 3) and t["empty"].dtype == torch.float16

plain_tensors, plain_meta = st_io.load_file(plain)
assert plain_meta == {}
st_io.save_file(plain_tensors, resaved)

out = {k: (v * 2 if v.dtype.is_floating_point else v) for k, v in t.items()}
out["py.transposed"] = torch.arange(6, dtype=torch.float64).reshape(2, 3).t()
out["py.bf16"] = torch.tensor([0.5, -1.25, 3e38], dtype=torch.bfloat16)
st_io.save_file(out, doubled, {"from": "torch"})
print("python side ok")
)PY";

}  // namespace

TEST_CASE("safetensors files move both ways between Ingot and torch", "[io][torch]") {
  if (!have_torch()) {
    test::skip("Debian's /usr/bin/python3 with torch (python3-torch) is not installed");
    return;
  }
  ScratchDir dir;
  io::NamedTensors tensors;
  for (DType t :
       {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I8, DType::U8, DType::Bool}) {
    tensors.emplace_back(io::safetensors_dtype_name(t), pattern(t, {2, 3, 4}));
  }
  tensors.emplace_back("transposed", pattern(DType::F32, {3, 4}).transpose(0, 1));
  tensors.emplace_back("scalar", Tensor::scalar(2.5));
  tensors.emplace_back("empty", Tensor::empty({0, 3}, DType::F16));
  io::save_safetensors(dir / "ingot.safetensors", tensors, {{"source", "ingot"}, {"note", "caf\xc3\xa9"}});
  test::write_bytes(dir / "plain.safetensors", io::safetensors_bytes(tensors));  // (no metadata, no checksum)
  { std::ofstream(dir / "check.py") << kScript; }
  const std::string cmd = std::string(kPython) + " " + (dir / "check.py").string() + " " + INGOT_GOLDEN_SCRIPTS + " " +
                          (dir / "ingot.safetensors").string() + " " + (dir / "plain.safetensors").string() + " " +
                          (dir / "torch.safetensors").string() + " " + (dir / "resaved.safetensors").string();
  REQUIRE(std::system(cmd.c_str()) == 0);

  // The same tensors give the same bytes from both writers.
  CHECK(test::read_bytes(dir / "plain.safetensors") == test::read_bytes(dir / "resaved.safetensors"));
  // Saved again by torch with its metadata, the file keeps a checksum that verifies: it covers the
  // content, not the JSON's spelling.
  CHECK(io::load_safetensors(dir / "resaved.safetensors.meta").checksummed);

  const io::SafetensorsFile back = io::load_safetensors(dir / "torch.safetensors");
  CHECK(back.metadata == io::Metadata{{"from", "torch"}});
  for (const auto& [name, t] : tensors) {
    INFO(name);
    const Tensor expected = is_floating(t.dtype()) ? t.contiguous().to(DType::F64).to(t.dtype()) : t.contiguous();
    const Tensor& got = back.tensors.at(name);
    REQUIRE(got.dtype() == t.dtype());
    REQUIRE(got.shape() == t.shape());
    const double factor = is_floating(t.dtype()) ? 2.0 : 1.0;
    const std::vector<double> want = expected.to_vector<double>();
    const std::vector<double> have = got.to_vector<double>();
    for (size_t i = 0; i < want.size(); ++i) CHECK(have[i] == want[i] * factor);  // exact: small integers
  }
  const Tensor pt = back.tensors.at("py.transposed");
  CHECK(pt.shape() == Shape{3, 2});
  CHECK(pt.to_vector<double>() == std::vector<double>{0, 3, 1, 4, 2, 5});
  const std::vector<float> bf = back.tensors.at("py.bf16").to_vector<float>();
  CHECK(bf[0] == 0.5f);
  CHECK(bf[1] == -1.25f);
  CHECK(bf[2] == static_cast<float>(BFloat16(3e38f)));
}
