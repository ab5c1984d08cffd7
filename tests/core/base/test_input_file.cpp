// InputFile: regular files are read (bounded by their size and a limit); a FIFO, a device and a
// folder are refused before anything is opened, so nothing blocks or reads without end; file
// content quoted in a message is made printable.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

struct Folder {
  fs::path path = fs::temp_directory_path() / ("ingot-input-file-" + std::to_string(::getpid()));
  Folder() { fs::create_directories(path); }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("InputFile reads a regular file, bounded by its size and a limit", "[base][input_file]") {
  Folder dir;
  const fs::path file = dir.path / "a.txt";
  std::ofstream(file) << "hello, file";
  ingot::InputFile f(file);
  CHECK(f.size() == 11);
  char five[5];
  f.read_at(five, 5, 6);
  CHECK(std::string(five, 5) == " file");
  CHECK(f.read_all(64, "a test file") == "hello, file");
  CHECK_THROWS_WITH(f.read_all(4, "a test file"), Contains("a.txt: holds 11 bytes, more than a test file may (4 "
                                                           "bytes): is it the right file?"));
  CHECK_THROWS_WITH(f.read_at(five, 5, 9), Contains("shrank"));  // (past the end)
  CHECK(ingot::read_file(file, 64, "a test file") == "hello, file");
}

TEST_CASE("InputFile refuses a FIFO at once, without waiting for a writer", "[base][input_file]") {
  Folder dir;
  const fs::path fifo = dir.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(ingot::InputFile(fifo), ingot::InputError);
  CHECK_THROWS_WITH(ingot::InputFile(fifo), Contains("pipe: is a FIFO (named pipe), not a regular file"));
  CHECK_THROWS_WITH(ingot::require_regular_file(fifo), Contains("is a FIFO"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("InputFile refuses devices and folders, and names a missing file", "[base][input_file]") {
  Folder dir;
  CHECK_THROWS_WITH(ingot::InputFile("/dev/zero"), Contains("/dev/zero: is a character device, not a regular file"));
  CHECK_THROWS_WITH(ingot::read_file("/dev/zero", 1024, "a config file"), Contains("character device"));
  CHECK_THROWS_WITH(ingot::InputFile(dir.path), Contains("is a folder, not a regular file"));
  CHECK_THROWS_WITH(ingot::InputFile(dir.path / "none"), Contains("none: no such file"));
  CHECK_THROWS_WITH(ingot::InputFile(dir.path / "none", "check data.x"), Contains("no such file; check data.x"));
  CHECK_NOTHROW(ingot::require_regular_file(dir.path / "none"));  // (not there yet: the caller makes it)
}

TEST_CASE("printable escapes control and non-UTF-8 bytes of file content, and cuts it short", "[base][input_file]") {
  CHECK(ingot::printable("epoch-003") == "epoch-003");
  CHECK(ingot::printable("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");  // (UTF-8 stays as it is)
  CHECK(ingot::printable(std::string("\x1b[2J\x00\xff\n", 7)) == "\\x1b[2J\\x00\\xff\\x0a");
  CHECK(ingot::printable("\xc3") == "\\xc3");  // (a sequence cut short)
  CHECK(ingot::printable(std::string(300, 'a'), 10) == "aaaaaaaaaa...");
}
