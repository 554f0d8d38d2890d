# symm's installed package: `cmake --install` of the top-level project with
# SYMM_INSTALL_FROM naming a cargo release build (./dev install does both).
# It installs
#   bin/      symm-compile, symm-opt, symm-launch
#   lib/      libsymm_runtime.a, libsymm_runtime.so.X.Y.Z with its SONAME
#             link and the development link libsymm_runtime.so
#   include/  symm_runtime.h, symm_abi.h
#   lib/cmake/symm/   the CMake package (find_package(symm)): exported
#             targets symm::runtime and symm::runtime_shared, symm::compile,
#             symm_add_mlir_library, and a version file (SameMinorVersion
#             while 0.x, SameMajorVersion after)
#   lib/pkgconfig/symm.pc
#   share/symm/libdevice.10.bc (when ./dev setup installed it)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_from "${SYMM_INSTALL_FROM}")
foreach(_built symm-compile symm-opt symm-launch libsymm_runtime.a libsymm_runtime.so)
  if(NOT EXISTS "${_from}/${_built}")
    message(FATAL_ERROR "SYMM_INSTALL_FROM: ${_from}/${_built} is not built "
                        "(cargo build --release -p symm-compile -p symm-opt -p symm-runtime-clib -p symm-runtime --features symm-runtime/launcher)")
  endif()
endforeach()

# The runtime's SONAME, by runtime/build.rs's rule.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(SYMM_ABI_VERSION "0.${PROJECT_VERSION_MINOR}")
  set(_compatibility SameMinorVersion)
else()
  set(SYMM_ABI_VERSION "${PROJECT_VERSION_MAJOR}")
  set(_compatibility SameMajorVersion)
endif()
set(_soname "libsymm_runtime.so.${SYMM_ABI_VERSION}")
set(_real "libsymm_runtime.so.${PROJECT_VERSION}")

install(PROGRAMS "${_from}/symm-compile" "${_from}/symm-opt" "${_from}/symm-launch"
        DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES "${_from}/libsymm_runtime.a" DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES "${_from}/libsymm_runtime.so" DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RENAME ${_real})
set(_links "${CMAKE_CURRENT_BINARY_DIR}/symm-links")
file(MAKE_DIRECTORY "${_links}")
file(CREATE_LINK ${_real} "${_links}/${_soname}" SYMBOLIC)
file(CREATE_LINK ${_soname} "${_links}/libsymm_runtime.so" SYMBOLIC)
install(FILES "${_links}/${_soname}" "${_links}/libsymm_runtime.so"
        DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES runtime/include/symm_runtime.h runtime/include/symm_abi.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The runtime as exported targets (interface targets over the files cargo
# built; install(EXPORT) writes their import file).
add_library(symm_runtime_static INTERFACE)
set_target_properties(symm_runtime_static PROPERTIES EXPORT_NAME runtime)
target_include_directories(symm_runtime_static INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(symm_runtime_static INTERFACE
  $<INSTALL_INTERFACE:$<INSTALL_PREFIX>/${CMAKE_INSTALL_LIBDIR}/libsymm_runtime.a>
  pthread dl m)
add_library(symm_runtime_shared INTERFACE)
set_target_properties(symm_runtime_shared PROPERTIES EXPORT_NAME runtime_shared)
target_include_directories(symm_runtime_shared INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(symm_runtime_shared INTERFACE
  $<INSTALL_INTERFACE:$<INSTALL_PREFIX>/${CMAKE_INSTALL_LIBDIR}/libsymm_runtime.so>)
install(TARGETS symm_runtime_static symm_runtime_shared EXPORT symmTargets)
set(_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/symm)
install(EXPORT symmTargets NAMESPACE symm:: DESTINATION ${_package_dir})

configure_package_config_file(cmake/symmConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/symmConfig.cmake"
  INSTALL_DESTINATION ${_package_dir}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/symmConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${_compatibility})
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/symmConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/symmConfigVersion.cmake"
        DESTINATION ${_package_dir})

# pkg-config, relocatable through ${pcfiledir}.
set(SYMM_PC_VERSION ${PROJECT_VERSION})
configure_file(cmake/symm.pc.in "${CMAKE_CURRENT_BINARY_DIR}/symm.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/symm.pc"
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# libdevice, where symm-compile looks beside its own folder.
set(_libdevice "${PROJECT_SOURCE_DIR}/.deps/libdevice/libdevice.10.bc")
if(EXISTS "${_libdevice}")
  install(FILES "${_libdevice}" DESTINATION ${CMAKE_INSTALL_DATADIR}/symm)
endif()
