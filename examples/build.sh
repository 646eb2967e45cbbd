#!/usr/bin/env bash
# Configures and builds sparktorch with Ninja in Release mode.
#   BUILD_DIR   build folder (default: build/ at the repository root)
#   CMAKE_ARGS  extra cmake arguments, e.g. CMAKE_ARGS="-DCMAKE_PREFIX_PATH=/opt/libtorch"
#   JOBS        parallel jobs (default: all cores)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
# An existing build folder keeps the generator it was configured with.
generator=(-G Ninja)
[[ -f $build_dir/CMakeCache.txt ]] && generator=()
# shellcheck disable=SC2086  # CMAKE_ARGS is a list of words
cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
# The torch2 build (core/libtorch_wheel.cmake) is a `cmake --build` inside this one: the same jobs.
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-$(nproc)}
cmake --build "$build_dir" --parallel "$CMAKE_BUILD_PARALLEL_LEVEL"
