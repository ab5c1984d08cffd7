// Pinned (page-locked) host memory from an accelerator's backend, and asynchronous copies from and
// to it: what lets a DataLoader overlap the next batch's host -> device copy with compute.
#pragma once

#include "ingot/tensor/tensor.h"

namespace ingot {

class Stream;

/// Whether the backend of accelerator `accel` offers pinned host memory (device table entries).
bool pinned_memory_available(Device accel);

/// Uninitialised contiguous host tensor (device cpu) in pinned memory of `accel`'s backend.
/// Freeing it waits for the device's queued work (it may still be a copy's source).
Tensor empty_pinned(const Shape& shape, DType dtype, Device accel);
/// A copy of host tensor `t` in pinned memory of `accel`'s backend.
Tensor pin_memory(const Tensor& t, Device accel);
/// Whether `t`'s storage is pinned host memory made by empty_pinned / pin_memory.
bool is_pinned(const Tensor& t);

/// Copies `src` between the host and an accelerator on the device's compute stream without
/// waiting (host -> device or device -> host; one of the two is the CPU). Later ops on the device
/// see the data; the host side (src when copying to the device, the result when copying to the
/// host) must not be touched before synchronize(device) or an Event recorded after it has
/// completed. Pinned host memory makes it truly asynchronous; pageable memory may block. Uses the
/// synchronous copy when the backend has no copy_async. Not recorded by autograd. With `stream`
/// (a side stream of the accelerator) the copy runs there: record an Event on it and wait() for
/// that event before the compute stream uses the result.
Tensor to_async(const Tensor& src, Device device, const Stream* stream = nullptr);

}  // namespace ingot
