// The nccl_ddp plugin. [host] cases run everywhere: the dtype and reduction tables, opening NCCL
// (and its version, printed for scripts/gpu-check), INGOT_COMM_TIMEOUT_S, the plugin's probe. [gpu]
// cases run the "nccl" communicator through core on one GPU (world 1: every collective, dtype and
// size, on the cuda backend's stream and with none); [multi-gpu] cases run two ranks as threads of
// this process, one GPU each (real reductions, send / recv). Skipped without the GPUs they need.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "checks.h"
#include "comm_timeout.h"
#include "cuda_plugin_path.h"
#include "ingot/base/error.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/communicator.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/kv_store.h"
#include "ingot/runtime/plugin_loader.h"
#include "nccl_library.h"
#include "nccl_types.h"
#include "test_support.h"

namespace ingot {
namespace {

using Catch::Contains;
using nccl::NcclLibrary;

const std::vector<DType> kDTypes = {DType::F32, DType::F64, DType::F16, DType::BF16,
                                    DType::I32, DType::I64, DType::U8,  DType::I8};
const std::vector<int64_t> kSizes = {1, 1000, int64_t{1} << 24};  // 1 << 24 f32 = 64 MiB

Device gpu(int index) { return Device{DeviceKind::CUDA, index}; }

std::string nccl_plugin_file() {
  const char* env = std::getenv("INGOT_NCCL_DDP_PLUGIN_FILE");
  return env != nullptr && env[0] != '\0' ? env : INGOT_NCCL_DDP_PLUGIN_FILE;
}

const PluginRecord& nccl_record() {
  static const PluginRecord rec = [] {
    if (const PluginRecord* r = PluginLoader::instance().find("nccl_ddp")) return *r;
    return PluginLoader::instance().load_file(nccl_plugin_file());
  }();
  return rec;
}

// True when the "nccl" communicator can run on `gpus` GPUs; otherwise reports the test skipped.
bool nccl_ready(int gpus) {
  if (!test::gpu_ready()) return false;
  const PluginRecord& rec = nccl_record();
  if (!rec.available) {
    test::skip("nccl_ddp unavailable: " + rec.reason);
    return false;
  }
  const int visible = device_backend(gpu(0)).device_count();
  if (visible < gpus) {
    test::skip(fmt::format("needs {} GPUs, {} visible", gpus, visible));
    return false;
  }
  return true;
}

// Rank r's data, m elements: ((7 i + 3 r) mod 11) + r + 1, in 1 .. 13 (exact in every dtype; sums
// and averages of two ranks too).
Tensor host_data(int rank, int64_t m) {
  std::vector<double> v(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) v[static_cast<size_t>(i)] = static_cast<double>((7 * i + 3 * rank) % 11 + rank + 1);
  return Tensor::from_vector(v, Shape{m});
}

// Elements where got differs from want (want in f64), counted on the device.
int64_t mismatches(const Tensor& got, const Tensor& want) {
  const Tensor n = sum(ne(got.to(DType::F64), want).to(DType::F64));
  return static_cast<int64_t>(n.to(Device::cpu()).to_vector<double>().front());
}

// The reduction over ranks of xs (f64), as NCCL computes it for dtype dt.
Tensor reduce_all(const std::vector<Tensor>& xs, ReduceOp op, DType dt) {
  Tensor acc = xs.front();
  for (size_t r = 1; r < xs.size(); ++r) {
    acc = op == ReduceOp::Max ? maximum(acc, xs[r]) : op == ReduceOp::Min ? minimum(acc, xs[r]) : add(acc, xs[r]);
  }
  if (op != ReduceOp::Avg) return acc;
  acc = div(acc, static_cast<double>(xs.size()));
  return is_floating(dt) ? acc : floor(acc);  // integers truncate (all values are positive)
}

// Every collective on `comm` for dtype dt and n elements per rank, checked against the inputs of
// all ranks, recomputed on this rank's device. Outputs start at 0, which no input holds.
void check_collectives(const Communicator& comm, DType dt, int64_t n) {
  const int world = comm.world_size(), rank = comm.rank();
  const Device dev = comm.device();
  INFO("dtype " << dtype_name(dt) << ", " << n << " elements, rank " << rank << " of " << world);
  std::vector<Tensor> inputs, wide;  // every rank's: n elements (a prefix), and world x n
  for (int r = 0; r < world; ++r) {
    wide.push_back(host_data(r, world * n).to(dt).to(dev));
    inputs.push_back(wide.back().slice(0, 0, n));
  }
  std::vector<Tensor> inputs64, wide64;
  for (int r = 0; r < world; ++r) {
    inputs64.push_back(inputs[r].to(DType::F64));
    wide64.push_back(wide[r].to(DType::F64));
  }
  const Tensor& mine = inputs[static_cast<size_t>(rank)];

  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min}) {
    INFO("all_reduce op " << static_cast<int>(op));
    const Tensor out = zeros({n}, dt, dev);
    comm.all_reduce(mine, out, op);
    CHECK(mismatches(out, reduce_all(inputs64, op, dt)) == 0);
  }
  const Tensor in_place = mine.clone();
  comm.all_reduce(in_place, ReduceOp::Sum);
  CHECK(mismatches(in_place, reduce_all(inputs64, ReduceOp::Sum, dt)) == 0);

