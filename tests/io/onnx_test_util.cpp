// The ONNX test helpers: venv discovery, .npy writing, one export + onnxruntime round trip.
#include "onnx_test_util.h"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "ingot/base/grad_mode.h"
#include "ingot/data/npy.h"
#include "io_test_util.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace ingot::test {

std::optional<std::string> onnx_python_or_skip() {
  const char* build = std::getenv("INGOT_BUILD_DIR");
  const fs::path python = fs::path(build ? build : "build") / "test-venv" / "bin" / "python";
  if (!fs::exists(python) ||
      std::system(fmt::format("'{}' -c 'import onnxruntime, onnx, numpy' 2>/dev/null", python.string()).c_str()) != 0) {
    skip("onnxruntime not installed (scripts/test installs it in build/test-venv)");
    return std::nullopt;
  }
  return python.string();
}

void write_npy(const fs::path& path, const Tensor& t) {
  const bool i64 = t.dtype() == DType::I64;
  std::string shape;
  for (int64_t d : t.shape()) shape += fmt::format("{}, ", d);
  if (t.dim() > 1) shape.resize(shape.size() - 2);
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", i64 ? "<i8" : "<f4", shape);
  // Magic, version 1.0, header length; the header is padded with spaces to a multiple of 64.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes.push_back(static_cast<char>(header.size() & 0xff));
  bytes.push_back(static_cast<char>(header.size() >> 8));
  bytes += header;
  if (i64) {
    const std::vector<int64_t> v = t.to_vector<int64_t>();
    bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));
  } else {
    const std::vector<float> v = t.to_vector<float>();
    bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }
  write_bytes(path, bytes);
}

OnnxRun run_onnx(const std::string& python, const fs::path& model, const Tensor& x, const fs::path& dir) {
  write_npy(dir / "x.npy", x);
  const std::string cmd = fmt::format("'{}' '{}' '{}' '{}' '{}' '{}'", python, INGOT_ONNX_RUN, model.string(),
                                      (dir / "x.npy").string(), (dir / "y.npy").string(), (dir / "info.json").string());
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
  const data::NpyArray y = data::read_npy((dir / "y.npy").string());
  OnnxRun out;
  out.logits = Tensor::from_vector(data::npy_to_floats(y, "y.npy"), Shape(y.shape));
  out.info = read_bytes(dir / "info.json");
  return out;
}

OnnxRun run_exported(const std::string& python, const nn::Module& model, const Shape& input_shape, const Tensor& x,
                     const io::onnx::ExportOptions& extra) {
  const ScratchDir dir;
  io::onnx::ExportOptions options = extra;
  options.input_shape = input_shape;
  const io::onnx::ExportResult r = io::onnx::export_onnx(model, options);
  write_bytes(dir / "model.onnx", r.bytes);
  return run_onnx(python, dir / "model.onnx", x, dir.path());
}

Tensor forward(nn::Module& model, const Tensor& x) {
  const NoGradGuard no_grad;
  return model(x).to(Device::cpu()).contiguous();
}

}  // namespace ingot::test
