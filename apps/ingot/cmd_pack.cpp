// `ingot pack FOLDER -o DIR [--shard-mb N] [--force]`: one split of an image_folder (class
// sub-folders of JPEG / PNG files) to packed shards that data.image_folder.train / test /
// validation read memory-mapped instead of one file per image; one summary line.
#include <boost/program_options.hpp>

#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "cli.h"
#include "ingot/base/error.h"
#include "ingot/data/image_pack.h"

namespace po = boost::program_options;

namespace ingot::cli {

int cmd_pack(const std::vector<std::string>& args) {
  po::options_description opts("ingot pack");
  opts.add_options()("output,o", po::value<std::string>(), "folder for the pack (created if missing; required)")(
      "shard-mb", po::value<int64_t>()->default_value(1024), "megabytes per shard at most (an image is never split)")(
      "force", "replace the pack already in the folder (its other files stay)")("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("folder", po::value<std::string>());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("folder", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  constexpr const char* kUsage = "usage: ingot pack FOLDER -o DIR [--shard-mb N] [--force]";
  if (vm.count("help")) {
    std::cout << kUsage << "\n\n"
              << "Packs one split of an image_folder (FOLDER/<class>/<image>.jpg|.png, listed in image_folder's\n"
                 "order) into DIR: shard-00000.bin ... (the files' bytes, concatenated), index.bin (shard, offset,\n"
                 "length, label and CRC32 per image), names.txt and pack.json (written last). Give DIR as\n"
                 "data.image_folder.train (or test, validation): the run streams it memory-mapped, with the same\n"
                 "samples as the folder. Images are not decoded here: a bad one is met when it is read\n"
                 "(data.image_folder.on_bad_image).\n\n"
              << opts;
    return 0;
  }
  if (!vm.count("folder") || !vm.count("output")) throw ConfigError(kUsage);
  const int64_t shard_mb = vm["shard-mb"].as<int64_t>();
  if (shard_mb < 1 || shard_mb > (int64_t{1} << 30))
    throw ConfigError(fmt::format("--shard-mb {}: give a size in megabytes of at least 1", shard_mb));
  data::ImagePackOptions o;
  o.shard_bytes = shard_mb << 20;
  o.force = vm.count("force") > 0;
  o.stop = [] { return interrupted(); };
  const std::string dir = vm["output"].as<std::string>();
  const auto t0 = std::chrono::steady_clock::now();
  const data::ImagePackSummary s = data::write_image_pack(vm["folder"].as<std::string>(), dir, o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << fmt::format(
      "packed {} images of {} classes into {} {} ({} bytes, {:.1f} MB) in {:.2f} s: {}; read "
      "it with data.image_folder.train={}\n",
      s.images, s.classes, s.shards, s.shards == 1 ? "shard" : "shards", s.bytes, static_cast<double>(s.bytes) / 1e6,
      seconds, dir, dir);
  return 0;
}

}  // namespace ingot::cli
