#!/usr/bin/env bash
# Provisions llama.cpp with the Vulkan backend on software Vulkan (lavapipe), for the offload tests
# (VulkanOffloadIT): no GPU needed.
#   1. Debian's mesa-vulkan-drivers (lavapipe, Vulkan on the CPU) and libvulkan1 (the loader), from apt;
#   2. the prebuilt libraries of @node-llama-cpp/linux-x64-vulkan@VERSION (the same release as the CPU
#      workload of provision-llama.sh, so its source-built llama-bench runs on them), into
#      $CACHE/llama.cpp-node-VERSION/prebuilt-vulkan/, with the sonames llama-bench asks for.
# Needs provision-llama.sh to have run first (its llama-bench). Idempotent: a stamp per step.
# Usage: provision-vulkan.sh [CACHE_DIR]    Prints the directory on its last line of stdout; progress to stderr.
set -euo pipefail

version="${INFERTOP_NODE_LLAMA_CPP_VERSION:-3.22.1}"
cache="${1:-${INFERTOP_CACHE:-$HOME/.cache/infertop}}"
root="$cache/llama.cpp-node-$version"
dir="$root/prebuilt-vulkan"

say() { printf 'infertop: %s\n' "$*" >&2; }
die() { printf 'infertop: %s\n' "$*" >&2; exit 1; }

[ "$(uname -m)" = x86_64 ] || die "the Vulkan build is provisioned for x86_64 only (npm @node-llama-cpp/linux-x64-vulkan)"
[ -x "$root/build/bin/llama-bench" ] || die "no llama-bench in $root/build/bin: run provision-llama.sh first"
command -v npm >/dev/null 2>&1 || die "'npm' is missing: apt-get install -y npm, then run again"

started=$SECONDS
if [ ! -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || ! ls /usr/lib/x86_64-linux-gnu/libvulkan.so.1 >/dev/null 2>&1; then
  say "installing mesa-vulkan-drivers libvulkan1 (lavapipe: Vulkan on the CPU; apt-get, once)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers libvulkan1 >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers libvulkan1 >/dev/null; } \
    || die "apt-get install mesa-vulkan-drivers libvulkan1 failed"
fi

mkdir -p "$root"
cd "$root"
if [ ! -f prebuilt-vulkan.stamp ]; then
  say "fetching prebuilt llama.cpp with Vulkan @node-llama-cpp/linux-x64-vulkan@$version (~24 MB)"
  rm -rf prebuilt-vulkan pkg-vulkan && mkdir -p pkg-vulkan prebuilt-vulkan
  (cd pkg-vulkan && npm pack --silent "@node-llama-cpp/linux-x64-vulkan@$version" >/dev/null) \
    || die "npm pack @node-llama-cpp/linux-x64-vulkan@$version failed: is the npm registry reachable?"
  tar xzf pkg-vulkan/node-llama-cpp-linux-x64-vulkan-"$version".tgz -C pkg-vulkan
  cp -a pkg-vulkan/package/bins/linux-x64-vulkan/. prebuilt-vulkan/
  rm -rf pkg-vulkan
  cp build/bin/llama-bench build/bin/libllama-bench-impl.so* prebuilt-vulkan/
  # The source-built tool names the source build's sonames; the package's libraries are named for Vulkan.
  (cd prebuilt-vulkan \
    && ln -sf libllama.vulkan.v*.so libllama.so.0 && ln -sf libggml.vulkan.v*.so libggml.so.0 \
    && ln -sf libggml-base.so libggml-base.so.0 && ln -sf libllama-common.so libllama-common.so.0)
  touch prebuilt-vulkan.stamp
fi
say "Vulkan workload ready in $dir ($((SECONDS - started)) s)"
echo "$dir"
