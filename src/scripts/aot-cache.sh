#!/usr/bin/env bash
# Writes the JDK's AOT cache for infertop beside its jar (target/infertop.aot for target/infertop.jar), which
# src/scripts/infertop then passes to the JVM: the classes a run loads, already parsed and linked, the method
# handles of the native bindings already spun, and method profiles, from one training run. A later start skips
# that work (src/scripts/bench-start.sh measures it). Optional: without the file infertop starts as before.
#
#   src/scripts/aot-cache.sh [-b LLAMA_BENCH]
#
# The training run traces the provisioned llama-bench (src/scripts/setup.sh) on a tiny synthetic model for
# three intervals, with the default layers: run it as root, after each build (a cache of another jar is ignored
# by the JVM, with a warning on stderr). INFERTOP_JAR names another jar, as for the launcher.
# Where only the demo's Debian llama.cpp is provisioned (setup.sh --demo), the training run is the demo itself on
# the tiny model: Debian's llama-bench in a container, attached to by pid, in the same live view.
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
die() { printf 'aot-cache: %s\n' "$*" >&2; exit 1; }
cache="${INFERTOP_CACHE:-$HOME/.cache/infertop}"
bench="$cache/llama.cpp-node-3.22.1/build/bin/llama-bench"
given=false
while getopts "b:h" opt; do
  case "$opt" in
    b) bench="$OPTARG"; given=true ;;
    h) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option (see -h)" ;;
  esac
done
[ "$(id -u)" = 0 ] || die "needs root (the training run attaches probes)"
debian=false
if [ ! -x "$bench" ] && ! $given && [ -f "$cache/llama.cpp-debian-sid/root.stamp" ]; then
  debian=true
fi
$debian || [ -x "$bench" ] || die "llama-bench not found at $bench: run src/scripts/setup.sh, or give -b PATH"
jar="${INFERTOP_JAR:-$here/../../target/infertop.jar}"
[ -f "$jar" ] || die "$jar not found: build it first (src/scripts/build.sh)"
jar="$(readlink -f "$jar")"
aot="${jar%.jar}.aot"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
INFERTOP_JAR="$jar" "$here/infertop" model tiny "$work/tiny.gguf" >/dev/null 2>&1 || die "cannot write the tiny model"
rm -f "$aot" # the training run must not start from the cache it replaces
# The live view (what `infertop -p PID` opens) on a pseudo-terminal from script(1), quit with q after a few
# intervals: the classes of the terminal, the panels and the collector's warm-up are then in the cache too.
echo "aot-cache: training run (the live view on llama-bench with a tiny model, ~15 s), then the cache is written" >&2
command -v script >/dev/null || die "script (util-linux) is missing: apt-get install -y util-linux"
if $debian; then
  training="'$here/infertop' demo -d 0.5 --model tiny --workload bench"
else
  training="'$here/infertop' -d 0.5 -- '$bench' -m '$work/tiny.gguf' -p 0 -n 256 -r 1000 -t 2"
fi
{ sleep 9; printf q; sleep 10; printf q; } | TERM=xterm-256color COLUMNS=120 LINES=40 timeout 90 script -qfec \
  "env INFERTOP_JAR='$jar' INFERTOP_AOT_OUTPUT='$work/infertop.aot' $training 2>'$work/training.log'" /dev/null \
  >/dev/null || true # q ends it with the launched command's status (killed): the cache written is what counts
[ -s "$work/infertop.aot" ] || { cat "$work/training.log" >&2; die "the JVM wrote no AOT cache"; }
install -m 644 "$work/infertop.aot" "$aot"
echo "aot-cache: wrote $aot ($(du -h "$aot" | cut -f1))" >&2
