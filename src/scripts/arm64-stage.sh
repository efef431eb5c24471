#!/usr/bin/env bash
# The emulated arm64 stage: boots the Debian 13 arm64 guest (provision-arm64.sh) under QEMU's TCG — no KVM
# needed — with a 9p share carrying the release tarball (package.sh), the cross-built llama-bench and its
# libraries, a small Q8_0 synthetic model and the guest's test (arm64-guest-test.sh). The guest installs infertop
# from the tarball, traces llama-bench, writes its results to the share and powers off. Arm64EmulatedIT reads them.
# Usage: arm64-stage.sh [--timeout SECONDS] OUT_DIR   (OUT_DIR becomes the share: results are left there)
# Prints timings on stderr; exits non-zero when the guest does not come back with its results in time.
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
timeout_s=1200
if [ "${1:-}" = "--timeout" ]; then timeout_s="$2"; shift 2; fi
out="${1:?usage: arm64-stage.sh [--timeout SECONDS] OUT_DIR}"
say() { printf 'infertop arm64 stage: %s\n' "$*" >&2; }
die() { printf 'infertop arm64 stage: %s\n' "$*" >&2; exit 1; }
start=$SECONDS
version="${INFERTOP_NODE_LLAMA_CPP_VERSION:-3.22.1}"
cache="${INFERTOP_CACHE:-$HOME/.cache/infertop}"
llama="$cache/llama.cpp-node-$version"
guest="$(bash "$here/provision-arm64.sh" "$cache" | tail -n1)"
say "provisioned in $((SECONDS - start)) s"

# The models: the tiny and tiny-moe synthetic presets (F16) quantized to Q8_0, since TCG runs int8 dot products
# ~20x slower than a board and float ~100x. Made once each, with the host's own llama-quantize.
quantized() { # PRESET: the synthetic preset quantized to Q8_0, made once; prints its path
  local out="$guest/$1-q8_0.gguf"
  if [ ! -f "$out" ]; then
    local quantize="$llama/build/bin/llama-quantize"
    [ -x "$quantize" ] || die "no $quantize: run src/scripts/provision-llama.sh"
    "$here/infertop" model "$1" "$guest/$1-f16.gguf" >/dev/null 2>"$guest/model-$1.log" \
      || die "infertop model $1 failed: see $guest/model-$1.log"
    "$quantize" "$guest/$1-f16.gguf" "$out.part" Q8_0 >"$guest/quantize-$1.log" 2>&1 \
      || die "llama-quantize failed: see $guest/quantize-$1.log"
    mv "$out.part" "$out"
    rm -f "$guest/$1-f16.gguf"
  fi
  echo "$out"
}
model="$(quantized tiny)"
moe_model="$(quantized tiny-moe)"

tarball="${INFERTOP_TARBALL:-}"
[ -n "$tarball" ] || tarball="$(bash "$here/package.sh" | tail -n1)"
[ -f "$tarball" ] || die "no release tarball $tarball"

rm -rf "$out" && mkdir -p "$out/llama"
cp "$tarball" "$out/"
cp -a "$llama"/build-arm64/bin/llama-bench "$llama"/build-arm64/bin/lib*.so* "$out/llama/"
cp "$model" "$out/model.gguf"
cp "$moe_model" "$out/moe.gguf"
cp "$here/arm64-guest-test.sh" "$out/guest-test.sh"
# LLAMA_DIR: where the guest puts llama-bench and its libraries, the build directory its RUNPATH names, as a
# board that built llama.cpp in place has them (no LD_LIBRARY_PATH, which infertop's calibration child lacks).
{ printf 'BENCH_ARGS=%q\n' "${INFERTOP_ARM64_BENCH_ARGS:--p 16 -n 8 -r 1 -t 2}"
  # The live view: a run long enough for several screens (the tiny model decodes fast even under TCG), on one
  # thread, so that infertop (at nice 10, yielding to the engine by design) keeps the other vCPU.
  printf 'LIVE_BENCH_ARGS=%q\n' "${INFERTOP_ARM64_LIVE_BENCH_ARGS:--p 16 -n 128 -r 2 -t 1}"
  printf 'MOE_BENCH_ARGS=%q\n' "${INFERTOP_ARM64_MOE_BENCH_ARGS:--p 8 -n 4 -r 1 -t 2}"
  # TCG beside a busy host runs the JVM and the library scans many times slower than a board: --patience
  printf 'PATIENCE=%q\n' "${INFERTOP_ARM64_PATIENCE:-10}"
  printf 'LLAMA_DIR=%q\n' "$llama/build-arm64/bin"; } >"$out/params"

say "booting the arm64 guest (TCG, 2 CPUs; at most $timeout_s s)"
boot=$SECONDS
# pauth-impdef=on: QEMU's cheap pointer-authentication algorithm (the architected one makes -cpu max ~4x
# slower; pauth=off is no option, ggml's armv8.6+ code uses retaa). -nic none: the guest needs no network.
status=0
timeout --kill-after=10 "$timeout_s" qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -m 4G \
  -nic none -nographic -no-reboot -kernel "$guest/vmlinuz" -initrd "$guest/root.cpio" \
  -append "console=ttyAMA0 rdinit=/init panic=-1 quiet" \
  -fsdev local,id=share,path="$out",security_model=none \
  -device virtio-9p-pci,fsdev=share,mount_tag=share \
  </dev/null >"$out/console.log" 2>&1 || status=$?
say "guest ran $((SECONDS - boot)) s (qemu status $status); stage $((SECONDS - start)) s in all"
[ -f "$out/done" ] || die "the guest did not finish its test (qemu status $status): see $out/console.log and $out/guest.log"
echo "$out"
