# Run by ctest before the tests (a TEST_INCLUDE_FILES script written by ingot_add_test): lists the
# Catch2 cases of one test executable and adds each as its own ctest entry, so a case that prints
# INGOT_SKIP is reported skipped without hiding another case's failure. Inputs: _exe, _prefix,
# _workdir, _labels, _timeout, _env (set by the generated file that includes this one).
if(NOT EXISTS "${_exe}")
  add_test("${_prefix}: not built" "${_exe}")
  set_tests_properties("${_prefix}: not built" PROPERTIES WORKING_DIRECTORY "${_workdir}")
  return()
endif()
execute_process(COMMAND "${_exe}" --list-test-names-only
  OUTPUT_VARIABLE _out RESULT_VARIABLE _rc WORKING_DIRECTORY "${_workdir}")
# Catch2 2.x exits with the number of cases it listed; anything else is a crash.
if(NOT _rc MATCHES "^[0-9]+$" OR _rc EQUAL 0)
  add_test("${_prefix}: listing the cases" "${_exe}" --list-test-names-only)
  set_tests_properties("${_prefix}: listing the cases" PROPERTIES WORKING_DIRECTORY "${_workdir}" WILL_FAIL TRUE)
  return()
endif()
# A ';' would split the name in CMake's list below, and neither half would match any case (Catch2
# then runs nothing): such a name is an error of its own.
string(REGEX MATCHALL "[^\n]*;[^\n]*" _bad "${_out}")
if(_bad)
  add_test("${_prefix}: a test name contains ';' (use ',')" "${_exe}" --list-test-names-only)
  set_tests_properties("${_prefix}: a test name contains ';' (use ',')" PROPERTIES WILL_FAIL TRUE)
  string(REPLACE ";" "," _out "${_out}")
endif()
string(REPLACE "\n" ";" _lines "${_out}")
foreach(_name IN LISTS _lines)
  if(_name STREQUAL "")
    continue()
  endif()
  # A test spec treats ',' as "or" and '[' ']' as tags: escape them so the spec is the one name.
  set(_spec "${_name}")
  foreach(_c , [ ])
    string(REPLACE "${_c}" "\\${_c}" _spec "${_spec}")
  endforeach()
  # -w NoTests: a spec that matches no case fails instead of passing without running anything.
  add_test("${_prefix}: ${_name}" "${_exe}" "${_spec}" -w NoTests)
  set_tests_properties("${_prefix}: ${_name}" PROPERTIES
    WORKING_DIRECTORY "${_workdir}"
    SKIP_REGULAR_EXPRESSION "INGOT_SKIP:"
    LABELS "${_labels}"
    TIMEOUT "${_timeout}"
    ENVIRONMENT "${_env}")
endforeach()
