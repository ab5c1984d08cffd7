// Device parsing and printing.
#include "ingot/tensor/device.h"

#include <fmt/format.h>

#include "ingot/base/error.h"

namespace ingot {

Device Device::parse(const std::string& text) {
  if (text == "cpu") return cpu();
  if (text.rfind("cuda", 0) == 0) {
    if (text == "cuda") return {DeviceKind::CUDA, 0};
    if (text.size() > 5 && text[4] == ':' && text.find_first_not_of("0123456789", 5) == std::string::npos)
      return {DeviceKind::CUDA, std::stoi(text.substr(5))};
  }
  throw ConfigError(fmt::format("unknown device '{}'; expected cpu, cuda or cuda:N", text));
}

std::string Device::str() const {
  return kind == DeviceKind::CPU ? std::string("cpu") : fmt::format("cuda:{}", index);
}

}  // namespace ingot
