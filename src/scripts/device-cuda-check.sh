#!/usr/bin/env bash
# One check on a machine with an NVIDIA GPU: llama.cpp's CUDA backend (the npm @node-llama-cpp/linux-x64-cuda
# build of the release provision-llama.sh builds) under llama-bench -ngl 99, with infertop beside it; prints
# llama-bench's table and infertop's offload figures (enqueue time against device-complete time per backend,
# host waits, the tensors copied between backends, the ops per backend). Meant to finish within ~5 minutes.
#
# What it needs, each said in one line when missing: nvidia-smi and a working driver; a JDK 25 and
# target/infertop.jar (src/scripts/build.sh); the source-built llama-bench of that release
# ($CACHE/llama.cpp-node-$VERSION/build/bin, provision-llama.sh), or cmake and a compiler to build it
# (about a minute on 16 cores); the CUDA package, from npm or, where the machine reaches no registry, as a
# tarball named by INFERTOP_CUDA_TGZ (npm pack @node-llama-cpp/linux-x64-cuda@VERSION elsewhere); and the
# CUDA runtime libraries its libggml-cuda.so links against (libcudart, libcublas), on the loader's path.
# Usage: device-cuda-check.sh [CACHE_DIR]
set -euo pipefail

version="${INFERTOP_NODE_LLAMA_CPP_VERSION:-3.22.1}"
cache="${1:-${INFERTOP_CACHE:-$HOME/.cache/infertop}}"
here="$(dirname "$(readlink -f "$0")")"
repo="$(readlink -f "$here/../..")"
root="$cache/llama.cpp-node-$version"
dir="$root/prebuilt-cuda"
jar="$repo/target/infertop.jar"
started=$SECONDS

say() { printf 'infertop: %s (%d s)\n' "$1" "$((SECONDS - started))" >&2; }
die() { printf 'infertop: %s\n' "$*" >&2; exit 1; }

command -v nvidia-smi >/dev/null 2>&1 || die "no nvidia-smi: this check needs an NVIDIA GPU and its driver"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >&2 \
  || die "nvidia-smi failed: is the driver loaded?"
[ "$(id -u)" = 0 ] || die "infertop loads BPF probes: run this as root"
source "$here/jdk25.sh" 2>/dev/null || die "no JDK 25 found (see src/scripts/jdk25.sh)"
[ -f "$jar" ] || die "no $jar: build it first (src/scripts/build.sh)"

# 1. llama-bench of the same release (the npm packages ship libraries only).
bench="$root/build/bin/llama-bench"
if [ ! -x "$bench" ]; then
  say "no llama-bench in $root/build/bin: building it (provision-llama.sh's CPU build, llama-bench only)"
  [ -d "$root/src" ] || die "no llama.cpp source in $root/src: run src/scripts/provision-llama.sh where npm is reachable, and carry $root"
  cmake -S "$root/src" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF >/dev/null || die "cmake configure failed"
  cmake --build "$root/build" -j "$(nproc)" --target llama-bench >/dev/null || die "building llama-bench failed"
fi

# 2. The CUDA build's libraries beside a copy of it, with the sonames it asks for.
if [ ! -f "$root/prebuilt-cuda.stamp" ]; then
  rm -rf "$dir" "$root/pkg-cuda" && mkdir -p "$dir" "$root/pkg-cuda"
  if [ -n "${INFERTOP_CUDA_TGZ:-}" ]; then
    say "unpacking $INFERTOP_CUDA_TGZ"
    tar xzf "$INFERTOP_CUDA_TGZ" -C "$root/pkg-cuda"
  else
    say "fetching @node-llama-cpp/linux-x64-cuda@$version from npm"
    (cd "$root/pkg-cuda" && npm pack --silent "@node-llama-cpp/linux-x64-cuda@$version" >/dev/null) \
      || die "npm pack @node-llama-cpp/linux-x64-cuda@$version failed: no registry here? set INFERTOP_CUDA_TGZ"
    tar xzf "$root"/pkg-cuda/*.tgz -C "$root/pkg-cuda"
  fi
  cp -a "$root"/pkg-cuda/package/bins/linux-x64-cuda/. "$dir/"
  rm -rf "$root/pkg-cuda"
  cp "$bench" "$root"/build/bin/libllama-bench-impl.so* "$dir/"
  (cd "$dir" && for base in libllama libggml; do
     lib=$(ls "$base".cuda.v*.so "$base".v*.so 2>/dev/null | head -n1 || true)
     [ -n "$lib" ] && ln -sf "$lib" "$base.so.0"
   done
   ln -sf libggml-base.so libggml-base.so.0; ln -sf libllama-common.so libllama-common.so.0)
  touch "$root/prebuilt-cuda.stamp"
fi
missing=$(LD_LIBRARY_PATH="$dir:${LD_LIBRARY_PATH:-}" ldd "$dir/libggml-cuda.so" | sed -n 's/^\s*\(\S*\) => not found/\1/p' | tr '\n' ' ')
[ -z "$missing" ] || die "libggml-cuda.so needs libraries not found here: $missing(install the CUDA 12 runtime, cuBLAS)"

# 3. A model with enough work per node that device time shows (bench: ~250 M parameters, F16).
model="$cache/models/bench-cuda-check.gguf"
if [ ! -f "$model" ]; then
  say "writing the synthetic model (infertop model bench)"
  mkdir -p "$cache/models"
  java --enable-native-access=ALL-UNNAMED -jar "$jar" model bench "$model" >/dev/null || die "infertop model failed"
fi

# 4. llama-bench under infertop, everything offloaded.
out="$(mktemp -d)"
say "running llama-bench -ngl 99 under infertop"
timeout 240 java --enable-native-access=ALL-UNNAMED -jar "$jar" --json -d 1 \
    --env LD_LIBRARY_PATH="$dir:${LD_LIBRARY_PATH:-}" -- \
    "$dir/llama-bench" -m "$model" -ngl 99 -p 512 -n 64 -r 2 >"$out/infertop.jsonl" 2>"$out/stderr" \
  || { tail -20 "$out/stderr" >&2; die "the traced run failed (its output: $out)"; }
echo "== llama-bench"
grep -E '^\|' "$out/stderr" || tail -20 "$out/stderr"
echo "== infertop: per backend, enqueue (the compute call) against device-complete (to the closing synchronize)"
cat >"$out/show.py" <<'PY'
import json, sys
d = json.loads(sys.stdin.read())
o = d.get("offload", {})
for name, b in o.get("backends", {}).items():
    print("%-8s %-22s graphs %6d  enqueue %10.3f ms  device-complete %s ms  host wait %s ms in %d  copied in %d B" % (
        name, b["completion"], b["graphs"], b["enqueue_ms"], b.get("device_complete_ms", "-"),
        b["host_wait_ms"], b["host_waits"], b["bytes_in"]))
print("== copies between backends (largest first)")
for c in o.get("copies", [])[:12]:
    print("  %-28s -> %-8s %6d copies %12d B  %s" % (c["tensor"], c["to_backend"], c["copies"], c["bytes"], c["shape"]))
print("== ops per backend (nodes)")
for name, b in d.get("backends", {}).items():
    ops = sorted(b.get("ops", {}).items(), key=lambda kv: -kv[1].get("nodes", 0))[:10]
    print("  %s: %s" % (name, ", ".join("%s %d" % (op, v["nodes"]) for op, v in ops)))
print("lost_events", d.get("lost_events"), " graph layer:", d["layers"]["graph"]["state"])
PY
tail -n 1 "$out/infertop.jsonl" | python3 "$out/show.py"
say "done"
