// The `image_folder` dataset: list the class folders, decode every image on a few threads into
// [N, C, H, W] bytes, then one InMemoryDataset per folder (normalised as the other datasets); or
// stream each split, from its files or from a pack of them (`ingot pack`).
#include "ingot/data/image_folder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>
#include <thread>

#include "ingot/base/error.h"
#include "ingot/data/data_config.h"
#include "ingot/data/image_pack.h"
#include "ingot/runtime/logging.h"

namespace fs = std::filesystem;

namespace ingot::data {
namespace {

constexpr unsigned kMaxDecodeThreads = 8;
constexpr size_t kFilesPerThread = 16;  // fewer files than this per thread: not worth a thread

constexpr const char* kWhere = "data.image_folder";

[[noreturn]] void fail(const std::string& what) { throw InputError(fmt::format("{}: {}", kWhere, what)); }

/// The sub-folders of `dir`, sorted by name; messages start with `where`.
std::vector<std::string> class_folders(const std::string& dir, const std::string& where) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(
        fmt::format("{}: {} is not a folder; give a folder with one sub-folder of images per class", where, dir));
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  if (names.empty())
    throw InputError(
        fmt::format("{}: {} has no sub-folders; put each class's images in a folder of its own", where, dir));
  return names;
}

struct Split {
  std::vector<std::string> files;
  std::vector<int64_t> labels;
};

/// The images of each class folder of `dir`, labelled by the class's index in `classes`.
Split list_split(const std::string& dir, const std::vector<std::string>& classes, const std::string& where,
                 int64_t& skipped) {
  Split s;
  for (size_t c = 0; c < classes.size(); ++c) {
    const std::string folder = (fs::path(dir) / classes[c]).string();
    const std::vector<std::string> files = image_files(folder, &skipped);
    if (files.empty())
      throw InputError(fmt::format(
          "{}: class folder {} has no images (.png, .jpg, .jpeg); add some or remove the folder", where, folder));
    s.files.insert(s.files.end(), files.begin(), files.end());
    s.labels.insert(s.labels.end(), files.size(), static_cast<int64_t>(c));
  }
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (!e.is_directory()) ++skipped;  // files beside the class folders belong to no class
  return s;
}

std::string split_where(const char* key) { return fmt::format("{}: {}", kWhere, key); }

bool streams(const ImageFolderOptions& o, const Split& s, const Shape& sample, const TransformPipeline& transforms) {
  if (o.stream != ImageFolderOptions::Stream::Auto) return o.stream == ImageFolderOptions::Stream::On;
  const Shape out = transforms.empty() ? sample : transforms.output_shape(sample[0]);
  return !transforms.empty() ||
         static_cast<int64_t>(s.files.size()) * out.numel() * static_cast<int64_t>(sizeof(float)) > kMaxInMemoryBytes;
}

/// The split's dataset: streamed from `pack` when there is one, else from the files of `s`.
std::shared_ptr<const Dataset> make_dataset(Split s, std::shared_ptr<const ImagePack> pack, const Shape& sample,
                                            const ImageFolderOptions& o, int64_t classes, const Normalize& normalize,
                                            const std::string& dir, const TransformPipeline& transforms) {
  const std::string source = "data.image_folder: " + dir;
  if (!transforms.empty() && transforms.output_shape(sample[0]) != sample)
    throw ConfigError(
        fmt::format("{}: the transforms make {} samples but model.input_shape is {}; make the last "
                    "crop or resize give the model's height and width",
                    source, transforms.output_shape(sample[0]).str(), sample.str()));
  if (pack || streams(o, s, sample, transforms)) {  // a pack always streams
    ImageStreamOptions so;
    so.transforms = transforms;
    so.sample = sample;
    so.resize = o.resize;
    so.antialias = o.antialias;
    so.normalize = normalize;
    so.reduced_decode = o.reduced_decode;
    so.exif_orientation = o.exif_orientation;
    so.on_bad_image = o.on_bad_image;
    so.source = source;
    if (pack) return std::make_shared<ImageStreamDataset>(std::move(pack), std::move(so));
    return std::make_shared<ImageStreamDataset>(std::move(s.files), std::move(s.labels), classes, std::move(so));
  }
  if (!transforms.empty())
    fail(fmt::format("{}: transforms run when an image is read; remove 'stream: false' or the transforms", dir));
  std::vector<std::pair<size_t, std::string>> bad;
  std::vector<uint8_t> bytes = load_image_samples(s.files, sample, o.resize, o.antialias, o.exif_orientation,
                                                  o.on_bad_image == BadImagePolicy::Skip ? &bad : nullptr);
  if (!bad.empty()) {  // skip: the bad files' samples leave the set, each named once
    const size_t per = static_cast<size_t>(sample.numel());
    for (const auto& [i, why] : bad) log_warn("{}: skipped a bad image (on_bad_image: skip): {}", source, why);
    std::vector<bool> drop(s.files.size(), false);
    for (const auto& [i, why] : bad) drop[i] = true;
    Split kept;
    std::vector<uint8_t> kept_bytes;
    for (size_t i = 0; i < s.files.size(); ++i) {
      if (drop[i]) continue;
      kept.files.push_back(s.files[i]);
      kept.labels.push_back(s.labels[i]);
      kept_bytes.insert(kept_bytes.end(), bytes.begin() + static_cast<std::ptrdiff_t>(i * per),
                        bytes.begin() + static_cast<std::ptrdiff_t>((i + 1) * per));
    }
    if (kept.files.empty()) fail(fmt::format("{}: none of the {} images decodes; check the folder", dir, bad.size()));
    log_warn("{}: {} of {} images skipped as bad; training reads the other {}", source, bad.size(), s.files.size(),
             kept.files.size());
    s = std::move(kept);
    bytes = std::move(kept_bytes);
  }
  const int64_t n = static_cast<int64_t>(s.files.size());
  Normalize norm = normalize;  // empty = none, as normalize_samples reads it
  if (norm.mean.empty()) norm.mean = {0.0f};
  if (norm.std.empty()) norm.std = {1.0f};
  // from_bytes takes byte labels; the real ones (any class count) replace them below.
  const InMemoryDataset images = InMemoryDataset::from_bytes(
      bytes, {n, sample[0], sample[1], sample[2]}, std::vector<uint8_t>(s.files.size(), 0), {n}, classes, norm, source);
  Tensor labels = Tensor::empty(Shape{n}, DType::I64);
  std::memcpy(labels.data<int64_t>(), s.labels.data(), s.labels.size() * sizeof(int64_t));
  std::vector<float> pad;
  for (int64_t c = 0; c < sample[0]; ++c) pad.push_back(images.pad_value(c));
  return std::make_shared<InMemoryDataset>(images.images(), labels, classes, pad);
}

}  // namespace

