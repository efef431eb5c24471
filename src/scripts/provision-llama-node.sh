#!/usr/bin/env bash
# Provisions an application that links llama.cpp statically for the tests (LinkedInAppIT): @fugood/llama.node from
# the npm registry with its prebuilt Linux x64 addon (llama.cpp inside a stripped, LTO-built index.node; no
# libllama/libggml file anywhere). Pinned versions; the tarballs are packed first and installed from the files with
# --ignore-scripts (no install script of the package runs) and --omit=optional (the other platforms' addons are
# optional dependencies: only the one named here is installed). Idempotent (a stamp).
# Usage: provision-llama-node.sh [CACHE_DIR]; prints the application directory.
set -euo pipefail
version=1.7.15
cache="${1:-${INFERTOP_CACHE:-$HOME/.cache/infertop}}"
dir="$cache/llama-node-$version"
start=$SECONDS
say() { printf 'infertop: [%3d s] %s\n' "$((SECONDS - start))" "$*" >&2; }
die() { printf 'infertop: %s\n' "$*" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || die "npm is missing: apt-get install -y npm, then run again"
[ "$(uname -m)" = x86_64 ] || die "@fugood/node-llama-linux-x64 is an x86_64 addon; this machine is $(uname -m)"
mkdir -p "$dir"
if [ ! -f "$dir/app.stamp" ]; then
  say "packing @fugood/llama.node@$version and @fugood/node-llama-linux-x64@$version from the npm registry"
  mkdir -p "$dir/packs"
  (cd "$dir/packs" && npm pack --silent --loglevel=error "@fugood/llama.node@$version" \
      "@fugood/node-llama-linux-x64@$version" >/dev/null) \
    || die "npm pack @fugood/llama.node@$version failed: is the npm registry reachable?"
  say "installing them (--ignore-scripts --omit=optional)"
  (cd "$dir" && [ -f package.json ] || echo '{"name":"infertop-llama-node","private":true}' >package.json)
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error --ignore-scripts --omit=optional \
      "./packs/fugood-llama.node-$version.tgz" "./packs/fugood-node-llama-linux-x64-$version.tgz" >/dev/null) \
    || die "npm install of @fugood/llama.node@$version failed"
  addon="$dir/node_modules/@fugood/node-llama-linux-x64/index.node"
  [ -f "$addon" ] || die "the addon $addon is missing after the install"
  touch "$dir/app.stamp"
  say "installed: $(du -sh "$dir/node_modules" | cut -f1) in node_modules"
fi
echo "$dir"
