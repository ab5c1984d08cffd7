// RunDir: the create / resume / force rules for runs/<name>/, the latest-checkpoint pointer, and
// the resolved config and summary written atomically (io::atomic_write).
#include "ingot/train/run_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"
#include "ingot/config/yaml_text.h"
#include "ingot/io/atomic_write.h"

namespace fs = std::filesystem;

namespace ingot::train {
namespace {

void check_name(const std::string& name) {
  bool ok = !name.empty() && name.front() != '.' && name.size() <= 200;
  for (char c : name) {
    const bool plain =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    ok = ok && plain;
  }
  INGOT_CHECK_AS(ok, ConfigError,
                 "run name '{}': use letters, digits, '-', '_' and '.' (not first), so that it is one folder name",
                 name);
}

// "<name>.old-YYYYMMDD-HHMMSS" in UTC, with "-2", "-3"... when a name is taken.
fs::path aside_name(const fs::path& dir) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &utc);
  const fs::path first = dir.parent_path() / fmt::format("{}.old-{}", dir.filename().string(), stamp);
  fs::path candidate = first;
  for (int i = 2; fs::exists(fs::symlink_status(candidate)); ++i) candidate = fmt::format("{}-{}", first.string(), i);
  return candidate;
}

/// An advisory flock on DIR/.lock, held for the process's life of the RunDir and released by the
/// kernel when the process dies (a SIGKILL included): a second run on the same folder is refused.
/// The lock file holds the owner's process id, for the message.
std::shared_ptr<int> lock_folder(const fs::path& dir, const std::string& shown) {
  // flock is per open file: this process would refuse itself. Its own runs share the lock instead.
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<int>> held;
  std::lock_guard<std::mutex> guard(mu);
  std::error_code ec;
  const std::string key = fs::weakly_canonical(dir, ec).string();
  if (auto mine = held[key].lock()) return mine;
  const fs::path file = dir / ".lock";
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  INGOT_CHECK_AS(fd >= 0, InputError, "{}: cannot open the run's lock file {}: {}", shown, file.string(),
                 std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    const std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("?");
    throw InputError(
        fmt::format("{} is in use by process {} (it holds {}): wait for that run to end or stop it, "
                    "then try again",
                    shown, pid.substr(0, pid.find_first_of("\n")), file.string()));
  }
  // The id is only for the message of a refused run: the lock holds whether or not it is written.
  const std::string me = std::to_string(::getpid()) + "\n";
  const bool id_written =
      ::ftruncate(fd, 0) == 0 && ::pwrite(fd, me.data(), me.size(), 0) == static_cast<ssize_t>(me.size());
  (void)id_written;
  std::shared_ptr<int> lock(new int(fd), [](int* p) {
    ::close(*p);  // releases the lock
    delete p;
  });
  held[key] = lock;
  return lock;
}

/// Removes what interrupted atomic writes left behind (NAME.tmp-*), in the folder and its checkpoints.
void remove_stale_temps(const fs::path& dir) {
  std::error_code ec;
  for (const fs::path& d : {dir, dir / "checkpoints"})
    for (const auto& entry : fs::directory_iterator(d, ec))
      if (entry.path().filename().string().find(".tmp-") != std::string::npos) fs::remove(entry.path(), ec);
}

bool valid_stem(const std::string& stem) {
  if (stem.empty() || stem.front() == '.') return false;
  return std::all_of(stem.begin(), stem.end(), [](char c) { return c > ' ' && c < 0x7f && c != '/'; });
}

}  // namespace

RunDirMode run_dir_mode(bool resume, bool force) {
  INGOT_CHECK_AS(!(resume && force), ConfigError,
                 "--resume and --force exclude each other: --resume continues a run, --force starts it over");
  return resume ? RunDirMode::Resume : force ? RunDirMode::Force : RunDirMode::Create;
}

