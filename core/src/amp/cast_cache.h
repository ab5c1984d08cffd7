// The weight-cast cache of autocast regions: per thread, the weights registered by the
// outermost AutocastRegion and their low-precision casts. Private to core.
#pragma once

#include <vector>

#include "ingot/tensor/tensor.h"

namespace ingot::amp::detail {

/// Opens a region level on this thread, registering `weights` as cacheable.
void cache_enter(const std::vector<Tensor>& weights);
/// Closes a level; the outermost one drops every cached cast.
void cache_leave();
/// `t` cast to `dtype`: from the cache when t is a registered weight or a view of one (made and
/// stored on first use), else a plain cast. When `t` needs grad the result is recorded as a cast
/// of `t`, so its gradient reaches the f32 weight.
Tensor cast_for_autocast(const Tensor& t, DType dtype);

}  // namespace ingot::amp::detail