  const int root = world - 1;
  const Tensor bcast = zeros({n}, dt, dev);
  comm.broadcast(mine, bcast, root);
  CHECK(mismatches(bcast, inputs64[static_cast<size_t>(root)]) == 0);

  const Tensor gathered = zeros({world * n}, dt, dev);
  comm.all_gather(mine, gathered);
  for (int r = 0; r < world; ++r) CHECK(mismatches(gathered.slice(0, r * n, (r + 1) * n), inputs64[r]) == 0);

  // reduce_scatter: rank r gets the reduction of every rank's chunk r of its world x n input.
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max}) {
    const Tensor chunk = zeros({n}, dt, dev);
    comm.reduce_scatter(wide[static_cast<size_t>(rank)], chunk, op);
    std::vector<Tensor> chunks;
    for (int r = 0; r < world; ++r) chunks.push_back(wide64[r].slice(0, rank * n, (rank + 1) * n));
    CHECK(mismatches(chunk, reduce_all(chunks, op, dt)) == 0);
  }
  comm.barrier();
}

// Runs body(comm) for ranks 0 .. world - 1 as threads, rank r on GPU r, each on the cuda
// backend's compute stream (the communicator's default) when on_stream, else with no stream (the
// plugin's synchronous path); rethrows the first failure.
void run_ranks(int world, bool on_stream, const std::function<void(Communicator&)>& body) {
  InProcessKvStore store;
  test::run_threads(world, [&](int r) {
    Communicator comm("nccl", r, world, store, gpu(r));
    if (!on_stream) comm.set_stream(nullptr);
    body(comm);
  });
}

// ---- host ---------------------------------------------------------------------------------------

TEST_CASE("nccl_ddp: eight dtypes map onto NCCL's, the rest are refused as unsupported", "[nccl][host]") {
  CHECK(nccl::nccl_dtype(INGOT_F32) == ncclFloat32);
  CHECK(nccl::nccl_dtype(INGOT_F64) == ncclFloat64);
  CHECK(nccl::nccl_dtype(INGOT_F16) == ncclFloat16);
  CHECK(nccl::nccl_dtype(INGOT_BF16) == ncclBfloat16);
  CHECK(nccl::nccl_dtype(INGOT_I32) == ncclInt32);
  CHECK(nccl::nccl_dtype(INGOT_I64) == ncclInt64);
  CHECK(nccl::nccl_dtype(INGOT_U8) == ncclUint8);
  CHECK(nccl::nccl_dtype(INGOT_I8) == ncclInt8);
  for (int32_t bad : {static_cast<int32_t>(INGOT_BOOL), 42}) {
    try {
      (void)nccl::nccl_dtype(bad);
      FAIL("dtype " << bad << " was accepted");
    } catch (const sdk::Failure& e) {
      CHECK(e.code() == INGOT_ERR_UNSUPPORTED);
      CHECK_THAT(e.what(), Contains(bad == INGOT_BOOL ? "dtype bool" : "dtype 42"));
    }
  }
}

TEST_CASE("nccl_ddp: sum, avg, max and min map onto NCCL's reductions", "[nccl][host]") {
  CHECK(nccl::nccl_reduce_op(INGOT_REDUCE_SUM) == ncclSum);
  CHECK(nccl::nccl_reduce_op(INGOT_REDUCE_AVG) == ncclAvg);
  CHECK(nccl::nccl_reduce_op(INGOT_REDUCE_MAX) == ncclMax);
  CHECK(nccl::nccl_reduce_op(INGOT_REDUCE_MIN) == ncclMin);
  try {
    (void)nccl::nccl_reduce_op(7);
    FAIL("reduce op 7 was accepted");
  } catch (const sdk::Failure& e) {
    CHECK(e.code() == INGOT_ERR_INVALID_ARGUMENT);
    CHECK_THAT(e.what(), Contains("unknown reduce op 7"));
  }
}

