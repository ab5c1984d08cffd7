// Corrupt safetensors files: each defect is refused with one line naming the file and the defect,
// before any tensor memory is allocated.
#include <catch2/catch.hpp>

#include <cstring>

#include "ingot/base/allocator.h"
#include "ingot/io/safetensors.h"
#include "io_test_util.h"

using namespace ingot;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using ingot::test::ScratchDir;

namespace {

std::string length_field(uint64_t n) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out;
}

// A file made of a header text and a data section, the length field stating the header's size.
std::string file_bytes(const std::string& header, const std::string& data) {
  return length_field(header.size()) + header + data;
}

// Loads `bytes` from a file and returns the refusal message (fails if there is none, or if it
// is not an InputError).
std::string refusal(const ScratchDir& dir, const std::string& bytes) {
  const auto path = dir / "bad.safetensors";
  test::write_bytes(path, bytes);
  try {
    io::load_safetensors(path);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, StartsWith(path.string() + ": "));
    CHECK(msg.find('\n') == std::string::npos);
    return msg;
  }
  FAIL("no InputError for a corrupt file");
  return {};
}

const std::string kEntryA = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
const std::string kEntryB = R"("b":{"dtype":"I32","shape":[3],"data_offsets":[8,20]})";
const std::string kData20(20, '\x01');

}  // namespace

TEST_CASE("a well-formed hand-written file loads (the baseline for the cases below)", "[io][corrupt]") {
  ScratchDir dir;
  test::write_bytes(dir / "ok.safetensors", file_bytes("{" + kEntryA + "," + kEntryB + "}", kData20));
  const auto file = io::load_safetensors(dir / "ok.safetensors");
  CHECK(file.tensors.at("b").to_vector<int32_t>() == std::vector<int32_t>(3, 0x01010101));
  CHECK(file.order == std::vector<std::string>{"a", "b"});
}

TEST_CASE("truncated and foreign files are refused", "[io][corrupt]") {
  ScratchDir dir;
  CHECK_THAT(refusal(dir, ""), Contains("file has 0 bytes, fewer than the 8"));
  CHECK_THAT(refusal(dir, "abcde"), Contains("file has 5 bytes, fewer than the 8"));
  const std::string good = file_bytes("{" + kEntryA + "," + kEntryB + "}", kData20);
  CHECK_THAT(refusal(dir, good.substr(0, good.size() - 3)),
             Contains("tensor 'b' occupies bytes [8, 20) of the data section, which holds only 17: file is "
                      "truncated or corrupt"));
  CHECK_THAT(refusal(dir, good.substr(0, 20)), Contains("follow the length field: file is truncated"));
  CHECK_THAT(refusal(dir, good + "xyz"), Contains("3 bytes after the last tensor are not described by the header"));
  CHECK_THAT(refusal(dir, "PK\x03\x04 this is a zip file, not safetensors"),
             Contains("bytes (limit 100 MB): file is corrupt or not safetensors"));
}

TEST_CASE("a huge header length is refused with the exact message", "[io][corrupt]") {
  ScratchDir dir;
  const std::string msg = refusal(dir, length_field(300000000) + "{}");
  CHECK(msg == (dir / "bad.safetensors").string() +
                   ": safetensors header claims 300000000 bytes (limit 100 MB): file is corrupt or not safetensors");
  CHECK_THAT(refusal(dir, length_field(~0ull) + "{}"), Contains("claims 18446744073709551615 bytes"));
}

