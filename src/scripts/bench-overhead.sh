#!/usr/bin/env bash
# What does infertop cost on this machine? One command, meant for a quiet machine (nothing else running).
#
#   src/scripts/bench-overhead.sh [-p PAIRS] [-r REPS] [-o OUT] [-m MODEL] [-b LLAMA_BENCH] [-L "LAYERS ..."] [-c]
#
# For each layer set (default: "token,graph" and "token,graph,operator"):
#  1. cost by counting work (survives a busy machine): one traced run of
#     `llama-bench -m MODEL -p 0 -n 64 -r REPS -t 2` with kernel.bpf_stats_enabled=1, sampled every 0.5 s:
#     each BPF program's hits and ns per hit, hits and BPF µs per generated token, and infertop's own CPU
#     (its whole JVM, and per thread: collector, compiler, GC) per generated token;
#  2. the slowdown: `infertop overhead --pairs PAIRS` (interleaved with/without pairs after a warm-up
#     pair): median decode tokens/s ratio with the pairs' range, target CPU per token with and without.
# -c: step 1 only (cost by counting). INFERTOP=COMMAND runs another infertop (e.g. an older build) in its place.
# Everything printed is also written to OUT (default: bench-overhead-<date>.txt in the current directory).
# Defaults: PAIRS 7, REPS 5, MODEL the synthetic 245 M-parameter bench model in ~/.cache/infertop/models
# (written if missing), LLAMA_BENCH the source build in ~/.cache/infertop (src/scripts/setup.sh provisions it).
# Needs root. Hold /tmp/infertop-probes.lock if other infertop tests may run at the same time.
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
die() { printf 'bench-overhead: %s\n' "$*" >&2; exit 1; }

pairs=7
reps=5
out="bench-overhead-$(date +%Y%m%d-%H%M%S).txt"
cache="${INFERTOP_CACHE:-$HOME/.cache/infertop}"
model="$(ls -1 "$cache"/models/bench-s*-*.gguf 2>/dev/null | head -1 || true)" # the one the tests write
[ -n "$model" ] || model="$cache/models/bench.gguf"
bench=""
layer_sets="token,graph token,graph,operator"
cost_only=0
while getopts "p:r:o:m:b:L:ch" opt; do
  case "$opt" in
    p) pairs="$OPTARG" ;;
    r) reps="$OPTARG" ;;
    o) out="$OPTARG" ;;
    m) model="$OPTARG" ;;
    b) bench="$OPTARG" ;;
    L) layer_sets="$OPTARG" ;;
    c) cost_only=1 ;;
    h) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option (see -h)" ;;
  esac
done
[[ "$pairs" =~ ^[0-9]+$ && "$pairs" -ge 1 ]] || die "-p PAIRS must be a positive number, got '$pairs'"
[[ "$reps" =~ ^[0-9]+$ && "$reps" -ge 1 ]] || die "-r REPS must be a positive number, got '$reps'"
[ "$(id -u)" = 0 ] || die "needs root (BPF probes, kernel.bpf_stats_enabled): run it with sudo"
command -v bpftool >/dev/null || die "bpftool is missing: apt-get install -y bpftool"
command -v python3 >/dev/null || die "python3 is missing (it parses bpftool's JSON): apt-get install -y python3"
infertop="${INFERTOP:-$here/infertop}"
if [ -z "$bench" ]; then
  bench="$cache/llama.cpp-node-3.22.1/build/bin/llama-bench" # the source build (LlamaCppWorkload's version)
fi
[ -n "$bench" ] && [ -x "$bench" ] || die "llama-bench not found: run src/scripts/setup.sh, or give -b PATH"
if [ ! -f "$model" ]; then
  echo "bench-overhead: writing the synthetic bench model to $model" >&2
  mkdir -p "$(dirname "$model")"
  "$infertop" model bench "$model" >&2
fi

workload=("$bench" -m "$model" -p 0 -n 64 -r "$reps" -t 2)
stats_before="$(sysctl -n kernel.bpf_stats_enabled)"
restore() { sysctl -q -w kernel.bpf_stats_enabled="$stats_before" || true; }
trap restore EXIT

