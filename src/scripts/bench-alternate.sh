#!/usr/bin/env bash
# infertop's cost within one long run, where neighbouring seconds share the machine's state (separate runs on a
# busy VM drift by more than the cost: untraced llama-bench rounds of one bench-peers run differed by 20 %).
#
#   src/scripts/bench-alternate.sh [-r REPS] [-B BLOCK] [-S SETTLE] [-o OUT] [MODE ...]
#
# One llama-bench decoding the bench model (-p 0 -n 64 -r REPS -t 2, --progress so that each repetition's start
# is seen); infertop attached (`infertop --json -p PID`, MODE default; full: `--budget 0`; tg: `--layers
# token,graph`, the operator layer off) for BLOCK repetitions, detached (SIGINT) for BLOCK, and so on, each
# switch at a repetition's start. Each traced block's mean tokens/s (llama-bench's own per-repetition figures) is
# compared with the mean of the untraced blocks either side, twice: from the block's second repetition (the first
# holds the attach or the detach), which still holds infertop's start (its JIT compiling the collector, the
# budget's first 2 s window tracing every graph and its first gaps of at most 2 s), and from its SETTLE+1-th on:
# the steady cost a long-running server pays. Untraced blocks count from their second repetition. Beside them, the
# overhead budget's own estimate as infertop's last JSON line of each traced block gave it.
# Printed per MODE (default: default full, one llama-bench each): the median ratios with their ranges over the
# traced blocks. Defaults: REPS 84, BLOCK 12, SETTLE 5 (a repetition is ~2 s here: 3 traced blocks, ~3 minutes).
# Needs root. Holds /tmp/infertop-probes.lock (the tests take it too).
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
die() { printf 'bench-alternate: %s\n' "$*" >&2; exit 1; }
reps=84
block=12
settle=5
out="bench-alternate-$(date +%Y%m%d-%H%M%S).txt"
while getopts "r:B:S:o:h" opt; do
  case "$opt" in
    r) reps="$OPTARG" ;;
    B) block="$OPTARG" ;;
    S) settle="$OPTARG" ;;
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
[[ "$settle" =~ ^[0-9]+$ && "$settle" -ge 1 && "$settle" -lt "$block" ]] \
  || die "-S SETTLE must be 1 to BLOCK-1 ($((block - 1))), got '$settle'"
[[ "$reps" =~ ^[0-9]+$ && "$reps" -ge $((3 * block)) ]] || die "-r REPS must be at least 3 blocks ($((3 * block))), got '$reps'"
[ "$(id -u)" = 0 ] || die "needs root (BPF probes): run it with sudo"
bench="" model="" # bench-workload.sh: the cache's
source "$here/bench-workload.sh"
bench_workload

exec 9>/tmp/infertop-probes.lock
flock 9
for mode in "${modes[@]}"; do
  python3 - "$bench" "$model" "$infertop" "$mode" "$reps" "$block" "$settle" <<'PY' | tee -a "$out"
import json, re, signal, statistics, subprocess, sys, tempfile, time
from benchlib import decode_workload, neighbour_ratios, samples_ts, spread
bench, model, infertop, mode = sys.argv[1:5]
reps, block, settle = (int(a) for a in sys.argv[5:8])
workload = decode_workload(bench, model, reps, "--progress", "-o", "jsonl")
target = subprocess.Popen(workload, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
run = re.compile(r"generation run (\d+)/(\d+)")
tracer = None
started = []  # repetition numbers (1-based) as they start, with whether infertop was attached during them

def attach():
    extra = {"full": ["--budget", "0"], "tg": ["--layers", "token,graph"]}.get(mode, [])
    lines = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen([infertop, "--json", *extra, "-p", str(target.pid)],
                               stdout=lines, stderr=subprocess.DEVNULL)
    return process, lines

estimates = []  # the overhead budget's own estimate at each traced block's end (its last JSON line)

def detach(tracer):
    process, lines = tracer
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)
    lines.seek(0)
    budget = {}
    for line in lines:
        if line.startswith("{"):
            budget = json.loads(line).get("budget", budget)
    lines.close()
    if "estimate_percent" in budget:
        estimates.append(f"{budget['estimate_percent']:.2f}% ({budget.get('sampling', '')})")

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
samples = samples_ts(target.stdout.read())
target.wait()
if not samples:
    sys.exit("bench-alternate: llama-bench printed no result")

def ratios(skip_traced):
    """Each traced block's mean over the untraced blocks' either side, leaving out its first skip_traced reps."""
    blocks = {}
    for k, ts in enumerate(samples, start=1):
        b, i = (k - 1) // block, (k - 1) % block
        if i < (skip_traced if b % 2 == 1 else 1):
            continue
        blocks.setdefault(b, []).append(ts)
    means = {b: statistics.mean(v) for b, v in blocks.items() if v}
    return neighbour_ratios(means, lambda b: b % 2 == 1), means

whole, means = ratios(1)
steady, _ = ratios(settle)
if not whole or not steady:
    sys.exit("bench-alternate: no traced block with untraced blocks either side")
def figure(found):
    return f"{spread(found)} [{' '.join(f'{r:.3f}' for r in found)}]"
print(f"{mode:8s} steady (from repetition {settle + 1} of a block) {figure(steady)}; with the start (from repetition 2) "
      f"{figure(whole)}; {len(whole)} traced blocks of {block} repetitions; untraced "
      f"{statistics.median([m for b, m in means.items() if b % 2 == 0]):.1f} tok/s")
if estimates:
    print(f"{'':8s} the budget's estimate at each traced block's end: {'; '.join(estimates)}")
PY
done
