// Fashion-MNIST: locate the split's two IDX files, read them, normalise once.
#include "ingot/data/fashion_mnist.h"

#include <fmt/ranges.h>

#include <filesystem>

#include "ingot/data/idx.h"

namespace ingot::data {
namespace {

/// The gzip file if present, else the plain one if present, else the gzip name (for the error).
std::string locate(const std::filesystem::path& dir, const std::string& stem) {
  const auto gz = dir / (stem + ".gz");
  const auto plain = dir / stem;
  std::error_code ec;
  if (!std::filesystem::exists(gz, ec) && std::filesystem::exists(plain, ec)) return plain.string();
  return gz.string();
}

}  // namespace

std::shared_ptr<InMemoryDataset> fashion_mnist(const std::string& dir, const std::string& split,
                                               const Normalize& normalize) {
  INGOT_CHECK_AS(split == "train" || split == "test", ConfigError,
                 "fashion_mnist: split must be 'train' or 'test', got '{}'", split);
  const std::string prefix = split == "train" ? "train" : "t10k";
  const std::string image_path = locate(dir, prefix + "-images-idx3-ubyte");
  const std::string label_path = locate(dir, prefix + "-labels-idx1-ubyte");
  const IdxArray images = read_idx(image_path, kFashionMnistHint);
  const IdxArray labels = read_idx(label_path, kFashionMnistHint);
  INGOT_CHECK_AS(images.dims.size() == 3 && images.dims[1] == 28 && images.dims[2] == 28, InputError,
                 "{}: Fashion-MNIST images must be [N, 28, 28], got {}; is this the right file?", image_path,
                 fmt::join(images.dims, "x"));
  return std::make_shared<InMemoryDataset>(InMemoryDataset::from_bytes(
      images.data, images.dims, labels.data, labels.dims, 10, normalize, image_path + " + " + label_path));
}

}  // namespace ingot::data
