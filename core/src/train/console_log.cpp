// ConsoleTee: a stream buffer that forwards to the console's and copies to console.log, flushing
// the file at each line end so a killed run keeps what it printed.
#include "ingot/train/console_log.h"

#include <cerrno>
#include <cstring>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"

namespace ingot::train {
namespace {

constexpr size_t kMaxKept = size_t{1} << 20;  // output before the run folder: the header, a few lines

}  // namespace

ConsoleTee::ConsoleTee(std::ostream& out) : out_(out), previous_(out.rdbuf()), buffer_(previous_) {
  out_.flush();
  out_.rdbuf(&buffer_);
}

ConsoleTee::~ConsoleTee() {
  out_.flush();
  out_.rdbuf(previous_);
}

void ConsoleTee::attach(const std::filesystem::path& path, bool append) { buffer_.attach(path, append); }

void ConsoleTee::discard() { buffer_.discard(); }

void ConsoleTee::Buffer::attach(const std::filesystem::path& path, bool append) {
  std::lock_guard<std::mutex> lock(mutex_);
  require_regular_file(path);  // (opening a FIFO would wait for a reader)
  file_.open(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  INGOT_CHECK_AS(file_.good(), InputError, "{}: cannot open the console log: {}", path.string(), std::strerror(errno));
  file_ << kept_;
  file_.flush();
  kept_.clear();
  keeping_ = false;
}

void ConsoleTee::Buffer::discard() {
  std::lock_guard<std::mutex> lock(mutex_);
  kept_.clear();
  kept_.shrink_to_fit();
  keeping_ = false;
}

ConsoleTee::Buffer::int_type ConsoleTee::Buffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  copy(&ch, 1);
  return target_->sputc(ch);
}

std::streamsize ConsoleTee::Buffer::xsputn(const char* s, std::streamsize n) {
  copy(s, n);
  return target_->sputn(s, n);
}

int ConsoleTee::Buffer::sync() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (file_.is_open()) file_.flush();
  }
  return target_->pubsync();
}

void ConsoleTee::Buffer::copy(const char* s, std::streamsize n) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_.is_open()) {
    file_.write(s, n);
    if (std::memchr(s, '\n', static_cast<size_t>(n)) != nullptr) file_.flush();  // a kill keeps whole lines
  } else if (keeping_ && kept_.size() + static_cast<size_t>(n) <= kMaxKept) {
    kept_.append(s, static_cast<size_t>(n));
  }
}

}  // namespace ingot::train
