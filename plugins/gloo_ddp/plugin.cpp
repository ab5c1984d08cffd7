// Entry points of the gloo_ddp plugin: query, probe and init (one communicator, "gloo", for host
// tensors over TCP, on Debian's gloo).
#include <gloo/config.h>

#include <string>

#include "gloo_communicator.h"
#include "ingot/plugin/sdk.h"

namespace {

std::string gloo_version() {
  return std::to_string(GLOO_VERSION_MAJOR) + "." + std::to_string(GLOO_VERSION_MINOR) + "." +
         std::to_string(GLOO_VERSION_PATCH);
}

bool probe_gloo(std::string& reason) {
#if GLOO_HAVE_TRANSPORT_TCP
  reason = "gloo " + gloo_version() + ", TCP transport";
  return true;
#else
  reason = "this gloo was built without its TCP transport";
  return false;
#endif
}

void init_gloo(const ingot_host_api* host, ingot::sdk::Components& out) {
  out.add(ingot::sdk::make_communicator<ingot::gloo_ddp::GlooCommunicator>("gloo", INGOT_DEVICE_CPU));
  ingot::sdk::log(host, INGOT_LOG_INFO, "gloo_ddp", "gloo " + gloo_version() + " communicator for cpu tensors (TCP)");
}

}  // namespace

INGOT_PLUGIN("gloo_ddp", "0.1.0", "gloo communicator over TCP for cpu tensors (all_reduce, broadcast, ...)",
             INGOT_KIND_COMMUNICATOR, probe_gloo, init_gloo)