TEST_CASE("headers that are not a JSON object are refused", "[io][corrupt]") {
  ScratchDir dir;
  CHECK_THAT(refusal(dir, file_bytes("[1, 2]  ", "")), Contains("header does not start with '{'"));
  CHECK_THAT(refusal(dir, file_bytes(" {}     ", "")), Contains("header does not start with '{'"));
  CHECK_THAT(refusal(dir, file_bytes("", "")), Contains("header does not start with '{'"));
  CHECK_THAT(refusal(dir, file_bytes("{\"a\":", "")), Contains("header is not valid JSON (parse error"));
  CHECK_THAT(refusal(dir, file_bytes("{} trailing", "")), Contains("header is not valid JSON"));
  CHECK_THAT(refusal(dir, file_bytes("{\"a\":\"\xff\"}", "")), Contains("header is not valid JSON"));
  CHECK_THAT(refusal(dir, file_bytes("{\"a\":1e400}", "")),
             Contains("header is not valid JSON (number overflow parsing '1e400')"));
  CHECK_THAT(refusal(dir, file_bytes("{\"a\":" + std::string(1000, '[') + std::string(1000, ']') + "}", "")),
             Contains("nests deeper than the format allows"));
}

TEST_CASE("bad header entries are refused by name", "[io][corrupt]") {
  ScratchDir dir;
  auto one = [&](const std::string& entry, const std::string& data = std::string(8, '\0')) {
    return refusal(dir, file_bytes("{\"w\":" + entry + "}", data));
  };
  CHECK_THAT(one(R"({"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]})"),
             Contains("tensor 'w' has dtype \"F8_E4M3\", which Ingot cannot read (known: F32 F64"));
  CHECK_THAT(one(R"({"dtype":32,"shape":[2],"data_offsets":[0,8]})"), Contains("tensor 'w' has dtype 32"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})"),
             Contains("tensor 'w': shape dimension must be a non-negative integer, got -2"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[2.0],"data_offsets":[0,8]})"),
             Contains("shape dimension must be a non-negative integer, got 2.0"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":"2","data_offsets":[0,8]})"), Contains("shape must be a list"));
  auto dims = [](int n) {
    std::string out = "[2";
    for (int i = 1; i < n; ++i) out += ",1";
    return out + "]";
  };
  CHECK_THAT(
      one(R"({"dtype":"F32","shape":)" + dims(Shape::kMaxDims + 1) + R"(,"data_offsets":[0,8]})"),
      Contains(fmt::format("tensor 'w' has {} dims; Ingot supports at most {}", Shape::kMaxDims + 1, Shape::kMaxDims)));
  CHECK_THAT(one(R"({"dtype":"F32","shape":)" + dims(100000) + R"(,"data_offsets":[0,8]})"),
             Contains("a list in the safetensors header has more than 64 items"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[2]})"), Contains("tensor 'w': header entry has no 'data_offsets'"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":1})"),
             Contains("tensor 'w': unknown field 'extra'"));
  CHECK_THAT(one(R"([1])"), Contains("tensor 'w': header entry is a JSON array, expected an object"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0]})"),
             Contains("data_offsets must be [begin, end], got [0]"));
  CHECK_THAT(one(R"({"dtype":"F32","shape":[2],"data_offsets":[8,0]})", std::string(8, '\0')),
             Contains("data_offsets [8,0] end before they begin"));
}

TEST_CASE("shapes that disagree with their byte range are refused", "[io][corrupt]") {
  ScratchDir dir;
  const std::string data(24, '\0');
  CHECK_THAT(refusal(dir, file_bytes(R"({"w":{"dtype":"F64","shape":[2],"data_offsets":[0,24]}})", data)),
             Contains("tensor 'w' (F64 [2]) needs 16 bytes but data_offsets [0,24] hold 24: file is corrupt"));
  CHECK_THAT(refusal(dir, file_bytes(R"({"w":{"dtype":"F32","shape":[1099511627776,1099511627776],)"
                                     R"("data_offsets":[0,24]}})",
                                     data)),
             Contains("tensor 'w' has shape [1099511627776,1099511627776] whose byte size overflows 64 bits"));
  CHECK_THAT(
      refusal(dir, file_bytes(R"({"w":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,24]}})", data)),
      Contains("shape dimension must be a non-negative integer"));
  // A zero dimension makes an empty tensor whatever the others say.
  CHECK_THAT(refusal(dir, file_bytes(R"({"w":{"dtype":"F32","shape":[4611686018427387904,0],)"
                                     R"("data_offsets":[0,24]}})",
                                     data)),
             Contains("needs 0 bytes"));
  // ... but the other dims must still multiply within int64 (numel and strides are computed).
  CHECK_THAT(refusal(dir, file_bytes(R"({"w":{"dtype":"F32","shape":[0,9223372036854775807,2],)"
                                     R"("data_offsets":[0,0]}})",
                                     "")),
             Contains("tensor 'w' has shape [0,9223372036854775807,2] whose element count overflows 64 bits"));
}

