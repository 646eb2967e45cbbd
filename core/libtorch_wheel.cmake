# LibTorch from a pip PyTorch 2.x (the wheel's site-packages/torch folder), on a machine without
# CUDA: Debian's LibTorch 1.13 cannot compile the TorchScript of models that call newer operators
# (nn.RMSNorm's aten::rms_norm, the transformer layers' aten::scaled_dot_product_attention).
#
# sparktorch_wheel_version(VAR WHEEL): sets VAR to the LibTorch version of the torch folder WHEEL
# ("2.15.0", from its headers' TORCH_VERSION), or to "" when it has none.
function(sparktorch_wheel_version var wheel)
  set(version "")
  foreach(header include/torch/headeronly/version.h
                 include/torch/csrc/api/include/torch/version.h)
    if(NOT version AND EXISTS ${wheel}/${header})
      file(STRINGS ${wheel}/${header} line REGEX "^ *\"[0-9]+[.][0-9]+[.][0-9]+\"")
      string(REGEX MATCH "[0-9]+[.][0-9]+[.][0-9]+" version "${line}")
    endif()
  endforeach()
  set(${var} "${version}" PARENT_SCOPE)
endfunction()

# sparktorch_libtorch_from_wheel(WHEEL): the imported target sparktorch::libtorch, for
# libtorch_cpu.so and libc10.so of WHEEL, and SPARKTORCH_LIBTORCH_VERSION ("2.15.0"), in the
# caller's scope. Configuring fails, naming the file, when WHEEL lacks one.
#
# Why not find_package(Torch): PyPI's wheel is a CUDA build, and its Caffe2 config (cuda.cmake)
# requires a CUDA toolkit; it would also alias protobuf::libprotobuf to an empty target
# (tests/gpu/kit_preload.cmake). The binary needs only the CPU half: never libtorch.so or
# libtorch_cuda.so, so torch::cuda::is_available() is false and --device cuda exits 6.
# libtorch_cpu.so still loads libcudart and libcupti (and the wheel's libgomp); its own RPATH
# finds them where pip put them (site-packages/nvidia/cu13/lib), so the binary's RUNPATH names
# only torch/lib.
#
# The headers: the wheel's include/ also holds fmt 12 and protobuf's headers, which would shadow
# Debian's fmt 9 (spdlog's) and protobuf 3.21 (formats/ps.pb.h) and break the link; so the
# compiler sees a folder of the build tree that links to the wheel's ATen, c10, caffe2 and torch
# only. LibTorch 2.x's headers require C++20: the target asks for it (CMake compiles whatever
# links it as C++20; the rest of the project stays C++17).
function(sparktorch_libtorch_from_wheel wheel)
  foreach(file ${wheel}/lib/libtorch_cpu.so ${wheel}/lib/libc10.so
               ${wheel}/include/torch/csrc/api/include/torch/torch.h)
    if(NOT EXISTS ${file})
      message(FATAL_ERROR "SPARKTORCH_TORCH_WHEEL=${wheel}: no ${file}; set it to the torch "
                          "folder of a pip PyTorch 2.x (python -c 'import torch; print(torch.__path__[0])')")
    endif()
  endforeach()
  sparktorch_wheel_version(version ${wheel})
  if(NOT version MATCHES "^2[.]")
    message(FATAL_ERROR "SPARKTORCH_TORCH_WHEEL=${wheel}: LibTorch '${version}', not 2.x")
  endif()

  set(include ${PROJECT_BINARY_DIR}/libtorch_wheel/include)
  file(REMOVE_RECURSE ${include})
  file(MAKE_DIRECTORY ${include})
  foreach(dir ATen c10 caffe2 torch)
    file(CREATE_LINK ${wheel}/include/${dir} ${include}/${dir} SYMBOLIC)
  endforeach()

  add_library(sparktorch_wheel_c10 SHARED IMPORTED)
  set_target_properties(sparktorch_wheel_c10 PROPERTIES IMPORTED_LOCATION ${wheel}/lib/libc10.so)
  add_library(sparktorch::libtorch SHARED IMPORTED)
  set_target_properties(sparktorch::libtorch PROPERTIES
    IMPORTED_LOCATION ${wheel}/lib/libtorch_cpu.so
    INTERFACE_LINK_LIBRARIES sparktorch_wheel_c10
    INTERFACE_INCLUDE_DIRECTORIES "${include};${wheel}/include/torch/csrc/api/include"
    INTERFACE_COMPILE_FEATURES cxx_std_20)
  set(SPARKTORCH_LIBTORCH_VERSION ${version} PARENT_SCOPE)
  message(STATUS "LibTorch ${version} from the wheel at ${wheel} (libtorch_cpu, libc10)")
endfunction()

# sparktorch_add_torch2_build(PYENV): when PYENV's base environment (examples/install_python.sh)
# has PyTorch 2.x, the external project sparktorch_torch2 builds a second sparktorch (and
# libsparktorch_pmi.so) against its LibTorch in the build tree's torch2/, from this same source
# tree, as part of the normal build: the same options, with the tests, the benchmarks and
# cli/link_order.sh off and the LibTorch targets compiled as unity batches (2.3 min on 2 cores
# instead of 7.4). Sets SPARKTORCH_TORCH2_DIR, SPARKTORCH_TORCH2_WHEEL and SPARKTORCH_TORCH2_VERSION
# in the caller's scope, or leaves them unset (with a status line) when there is no PyTorch 2.x.
function(sparktorch_add_torch2_build pyenv)
  file(GLOB wheel LIST_DIRECTORIES true ${pyenv}/base/lib/python3*/site-packages/torch)
  set(version "")
  if(wheel)
    list(GET wheel 0 wheel)
    sparktorch_wheel_version(version ${wheel})
  endif()
  if(NOT version MATCHES "^2[.]")
    message(STATUS "No PyTorch 2.x in ${pyenv}/base (examples/install_python.sh): no torch2/sparktorch")
    return()
  endif()
  set(dir ${PROJECT_BINARY_DIR}/torch2)
  include(ExternalProject)
  ExternalProject_Add(sparktorch_torch2
    SOURCE_DIR ${PROJECT_SOURCE_DIR}
    BINARY_DIR ${dir}
    CMAKE_ARGS
      -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
      -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}
      -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
      -DSPARKTORCH_TORCH_WHEEL=${wheel}
      -DSPARKTORCH_PYENV=${pyenv}
      -DSPARKTORCH_WITH_MPI=${SPARKTORCH_WITH_MPI}
      -DSPARKTORCH_PCH=${SPARKTORCH_PCH}
      -DSPARKTORCH_UNITY_BUILD=ON
      -DSPARKTORCH_BUILD_TESTS=OFF
      -DSPARKTORCH_BUILD_BENCHMARKS=OFF
      -DSPARKTORCH_GPU_CHECK=OFF
    BUILD_COMMAND ${CMAKE_COMMAND} --build ${dir} --target sparktorch sparktorch_pmi
    BUILD_ALWAYS ON  # the inner build decides what changed
    INSTALL_COMMAND "")
  set(SPARKTORCH_TORCH2_DIR ${dir} PARENT_SCOPE)
  set(SPARKTORCH_TORCH2_WHEEL ${wheel} PARENT_SCOPE)
  set(SPARKTORCH_TORCH2_VERSION ${version} PARENT_SCOPE)
  message(STATUS "torch2/sparktorch: against LibTorch ${version} from ${wheel}")
endfunction()
