// atomic_write: the target is replaced whole or left alone, and no temporary file survives.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "ingot/base/error.h"
#include "ingot/io/atomic_write.h"
#include "io_test_util.h"

using Catch::Matchers::Contains;
using ingot::io::atomic_write;
using ingot::io::ByteSink;
using ingot::test::read_bytes;
using ingot::test::ScratchDir;
using ingot::test::write_bytes;

TEST_CASE("atomic_write creates and replaces a file, leaving no temporary file", "[io][atomic]") {
  ScratchDir dir;
  const auto target = dir / "state.json";
  atomic_write(target, std::string_view("first"));
  CHECK(read_bytes(target) == "first");
  atomic_write(target, [](ByteSink& sink) {
    sink.write("sec", 3);
    CHECK(sink.written() == 3);
    sink.write(std::string_view("ond"));
    CHECK(sink.written() == 6);
  });
  CHECK(read_bytes(target) == "second");
  CHECK(dir.entries() == std::vector<std::string>{"state.json"});
}

TEST_CASE("atomic_write writes empty and large files", "[io][atomic]") {
  ScratchDir dir;
  atomic_write(dir / "empty", std::string_view());
  CHECK(read_bytes(dir / "empty").empty());
  const std::string big(3 << 20, 'x');  // several write() calls' worth
  atomic_write(dir / "big", big);
  CHECK(read_bytes(dir / "big") == big);
  CHECK(dir.entries() == std::vector<std::string>{"big", "empty"});
}

TEST_CASE("a failing writer leaves the old target untouched and no temporary file", "[io][atomic]") {
  ScratchDir dir;
  const auto target = dir / "model.safetensors";
  write_bytes(target, "old content");
  auto failing = [&](ByteSink& sink) {
    sink.write(std::string_view("half of the new cont"));
    // Mid-write, readers of the target still see the old file.
    CHECK(read_bytes(target) == "old content");
    throw std::runtime_error("disk on fire");
  };
  REQUIRE_THROWS_WITH(atomic_write(target, failing), "disk on fire");
  CHECK(read_bytes(target) == "old content");
  CHECK(dir.entries() == std::vector<std::string>{"model.safetensors"});
}

TEST_CASE("a failing writer with no previous target leaves the folder empty", "[io][atomic]") {
  ScratchDir dir;
  REQUIRE_THROWS_AS(atomic_write(dir / "new", [](ByteSink&) { throw ingot::InputError("bad"); }), ingot::InputError);
  CHECK(dir.entries().empty());
}

TEST_CASE("atomic_write into a missing folder names the path", "[io][atomic]") {
  ScratchDir dir;
  const auto target = dir / "no_such_folder" / "x.bin";
  REQUIRE_THROWS_MATCHES(
      atomic_write(target, std::string_view("x")), ingot::Error,
      Catch::Matchers::Message(target.string() + ": cannot create a temporary file in its folder: No such file or "
                                                 "directory (does the folder exist and is it writable?)"));
  CHECK(dir.entries() == std::vector<std::string>{});
}

TEST_CASE("atomic_write refuses a path naming a folder", "[io][atomic]") {
  ScratchDir dir;
  REQUIRE_THROWS_WITH(atomic_write(dir.path() / "", std::string_view("x")), Contains("names a folder"));
}

TEST_CASE("atomic_write onto a folder fails and cleans up", "[io][atomic]") {
  ScratchDir dir;
  std::filesystem::create_directory(dir / "taken");
  REQUIRE_THROWS_WITH(atomic_write(dir / "taken", std::string_view("x")),
                      Contains("cannot replace it with the new file"));
  CHECK(dir.entries() == std::vector<std::string>{"taken"});
}
