# Run by ctest (tests/install/CMakeLists.txt passes the -D values): installs the build into
# WORK_DIR/prefix, checks the tree, builds and runs consumer/ against it, then runs the installed
# `ingot` and checks that it uses the prefix's libingot and plugins, not the build tree's, and
# finds the shipped configs under the prefix from any folder.

cmake_minimum_required(VERSION 3.25)  # script mode: today's policies (if(IN_LIST), ...)

# run(OUT_VAR cmd...): runs cmd with no Ingot variables or LD_LIBRARY_PATH from the caller, so
# only RPATHs and the prefix decide what loads; stops the test with the output when cmd fails.
function(run out_var)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH --unset=INGOT_PLUGIN_PATH
            --unset=INGOT_BUILD_DIR --unset=INGOT_DISABLE_PLUGINS ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(JOIN " " cmd ${ARGN})
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

function(expect_file path)
  if(NOT EXISTS ${path})
    message(FATAL_ERROR "not installed: ${path}")
  endif()
endfunction()

# A fresh prefix and consumer build every run; the paths stay the same, so ccache serves the compile.
file(MAKE_DIRECTORY ${WORK_DIR})
file(REAL_PATH ${WORK_DIR} WORK_DIR)  # $ORIGIN resolves symbolic links: compare real paths
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${prefix} ${WORK_DIR}/consumer-build)

# 1. The install tree.
run(out ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
set(lib ${prefix}/${LIBDIR})
foreach(f ${lib}/libingot.so ${prefix}/bin/ingot
          ${prefix}/include/ingot/tensor/tensor.h ${prefix}/include/ingot/plugin/ingot_plugin.h
          ${prefix}/include/ingot/plugin/sdk.h
          ${lib}/cmake/Ingot/IngotConfig.cmake ${lib}/cmake/Ingot/IngotConfigVersion.cmake
          ${lib}/cmake/Ingot/IngotTargets.cmake)
  expect_file(${f})
endforeach()
file(GLOB sonames ${lib}/libingot.so.*)
if(NOT sonames)
  message(FATAL_ERROR "no versioned libingot.so.* in ${lib}")
endif()
if(EXPECT_ONEDNN)
  expect_file(${lib}/ingot/plugins/libingot_cpu_onednn.so)
endif()
file(GLOB_RECURSE template ${prefix}/*libingot_template*)
if(template)
  message(FATAL_ERROR "the example template plugin must not be installed: ${template}")
endif()
message(STATUS "installed into ${prefix}")

# 2. An out-of-tree project against the prefix.
set(launcher)
if(CCACHE)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE})
endif()
run(out ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer-build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${launcher}
    -DCMAKE_PREFIX_PATH=${prefix})
file(STRINGS ${WORK_DIR}/consumer-build/CMakeCache.txt ingot_dir REGEX "^Ingot_DIR:")
if(NOT ingot_dir STREQUAL "Ingot_DIR:PATH=${lib}/cmake/Ingot")
  message(FATAL_ERROR "the consumer found another Ingot: ${ingot_dir}")
endif()
run(out ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
run(out ${WORK_DIR}/consumer-build/ingot_consumer)
message(STATUS "consumer: ${out}")

# 3. The installed CLI: its version, and plugins found under the prefix only.
run(out ${prefix}/bin/ingot --version)
if(NOT out MATCHES "${VERSION}")
  message(FATAL_ERROR "ingot --version does not say ${VERSION}:\n${out}")
endif()
message(STATUS "ingot --version: ${out}")
run(out ${prefix}/bin/ingot plugins --verbose)
message(STATUS "ingot plugins --verbose:\n${out}")
# Every searched folder must lie in the prefix: the build tree's plugin folder is for the build's
# own libingot only (INGOT_PLUGIN_PATH and INGOT_BUILD_DIR are unset here).
string(REPLACE "\n" ";" lines "${out}")
set(in_folders OFF)
set(folders)
foreach(line IN LISTS lines)
  if(line STREQUAL "searched folders (in order):")
    set(in_folders ON)
  elseif(in_folders AND line MATCHES "^  (.+)  \\[([^]]+)\\]")
    list(APPEND folders "${CMAKE_MATCH_1} [${CMAKE_MATCH_2}]")
    string(FIND "${CMAKE_MATCH_1}/" "${prefix}/" at)
    if(NOT at EQUAL 0)
      message(FATAL_ERROR "the installed ingot searches ${CMAKE_MATCH_1}, outside ${prefix}")
    endif()
  elseif(in_folders)
    break()
  endif()
endforeach()
if(NOT "${lib}/ingot/plugins [install]" IN_LIST folders)
  message(FATAL_ERROR "the installed ingot does not search ${lib}/ingot/plugins; it searches: ${folders}")
endif()
string(FIND "${out}" "\n  ${lib}/ingot/plugins/libingot_cpu_onednn.so\n    -> accepted: cpu_onednn" at)
if(EXPECT_ONEDNN AND at EQUAL -1)
  message(FATAL_ERROR "cpu_onednn was not loaded from ${lib}/ingot/plugins")
endif()

# 4. An extension plugin built out of tree against the prefix (the example template), loaded by
# the installed ingot through INGOT_EXTENSION_PATH.
file(REMOVE_RECURSE ${WORK_DIR}/extension-build)
run(out ${CMAKE_COMMAND} -S ${EXTENSION_DIR} -B ${WORK_DIR}/extension-build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${launcher} -DCMAKE_PREFIX_PATH=${prefix})
run(out ${CMAKE_COMMAND} --build ${WORK_DIR}/extension-build)
run(out ${CMAKE_COMMAND} -E env INGOT_EXTENSION_PATH=${WORK_DIR}/extension-build ${prefix}/bin/ingot plugins --verbose)
if(NOT out MATCHES "extension_template +0\\.1\\.0 +available" OR NOT out MATCHES "adds: callback lr_trace, loss huber")
  message(FATAL_ERROR "the installed ingot did not load the extension built against the prefix:\n${out}")
endif()
message(STATUS "extension built against the prefix: loaded")

# 5. The shipped configs, found by the installed ingot from a folder that has no configs/ (the
# test's own): under <prefix>/share/ingot, and named there when a config is not found.
expect_file(${prefix}/share/ingot/configs/image_folder.yaml)
expect_file(${prefix}/share/bash-completion/completions/ingot)
if(EXISTS ${CMAKE_CURRENT_BINARY_DIR}/configs)
  message(FATAL_ERROR "the test must run in a folder without configs/: ${CMAKE_CURRENT_BINARY_DIR}")
endif()
run(out ${prefix}/bin/ingot run configs/smoke.yaml --print-config)
if(NOT out MATCHES "name: smoke")
  message(FATAL_ERROR "the installed ingot did not find configs/smoke.yaml in ${prefix}/share/ingot:\n${out}")
endif()
execute_process(COMMAND ${prefix}/bin/ingot run configs/absent.yaml RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "configs/absent.yaml: config file not found in the working directory \\([^)]+\\), nor in the installed configs \\(${prefix}/share/ingot\\)")
  message(FATAL_ERROR "a missing config (exit ${rc}): ${err}")
endif()
message(STATUS "shipped configs: found in ${prefix}/share/ingot")
