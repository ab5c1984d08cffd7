// RunDir: the folder runs/<name>/ of one pipeline run — created, refused, resumed or replaced
// (never silently overwritten) — and the paths of what lives in it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::train {

/// Create: the folder must not exist. Resume: it must exist and hold a checkpoint.
/// Force: an existing folder is renamed aside to "<name>.old-YYYYMMDD-HHMMSS" (UTC; "-2", "-3"...
/// appended if taken) and a fresh one created — nothing is deleted, so a mistaken --force loses no data.
enum class RunDirMode { Create, Resume, Force };

/// Maps the CLI flags; throws ConfigError when both are given.
RunDirMode run_dir_mode(bool resume, bool force);

/// Layout:
///   <base>/<name>/config.resolved.yaml   the resolved config (reproduces the run)
///   <base>/<name>/metrics.jsonl          MetricsLog
///   <base>/<name>/summary.json           final summary
///   <base>/<name>/checkpoints/epoch-003.* , step-00001234.*   one checkpoint = the files sharing a stem
///   <base>/<name>/checkpoints/latest     one line: the stem of the newest complete checkpoint
class RunDir {
 public:
  /// Opens the run folder per `mode`. `name` must be a plain folder name (letters, digits, '-',
  /// '_', '.', not starting with '.'): ConfigError otherwise. Refusals are InputError with one line
  /// saying what to pass, e.g. "runs/foo already exists: pass --resume to continue it or --force
  /// to replace it". `base` is created if missing. The folder is locked for as long as the RunDir
  /// (or a copy) lives: a second open of a folder in use, --force included, is refused (exit 2)
  /// naming the process that holds it; the kernel drops the lock when that process dies.
  static RunDir open(const std::string& name, RunDirMode mode, const std::filesystem::path& base = "runs");
  /// An existing run folder to read (its config and checkpoints, e.g. a distillation teacher's):
  /// no lock is taken and nothing is created or moved.
  static RunDir view(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  RunDirMode mode() const { return mode_; }
  /// With Force: where the previous folder was moved to (nullopt when there was none).
  const std::optional<std::filesystem::path>& moved_aside() const { return moved_aside_; }

  std::filesystem::path config_path() const { return path_ / "config.resolved.yaml"; }
  std::filesystem::path metrics_path() const { return path_ / "metrics.jsonl"; }
  std::filesystem::path summary_path() const { return path_ / "summary.json"; }
  std::filesystem::path checkpoints_dir() const { return path_ / "checkpoints"; }
  std::filesystem::path latest_pointer_path() const { return checkpoints_dir() / "latest"; }
  /// checkpoints/epoch-NNN (no extension: the caller appends ".safetensors", ".json", ...).
  std::filesystem::path epoch_checkpoint(int64_t epoch) const;
  /// checkpoints/step-NNNNNNNN, for a checkpoint taken mid-epoch (Ctrl-C, SIGTERM).
  std::filesystem::path step_checkpoint(int64_t step) const;
  /// checkpoints/best: the best epoch on the validation split so far (never resumed from).
  std::filesystem::path best_checkpoint() const { return checkpoints_dir() / "best"; }

  /// Records `stem` (a path returned by epoch_checkpoint / step_checkpoint) as the newest
  /// checkpoint, atomically. Call it only after every file of that checkpoint is durable: the
  /// pointer is what makes a checkpoint count.
  void set_latest_checkpoint(const std::filesystem::path& stem) const;
  /// The stem named by checkpoints/latest, or nullopt when there is no pointer. Throws
  /// InputError when the pointer is malformed or names files that do not exist.
  std::optional<std::filesystem::path> latest_checkpoint() const;

  /// Every checkpoint stem with a .safetensors file, newest first (by modification time): where a
  /// resume looks when the one `latest` names is missing or damaged.
  std::vector<std::filesystem::path> checkpoint_stems() const;
  /// The checkpoint stems in the order a resume tries them: the one checkpoints/latest names, then
  /// every other newest first. A malformed or dangling pointer is left out and its reason, when
  /// `problem` is given, written there (empty when there was none).
  std::vector<std::filesystem::path> checkpoints_to_try(std::string* problem = nullptr) const;
  /// Deletes the checkpoints of one kind ("step" or "epoch", the stem's prefix) but the newest
  /// `keep` (0 keeps all); the one checkpoints/latest names is never deleted. Returns the stems
  /// deleted.
  std::vector<std::filesystem::path> remove_old_checkpoints(std::string_view kind, int64_t keep) const;
  /// Deletes the copies --force moved aside ("<name>.old-YYYYMMDD-HHMMSS[-N]" beside the folder)
  /// but the newest `keep` (0 keeps all); a copy that a process holds is left alone. Returns the
  /// folders deleted.
  std::vector<std::filesystem::path> remove_old_copies(int64_t keep) const;

  /// Writes config.resolved.yaml (YAML::Emitter of `resolved`) atomically.
  void write_config(const YAML::Node& resolved) const;
  /// Writes summary.json atomically; `json` is the whole document.
  void write_summary(std::string_view json) const;

 private:
  RunDir(std::filesystem::path path, RunDirMode mode) : path_(std::move(path)), mode_(mode) {}
  std::filesystem::path path_;
  RunDirMode mode_;
  std::optional<std::filesystem::path> moved_aside_;
  std::shared_ptr<int> lock_;  ///< the flock on <run>/.lock, released with the last copy
};

}  // namespace ingot::train
