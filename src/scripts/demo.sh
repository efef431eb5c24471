#!/usr/bin/env bash
# Quick start: install what is missing, build, and trace the built-in demo workload (llama.cpp on a
# synthetic model). Extra arguments go to `infertop demo` (e.g. --model tiny, --json, -n 10).
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
"$here/setup.sh" --demo
exec "$here/infertop" demo "$@"
