# ctest: install this build into a prefix inside it, build examples/sim_hello as a separate
# project against the installed package (find_package(symmcoll)), run it.
#   cmake -DBUILD=<build dir> -DSRC=<source dir> -P cmake/test_example.cmake
set(prefix ${BUILD}/example-prefix)
set(dir ${BUILD}/example-sim_hello)
file(REMOVE_RECURSE ${prefix} ${dir})
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  message("${out}")
endfunction()
step(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
step(${CMAKE_COMMAND} -S ${SRC}/examples/sim_hello -B ${dir} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build ${dir})
step(${dir}/sim_hello)
