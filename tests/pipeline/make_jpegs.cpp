// make_jpegs: writes an ImageNet-layout folder of JPEGs for the tests and benchmarks:
//   make_jpegs OUT --classes C --train N --val M [--width W --height H] [--jitter J] [--quality Q]
// gives OUT/train/class_cc/nnnnn.jpg (N per class) and OUT/val/... (M per class), each W x H
// plus up to J pixels either way, RGB, quality Q. Every class has its own stripe direction and
// frequency over a smooth colour field (learnable), every image its own phase and colours; the
// same arguments write the same bytes.
#include <cstddef>
#include <cstdio>  // jpeglib.h needs size_t and FILE declared first

#include <jpeglib.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: make_jpegs OUT --classes C --train N --val M [--width W --height H] [--jitter J] "
               "[--quality Q]\n");
  return 2;
}

// A 32-bit hash (splitmix-like) for the per-image parameters.
uint32_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return static_cast<uint32_t>(x ^ (x >> 31));
}
double unit(uint64_t key) { return mix(key) / 4294967296.0; }

bool write_jpeg(const std::string& path, int w, int h, const std::vector<unsigned char>& rgb, int quality) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, f);
  c.image_width = static_cast<JDIMENSION>(w);
  c.image_height = static_cast<JDIMENSION>(h);
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<unsigned char*>(rgb.data()) + static_cast<size_t>(c.next_scanline) * w * 3;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  return std::fclose(f) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::filesystem::path out = argv[1];
  int classes = 0, train = 0, val = 0, width = 500, height = 375, jitter = 0, quality = 90;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (k == "--classes")
      classes = v;
    else if (k == "--train")
      train = v;
    else if (k == "--val")
      val = v;
    else if (k == "--width")
      width = v;
    else if (k == "--height")
      height = v;
    else if (k == "--jitter")
      jitter = v;
    else if (k == "--quality")
      quality = v;
    else
      return usage();
  }
  if (classes < 1 || train < 0 || val < 0 || width < 8 || height < 8 || jitter < 0 || jitter >= std::min(width, height))
    return usage();
  for (const auto& [split, count] : {std::pair<std::string, int>{"train", train}, {"val", val}}) {
    for (int c = 0; c < classes; ++c) {
      char name[32];
      std::snprintf(name, sizeof name, "class_%02d", c);
      const std::filesystem::path dir = out / split / name;
      std::filesystem::create_directories(dir);
      const double angle = 3.14159265 * c / classes, freq = 0.03 + 0.05 * ((c * 7) % classes) / classes;
      for (int i = 0; i < count; ++i) {
        const uint64_t key = (static_cast<uint64_t>(split == "val") << 40) ^ (static_cast<uint64_t>(c) << 20) ^ i;
        const int w = width + (jitter ? static_cast<int>(unit(key * 7 + 1) * (2 * jitter + 1)) - jitter : 0);
        const int h = height + (jitter ? static_cast<int>(unit(key * 7 + 2) * (2 * jitter + 1)) - jitter : 0);
        const double phase = 6.28 * unit(key * 7 + 3), tint = unit(key * 7 + 4), bright = 0.6 + 0.4 * unit(key * 7 + 5);
        std::vector<unsigned char> rgb(static_cast<size_t>(w) * h * 3);
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            const double s = std::sin(freq * (x * std::cos(angle) + y * std::sin(angle)) * 4.0 + phase);
            const double g = 0.5 + 0.5 * std::sin(0.01 * x + 0.013 * y + 6.28 * tint);
            unsigned char* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
            p[0] = static_cast<unsigned char>(std::lround(255 * bright * (0.5 + 0.35 * s * (0.5 + 0.5 * tint))));
            p[1] = static_cast<unsigned char>(std::lround(255 * bright * (0.25 + 0.5 * g)));
            p[2] = static_cast<unsigned char>(std::lround(255 * bright * (0.5 - 0.35 * s * (1.0 - 0.5 * tint))));
          }
        char file[32];
        std::snprintf(file, sizeof file, "%05d.jpg", i);
        if (!write_jpeg((dir / file).string(), w, h, rgb, quality)) {
          std::fprintf(stderr, "make_jpegs: cannot write %s\n", (dir / file).c_str());
          return 1;
        }
      }
    }
  }
  return 0;
}
