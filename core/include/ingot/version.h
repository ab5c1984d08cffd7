// Ingot's version, and the C++ ABI tag that an extension plugin (C++ against the installed core)
// must share with the core it loads into. CMake checks that the version equals the project's.
#pragma once

#define INGOT_VERSION_MAJOR 0
#define INGOT_VERSION_MINOR 1
#define INGOT_VERSION_PATCH 0
#define INGOT_VERSION_STRING "0.1.0"

// Extensions exchange std::string, std::function and exceptions with core: they need the same
// standard library and, for libstdc++, the same string ABI (as PyTorch's C++ extensions).
#if defined(_LIBCPP_VERSION)
#define INGOT_CXX_ABI_TAG "libc++"
#elif defined(__GLIBCXX__) && defined(_GLIBCXX_USE_CXX11_ABI) && _GLIBCXX_USE_CXX11_ABI
#define INGOT_CXX_ABI_TAG "libstdc++/cxx11"
#elif defined(__GLIBCXX__)
#define INGOT_CXX_ABI_TAG "libstdc++/pre-cxx11"
#else
#define INGOT_CXX_ABI_TAG "unknown"
#endif
