# Installs an executable stripped, its debug information apart, as Debian packages do:
# bin/NAME carries no DWARF (the build tree's copies carry about 140 MB of it) and
# lib/debug/.build-id/XX/REST.debug holds it, found by gdb and perf through the binary's
# build id (set `debug-file-directory` to PREFIX/lib/debug for a prefix other than /usr) or
# its .gnu_debuglink. Without binutils' objcopy and readelf the binary is installed as built.

function(tock_install_stripped target)
  install(TARGETS ${target} RUNTIME DESTINATION bin)
  if(NOT CMAKE_OBJCOPY OR NOT CMAKE_READELF)
    return()
  endif()
  # At install time (the prefix may be given to `cmake --install --prefix`): split, strip,
  # link the two by build id and debuglink.
  install(CODE "
    set(binary \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin/${target}\")
    execute_process(COMMAND \"${CMAKE_READELF}\" -n \"\${binary}\" OUTPUT_VARIABLE notes)
    string(REGEX MATCH \"Build ID: ([0-9a-f][0-9a-f])([0-9a-f]+)\" _ \"\${notes}\")
    if(CMAKE_MATCH_1)
      set(debug_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/debug/.build-id/\${CMAKE_MATCH_1}\")
      set(debug_file \"\${debug_dir}/\${CMAKE_MATCH_2}.debug\")
    else()
      set(debug_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/debug/bin\")
      set(debug_file \"\${debug_dir}/${target}.debug\")
    endif()
    file(MAKE_DIRECTORY \"\${debug_dir}\")
    message(STATUS \"Debug information: \${debug_file}\")
    execute_process(COMMAND \"${CMAKE_OBJCOPY}\" --only-keep-debug --compress-debug-sections
                            \"\${binary}\" \"\${debug_file}\" COMMAND_ERROR_IS_FATAL ANY)
    execute_process(COMMAND \"${CMAKE_OBJCOPY}\" --strip-debug --strip-unneeded
                            \"--add-gnu-debuglink=\${debug_file}\" \"\${binary}\"
                    COMMAND_ERROR_IS_FATAL ANY)
  ")
endfunction()
