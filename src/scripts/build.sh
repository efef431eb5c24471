#!/usr/bin/env bash
# Builds target/infertop.jar (BPF objects for x86_64 and arm64 included) with a JDK 25. Extra args go to Maven.
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
source "$here/jdk25.sh"
cd "$here/../.."
exec mvn -B -q -DskipTests "$@" package
