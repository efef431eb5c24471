#!/usr/bin/env bash
# The full test suite: unit tests, then integration tests that attach real probes to a real llama.cpp.
# Installs what is missing first (as root). In CI (CI=true) a test that cannot run fails instead of skipping.
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
"$here/setup.sh"
source "$here/jdk25.sh"
cd "$here/../.."
exec mvn -B verify "$@"
