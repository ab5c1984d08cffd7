// ProgressBar: one line per epoch with batches, smoothed images/s, loss, lr, ETA and memory —
// redrawn in place on a terminal, plain lines every N batches / ~10 s otherwise (readable CI logs).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace ingot::train {

class MemoryWatch;

struct ProgressOptions {
  int bar_width = 20;               ///< characters between the brackets
  double tty_min_interval_s = 0.1;  ///< a terminal is redrawn at most this often (~10 times/s)
  int64_t plain_every_batches = 0;  ///< plain mode: a line every N batches; 0 = about 10 per epoch
  double plain_every_s = 10.0;      ///< plain mode: also a line when this long passed since the last
  double smoothing_s = 2.0;         ///< time constant of the images/s and batches/s averages
  std::string unit = "img";         ///< what the rate counts: "img" (img/s) or "samples" (table rows, arrays)
};

/// Seconds on a monotonic clock; tests pass a fake one.
using ProgressClock = std::function<double()>;

/// True when `stream` is a terminal that understands "\r" and ANSI clear (isatty, TERM != dumb).
bool is_terminal(FILE* stream);

/// Formats seconds as "m:ss" or "h:mm:ss" ("--:--" when unknown: negative, NaN or infinite).
std::string format_duration(double seconds);

/// Usage: start_epoch(), update() after every batch, finish_epoch() at the end (also after an
/// interrupted epoch). Throughput is an exponential moving average weighted by elapsed time, so
/// a slow first batch (plan creation, warm-up) fades out within a few `smoothing_s`.
/// ETA = remaining batches / smoothed batches per second.
class ProgressBar {
 public:
  /// `tty` = redraw in place; pass is_terminal(stdout) for std::cout. `clock` defaults to steady_clock.
  ProgressBar(std::ostream& out, bool tty, ProgressOptions options = {}, ProgressClock clock = {});

  /// `epoch` is 1-based; `batches` = 0 when the epoch length is unknown (no bar, no ETA).
  void start_epoch(int64_t epoch, int64_t epochs, int64_t batches);
  /// `batches_done` counts the batches finished in this epoch (1 after the first); `images` is the
  /// size of the batch just finished; `loss` what to show (e.g. a running mean).
  void update(int64_t batches_done, int64_t images, double loss, double lr);
  /// Ends the epoch's line: "epoch 3/10 done 469/469 batches in 1:23  5120 img/s  loss ... lr ..."
  /// (img/s, or ProgressOptions::unit per second, averaged over the epoch), "  mem A/P MiB" when watching memory (P:
  /// the epoch's peak), then `extra` (e.g. "  val acc 91.2%").
  void finish_epoch(std::string_view extra = {});
  /// Prints a whole line without mangling the bar (clears it, prints, redraws on a terminal).
  void message(std::string_view line);
  /// Ends every line with "  mem A/P MiB": `watch`'s allocated and peak on the model's device;
  /// start_epoch() restarts the peak (MemoryWatch::begin_epoch). nullptr (the default): no memory.
  void watch_memory(MemoryWatch* watch) { memory_ = watch; }
  /// Text shown after the lr on every line until changed, e.g. the loss scale of mixed precision
  /// ("scale 32768 (2 skipped)"); empty: nothing.
  void set_status(std::string text) { status_ = std::move(text); }
  /// The share of the epoch's time spent waiting for batches, shown as "data N%" (< 0: hidden).
  void set_data_share(double share) { data_share_ = share; }

  /// Smoothed images/s and batches/s (0 before the first update; carried over from the previous
  /// epoch), and the ETA in seconds (-1 when unknown).
  double images_per_s() const { return images_rate_; }
  double batches_per_s() const { return batches_rate_; }
  double eta_s() const;
  /// The current line without "\r" or escapes (also what a plain line contains).
  std::string line() const;

 private:
  double now() const;
  void draw(double t);
  std::string memory_text() const;

  std::ostream& out_;
  bool tty_;
  ProgressOptions options_;
  ProgressClock clock_;

  int64_t epoch_ = 0, epochs_ = 0, batches_ = 0;
  int64_t done_ = 0, images_total_ = 0;
  double loss_ = 0.0, lr_ = 0.0;
  std::string status_;
  double data_share_ = -1.0;
  double epoch_start_ = 0.0, last_update_ = 0.0, last_draw_ = -1e300;
  int64_t last_drawn_batch_ = 0;
  double images_rate_ = 0.0, batches_rate_ = 0.0;
  int64_t pending_images_ = 0, pending_batches_ = 0;  // finished since the clock last moved
  bool active_ = false;                               // between start_epoch and finish_epoch
  bool on_screen_ = false;                            // a terminal line is drawn and not yet ended with "\n"
  MemoryWatch* memory_ = nullptr;
};

}  // namespace ingot::train