TEST_CASE("nccl_ddp: NCCL opens at run time and reports its version", "[nccl][host]") {
  const NcclLibrary* lib = nullptr;
  try {
    lib = &NcclLibrary::instance();
  } catch (const sdk::Failure& e) {
    test::skip(e.what());
    return;
  }
  // scripts/gpu-check reads this line.
  std::cout << "nccl_ddp: NCCL " << nccl::version_string(lib->version) << " from " << lib->path << " (built against "
            << nccl::version_string(NCCL_VERSION_CODE) << ")\n";
  CHECK(lib->version >= nccl::kMinVersion);
  CHECK_THAT(lib->path, Contains("libnccl"));
  int version = 0;
  REQUIRE(lib->ncclGetVersion(&version) == ncclSuccess);
  CHECK(version == lib->version);
  CHECK(lib->ncclAllReduce != nullptr);
  CHECK(lib->ncclRecv != nullptr);
  CHECK(lib->ncclCommInitRankConfig != nullptr);
  CHECK(std::string(lib->ncclGetErrorString(ncclInvalidArgument)).size() > 5);
  CHECK(nccl::version_string(22809) == "2.28.9");
  CHECK(nccl::version_string(2708) == "2.7.8");
}

TEST_CASE("nccl_ddp: a file that is missing or not NCCL is refused, naming it", "[nccl][host]") {
  try {
    (void)NcclLibrary::open("/nonexistent/libnccl.so.2");
    FAIL("a missing file opened");
  } catch (const sdk::Failure& e) {
    CHECK(e.code() == INGOT_ERR_UNSUPPORTED);
    CHECK_THAT(e.what(), Contains("/nonexistent/libnccl.so.2 cannot be loaded"));
  }
  try {
    (void)NcclLibrary::open("libm.so.6");  // loadable, but not NCCL
    FAIL("libm opened as NCCL");
  } catch (const sdk::Failure& e) {
    CHECK_THAT(e.what(), Contains("is not a usable NCCL") && Contains("missing ncclGetVersion"));
  }
}

TEST_CASE("nccl_ddp: INGOT_COMM_TIMEOUT_S: 300 s unless set to seconds > 0", "[nccl][host]") {
  using std::chrono::milliseconds;
  CHECK(nccl::comm_timeout(nullptr) == milliseconds(300000));
  CHECK(nccl::comm_timeout("") == milliseconds(300000));
  CHECK(nccl::comm_timeout("2") == milliseconds(2000));
  CHECK(nccl::comm_timeout("0.25") == milliseconds(250));
  CHECK(nccl::seconds_text(milliseconds(250)) == "0.25 s");
  for (const char* bad : {"0", "-1", "5s", "abc", "inf", "1e30"}) {
    INFO(bad);
    try {
      (void)nccl::comm_timeout(bad);
      FAIL("accepted");
    } catch (const sdk::Failure& e) {
      CHECK(e.code() == INGOT_ERR_INVALID_ARGUMENT);
      CHECK_THAT(e.what(), Contains(std::string("INGOT_COMM_TIMEOUT_S='") + bad + "'"));
    }
  }
}

TEST_CASE("nccl_ddp: poll_until returns when ready, false at the timeout, and passes errors on", "[nccl][host]") {
  int calls = 0;
  CHECK(nccl::poll_until([&] { return ++calls == 500; }, std::chrono::milliseconds(60000)));
  CHECK(calls == 500);
  CHECK_FALSE(nccl::poll_until([] { return false; }, std::chrono::milliseconds(20)));
  CHECK_THROWS_WITH(
      nccl::poll_until([]() -> bool { throw std::runtime_error("peer failed"); }, std::chrono::milliseconds(1000)),
      "peer failed");
  CHECK(nccl::one_line("NCCL WARN a\nsecond line\n") == "NCCL WARN a; second line");
}

TEST_CASE("nccl_ddp: the plugin loads everywhere, and its probe says what is missing", "[nccl][host]") {
  const PluginRecord& rec = nccl_record();
  INFO(rec.path << ": " << rec.reason);
  REQUIRE(rec.name == "nccl_ddp");
  CHECK(rec.kinds == INGOT_KIND_COMMUNICATOR);
  if (rec.available) {
    CHECK(rec.communicators == std::vector<std::string>{"nccl"});
    CHECK(test::cuda_record().available);
    return;
  }
  const bool gpu_missing = rec.reason.find("NVIDIA driver") != std::string::npos ||
                           rec.reason.find("no CUDA device") != std::string::npos ||
                           rec.reason.rfind("CUDA unavailable", 0) == 0;
  const bool nccl_missing = rec.reason.rfind("NCCL unavailable", 0) == 0;
  CHECK((gpu_missing || nccl_missing));
  const PluginRecord& cuda = test::cuda_record();
  if (cuda.available) CHECK(nccl_missing);  // with a usable GPU only NCCL can be missing
  if (cuda.reason.rfind("no NVIDIA driver", 0) == 0) CHECK(rec.reason == cuda.reason);
}

