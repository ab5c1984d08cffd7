// ConsoleTee: copies what a run prints to its output stream into runs/<name>/console.log. It
// keeps the output printed before the run folder is known and writes it first.
#pragma once

#include <filesystem>
#include <fstream>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>

namespace ingot::train {

class ConsoleTee {
 public:
  /// Installs itself as `out`'s stream buffer (the stream object stays the same, so checks such
  /// as `&out == &std::cout` still hold); everything printed from now on still reaches the old
  /// buffer, and is kept (up to 1 MiB) until attach() or discard().
  explicit ConsoleTee(std::ostream& out);
  /// Puts the old stream buffer back and closes the file.
  ~ConsoleTee();
  ConsoleTee(const ConsoleTee&) = delete;
  ConsoleTee& operator=(const ConsoleTee&) = delete;

  /// From now on copies the output to `path` (appended when `append`, e.g. a resumed run),
  /// starting with what was kept. Throws InputError when the file cannot be opened.
  void attach(const std::filesystem::path& path, bool append);
  /// Keeps nothing more (a process that writes no run files).
  void discard();

 private:
  class Buffer final : public std::streambuf {
   public:
    explicit Buffer(std::streambuf* target) : target_(target) {}
    void attach(const std::filesystem::path& path, bool append);
    void discard();

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

   private:
    void copy(const char* s, std::streamsize n);
    std::streambuf* target_;
    std::mutex mutex_;
    std::string kept_;
    bool keeping_ = true;
    std::ofstream file_;
  };

  std::ostream& out_;
  std::streambuf* previous_;
  Buffer buffer_;
};

}  // namespace ingot::train
