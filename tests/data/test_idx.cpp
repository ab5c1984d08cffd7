// IDX reader: round trips (gzip and plain) and one clear InputError per kind of bad file.
#include <catch2/catch.hpp>

#include "data_test_util.h"
#include "ingot/data/idx.h"

using namespace ingot;
using namespace ingot::data;
using Catch::Matchers::Contains;

namespace {

std::vector<uint8_t> ramp(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + 3);
  return v;
}

}  // namespace

TEST_CASE("idx: a gzip file written with zlib reads back", "[data][idx]") {
  test::TempDir dir;
  const auto data = ramp(3 * 5 * 4);
  test::write_gz(dir.file("a.gz"), test::idx_bytes({3, 5, 4}, data));
  const IdxArray a = read_idx(dir.file("a.gz"));
  CHECK(a.dims == std::vector<int64_t>{3, 5, 4});
  CHECK(a.data == data);
}

TEST_CASE("idx: plain files read too, and write_idx round trips both ways", "[data][idx]") {
  test::TempDir dir;
  const IdxArray in{{7, 2}, ramp(14)};
  test::write_plain(dir.file("plain"), test::idx_bytes({7, 2}, in.data));
  CHECK(read_idx(dir.file("plain")).data == in.data);
  write_idx(dir.file("w.gz"), in, true);
  write_idx(dir.file("w"), in, false);
  CHECK(test::read_plain(dir.file("w")) == test::idx_bytes({7, 2}, in.data));
  for (const char* name : {"w.gz", "w"}) {
    const IdxArray out = read_idx(dir.file(name));
    CHECK(out.dims == in.dims);
    CHECK(out.data == in.data);
  }
}

TEST_CASE("idx: a missing file names its path and the advice", "[data][idx]") {
  test::TempDir dir;
  const std::string path = dir.file("nope-idx1-ubyte.gz");
  const std::string msg = test::input_error_of([&] { read_idx(path, "install the package"); });
  CHECK_THAT(msg, Contains(path) && Contains("file not found") && Contains("install the package"));
}

TEST_CASE("idx: bad magic, unsupported dtype and empty files are refused", "[data][idx]") {
  test::TempDir dir;
  test::write_gz(dir.file("magic.gz"), {0x1f, 0x02, 0x08, 0x01, 0, 0, 0, 1, 5});
  CHECK_THAT(test::input_error_of([&] { read_idx(dir.file("magic.gz")); }),
             Contains(dir.file("magic.gz")) && Contains("not an IDX file: bad magic 1f 02 08 01"));
  test::write_gz(dir.file("float.gz"), {0, 0, 0x0D, 0x01, 0, 0, 0, 1, 1, 2, 3, 4});
  CHECK_THAT(test::input_error_of([&] { read_idx(dir.file("float.gz")); }),
             Contains("0x0d (float32) is not supported"));
  test::write_gz(dir.file("empty.gz"), {});
  CHECK_THAT(test::input_error_of([&] { read_idx(dir.file("empty.gz")); }),
             Contains("truncated header, 0 of 4 magic bytes"));
  test::write_gz(dir.file("zero.gz"), {0, 0, 0x08, 0x00});
  CHECK_THAT(test::input_error_of([&] { read_idx(dir.file("zero.gz")); }), Contains("0 dimensions"));
  test::write_gz(dir.file("dims.gz"), {0, 0, 0x08, 0x03, 0, 0, 0, 1, 0, 0});
  CHECK_THAT(test::input_error_of([&] { read_idx(dir.file("dims.gz")); }),
             Contains("truncated: header needs 12 bytes of dimensions, got 6"));
}

TEST_CASE("idx: a truncated file says how much data it lacks", "[data][idx]") {
  test::TempDir dir;
  const auto bytes = test::idx_bytes({10, 4}, ramp(30));  // header promises 40 bytes
  test::write_gz(dir.file("short.gz"), bytes);
  test::write_plain(dir.file("short"), bytes);
  for (const char* name : {"short.gz", "short"}) {
    CHECK_THAT(test::input_error_of([&] { read_idx(dir.file(name)); }),
               Contains(dir.file(name)) && Contains("truncated: expected 40 bytes of data, got 30"));
  }
}

