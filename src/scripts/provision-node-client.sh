#!/usr/bin/env bash
# Provisions a real llama.cpp client for the tests: node-llama-cpp from the npm registry, with its prebuilt
# libraries (no download of binaries at install time: NODE_LLAMA_CPP_SKIP_DOWNLOAD), into the cache.
# Idempotent (a stamp). Usage: provision-node-client.sh [CACHE_DIR]; prints the client directory.
set -euo pipefail
version=3.22.1
cache="${1:-${INFERTOP_CACHE:-$HOME/.cache/infertop}}"
dir="$cache/node-client-$version"
say() { printf 'infertop: %s\n' "$*" >&2; }
die() { printf 'infertop: %s\n' "$*" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || die "npm is missing: apt-get install -y npm, then run again"
mkdir -p "$dir"
if [ ! -f "$dir/client.stamp" ]; then
  say "installing node-llama-cpp@$version from the npm registry (a real client for the tests)"
  (cd "$dir" && [ -f package.json ] || echo '{"name":"infertop-node-client","private":true,"type":"module"}' >package.json)
  (cd "$dir" && NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --no-audit --no-fund --loglevel=error \
      "node-llama-cpp@$version" >/dev/null) || die "npm install node-llama-cpp@$version failed: is the npm registry reachable?"
  touch "$dir/client.stamp"
fi
echo "$dir"
