#!/usr/bin/env bash
# infertop's cost within one long run, where neighbouring seconds share the machine's state (separate runs on a
# busy VM drift by more than the cost: untraced llama-bench rounds of one bench-peers run differed by 20 %).
#
#   src/scripts/bench-alternate.sh [-r REPS] [-B BLOCK] [-o OUT] [MODE ...]
#
# One llama-bench decoding the bench model (-p 0 -n 64 -r REPS -t 2, --progress so that each repetition's start
# is seen); infertop attached (`infertop --json -p PID`, MODE default; full: `--budget 0`; tg: `--layers
# token,graph`, the operator layer off) for BLOCK repetitions, detached (SIGINT) for BLOCK, and so on, each
# switch at a repetition's start. The first repetition
# of each block is not counted (it holds infertop's start, or its detach); each traced block's mean tokens/s
# (llama-bench's own per-repetition figures) is compared with the mean of the untraced blocks either side.
# Printed per MODE (default: default full, one llama-bench each): the median ratio with its range over the
# traced blocks. Defaults: REPS 49, BLOCK 6 (~12 s; infertop's overhead budget starts with a 2 s window tracing
# every graph, then gaps of at most 2 s until it has measured one).
# Needs root. Holds /tmp/infertop-probes.lock (the tests take it too).
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
die() { printf 'bench-alternate: %s\n' "$*" >&2; exit 1; }
reps=49
block=6
out="bench-alternate-$(date +%Y%m%d-%H%M%S).txt"
while getopts "r:B:o:h" opt; do
  case "$opt" in
    r) reps="$OPTARG" ;;
    B) block="$OPTARG" ;;
    o) out="$OPTARG" ;;
    h) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown option (see -h)" ;;
  esac
done
shift $((OPTIND - 1))
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(default full)
for mode in "${modes[@]}"; do
  [[ "$mode" = default || "$mode" = full || "$mode" = tg ]] || die "MODE is default, full or tg, got '$mode'"
done
[[ "$block" =~ ^[0-9]+$ && "$block" -ge 2 ]] || die "-B BLOCK must be 2 or more, got '$block'"
[[ "$reps" =~ ^[0-9]+$ && "$reps" -ge $((3 * block)) ]] || die "-r REPS must be at least 3 blocks ($((3 * block))), got '$reps'"
[ "$(id -u)" = 0 ] || die "needs root (BPF probes): run it with sudo"
source "$here/bench-workload.sh"
bench_workload

exec 9>/tmp/infertop-probes.lock
flock 9
for mode in "${modes[@]}"; do
  python3 - "$bench" "$model" "$infertop" "$mode" "$reps" "$block" <<'PY' | tee -a "$out"
import json, re, signal, statistics, subprocess, sys, time
bench, model, infertop, mode, reps, block = sys.argv[1:5] + [int(sys.argv[5]), int(sys.argv[6])]
workload = [bench, "-m", model, "-p", "0", "-n", "64", "-r", str(reps), "-t", "2", "--progress", "-o", "jsonl"]
target = subprocess.Popen(workload, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
run = re.compile(r"generation run (\d+)/(\d+)")
tracer = None
started = []  # repetition numbers (1-based) as they start, with whether infertop was attached during them

def attach():
    extra = {"full": ["--budget", "0"], "tg": ["--layers", "token,graph"]}.get(mode, [])
    return subprocess.Popen([infertop, "--json", *extra, "-p", str(target.pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def detach(process):
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)

for line in target.stderr:
    m = run.search(line)
    if not m:
        continue
    k = int(m.group(1))
    traced = ((k - 1) // block) % 2 == 1  # blocks: untraced, traced, untraced, ...
    if traced and tracer is None:
        tracer = attach()
    elif not traced and tracer is not None:
        detach(tracer)
        tracer = None
    started.append(k)
if tracer is not None:
    detach(tracer)
result = None
for line in target.stdout.read().splitlines():
    if line.startswith("{"):
        result = json.loads(line)
target.wait()
if result is None or "samples_ts" not in result:
    sys.exit("bench-alternate: llama-bench printed no result")
samples = result["samples_ts"]
blocks = {}
for k, ts in enumerate(samples, start=1):
    if (k - 1) % block == 0:
        continue  # a block's first repetition holds the attach or the detach
    blocks.setdefault((k - 1) // block, []).append(ts)
means = {b: statistics.mean(v) for b, v in blocks.items() if v}
ratios = []
for b, mean in means.items():
    if b % 2 == 1 and b - 1 in means and b + 1 in means:
        ratios.append(mean / ((means[b - 1] + means[b + 1]) / 2))
if not ratios:
    sys.exit("bench-alternate: no traced block with untraced blocks either side")
print(f"{mode:8s} {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}), {len(ratios)} traced blocks "
      f"of {block} repetitions; untraced {statistics.median([m for b, m in means.items() if b % 2 == 0]):.1f} tok/s; "
      f"ratios {' '.join(f'{r:.3f}' for r in ratios)}")
PY
done
