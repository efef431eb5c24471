#!/usr/bin/env bash
# Provisions whisper.cpp as a distribution ships it: Debian sid's whisper.cpp-tools (whisper-cli and the other
# tools) and libwhisper1, on sid's libggml0 (the same package the llama.cpp root has: CPU variants dlopen'ed from a
# backends directory, OpenMP on, stripped), unpacked with their dependencies (sid's libc, and the FFmpeg libraries
# whisper-cli is linked with) into a root of their own, as a container image carries them. The host never runs
# them directly: src/scripts/container-run.sh starts a tool from this root in its own namespaces (WhisperIT).
# A sibling of provision-distro-llama.sh's root, made the same way (mmdebstrap's extract variant: unpack only, no
# maintainer script runs), kept apart because FFmpeg's dependencies make it six times the size (about 35 s and
# 500 MB here): the demo, which needs only llama.cpp's root, does not pay for it.
# Idempotent: skipped when its stamp exists.
# Usage: provision-distro-whisper.sh [CACHE_DIR]    (default: $INFERTOP_CACHE or ~/.cache/infertop)
# Prints the root on its last line of stdout; progress goes to stderr.
set -euo pipefail

cache="${1:-${INFERTOP_CACHE:-$HOME/.cache/infertop}}"
dir="$cache/whisper.cpp-debian-sid"
root="$dir/root"
suite="${INFERTOP_DISTRO_SUITE:-sid}"
mirror="${INFERTOP_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
packages=(whisper.cpp-tools libwhisper1 libggml0)

say() { printf 'infertop: %s\n' "$*" >&2; }
die() { printf 'infertop: %s\n' "$*" >&2; exit 1; }

case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  *) die "no Debian whisper.cpp root for $(uname -m): only x86_64 and aarch64" ;;
esac
[ "$(id -u)" -eq 0 ] || die "run as root (mmdebstrap unpacks a root owned by root)"
command -v mmdebstrap >/dev/null 2>&1 || die "mmdebstrap is missing: apt-get install -y mmdebstrap"

if [ ! -f "$dir/root.stamp" ]; then
  say "unpacking Debian $suite's ${packages[*]} and their dependencies into a root of their own (mmdebstrap, under a minute and about 500 MB)"
  start=$SECONDS
  rm -rf "$root" "$dir/root.tmp"
  mkdir -p "$dir"
  # sid's Release file can be past its Valid-Until in a mirror that is not refreshed daily.
  if ! mmdebstrap --variant=extract --architectures="$arch" --include="$(IFS=,; echo "${packages[*]}")" \
       --aptopt='Acquire::Check-Valid-Until "false"' "$suite" "$dir/root.tmp" "$mirror" >"$dir/mmdebstrap.log" 2>&1; then
    die "mmdebstrap failed: see $dir/mmdebstrap.log"
  fi
  cd "$dir/root.tmp"
  # usrmerge's links (a maintainer script makes them in a full install)
  for d in bin sbin lib lib64; do
    [ -e "usr/$d" ] && [ ! -e "$d" ] && ln -s "usr/$d" "$d"
  done
  mkdir -p proc sys models tmp
  chmod 1777 tmp
  grep -q '^root:' etc/passwd 2>/dev/null || echo 'root:x:0:0:root:/root:/bin/sh' >>etc/passwd
  [ -x usr/bin/whisper-cli ] || die "the unpacked root has no whisper-cli: see $dir/mmdebstrap.log"
  # What was installed, for the record (and the tests' messages); the extract variant leaves no dpkg status:
  # each package's changelog names its version.
  for p in "${packages[@]}"; do
    v=$(zcat "usr/share/doc/$p/changelog.Debian.gz" 2>/dev/null | sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' || true)
    echo "$p ${v:-?}"
  done >"$dir/versions.txt"
  cd "$dir"
  mv root.tmp root
  touch root.stamp
  say "unpacked in $((SECONDS - start)) s ($(du -sm "$root" | cut -f1) MB)"
fi
say "Debian $suite whisper.cpp root ready in $root ($(tr '\n' ' ' <"$dir/versions.txt"))"
echo "$root"
