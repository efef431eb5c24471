#!/usr/bin/env bash
# Provisions the real llama.cpp workload infertop is tested and demoed on, from registry packages only:
#   1. the llama.cpp source release bundled in the npm package node-llama-cpp, built once with cmake
#      (CPU, Release) into the cache: llama-bench, llama-server, llama-completion, llama-eval-callback;
#   2. the prebuilt, unstripped libraries of @node-llama-cpp/linux-<arch> (endbr64 at every function entry,
#      CPU variant dlopen'ed at run time), next to a copy of the source-built llama-bench so it can run on them.
# Idempotent: each step leaves a stamp and is skipped when its stamp exists. (The BLAS backend the tests need
# comes prebuilt from Debian: provision-distro-llama.sh's BLAS root.)
# Usage: provision-llama.sh [CACHE_DIR]    (default: $INFERTOP_CACHE or ~/.cache/infertop)
# Prints the workload directory on its last line of stdout; progress goes to stderr.
set -euo pipefail

case "${1:-}" in
  -*) printf 'infertop: provision-llama.sh takes no option (%s): its one argument is the cache directory\n' "$1" >&2
      exit 2 ;;
esac

version="${INFERTOP_NODE_LLAMA_CPP_VERSION:-3.22.1}"
cache="${1:-${INFERTOP_CACHE:-$HOME/.cache/infertop}}"
root="$cache/llama.cpp-node-$version"
jobs="$(nproc)"

say() { printf 'infertop: %s\n' "$*" >&2; }
die() { printf 'infertop: %s\n' "$*" >&2; exit 1; }
source "$(dirname "$(readlink -f "$0")")/cmake-progress.sh"

case "$(uname -m)" in
  x86_64) npm_arch=x64 ;;
  aarch64) npm_arch=arm64 ;;
  *) die "no prebuilt llama.cpp for $(uname -m): only x86_64 and aarch64 are provisioned" ;;
esac

for tool in npm git cmake c++ tar; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' is missing: install it (apt-get install -y npm git cmake g++) and run again"
done

source "$(dirname "$(readlink -f "$0")")/llama-build-flags.sh"
# shellcheck disable=SC2207
cpu_flags=($(llama_cpu_flags))
mkdir -p "$root"
cd "$root"

if [ ! -f src.stamp ]; then
  say "fetching node-llama-cpp@$version from the npm registry (llama.cpp source bundle, ~35 MB)"
  rm -rf pkg src && mkdir -p pkg
  (cd pkg && npm pack --silent "node-llama-cpp@$version" >/dev/null) || die "npm pack node-llama-cpp@$version failed: is the npm registry reachable?"
  tar xzf pkg/node-llama-cpp-"$version".tgz -C pkg package/llama/gitRelease.bundle package/llama/llama.cpp.info.json
  git clone --quiet pkg/package/llama/gitRelease.bundle src 2>/dev/null || die "cannot clone the llama.cpp bundle from node-llama-cpp@$version"
  cp pkg/package/llama/llama.cpp.info.json llama.cpp.info.json
  rm -rf pkg
  touch src.stamp
fi

targets=(llama-bench llama-server llama-completion llama-eval-callback llama-quantize)
if ! llama_stamp_current build.stamp; then
  say "building llama.cpp $(sed -n 's/.*"tag": *"\([^"]*\)".*/\1/p' llama.cpp.info.json) (CPU, Release; about 5 minutes on 2 cores)"
  cmake -S src -B build -DCMAKE_BUILD_TYPE=Release -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF "${cpu_flags[@]}" >build-configure.log 2>&1 \
    || die "cmake configure failed: see $root/build-configure.log"
  # cmake prints [ NN%] lines; pass them through as progress.
  if ! cmake --build build -j "$jobs" --target "${targets[@]}" 2>build.log \
       | cmake_progress; then
    :
  fi
  for t in "${targets[@]}"; do
    [ -x build/bin/$t ] || die "llama.cpp build did not produce $t: see $root/build.log"
  done
  llama_stamp_write build.stamp
fi

# llama-quantize (the roofline tests make Q4_0 and Q8_0 copies of a synthetic F16 model with it): built on its
# own when a build made before it was a target lacks it, incrementally (about a minute).
if [ ! -x build/bin/llama-quantize ]; then
  say "building llama-quantize"
  cmake --build build -j "$jobs" --target llama-quantize >>build.log 2>&1 \
    || die "building llama-quantize failed: see $root/build.log"
fi

if [ ! -f prebuilt.stamp ]; then
  say "fetching prebuilt llama.cpp libraries @node-llama-cpp/linux-$npm_arch@$version (~11 MB)"
  rm -rf prebuilt pkg && mkdir -p pkg prebuilt
  (cd pkg && npm pack --silent "@node-llama-cpp/linux-$npm_arch@$version" >/dev/null) \
    || die "npm pack @node-llama-cpp/linux-$npm_arch@$version failed: is the npm registry reachable?"
  tar xzf pkg/node-llama-cpp-linux-"$npm_arch"-"$version".tgz -C pkg
  cp -a pkg/package/bins/linux-"$npm_arch"/. prebuilt/
  rm -rf pkg
  # copies of the source-built tools, to run on the prebuilt libraries (see the soname links below)
  for exe in llama-bench llama-completion; do
    cp build/bin/$exe prebuilt/$exe
  done
  touch prebuilt.stamp
fi

# The source-built tools link against the source build's sonames; give the prebuilt libraries those
# names too, so LD_LIBRARY_PATH=prebuilt runs the same llama-bench on the prebuilt code. The whole DT_NEEDED
# closure counts: llama-bench reaches libllama through libllama-bench-impl.so, whose RUNPATH names build/bin,
# so any soname missing here silently loads the source build instead. Outside the stamp: cheap, idempotent,
# and it repairs caches provisioned before the closure was followed.
pending=(prebuilt/llama-bench prebuilt/llama-completion)
declare -A walked=()
while [ ${#pending[@]} -gt 0 ]; do
  object="${pending[0]}"
  pending=("${pending[@]:1}")
  [ -n "${walked[$object]:-}" ] && continue
  walked[$object]=1
  for need in $(readelf -d "$object" | sed -n 's/.*NEEDED.*\[\(lib\(llama\|ggml\)[^]]*\)\]/\1/p'); do
    if [ ! -e "prebuilt/$need" ]; then
      base="${need%%.so*}"
      match=$(ls prebuilt/"$base".v*.so prebuilt/"$base".so 2>/dev/null | head -n1 || true)
      if [ -n "$match" ]; then
        ln -sf "$(basename "$match")" "prebuilt/$need"
      elif [ -e "build/bin/$need" ]; then
        # a helper library the npm package does not ship (libllama-bench-impl)
        cp -a build/bin/"$need"* prebuilt/ 2>/dev/null || true
      else
        continue
      fi
    fi
    pending+=("prebuilt/$need")
  done
done

say "llama.cpp workload ready in $root"
echo "$root"
