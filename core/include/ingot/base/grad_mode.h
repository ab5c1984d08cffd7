// Grad mode: whether ops record the autograd graph on this thread (torch.no_grad / enable_grad).
// On the ground floor: dispatch, ops and copies below autograd read it too.
#pragma once

namespace ingot {

/// Thread-local switch read by every op before recording.
class GradMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// Turns recording off for its scope (torch.no_grad()); restores the previous mode on exit.
class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

/// Turns recording on for its scope (torch.enable_grad()).
class EnableGradGuard {
 public:
  EnableGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(true); }
  ~EnableGradGuard() { GradMode::set_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ingot
