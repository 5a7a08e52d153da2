# Installs the npm packages a lockfile pins into a directory of the build, once per lockfile
# content (a stamp holds the lockfile's hash): `npm ci --ignore-scripts`, so exactly the
# versions and integrity hashes the lockfile names, and no package's scripts run. A rebuild
# never downloads again. Used for the Temporal protos and the web console's libraries.
function(tock_npm_install SOURCE_DIR DEST_DIR WHAT)
  set(_lock ${SOURCE_DIR}/package-lock.json)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_lock})  # edited: configure again
  file(SHA256 ${_lock} _hash)
  set(_stamp ${DEST_DIR}/installed.stamp)
  set(_installed "")
  if(EXISTS ${_stamp})
    file(READ ${_stamp} _installed)
  endif()
  if(_installed STREQUAL _hash)
    return()
  endif()
  find_program(NPM_PROGRAM npm REQUIRED)
  message(STATUS "Installing ${WHAT} with npm ci")
  file(REMOVE_RECURSE ${DEST_DIR})
  file(MAKE_DIRECTORY ${DEST_DIR})
  file(COPY ${SOURCE_DIR}/package.json ${_lock} DESTINATION ${DEST_DIR})
  execute_process(
    COMMAND ${NPM_PROGRAM} ci --ignore-scripts --no-audit --no-fund --loglevel=error
    WORKING_DIRECTORY ${DEST_DIR}
    RESULT_VARIABLE _result)
  if(NOT _result EQUAL 0)
    message(FATAL_ERROR "npm ci of ${WHAT} failed (${_result})")
  endif()
  file(WRITE ${_stamp} ${_hash})
endfunction()
