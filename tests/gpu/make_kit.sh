#!/usr/bin/env bash
# Makes the GPU kit (tests/gpu/README.md): everything besides the machine's compiler, CUDA and pip
# PyTorch that tests/gpu/build_and_check.sh needs to build sparktorch on a GPU machine with no
# network, where LibTorch comes from the pip wheel and none of the project's other dependencies
# are installed.
#
#   tests/gpu/make_kit.sh [KIT_DIR]    (default: .gpu at the repository root; any directory)
#
# Wipes KIT_DIR and makes it again (a failed run leaves the old kit as it was):
#   prefix/usr              the Debian bookworm packages below, unpacked with dpkg -x; docs (but
#                           the copyright files), man pages and static libraries removed;
#                           protoc, libprotoc and libspdlog get $ORIGIN RUNPATHs (patchelf) and
#                           the .pc files ${pcfiledir} paths, so that it works from any folder
#   zlib/                   zlib.h, zconf.h and a link-time lib/libz.so (zlib1g), for a machine
#                           without zlib headers
#   cmake/kit_preload.cmake a copy of tests/gpu/kit_preload.cmake
#   data/                   train.csv.gz (2,000 Fashion-MNIST rows), test.csv.gz (1,000 rows,
#                           label first) and test.labels, from the integration tests' data
#   build_and_check.sh      a copy of tests/gpu/build_and_check.sh, which finds the kit beside it
#
# Needs Debian's apt repositories (bookworm), patchelf (installed with apt-get when missing, which
# needs root) and the integration tests' data in BUILD_DIR (default build/): `ctest -R
# integration.data` writes it. Builds nothing and runs no tests.
set -euo pipefail

die() {
  echo "make_kit: error: $*" >&2
  exit 1
}
say() { echo "make_kit: $*" >&2; }

# The exact versions build_and_check.sh was checked with (README.md). The archive drops a version
# once a newer one replaces it; apt-get download then fails here, and the new version wants a new
# check on a GPU before it is pinned.
packages=(
  nlohmann-json3-dev=3.11.2-2
  libcli11-dev=2.1.2+ds-1
  libspdlog-dev=1:1.10.0+ds-0.4 libspdlog1.10=1:1.10.0+ds-0.4
  libfmt-dev=9.1.0+ds1-2 libfmt9=9.1.0+ds1-2
  libprotobuf-dev=3.21.12-3+deb12u1 libprotobuf32=3.21.12-3+deb12u1
  libprotobuf-lite32=3.21.12-3+deb12u1 libprotoc32=3.21.12-3+deb12u1
  protobuf-compiler=3.21.12-3+deb12u1
  # The Parquet codecs and the HMAC (issue 26: required since 25d8953; checked on a GPU 2026-11-27).
  libssl-dev=3.0.22-1~deb12u2 libssl3=3.0.22-1~deb12u2
  libsnappy-dev=1.1.9-3 libsnappy1v5=1.1.9-3 liblz4-dev=1.9.4-1 liblz4-1=1.9.4-1
  libbrotli-dev=1.0.9-2+deb12u1 libbrotli1=1.0.9-2+deb12u1
  libzstd-dev=1.5.4+dfsg2-5 libzstd1=1.5.4+dfsg2-5
)
zlib_packages=(zlib1g=1:1.2.13.dfsg-1 zlib1g-dev=1:1.2.13.dfsg-1)

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$repo/tests/gpu
kit=$(realpath -m "${1:-$repo/.gpu}")
data=$(realpath -m "${BUILD_DIR:-$repo/build}")/tests/integration/data
# The kit goes to other machines and users: no umask of this one's in its modes.
umask 022

# Everything that can fail for want of something is checked before anything is wiped.
for f in train2k.csv test2k.csv test2k.labels; do
  [[ -s $data/$f ]] || die "$data/$f is missing: run ctest -R integration.data first" \
    "(ctest --test-dir ${BUILD_DIR:-build} -R integration.data)"
done
[[ $kit != "$repo" && $kit != / ]] || die "refusing to use $kit as the kit folder"
if [[ -e $kit && ! -f $kit/build_and_check.sh ]] && [[ -n $(ls -A "$kit") ]]; then
  die "$kit is not empty and holds no build_and_check.sh: not a kit, so it is not wiped"
fi
for tool in apt-get dpkg gzip; do
  command -v "$tool" >/dev/null || die "$tool not found: this script needs Debian's tools"
done
if ! command -v patchelf >/dev/null; then
  ((EUID == 0)) || die "patchelf is missing: run this as root, or: sudo apt-get install patchelf"
  say "installing patchelf"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends patchelf
fi

# Made beside KIT_DIR, so that the kit replaces the old one in one rename at the end.
mkdir -p "$(dirname "$kit")"
stage=$(mktemp -d "$(dirname "$kit")/.make_kit.XXXXXX")
trap 'rm -rf "$stage" ${work:+"$work"}' EXIT
work=$(mktemp -d)
mkdir -p "$work/debs/prefix" "$work/debs/zlib" "$work/zlib"

