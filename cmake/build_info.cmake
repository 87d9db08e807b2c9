# Writes OUT (a header) with the commit the build was made from and the build type, for
# `pocketlm --version`. Run at every build (apps/pocketlm/CMakeLists.txt), so the commit is
# the one built, not the one configured; configure_file leaves OUT untouched when nothing
# changed, so an unchanged commit recompiles nothing. Without git (a source tarball) the
# commit is "unknown"; a work tree with uncommitted changes adds "-dirty".
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE no_git)
if(no_git OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT changes STREQUAL "")
    string(APPEND commit "-dirty")
  endif()
endif()
set(POCKETLM_GIT_COMMIT "${commit}")
configure_file("${SOURCE_DIR}/apps/pocketlm/build_info.h.in" "${OUT}" @ONLY)
