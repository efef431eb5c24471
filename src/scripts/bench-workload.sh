# Sourced by the bench scripts (bench-peers.sh, bench-alternate.sh): where their workload is. Sets
#   bench_bin  the llama.cpp source build's bin directory (LlamaCppWorkload's version; src/scripts/setup.sh
#              provisions it under INFERTOP_CACHE, default ~/.cache/infertop)
#   bench      its llama-bench
#   model      the synthetic 245 M-parameter bench model the tests write (written here when missing)
#   infertop   INFERTOP, else the launcher beside this file
# The sourcing script defines die().
bench_workload() {
  local cache="${INFERTOP_CACHE:-$HOME/.cache/infertop}"
  local scripts
  scripts="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
  bench_bin="$cache/llama.cpp-node-3.22.1/build/bin"
  bench="$bench_bin/llama-bench"
  [ -x "$bench" ] || die "llama-bench not found in $bench_bin: run src/scripts/setup.sh"
  model="$(ls -1 "$cache"/models/bench-s*-*.gguf 2>/dev/null | head -1 || true)"
  [ -n "$model" ] || model="$cache/models/bench.gguf"
  infertop="${INFERTOP:-$scripts/infertop}"
  if [ ! -f "$model" ]; then
    mkdir -p "$(dirname "$model")"
    "$infertop" model bench "$model" >&2
  fi
}