TEST_CASE("idx: a cut-off or damaged gzip stream is refused", "[data][idx]") {
  test::TempDir dir;
  std::vector<uint8_t> data(20000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>((i * i) >> 3);
  test::write_gz(dir.file("full.gz"), test::idx_bytes({100, 200}, data));
  const auto gz = test::read_plain(dir.file("full.gz"));

  test::write_plain(dir.file("cut.gz"), std::vector<uint8_t>(gz.begin(), gz.begin() + gz.size() / 2));
  CHECK_THAT(test::input_error_of([&] { read_idx(dir.file("cut.gz")); }),
             Contains(dir.file("cut.gz")) && Contains("truncated: expected 20000 bytes of data, got"));

  auto damaged = gz;
  for (size_t i = gz.size() / 3; i < gz.size() / 3 + 16; ++i) damaged[i] ^= 0x5A;
  test::write_plain(dir.file("damaged.gz"), damaged);
  const std::string msg = test::input_error_of([&] { read_idx(dir.file("damaged.gz")); });
  CHECK_THAT(msg, Contains(dir.file("damaged.gz")));
  CHECK((msg.find("corrupt gzip data") != std::string::npos || msg.find("truncated") != std::string::npos));

  auto bad_crc = gz;
  bad_crc[gz.size() - 6] ^= 0xFF;  // the CRC32 of the trailer
  test::write_plain(dir.file("crc.gz"), bad_crc);
  CHECK_THAT(test::input_error_of([&] { read_idx(dir.file("crc.gz")); }), Contains("corrupt gzip data"));
}

TEST_CASE("idx: absurd dims are refused before allocating, trailing bytes too", "[data][idx]") {
  test::TempDir dir;
  test::write_gz(dir.file("huge.gz"), test::idx_bytes({65536, 65536}, {1, 2, 3}));
  CHECK_THAT(test::input_error_of([&] { read_idx(dir.file("huge.gz")); }),
             Contains("65536x65536 hold 2^31 elements or more"));
  // Under 2^31 elements but far more than the file holds: refused as truncated, no 2 GB buffer.
  test::write_gz(dir.file("liar.gz"), test::idx_bytes({2000000000}, ramp(100)));
  CHECK_THAT(test::input_error_of([&] { read_idx(dir.file("liar.gz")); }),
             Contains("truncated: expected 2000000000 bytes of data, got 100"));
  test::write_gz(dir.file("long.gz"), test::idx_bytes({4}, ramp(9)));
  CHECK_THAT(test::input_error_of([&] { read_idx(dir.file("long.gz")); }), Contains("5 bytes after the 4 bytes"));
}

TEST_CASE("idx: damaged copies of a valid file never crash: they read or throw InputError", "[data][idx]") {
  test::TempDir dir;
  std::vector<uint8_t> data(3000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>((i * 31) ^ (i >> 4));
  for (bool gz : {true, false}) {
    const std::string good = dir.file(gz ? "good.gz" : "good");
    const auto bytes = test::idx_bytes({30, 10, 10}, data);
    gz ? test::write_gz(good, bytes) : test::write_plain(good, bytes);
    const auto file = test::read_plain(good);
    uint64_t state = 12345;
    const auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
    int refused = 0;
    for (int trial = 0; trial < 300; ++trial) {
      auto damaged = file;
      if (trial % 3 == 0) {
        damaged.resize(next() % file.size());
      } else {
        for (int k = 0; k < 1 + trial % 4; ++k) damaged[next() % damaged.size()] = static_cast<uint8_t>(next());
      }
      const std::string path = dir.file("damaged");
      test::write_plain(path, damaged);
      try {
        const IdxArray a = read_idx(path);
        int64_t n = 1;
        for (int64_t d : a.dims) n *= d;
        CHECK(n == static_cast<int64_t>(a.data.size()));
      } catch (const InputError& e) {
        CHECK_THAT(e.what(), Contains(path));
        ++refused;
      }
    }
    CHECK(refused > 100);  // every truncation at least
  }
}
