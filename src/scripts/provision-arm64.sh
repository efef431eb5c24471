#!/usr/bin/env bash
# Provisions the emulated arm64 stage (src/scripts/arm64-stage.sh boots it), cached like the other builds:
#   1. llama-bench for arm64, cross-compiled (aarch64-linux-gnu, CPU backend, NEON and dot product, Release) from
#      the same llama.cpp source release provision-llama.sh provisions: → llama.cpp-node-VERSION/build-arm64/bin;
#   2. a Debian 13 (trixie) arm64 guest root with its kernel, libbpf1, a JRE 25 and llama-bench's libraries
#      (mmdebstrap --variant=extract: unpacks only, no emulated maintainer scripts; the few things those scripts
#      would have done are done by hand below), packed as an initramfs: → arm64-guest/root.cpio + vmlinuz.
# Idempotent: each step leaves a stamp and is skipped when its stamp exists.
# Usage: provision-arm64.sh [--llama|--guest] [CACHE_DIR]   (default: both; $INFERTOP_CACHE or ~/.cache/infertop)
# Prints the guest directory on its last line of stdout; progress goes to stderr.
set -euo pipefail
steps="llama guest"
case "${1:-}" in
  --llama) steps=llama; shift ;;
  --guest) steps=guest; shift ;;
esac
here="$(dirname "$(readlink -f "$0")")"
version="${INFERTOP_NODE_LLAMA_CPP_VERSION:-3.22.1}"
cache="${1:-${INFERTOP_CACHE:-$HOME/.cache/infertop}}"
llama="$cache/llama.cpp-node-$version"
guest="$cache/arm64-guest"
jobs="$(nproc)"
say() { printf 'infertop arm64: %s\n' "$*" >&2; }
die() { printf 'infertop arm64: %s\n' "$*" >&2; exit 1; }
source "$(dirname "$(readlink -f "$0")")/cmake-progress.sh"
for tool in aarch64-linux-gnu-gcc aarch64-linux-gnu-g++ cmake mmdebstrap cpio qemu-system-aarch64 /sbin/depmod; do
  command -v "$tool" >/dev/null 2>&1 \
    || die "'$tool' is missing: apt-get install -y gcc-aarch64-linux-gnu g++-aarch64-linux-gnu cmake mmdebstrap cpio qemu-system-arm kmod"
done
[ -f "$llama/src.stamp" ] || bash "$here/provision-llama.sh" "$cache" >/dev/null

# 1. llama-bench for arm64. armv8.2-a+dotprod: NEON and the int8 dot product (sdot), what a Q8_0 matmul uses on
# RK3588 and Raspberry Pi 5 boards; one CPU variant built in (no GGML_BACKEND_DL), so the node loop is in
# libggml-cpu.so as on x86-64.
arm_flags="-DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv8.2-a+dotprod"
if [[ " $steps " == *" llama "* ]] && { [ ! -f "$llama/build-arm64.stamp" ] || [ "$(cat "$llama/build-arm64.stamp")" != "flags: $arm_flags" ]; }; then
  say "cross-compiling llama-bench for arm64 (Release, $arm_flags; a few minutes on 2 cores)"
  cat >"$llama/aarch64-toolchain.cmake" <<'TOOLCHAIN'
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
TOOLCHAIN
  # shellcheck disable=SC2086
  cmake -S "$llama/src" -B "$llama/build-arm64" -DCMAKE_TOOLCHAIN_FILE="$llama/aarch64-toolchain.cmake" \
        -DCMAKE_BUILD_TYPE=Release -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF $arm_flags >"$llama/build-arm64-configure.log" 2>&1 \
    || die "cmake configure (arm64) failed: see $llama/build-arm64-configure.log"
  cmake --build "$llama/build-arm64" -j "$jobs" --target llama-bench 2>"$llama/build-arm64.log" \
    | cmake_progress || :
  [ -x "$llama/build-arm64/bin/llama-bench" ] || die "the arm64 build did not produce llama-bench: see $llama/build-arm64.log"
  echo "flags: $arm_flags" >"$llama/build-arm64.stamp"
fi

