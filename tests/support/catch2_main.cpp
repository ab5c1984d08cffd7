// The one Catch2 main shared by every test executable. A process started under an
// ONEDNN_MAX_CPU_ISA level this CPU lacks (the ISA matrix, see cmake/IngotHelpers.cmake) reports
// its case skipped instead of running it at a lower level under the wrong name.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>
#include <string>

#include "cpu_isa.h"

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing = listing || std::string(argv[i]).rfind("--list", 0) == 0;
  if (const std::string why = ingot::test::isa_level_unavailable(); !why.empty() && !listing) {
    std::cout << "INGOT_SKIP: " << why << std::endl;
    return 0;
  }
  return Catch::Session().run(argc, argv);
}
