#!/usr/bin/env bash
# infertop beside its peers, on a quiet machine: one interleaved, rotated run of llama-bench decoding the
# synthetic 245 M-parameter bench model (-p 0 -n 64 -r REPS -t 2) under
#   none        no tracer (the round's baseline)
#   default     infertop as a user starts it: infertop --json -- llama-bench ... (default layers, --budget 1)
#   full        every operator on every graph: infertop --json --budget 0 -- llama-bench ...
#   bpftrace    the naive bpftrace one-liner: entry uprobes on every ggml_compute_forward_* + ggml_barrier +
#               llama_decode, a count per probe
#   bcc         a hand-written BCC tracer (src/scripts/peers/bcc-ggml.py): entry+return uprobes on 7 functions,
#               every call's duration through a perf buffer
# Each round runs all five in a rotated order; a tracer's figure is its decode tokens/s over the same round's
# `none`. Printed: per tracer the median ratio with its range over the rounds, over the whole run and over the
# repetitions after the first SKIP (llama-bench's own per-repetition figures, -o jsonl): a tracer that starts
# with the workload pays its start-up (infertop: the JIT, the overhead budget's first 2 s window with every
# graph traced, then a gap of at most 2 s) in the first seconds, and a run of 5 repetitions (~10 s) is mostly
# those; and infertop's time to its first interval line and peak RSS (VmHWM), from the same rounds.
#
#   src/scripts/bench-peers.sh [-r ROUNDS] [-n REPS] [-s SKIP] [-o OUT] [--install]
#
# --install: installs the peers from the distribution (bpftrace, bpfcc-tools). BCC compiles its programs
# against kernel headers and looks for them in /lib/modules/$(uname -r)/build; a VM kernel without a headers
# package gets Debian's linux-headers-amd64 linked there (the peer only probes user space: no kernel struct is
# read, so a near version serves).
# BCC runs under the distribution's /usr/bin/python3 (its python3-bpfcc module is installed for that one).
# Needs root. Holds /tmp/infertop-probes.lock (the tests take it too).
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
die() { printf 'bench-peers: %s\n' "$*" >&2; exit 1; }
rounds=6
reps=3
skip=2
out="bench-peers-$(date +%Y%m%d-%H%M%S).txt"
install=0
while [ $# -gt 0 ]; do
  case "$1" in
    -r) rounds="$2"; shift 2 ;;
    -n) reps="$2"; shift 2 ;;
    -s) skip="$2"; shift 2 ;;
    -o) out="$2"; shift 2 ;;
    --install) install=1; shift ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see -h)" ;;
  esac
done
[[ "$rounds" =~ ^[0-9]+$ && "$rounds" -ge 1 ]] || die "-r ROUNDS must be a positive number, got '$rounds'"
[[ "$reps" =~ ^[0-9]+$ && "$reps" -ge 1 ]] || die "-n REPS must be a positive number, got '$reps'"
[[ "$skip" =~ ^[0-9]+$ && "$skip" -lt "$reps" ]] || die "-s SKIP must be a number below -n REPS ($reps), got '$skip'"
[ "$(id -u)" = 0 ] || die "needs root (BPF probes): run it with sudo"

