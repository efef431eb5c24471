#!/usr/bin/env bash
# Installs what infertop needs and is missing (Debian/Ubuntu, as root), provisions the llama.cpp workload
# into the cache, and builds target/infertop.jar. Idempotent: a second run only rebuilds the jar.
#   setup.sh                       everything the test suite needs (also two older releases, Chromium, an arm64 guest)
#   setup.sh --demo                only what the demo needs: Debian's prebuilt llama.cpp unpacked into a root (seconds)
#   setup.sh --demo --build KIND   the demo's `infertop demo --build KIND` (source, npm: one llama.cpp source build,
#                                  minutes; debian: as --demo)
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
say() { printf 'infertop setup [%3d s]: %s\n' "$SECONDS" "$*" >&2; } # seconds since setup started
die() { printf 'infertop setup: %s\n' "$*" >&2; exit 1; }
demo=false
build=debian
while [ $# -gt 0 ]; do
  case "$1" in
    --demo) demo=true; shift ;;
    --build)
      $demo && [ $# -ge 2 ] || die "--build KIND goes after --demo (setup.sh --demo --build source)"
      build="$2"; shift 2 ;;
    *) die "unknown option '$1': use no option (all the tests need), --demo (only the demo) or --demo --build KIND" ;;
  esac
done
case "$build" in
  debian|source|npm) ;;
  *) die "--build must be debian, source or npm, got '$build'" ;;
esac

[ "$(id -u)" -eq 0 ] || die "run as root (it installs packages and infertop loads BPF probes): sudo $0"
command -v apt-get >/dev/null || die "this script installs with apt-get (Debian/Ubuntu); install by hand: maven clang llvm libbpf-dev bpftool npm git cmake g++ tmux chromium mmdebstrap"

# package → a file that shows it is installed
declare -A packages=(
  [maven]=/usr/bin/mvn [clang]=/usr/bin/clang [llvm]=/usr/bin/llvm-objdump [libbpf-dev]=/usr/include/bpf/bpf_helpers.h
  [bpftool]=/usr/sbin/bpftool [g++]=/usr/bin/g++
  [tmux]=/usr/bin/tmux [binutils]=/usr/bin/objdump [util-linux]=/usr/bin/setpriv
  [mmdebstrap]=/usr/bin/mmdebstrap # the demo, DistroContainerIT: Debian sid's llama.cpp in a root of its own
)
if ! $demo || [ "$build" != debian ]; then
  # The source build of llama.cpp (provision-llama.sh): the release bundled in an npm package, built with cmake.
  packages+=([npm]=/usr/bin/npm [git]=/usr/bin/git [cmake]=/usr/bin/cmake)
fi
if ! $demo; then
  # The tests also render report.html (Chromium),
  # check that Graphviz reads the DAG's DOT text (infertop draws its SVG itself), and scrape --listen with a
  # real Prometheus (PrometheusIT starts its own process; the package's service plays no part).
  packages+=([chromium]=/usr/bin/chromium [pkg-config]=/usr/bin/pkg-config [graphviz]=/usr/bin/dot
             [prometheus]=/usr/bin/prometheus
             [openssl]=/usr/bin/openssl # PrometheusIT: a certificate for --web-config, made as a user makes one
             [patchelf]=/usr/bin/patchelf # HostileLibraryIT: a DT_NEEDED library with a constructor
             # the jar's native helpers for arm64 (compile-bpf.sh), which the release tarball carries (ReleaseTarballIT),
             # and the emulated arm64 stage (Arm64EmulatedIT): llama-bench cross-compiled, a Debian 13 arm64 guest
             # booted under QEMU from an initramfs
             [gcc-aarch64-linux-gnu]=/usr/bin/aarch64-linux-gnu-gcc [g++-aarch64-linux-gnu]=/usr/bin/aarch64-linux-gnu-g++
             [qemu-system-arm]=/usr/bin/qemu-system-aarch64 [cpio]=/usr/bin/cpio [kmod]=/sbin/depmod)
fi
missing=()
for package in "${!packages[@]}"; do
  [ -e "${packages[$package]}" ] || missing+=("$package")
done
# libbpf.so.1 of this machine's architecture (one of the two is enough).
ls /usr/lib/x86_64-linux-gnu/libbpf.so.1 >/dev/null 2>&1 || ls /usr/lib/aarch64-linux-gnu/libbpf.so.1 >/dev/null 2>&1 \
  || missing+=(libbpf1)
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]} (apt-get: a minute or a few, once)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A JDK 25: the machine may already have one (e.g. Temurin under /usr/lib/jvm); else try the distribution's.
if ! (source "$here/jdk25.sh") 2>/dev/null; then
  say "no JDK 25 found: trying openjdk-25-jdk-headless from the distribution"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends openjdk-25-jdk-headless >/dev/null 2>&1 \
    || die "no JDK 25 available from apt here: install one (e.g. Temurin 25) under /usr/lib/jvm or set JAVA_HOME"
fi

