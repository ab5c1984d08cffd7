// The process's malloc policy for the ingot command (an application's choice, not the library's).
#pragma once

namespace ingot::cli {

/// Keeps glibc from handing memory back and forth with the kernel on every image: the loader's
/// workers allocate and free buffers of a few hundred KiB to a few MiB per image, which by
/// default are trimmed from the heap and faulted back in (zeroed pages) each time: 40% of the
/// streamed loader's profile. Serves blocks below 32 MiB from the heap and keeps up to 64 MiB free at
/// a heap's top. Tensors are not concerned (their own caching allocator holds them). Left alone when
/// GLIBC_TUNABLES or a MALLOC_*_ variable already sets a malloc policy.
void tune_malloc();

}  // namespace ingot::cli
