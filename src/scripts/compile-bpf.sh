#!/usr/bin/env bash
# Compiles every native/*.bpf.c for x86_64 and arm64 (CO-RE: one object per architecture, relocated
# against the running kernel's BTF at load time). Called by Maven in generate-resources.
# Usage: compile-bpf.sh NATIVE_DIR OUT_DIR   → OUT_DIR/<x86_64|arm64>/<name>.bpf.o
# Also native/tools/uprobe-cost.c, enter-target-root.c and launch-target.c (user-space programs; the last two share
# native/tools/confine.h), for this machine's architecture
# and, where Debian's cross compiler gcc-aarch64-linux-gnu is installed on an x86_64 machine, for arm64 too (the
# release tarball then runs on a board): → OUT_DIR/../machine/<arch>/uprobe-cost, the loop `infertop machine`
# times a probe hit on, OUT_DIR/../process/layout/<arch>/enter-target-root, the calibration child's sandbox, and
# OUT_DIR/../process/<arch>/launch-target, what a launched command starts as.
# The cross-compiled ones are static: they run on any arm64 libc.
set -euo pipefail
native="$1"; out="$2"
die() { printf '[ERROR] infertop build: %s\n' "$*" >&2; exit 1; }

clang_bin="${CLANG:-$(command -v clang || command -v clang-14 || true)}"
[ -n "$clang_bin" ] || die "clang is missing: it compiles the BPF programs in native/. Install it: apt-get install -y clang llvm libbpf-dev bpftool"
libbpf_inc=""
for d in /usr/include /usr/local/include; do
  [ -f "$d/bpf/bpf_helpers.h" ] && libbpf_inc="$d" && break
done
[ -n "$libbpf_inc" ] || die "libbpf headers (bpf/bpf_helpers.h) are missing: apt-get install -y libbpf-dev"
command -v bpftool >/dev/null 2>&1 || [ -x /usr/sbin/bpftool ] || die "bpftool is missing (tests use it to prove no probe is left behind): apt-get install -y bpftool"

# uapi headers (linux/bpf.h, asm/types.h) are the same for both targets: take the host's multiarch dir.
multiarch="$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"
for arch in x86_64 arm64; do
  case "$arch" in x86_64) target_arch=x86 ;; arm64) target_arch=arm64 ;; esac
  mkdir -p "$out/$arch"
  for src in "$native"/*.bpf.c; do
    name="$(basename "$src" .c)"
    "$clang_bin" -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_"$target_arch" \
      -I "$native" -I "$libbpf_inc" -I "/usr/include/$multiarch" \
      -c "$src" -o "$out/$arch/$name.o" \
      || die "clang failed on $src for $arch (see the messages above)"
  done
done

host_arch="$(uname -m)"
case "$host_arch" in aarch64) host_arch=arm64 ;; esac
mkdir -p "$out/../machine/$host_arch"
cc_bin="$(command -v cc || command -v gcc || echo "$clang_bin")"
"$cc_bin" -O2 -Wall -Werror -o "$out/../machine/$host_arch/uprobe-cost" "$native/tools/uprobe-cost.c" \
  || die "the C compiler failed on $native/tools/uprobe-cost.c (see the messages above)"
# The calibration child's way into a target's own root (a container): host side of infertop, this architecture.
mkdir -p "$out/../process/layout/$host_arch"
"$cc_bin" -O2 -Wall -Werror -o "$out/../process/layout/$host_arch/enter-target-root" "$native/tools/enter-target-root.c" \
  || die "the C compiler failed on $native/tools/enter-target-root.c (see the messages above)"
mkdir -p "$out/../process/$host_arch"
"$cc_bin" -O2 -Wall -Werror -o "$out/../process/$host_arch/launch-target" "$native/tools/launch-target.c" \
  || die "the C compiler failed on $native/tools/launch-target.c (see the messages above)"

# arm64 from an x86_64 build machine, when the cross compiler is there (setup.sh installs it for the test suite).
cross_cc="${AARCH64_CC:-$(command -v aarch64-linux-gnu-gcc || true)}"
if [ "$host_arch" != arm64 ] && [ -n "$cross_cc" ]; then
  mkdir -p "$out/../machine/arm64" "$out/../process/layout/arm64" "$out/../process/arm64"
  "$cross_cc" -O2 -Wall -Werror -static -o "$out/../machine/arm64/uprobe-cost" "$native/tools/uprobe-cost.c" \
    || die "$cross_cc failed on $native/tools/uprobe-cost.c (see the messages above)"
  "$cross_cc" -O2 -Wall -Werror -static -o "$out/../process/layout/arm64/enter-target-root" "$native/tools/enter-target-root.c" \
    || die "$cross_cc failed on $native/tools/enter-target-root.c (see the messages above)"
  "$cross_cc" -O2 -Wall -Werror -static -o "$out/../process/arm64/launch-target" "$native/tools/launch-target.c" \
    || die "$cross_cc failed on $native/tools/launch-target.c (see the messages above)"
fi
