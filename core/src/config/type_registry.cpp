// The one "who registers now" value shared by every registry, in core and in extensions.
#include "ingot/config/type_registry.h"

namespace ingot::config {

std::string& registering_origin() {
  static std::string origin = "builtin";
  return origin;
}

}  // namespace ingot::config
