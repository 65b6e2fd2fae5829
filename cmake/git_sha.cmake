# Writes OUT with the commit the sources are at (and "-dirty" when tracked files differ from
# it), at every build: result rows must name the code that produced them, not the commit CMake
# happened to be configured at. The file is rewritten only when its content changes.
# The files `make experiments` writes are outputs, not sources: a regenerated table or sweep
# leaves the build clean (else the next build would be "-dirty" and every later sweep with it).
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT sha)
  set(sha unknown)
else()
  execute_process(COMMAND git diff --quiet HEAD -- .
                          ":(exclude)experiments/results/sim" ":(exclude)experiments/tables"
                          ":(exclude)paper/generated" ":(exclude)paper/figures" ":(exclude)paper/paper.pdf"
                  WORKING_DIRECTORY ${SRC} RESULT_VARIABLE dirty)
  if(NOT dirty EQUAL 0)
    string(APPEND sha "-dirty")
  endif()
endif()
set(content "#define SYMM_GIT_SHA \"${sha}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${content}")
  file(WRITE ${OUT} "${content}")
endif()
