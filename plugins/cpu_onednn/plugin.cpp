// Entry points of the cpu_onednn plugin: query, probe (x86-64 only) and init (one backend).
#include <oneapi/dnnl/dnnl.hpp>

#include <string>

#include "desc_util.h"
#include "ingot/plugin/sdk.h"
#include "onednn_backend.h"

namespace {

bool probe_cpu_onednn(std::string& reason) {
#if defined(__x86_64__)
  reason = "oneDNN " + std::to_string(dnnl::version()->major) + "." + std::to_string(dnnl::version()->minor) + "." +
           std::to_string(dnnl::version()->patch) + ", ISA " + ingot::onednn::effective_isa_name();
  return true;
#else
  reason = "cpu_onednn is built for x86-64 only";
  return false;
#endif
}

void init_cpu_onednn(const ingot_host_api* host, ingot::sdk::Components& out) {
  out.add(ingot::sdk::make_host_backend(new ingot::onednn::OnednnBackend(), "cpu_onednn", 100));
  ingot::sdk::log(host, INGOT_LOG_INFO, "cpu_onednn",
                  "oneDNN " + std::to_string(dnnl::version()->major) + "." + std::to_string(dnnl::version()->minor) +
                      " CPU backend, effective ISA " + ingot::onednn::effective_isa_name());
}

}  // namespace

INGOT_PLUGIN("cpu_onednn", "0.1.0", "oneDNN 2.6 CPU backend (matmul, conv, pooling, eltwise, norms, reorders)",
             INGOT_KIND_BACKEND, probe_cpu_onednn, init_cpu_onednn)
