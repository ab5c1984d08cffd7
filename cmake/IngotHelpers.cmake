# One helper per artifact kind: ingot_add_plugin, ingot_add_test, ingot_add_bench; and
# ingot_enable_sanitizers for INGOT_SANITIZE.

# Warnings for Ingot's own targets (vendor headers come in as SYSTEM).
function(ingot_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
  # GCC 12 reports -Wrestrict false positives inside std::string concatenation at -O3 (GCC bug
  # 105651); the warning stays on for other compilers.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
  if(INGOT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# ingot_add_plugin(NAME SOURCES ... [LIBS ...] [INCLUDES ...] [EXAMPLE])
# A MODULE library in the build's plugin folder, built against the SDK headers only, with
# hidden visibility so that it exports just the ingot_plugin_* entry points. An EXAMPLE plugin is
# built beside its sources' build folder and never installed, so real runs do not load it (tests
# and users reach it through INGOT_PLUGIN_PATH).
function(ingot_add_plugin name)
  cmake_parse_arguments(P "EXAMPLE" "" "SOURCES;LIBS;INCLUDES" ${ARGN})
  set(target ingot_plugin_${name})
  set(out_dir ${INGOT_PLUGIN_BUILD_DIR})
  if(P_EXAMPLE)
    set(out_dir ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  add_library(${target} MODULE ${P_SOURCES})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ingot_${name} PREFIX "lib"
    LIBRARY_OUTPUT_DIRECTORY ${out_dir}
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/core/include ${P_INCLUDES})
  target_link_libraries(${target} PRIVATE ${P_LIBS})
  target_link_options(${target} PRIVATE -Wl,--no-undefined)
  ingot_set_warnings(${target})
  if(NOT P_EXAMPLE)
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ingot/plugins)
  endif()
endfunction()

# ingot_add_extension(NAME ENTRY file.cpp SOURCES ... [LIBS ...]): an extension plugin (C++ against
# core's installed API) as a MODULE library in the build's extension folder (beside the plugin
# folder, where the extension loader looks), installed into lib/ingot/extensions; hidden
# visibility, so that it exports only ingot_extension_query / ingot_extension_register (ENTRY).
# SOURCES form the object library ingot_<NAME>_objects (its folder on the include path), which
# the plugin's unit tests link too, so each source compiles once.
function(ingot_add_extension name)
  cmake_parse_arguments(E "" "ENTRY" "SOURCES;LIBS" ${ARGN})
  set(objects ingot_${name}_objects)
  add_library(${objects} OBJECT ${E_SOURCES})
  set_target_properties(${objects} PROPERTIES POSITION_INDEPENDENT_CODE ON
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${objects} PUBLIC ingot_core ${E_LIBS})
  target_include_directories(${objects} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  ingot_set_warnings(${objects})
  set(target ingot_extension_${name})
  add_library(${target} MODULE ${E_ENTRY} $<TARGET_OBJECTS:${objects}>)
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ingot_${name} PREFIX "lib"
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/extensions
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${target} PRIVATE ${objects})
  target_link_options(${target} PRIVATE -Wl,--no-undefined)
  ingot_set_warnings(${target})
  install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ingot/extensions)
endfunction()

# ingot_add_test(NAME SOURCES ... [LABELS ...] [LIBS ...] [TIMEOUT s] [ISA_MATRIX])
# One Catch2 executable per area, linked with the shared Catch2 main object. Every test case is
# its own ctest entry "NAME: case" (listed when ctest starts, see IngotDiscoverTests.cmake); a case
# that prints "INGOT_SKIP:" is reported skipped. Tests run with one OpenMP thread each.
# ISA_MATRIX: every case also runs once per level of INGOT_ISA_MATRIX, as "NAME [LEVEL]: case"
# under ONEDNN_MAX_CPU_ISA=LEVEL (label "isa"), so that one machine computes what CPUs with fewer
# instructions compute; a level this CPU lacks reports its cases skipped (tests/support/cpu_isa.h).
set(INGOT_ISA_MATRIX "AVX2;AVX512_CORE;AVX512_CORE_VNNI;AVX512_CORE_BF16" CACHE STRING
    "ONEDNN_MAX_CPU_ISA levels the ISA_MATRIX tests run under, besides the CPU's best")
function(ingot_add_test name)
  cmake_parse_arguments(T "ISA_MATRIX" "TIMEOUT" "SOURCES;LABELS;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES} $<TARGET_OBJECTS:ingot_catch2_main>)
  target_link_libraries(${name} PRIVATE ingot_core ingot_test_support ${T_LIBS})
  ingot_set_warnings(${name})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set(variants "-")
  if(T_ISA_MATRIX)
    list(APPEND variants ${INGOT_ISA_MATRIX})
  endif()
  foreach(isa IN LISTS variants)
    set(prefix ${name})
    set(env "OMP_NUM_THREADS=1;INGOT_PLUGIN_PATH=;INGOT_BUILD_DIR=${PROJECT_BINARY_DIR}")
    set(labels ${T_LABELS})
    set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_cases.cmake)
    if(NOT isa STREQUAL "-")
      set(prefix "${name} [${isa}]")
      set(env "${env};ONEDNN_MAX_CPU_ISA=${isa}")
      list(APPEND labels isa)
      set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_cases_${isa}.cmake)
    endif()
    file(GENERATE OUTPUT ${include_file} CONTENT
"set(_exe [==[$<TARGET_FILE:${name}>]==])
set(_prefix [==[${prefix}]==])
set(_workdir [==[${PROJECT_SOURCE_DIR}]==])
set(_labels [==[${labels}]==])
set(_timeout [==[${T_TIMEOUT}]==])
set(_env [==[${env}]==])
include([==[${PROJECT_SOURCE_DIR}/cmake/IngotDiscoverTests.cmake]==])
")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
  endforeach()
endfunction()

# ingot_add_bench(NAME SOURCES ... [LIBS ...]): a Google Benchmark executable.
function(ingot_add_bench name)
  cmake_parse_arguments(B "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${B_SOURCES})
  target_link_libraries(${name} PRIVATE ingot_core benchmark::benchmark ${B_LIBS})
  ingot_set_warnings(${name})
endfunction()

# ingot_enable_sanitizers(): with INGOT_SANITIZE set (a comma list for -fsanitize=, e.g.
# "address,undefined"), every target of the calling folder and the folders added after the call
# compiles (C and C++; nvcc's CUDA sources are left alone) and links with those sanitizers.
# -fno-sanitize-recover=all makes a UBSan finding abort, so that the test reporting it fails.
# GCC links the shared sanitizer runtimes: a MODULE plugin built with -Wl,--no-undefined finds the
# __asan_* / __ubsan_* symbols in libasan.so / libubsan.so, and the process that dlopens it already
# has them. scripts/sanitize builds and runs the tests this way.
function(ingot_enable_sanitizers)
  if(INGOT_SANITIZE STREQUAL "")
    return()
  endif()
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang)$")
    message(FATAL_ERROR "INGOT_SANITIZE needs GCC or Clang, not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  string(REPLACE ";" "," list "${INGOT_SANITIZE}")
  foreach(flag -fsanitize=${list} -fno-omit-frame-pointer -fno-sanitize-recover=all)
    add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:${flag}>)
  endforeach()
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fsanitize=${list}>")
  message(STATUS "Ingot sanitize: ${list} (compile and link options of every target)")
endfunction()
