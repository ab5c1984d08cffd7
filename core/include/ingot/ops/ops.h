// The whole functional op API in one include.
#pragma once

#include "ingot/ops/attention.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/cross_entropy.h"
#include "ingot/ops/dropout.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/indexing.h"
#include "ingot/ops/linalg.h"
#include "ingot/ops/multi_tensor.h"
#include "ingot/ops/norm.h"
#include "ingot/ops/pool.h"
#include "ingot/ops/quantize.h"
#include "ingot/ops/random.h"
#include "ingot/ops/reduce.h"