// ---- one GPU ------------------------------------------------------------------------------------

TEST_CASE("nccl world 1: every collective, dtype and size on the cuda backend's stream", "[nccl][gpu]") {
  if (!nccl_ready(1)) return;
  run_ranks(1, true, [](Communicator& comm) {
    for (int64_t n : kSizes)
      for (DType dt : kDTypes) check_collectives(comm, dt, n);
  });
}

TEST_CASE("nccl world 1: with no stream set every collective is synchronous and exact", "[nccl][gpu]") {
  if (!nccl_ready(1)) return;
  run_ranks(1, false, [](Communicator& comm) {
    for (DType dt : {DType::F32, DType::BF16, DType::I64}) check_collectives(comm, dt, 1000);
  });
}

TEST_CASE("nccl world 1: bool tensors are refused, naming the dtype, and the communicator stays usable",
          "[nccl][gpu]") {
  if (!nccl_ready(1)) return;
  run_ranks(1, true, [](Communicator& comm) {
    const Tensor flags = zeros({8}, DType::Bool, comm.device());
    REQUIRE_THROWS_AS(comm.all_reduce(flags), PluginError);
    REQUIRE_THROWS_WITH(comm.broadcast(flags, 0), Contains("no NCCL type for dtype bool"));
    check_collectives(comm, DType::F32, 10);
  });
}

TEST_CASE("nccl world 2 with one rank missing: create times out naming INGOT_COMM_TIMEOUT_S", "[nccl][gpu]") {
  if (!nccl_ready(1)) return;
  setenv("INGOT_COMM_TIMEOUT_S", "2", 1);
  InProcessKvStore store;
  // Rank 1 alone: rank 0 never publishes the unique id.
  CHECK_THROWS_AS(Communicator("nccl", 1, 2, store, gpu(0)), TimeoutError);
  // Rank 0 alone: NCCL's bootstrap waits for rank 1 until the timeout aborts it.
  CHECK_THROWS_WITH(Communicator("nccl", 0, 2, store, gpu(0)),
                    Contains("ncclCommInitRankConfig") && Contains("INGOT_COMM_TIMEOUT_S"));
  unsetenv("INGOT_COMM_TIMEOUT_S");
}

// ---- two GPUs -----------------------------------------------------------------------------------

TEST_CASE("nccl world 2: every collective, dtype and size reduces across both GPUs", "[nccl][gpu][multi-gpu]") {
  if (!nccl_ready(2)) return;
  run_ranks(2, true, [](Communicator& comm) {
    for (int64_t n : kSizes)
      for (DType dt : kDTypes) check_collectives(comm, dt, n);
  });
}

TEST_CASE("nccl world 2: send / recv in order, both directions, every dtype", "[nccl][gpu][multi-gpu]") {
  if (!nccl_ready(2)) return;
  for (bool on_stream : {true, false}) {
    INFO("on the compute stream: " << on_stream);
    run_ranks(2, on_stream, [](Communicator& comm) {
      REQUIRE(comm.can_send());
      const int me = comm.rank(), peer = 1 - me;
      for (DType dt : kDTypes) {
        for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{1} << 20}) {
          // Rank 0 sends two messages then receives one; rank 1 mirrors it: order is kept per pair.
          const Tensor a = host_data(10 + me, n).to(dt).to(comm.device());
          const Tensor b = host_data(20 + me, n).to(dt).to(comm.device());
          const Tensor got_a = zeros({n}, dt, comm.device()), got_b = zeros({n}, dt, comm.device());
          if (me == 0) {
            comm.send(a, peer);
            comm.send(b, peer);
            comm.recv(got_a, peer);
          } else {
            comm.recv(got_a, peer);
            comm.recv(got_b, peer);
            comm.send(a, peer);
          }
          INFO("dtype " << dtype_name(dt) << ", " << n << " elements, rank " << me);
          CHECK(mismatches(got_a, host_data(10 + peer, n).to(dt).to(DType::F64).to(comm.device())) == 0);
          if (me == 1) CHECK(mismatches(got_b, host_data(20 + peer, n).to(dt).to(DType::F64).to(comm.device())) == 0);
        }
      }
      comm.barrier();
    });
  }
}

}  // namespace
}  // namespace ingot
