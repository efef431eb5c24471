#!/usr/bin/env bash
# Provisions the newest llama.cpp as a distribution ships it: Debian sid's llama.cpp-tools, libllama0 and
# libggml0 (tools that call llama_process with a llama_batch_ext, CPU variants dlopen'ed from a backends
# directory, OpenMP on, stripped libraries) and llama.cpp-services (the packaged llama-server unit), unpacked
# into a root of their own with sid's libc, as a container image carries them. The host never runs them
# directly: src/scripts/container-run.sh starts a tool from this root in its own namespaces.
# The root is made with mmdebstrap's extract variant (unpack only, no maintainer script runs; ~15 s here), then
# fixed by hand where a maintainer script would have: the /bin, /lib, /lib64 links, /proc, /models, the
# service user. Idempotent: skipped when its stamp exists.
# Beside it, sid's libggml0 for the other architecture (arm64 on x86_64, amd64 on aarch64), fetched with plain
# apt-get download through a private sources list and state (the host's apt configuration is not touched) and
# unpacked with dpkg -x into foreign-arch/<arch>/: never run, only read, so the stripped-library recovery is
# tested on both instruction sets. Skipped when foreign-arch/<arch>.stamp exists (it holds the version).
# And sid's libggml-dev of the root's own libggml0 version (its headers), unpacked into ggml-dev/: the tests build an
# engine that drives ggml's scheduler itself (src/test/native/sched-engine.c) against it, to run in the root.
# Skipped when ggml-dev.stamp exists.
# Then a second root, vulkan-root/: the same tools with sid's libggml0-backend-vulkan (a Vulkan build nobody
# here compiled: stripped, dlopen'ed from the backends directory) and Mesa's lavapipe (mesa-vulkan-drivers,
# Vulkan on the CPU) from sid, so VulkanDistroIT runs sid's llama-bench offloaded in a container. Apart from
# the first root, which other tests read as it is. Skipped when vulkan-root.stamp exists; its time is printed.
# And a third, blas-root/: the same tools with sid's libggml0-backend-blas and OpenBLAS, so BackendsIT sees ggml's
# scheduler split a prefill between the CPU and BLAS in a build nobody here compiled (seconds, where a source
# build with BLAS took minutes). Skipped when blas-root.stamp exists.
# --root-only leaves the other architecture's library, the headers and the Vulkan and BLAS roots out (the demo
# needs only the root).
# --vulkan-only makes (or checks) the Vulkan root alone; --blas-only the BLAS root alone.
# Usage: provision-distro-llama.sh [--root-only|--vulkan-only|--blas-only] [CACHE_DIR]
#        (default: $INFERTOP_CACHE or ~/.cache/infertop)
# Prints the root on its last line of stdout; progress goes to stderr.
set -euo pipefail

root_only=false
vulkan_only=false
blas_only=false
case "${1:-}" in
  --root-only) root_only=true; shift ;;
  --vulkan-only) vulkan_only=true; shift ;;
  --blas-only) blas_only=true; shift ;;
esac
cache="${1:-${INFERTOP_CACHE:-$HOME/.cache/infertop}}"
dir="$cache/llama.cpp-debian-sid"
root="$dir/root"
suite="${INFERTOP_DISTRO_SUITE:-sid}"
mirror="${INFERTOP_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
packages=(llama.cpp-tools libllama0 libggml0 llama.cpp-services)

say() { printf 'infertop: %s\n' "$*" >&2; }
die() { printf 'infertop: %s\n' "$*" >&2; exit 1; }

case "$(uname -m)" in
  x86_64) arch=amd64 foreign=arm64 triplet=x86_64-linux-gnu ;;
  aarch64) arch=arm64 foreign=amd64 triplet=aarch64-linux-gnu ;;
  *) die "no Debian llama.cpp root for $(uname -m): only x86_64 and aarch64" ;;
esac
[ "$(id -u)" -eq 0 ] || die "run as root (mmdebstrap unpacks a root owned by root)"
command -v mmdebstrap >/dev/null 2>&1 || die "mmdebstrap is missing: apt-get install -y mmdebstrap"

