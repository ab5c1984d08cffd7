// NcclLibrary: opens libnccl with dlopen, resolves its entry points and checks its version; the
// process-wide instance tries $INGOT_NCCL_LIBRARY, the loader's search, then the build's library.
#include "nccl_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "ingot/plugin/sdk.h"

namespace ingot::nccl {

namespace {

using sdk::Failure;

constexpr const char* kSoname = "libnccl.so.2";

// What to do when no NCCL could be opened, appended to every such message.
constexpr const char* kAdvice =
    "install NCCL 2.14 or newer (e.g. the CUDA toolkit's or PyTorch's nvidia-nccl), add its folder to "
    "LD_LIBRARY_PATH, or set INGOT_NCCL_LIBRARY to the libnccl.so.2 file";

std::string loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0')
    return map->l_name;
  return fallback;
}

// dlsym answers an object pointer; copying its bits avoids a cast that ISO C++ leaves conditional.
template <class Fn>
bool resolve(void* handle, const char* name, Fn& fn) {
  void* sym = dlsym(handle, name);
  if (sym == nullptr) return false;
  static_assert(sizeof(sym) == sizeof(fn), "function and data pointers differ in size");
  std::memcpy(&fn, &sym, sizeof(fn));
  return true;
}

}  // namespace

std::string version_string(int code) {
  const bool old_code = code < 10000;  // NCCL_VERSION(X, Y, Z) switched encodings after 2.8
  const int major = old_code ? code / 1000 : code / 10000;
  const int minor = old_code ? code % 1000 / 100 : code % 10000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

NcclLibrary NcclLibrary::open(const std::string& file) {
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    throw Failure(INGOT_ERR_UNSUPPORTED, file + " cannot be loaded (" + (err != nullptr ? err : "no dlerror") + ")");
  }
  NcclLibrary lib;
  lib.path = loaded_path(handle, file);
  std::string missing;
#define INGOT_NCCL_RESOLVE(fn) \
  if (!resolve(handle, #fn, lib.fn)) missing += (missing.empty() ? "" : ", ") + std::string(#fn);
  INGOT_NCCL_ENTRIES(INGOT_NCCL_RESOLVE)
#undef INGOT_NCCL_RESOLVE
  int version = 0;
  if (lib.ncclGetVersion != nullptr && lib.ncclGetVersion(&version) == ncclSuccess) lib.version = version;
  if (lib.version > 0 && lib.version < kMinVersion) {
    dlclose(handle);
    throw Failure(INGOT_ERR_UNSUPPORTED, lib.path + " is NCCL " + version_string(lib.version) + "; this plugin needs " +
                                             version_string(kMinVersion) + " or newer (non-blocking communicators)");
  }
  if (!missing.empty() || lib.version == 0) {
    dlclose(handle);
    throw Failure(INGOT_ERR_UNSUPPORTED,
                  lib.path + " is not a usable NCCL (" +
                      (missing.empty() ? std::string("ncclGetVersion failed") : "missing " + missing) + ")");
  }
  return lib;  // the handle stays open: the plugin calls into NCCL until the process ends
}

const NcclLibrary& NcclLibrary::instance() {
  struct Loaded {
    std::optional<NcclLibrary> lib;
    std::string error;
  };
  static const Loaded loaded = [] {
    Loaded out;
    std::vector<std::string> candidates;
    const char* env = std::getenv("INGOT_NCCL_LIBRARY");
    if (env != nullptr && env[0] != '\0') {
      candidates.emplace_back(env);
    } else {
      candidates.emplace_back(kSoname);
#ifdef INGOT_NCCL_BUILD_LIBRARY
      candidates.emplace_back(INGOT_NCCL_BUILD_LIBRARY);
#endif
    }
    std::string tried;
    for (const std::string& file : candidates) {
      try {
        out.lib = open(file);
        return out;
      } catch (const Failure& e) {
        tried += (tried.empty() ? "" : "; ") + std::string(e.what());
      }
    }
    out.error = "NCCL unavailable: " + tried + " (" + kAdvice + ")";
    return out;
  }();
  if (!loaded.lib) throw Failure(INGOT_ERR_UNSUPPORTED, loaded.error);
  return *loaded.lib;
}

}  // namespace ingot::nccl
