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

include(${CMAKE_CURRENT_LIST_DIR}/NpmPackages.cmake)
set(TEMPORAL_API_NPM_DIR ${CMAKE_BINARY_DIR}/temporal-api-npm)
tock_npm_install(${CMAKE_SOURCE_DIR}/proto/temporal-api ${TEMPORAL_API_NPM_DIR} "the pinned Temporal API protos")

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
