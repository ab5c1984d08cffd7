# Runs the conformance suite (SUITE) when the cuda backend is available, as the probe test
# (PROBE = test_cuda_gpu "[cuda-available]") says; prints "INGOT_SKIP: <reason>" otherwise.
execute_process(COMMAND ${PROBE} "[cuda-available]" OUTPUT_VARIABLE probe_out ERROR_VARIABLE probe_err RESULT_VARIABLE probe_rc)
if(probe_out MATCHES "INGOT_SKIP: ([^\n]*)")
  message("INGOT_SKIP: cuda conformance: ${CMAKE_MATCH_1}")
  return()
endif()
if(NOT probe_rc EQUAL 0 OR NOT probe_out MATCHES "All tests passed")
  message(FATAL_ERROR "cuda probe test failed (or did not run):\n${probe_out}${probe_err}")
endif()
execute_process(COMMAND ${SUITE} "[conformance]" OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "conformance on cuda failed (exit ${rc})")
endif()
# The summary line: "conformance: cuda (PLUGIN): N of K ops claimed, C cases run, F failures, E
# claimed cases dispatched elsewhere". The cuda backend must claim something, fail nothing, and run
# every case it claims itself.
if(NOT out MATCHES "conformance: cuda \\([^)]*\\): ([0-9]+) of [0-9]+ ops claimed, [0-9]+ cases run, ([0-9]+) failures, ([0-9]+) claimed cases dispatched elsewhere")
  message(FATAL_ERROR "the conformance summary has no line for the cuda backend: was it loaded?")
endif()
if(CMAKE_MATCH_1 EQUAL 0 OR NOT CMAKE_MATCH_2 EQUAL 0 OR NOT CMAKE_MATCH_3 EQUAL 0)
  message(FATAL_ERROR "conformance on cuda: ${CMAKE_MATCH_1} ops claimed (must be > 0), ${CMAKE_MATCH_2} failures and "
                      "${CMAKE_MATCH_3} claimed cases dispatched elsewhere (both must be 0)")
endif()