std::vector<std::string> image_files(const std::string& dir, int64_t* skipped) {
  std::error_code ec;
  INGOT_CHECK_AS(fs::is_directory(dir, ec), InputError, "{}: not a folder", dir);
  std::vector<std::string> files;
  try {
    for (const fs::directory_entry& e :
         fs::recursive_directory_iterator(dir, fs::directory_options::follow_directory_symlink)) {
      if (e.is_directory()) continue;
      if (is_image_path(e.path().string()))
        files.push_back(e.path().string());
      else if (skipped)
        ++*skipped;
    }
  } catch (const fs::filesystem_error& e) {
    throw InputError(fmt::format("{}: cannot list the folder ({}); check its permissions and links", dir, e.what()));
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<uint8_t> load_image_samples(const std::vector<std::string>& files, const Shape& sample, ResizeMode mode,
                                        bool antialias, ExifOrientation exif,
                                        std::vector<std::pair<size_t, std::string>>* bad) {
  const size_t per = static_cast<size_t>(sample.numel()), n = files.size();
  std::vector<uint8_t> out(per * n);
  const unsigned threads = static_cast<unsigned>(std::clamp<size_t>(
      n / kFilesPerThread, 1, std::min(kMaxDecodeThreads, std::max(1u, std::thread::hardware_concurrency()))));
  // Thread t takes files t, t + threads, ... and stops at its first bad one; of those, the first
  // in file order is reported, so the message does not depend on the thread count.
  std::vector<std::exception_ptr> errors(threads);
  std::vector<size_t> failed_at(threads, n);
  std::vector<std::vector<std::pair<size_t, std::string>>> bad_of(threads);
  const auto work = [&](unsigned t) {
    size_t i = t;
    try {
      for (; i < n; i += threads) {
        try {
          const std::vector<uint8_t> one = image_sample(decode_image(files[i], exif), sample, mode, antialias);
          std::memcpy(out.data() + i * per, one.data(), per);
        } catch (const InputError& e) {
          if (bad == nullptr) throw;
          bad_of[t].emplace_back(i, e.what());
        }
      }
    } catch (...) {
      errors[t] = std::current_exception();
      failed_at[t] = i;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();
  const size_t first = static_cast<size_t>(std::min_element(failed_at.begin(), failed_at.end()) - failed_at.begin());
  if (errors[first]) std::rethrow_exception(errors[first]);
  if (bad != nullptr) {
    for (auto& b : bad_of) bad->insert(bad->end(), b.begin(), b.end());
    std::sort(bad->begin(), bad->end());
  }
  return out;
}

ImageFolderListing list_image_folder(const std::string& dir, const std::string& where) {
  ImageFolderListing out;
  out.classes = class_folders(dir, where);
  Split s = list_split(dir, out.classes, where, out.skipped);
  out.files = std::move(s.files);
  out.labels = std::move(s.labels);
  return out;
}

DatasetSplits image_folder_datasets(const ImageFolderOptions& o, const Shape& sample, const Normalize& normalize) {
  // A split is a folder, or a pack of one (its folder holds pack.json), read in the folder's order.
  const auto open_pack = [](const std::string& dir) {
    if (is_image_pack(dir)) return std::make_shared<const ImagePack>(dir);
    if (is_unfinished_image_pack(dir))
      fail(
          fmt::format("{}: a pack's files without its {} (the packing stopped before the end); run ingot pack "
                      "FOLDER -o {} again",
                      dir, kImagePackHeader, dir));
    return std::shared_ptr<const ImagePack>();
  };
  const std::shared_ptr<const ImagePack> train_pack = open_pack(o.train), test_pack = open_pack(o.test),
                                         validation_pack = o.validation.empty() ? nullptr : open_pack(o.validation);
  const std::vector<std::string> classes =
      train_pack ? train_pack->class_names() : class_folders(o.train, split_where("train"));
  const auto check_classes = [&](const std::string& dir, const char* key, const ImagePack* pack) {
    const std::vector<std::string> other = pack ? pack->class_names() : class_folders(dir, split_where(key));
    if (other == classes) return;
    std::vector<std::string> missing, extra;
    std::set_difference(classes.begin(), classes.end(), other.begin(), other.end(), std::back_inserter(missing));
    std::set_difference(other.begin(), other.end(), classes.begin(), classes.end(), std::back_inserter(extra));
    const std::string what = fmt::format(
        "{}: {} has class folders [{}] but train ({}) has [{}] (missing: [{}], extra: [{}])", key, dir,
        fmt::join(other, ", "), o.train, fmt::join(classes, ", "), fmt::join(missing, ", "), fmt::join(extra, ", "));
    if (pack == nullptr && train_pack == nullptr) fail(what + "; the folders must hold the same classes");
    throw ConfigError(fmt::format(
        "{}: {}; a pack keeps the classes of the folder it was packed from: give splits with the same classes "
        "(ingot pack FOLDER -o DIR packs one)",
        kWhere, what));
  };
  check_classes(o.test, "test", test_pack.get());
  if (!o.validation.empty()) check_classes(o.validation, "validation", validation_pack.get());
  int64_t skipped = 0;
  const auto list = [&](const std::string& dir, const char* key, const ImagePack* pack) {
    return pack ? Split{} : list_split(dir, classes, split_where(key), skipped);
  };
  const Split train = list(o.train, "train", train_pack.get()), test = list(o.test, "test", test_pack.get());
  Split validation;
  if (!o.validation.empty()) validation = list(o.validation, "validation", validation_pack.get());
  if (skipped > 0)
    log_warn("data.image_folder: skipped {} {} not .png, .jpg or .jpeg", skipped,
             skipped == 1 ? "file that is" : "files that are");
  const int64_t k = static_cast<int64_t>(classes.size());
  DatasetSplits out;
  out.class_names = classes;
  out.train = make_dataset(train, train_pack, sample, o, k, normalize, o.train, o.train_transforms);
  out.test = make_dataset(test, test_pack, sample, o, k, normalize, o.test, o.test_transforms);
  if (!o.validation.empty())
    out.validation =
        make_dataset(validation, validation_pack, sample, o, k, normalize, o.validation, o.test_transforms);
  return out;
}

void register_image_folder_dataset(DatasetRegistry& registry) {
  config::Schema keys;
  keys.string("train", true).string("test", true).string("validation").string("resize", false, {"crop", "stretch"});
  keys.boolean("antialias").string("stream", false, {"auto", "true", "false"}).boolean("reduced_decode");
  keys.string("on_bad_image", false, {"error", "skip"}).string("exif_orientation", false, {"ignore", "apply"});
  config::Schema transforms;
  for (const char* split : {"train", "test"}) transforms.add({.key = split, .type = config::FieldType::List});
  keys.section("transforms", std::move(transforms));
  registry.add(
      {"image_folder", std::move(keys),
       [](const YAML::Node& section, const std::string& file, const DataConfig& c, uint64_t) {
         if (!section || !section.IsMap() || !section["train"] || !section["test"])
           throw ConfigError(
               "data.image_folder: give the folders, e.g. data: {dataset: image_folder, image_folder: {train: "
               "images/train, test: images/test}}");
         if (!c.input_shape)
           throw ConfigError(
               "data.image_folder: images are resized to the model's input; set model.input_shape, e.g. [3, 32, 32]");
         ImageFolderOptions o;
         o.train = section["train"].Scalar();
         o.test = section["test"].Scalar();
         if (section["validation"]) o.validation = section["validation"].Scalar();
         if (section["resize"]) o.resize = parse_resize_mode(section["resize"].Scalar(), "data.image_folder.resize");
         if (section["antialias"]) o.antialias = section["antialias"].as<bool>();
         if (section["stream"]) {
           const std::string v = section["stream"].Scalar();
           o.stream = v == "auto"   ? ImageFolderOptions::Stream::Auto
                      : v == "true" ? ImageFolderOptions::Stream::On
                                    : ImageFolderOptions::Stream::Off;
         }
         if (section["reduced_decode"]) o.reduced_decode = section["reduced_decode"].as<bool>();
         if (section["exif_orientation"])
           o.exif_orientation =
               parse_exif_orientation(section["exif_orientation"].Scalar(), "data.image_folder.exif_orientation");
         if (section["on_bad_image"])
           o.on_bad_image = parse_bad_image_policy(section["on_bad_image"].Scalar(), "data.image_folder.on_bad_image");
         if (const YAML::Node t = section["transforms"]) {
           if (t["train"])
             o.train_transforms = TransformPipeline::parse(t["train"], file, "data.image_folder.transforms.train");
           if (t["test"])
             o.test_transforms = TransformPipeline::parse(t["test"], file, "data.image_folder.transforms.test");
           if (o.train_transforms.empty() != o.test_transforms.empty())
             throw ConfigError(fmt::format(
                 "{}: data.image_folder.transforms: give both train and test lists (the test list sizes the images "
                 "as train's does, e.g. [{{resize: 256}}, {{center_crop: 224}}])",
                 config::where(file, t)));
         }
         return image_folder_datasets(o, *c.input_shape, c.normalize);
       },
       "PNG and JPEG files, one sub-folder per class, decoded into memory or streamed through transforms "
       "(data.image_folder: train, test, validation, resize: crop | stretch, antialias, stream: auto | true | false, "
       "transforms: {train: [...], test: [...]}, reduced_decode, exif_orientation: ignore | apply, "
       "on_bad_image: error | skip)"});
}

}  // namespace ingot::data