# download: every .deb into $work/debs. As root, apt drops to the user _apt, who cannot write into
# mktemp's private folder; it would warn and download as root anyway.
download() {
  (cd "$work/debs/prefix" && apt-get download -q -o APT::Sandbox::User=root "${packages[@]}") &&
    (cd "$work/debs/zlib" && apt-get download -q -o APT::Sandbox::User=root "${zlib_packages[@]}")
}
say "downloading ${#packages[@]} + ${#zlib_packages[@]} packages"
if ! download; then
  # The package lists may be missing or stale (a fresh container); only root can update them.
  ((EUID == 0)) || die "apt-get download failed (as root, this script would run apt-get update)"
  say "apt-get download failed: apt-get update, then once more"
  apt-get update -q
  download || die "apt-get download failed: a pinned version may have left bookworm (see $0)"
fi

say "unpacking into $kit/prefix"
for deb in "$work"/debs/prefix/*.deb; do
  dpkg -x "$deb" "$stage/prefix"
done
for deb in "$work"/debs/zlib/*.deb; do
  dpkg -x "$deb" "$work/zlib"
done
usr=$stage/prefix/usr
lib=$usr/lib/x86_64-linux-gnu
[[ -x $usr/bin/protoc && -d $lib ]] || die "unexpected package layout: no $usr/bin/protoc or $lib"

# The copyright files stay: the kit passes these packages' files on. Dynamic linking only, so the
# static libraries are dead weight (9 MB of the 25).
find "$usr/share/doc" -mindepth 2 -maxdepth 2 ! -name copyright -exec rm -rf {} +
find "$usr/share/doc" -mindepth 1 -maxdepth 1 ! -type d -delete # libprotobuf-dev links to one
rm -rf "$usr/share/man"
find "$usr" -name '*.a' -delete

# The GPU machine has none of these libraries in its loader's path. protoc runs during the build;
# libprotoc (for protoc) and libspdlog (for the linker, which resolves libfmt.so.9 through it, and
# for sparktorch at run time) find their own dependencies beside them.
# shellcheck disable=SC2016  # $ORIGIN is for the loader, not the shell
{
  patchelf --set-rpath '$ORIGIN/../lib/x86_64-linux-gnu' "$usr/bin/protoc"
  patchelf --set-rpath '$ORIGIN' "$(readlink -f "$lib/libprotoc.so.32")"
  patchelf --set-rpath '$ORIGIN' "$(readlink -f "$lib/libspdlog.so.1.10")"
}
say "$("$usr/bin/protoc" --version) runs from the kit"

# The .pc files say /usr; relative to the .pc file itself they hold wherever the kit is.
# (The CMake config files are relative already.)
pcs=("$lib"/pkgconfig/*.pc "$usr"/share/pkgconfig/*.pc)
for pc in "${pcs[@]}"; do
  case $pc in
    "$lib"/*) up=../../.. ;;
    *) up=../.. ;;
  esac
  # shellcheck disable=SC2016  # ${pcfiledir} and ${prefix} are pkg-config's
  sed -i -e "s|^prefix=/usr\$|prefix=\${pcfiledir}/$up|" \
    -e 's|^exec_prefix=/usr$|exec_prefix=${prefix}|' -e 's|^libdir=/usr/|libdir=${prefix}/|' \
    -e "s|-I/usr/include|-I\${pcfiledir}/$up/include|g" "$pc"
done
if grep -n /usr "${pcs[@]}"; then
  die "a .pc file still names /usr (above): teach make_kit.sh its form"
fi

# Only for a machine without zlib headers. A plain file under the link-time name: its SONAME
# libz.so.1 makes sparktorch load the machine's own zlib at run time.
mkdir -p "$stage/zlib/include" "$stage/zlib/lib" "$stage/zlib/share/doc"
cp "$work/zlib/usr/include/zlib.h" "$work/zlib/usr/include/zconf.h" "$stage/zlib/include/"
cp "$(readlink -f "$work/zlib/lib/x86_64-linux-gnu/libz.so.1")" "$stage/zlib/lib/libz.so"
cp "$work/zlib/usr/share/doc/zlib1g/copyright" "$stage/zlib/share/doc/copyright"

mkdir -p "$stage/cmake" "$stage/data"
cp "$here/kit_preload.cmake" "$stage/cmake/"
cp "$here/build_and_check.sh" "$stage/"
chmod 755 "$stage/build_and_check.sh"

# build_and_check.sh predicts exactly 1,000 test rows. gzip -n: no name or time in the header,
# so the same rows make the same bytes.
say "data from $data"
gzip -9 -n -c "$data/train2k.csv" >"$stage/data/train.csv.gz"
head -n 1000 "$data/test2k.csv" | gzip -9 -n -c >"$stage/data/test.csv.gz"
head -n 1000 "$data/test2k.labels" >"$stage/data/test.labels"
[[ $(wc -l <"$stage/data/test.labels") == 1000 ]] || die "$data/test2k.labels has under 1,000 rows"

chmod 755 "$stage"
rm -rf "$kit"
mv "$stage" "$kit"
say "kit: $kit, $(du -sh "$kit" | cut -f1) ($(find "$kit" -type f | wc -l) files)"
