#!/usr/bin/env bash
# Builds target/infertop.jar (BPF objects for x86_64 and arm64 included) with a JDK 25. Extra args go to Maven.
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
source "$here/jdk25.sh"
cd "$here/../.."
mvn -B -q -DskipTests "$@" package
# An AOT cache (src/scripts/aot-cache.sh) is made for one jar: the JVM refuses it beside a rebuilt one, with a
# warning on every start. Drop it so the launcher starts plainly until it is made again.
aot=target/infertop.aot
if [ -f "$aot" ] && [ "$aot" -ot target/infertop.jar ]; then
  rm -f "$aot"
  echo "build: removed $aot (made for the previous jar); src/scripts/aot-cache.sh makes a new one" >&2
fi