# tracefs: the placement test uses it as an independent oracle.
if [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/uprobe_events ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || say "could not mount tracefs (only one test needs it)"
fi
[ -r /sys/kernel/btf/vmlinux ] || say "warning: this kernel has no BTF (/sys/kernel/btf/vmlinux): infertop needs --btf FILE here"

if $demo && [ "$build" = debian ]; then
  # The demo's llama.cpp (infertop demo --build debian, its default): Debian sid's packages, prebuilt, unpacked once.
  bash "$here/provision-distro-llama.sh" --root-only >/dev/null
elif $demo; then
  say "provisioning the llama.cpp source build (built once, then cached)"
  bash "$here/provision-llama.sh" >/dev/null
else
  say "provisioning the llama.cpp workload (built once, then cached)"
  bash "$here/provision-llama.sh" >/dev/null
  # llama.cpp's Vulkan backend on lavapipe, Vulkan on the CPU (VulkanOffloadIT): the npm package of the same
  # release beside that llama-bench, and Mesa's software driver (about 10 s on an empty cache).
  if [ "$(uname -m)" = x86_64 ]; then
    bash "$here/provision-vulkan.sh" >/dev/null
  fi
  # Older releases: struct layouts and op tables that differ from the current one (calibration tests), and a
  # llama-bench built from each one's own source (OlderReleaseIT: the whole tool on an older node loop; about
  # 3 minutes each on 2 cores).
  # A real client (ServingIT): node-llama-cpp and its prebuilt libraries.
  bash "$here/provision-node-client.sh" >/dev/null
  # An application that links llama.cpp statically into a Node addon (LinkedInAppIT): @fugood/llama.node.
  # Its prebuilt addon is x86_64's (LinkedInAppIT says so on another machine).
  if [ "$(uname -m)" = x86_64 ]; then
    say "provisioning @fugood/llama.node (llama.cpp inside a Node addon; seconds, once)"
    bash "$here/provision-llama-node.sh" >/dev/null
  fi
  for old in 3.3.0 3.2.0; do
    bash "$here/provision-old-llama.sh" --build llama-bench "$old" >/dev/null
  done
  # The newest llama.cpp as a distribution ships it (llama_process, stripped CPU variants, sid's libc), run as a
  # container by the tests (DistroContainerIT): unpacked into a root of its own, about 15 s; beside it roots with
  # sid's Vulkan backend on lavapipe (VulkanDistroIT) and its BLAS backend on OpenBLAS (BackendsIT).
  bash "$here/provision-distro-llama.sh" >/dev/null
  # A second GGML runtime (WhisperIT): Debian sid's whisper.cpp (whisper-cli, libwhisper1 on the same libggml0) in a
  # root of its own beside llama.cpp's, run as a container with a synthetic whisper model; under a minute, once.
  say "provisioning Debian sid's whisper.cpp root (unpacked once, then cached)"
  bash "$here/provision-distro-whisper.sh" >/dev/null
  # The emulated arm64 stage (Arm64EmulatedIT): llama-bench cross-compiled for arm64 and a Debian 13 arm64 guest
  # root packed as an initramfs.
  bash "$here/provision-arm64.sh" >/dev/null
fi

# The jar is rebuilt only when a source is newer than it: the journey tests run this script (through demo.sh)
# from inside `mvn verify`, whose jar is current, and must not rebuild it under the running suite.
root="$(readlink -f "$here/../..")"
jar="$root/target/infertop.jar"
if [ -f "$jar" ] && [ -z "$(find "$root/pom.xml" "$root/src/main" "$root/native" "$root/config" -newer "$jar" -print -quit)" ]; then
  say "target/infertop.jar is up to date"
else
  say "building target/infertop.jar (Maven: about a minute; longer the first time, while it fills ~/.m2)"
  "$here/build.sh"
fi
# The JVM's start-up cache for this jar (aot-cache.sh: one training run on the tiny model): infertop -p PID then
# shows its first screen about half a second sooner. Only a speed-up: without it infertop runs the same.
aot="${jar%.jar}.aot"
if [ -f "$aot" ] && [ "$aot" -nt "$jar" ]; then
  say "target/infertop.aot is up to date"
else
  say "writing the JVM's start-up cache target/infertop.aot (a ~20 s training run)"
  "$here/aot-cache.sh" 2>/dev/null || say "warning: no start-up cache written (infertop starts slower; run src/scripts/aot-cache.sh to see why)"
fi
# This machine's roofline ceilings (memory read bandwidth, FMA throughput), measured once now while the machine is
# idle (no workload runs yet) and cached, so the live view's roofline (R) has a verdict from its first screen;
# a later run finds them cached (for this thread count, and the uprobe cost for this kernel) and starts no JVM for them.
machine_cache="${INFERTOP_CACHE:-$HOME/.cache/infertop}/machine"
if [ -f "$machine_cache/ceilings-t$(nproc).json" ] \
   && grep -qF "\"kernel\" : \"$(uname -r)\"" "$machine_cache/uprobe-hit.json" 2>/dev/null; then
  say "this machine's ceilings are cached in $machine_cache (infertop machine prints them)"
elif ! ceilings="$("$here/infertop" machine)"; then
  say "warning: could not measure this machine's ceilings: the roofline gives no verdict until infertop machine does"
else
  say "this machine's ceilings (infertop machine):"
  printf '%s\n' "$ceilings" | sed 's/^/  /' >&2
fi
# `infertop` on PATH, pointing at this checkout.
ln -sf "$here/infertop" /usr/local/bin/infertop
say "done in $SECONDS s: infertop --help (or man $(readlink -f "$here/../../man/infertop.1"))"
