# Links gRPC, protobuf, Abseil, re2, c-ares, zlib, yaml-cpp, SQLite and FarmHash statically.
#
# Why: Debian ships these as ~60 shared libraries, and resolving their symbols at every
# process start costs `tock` about 10 ms (measured: `tock --help` 16 ms dynamic, 5.6 ms
# static). A CLI is started per command, so that start-up is the user's latency. Debian
# also ships the static archives, so this only repoints the imported targets at them.
# OpenSSL stays shared, except in the binaries that set the target property
# TOCK_STATIC_OPENSSL (the `tock` CLI, see below); libcurl stays shared and is opened at first
# use (lib/common/lazy_library.h).

function(tock_prefer_static_archive target)
  if(NOT TARGET ${target})
    return()
  endif()
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    return()
  endif()
  foreach(_prop IMPORTED_LOCATION IMPORTED_LOCATION_NONE IMPORTED_LOCATION_RELEASE
                IMPORTED_LOCATION_RELWITHDEBINFO IMPORTED_LOCATION_NOCONFIG)
    get_target_property(_loc ${target} ${_prop})
    if(_loc AND _loc MATCHES "^(.*)\\.so(\\.[0-9.]+)?$")
      set(_archive "${CMAKE_MATCH_1}.a")
      if(EXISTS "${_archive}")
        set_target_properties(${target} PROPERTIES ${_prop} "${_archive}")
      endif()
    endif()
  endforeach()
endfunction()

get_directory_property(_imported IMPORTED_TARGETS)
foreach(_t IN LISTS _imported)
  if(_t MATCHES "^(gRPC|protobuf|absl|re2|c-ares|ZLIB)::" OR _t STREQUAL "yaml-cpp"
     OR _t STREQUAL "SQLite::SQLite3" OR _t STREQUAL "farmhash::farmhash")
    tock_prefer_static_archive(${_t})
  endif()
endforeach()

# re2 reaches gRPC's link line as a bare `-lre2`.
if(TARGET re2::re2)
  get_target_property(_re2_type re2::re2 TYPE)
  if(_re2_type STREQUAL "INTERFACE_LIBRARY")
    find_library(RE2_STATIC_LIBRARY NAMES libre2.a)
    if(RE2_STATIC_LIBRARY)
      set_target_properties(re2::re2 PROPERTIES INTERFACE_LINK_LIBRARIES "${RE2_STATIC_LIBRARY}")
    endif()
  endif()
endif()

# OpenSSL's static archives for the targets with TOCK_STATIC_OPENSSL set: `tock`, a non-PIE
# executable, has no relocations of its own to apply at start, while the shared libcrypto and
# libssl cost it their loading and relocation at every start (issue 12: `tock --help` 21.8 ->
# 15.5 ms with the rest of cmd/tock/CMakeLists.txt's flags). Everything else keeps the system's
# shared OpenSSL. gRPC links OpenSSL through these two targets; so does lib/archival.
find_library(TOCK_LIBSSL_A NAMES libssl.a)
find_library(TOCK_LIBCRYPTO_A NAMES libcrypto.a)
if(TOCK_LIBSSL_A AND TOCK_LIBCRYPTO_A AND TARGET OpenSSL::SSL AND TARGET OpenSSL::Crypto
   AND TARGET gRPC::grpc)
  set(_tock_static_openssl "$<BOOL:$<TARGET_PROPERTY:TOCK_STATIC_OPENSSL>>")
  # Statically, libssl.a comes with every libcrypto.a and before it: the archives are read
  # once, in order, so libssl's own calls into libcrypto must find libcrypto after it.
  add_library(tock_openssl_crypto INTERFACE)
  target_link_libraries(tock_openssl_crypto INTERFACE
    "$<${_tock_static_openssl}:${TOCK_LIBSSL_A}>" "$<${_tock_static_openssl}:${TOCK_LIBCRYPTO_A}>"
    "$<$<NOT:${_tock_static_openssl}>:OpenSSL::Crypto>")
  add_library(tock_openssl_ssl INTERFACE)
  target_link_libraries(tock_openssl_ssl INTERFACE
    "$<$<NOT:${_tock_static_openssl}>:OpenSSL::SSL>" tock_openssl_crypto)
  get_target_property(_grpc_links gRPC::grpc INTERFACE_LINK_LIBRARIES)
  list(TRANSFORM _grpc_links REPLACE "^OpenSSL::SSL$" tock_openssl_ssl)
  list(TRANSFORM _grpc_links REPLACE "^OpenSSL::Crypto$" tock_openssl_crypto)
  set_target_properties(gRPC::grpc PROPERTIES INTERFACE_LINK_LIBRARIES "${_grpc_links}")
endif()
