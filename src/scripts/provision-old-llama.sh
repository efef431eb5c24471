#!/usr/bin/env bash
# Provisions an OLDER llama.cpp release, prebuilt, so layout calibration can be tested on struct layouts
# that differ from the current release. From registry packages only:
#   1. the prebuilt libraries of @node-llama-cpp/linux-<arch>@VERSION (bins/linux-<arch>/) into DIR;
#   2. the llama.cpp source release that node-llama-cpp@VERSION bundles (llama/gitRelease.bundle), cloned
#      into DIR/src, so tests can compare calibrated offsets against that release's own headers.
# The llama.cpp tag is recorded by both packages: DIR/_nlcBuildMetadata.json (buildOptions.llamaCpp.release)
# and DIR/llama.cpp.info.json (tag).
#   3. with --build llama-bench: a CPU Release build of that release's llama-bench from the bundled source,
#      shared libraries (libllama, libggml-base, libggml-cpu, libggml as separate .so files) in DIR/build/bin,
#      so the operator layer can be tested end to end on an older node loop. Only the llama-bench target.
# Idempotent: each step leaves a stamp and is skipped when its stamp exists.
# Usage: provision-old-llama.sh [--build llama-bench] VERSION [CACHE_DIR]   (e.g. 3.3.0: llama.cpp b4234)
# Releases before ggml's backend split (3.2.0 = b3995 and older) have no libggml-base.so: their ggml core
# (ggml_init, ggml_op_name, …) is in libggml.so, which is then the library to calibrate.
# Prints DIR ($CACHE/llama.cpp-node-$VERSION-prebuilt) on its last line of stdout; progress goes to stderr.
set -euo pipefail

say() { printf 'infertop: %s\n' "$*" >&2; }
die() { printf 'infertop: %s\n' "$*" >&2; exit 1; }
source "$(dirname "$(readlink -f "$0")")/cmake-progress.sh"

usage="usage: provision-old-llama.sh [--build llama-bench] VERSION [CACHE_DIR]"
build_target=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build)
      [ $# -ge 2 ] || die "$usage"
      [ "$2" = llama-bench ] || die "--build: only llama-bench can be built (got '$2')"
      build_target="$2"
      shift 2 ;;
    --*) die "unknown option $1; $usage" ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || die "$usage"
version="$1"
cache="${2:-${INFERTOP_CACHE:-$HOME/.cache/infertop}}"
dir="$cache/llama.cpp-node-$version-prebuilt"

case "$(uname -m)" in
  x86_64) npm_arch=x64 ;;
  aarch64) npm_arch=arm64 ;;
  *) die "no prebuilt llama.cpp for $(uname -m): only x86_64 and aarch64 are provisioned" ;;
esac

for tool in npm git tar; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' is missing: install it (apt-get install -y npm git) and run again"
done

source "$(dirname "$(readlink -f "$0")")/llama-build-flags.sh"
# shellcheck disable=SC2207
cpu_flags=($(llama_cpu_flags))
mkdir -p "$dir"
cd "$dir"

if [ ! -f prebuilt.stamp ]; then
  say "fetching prebuilt llama.cpp libraries @node-llama-cpp/linux-$npm_arch@$version"
  rm -rf pkg && mkdir -p pkg
  (cd pkg && npm pack --silent "@node-llama-cpp/linux-$npm_arch@$version" >/dev/null) \
    || die "npm pack @node-llama-cpp/linux-$npm_arch@$version failed: is the npm registry reachable?"
  tar xzf pkg/node-llama-cpp-linux-"$npm_arch"-"$version".tgz -C pkg
  bins="pkg/package/bins/linux-$npm_arch"
  [ -d "$bins" ] || die "@node-llama-cpp/linux-$npm_arch@$version has no bins/linux-$npm_arch/ directory"
  [ -f "$bins/libggml-base.so" ] || [ -f "$bins/libggml.so" ] \
    || die "@node-llama-cpp/linux-$npm_arch@$version has neither libggml-base.so nor libggml.so"
  cp -a "$bins"/. .
  rm -rf pkg
  touch prebuilt.stamp
fi

if [ ! -f src.stamp ]; then
  say "fetching node-llama-cpp@$version for its llama.cpp source bundle (headers for the layout tests)"
  rm -rf pkg src && mkdir -p pkg
  (cd pkg && npm pack --silent "node-llama-cpp@$version" >/dev/null) \
    || die "npm pack node-llama-cpp@$version failed: is the npm registry reachable?"
  tar xzf pkg/node-llama-cpp-"$version".tgz -C pkg package/llama/gitRelease.bundle package/llama/llama.cpp.info.json \
    || die "node-llama-cpp@$version carries no llama/gitRelease.bundle"
  git clone --quiet pkg/package/llama/gitRelease.bundle src 2>/dev/null \
    || die "cannot clone the llama.cpp bundle from node-llama-cpp@$version"
  cp pkg/package/llama/llama.cpp.info.json llama.cpp.info.json
  rm -rf pkg
  touch src.stamp
fi

if [ -n "$build_target" ] && ! llama_stamp_current build.stamp; then
  for tool in cmake c++; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' is missing: install it (apt-get install -y cmake g++) and run again"
  done
  say "building $build_target of llama.cpp $(sed -n 's/.*"tag": *"\([^"]*\)".*/\1/p' llama.cpp.info.json) (CPU, Release, shared libraries)"
  rm -rf build
  # Examples must be configured for the llama-bench target to exist; only that target is built.
  cmake -S src -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DLLAMA_CURL=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=ON -DLLAMA_BUILD_SERVER=OFF -DGGML_BUILD_TESTS=OFF \
        -DGGML_BUILD_EXAMPLES=OFF "${cpu_flags[@]}" >build-configure.log 2>&1 \
    || die "cmake configure of llama.cpp failed: see $dir/build-configure.log"
  # cmake prints [ NN%] lines; pass them through as progress.
  cmake --build build -j "$(nproc)" --target "$build_target" 2>build.log \
    | cmake_progress || true
  [ -x "build/bin/$build_target" ] || die "llama.cpp build did not produce $build_target: see $dir/build.log"
  llama_stamp_write build.stamp
fi

[ -f libggml-base.so ] || say "no libggml-base.so (before ggml's backend split): calibrate $dir/libggml.so"
say "llama.cpp $(sed -n 's/.*"tag": *"\([^"]*\)".*/\1/p' llama.cpp.info.json) from node-llama-cpp@$version"
echo "$dir"
