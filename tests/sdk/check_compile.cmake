# Compiles one case of a compile-check source and checks the outcome (ctest, tests/sdk):
#   cmake -DCXX=<compiler> -DSOURCE=<file.cpp> -DINCLUDE=<dir> [-DCASE=<macro>]
#         [-DEXPECT=<text>] -P check_compile.cmake
# CASE may list several macros separated by commas.
# Without EXPECT the source must compile; with it, the compile must fail and the compiler's
# output must contain EXPECT (the hook's name in the static_assert message).
foreach(_v CXX SOURCE INCLUDE)
    if(NOT DEFINED ${_v})
        message(FATAL_ERROR "check_compile.cmake: ${_v} is not set")
    endif()
endforeach()
set(_args -std=c++20 -fsyntax-only -Wall -Wextra -I${INCLUDE})
if(DEFINED CASE AND NOT CASE STREQUAL "")
    string(REPLACE "," ";" _cases "${CASE}")
    foreach(_c IN LISTS _cases)
        list(APPEND _args -D${_c})
    endforeach()
endif()
execute_process(COMMAND ${CXX} ${_args} ${SOURCE}
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT DEFINED EXPECT OR EXPECT STREQUAL "")
    if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "expected ${SOURCE} to compile, it did not:\n${_out}")
    endif()
    message(STATUS "compiles, as expected")
    return()
endif()
if(_rc EQUAL 0)
    message(FATAL_ERROR "expected case ${CASE} of ${SOURCE} to fail to compile; it compiled")
endif()
string(FIND "${_out}" "${EXPECT}" _at)
if(_at EQUAL -1)
    message(FATAL_ERROR "case ${CASE} failed to compile, but without \"${EXPECT}\":\n${_out}")
endif()
message(STATUS "case ${CASE} fails to compile with \"${EXPECT}\", as expected")
