// OnnxGraph: nodes, initializers and value shapes of an ONNX graph, serialized with the field
// numbers of onnx.proto (ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto,
// ValueInfoProto, TypeProto.Tensor, TensorShapeProto).
#include "ingot/io/onnx_graph.h"

#include <fmt/format.h>

#include "ingot/base/error.h"
#include "ingot/io/protobuf_wire.h"

namespace ingot::io::onnx {
namespace {

// AttributeProto: name, f, i, s, floats, ints, type; AttributeType values.
constexpr uint32_t kAttrName = 1, kAttrF = 2, kAttrI = 3, kAttrS = 4, kAttrFloats = 7, kAttrInts = 8, kAttrType = 20;
constexpr int64_t kTypeFloat = 1, kTypeInt = 2, kTypeString = 3, kTypeFloats = 6, kTypeInts = 7;
// NodeProto: input, output, name, op_type, attribute, domain.
constexpr uint32_t kNodeInput = 1, kNodeOutput = 2, kNodeName = 3, kNodeOpType = 4, kNodeAttribute = 5, kNodeDomain = 7;
// TensorProto: dims, data_type, name, raw_data; TensorProto.DataType values.
constexpr uint32_t kTensorDims = 1, kTensorDataType = 2, kTensorName = 8, kTensorRawData = 9;
constexpr int64_t kFloat = 1, kUint8 = 2, kInt8 = 3, kInt32 = 6, kInt64 = 7;
// GraphProto: node, name, initializer, input, output. ValueInfoProto: name, type. TypeProto:
// tensor_type; TypeProto.Tensor: elem_type, shape; TensorShapeProto: dim; Dimension: value, param.
constexpr uint32_t kGraphNode = 1, kGraphName = 2, kGraphInitializer = 5, kGraphInput = 11, kGraphOutput = 12;
constexpr uint32_t kValueName = 1, kValueType = 2, kTypeTensor = 1, kTensorElemType = 1, kTensorShape = 2;
constexpr uint32_t kShapeDim = 1, kDimValue = 1, kDimParam = 2;
// ModelProto: ir_version, producer_name, producer_version, graph, opset_import, metadata_props;
// OperatorSetIdProto: domain, version; StringStringEntryProto: key, value.
constexpr uint32_t kModelIrVersion = 1, kModelProducerName = 2, kModelProducerVersion = 3, kModelGraph = 7,
                   kModelOpset = 8, kModelMetadata = 14;
constexpr uint32_t kOpsetVersion = 2, kEntryKey = 1, kEntryValue = 2;

int64_t onnx_type(DType t) {
  switch (t) {
    case DType::F32:
      return kFloat;
    case DType::U8:
      return kUint8;
    case DType::I8:
      return kInt8;
    case DType::I32:
      return kInt32;
    case DType::I64:
      return kInt64;
    default:
      break;
  }
  throw DTypeError(
      fmt::format("ONNX export: tensors of dtype {} are not exported (f32, u8, i8, i32, i64 are)", dtype_name(t)));
}

template <class T>
std::string_view bytes_as(const Tensor& c) {
  return {reinterpret_cast<const char*>(c.data<T>()), static_cast<size_t>(c.numel()) * sizeof(T)};
}

// The bytes of a contiguous host tensor of an exported dtype.
std::string_view raw_bytes(const Tensor& c) {
  switch (c.dtype()) {
    case DType::U8:
      return bytes_as<uint8_t>(c);
    case DType::I8:
      return bytes_as<int8_t>(c);
    case DType::I32:
      return bytes_as<int32_t>(c);
    case DType::I64:
      return bytes_as<int64_t>(c);
    default:
      return bytes_as<float>(c);
  }
}

std::string attribute_proto(const Attribute& a) {
  ProtoWriter w;
  w.put_bytes(kAttrName, a.name);
  switch (a.kind) {
    case Attribute::Kind::Int:
      w.put_int64(kAttrI, a.i);
      w.put_int64(kAttrType, kTypeInt);
      break;
    case Attribute::Kind::Float:
      w.put_float(kAttrF, a.f);
      w.put_int64(kAttrType, kTypeFloat);
      break;
    case Attribute::Kind::String:
      w.put_bytes(kAttrS, a.s);
      w.put_int64(kAttrType, kTypeString);
      break;
    case Attribute::Kind::Ints:
      for (int64_t v : a.ints) w.put_int64(kAttrInts, v);
      w.put_int64(kAttrType, kTypeInts);
      break;
    case Attribute::Kind::Floats:
      for (float v : a.floats) w.put_float(kAttrFloats, v);
      w.put_int64(kAttrType, kTypeFloats);
      break;
  }
  return w.bytes();
}

// A ValueInfoProto of a tensor whose dims named in `params` are symbolic, the others fixed.
std::string value_info(const std::string& name, DType dtype, const Shape& shape,
                       const std::vector<std::string>& params) {
  ProtoWriter dims;
  for (int i = 0; i < shape.size(); ++i) {
    ProtoWriter d;
    if (i < static_cast<int>(params.size()) && !params[i].empty())
      d.put_bytes(kDimParam, params[i]);
    else
      d.put_int64(kDimValue, shape[i]);
    dims.put_message(kShapeDim, d);
  }
  ProtoWriter tensor;
  tensor.put_int64(kTensorElemType, onnx_type(dtype));
  tensor.put_message(kTensorShape, dims);
  ProtoWriter type;
  type.put_message(kTypeTensor, tensor);
  ProtoWriter v;
  v.put_bytes(kValueName, name);
  v.put_message(kValueType, type);
  return v.bytes();
}

}  // namespace

Attribute attr(const std::string& name, int64_t v) {
  Attribute a{name, Attribute::Kind::Int};
  a.i = v;
  return a;
}
Attribute attr(const std::string& name, float v) {
  Attribute a{name, Attribute::Kind::Float};
  a.f = v;
  return a;
}
Attribute attr(const std::string& name, const std::string& v) {
  Attribute a{name, Attribute::Kind::String};
  a.s = v;
  return a;
}
Attribute attr(const std::string& name, std::vector<int64_t> v) {
  Attribute a{name, Attribute::Kind::Ints};
  a.ints = std::move(v);
  return a;
}
Attribute attr_floats(const std::string& name, std::vector<float> v) {
  Attribute a{name, Attribute::Kind::Floats};
  a.floats = std::move(v);
  return a;
}

std::string OnnxGraph::fresh(const std::string& hint) {
  const std::string base = hint.empty() ? "v" : hint;
  if (used_.count(base) == 0) {
    used_[base] = 1;
    return base;
  }
  for (int& n = used_[base];; ++n) {
    const std::string name = fmt::format("{}_{}", base, n);
    if (used_.count(name) == 0) {
      used_[name] = 1;
      return name;
    }
  }
}

std::string OnnxGraph::node(const std::string& op_type, const std::vector<std::string>& inputs,
                            const std::vector<Attribute>& attributes, const std::string& hint,
                            std::vector<std::string> outputs, const std::string& domain) {
  if (outputs.empty()) outputs.push_back(fresh(hint.empty() ? op_type : hint));
  ProtoWriter w;
  for (const std::string& in : inputs) w.put_bytes(kNodeInput, in);
  for (const std::string& out : outputs) w.put_bytes(kNodeOutput, out);
  w.put_bytes(kNodeName, fmt::format("{}_{}", op_type, node_counter_++));
  w.put_bytes(kNodeOpType, op_type);
  for (const Attribute& a : attributes) w.put_bytes(kNodeAttribute, attribute_proto(a));
  if (!domain.empty()) w.put_bytes(kNodeDomain, domain);
  nodes_.push_back(w.bytes());
  return outputs.front();
}

std::string OnnxGraph::initializer(const std::string& name, const Tensor& t) {
  INGOT_CHECK(used_.count(name) == 0, "ONNX export: the initializer name '{}' is used twice", name);
  used_[name] = 1;
  return add_initializer(name, t);
}

std::string OnnxGraph::add_initializer(const std::string& name, const Tensor& t) {
  const int64_t type = onnx_type(t.dtype());
  const Tensor c = t.detach().to(Device::cpu()).strided().contiguous();
  ProtoWriter w;
  for (int64_t d : c.shape()) w.put_int64(kTensorDims, d);
  w.put_int64(kTensorDataType, type);
  w.put_bytes(kTensorName, name);
  // raw_data is little-endian, as the host is (Ingot's tensors are stored in host byte order).
  w.put_bytes(kTensorRawData, raw_bytes(c));
  initializers_.push_back(w.bytes());
  shapes_[name] = c.shape();
  dtypes_[name] = c.dtype();
  return name;
}

std::string OnnxGraph::constant_i64(const std::string& hint, const std::vector<int64_t>& values) {
  return add_initializer(fresh(hint), Tensor::from_vector(values, Shape{static_cast<int64_t>(values.size())}));
}

std::string OnnxGraph::constant_f32(const std::string& hint, const std::vector<float>& values, const Shape& shape) {
  return add_initializer(fresh(hint), Tensor::from_vector(values, shape));
}

std::string OnnxGraph::constant(const std::string& hint, const Tensor& t) { return add_initializer(fresh(hint), t); }

DType OnnxGraph::dtype(const std::string& value) const {
  auto it = dtypes_.find(value);
  return it == dtypes_.end() ? DType::F32 : it->second;
}

const std::vector<std::string>& OnnxGraph::dim_names(const std::string& value) const {
  static const std::vector<std::string> batch{"N"};
  auto it = dim_names_.find(value);
  return it == dim_names_.end() ? batch : it->second;
}

const Shape& OnnxGraph::shape(const std::string& value) const {
  auto it = shapes_.find(value);
  INGOT_CHECK(it != shapes_.end(), "ONNX export: value '{}' has no known shape (an exporter must set it)", value);
  return it->second;
}

std::string OnnxGraph::graph_proto(const std::string& name, const std::string& input, const std::string& output) const {
  ProtoWriter g;
  for (const std::string& n : nodes_) g.put_bytes(kGraphNode, n);
  g.put_bytes(kGraphName, name);
  for (const std::string& t : initializers_) g.put_bytes(kGraphInitializer, t);
  g.put_bytes(kGraphInput, value_info(input, dtype(input), shape(input), dim_names(input)));
  g.put_bytes(kGraphOutput, value_info(output, dtype(output), shape(output), dim_names(output)));
  return g.bytes();
}

std::string model_proto(const std::string& graph_proto, int64_t opset, const std::string& producer_version,
                        const std::vector<std::pair<std::string, std::string>>& metadata) {
  ProtoWriter m;
  m.put_int64(kModelIrVersion, kIrVersion);
  m.put_bytes(kModelProducerName, "ingot");
  m.put_bytes(kModelProducerVersion, producer_version);
  m.put_bytes(kModelGraph, graph_proto);
  ProtoWriter op;
  op.put_int64(kOpsetVersion, opset);  // domain "" (the default, ai.onnx) is left out
  m.put_message(kModelOpset, op);
  for (const auto& [key, value] : metadata) {
    ProtoWriter e;
    e.put_bytes(kEntryKey, key);
    e.put_bytes(kEntryValue, value);
    m.put_message(kModelMetadata, e);
  }
  return m.bytes();
}

}  // namespace ingot::io::onnx