# 2. The guest root. Packages: the kernel (with BTF), what infertop needs on a board (libbpf1, the JRE), what the
# cross-built llama-bench needs beyond glibc (readelf -d: libstdc++6, libgcc-s1, libgomp1 for OpenMP), busybox
# for the init script's tools, bsdutils for `script` (a pty for the live view), kmod for the 9p modules.
mkdir -p "$guest"
format=newc # of the initramfs: in the stamp, so that a change of format makes it again
packages=linux-image-arm64,libbpf1,openjdk-25-jre-headless,libstdc++6,libgcc-s1,libgomp1,busybox,util-linux,bsdutils,kmod,bash,dash,coreutils,tar,gzip,sed,grep
if [[ " $steps " == *" guest "* ]] && { [ ! -f "$guest/root.stamp" ] || [ "$(cat "$guest/root.stamp")" != "packages: $packages $format" ]; }; then
  say "unpacking a Debian 13 arm64 root (mmdebstrap --variant=extract; about a minute)"
  rm -rf "$guest/root" "$guest/root.cpio" "$guest/root.stamp"
  mmdebstrap --quiet --variant=extract --architectures=arm64 --include="$packages" trixie "$guest/root" \
      http://deb.debian.org/debian >"$guest/mmdebstrap.log" 2>&1 \
    || die "mmdebstrap failed: see $guest/mmdebstrap.log"
  r="$guest/root"
  # What the maintainer scripts would have done: accounts, the java alternative, modules.dep, busybox's applets.
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$r/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
  jre="$(ls -d "$r"/usr/lib/jvm/java-25-openjdk-arm64 2>/dev/null)" || die "no JRE 25 in the guest root"
  ln -sf /usr/lib/jvm/java-25-openjdk-arm64/bin/java "$r/usr/bin/java"
  kver="$(ls "$r/lib/modules" | head -n1)"
  depmod=/sbin/depmod
  "$depmod" -b "$r" "$kver" || die "depmod failed for the guest's kernel $kver"
  # Of the kernel's ~400 MB of modules the guest loads only 9p over virtio (the rest it needs is built in:
  # virtio-pci, tracefs, uprobes, BPF): keep that closure, so the initramfs stays small and quick to unpack.
  keep="$(for m in 9p 9pnet_virtio; do "$(dirname "$depmod")/modprobe" -d "$r" -S "$kver" --show-depends "$m"; done \
          | sed -n 's/^insmod \([^ ]*\).*/\1/p' | sort -u)"
  [ -n "$keep" ] || die "no 9p modules found for the guest's kernel $kver"
  find "$r/lib/modules/$kver/kernel" -type f | grep -vxF "$keep" | xargs rm -f
  "$depmod" -b "$r" "$kver" || die "depmod failed for the guest's kernel $kver"
  cp "$r/boot/vmlinuz-$kver" "$guest/vmlinuz"
  mkdir -p "$r/share" "$r/tmp" "$r/proc" "$r/sys" "$r/dev" "$r/root"
  # The kernel runs /init from the initramfs: mount what a test needs, then run the test the share carries
  # (arm64-guest-test.sh, copied there at each boot by arm64-stage.sh, so it can change without a new root).
  cat >"$r/init" <<'INIT'
#!/usr/bin/busybox sh
/usr/bin/busybox mkdir -p /bin /sbin
/usr/bin/busybox --install -s /bin 2>/dev/null
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mkdir -p /dev/pts; mount -t devpts devpts /dev/pts; mount -t tmpfs tmp /tmp
mount -t tracefs nodev /sys/kernel/tracing; mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
modprobe 9pnet_virtio; modprobe 9p
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576 share /share && [ -f /share/guest-test.sh ]; then
  bash /share/guest-test.sh >/share/guest.log 2>&1
else
  echo "infertop arm64 guest: no share or no /share/guest-test.sh" >&2
fi
sync
echo o >/proc/sysrq-trigger
poweroff -f
INIT
  chmod 755 "$r/init"
  say "packing the root as an initramfs (cpio, uncompressed)"
  # Documentation, locales and the kernel's image (booted with -kernel) are not needed inside.
  rm -rf "$r/usr/share/doc" "$r/usr/share/man" "$r/usr/share/locale" "$r/boot" "$r/var/cache/apt"
  # Uncompressed: the guest's kernel copies it instead of inflating it under TCG (boot to /init 19 s, not 40 s).
  (cd "$r" && find . -print0 | cpio --null -o -H newc --quiet >"$guest/root.cpio")
  (cd "$r" && find . >"$guest/root.files")
  rm -rf "$r"
  echo "packages: $packages $format" >"$guest/root.stamp"
  say "guest root: $(du -h "$guest/root.cpio" | cut -f1)"
fi
# What the cross-built llama-bench needs beyond its own libraries (readelf -d) must be in the guest's root.
if [ -f "$llama/build-arm64.stamp" ] && [ -f "$guest/root.stamp" ]; then
  needed="$(aarch64-linux-gnu-readelf -d "$llama"/build-arm64/bin/*.so* "$llama/build-arm64/bin/llama-bench" 2>/dev/null \
            | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | grep -v '^lib\(llama\|ggml\|mtmd\)' | sort -u)"
  for lib in $needed; do
    grep -q "/$lib\$" "$guest/root.files" \
      || die "the guest root lacks $lib, which the arm64 llama-bench needs: add its package to provision-arm64.sh"
  done
fi
say "arm64 stage ready in $guest"
echo "$guest"
