#!/usr/bin/env bash
# Installs the Debian bookworm packages that sparktorch builds, tests and runs its examples with.
# Idempotent: installs only what is missing, and runs `apt-get update` only then. Needs root when
# something is missing; when everything is present it changes nothing and prints one line.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates zlib1g-dev
  libssl-dev  # libcrypto: HMAC-SHA256, the tracker's and parameter server's authentication
  libsnappy-dev  # SNAPPY pages in Parquet files (Spark's default codec)
  libzstd-dev  # ZSTD pages in Parquet files
  liblz4-dev  # LZ4_RAW and LZ4 pages in Parquet files
  libbrotli-dev  # BROTLI pages in Parquet files (and Brotli's encoder, for the tests)
  libtorch-dev libopenblas0-pthread
  libcli11-dev libprotobuf-dev protobuf-compiler nlohmann-json3-dev libspdlog-dev
  libbenchmark-dev libgtest-dev clang libclang-rt-14-dev
  libopenmpi-dev openmpi-bin
  patchelf  # the binary's faster start (cli/link_order.sh) and the bundle (examples/make_bundle.sh)
  default-jdk-headless  # javac: sparktorch-spark.jar, the Spark layer's row encoder
  dataset-fashion-mnist python3 python3-torch python3-numpy
  man-db groff-base  # man -l: integration.man_pages renders the pages in man/
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$package")
done

# LibTorch calls whatever libblas.so.3 the system selects; the reference BLAS is ~15x slower for
# an MLP. Installing OpenBLAS selects it automatically, unless an administrator pinned another.
check_blas() {
  local blas
  for blas in /usr/lib/*-linux-gnu/libblas.so.3; do
    [[ -e $blas ]] || continue
    case $(readlink -f "$blas") in
      *openblas*) ;;
      *) echo "install_deps: warning: $blas is $(readlink -f "$blas"), not OpenBLAS;" \
           "training will be slow (update-alternatives --config libblas.so.3-*)" >&2 ;;
    esac
  done
}

if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#packages[@]} packages present"
  check_blas
  exit 0
fi

if ((EUID != 0)); then
  echo "install_deps: missing Debian packages: ${missing[*]}" >&2
  echo "install_deps: run this script as root, or:" \
    "sudo apt-get install --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
check_blas
