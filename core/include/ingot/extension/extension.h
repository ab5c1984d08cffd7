// What an extension plugin includes: a shared library built against the installed core (C++,
// find_package(Ingot)) that adds layers, losses, optimizers, stages or trainer callbacks. It
// exports two functions; INGOT_EXTENSION writes the first:
//
//   INGOT_EXTENSION("my_ext", "1.0.0", "what it adds")
//   extern "C" INGOT_EXTENSION_EXPORT void ingot_extension_register(ingot::Registry& registry) {
//     registry.losses.add({"my_loss", schema, factory, "one line"});
//   }
//
// The loader checks the core version and C++ ABI tag the extension was built with before it calls
// ingot_extension_register; an exception thrown there is reported, and the extension is skipped.
#pragma once

#include <cstdint>

#include "ingot/extension/registry.h"
#include "ingot/version.h"

#define INGOT_EXTENSION_EXPORT __attribute__((visibility("default")))

extern "C" {
/// What an extension says about itself (all strings static).
struct ingot_extension_info {
  uint32_t struct_size;
  const char* name;
  const char* version;
  const char* description;
  const char* core_version;  ///< INGOT_VERSION_STRING it was built against
  const char* cxx_abi;       ///< INGOT_CXX_ABI_TAG it was built with
};
typedef void (*ingot_extension_query_fn)(ingot_extension_info* info);
typedef void (*ingot_extension_register_fn)(ingot::Registry& registry);
}

#define INGOT_EXTENSION_QUERY_SYMBOL "ingot_extension_query"
#define INGOT_EXTENSION_REGISTER_SYMBOL "ingot_extension_register"

/// Defines ingot_extension_query with the name, version and description given and the core
/// version and ABI tag of the headers it is compiled against.
#define INGOT_EXTENSION(NAME, VERSION, DESCRIPTION)                                               \
  extern "C" INGOT_EXTENSION_EXPORT void ingot_extension_query(ingot_extension_info* info) {      \
    info->struct_size = sizeof(ingot_extension_info);                                             \
    info->name = NAME;                                                                            \
    info->version = VERSION;                                                                      \
    info->description = DESCRIPTION;                                                              \
    info->core_version = INGOT_VERSION_STRING;                                                    \
    info->cxx_abi = INGOT_CXX_ABI_TAG;                                                            \
  }
