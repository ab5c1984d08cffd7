// Fashion-MNIST loader: the four IDX files of Debian's dataset-fashion-mnist package (or any
// folder holding them, gzip-compressed or not), normalised once into an InMemoryDataset.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "ingot/data/dataset.h"

namespace ingot::data {

/// Fashion-MNIST's classes in label order (0 = T-shirt/top ... 9 = Ankle boot).
inline constexpr std::array<std::string_view, 10> kFashionMnistClasses = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};

/// Where Debian's dataset-fashion-mnist installs the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
/// Fashion-MNIST's training-set pixel mean and standard deviation (in [0, 1] units).
inline constexpr float kFashionMnistMean = 0.2860f;
inline constexpr float kFashionMnistStd = 0.3530f;
/// The advice a missing file's error gives.
inline constexpr const char* kFashionMnistHint =
    "install Debian's dataset-fashion-mnist (apt-get install dataset-fashion-mnist) or point data.path at a folder "
    "holding the four *-ubyte.gz files";

/// The default normalisation for Fashion-MNIST.
inline Normalize fashion_mnist_normalize() { return Normalize{{kFashionMnistMean}, {kFashionMnistStd}}; }

/// Loads split "train" (60000 samples) or "test" (10000) from `dir`: {train,t10k}-images-idx3-ubyte
/// and -labels-idx1-ubyte, each with or without ".gz". 1x28x28 images, 10 classes.
/// Throws InputError naming the path for a missing or corrupt file, ConfigError for a bad split.
std::shared_ptr<InMemoryDataset> fashion_mnist(const std::string& dir, const std::string& split,
                                               const Normalize& normalize = fashion_mnist_normalize());

}  // namespace ingot::data
