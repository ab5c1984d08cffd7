// The ABI's fixed points: struct layouts (static_asserts of abi_layout.h, compiled here), the op
// family column, dtype names, and the SDK trampolines (exceptions become statuses, device indices
// are checked).
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "ingot/plugin/abi_layout.h"
#include "ingot/plugin/sdk.h"
#include "ingot/runtime/op_info.h"
#include "ingot/tensor/dtype.h"

namespace {

std::string message_of(ingot_status* s) {
  REQUIRE(s != nullptr);
  std::string m = s->message;
  s->release(s);
  return m;
}

TEST_CASE("abi: every op of the table has a family, and numbers outside it have none", "[plugins][abi]") {
  for (int op = 0; op < INGOT_OP_COUNT; ++op) {
    INFO(ingot::op_info(static_cast<ingot::OpKind>(op)).name);
    const ingot_op_family f = ingot_op_family_of(op);
    CHECK(f > INGOT_FAMILY_UNKNOWN);
    CHECK(f < INGOT_FAMILY_COUNT);
    CHECK(ingot::op_info(static_cast<ingot::OpKind>(op)).family == f);
  }
  CHECK(ingot_op_family_of(-1) == INGOT_FAMILY_UNKNOWN);
  CHECK(ingot_op_family_of(INGOT_OP_COUNT) == INGOT_FAMILY_UNKNOWN);
  CHECK(ingot_op_family_of(INGOT_OP_RELU_BWD) == INGOT_FAMILY_ELEMENTWISE_BINARY);
  CHECK(ingot_op_family_of(INGOT_OP_ARGMAX) == INGOT_FAMILY_REDUCTION);
  CHECK(ingot_op_family_of(INGOT_OP_DROPOUT) == INGOT_FAMILY_RANDOM);
  CHECK(ingot_op_family_of(INGOT_OP_CONV2D_BWD_WEIGHT) == INGOT_FAMILY_CONV);
}

TEST_CASE("abi: every dtype has one name and one short name, and numbers outside have none", "[plugins][abi]") {
  // core's dtype_name, the reference backend, gloo_ddp and nccl_ddp all word dtypes through it
  const char* const names[] = {"float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool"};
  const char* const shorts[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64", "bool"};
  for (int32_t d = 0; d < INGOT_DTYPE_COUNT; ++d) {
    CHECK(std::string(ingot_dtype_name(d, 0)) == names[d]);
    CHECK(std::string(ingot_dtype_name(d, 1)) == shorts[d]);
    CHECK(ingot::dtype_name(static_cast<ingot::DType>(d)) == names[d]);
    CHECK(ingot::dtype_from_name(shorts[d]) == static_cast<ingot::DType>(d));
  }
  CHECK(ingot_dtype_name(-1, 0) == nullptr);
  CHECK(ingot_dtype_name(INGOT_DTYPE_COUNT, 1) == nullptr);
  CHECK(ingot::sdk::dtype_label(INGOT_BF16) == "bfloat16");
  CHECK(ingot::sdk::dtype_label(INGOT_BF16, true) == "bf16");
  CHECK(ingot::sdk::dtype_label(42) == "dtype 42");
}

TEST_CASE("abi: the layout is frozen for 64-bit targets", "[plugins][abi]") {
  // The static_asserts of abi_layout.h already ran; these spot checks document the sizes.
  CHECK(sizeof(ingot_tensor_desc) == 192);
  CHECK(sizeof(ingot_backend) == 40);
  CHECK(sizeof(ingot_device_table) == 192);
  CHECK(offsetof(ingot_device_table, stream_wait_event) == 176);
  CHECK(offsetof(ingot_device_table, memory_info) == 184);  // appended by minor 1
  CHECK(offsetof(ingot_device_table, device_count) == 24);
  CHECK(INGOT_ABI_MAJOR == 2);
}

class Throwing final : public ingot::sdk::ComputeImpl {
 public:
  bool supports(const ingot::sdk::OpCall&) override { throw std::runtime_error("supports threw"); }
  void execute(const ingot::sdk::OpCall& call, const ingot_exec_context&) override {
    throw ingot::sdk::Failure(INGOT_ERR_UNSUPPORTED,
                              "op " + std::to_string(call.op) + " on device " + std::to_string(call.device_index()));
  }
};

TEST_CASE("sdk: a host backend has one device, no memory entries, and trampolines that catch", "[plugins][abi]") {
  // static: backend tables live for the process (sdk.h).
  static const ingot_backend* const b = ingot::sdk::make_host_backend(new Throwing(), "throwing", 5);
  REQUIRE(b->struct_size == sizeof(ingot_backend));
  CHECK(std::string(b->name) == "throwing");
  CHECK(b->priority == 5);
  const ingot_device_table& d = *b->device;
  CHECK(d.device_kind == INGOT_DEVICE_CPU);
  CHECK(d.device_count(d.self) == 1);
  CHECK(d.alloc == nullptr);
  CHECK(d.free == nullptr);
  CHECK(d.copy == nullptr);
  CHECK(d.memory_stats == nullptr);
  CHECK(d.event_create == nullptr);

  const ingot_compute_table& c = *b->compute;
  ingot_tensor_desc out{};
  out.device_index = 3;
  CHECK(c.supports(c.self, INGOT_OP_ADD, nullptr, 0, &out, 1, nullptr) == 0);
  ingot_exec_context ctx{};
  CHECK(message_of(c.execute(c.self, INGOT_OP_ADD, nullptr, 0, &out, 1, nullptr, &ctx)) ==
        "op " + std::to_string(INGOT_OP_ADD) + " on device 3");
}

class TwoDevices final : public ingot::sdk::DeviceImpl {
 public:
  int32_t device_count() override { return 2; }
  void* alloc(int32_t device, size_t) override { return &blocks_[device]; }
  void free(int32_t, void*) override {}
  void copy(int32_t, void*, int32_t, const void*, int32_t, size_t, const ingot_exec_context*, bool) override {
    throw std::runtime_error("copy failed");
  }

 private:
  int blocks_[2] = {0, 0};
};

TEST_CASE("sdk: device entries check the index and leave what is not offered NULL", "[plugins][abi]") {
  auto* impl = new TwoDevices();
  const ingot_device_table t = ingot::sdk::make_device_table(impl, INGOT_DEVICE_CUDA);
  CHECK(t.device_count(t.self) == 2);
  void* p0 = nullptr;
  void* p1 = nullptr;
  CHECK(t.alloc(t.self, 0, 4, &p0) == nullptr);
  CHECK(t.alloc(t.self, 1, 4, &p1) == nullptr);
  CHECK(p0 != p1);
  void* p2 = nullptr;
  CHECK(message_of(t.alloc(t.self, 2, 4, &p2)) == "no device 2 (this backend serves 2)");
  CHECK(message_of(t.copy(t.self, 0, nullptr, 0, nullptr, 1, 0, nullptr)) == "copy failed");
  CHECK(t.copy_async == nullptr);
  CHECK(t.host_alloc_pinned == nullptr);
  CHECK(t.synchronize == nullptr);
  CHECK(t.event_create == nullptr);
  CHECK(t.memory_stats == nullptr);
  delete impl;
}

}  // namespace
