# find_package(symm): the symm runtime and compiler, from an installed
# tree (./dev install --prefix P). Gives
#   symm::runtime         the runtime, static (libsymm_runtime.a), with its
#                         header (symm_runtime.h) and system libraries
#   symm::runtime_shared  the same as a shared library
#   symm::compile         the symm-compile executable
#   symm_add_mlir_library(TARGET FILE.mlir [FLAGS flag...])
#                         runs symm-compile on FILE.mlir at build time (as
#                         protobuf_generate runs protoc) and makes TARGET a
#                         static library of the object, whose header
#                         (FILE.h, the entry points) is on TARGET's include
#                         path; TARGET links symm::runtime.
get_filename_component(_symm_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET symm::runtime)
  add_library(symm::runtime STATIC IMPORTED)
  set_target_properties(symm::runtime PROPERTIES
    IMPORTED_LOCATION "${_symm_prefix}/lib/libsymm_runtime.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_symm_prefix}/include"
    INTERFACE_LINK_LIBRARIES "pthread;dl;m")
  add_library(symm::runtime_shared SHARED IMPORTED)
  set_target_properties(symm::runtime_shared PROPERTIES
    IMPORTED_LOCATION "${_symm_prefix}/lib/libsymm_runtime.so"
    INTERFACE_INCLUDE_DIRECTORIES "${_symm_prefix}/include")
  add_executable(symm::compile IMPORTED)
  set_target_properties(symm::compile PROPERTIES
    IMPORTED_LOCATION "${_symm_prefix}/bin/symm-compile")
endif()

foreach(_symm_file IN ITEMS lib/libsymm_runtime.a include/symm_runtime.h bin/symm-compile)
  if(NOT EXISTS "${_symm_prefix}/${_symm_file}")
    set(symm_FOUND FALSE)
    set(symm_NOT_FOUND_MESSAGE "symm: ${_symm_prefix}/${_symm_file} is missing")
    return()
  endif()
endforeach()

function(symm_add_mlir_library target source)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "" "FLAGS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "symm_add_mlir_library: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  get_filename_component(_input "${source}" ABSOLUTE)
  get_filename_component(_name "${source}" NAME_WE)
  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}")
  set(_object "${_dir}/${_name}.o")
  set(_header "${_dir}/${_name}.h")
  add_custom_command(
    OUTPUT "${_object}" "${_header}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${_dir}"
    COMMAND symm::compile "${_input}" -o "${_object}" ${ARG_FLAGS}
    DEPENDS "${_input}" symm::compile
    COMMENT "symm-compile ${source}"
    VERBATIM)
  set_source_files_properties("${_object}" PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_library(${target} STATIC "${_object}" "${_header}")
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CXX)
  target_include_directories(${target} PUBLIC "${_dir}")
  target_link_libraries(${target} PUBLIC symm::runtime)
endfunction()