RunDir RunDir::open(const std::string& name, RunDirMode mode, const fs::path& base) {
  check_name(name);
  const fs::path dir = base / name;
  const std::string shown = dir.string();
  const bool exists = fs::exists(fs::symlink_status(dir));

  if (mode == RunDirMode::Resume) {
    INGOT_CHECK_AS(exists, InputError,
                   "{} does not exist: there is nothing to resume; run without --resume to start it", shown);
    INGOT_CHECK_AS(fs::is_directory(dir), InputError,
                   "{} is not a folder: move it away or pass --force instead of --resume", shown);
    RunDir run(dir, mode);
    run.lock_ = lock_folder(dir, shown);
    remove_stale_temps(dir);  // only now: a run that holds the lock may be writing them
    // A missing or damaged `latest` is no reason to refuse while older checkpoints are there:
    // the pipeline resumes from the newest one that verifies.
    INGOT_CHECK_AS(
        !run.checkpoint_stems().empty(), InputError,
        "{} has no checkpoint to resume from (no checkpoints/*.safetensors): pass --force instead of --resume to "
        "start over",
        shown);
    return run;
  }

  INGOT_CHECK_AS(!exists || mode == RunDirMode::Force, InputError,
                 "{} already exists: pass --resume to continue it or --force to replace it", shown);
  std::error_code ec;
  fs::create_directories(base, ec);
  INGOT_CHECK_AS(!ec, InputError, "{}: cannot create the runs folder: {}", base.string(), ec.message());
  RunDir run(dir, mode);
  if (exists) {
    // Never move a folder that a running process writes into: it would go on writing there.
    const std::shared_ptr<int> old_lock = fs::is_directory(dir) ? lock_folder(dir, shown) : nullptr;
    const fs::path aside = aside_name(dir);
    fs::rename(dir, aside, ec);
    INGOT_CHECK_AS(!ec, InputError, "{}: cannot move the old run aside to {}: {}", shown, aside.string(), ec.message());
    run.moved_aside_ = aside;
  }
  // create_directory reports false when someone else created it meanwhile: refuse rather than share.
  const bool created = fs::create_directory(dir, ec);
  INGOT_CHECK_AS(!ec, InputError, "{}: cannot create the run folder: {}", shown, ec.message());
  INGOT_CHECK_AS(created, InputError, "{} already exists: pass --resume to continue it or --force to replace it",
                 shown);
  run.lock_ = lock_folder(dir, shown);
  fs::create_directory(run.checkpoints_dir(), ec);
  INGOT_CHECK_AS(!ec, InputError, "{}: cannot create: {}", run.checkpoints_dir().string(), ec.message());
  return run;
}

fs::path RunDir::epoch_checkpoint(int64_t epoch) const { return checkpoints_dir() / fmt::format("epoch-{:03}", epoch); }

fs::path RunDir::step_checkpoint(int64_t step) const { return checkpoints_dir() / fmt::format("step-{:08}", step); }

void RunDir::set_latest_checkpoint(const fs::path& stem) const {
  const std::string name = stem.filename().string();
  INGOT_CHECK(valid_stem(name) && stem.parent_path() == checkpoints_dir(),
              "set_latest_checkpoint: {} is not a checkpoint stem inside {}", stem.string(),
              checkpoints_dir().string());
  io::atomic_write(latest_pointer_path(), name + "\n");
}

std::optional<fs::path> RunDir::latest_checkpoint() const {
  const fs::path pointer = latest_pointer_path();
  if (!fs::exists(fs::symlink_status(pointer))) return std::nullopt;
  // (a FIFO or device here is refused, not waited on; the pointer is one short line)
  const std::string text = read_file(pointer, 4096, "a checkpoint pointer");
  const std::string stem = text.substr(0, text.find('\n'));
  INGOT_CHECK_AS(valid_stem(stem), InputError,
                 "{}: expected one line naming a checkpoint (e.g. epoch-003), got '{}'; fix or delete it",
                 pointer.string(), printable(stem));
  const std::string prefix = stem + ".";
  for (const auto& entry : fs::directory_iterator(checkpoints_dir())) {
    const std::string file = entry.path().filename().string();
    if (file.compare(0, prefix.size(), prefix) == 0 && file.find(".tmp-") == std::string::npos) {
      return checkpoints_dir() / stem;
    }
  }
  throw InputError(fmt::format("{} names checkpoint '{}' but no {}.* file is in {}", pointer.string(), stem, stem,
                               checkpoints_dir().string()));
}

RunDir RunDir::view(const fs::path& path) { return RunDir(path, RunDirMode::Resume); }

