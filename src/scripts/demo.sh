#!/usr/bin/env bash
# Quick start: install what is missing, build, and trace the built-in demo workload (llama.cpp on a
# synthetic model). Extra arguments go to `infertop demo` (e.g. --model tiny, --json, -n 10, --build source).
# The demo's llama.cpp is Debian's prebuilt packages by default (seconds to unpack); --build source or npm
# (--prebuilt) asks setup.sh for the source build instead (minutes).
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
build=debian
previous=""
for argument in "$@"; do
  case "$previous:$argument" in
    --build:*) build="$argument" ;;
    *:--build=*) build="${argument#--build=}" ;;
    *:--prebuilt) build=npm ;;
  esac
  previous="$argument"
done
case "$build" in
  source|npm) "$here/setup.sh" --demo --build "$build" ;;
  *) "$here/setup.sh" --demo ;; # debian, or a kind infertop demo then refuses in one line
esac
exec "$here/infertop" demo "$@"
