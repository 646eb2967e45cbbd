# sparktorch_use_zstd(TARGET SCOPE): TARGET's Parquet reader (formats/parquet/decompress.cc)
# reads ZSTD pages, through libzstd where it is here (Debian: libzstd-dev, which
# examples/install_deps.sh installs), linked with SCOPE (PRIVATE, PUBLIC). Without it the reader
# refuses ZSTD pages, and its message says ZSTD needs a build with libzstd. The main build and the
# fuzz build (tests/fuzz) both use it.
function(sparktorch_use_zstd target scope)
  find_path(SPARKTORCH_ZSTD_INCLUDE_DIR zstd.h)
  find_library(SPARKTORCH_ZSTD_LIBRARY zstd)
  if(SPARKTORCH_ZSTD_INCLUDE_DIR AND SPARKTORCH_ZSTD_LIBRARY)
    target_compile_definitions(${target} PRIVATE SPARKTORCH_HAVE_ZSTD=1)
    target_include_directories(${target} PRIVATE ${SPARKTORCH_ZSTD_INCLUDE_DIR})
    target_link_libraries(${target} ${scope} ${SPARKTORCH_ZSTD_LIBRARY})
  else()
    message(STATUS "No libzstd (zstd.h): the Parquet reader refuses ZSTD pages")
  endif()
endfunction()
