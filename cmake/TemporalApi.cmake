# Builds the official Temporal gRPC API into one library target, `temporal_api`.
#
# The .proto files come from the npm package @temporalio/core-bridge, pinned with its
# integrity hash by proto/temporal-api/package-lock.json. They are installed into the build
# directory at configure time, once per lockfile content (a stamp holds the lockfile hash),
# so a rebuild never downloads or regenerates anything.
#
# Two edits make Debian's protoc 3.21 emit valid C++ (both wire-safe: message package names
# never travel, service and method names are untouched):
#   - package temporal.api.namespace.v1 becomes temporal.api.namespace_.v1 (`namespace` is a
#     C++ keyword), in its own file and in every reference to it;
#   - temporal/api/export/v1 is left out (package `export` is a keyword too; nothing imports it).

set(TEMPORAL_API_NPM_DIR ${CMAKE_BINARY_DIR}/temporal-api-npm)
set(TEMPORAL_API_LOCK ${CMAKE_SOURCE_DIR}/proto/temporal-api/package-lock.json)
file(SHA256 ${TEMPORAL_API_LOCK} _temporal_lock_hash)
set(_temporal_stamp ${TEMPORAL_API_NPM_DIR}/installed.stamp)
set(_temporal_installed_hash "")
if(EXISTS ${_temporal_stamp})
  file(READ ${_temporal_stamp} _temporal_installed_hash)
endif()

if(NOT _temporal_installed_hash STREQUAL _temporal_lock_hash)
  find_program(NPM_PROGRAM npm REQUIRED)
  message(STATUS "Installing the pinned Temporal API protos with npm ci")
  file(REMOVE_RECURSE ${TEMPORAL_API_NPM_DIR})
  file(MAKE_DIRECTORY ${TEMPORAL_API_NPM_DIR})
  file(COPY ${CMAKE_SOURCE_DIR}/proto/temporal-api/package.json ${TEMPORAL_API_LOCK}
       DESTINATION ${TEMPORAL_API_NPM_DIR})
  execute_process(
    COMMAND ${NPM_PROGRAM} ci --ignore-scripts --no-audit --no-fund --loglevel=error
    WORKING_DIRECTORY ${TEMPORAL_API_NPM_DIR}
    RESULT_VARIABLE _npm_result)
  if(NOT _npm_result EQUAL 0)
    message(FATAL_ERROR "npm ci of the Temporal API protos failed (${_npm_result})")
  endif()
  file(WRITE ${_temporal_stamp} ${_temporal_lock_hash})
endif()

set(_upstream ${TEMPORAL_API_NPM_DIR}/node_modules/@temporalio/core-bridge/sdk-core/crates/protos/protos/api_upstream)
set(TEMPORAL_PROTO_DIR ${CMAKE_BINARY_DIR}/temporal-api-protos)
# The OpenAPI description of the same API (served at /api/v1/swagger.json, checked by tests).
set(TEMPORAL_OPENAPI_V2 ${_upstream}/openapi/openapiv2.json)
set(TEMPORAL_GEN_DIR ${CMAKE_BINARY_DIR}/temporal-api-gen)

file(GLOB_RECURSE _upstream_protos RELATIVE ${_upstream}
     ${_upstream}/temporal/api/*.proto
     ${_upstream}/google/api/*.proto
     ${_upstream}/nexusannotations/*.proto)
list(FILTER _upstream_protos EXCLUDE REGEX "^temporal/api/export/")

# Stage the rewritten copies (only rewritten when their content would change, so the
# timestamps, and therefore protoc and the compiler, stay quiet on a re-configure).
set(TEMPORAL_PROTOS "")
foreach(_rel IN LISTS _upstream_protos)
  file(READ ${_upstream}/${_rel} _content)
  string(REPLACE "temporal.api.namespace.v1" "temporal.api.namespace_.v1" _content "${_content}")
  set(_dst ${TEMPORAL_PROTO_DIR}/${_rel})
  set(_old "")
  if(EXISTS ${_dst})
    file(READ ${_dst} _old)
  endif()
  if(NOT _old STREQUAL _content)
    file(WRITE ${_dst} "${_content}")
  endif()
  list(APPEND TEMPORAL_PROTOS ${_rel})
endforeach()

set(_gen_srcs "")
foreach(_rel IN LISTS TEMPORAL_PROTOS)
  string(REGEX REPLACE "\\.proto$" "" _base ${_rel})
  set(_outs ${TEMPORAL_GEN_DIR}/${_base}.pb.cc ${TEMPORAL_GEN_DIR}/${_base}.pb.h)
  set(_plugin_args "")
  if(_rel MATCHES "service\\.proto$")
    list(APPEND _outs ${TEMPORAL_GEN_DIR}/${_base}.grpc.pb.cc ${TEMPORAL_GEN_DIR}/${_base}.grpc.pb.h)
    set(_plugin_args --grpc_out=${TEMPORAL_GEN_DIR} --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>)
  endif()
  add_custom_command(
    OUTPUT ${_outs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${TEMPORAL_GEN_DIR}
    COMMAND protobuf::protoc -I ${TEMPORAL_PROTO_DIR} -I ${Protobuf_INCLUDE_DIRS}
            --cpp_out=${TEMPORAL_GEN_DIR} ${_plugin_args} ${TEMPORAL_PROTO_DIR}/${_rel}
    DEPENDS ${TEMPORAL_PROTO_DIR}/${_rel}
    COMMENT "protoc ${_rel}"
    VERBATIM)
  list(APPEND _gen_srcs ${_outs})
endforeach()

add_library(temporal_api STATIC ${_gen_srcs})
target_include_directories(temporal_api SYSTEM PUBLIC ${TEMPORAL_GEN_DIR})
target_link_libraries(temporal_api PUBLIC protobuf::libprotobuf gRPC::grpc++)
# Generated code: no warnings, and a lighter optimisation level keeps the 3-minute build short.
target_compile_options(temporal_api PRIVATE -w -O1 -g0)