if [ "$install" = 1 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends bpftrace bpfcc-tools python3-bpfcc >/dev/null
  build="/lib/modules/$(uname -r)/build"
  if [ ! -e "$build" ]; then
    apt-get install -y -qq --no-install-recommends linux-headers-amd64 >/dev/null
    headers="$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -1)"
    [ -n "$headers" ] || die "no /usr/src/linux-headers-*-amd64 after installing linux-headers-amd64"
    mkdir -p "$(dirname "$build")"
    ln -s "$headers" "$build"
    echo "bench-peers: BCC's kernel headers: $build -> $headers" >&2
  fi
  # Debian splits the headers: the arch part (build) and the common part (include/linux/kconfig.h...), which
  # BCC finds through /lib/modules/$(uname -r)/source.
  source_dir="/lib/modules/$(uname -r)/source"
  if [ ! -e "$source_dir" ] && [ -L "$build" ]; then
    common="$(readlink -f "$build" | sed 's/-amd64$/-common/')"
    [ -d "$common" ] && ln -s "$common" "$source_dir" && echo "bench-peers: BCC's kernel sources: $source_dir -> $common" >&2
  fi
fi
command -v bpftrace >/dev/null || die "bpftrace is missing: run with --install"
/usr/bin/python3 -c 'import bcc' 2>/dev/null || die "BCC (python3-bpfcc) is missing: run with --install"

bench="" model="" # bench-workload.sh: the cache's
source "$here/bench-workload.sh"
bench_workload
libllama="$(readlink -f "$bench_bin/libllama.so")"
libbase="$(readlink -f "$bench_bin/libggml-base.so")"
libcpu="$(readlink -f "$bench_bin/libggml-cpu.so")"
decode_workload "$reps" -o jsonl
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# llama-bench's tokens/s of each repetition (its JSON line's samples_ts), comma-separated (after the run: a
# python3 start while a tracer is measured would cost the machine it is measured on).
tg() { python3 "$BENCHLIB" samples "$1"; }

# One run of the workload under tracer $1; prints "tokens/s-of-each-rep [first-line-ms rss-kib]".
run_one() {
  local tracer="$1" log="$work/$1.log" tpid
  case "$tracer" in
    none) "${workload[@]}" >"$log" 2>/dev/null; echo "$(tg "$log")" ;;
    default|full)
      local extra=()
      [ "$tracer" = full ] && extra=(--budget 0)
      : >"$work/json"
      local start=$EPOCHREALTIME first="" rss="NA" key value
      "$infertop" --json "${extra[@]}" -- "${workload[@]}" >"$work/json" 2>"$log" &
      tpid=$!
      # Shell builtins only while the workload runs (a fork per look would cost the machine the tracer is
      # measured on): the first line's arrival, and VmHWM (a high-water mark: any late look sees the peak).
      while kill -0 "$tpid" 2>/dev/null; do
        if [ -z "$first" ] && [ -s "$work/json" ]; then
          first=$(( (${EPOCHREALTIME/./} - ${start/./}) / 1000 ))
        fi
        while read -r key value _; do
          [ "$key" = "VmHWM:" ] && rss="$value"
        done </proc/$tpid/status 2>/dev/null || true
        sleep 0.2
      done
      wait "$tpid" || true
      # The JVM is the launcher's child when src/scripts/infertop execs java: VmHWM is read off the pid above.
      echo "$(tg "$log") ${first:-NA} $rss" ;;
    bpftrace)
      local probes="uprobe:$libcpu:ggml_compute_forward_*,uprobe:$libcpu:ggml_barrier,uprobe:$libllama:llama_decode"
      bpftrace -e "$probes { @[probe] = count(); }" >"$work/bt.out" 2>&1 &
      tpid=$!
      for _ in $(seq 1 600); do grep -q "Attaching" "$work/bt.out" 2>/dev/null && break; sleep 0.1; done
      sleep 2 # Attaching is printed before the probes are in
      "${workload[@]}" >"$log" 2>/dev/null
      kill -INT "$tpid"; wait "$tpid" || true
      echo "$(tg "$log")" ;;
    bcc)
      /usr/bin/python3 "$here/peers/bcc-ggml.py" "$libllama" "$libbase" "$libcpu" >"$work/bcc.out" 2>&1 &
      tpid=$!
      for _ in $(seq 1 600); do grep -q "attached" "$work/bcc.out" 2>/dev/null && break; sleep 0.1; done
      grep -q "attached" "$work/bcc.out" || { cat "$work/bcc.out" >&2; die "the BCC peer did not attach"; }
      "${workload[@]}" >"$log" 2>/dev/null
      kill -INT "$tpid"; wait "$tpid" || true
      echo "$(tg "$log")" ;;
  esac
}

exec 9>/tmp/infertop-probes.lock
flock 9
tracers=(none default full bpftrace bcc)
echo "bench-peers: $rounds rounds of ${#tracers[@]} runs of: ${workload[*]}" | tee "$out"
for round in $(seq 1 "$rounds"); do
  shift_by=$(( (round - 1) % ${#tracers[@]} ))
  order=("${tracers[@]:$shift_by}" "${tracers[@]:0:$shift_by}")
  for tracer in "${order[@]}"; do
    result="$(run_one "$tracer")"
    echo "round $round $tracer $result" | tee -a "$out"
  done
done
python3 - "$out" "$skip" <<'PY' | tee -a "$out"
import statistics, sys
from benchlib import ratio, spread
rows = [l.split() for l in open(sys.argv[1]) if l.startswith("round ")]
by_round = {}
for r in rows:
    by_round.setdefault(r[1], {})[r[2]] = r[3:]
skip = int(sys.argv[2])
def samples(values):
    return [float(x) for x in values[0].split(",")]
def ratio_stats(tracer, first):
    ratios = []
    for values in by_round.values():
        try:
            found = ratio(samples(values[tracer])[first:], samples(values["none"])[first:])
        except (KeyError, ValueError, IndexError):
            found = None
        if found is not None:
            ratios.append(found)
    return ratios
print("decode tokens/s relative to the same round's run without a tracer (median, range over rounds):")
print(f"  {'':9s} {'whole run':24s} after the first {skip} repetitions")
for tracer in ["default", "full", "bpftrace", "bcc"]:
    whole, steady = ratio_stats(tracer, 0), ratio_stats(tracer, skip)
    if whole and steady:
        print(f"  {tracer:9s} {spread(whole):24s} {spread(steady)}, {len(whole)} rounds")
base = [statistics.mean(samples(v["none"])) for v in by_round.values() if "none" in v and v["none"]]
if base:
    print(f"  none      {spread(base, 1)} tok/s")
for tracer in ["default", "full"]:
    first = [int(v[tracer][1]) for v in by_round.values() if tracer in v and len(v[tracer]) > 2 and v[tracer][1] != "NA"]
    rss = [int(v[tracer][2]) for v in by_round.values() if tracer in v and len(v[tracer]) > 2 and v[tracer][2] != "NA"]
    if first:
        print(f"infertop {tracer}: first interval line {spread([x / 1000 for x in first], 2)} s after exec "
              f"(includes llama-bench loading the model)"
              + (f"; peak RSS {spread([x / 1024 for x in rss], 0)} MB" if rss else ""))
PY
