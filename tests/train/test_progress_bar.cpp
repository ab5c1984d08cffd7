// ProgressBar: exact plain and terminal output on a fake clock, throttling, rate smoothing, ETA.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "ingot/train/progress_bar.h"

using ingot::train::format_duration;
using ingot::train::ProgressBar;
using ingot::train::ProgressOptions;

namespace {

const std::string kClear = "\r\x1b[2K";  // carriage return + ANSI erase line

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("format_duration", "[train][progress]") {
  CHECK(format_duration(0) == "0:00");
  CHECK(format_duration(12.4) == "0:12");
  CHECK(format_duration(75) == "1:15");
  CHECK(format_duration(3725) == "1:02:05");
  CHECK(format_duration(-1) == "--:--");
  CHECK(format_duration(std::numeric_limits<double>::quiet_NaN()) == "--:--");
  CHECK(format_duration(std::numeric_limits<double>::infinity()) == "--:--");
}

TEST_CASE("plain mode: a line every N batches, then the epoch's final line", "[train][progress]") {
  // Times are multiples of 1/8 s so every rate and ETA below is exact.
  double t = 0.0;
  std::ostringstream out;
  ProgressOptions opt;
  opt.plain_every_batches = 5;
  ProgressBar bar(out, /*tty=*/false, opt, [&] { return t; });
  bar.start_epoch(3, 10, 20);
  for (int i = 1; i <= 20; ++i) {
    t += 0.125;
    bar.update(i, 64, 0.5, 1e-3);
  }
  bar.finish_epoch("  val acc 90.0%");
  const std::string text = out.str();
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.find('\x1b') == std::string::npos);
  const auto lines = lines_of(text);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "epoch 3/10 [=====>              ]  5/20 batches  512 img/s  loss 0.5000  lr 1.0e-03  ETA 0:02");
  CHECK(lines[1] == "epoch 3/10 [==========>         ] 10/20 batches  512 img/s  loss 0.5000  lr 1.0e-03  ETA 0:01");
  CHECK(lines[2] == "epoch 3/10 [===============>    ] 15/20 batches  512 img/s  loss 0.5000  lr 1.0e-03  ETA 0:01");
  CHECK(lines[3] == "epoch 3/10 done 20/20 batches in 0:03  512 img/s  loss 0.5000  lr 1.0e-03  val acc 90.0%");
}

TEST_CASE("plain mode: about ten lines per epoch by default, and a line every ~10 s", "[train][progress]") {
  double t = 0.0;
  std::ostringstream out;
  ProgressBar bar(out, false, {}, [&] { return t; });
  bar.start_epoch(1, 1, 20);
  for (int i = 1; i <= 20; ++i) {
    t += 0.125;
    bar.update(i, 8, 1.0, 0.1);
  }
  bar.finish_epoch();
  CHECK(lines_of(out.str()).size() == 10);  // batches 2, 4, ..., 18, then the final line

  std::ostringstream slow;
  ProgressOptions opt;
  opt.plain_every_batches = 1000;
  ProgressBar by_time(slow, false, opt, [&] { return t; });
  t = 0.0;
  by_time.start_epoch(1, 1, 10);
  for (int i = 1; i <= 10; ++i) {
    t += 3.0;
    by_time.update(i, 8, 1.0, 0.1);
  }
  by_time.finish_epoch();
  const auto lines = lines_of(slow.str());
  REQUIRE(lines.size() == 3);  // at 12 s (batch 4) and 24 s (batch 8), then the final line
  CHECK(lines[0].find(" 4/10 batches") != std::string::npos);
  CHECK(lines[1].find(" 8/10 batches") != std::string::npos);
}

TEST_CASE("terminal mode: redrawn in place at most ~10 times per second", "[train][progress]") {
  double t = 0.0;
  std::ostringstream out;
  ProgressBar bar(out, /*tty=*/true, {}, [&] { return t; });
  bar.start_epoch(2, 5, 100);
  for (int i = 1; i <= 100; ++i) {
    t += 1.0 / 128;
    bar.update(i, 32, 0.25, 3e-4);
  }
  const std::string drawn = out.str();
  // A redraw once 0.1 s passed: batches 13, 26, ..., 91 (7), plus the last batch always.
  CHECK(occurrences(drawn, kClear) == 8);
  CHECK(drawn.find('\n') == std::string::npos);
  CHECK(drawn.substr(drawn.rfind(kClear) + kClear.size()) ==
        "epoch 2/5 [====================] 100/100 batches  4096 img/s  loss 0.2500  lr 3.0e-04  ETA 0:00");

  bar.finish_epoch();
  const std::string text = out.str();
  CHECK(occurrences(text, kClear) == 9);
  CHECK(text.substr(text.rfind(kClear) + kClear.size()) ==
        "epoch 2/5 done 100/100 batches in 0:01  4096 img/s  loss 0.2500  lr 3.0e-04\n");
}

