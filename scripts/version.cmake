# version.cmake: writes OUT, a C header defining PN_GIT_COMMIT: the short commit of the tree
# at SRC, followed by ", dirty" when a tracked file differs from it, or "unknown" when SRC is
# not the top of a git work tree (a tarball) or git is missing. Never the network. OUT is
# rewritten only when its text changes, so that what includes it is not compiled again.
#   cmake -DSRC=<source dir> -DOUT=<header> -P scripts/version.cmake
set(commit unknown)
execute_process(COMMAND git -C "${SRC}" rev-parse --show-toplevel
  OUTPUT_VARIABLE top RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(rc EQUAL 0)
  file(REAL_PATH "${top}" top)
  file(REAL_PATH "${SRC}" src)
endif()
# A tarball unpacked inside some other repository is not that repository's commit.
if(rc EQUAL 0 AND top STREQUAL src)
  execute_process(COMMAND git -C "${SRC}" rev-parse --short=7 HEAD
    OUTPUT_VARIABLE head RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND git --no-optional-locks -C "${SRC}" status --porcelain
    --untracked-files=no OUTPUT_VARIABLE changes RESULT_VARIABLE rc_status ERROR_QUIET)
  if(rc EQUAL 0 AND rc_status EQUAL 0 AND head)
    set(commit "${head}")
    if(changes)
      string(APPEND commit ", dirty")
    endif()
  endif()
endif()
set(text "/* written by scripts/version.cmake at build time; not in the repository */\n")
string(APPEND text "#define PN_GIT_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
