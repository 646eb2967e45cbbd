#!/usr/bin/env bash
# Makes the relocatable bundle (DESIGN.md section 9): the sparktorch binary, libsparktorch_pmi.so
# and every non-glibc library they load, with $ORIGIN-relative RUNPATHs, as one tar.gz that runs
# from any directory with LD_LIBRARY_PATH unset on any x86-64 Linux with glibc >= 2.36.
#
#   examples/make_bundle.sh BUILD_DIR OUTPUT.tar.gz
#
# (`cmake --build build --target bundle` runs it.) The archive has no top-level directory, so that
# `spark-submit --archives OUTPUT.tar.gz#sparktorch` puts the binary at ./sparktorch/sparktorch:
#
#   sparktorch                the binary                        RUNPATH $ORIGIN/lib
#   libsparktorch_pmi.so      the PMI client, found beside it   RUNPATH $ORIGIN/lib
#   sparktorch-spark.jar      the Spark layer's row encoder, when the build made it (a JDK)
#   lib/                      every other library, under its SONAME; RUNPATH $ORIGIN
#   lib/ucx/, lib/hwloc/      UCX's and hwloc's plugins
#   openmpi/                  Open MPI's prefix: the binary sets OPAL_PREFIX to it
#     lib/.../openmpi3/       the MCA plugins (mca_*.so), RUNPATH up to lib/
#     share/openmpi/          help texts and parameter sets
#     etc/                    Debian's openmpi-mca-params.conf (OPAL_SYSCONFDIR)
#
# glibc's own libraries stay out: every executor has them, and a copied libc would not match the
# executor's ld-linux. Dependencies are those the loader resolves (ldd), so the bundle holds what
# this machine loads: libblas.so.3 and liblapack.so.3 are the files the alternatives select
# (OpenBLAS, on a machine set up by examples/install_deps.sh), copied under those SONAMEs.
# Needs patchelf, and ompi_info (openmpi-bin) when the binary links Open MPI.
set -euo pipefail

die() {
  echo "make_bundle: error: $*" >&2
  exit 1
}
say() { echo "make_bundle: $*" >&2; }

