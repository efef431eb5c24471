#!/usr/bin/env bash
# Writes target/infertop-VERSION.tar.gz (VERSION from the pom): what a board needs to run infertop with only its
# distribution's JRE 25 and libbpf — the jar (BPF objects and native helpers for x86_64 and arm64 inside), the
# launcher, the man page, config/ and an install note. Builds the jar first when a source is newer than it.
# Usage: package.sh   Prints the tarball's path on stdout.
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
root="$(readlink -f "$here/../..")"
say() { printf 'infertop package: %s\n' "$*" >&2; }
die() { printf 'infertop package: %s\n' "$*" >&2; exit 1; }
cd "$root"
# The project's own <version> (the first one after its artifactId; the parent-less pom has no earlier one).
version="$(sed -n '/<artifactId>infertop<\/artifactId>/,/<version>/s/.*<version>\(.*\)<\/version>.*/\1/p' pom.xml | head -n1)"
[ -n "$version" ] || die "no <version> found in pom.xml"
jar=target/infertop.jar
if [ ! -f "$jar" ] || [ -n "$(find pom.xml src/main native config -newer "$jar" -print -quit)" ]; then
  say "building $jar"
  "$here/build.sh"
fi
# A board is x86_64 or arm64: the tarball is for both, so the jar must carry each one's BPF object and helpers.
source "$here/jdk25.sh"
contents="$("$JAVA_HOME/bin/jar" tf "$jar")"
for arch in x86_64 arm64; do
  for entry in dev/infertop/bpf/$arch/infertop.bpf.o dev/infertop/machine/$arch/uprobe-cost \
               dev/infertop/process/layout/$arch/enter-target-root dev/infertop/process/$arch/launch-target; do
    grep -qx "$entry" <<<"$contents" \
      || die "$jar lacks $entry: for arm64 install gcc-aarch64-linux-gnu (Debian) and build again (src/scripts/build.sh)"
  done
done
name="infertop-$version"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/bin" "$stage/$name/man/man1"
cp "$jar" "$stage/$name/bin/infertop.jar"
cp src/scripts/infertop src/scripts/jdk25.sh "$stage/$name/bin/"
cp man/infertop*.1 "$stage/$name/man/man1/" # infertop.1 and a page per command
cp -r config "$stage/$name/config"
cat >"$stage/$name/INSTALL" <<NOTE
infertop $version — install on a board (x86_64 or arm64, Linux with BTF: /sys/kernel/btf/vmlinux)

1. Two packages from the distribution (Debian 13 "trixie", as root):
     apt install openjdk-25-jre-headless libbpf1
   Debian 12 ships no JDK 25, and Debian 13's needs glibc 2.38: there, install a JDK 25 from elsewhere
   (e.g. Temurin 25 under /usr/lib/jvm) or set JAVA_HOME to one.
2. Unpack anywhere and run as root (it loads BPF probes):
     tar xzf $name.tar.gz
     $name/bin/infertop --version
     $name/bin/infertop -- llama-bench -m MODEL.gguf
   Optionally: ln -s \$PWD/$name/bin/infertop /usr/local/bin/infertop; man $name/man/man1/infertop.1
   config/ holds the key bindings, counter sets and the Prometheus/Grafana examples (see the man page).
NOTE
mkdir -p target
out="target/$name.tar.gz"
tar -C "$stage" --owner=0 --group=0 --sort=name -czf "$out" "$name"
say "wrote $out ($(du -h "$out" | cut -f1))"
echo "$root/$out"