{
  echo "infertop overhead benchmark  $(date -u +%Y-%m-%dT%H:%M:%SZ)  $(uname -r)  $(nproc) CPUs"
  echo "workload: ${workload[*]}"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"

for layers in $layer_sets; do
  echo | tee -a "$out"
  echo "== layers $layers: cost by counting (one traced run, bpf_stats on) ==" | tee -a "$out"
  sysctl -q -w kernel.bpf_stats_enabled=1
  json="$(mktemp)"
  "$infertop" --json -d 1 --layers "$layers" -- "${workload[@]}" >"$json" 2>/dev/null &
  jvm=$!
  python3 - "$jvm" "$json" <<'PY' | tee -a "$out"
import json, os, subprocess, sys, time

jvm, json_path = int(sys.argv[1]), sys.argv[2]
ticks = os.sysconf("SC_CLK_TCK")

def threads_cpu():
    """tid -> (name, cpu seconds) for every thread of infertop's JVM (threads that exited keep their last value)."""
    result = {}
    try:
        for tid in os.listdir(f"/proc/{jvm}/task"):
            try:
                stat = open(f"/proc/{jvm}/task/{tid}/stat").read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            result[tid] = (name, (int(fields[11]) + int(fields[12])) / ticks)
    except OSError:
        pass
    return result

def programs():
    """BPF programs whose names are infertop's handlers -> (run_cnt, run_time_ns)."""
    try:
        out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True, timeout=10).stdout
        progs = json.loads(out or "[]")
    except (subprocess.SubprocessError, ValueError):
        return {}
    result = {}
    for p in progs:
        name = p.get("name", "")
        pids = [x.get("pid") for x in p.get("pids", [])]
        if not name.startswith("handle_") or (pids and jvm not in pids):
            continue
        result[name] = (p.get("run_cnt", 0), p.get("run_time_ns", 0))
    return result

def tokens_so_far():
    """Generated tokens in infertop's interval records so far, and the final total once written."""
    interval_sum, final = 0, None
    try:
        for line in open(json_path):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("final"):
                final = record.get("tokens_decode", 0)
            else:
                interval_sum += record.get("tokens_decode", 0)
    except OSError:
        pass
    return interval_sum, final

seen_threads, seen_progs = {}, {}
first = None  # (tokens, jvm cpu s) at the first sample after decoding started: steady state from there
last = None
while True:
    alive = os.path.exists(f"/proc/{jvm}/task")
    for tid, value in threads_cpu().items():
        seen_threads[tid] = value
    progs = programs()
    for name, (cnt, ns) in progs.items():
        old = seen_progs.get(name, (0, 0))
        seen_progs[name] = (max(old[0], cnt), max(old[1], ns))
    if not alive:
        break
    done, _ = tokens_so_far()
    cpu_now = sum(cpu for _, cpu in seen_threads.values())
    if done > 0:
        if first is None:
            first = (done, cpu_now, time.monotonic())
        last = (done, cpu_now, time.monotonic())
    time.sleep(0.5)

interval_sum, tokens = tokens_so_far()
tokens = tokens or interval_sum
print(f"generated tokens seen by infertop: {tokens}")
if tokens <= 0:
    print("no decode tokens seen: no per-token figures")
    tokens = float("nan")
print(f"{'BPF program':<18}{'hits':>10}{'ns/hit':>9}{'hits/token':>12}{'µs/token':>10}")
total_ns = 0
for name, (cnt, ns) in sorted(seen_progs.items()):
    total_ns += ns
    print(f"{name:<18}{cnt:>10}{(ns / cnt if cnt else 0):>9.0f}{cnt / tokens:>12.1f}{ns / 1000 / tokens:>10.2f}")
print(f"BPF run time per generated token: {total_ns / 1000 / tokens:.1f} µs (handlers only; each hit also costs"
      f" the uprobe trap, ~0.8 µs for an emulated instruction on this kind of VM)")
hits = sum(cnt for cnt, _ in seen_progs.values())
print(f"probe hits per generated token: {hits / tokens:.1f}")
by_name = {}
for name, cpu in seen_threads.values():
    key = name.rstrip("0123456789") or name
    by_name[key] = by_name.get(key, 0) + cpu
total = sum(by_name.values())
print(f"infertop's own CPU: {total:.2f} s in all, {1000 * total / tokens:.3f} ms per generated token")
if first and last and last[0] > first[0]:
    steady = (last[1] - first[1]) / (last[0] - first[0])
    share = (last[1] - first[1]) / (last[2] - first[2])
    print(f"  steady state (while decoding, tokens {first[0]}..{last[0]}): {1000 * steady:.3f} ms per generated token,"
          f" {100 * share:.1f} % of one CPU; before the first interval with a token: {first[1]:.2f} s")
for key, cpu in sorted(by_name.items(), key=lambda kv: -kv[1]):
    if cpu > 0:
        print(f"  {key:<20}{cpu:>7.2f} s")
PY
  wait "$jvm" || echo "(infertop exited with status $?)" | tee -a "$out"
  rm -f "$json"
  sysctl -q -w kernel.bpf_stats_enabled="$stats_before"

  [ "$cost_only" = 1 ] && continue
  echo "== layers $layers: slowdown (infertop overhead, $pairs interleaved pairs after 1 warm-up pair) ==" | tee -a "$out"
  "$infertop" overhead --pairs "$pairs" --warmup 1 --layers "$layers" -- "${workload[@]}" 2>>"$out.log" | tee -a "$out"
done
echo | tee -a "$out"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)  (per-pair lines: $out.log)" | tee -a "$out"
echo "written to $out"
