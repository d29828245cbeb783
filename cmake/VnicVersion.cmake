# Writes the source behind src/app/version.h. Run at build time, not only at
# configure time, by the vnic_version target of src/app/CMakeLists.txt:
#
#   cmake -DVNIC_SOURCE_DIR=... -DVNIC_VERSION=... -DVNIC_OUT=... \
#         [-DGIT_EXECUTABLE=...] [-DVNIC_GIT_COMMIT=...] -P VnicVersion.cmake
#
# A commit made or a file edited after configuring still shows in
# `vnic --version`. The output is rewritten only when its text changes, so
# a build of an unchanged tree recompiles and relinks nothing.
#
# The commit is the abbreviated HEAD of the source tree, with "-dirty" when
# tracked files differ from it (untracked files do not count, as with
# `git describe --dirty`), and "unknown" outside a git checkout. A source
# tree unpacked inside some other repository (a packaging repository, say)
# is not a checkout of vnic: only a work tree whose top is VNIC_SOURCE_DIR
# counts. Packagers building from a tarball may set VNIC_GIT_COMMIT.

cmake_minimum_required(VERSION 3.25)

foreach(var VNIC_SOURCE_DIR VNIC_VERSION VNIC_OUT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "VnicVersion.cmake: ${var} is not set")
  endif()
endforeach()

function(vnic_git_commit out)
  set(${out} unknown PARENT_SCOPE)
  if(NOT GIT_EXECUTABLE)
    return()
  endif()
  # --no-optional-locks: the build must never take index.lock from under a
  # git command the user is running in the same tree.
  set(git ${GIT_EXECUTABLE} --no-optional-locks -C ${VNIC_SOURCE_DIR})
  execute_process(COMMAND ${git} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT rc EQUAL 0)
    return()
  endif()
  file(REAL_PATH "${top}" top)
  file(REAL_PATH "${VNIC_SOURCE_DIR}" src)
  if(NOT top STREQUAL src)
    return()
  endif()
  execute_process(COMMAND ${git} rev-parse --short=7 HEAD
                  OUTPUT_VARIABLE hash RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT rc EQUAL 0 OR hash STREQUAL "")
    return()	# a repository without a commit yet
  endif()
  execute_process(COMMAND ${git} status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0 OR NOT changes STREQUAL "")
    string(APPEND hash -dirty)
  endif()
  set(${out} ${hash} PARENT_SCOPE)
endfunction()

if(DEFINED VNIC_GIT_COMMIT AND NOT VNIC_GIT_COMMIT STREQUAL "")
  # It lands in a C string literal: keep it to what a commit name needs.
  if(NOT VNIC_GIT_COMMIT MATCHES "^[A-Za-z0-9._+-]+$")
    message(FATAL_ERROR "VNIC_GIT_COMMIT '${VNIC_GIT_COMMIT}': only A-Z a-z 0-9 . _ + -")
  endif()
  set(commit ${VNIC_GIT_COMMIT})
else()
  vnic_git_commit(commit)
endif()

set(text "/* Generated at build time by cmake/VnicVersion.cmake: edits are lost. */
#include \"app/version.h\"

const char *vnic_version(void)
{
	return \"${VNIC_VERSION}\";
}

const char *vnic_git_commit(void)
{
	return \"${commit}\";
}

const char *vnic_version_string(void)
{
	return \"vnic ${VNIC_VERSION} (git ${commit})\";
}
")

set(old "")
if(EXISTS ${VNIC_OUT})
  file(READ ${VNIC_OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${VNIC_OUT} "${text}")
endif()