std::vector<fs::path> RunDir::checkpoints_to_try(std::string* problem) const {
  std::vector<fs::path> stems;
  if (problem != nullptr) problem->clear();
  try {
    if (const auto latest = latest_checkpoint()) stems.push_back(*latest);
  } catch (const InputError& e) {
    if (problem != nullptr) *problem = e.what();
  }
  for (auto& stem : checkpoint_stems())
    if (std::find(stems.begin(), stems.end(), stem) == stems.end()) stems.push_back(std::move(stem));
  return stems;
}

std::vector<fs::path> RunDir::checkpoint_stems() const {
  std::vector<std::pair<fs::file_time_type, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoints_dir(), ec)) {
    const fs::path p = entry.path();
    if (p.extension() != ".safetensors" || !entry.is_regular_file(ec)) continue;
    const std::string name = p.filename().string();
    if (name.find(".tmp-") != std::string::npos) continue;
    if (name.rfind("epoch-", 0) != 0 && name.rfind("step-", 0) != 0) continue;  // (best: not a resume point)
    found.emplace_back(entry.last_write_time(ec), checkpoints_dir() / p.stem());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<fs::path> out;
  for (auto& [time, stem] : found) out.push_back(std::move(stem));
  return out;
}

std::vector<fs::path> RunDir::remove_old_checkpoints(std::string_view kind, int64_t keep) const {
  std::vector<fs::path> removed;
  if (keep <= 0) return removed;
  // epoch-NNN and step-NNNNNNNN are zero-padded: the name order is the age order.
  const std::string prefix = std::string(kind) + "-";
  std::vector<std::string> stems;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoints_dir(), ec)) {
    const fs::path& p = entry.path();
    const std::string name = p.filename().string();
    if (name.rfind(prefix, 0) == 0 && p.extension() == ".safetensors" && name.find(".tmp-") == std::string::npos)
      stems.push_back(p.stem().string());
  }
  std::sort(stems.begin(), stems.end());
  std::string latest;
  try {
    if (const auto l = latest_checkpoint()) latest = l->filename().string();
  } catch (const InputError&) {
    // A damaged pointer protects nothing: the count alone decides.
  }
  for (size_t i = 0; i + static_cast<size_t>(keep) < stems.size(); ++i) {
    if (stems[i] == latest) continue;
    const fs::path file = checkpoints_dir() / (stems[i] + ".safetensors");
    if (fs::remove(file, ec)) removed.push_back(checkpoints_dir() / stems[i]);
  }
  return removed;
}

namespace {

/// (stamp, n) of a copy named "<name>.old-YYYYMMDD-HHMMSS[-n]", for ordering; nullopt for any
/// other name.
std::optional<std::pair<std::string, int>> copy_age(const std::string& file, const std::string& name) {
  const std::string prefix = name + ".old-";
  if (file.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string rest = file.substr(prefix.size());
  const auto digits = [](std::string_view v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (rest.size() < 15 || rest[8] != '-' || !digits(rest.substr(0, 8)) || !digits(rest.substr(9, 6)))
    return std::nullopt;
  if (rest.size() == 15) return std::make_pair(rest, 1);
  if (rest[15] != '-' || !digits(rest.substr(16)) || rest.size() > 24) return std::nullopt;
  return std::make_pair(rest.substr(0, 15), std::stoi(rest.substr(16)));
}

}  // namespace

std::vector<fs::path> RunDir::remove_old_copies(int64_t keep) const {
  std::vector<fs::path> removed;
  if (keep <= 0) return removed;
  const std::string name = path_.filename().string();
  std::vector<std::pair<std::pair<std::string, int>, fs::path>> copies;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(path_.parent_path(), ec)) {
    if (!entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    if (auto age = copy_age(entry.path().filename().string(), name)) copies.emplace_back(*age, entry.path());
  }
  std::sort(copies.begin(), copies.end());
  for (size_t i = 0; i + static_cast<size_t>(keep) < copies.size(); ++i) {
    const fs::path& dir = copies[i].second;
    try {
      const std::shared_ptr<int> held = lock_folder(dir, dir.string());  // never under a running process
      fs::remove_all(dir, ec);
      if (!ec) removed.push_back(dir);
    } catch (const InputError&) {
      // In use (or unreadable): it stays.
    }
  }
  return removed;
}

void RunDir::write_config(const YAML::Node& resolved) const {
  io::atomic_write(config_path(), config::emit_yaml(resolved) + "\n");
}

void RunDir::write_summary(std::string_view json) const { io::atomic_write(summary_path(), json); }

}  // namespace ingot::train
