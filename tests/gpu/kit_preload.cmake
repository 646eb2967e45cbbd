# Loaded with -DCMAKE_PROJECT_INCLUDE=<this file>, i.e. right after project(sparktorch) and before
# the project's find_package(Torch). Part of the GPU kit: tests/gpu/make_kit.sh copies it into the
# kit's cmake/ folder, and tests/gpu/build_and_check.sh passes it to CMake from there.
#
# Why: the pip wheel's Caffe2Config.cmake (torch/share/cmake/Caffe2) is built with
# CAFFE2_LINK_LOCAL_PROTOBUF (its own protobuf sits inside libtorch_cpu.so with hidden symbols), and
# then defines protobuf::libprotobuf as an ALIAS of an empty INTERFACE library ("dummy") when no
# such target exists yet. The project finds Torch before Protobuf, and FindProtobuf does not
# replace an existing protobuf::libprotobuf, so sparktorch_formats would link no libprotobuf at all
# (undefined google::protobuf symbols at link time). Finding Protobuf first makes the real
# imported target exist before Torch is loaded; the project's own find_package(Protobuf) later
# just finds it again.
find_package(Protobuf REQUIRED)
message(STATUS "kit: Protobuf ${Protobuf_VERSION}: library ${Protobuf_LIBRARY}, "
               "include ${Protobuf_INCLUDE_DIR}, protoc ${Protobuf_PROTOC_EXECUTABLE}")

# Fallback only (build_and_check.sh sets it on its second configure attempt): a LibTorch whose
# public/cuda.cmake still falls back to CUDA::nvToolsExt, which CUDA >= 12.9 no longer ships.
# Point that name at the header-only CUDA::nvtx3.
if(SPARKTORCH_KIT_NVTX_SHIM)
  find_package(CUDAToolkit QUIET)
  if(TARGET CUDA::nvtx3 AND NOT TARGET CUDA::nvToolsExt)
    add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
    target_link_libraries(CUDA::nvToolsExt INTERFACE CUDA::nvtx3)
    message(STATUS "kit: CUDA::nvToolsExt is an alias of CUDA::nvtx3 (shim)")
  endif()
endif()

# Fallback only (second build attempt, when the compiler says LibTorch's headers need C++20): the
# project sets CMAKE_CXX_STANDARD 17 after this file runs, so raise the standard on its targets
# once the top-level CMakeLists.txt has been read (a deferred call, CMake >= 3.19).
if(SPARKTORCH_KIT_CXX20)
  function(sparktorch_kit_cxx20)
    foreach(t IN ITEMS sparktorch sparktorch_core sparktorch_formats sparktorch_net sparktorch_pmi)
      if(TARGET ${t})
        set_property(TARGET ${t} PROPERTY CXX_STANDARD 20)
      endif()
    endforeach()
    message(STATUS "kit: CXX_STANDARD 20 on the sparktorch targets (fallback)")
  endfunction()
  cmake_language(DEFER CALL sparktorch_kit_cxx20)
endif()
