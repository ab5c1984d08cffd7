// The whole nn API in one include: Module, the layers, presets and the YAML model builder.
#pragma once

#include "ingot/nn/activation.h"
#include "ingot/nn/basic_block.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/dropout.h"
#include "ingot/nn/embedding.h"
#include "ingot/nn/flatten.h"
#include "ingot/nn/fusion.h"
#include "ingot/nn/init.h"
#include "ingot/nn/layer_norm.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/model_builder.h"
#include "ingot/nn/module.h"
#include "ingot/nn/pooling.h"
#include "ingot/nn/presets.h"
#include "ingot/nn/sequential.h"
