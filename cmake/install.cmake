# The library a user installs (`cmake --install BUILD --prefix DIR`, docs/c-api.md): the C API's
# header, the engine as a static library (libpocketlm.a, with the console's font in
# libpocketlm_console_font.a) and as a shared one (libpocketlm.so) that exports the pocketlm_*
# functions and nothing else, a pkg-config file and a CMake package (find_package(pocketlm) ->
# pocketlm::pocketlm, the shared library; pocketlm::pocketlm_static, the archives).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The engine's objects are position independent (the shared library is made of the same
# archives) and hidden but for POCKETLM_API (api/pocketlm.h): static links ignore visibility.
foreach(t pocketlm pocketlm_console_font)
  set_target_properties(${t} PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden
                                        VISIBILITY_INLINES_HIDDEN ON)
endforeach()
add_library(pocketlm_shared SHARED ${CMAKE_SOURCE_DIR}/src/pocketlm/api/shared_library.cpp)
# The archives whole (the font's table would otherwise be dropped: only the console reads it).
# As link options, not libraries: the font's archive lists the engine's again, which CMake's
# WHOLE_ARCHIVE feature refuses.
add_dependencies(pocketlm_shared pocketlm pocketlm_console_font)
target_include_directories(pocketlm_shared PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_options(pocketlm_shared PRIVATE -Wl,--whole-archive $<TARGET_FILE:pocketlm>
                    $<TARGET_FILE:pocketlm_console_font> -Wl,--no-whole-archive)
target_link_libraries(pocketlm_shared PRIVATE m)
# The library's version is the C API's (api/pocketlm.h); its soname changes with the major.
file(STRINGS ${CMAKE_SOURCE_DIR}/src/pocketlm/api/pocketlm.h version_lines REGEX "^#define POCKETLM_VERSION_(MAJOR|MINOR|PATCH) ")
foreach(line ${version_lines})
  string(REGEX REPLACE "^#define POCKETLM_VERSION_([A-Z]+) ([0-9]+).*" "\\1;\\2" pair "${line}")
  list(GET pair 0 part)
  list(GET pair 1 number)
  set(POCKETLM_API_${part} ${number})
endforeach()
set(POCKETLM_API_VERSION ${POCKETLM_API_MAJOR}.${POCKETLM_API_MINOR}.${POCKETLM_API_PATCH})
set_target_properties(pocketlm_shared PROPERTIES OUTPUT_NAME pocketlm LINKER_LANGUAGE CXX EXPORT_NAME pocketlm
                                                 VERSION ${POCKETLM_API_VERSION} SOVERSION ${POCKETLM_API_MAJOR})
target_include_directories(pocketlm_shared INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# The static archives as an installed target: C callers link the C++ runtime and libm too.
add_library(pocketlm_static INTERFACE)
target_link_libraries(pocketlm_static INTERFACE
  $<INSTALL_INTERFACE:$<INSTALL_PREFIX>/${CMAKE_INSTALL_LIBDIR}/${CMAKE_STATIC_LIBRARY_PREFIX}pocketlm${CMAKE_STATIC_LIBRARY_SUFFIX}>
  $<INSTALL_INTERFACE:$<INSTALL_PREFIX>/${CMAKE_INSTALL_LIBDIR}/${CMAKE_STATIC_LIBRARY_PREFIX}pocketlm_console_font${CMAKE_STATIC_LIBRARY_SUFFIX}>
  stdc++ m)
target_include_directories(pocketlm_static INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(pocketlm_static PROPERTIES EXPORT_NAME pocketlm_static)

install(FILES ${CMAKE_SOURCE_DIR}/src/pocketlm/api/pocketlm.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pocketlm/api)
install(FILES $<TARGET_FILE:pocketlm> $<TARGET_FILE:pocketlm_console_font> DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS pocketlm_shared pocketlm_static EXPORT pocketlmTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT pocketlmTargets NAMESPACE pocketlm:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pocketlm)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/pkg/pocketlmConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/pocketlmConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pocketlm)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/pocketlmConfigVersion.cmake VERSION ${POCKETLM_API_VERSION}
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/pocketlmConfig.cmake ${CMAKE_BINARY_DIR}/pocketlmConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pocketlm)
# pkg-config: the prefix is the installed one (pkg-config's ${pcfiledir} makes it relocatable).
configure_file(${CMAKE_SOURCE_DIR}/cmake/pkg/pocketlm.pc.in ${CMAKE_BINARY_DIR}/pocketlm.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/pocketlm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
