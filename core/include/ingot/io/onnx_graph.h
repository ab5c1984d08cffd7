// OnnxGraph: an ONNX GraphProto under construction — nodes, initializers (weights as raw_data
// under their state_dict names) and the shape of every value — and the ModelProto around it.
// Module exporters (io/onnx_export.h) add nodes to it; nothing here knows a layer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ingot/nn/module.h"
#include "ingot/tensor/tensor.h"

namespace ingot::io::onnx {

/// The ONNX IR version and default-domain opset that Ingot writes.
inline constexpr int64_t kIrVersion = 8;
inline constexpr int64_t kOpset = 17;

/// One node attribute (AttributeProto): an int, a float, a string, or lists of ints or floats.
struct Attribute {
  enum class Kind { Int, Float, String, Ints, Floats };
  std::string name;
  Kind kind = Kind::Int;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
};
Attribute attr(const std::string& name, int64_t v);
Attribute attr(const std::string& name, float v);
Attribute attr(const std::string& name, const std::string& v);
Attribute attr(const std::string& name, std::vector<int64_t> v);
Attribute attr_floats(const std::string& name, std::vector<float> v);

/// The graph being exported. Values are named strings; the shape of each module's output is kept
/// (computed for batch 1: exporters read spatial sizes from it), while the graph's input and
/// output declare dim 0 as the symbolic batch "N" — and any other dim given a name with
/// set_dim_names (a sequence length "T"), whose recorded size is then the largest it takes.
class OnnxGraph {
 public:
  /// Exports module `m` (at dotted `path`, "" for the model) applied to value `input` with the
  /// exporter registered for m.type_name(); returns its output value, whose shape is recorded.
  /// Throws InputError "layer 'path' (Type) has no ONNX exporter ..." when none is registered.
  std::string module(const nn::Module& m, const std::string& path, const std::string& input);

  /// Adds a node; returns its first output. `outputs` empty: one fresh output named after `hint`
  /// (or op_type). Node names are unique (op_type plus a counter).
  std::string node(const std::string& op_type, const std::vector<std::string>& inputs,
                   const std::vector<Attribute>& attributes = {}, const std::string& hint = "",
                   std::vector<std::string> outputs = {}, const std::string& domain = "");
  /// Adds `t` (f32, u8, i8, i32 or i64; copied to the host, contiguous) as an initializer named
  /// `name` (a state_dict name) and returns the name; a name given twice is an error.
  std::string initializer(const std::string& name, const Tensor& t);
  /// An i64 [n] / f32 `shape` constant initializer named after `hint` (made unique).
  std::string constant_i64(const std::string& hint, const std::vector<int64_t>& values);
  std::string constant_f32(const std::string& hint, const std::vector<float>& values, const Shape& shape);
  /// `t` (any exported dtype and shape, a 0-d scalar included) as a constant named after `hint`.
  std::string constant(const std::string& hint, const Tensor& t);
  /// A value name not used yet: `hint` itself, else `hint`_1, `hint`_2, ...
  std::string fresh(const std::string& hint);

  /// Shape of `value` for batch 1 (set by module(), or by an exporter with set_shape).
  const Shape& shape(const std::string& value) const;
  void set_shape(const std::string& value, const Shape& shape) { shapes_[value] = shape; }
  bool has_shape(const std::string& value) const { return shapes_.count(value) != 0; }
  /// Element type of `value` as far as exporters need it (the graph input's; default f32).
  DType dtype(const std::string& value) const;
  void set_dtype(const std::string& value, DType dtype) { dtypes_[value] = dtype; }
  /// The symbolic names of `value`'s dims, "" for a fixed one; default {"N"} (the batch). What
  /// the graph's input and output declare: an exporter whose output keeps a dynamic dim names it.
  const std::vector<std::string>& dim_names(const std::string& value) const;
  void set_dim_names(const std::string& value, std::vector<std::string> names) { dim_names_[value] = std::move(names); }

  /// The serialized GraphProto with input `input` and output `output`, each with its dtype,
  /// shape and symbolic dims.
  std::string graph_proto(const std::string& name, const std::string& input, const std::string& output) const;
  /// Nodes and initializers added so far.
  size_t node_count() const { return nodes_.size(); }
  size_t initializer_count() const { return initializers_.size(); }

 private:
  /// Adds an initializer under a name already reserved.
  std::string add_initializer(const std::string& name, const Tensor& t);

  std::vector<std::string> nodes_;         ///< serialized NodeProtos
  std::vector<std::string> initializers_;  ///< serialized TensorProtos
  std::map<std::string, Shape> shapes_;
  std::map<std::string, DType> dtypes_;
  std::map<std::string, std::vector<std::string>> dim_names_;
  std::map<std::string, int> used_;  ///< value and initializer names -> how often a hint was used
  int node_counter_ = 0;
};

/// The serialized ModelProto: ir_version 8, the default-domain opset `opset`, producer "ingot"
/// `producer_version`, the graph, metadata_props in the order given.
std::string model_proto(const std::string& graph_proto, int64_t opset, const std::string& producer_version,
                        const std::vector<std::pair<std::string, std::string>>& metadata);

}  // namespace ingot::io::onnx