TEST_CASE("terminal mode: a message clears the bar and redraws it", "[train][progress]") {
  double t = 0.0;
  std::ostringstream out;
  ProgressBar bar(out, true, {}, [&] { return t; });
  bar.start_epoch(1, 1, 4);
  t = 1.0;
  bar.update(1, 10, 2.0, 0.1);
  out.str("");
  bar.message("ingot: warn: something");
  CHECK(out.str() == kClear + "ingot: warn: something\n" + bar.line());
}

TEST_CASE("rates are time-weighted moving averages, ETA = batches left / batches per second", "[train][progress]") {
  double t = 0.0;
  std::ostringstream out;
  ProgressOptions opt;
  opt.smoothing_s = 2.0;
  ProgressBar bar(out, false, opt, [&] { return t; });
  bar.start_epoch(1, 1, 1000);
  CHECK(bar.eta_s() == -1.0);
  CHECK(bar.images_per_s() == 0.0);

  // Two batches finish on the same clock tick: they count once the clock moves.
  bar.update(1, 10, 1.0, 0.1);
  bar.update(2, 10, 1.0, 0.1);
  CHECK(bar.batches_per_s() == 0.0);
  t = 0.5;
  bar.update(3, 10, 1.0, 0.1);
  CHECK(bar.batches_per_s() == 6.0);
  CHECK(bar.images_per_s() == 60.0);
  CHECK(bar.eta_s() == (1000.0 - 3.0) / 6.0);

  // Speeding up to 16 batches/s: one step moves the average by 1 - exp(-dt / 2).
  t += 0.0625;
  bar.update(4, 10, 1.0, 0.1);
  const double w = 1.0 - std::exp(-0.0625 / 2.0);
  CHECK(bar.batches_per_s() == Approx(6.0 + w * (16.0 - 6.0)).epsilon(1e-12));
  int64_t done = 4;
  while (t < 40.0) {
    t += 0.0625;
    bar.update(++done, 10, 1.0, 0.1);
  }
  REQUIRE(done < 1000);
  CHECK(bar.batches_per_s() == Approx(16.0).epsilon(1e-6));
  CHECK(bar.images_per_s() == Approx(160.0).epsilon(1e-6));
  CHECK(bar.eta_s() == Approx(static_cast<double>(1000 - done) / 16.0).epsilon(1e-6));
}

TEST_CASE("unknown epoch length, epochs and an interrupted epoch", "[train][progress]") {
  double t = 0.0;
  std::ostringstream out;
  ProgressBar bar(out, false, {}, [&] { return t; });
  bar.start_epoch(4, 0, 0);
  t = 1.0;
  bar.update(7, 70, 0.125, 0.01);
  CHECK(bar.line() == "epoch 4 7 batches  70 img/s  loss 0.1250  lr 1.0e-02");
  bar.finish_epoch();

  bar.start_epoch(5, 9, 100);
  t = 2.0;
  bar.update(40, 80, 0.5, 0.01);
  bar.finish_epoch();
  CHECK(lines_of(out.str()).back() == "epoch 5/9 stopped 40/100 batches in 0:01  80 img/s  loss 0.5000  lr 1.0e-02");
}

TEST_CASE("the rate names what it counts: samples of a table, images of an image set", "[train][progress]") {
  double t = 0.0;
  std::ostringstream out;
  ProgressOptions opt;
  opt.unit = "samples";
  ProgressBar bar(out, false, opt, [&] { return t; });
  bar.start_epoch(1, 1, 0);
  t = 1.0;
  bar.update(3, 96, 0.25, 0.01);
  CHECK(bar.line() == "epoch 1/1 3 batches  96 samples/s  loss 0.2500  lr 1.0e-02");
  bar.finish_epoch();
  CHECK(lines_of(out.str()).back() == "epoch 1/1 done 3 batches in 0:01  96 samples/s  loss 0.2500  lr 1.0e-02");
}

TEST_CASE("a status (the loss scale) follows the lr on every line until changed", "[train][progress]") {
  double t = 0.0;
  std::ostringstream out;
  ProgressOptions opt;
  opt.plain_every_batches = 2;
  ProgressBar bar(out, /*tty=*/false, opt, [&] { return t; });
  bar.start_epoch(1, 1, 4);
  bar.set_status("scale 65536");
  for (int i = 1; i <= 4; ++i) {
    t += 0.125;
    if (i == 3) bar.set_status("scale 32768 (1 skipped)");
    bar.update(i, 64, 0.5, 1e-3);
  }
  bar.finish_epoch();
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "epoch 1/1 [==========>         ] 2/4 batches  512 img/s  loss 0.5000  lr 1.0e-03  scale 65536  ETA 0:00");
  CHECK(lines[1] == "epoch 1/1 done 4/4 batches in 0:01  512 img/s  loss 0.5000  lr 1.0e-03  scale 32768 (1 skipped)");
}
