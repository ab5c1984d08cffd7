// ProgressBar: time-weighted moving averages for throughput and ETA, and the two output modes
// (in-place terminal redraws, throttled; plain lines for logs).
#include "ingot/train/progress_bar.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "ingot/train/memory_watch.h"

namespace ingot::train {
namespace {

constexpr const char* kClearLine = "\r\x1b[2K";  // carriage return + ANSI "erase entire line"

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

int digits(int64_t n) { return n < 10 ? 1 : 1 + digits(n / 10); }

std::string rate_text(double rate) { return rate > 0.0 ? fmt::format("{:.0f}", rate) : std::string("-"); }

/// MiB without decimals from 10 MiB up, with one below (a small model on the CPU).
std::string mib_text(int64_t bytes) {
  const double mib = static_cast<double>(bytes) / 1048576.0;
  return mib >= 10.0 ? fmt::format("{:.0f}", mib) : fmt::format("{:.1f}", mib);
}

}  // namespace

bool is_terminal(FILE* stream) {
  if (stream == nullptr || isatty(fileno(stream)) == 0) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0.0) return "--:--";
  const auto total = static_cast<int64_t>(std::llround(seconds));
  const int64_t h = total / 3600, m = (total / 60) % 60, s = total % 60;
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, s);
  return fmt::format("{}:{:02}", m, s);
}

ProgressBar::ProgressBar(std::ostream& out, bool tty, ProgressOptions options, ProgressClock clock)
    : out_(out), tty_(tty), options_(options), clock_(std::move(clock)) {
  if (!clock_) clock_ = steady_seconds;
}

double ProgressBar::now() const { return clock_(); }

void ProgressBar::start_epoch(int64_t epoch, int64_t epochs, int64_t batches) {
  if (active_) finish_epoch();
  epoch_ = epoch;
  epochs_ = epochs;
  batches_ = batches > 0 ? batches : 0;
  done_ = images_total_ = pending_images_ = pending_batches_ = last_drawn_batch_ = 0;
  loss_ = lr_ = 0.0;
  data_share_ = -1.0;
  epoch_start_ = last_update_ = last_draw_ = now();
  active_ = true;
  if (memory_ != nullptr) memory_->begin_epoch();
}

void ProgressBar::update(int64_t batches_done, int64_t images, double loss, double lr) {
  const double t = now();
  pending_batches_ += batches_done - done_;
  pending_images_ += images;
  done_ = batches_done;
  images_total_ += images;
  loss_ = loss;
  lr_ = lr;
  const double dt = t - last_update_;
  if (dt > 0.0) {
    const double images_now = static_cast<double>(pending_images_) / dt;
    const double batches_now = static_cast<double>(pending_batches_) / dt;
    if (batches_rate_ <= 0.0) {
      images_rate_ = images_now;
      batches_rate_ = batches_now;
    } else {
      // Weight by elapsed time so the average means the same whatever the batch cadence.
      const double w = 1.0 - std::exp(-dt / options_.smoothing_s);
      images_rate_ += w * (images_now - images_rate_);
      batches_rate_ += w * (batches_now - batches_rate_);
    }
    pending_images_ = pending_batches_ = 0;
    last_update_ = t;
  }
  draw(t);
}

double ProgressBar::eta_s() const {
  if (batches_ <= 0 || batches_rate_ <= 0.0) return -1.0;
  const int64_t left = batches_ > done_ ? batches_ - done_ : 0;
  return static_cast<double>(left) / batches_rate_;
}

std::string ProgressBar::line() const {
  std::string s = epochs_ > 0 ? fmt::format("epoch {}/{}", epoch_, epochs_) : fmt::format("epoch {}", epoch_);
  if (batches_ > 0) {
    const int width = options_.bar_width;
    const auto filled = static_cast<int>(std::min<int64_t>(width, done_ * width / batches_));
    std::string bar(static_cast<size_t>(filled), '=');
    if (filled < width) bar += '>';
    bar.resize(static_cast<size_t>(width), ' ');
    s += fmt::format(" [{}] {:>{}}/{} batches", bar, done_, digits(batches_), batches_);
  } else {
    s += fmt::format(" {} batches", done_);
  }
  s += fmt::format("  {} {}/s  loss {:.4f}  lr {:.1e}", rate_text(images_rate_), options_.unit, loss_, lr_);
  if (!status_.empty()) s += "  " + status_;
  if (data_share_ >= 0.0) s += fmt::format("  data {:.0f}%", 100.0 * data_share_);
  if (batches_ > 0) {
    s += "  ETA ";
    s += format_duration(eta_s());
  }
  return s + memory_text();
}

std::string ProgressBar::memory_text() const {
  if (memory_ == nullptr) return {};
  const MemoryStats m = memory_->stats();
  return fmt::format("  mem {}/{} MiB", mib_text(m.allocated), mib_text(m.peak_allocated));
}

void ProgressBar::draw(double t) {
  const bool last = batches_ > 0 && done_ >= batches_;
  if (tty_) {
    if (!last && t - last_draw_ < options_.tty_min_interval_s) return;
    out_ << kClearLine << line() << std::flush;
    on_screen_ = true;
  } else {
    if (last) return;  // finish_epoch() prints the epoch's final line
    int64_t every = options_.plain_every_batches;
    if (every <= 0 && batches_ > 0) every = (batches_ + 9) / 10;
    const bool by_count = every > 0 && done_ / every > last_drawn_batch_ / every;
    const bool by_time = t - last_draw_ >= options_.plain_every_s;
    if (!by_count && !by_time) return;
    out_ << line() << "\n" << std::flush;
  }
  last_draw_ = t;
  last_drawn_batch_ = done_;
}

void ProgressBar::finish_epoch(std::string_view extra) {
  if (!active_) return;
  const double elapsed = now() - epoch_start_;
  const double images_per_s = elapsed > 0.0 ? static_cast<double>(images_total_) / elapsed : 0.0;
  std::string s = epochs_ > 0 ? fmt::format("epoch {}/{}", epoch_, epochs_) : fmt::format("epoch {}", epoch_);
  const bool stopped = batches_ > 0 && done_ < batches_;
  s += stopped ? " stopped" : " done";
  s += batches_ > 0 ? fmt::format(" {}/{} batches", done_, batches_) : fmt::format(" {} batches", done_);
  s += fmt::format(" in {}  {} {}/s  loss {:.4f}  lr {:.1e}", format_duration(elapsed), rate_text(images_per_s),
                   options_.unit, loss_, lr_);
  if (!status_.empty()) s += "  " + status_;
  if (data_share_ >= 0.0) s += fmt::format("  data {:.0f}%", 100.0 * data_share_);
  s += memory_text();
  s += extra;
  if (tty_) out_ << kClearLine;
  out_ << s << "\n" << std::flush;
  on_screen_ = false;
  active_ = false;
}

void ProgressBar::message(std::string_view text) {
  if (tty_ && on_screen_) out_ << kClearLine;
  out_ << text << "\n";
  if (tty_ && active_) {
    out_ << line();
    on_screen_ = true;
  }
  out_ << std::flush;
}

}  // namespace ingot::train
