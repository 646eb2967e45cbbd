# sparktorch_link_formats_libraries(TARGET SCOPE): links TARGET, with SCOPE (PRIVATE, PUBLIC), to
# the libraries that formats/ calls besides protobuf and nlohmann/json: libcrypto (HMAC-SHA256,
# formats/hmac_sha256.cc) and the Parquet page codecs (formats/parquet/decompress.cc): libsnappy,
# libzstd, liblz4 and libbrotlidec (GZIP's zlib comes from find_package(ZLIB), which core needs
# too). All are required: configuring fails with the name of the Debian package that is missing
# (examples/install_deps.sh installs them all). The main build and the fuzz build (tests/fuzz)
# both use it.

# sparktorch_require_library(NAME HEADER LIBRARY PACKAGE WHY): the imported target
# sparktorch::NAME for LIBRARY (found with HEADER), or a configure error naming PACKAGE.
function(sparktorch_require_library name header library package why)
  if(TARGET sparktorch::${name})
    return()
  endif()
  find_path(SPARKTORCH_${name}_INCLUDE_DIR ${header})
  find_library(SPARKTORCH_${name}_LIBRARY ${library})
  if(NOT SPARKTORCH_${name}_INCLUDE_DIR OR NOT SPARKTORCH_${name}_LIBRARY)
    message(FATAL_ERROR "lib${library} (${header}) not found; it is needed for ${why}. "
                        "Debian: apt-get install ${package} (or run examples/install_deps.sh)")
  endif()
  add_library(sparktorch::${name} UNKNOWN IMPORTED)
  set_target_properties(sparktorch::${name} PROPERTIES
    IMPORTED_LOCATION ${SPARKTORCH_${name}_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${SPARKTORCH_${name}_INCLUDE_DIR})
endfunction()

function(sparktorch_link_formats_libraries target scope)
  sparktorch_require_library(crypto openssl/hmac.h crypto libssl-dev
                             "HMAC-SHA256 (the tracker's and parameter server's authentication)")
  sparktorch_require_library(snappy snappy-c.h snappy libsnappy-dev "SNAPPY pages in Parquet files")
  sparktorch_require_library(zstd zstd.h zstd libzstd-dev "ZSTD pages in Parquet files")
  sparktorch_require_library(lz4 lz4.h lz4 liblz4-dev "LZ4 and LZ4_RAW pages in Parquet files")
  sparktorch_require_library(brotlidec brotli/decode.h brotlidec libbrotli-dev
                             "BROTLI pages in Parquet files")
  target_link_libraries(${target} ${scope} sparktorch::crypto sparktorch::snappy
                        sparktorch::zstd sparktorch::lz4 sparktorch::brotlidec)
endfunction()
