// The `image_folder` dataset: folders of PNG and JPEG files, one sub-folder per class (as
// torchvision's ImageFolder), either decoded once at load into memory (converted and resized to
// model.input_shape) or streamed: decoded in the loader's workers every time a sample is read,
// through the split's transforms (image_stream.h). A split may also be a pack of such a folder
// (image_pack.h), which always streams.
#pragma once

#include <string>
#include <vector>

#include "ingot/data/dataset_registry.h"
#include "ingot/data/image_stream.h"
#include "ingot/data/image_transform.h"
#include "ingot/data/vision_transforms.h"

namespace ingot::data {

/// The folders of `data.image_folder:`, each a folder or a pack of one; `validation` "" = none.
struct ImageFolderOptions {
  std::string train, test, validation;
  ResizeMode resize = ResizeMode::Crop;
  bool antialias = true;  ///< resizing filters as torchvision's Resize does by default (PIL's)
  /// Auto: stream when there are transforms or the decoded images would take more than
  /// kMaxInMemoryBytes; else decode once into memory.
  enum class Stream { Auto, On, Off } stream = Stream::Auto;
  TransformPipeline train_transforms, test_transforms;  ///< test's also serve validation
  bool reduced_decode = true;
  ExifOrientation exif_orientation = ExifOrientation::Ignore;  ///< in memory and streamed alike
  BadImagePolicy on_bad_image = BadImagePolicy::Error;
};

/// Above this many bytes of decoded f32 samples (per split), `stream: auto` streams.
inline constexpr int64_t kMaxInMemoryBytes = int64_t{2} << 30;

/// The image files (.png, .jpg, .jpeg in any case) under `dir`, recursively, in sorted path
/// order; `skipped` (when given) counts the other files. InputError when `dir` is not a folder.
std::vector<std::string> image_files(const std::string& dir, int64_t* skipped = nullptr);

/// One split folder as image_folder reads it.
struct ImageFolderListing {
  std::vector<std::string> classes;  ///< the sub-folders, sorted by name
  std::vector<std::string> files;    ///< each class's images (image_files' order), class after class
  std::vector<int64_t> labels;       ///< files[i]'s class: its index in `classes`
  int64_t skipped = 0;               ///< files that are not images, beside the class folders too
};

/// Lists `dir` in the order image_folder numbers its samples (and `ingot pack` packs them).
/// InputError starting with `where` for a missing folder, a folder without sub-folders, and a
/// class folder without images.
ImageFolderListing list_image_folder(const std::string& dir, const std::string& where);

/// Every image of `files` as one sample of `sample` = [C, H, W] bytes, concatenated [N, C, H, W]
/// (decoded on several threads, turned upright first when `exif` is Apply). Throws the first
/// file's InputError (see decode_image); with `bad` given, a file that fails is listed there
/// instead (index, message) and its sample left 0.
std::vector<uint8_t> load_image_samples(const std::vector<std::string>& files, const Shape& sample, ResizeMode mode,
                                        bool antialias = true, ExifOrientation exif = ExifOrientation::Ignore,
                                        std::vector<std::pair<size_t, std::string>>* bad = nullptr);

/// Reads the folders: class names are the train folder's sub-folders, sorted; test and
/// validation must have the same ones. A split whose folder holds pack.json is read from that
/// pack, streamed (ConfigError when its classes are not the other splits'). Images are decoded, converted to `sample`'s
/// channels and resized (see image_sample), then normalised (x / 255 - mean) / std (an empty mean or std: 0 or 1).
/// Throws InputError for a missing folder, a class folder without images, different classes across the folders, and a
/// bad image (one line naming the file). Files that are not images are skipped and counted in one note on stderr.
DatasetSplits image_folder_datasets(const ImageFolderOptions& options, const Shape& sample, const Normalize& normalize);

/// Registers type `image_folder` (keys train, test, validation, resize, antialias, stream,
/// transforms: {train, test}, reduced_decode, exif_orientation, on_bad_image).
void register_image_folder_dataset(DatasetRegistry& registry);

}  // namespace ingot::data