(($# == 2)) || die "usage: $0 BUILD_DIR OUTPUT.tar.gz"
build=$1
output=$2
for f in sparktorch libsparktorch_pmi.so; do
  [[ -f $build/$f ]] || die "$build/$f not found: build sparktorch first (ninja -C $build)"
done
for tool in patchelf ldd tar; do
  command -v "$tool" >/dev/null || die "$tool not found (examples/install_deps.sh installs it)"
done
started=$(date +%s.%N)

out_dir=$(cd "$(dirname "$output")" && pwd) || die "no directory for $output"
stage=$(mktemp -d "$out_dir/.bundle.XXXXXX")
trap 'rm -rf "$stage" "$output.tmp"' EXIT
mkdir "$stage/lib"

# glibc's libraries, by SONAME: left to the executor (with the NSS modules that glibc loads as the
# executor's nsswitch.conf says).
glibc_re='^(ld-linux-x86-64\.so\.2|linux-vdso\.so\.1|(libc|libm|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libBrokenLocale|libmvec|libthread_db|libc_malloc_debug|libmemusage|libpcprofile|libnss_[a-z0-9]+)\.so\.[0-9.]+)$'

# ldd's lines: "\tSONAME => PATH (ADDRESS)", "\tSONAME => not found".
found_re='^[[:space:]]*([^[:space:]]+) => (/[^[:space:]]+) \('
missing_re='^[[:space:]]*([^[:space:]]+) => not found'

# needed FILE...: prints "SONAME PATH" for every non-glibc library the loader would load for each
# FILE (transitively), and fails on one it cannot find.
needed() {
  local file line soname path
  for file in "$@"; do
    # ldd exits non-zero for a file that is not dynamic; the output is what matters.
    while IFS= read -r line; do
      if [[ $line =~ $missing_re ]]; then
        die "${BASH_REMATCH[1]}, needed by $file, not found by the loader" \
          "(install its package, or add its directory to LD_LIBRARY_PATH)"
      elif [[ $line =~ $found_re ]]; then
        soname=${BASH_REMATCH[1]} path=${BASH_REMATCH[2]}
        [[ $soname =~ $glibc_re ]] || echo "$soname $path"
      fi
    done < <(ldd "$file" 2>&1 || true)
  done
}

# set_runpath DIR_OF_LIBS FILE...: gives each FILE a RUNPATH of $ORIGIN/<path from it to DIR>.
set_runpath() {
  local libs=$1 file rel
  shift
  for file in "$@"; do
    rel=$(realpath --relative-to="$(dirname "$file")" "$libs")
    if [[ $rel == . ]]; then rel="\$ORIGIN"; else rel="\$ORIGIN/$rel"; fi
    chmod u+w "$file"
    patchelf --set-rpath "$rel" "$file" || die "patchelf failed on $file"
  done
}

cp "$build/sparktorch" "$build/libsparktorch_pmi.so" "$stage/"
if [[ -f $build/sparktorch-spark.jar ]]; then
  cp "$build/sparktorch-spark.jar" "$stage/"
else
  say "no $build/sparktorch-spark.jar (built with a JDK): the bundle goes without it"
fi
roots=("$build/sparktorch" "$build/libsparktorch_pmi.so")
copies=("$stage/sparktorch" "$stage/libsparktorch_pmi.so")

# Open MPI: its plugins and data files, at the same paths below openmpi/ as below its prefix here,
# which is what OPAL_PREFIX relocates.
needed "$build/sparktorch" >"$stage/.needed"  # not in a pipe: its errors end this script
if grep -q '^libmpi\.so' "$stage/.needed"; then
  command -v ompi_info >/dev/null || die "the binary links Open MPI but ompi_info is missing (install openmpi-bin)"
  ompi_path() { ompi_info --path "$1" | sed -n 's/^ *[A-Za-z]*: //p'; }
  prefix=$(ompi_path prefix)
  pkglibdir=$(ompi_path pkglibdir)
  pkgdatadir=$(ompi_path pkgdatadir)
  sysconfdir=$(ompi_path sysconfdir)
  for dir in "$pkglibdir" "$pkgdatadir"; do
    [[ $dir == "$prefix"/* && -d $dir ]] ||
      die "Open MPI's $dir is not a directory below its prefix $prefix: OPAL_PREFIX cannot relocate it"
  done
  mpi=$stage/openmpi
  mkdir -p "$mpi/${pkglibdir#"$prefix"/}" "$mpi/${pkgdatadir#"$prefix"/}" "$mpi/etc"
  for plugin in "$pkglibdir"/*.so; do
    cp -L "$plugin" "$mpi/${pkglibdir#"$prefix"/}/"
    roots+=("$plugin")
    copies+=("$mpi/${pkglibdir#"$prefix"/}/$(basename "$plugin")")
  done
  cp -a "$pkgdatadir/." "$mpi/${pkgdatadir#"$prefix"/}/"
  # Debian's defaults (they exclude the InfiniBand and UCX transports) travel with the bundle; an
  # executor's own /etc/openmpi, if it has one, belongs to another Open MPI.
  if [[ -f $sysconfdir/openmpi-mca-params.conf ]]; then
    cp "$sysconfdir/openmpi-mca-params.conf" "$mpi/etc/"
  fi
fi

# Libraries that load plugins of their own from a directory beside themselves: UCX's transports
# (libucs finds ucx/ beside itself) and hwloc's topology plugins (hwloc/; the binary points
# HWLOC_PLUGINS_PATH there). The plugins go to the same place below lib/.
needed "${roots[@]}" >"$stage/.needed"
for pair in 'libucs[.]so:ucx' 'libhwloc[.]so:hwloc'; do
  lib=$(awk -v re="^${pair%%:*}" '$1 ~ re { print $2; exit }' "$stage/.needed")
  [[ -n $lib ]] || continue
  dir=$(dirname "$(realpath "$lib")")/${pair#*:}
  [[ -d $dir ]] || continue
  mkdir "$stage/lib/${pair#*:}"
  cp -a "$dir"/*.so* "$stage/lib/${pair#*:}/"
  while read -r -d '' plugin; do
    copies+=("$plugin")
    needed "$dir/$(basename "$plugin")" >>"$stage/.needed"
  done < <(find "$stage/lib/${pair#*:}" -type f -print0)
done

# Every library, once, under its SONAME; one SONAME resolved to two different files is an error.
declare -A source_of
while read -r soname path; do
  if [[ -n ${source_of[$soname]:-} ]]; then
    [[ $(realpath "$path") == "$(realpath "${source_of[$soname]}")" ]] ||
      cmp -s "$path" "${source_of[$soname]}" ||
      die "$soname resolves to both ${source_of[$soname]} and $path"
    continue
  fi
  source_of[$soname]=$path
  cp -L "$path" "$stage/lib/$soname"
done < <(sort -u "$stage/.needed")
say "${#source_of[@]} libraries, ${#copies[@]} programs and plugins"

set_runpath "$stage/lib" "${copies[@]}" "$stage"/lib/*.so*

# Check the result as an executor would see it: every object resolves every library inside the
# bundle or to glibc, and the binary starts.
while read -r -d '' file; do
  while IFS= read -r line; do
    [[ $line =~ $missing_re ]] && die "${file#"$stage"/} finds no ${BASH_REMATCH[1]}"
    [[ $line =~ $found_re ]] || continue
    soname=${BASH_REMATCH[1]} path=${BASH_REMATCH[2]}
    [[ $soname =~ $glibc_re || $path == "$stage"/* ]] ||
      die "${file#"$stage"/} loads $soname from $path, outside the bundle"
  done < <(env -u LD_LIBRARY_PATH ldd "$file" 2>&1 || true)
done < <(find "$stage" -type f -name '*.so*' -print0; printf '%s\0' "$stage/sparktorch")
version=$(env -u LD_LIBRARY_PATH "$stage/sparktorch" --version) || die "the bundled binary does not start"

compress=gzip
command -v pigz >/dev/null && compress=pigz
entries=(sparktorch libsparktorch_pmi.so lib)
[[ -d $stage/openmpi ]] && entries+=(openmpi)
[[ -f $stage/sparktorch-spark.jar ]] && entries+=(sparktorch-spark.jar)
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner -cf - "${entries[@]}" |
  "$compress" >"$output.tmp"
mv "$output.tmp" "$output"
say "$version: $output, $(du -m "$output" | cut -f1) MB ($(du -sm "$stage" | cut -f1) MB unpacked)" \
  "in $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s"
