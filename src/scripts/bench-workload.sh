# Sourced by the bench scripts: where their workload is, and the one definition of it (benchlib.py). Sets
#   bench_bin  the directory of llama-bench (and of the llama.cpp libraries beside it)
#   bench      llama-bench: as the script set it (-b), else the source build of LlamaCppWorkload's version that
#              src/scripts/setup.sh provisions under INFERTOP_CACHE (default ~/.cache/infertop)
#   model      as the script set it (-m), else the synthetic 245 M-parameter bench model the tests write
#              (written here when missing)
#   infertop   INFERTOP, else the launcher beside this file
#   BENCHLIB   benchlib.py, whose directory goes on PYTHONPATH so the scripts' inline Python imports it
# decode_workload REPS [ARG...] then sets the array `workload` to the decode run of REPS repetitions.
# The sourcing script defines die().
bench_workload() {
  local cache="${INFERTOP_CACHE:-$HOME/.cache/infertop}"
  local scripts
  scripts="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
  command -v python3 >/dev/null || die "python3 is missing (the bench scripts compute with it): apt-get install -y python3"
  BENCHLIB="$scripts/benchlib.py"
  export PYTHONPATH="$scripts${PYTHONPATH:+:$PYTHONPATH}"
  : "${bench:=$cache/llama.cpp-node-3.22.1/build/bin/llama-bench}"
  bench_bin="$(dirname "$bench")"
  [ -x "$bench" ] || die "llama-bench not found at $bench: run src/scripts/setup.sh"
  if [ -z "${model:-}" ]; then
    model="$(ls -1 "$cache"/models/bench-s*-*.gguf 2>/dev/null | head -1 || true)"
    [ -n "$model" ] || model="$cache/models/bench.gguf"
  fi
  infertop="${INFERTOP:-$scripts/infertop}"
  if [ ! -f "$model" ]; then
    echo "writing the synthetic bench model to $model" >&2
    mkdir -p "$(dirname "$model")"
    "$infertop" model bench "$model" >&2
  fi
}

decode_workload() {
  mapfile -t workload < <(python3 "$BENCHLIB" workload "$bench" "$model" "$@")
  [ "${#workload[@]}" -gt 0 ] || die "benchlib.py gave no workload for: $*"
}