# The usrmerge links, /proc, /models and /tmp a maintainer script or the runtime would make, in the root in "$1".
fix_root() {
  for d in bin sbin lib lib64; do
    [ -e "$1/usr/$d" ] && [ ! -e "$1/$d" ] && ln -s "usr/$d" "$1/$d"
  done
  mkdir -p "$1/proc" "$1/sys" "$1/models" "$1/tmp"
  chmod 1777 "$1/tmp"
}

# Unpacks packages "$3..." into "$dir/$1.tmp" ($1 is NAME-root; mmdebstrap's extract variant, log
# "$dir/NAME-mmdebstrap.log"), as the first root is, with fix_root's links; "$2" names the root in messages. Each
# package's version goes to "$dir/NAME-versions.txt" (the extract variant leaves no dpkg status: each package's
# changelog names it).
unpack_backend_root() {
  local name="$1" label="$2" log="$dir/${1%-root}-mmdebstrap.log"
  shift 2
  rm -rf "$dir/$name" "$dir/$name.tmp"
  mkdir -p "$dir"
  if ! mmdebstrap --variant=extract --architectures="$arch" --include="$(IFS=,; echo "$*")" \
       --aptopt='Acquire::Check-Valid-Until "false"' "$suite" "$dir/$name.tmp" "$mirror" \
       >"$log" 2>&1; then
    die "mmdebstrap ($label) failed: see $log"
  fi
  fix_root "$dir/$name.tmp"
  [ -x "$dir/$name.tmp/usr/bin/llama-bench" ] || die "the $label has no llama-bench: see $log"
  for p in "$@"; do
    v=$(zcat "$dir/$name.tmp/usr/share/doc/$p/changelog.Debian.gz" 2>/dev/null | sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' || true)
    echo "$p ${v:-?}"
  done >"$dir/${name%-root}-versions.txt"
}

# The Vulkan root: sid's tools, its Vulkan backend and lavapipe, unpacked as the first root is.
vulkan_root() {
  local vroot="$dir/vulkan-root" started=$SECONDS
  local vpackages=(llama.cpp-tools libllama0 libggml0 libggml0-backend-vulkan mesa-vulkan-drivers libvulkan1)
  if [ ! -f "$dir/vulkan-root.stamp" ]; then
    say "unpacking Debian $suite's ${vpackages[*]} into a Vulkan root of its own (mmdebstrap; Mesa's LLVM makes it about 430 MB, 35 s)"
    unpack_backend_root vulkan-root "Vulkan root" "${vpackages[@]}"
    find "$dir/vulkan-root.tmp/usr/lib" -name 'libggml-vulkan.so' -print -quit | grep -q . \
      || die "the Vulkan root has no libggml-vulkan.so: see $dir/vulkan-mmdebstrap.log"
    ls "$dir/vulkan-root.tmp/usr/share/vulkan/icd.d/"lvp_icd*.json >/dev/null 2>&1 \
      || die "the Vulkan root has no lavapipe ICD (mesa-vulkan-drivers): see $dir/vulkan-mmdebstrap.log"
    mv "$dir/vulkan-root.tmp" "$vroot"
    touch "$dir/vulkan-root.stamp"
    say "Vulkan root unpacked in $((SECONDS - started)) s"
  fi
  say "Debian $suite Vulkan root ready in $vroot ($(tr '\n' ' ' <"$dir/vulkan-versions.txt"))"
}

# The BLAS root: sid's tools, its BLAS backend and OpenBLAS, unpacked as the first root is.
blas_root() {
  local broot="$dir/blas-root" started=$SECONDS lib
  local bpackages=(llama.cpp-tools libllama0 libggml0 libggml0-backend-blas libopenblas0-pthread)
  if [ ! -f "$dir/blas-root.stamp" ]; then
    say "unpacking Debian $suite's ${bpackages[*]} into a BLAS root of its own (mmdebstrap, about 5 s and 125 MB)"
    unpack_backend_root blas-root "BLAS root" "${bpackages[@]}"
    lib="$dir/blas-root.tmp/usr/lib/$triplet"
    [ -f "$lib/ggml/backends0/libggml-blas.so" ] || die "the BLAS root has no libggml-blas.so: see $dir/blas-mmdebstrap.log"
    # The alternatives OpenBLAS's maintainer script registers (the extract variant runs none): libggml-blas.so
    # needs libblas.so.3, which needs libopenblas.so.0, both under openblas-pthread/.
    for so in libblas.so.3 libopenblas.so.0; do
      [ -f "$lib/openblas-pthread/$so" ] || die "the BLAS root has no openblas-pthread/$so: see $dir/blas-mmdebstrap.log"
      ln -sfn "openblas-pthread/$so" "$lib/$so"
    done
    mv "$dir/blas-root.tmp" "$broot"
    touch "$dir/blas-root.stamp"
    say "BLAS root unpacked in $((SECONDS - started)) s"
  fi
  say "Debian $suite BLAS root ready in $broot ($(tr '\n' ' ' <"$dir/blas-versions.txt"))"
}

if $vulkan_only; then
  vulkan_root
  echo "$dir/vulkan-root"
  exit 0
fi
if $blas_only; then
  blas_root
  echo "$dir/blas-root"
  exit 0
fi

if [ ! -f "$dir/root.stamp" ]; then
  say "unpacking Debian $suite's ${packages[*]} into a root of their own (mmdebstrap, about 15 s and 80 MB)"
  rm -rf "$root" "$dir/root.tmp"
  mkdir -p "$dir"
  # sid's Release file can be past its Valid-Until in a mirror that is not refreshed daily.
  if ! mmdebstrap --variant=extract --architectures="$arch" --include="$(IFS=,; echo "${packages[*]}")" \
       --aptopt='Acquire::Check-Valid-Until "false"' "$suite" "$dir/root.tmp" "$mirror" >"$dir/mmdebstrap.log" 2>&1; then
    die "mmdebstrap failed: see $dir/mmdebstrap.log"
  fi
  cd "$dir/root.tmp"
  # usrmerge's links (a maintainer script makes them in a full install)
  for d in bin sbin lib lib64; do
    [ -e "usr/$d" ] && [ ! -e "$d" ] && ln -s "usr/$d" "$d"
  done
  mkdir -p proc sys models tmp var/lib/llama-server var/cache/llama-server
  chmod 1777 tmp
  # The packaged unit's user (sysusers.d: u! _llama-server): the uid the service journey runs it as, the same
  # number on the host (src/scripts/container-run.sh --user).
  uid=$(awk -F: '$1=="_llama-server"{print $3}' /etc/passwd 2>/dev/null || true)
  if [ -z "$uid" ]; then
    useradd --system --no-create-home --home-dir /var/lib/llama-server --shell /usr/sbin/nologin _llama-server \
      2>/dev/null || die "cannot add the service user _llama-server on this host (useradd)"
    uid=$(awk -F: '$1=="_llama-server"{print $3}' /etc/passwd)
  fi
  gid=$(awk -F: '$1=="_llama-server"{print $4}' /etc/passwd)
  grep -q '^root:' etc/passwd 2>/dev/null || echo 'root:x:0:0:root:/root:/bin/sh' >>etc/passwd
  echo "_llama-server:x:$uid:$gid:llama.cpp server:/var/lib/llama-server:/usr/sbin/nologin" >>etc/passwd
  echo "_llama-server:x:$gid:" >>etc/group
  chown "$uid:$gid" var/lib/llama-server var/cache/llama-server
  [ -x usr/bin/llama-bench ] && [ -x usr/bin/llama-server ] || die "the unpacked root has no llama-bench or llama-server: see $dir/mmdebstrap.log"
  # What was installed, for the record (and the tests' messages).
  # (the extract variant leaves no dpkg status: each package's changelog names its version)
  for p in "${packages[@]}"; do
    v=$(zcat "usr/share/doc/$p/changelog.Debian.gz" 2>/dev/null | sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' || true)
    echo "$p ${v:-?}"
  done >"$dir/versions.txt"
  cd "$dir"
  mv root.tmp root
  touch root.stamp
fi
say "Debian $suite llama.cpp root ready in $root ($(tr '\n' ' ' <"$dir/versions.txt"))"
if $root_only; then
  echo "$root"
  exit 0
fi

foreign_dir="$dir/foreign-arch"
if [ ! -f "$foreign_dir/$foreign.stamp" ]; then
  say "fetching Debian $suite's libggml0:$foreign into $foreign_dir/$foreign (apt-get download, about 11 MB of index)"
  work="$foreign_dir/$foreign.apt"
  rm -rf "$work" "$foreign_dir/$foreign" "$foreign_dir/$foreign.tmp"
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/deb"
  echo "deb [trusted=yes] $mirror $suite main" >"$work/sources.list"
  # Only this list, these lists and cache, this architecture: the host's sources, package lists and dpkg
  # architectures are neither used nor changed. Check-Valid-Until as for the root above.
  apt_opts=(-o Dir::Etc::sourcelist="$work/sources.list" -o Dir::Etc::sourceparts=/dev/null
            -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache"
            -o APT::Architecture="$foreign" -o APT::Architectures="$foreign" -o Acquire::Check-Valid-Until=false)
  # apt fetches as _apt where that user exists: it must be able to write the download directory.
  id _apt >/dev/null 2>&1 && chown _apt "$work/deb"
  apt-get -q --error-on=any "${apt_opts[@]}" update >"$work/apt.log" 2>&1 \
    || die "apt-get update for $foreign from $mirror $suite failed: see $work/apt.log"
  (cd "$work/deb" && apt-get -q "${apt_opts[@]}" download "libggml0:$foreign") >>"$work/apt.log" 2>&1 \
    || die "apt-get download libggml0:$foreign from $mirror $suite failed: see $work/apt.log"
  deb=$(find "$work/deb" -maxdepth 1 -name "libggml0_*_$foreign.deb" -print -quit)
  [ -n "$deb" ] || die "apt-get download left no libggml0_*_$foreign.deb in $work/deb: see $work/apt.log"
  version=$(dpkg-deb -f "$deb" Version) || die "$deb is not a Debian package (dpkg-deb -f)"
  dpkg -x "$deb" "$foreign_dir/$foreign.tmp" || die "dpkg -x $deb failed"
  mv "$foreign_dir/$foreign.tmp" "$foreign_dir/$foreign"
  rm -rf "$work"
  echo "libggml0 $version" >"$foreign_dir/$foreign.stamp"
fi
say "Debian $suite's $(cat "$foreign_dir/$foreign.stamp") for $foreign ready in $foreign_dir/$foreign"

dev_dir="$dir/ggml-dev"
if [ ! -f "$dev_dir.stamp" ]; then
  ggml_version=$(awk '$1=="libggml0"{print $2}' "$dir/versions.txt")
  [ -n "$ggml_version" ] && [ "$ggml_version" != "?" ] || die "no libggml0 version in $dir/versions.txt"
  say "fetching Debian $suite's libggml-dev $ggml_version (the root's libggml0) into $dev_dir (apt-get download)"
  work="$dev_dir.apt"
  rm -rf "$work" "$dev_dir" "$dev_dir.tmp"
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/deb"
  echo "deb [trusted=yes] $mirror $suite main" >"$work/sources.list"
  apt_opts=(-o Dir::Etc::sourcelist="$work/sources.list" -o Dir::Etc::sourceparts=/dev/null
            -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache"
            -o APT::Architecture="$arch" -o APT::Architectures="$arch" -o Acquire::Check-Valid-Until=false)
  id _apt >/dev/null 2>&1 && chown _apt "$work/deb"
  apt-get -q --error-on=any "${apt_opts[@]}" update >"$work/apt.log" 2>&1 \
    || die "apt-get update for libggml-dev from $mirror $suite failed: see $work/apt.log"
  (cd "$work/deb" && apt-get -q "${apt_opts[@]}" download "libggml-dev=$ggml_version") >>"$work/apt.log" 2>&1 \
    || die "apt-get download libggml-dev=$ggml_version from $mirror $suite failed: see $work/apt.log"
  deb=$(find "$work/deb" -maxdepth 1 -name "libggml-dev_*_$arch.deb" -print -quit)
  [ -n "$deb" ] || die "apt-get download left no libggml-dev_*_$arch.deb in $work/deb: see $work/apt.log"
  dpkg -x "$deb" "$dev_dir.tmp" || die "dpkg -x $deb failed"
  [ -f "$dev_dir.tmp/usr/include/ggml-backend.h" ] || die "$deb has no usr/include/ggml-backend.h"
  mv "$dev_dir.tmp" "$dev_dir"
  rm -rf "$work"
  echo "libggml-dev $ggml_version" >"$dev_dir.stamp"
fi
say "Debian $suite's $(cat "$dev_dir.stamp") headers ready in $dev_dir"
vulkan_root
blas_root
echo "$root"