TEST_CASE("offsets outside the data, overlapping or leaving gaps are refused", "[io][corrupt]") {
  ScratchDir dir;
  const std::string a = R"("a":{"dtype":"F32","shape":[2],"data_offsets":)";
  const std::string b = R"("b":{"dtype":"F32","shape":[2],"data_offsets":)";
  auto two = [&](const std::string& ra, const std::string& rb, size_t data) {
    return refusal(dir, file_bytes("{" + a + ra + "}," + b + rb + "}}", std::string(data, '\0')));
  };
  CHECK_THAT(two("[0,8]", "[8,16]", 12), Contains("tensor 'b' occupies bytes [8, 16) of the data section, which "
                                                  "holds only 12"));
  CHECK_THAT(two("[0,8]", "[4,12]", 12), Contains("tensor 'b' [4, 12) overlaps tensor 'a', which ends at 8"));
  CHECK_THAT(two("[0,8]", "[0,8]", 16), Contains("overlaps tensor 'a'"));
  CHECK_THAT(two("[0,8]", "[12,20]", 20),
             Contains("gap of 4 bytes after tensor 'a' (ending at 8) before tensor 'b' [12, 20)"));
  CHECK_THAT(two("[4,12]", "[12,20]", 20), Contains("gap of 4 bytes at the start of the data section"));
  CHECK_THAT(two("[0,8]", "[18446744073709551608,0]", 16), Contains("end before they begin"));
  // Out of order in the header is fine as long as the ranges tile the data section.
  test::write_bytes(dir / "swapped.safetensors",
                    file_bytes("{" + a + "[8,16]}," + b + "[0,8]}}", std::string(16, 'x')));
  CHECK(io::load_safetensors(dir / "swapped.safetensors").order == std::vector<std::string>{"b", "a"});
}

TEST_CASE("metadata values must be strings, and BOOL bytes must be 0 or 1", "[io][corrupt]") {
  ScratchDir dir;
  CHECK_THAT(refusal(dir, file_bytes(R"({"__metadata__":{"epoch":3}})", "")),
             Contains("__metadata__ 'epoch' is 3, expected a string"));
  CHECK_THAT(refusal(dir, file_bytes(R"({"__metadata__":["x"]})", "")),
             Contains("__metadata__ is a JSON array, expected an object"));
  CHECK_THAT(refusal(dir, file_bytes(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})",
                                     std::string("\x01\x00\x07", 3))),
             Contains("tensor 'm' (BOOL) holds byte 7 at element 2"));
}

TEST_CASE("missing files and folders are refused with their name", "[io][corrupt]") {
  ScratchDir dir;
  REQUIRE_THROWS_MATCHES(io::load_safetensors(dir / "nope.safetensors"), InputError,
                         Catch::Matchers::Message((dir / "nope.safetensors").string() + ": no such file"));
  REQUIRE_THROWS_WITH(io::load_safetensors(dir.path()), Contains("not a regular file"));
}

TEST_CASE("a header claiming terabytes allocates nothing before it is refused", "[io][corrupt]") {
  ScratchDir dir;
  host_allocator().reset_peak();
  const int64_t before = host_allocator().stats().peak_allocated;
  const std::string header = R"({"w":{"dtype":"F32","shape":[1073741824,1024],"data_offsets":[0,4398046511104]}})";
  CHECK_THAT(refusal(dir, file_bytes(header, std::string(64, '\0'))), Contains("which holds only 64"));
  CHECK(host_allocator().stats().peak_allocated == before);
}
