#!/usr/bin/env bash
# What does infertop cost on this machine? One command, meant for a quiet machine (nothing else running).
#
#   src/scripts/bench-overhead.sh [-p PAIRS] [-r REPS] [-o OUT] [-m MODEL] [-b LLAMA_BENCH] [-L "LAYERS ..."] [-c]
#                                 [-T PERIOD_S [-R LONG_REPS]] [-D TRIPLETS [-S SHORT_REPS] [-G LONG_REPS]]
#
# For each layer set (default: "token,graph" and "token,graph,operator"):
#  1. cost by counting work (survives a busy machine): one traced run of
#     `llama-bench -m MODEL -p 0 -n 64 -r REPS -t 2` with kernel.bpf_stats_enabled=1, sampled every 0.5 s:
#     each BPF program's hits and ns per hit, hits and BPF µs per generated token, and infertop's own CPU
#     (its whole JVM, and per thread: collector, compiler, GC) per generated token;
#  2. the slowdown: `infertop overhead --pairs PAIRS` (interleaved with/without pairs after a warm-up
#     pair): median decode tokens/s ratio with the pairs' range, target CPU per token with and without.
# -c: step 1 only (cost by counting). INFERTOP=COMMAND runs another infertop (e.g. an older build) in its place.
# -T PERIOD_S: then the operator layer's own cost, within one run (immune to the drift between runs that
#    the pairs fight): one `llama-bench ... -r LONG_REPS` (default 150) traced with all three layers, the
#    operator layer switched off and on (SIGUSR2) every PERIOD_S seconds; the decode time per token of the
#    intervals run wholly in one state (not the one a switch fell in) is compared between neighbouring
#    blocks: median ratio on/off with its range.
# -D TRIPLETS: then the defaults against no infertop, against --budget 0 and against the defaults without the
#    clock sampler (--op-sample-hz 0), on a short and a long run
#    (`llama-bench ... -r SHORT_REPS`, default 1, ~2.5 s on a quiet 2-core machine, and -r LONG_REPS, default 5,
#    ~12 s): TRIPLETS interleaved rounds (bare, infertop with default options, infertop --budget 0, infertop
#    --op-sample-hz 0, the order rotated each time) after a warm-up round; medians and ranges of tokens/s and of
#    each traced run's slowdown against its round's bare run; infertop's own CPU (utime+stime of /proc/JVM/stat
#    over the run's wall time), the op table's age (from the JSON: seconds since the last interval with an
#    operator graph, over the intervals that decoded) and the lanes' age (since the last interval with an
#    operator graph or clock samples).
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
model=""
bench=""
layer_sets="token,graph token,graph,operator"
cost_only=0
toggle_period=0
long_reps=150
triplets=0
short_d_reps=1
long_d_reps=5
while getopts "p:r:o:m:b:L:cT:R:D:S:G:h" opt; do
  case "$opt" in
    p) pairs="$OPTARG" ;;
    r) reps="$OPTARG" ;;
    o) out="$OPTARG" ;;
    m) model="$OPTARG" ;;
    b) bench="$OPTARG" ;;
    L) layer_sets="$OPTARG" ;;
    c) cost_only=1 ;;
    T) toggle_period="$OPTARG" ;;
    R) long_reps="$OPTARG" ;;
    D) triplets="$OPTARG" ;;
    S) short_d_reps="$OPTARG" ;;
    G) long_d_reps="$OPTARG" ;;
    h) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option (see -h)" ;;
  esac
done
[[ "$pairs" =~ ^[0-9]+$ && "$pairs" -ge 1 ]] || die "-p PAIRS must be a positive number, got '$pairs'"
[[ "$reps" =~ ^[0-9]+$ && "$reps" -ge 1 ]] || die "-r REPS must be a positive number, got '$reps'"
[[ "$toggle_period" =~ ^[0-9]+$ ]] || die "-T PERIOD_S must be a whole number of seconds, got '$toggle_period'"
[[ "$long_reps" =~ ^[0-9]+$ && "$long_reps" -ge 10 ]] || die "-R LONG_REPS must be a number of at least 10, got '$long_reps'"
[[ "$triplets" =~ ^[0-9]+$ ]] || die "-D TRIPLETS must be a number, got '$triplets'"
[[ "$short_d_reps" =~ ^[0-9]+$ && "$short_d_reps" -ge 1 ]] || die "-S SHORT_REPS must be a positive number, got '$short_d_reps'"
[[ "$long_d_reps" =~ ^[0-9]+$ && "$long_d_reps" -ge 1 ]] || die "-G LONG_REPS must be a positive number, got '$long_d_reps'"
[ "$(id -u)" = 0 ] || die "needs root (BPF probes, kernel.bpf_stats_enabled): run it with sudo"
command -v bpftool >/dev/null || die "bpftool is missing: apt-get install -y bpftool"
source "$here/bench-workload.sh"
bench_workload # bench, model (-b, -m, else the cache's), infertop, PYTHONPATH for benchlib
decode_workload "$reps"
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

def threads_cpu():
    """tid -> (name, cpu seconds) for every thread of infertop's JVM (threads that exited keep their last value).
    From schedstat (ns on CPU, exact) rather than stat's utime+stime (10 ms ticks: a thread that runs a
    millisecond at a time is missed or over-counted)."""
    result = {}
    try:
        for tid in os.listdir(f"/proc/{jvm}/task"):
            try:
                name = open(f"/proc/{jvm}/task/{tid}/comm").read().strip()
                ns = int(open(f"/proc/{jvm}/task/{tid}/schedstat").read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            result[tid] = (name, ns / 1e9)
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
      f" the uprobe trap: `infertop machine` measures one here)")
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
    if cpu >= 0.005:  # shown to 10 ms
        print(f"  {key:<20}{cpu:>7.2f} s")
PY
  wait "$jvm" || echo "(infertop exited with status $?)" | tee -a "$out"
  rm -f "$json"
  sysctl -q -w kernel.bpf_stats_enabled="$stats_before"

  [ "$cost_only" = 1 ] && continue
  echo "== layers $layers: slowdown (infertop overhead, $pairs interleaved pairs after 1 warm-up pair) ==" | tee -a "$out"
  "$infertop" overhead --pairs "$pairs" --warmup 1 --layers "$layers" -- "${workload[@]}" 2>>"$out.log" | tee -a "$out"
done
if [ "$toggle_period" -gt 0 ]; then
  decode_workload "$long_reps"
  long=("${workload[@]}")
  echo | tee -a "$out"
  echo "== operator layer's own cost within one run: ${long[*]}, switched every $toggle_period s ==" | tee -a "$out"
  json="$(mktemp)"
  "$infertop" --json -d 1 --layers token,graph,operator -- "${long[@]}" >"$json" 2>>"$out.log" &
  jvm=$!
  python3 - "$jvm" "$json" "$toggle_period" <<'PY' | tee -a "$out"
import json, os, signal, statistics, sys, time
from benchlib import quartiles, spread

jvm, json_path, period = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])

def records():
    rows = []
    try:
        for line in open(json_path):
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if not row.get("final"):
                rows.append(row)
    except OSError:
        pass
    return rows

# Toggle every `period` intervals once decoding has started (not before: the first interval holds start-up).
toggled_at = None
while os.path.exists(f"/proc/{jvm}/task"):
    rows = records()
    decoding = [r for r in rows if r.get("tokens_decode", 0) > 0]
    if decoding and (toggled_at is None or len(rows) - toggled_at >= period):
        if toggled_at is not None:
            try:
                os.kill(jvm, signal.SIGUSR2)
            except ProcessLookupError:
                break
        toggled_at = len(rows)
    time.sleep(0.2)

rows = records()
# Interval i's tokens ran under the state reported at i-1 (a switch is applied at the tick, before its
# snapshot): an interval is clean when the states at i-2 and i-1 agree (no switch at its start either).
def state(row):
    return row.get("layers", {}).get("operator", {}).get("state")
blocks = []  # [state, busy_ms, tokens] per run of clean intervals in one state
for i in range(2, len(rows)):
    s1, s2 = state(rows[i - 2]), state(rows[i - 1])
    n = rows[i].get("tokens_decode", 0)
    tpot = rows[i].get("tpot_ms", {})
    if s1 != s2 or n < 5 or s2 not in ("on", "off") or tpot.get("count", 0) < 5:
        if blocks and blocks[-1][3]:
            blocks[-1][3] = False  # a break ends the block
        continue
    if blocks and blocks[-1][0] == s2 and blocks[-1][3]:
        blocks[-1][1] += tpot["mean"] * tpot["count"]
        blocks[-1][2] += tpot["count"]
    else:
        blocks.append([s2, tpot["mean"] * tpot["count"], tpot["count"], True])
ratios = []
for a, b in zip(blocks, blocks[1:]):
    if a[0] != b[0] and a[2] and b[2]:
        on, off = (a, b) if a[0] == "on" else (b, a)
        ratios.append((on[1] / on[2]) / (off[1] / off[2]))
lost = rows[-1].get("lost_events", 0) if rows else 0
if len(ratios) < 3:
    print(f"too few clean on/off neighbours ({len(ratios)}) to compare: run longer (-R) or switch less often (-T)")
else:
    med = statistics.median(ratios)
    on_ms = [b[1] / b[2] for b in blocks if b[0] == "on"]
    off_ms = [b[1] / b[2] for b in blocks if b[0] == "off"]
    print(f"  {len(ratios)} neighbouring on/off blocks; decode time per token on/off: {spread(ratios, 4)}"
          f" (median: the operator layer costs {100 * (med - 1):+.2f} %)")
    q = quartiles(ratios)
    print(f"  quartiles {q[0]:.4f} / {q[1]:.4f}; mean TPOT on {statistics.median(on_ms):.3f} ms,"
          f" off {statistics.median(off_ms):.3f} ms (medians of blocks); lost events {lost}")
PY
  wait "$jvm" || echo "(infertop exited with status $?)" | tee -a "$out"
  rm -f "$json"
fi
if [ "$triplets" -gt 0 ]; then
  for d_reps in "$short_d_reps" "$long_d_reps"; do
    decode_workload "$d_reps" -o jsonl
    echo | tee -a "$out"
    echo "== defaults against no infertop, --budget 0 and --op-sample-hz 0: ${workload[*]}, $triplets rounds after 1 warm-up ==" | tee -a "$out"
    python3 - "$infertop" "$triplets" "${workload[@]}" <<'PY' | tee -a "$out"
import json, os, statistics, subprocess, sys, tempfile, time
from benchlib import samples_ts, spread

infertop, triplets, workload = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
TICKS = os.sysconf("SC_CLK_TCK")

def tokens_per_s(text):
    ts = samples_ts(text)
    return statistics.mean(ts) if ts else None

def bare():
    out = subprocess.run(workload, capture_output=True, text=True).stdout
    return {"ts": tokens_per_s(out)}

def traced_run(options):
    """One traced run: llama-bench's tokens/s (its jsonl reaches infertop's stderr: --json keeps stdout for
    infertop's records), infertop's CPU share of a core, the op table's age at each decoding interval."""
    with tempfile.TemporaryFile("w+") as js, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        p = subprocess.Popen([infertop, "--json", "-d", "1", *options, "--", *workload], stdout=js, stderr=err)
        cpu = 0.0
        while p.poll() is None:  # the launcher execs the JVM: the same pid
            try:
                fields = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
                cpu = (int(fields[11]) + int(fields[12])) / TICKS
            except (OSError, ValueError, IndexError):
                pass
            time.sleep(0.2)
        wall = time.monotonic() - start
        js.seek(0)
        err.seek(0)
        rows = []
        for line in js:
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
        ts = tokens_per_s(err.read())
    ages, lane_ages, clock, last_op, last_lane = [], [], 0.0, None, None
    for r in rows:
        if r.get("final"):
            continue
        clock += r.get("span_s", 0)
        if r.get("op_graphs", 0) > 0:
            last_op = clock
        if r.get("op_graphs", 0) > 0 or r.get("ops_sampled", {}).get("samples", 0) > 0:
            last_lane = clock
        if r.get("tokens_decode", 0) > 0:
            ages.append(clock - last_op if last_op is not None else clock)
            lane_ages.append(clock - last_lane if last_lane is not None else clock)
    final = rows[-1] if rows and rows[-1].get("final") else {}
    return {"ts": ts, "cpu_share": cpu / wall if wall else None, "ages": ages, "lane_ages": lane_ages,
            "sampling": final.get("budget", {}).get("sampling")}

kinds = {"bare": bare, "defaults": lambda: traced_run([]), "budget 0": lambda: traced_run(["--budget", "0"]),
         "no sampler": lambda: traced_run(["--op-sample-hz", "0"])}
order = list(kinds)
results = {k: [] for k in kinds}
for t in range(triplets + 1):
    rotated = order[t % len(order):] + order[:t % len(order)]
    got = {k: kinds[k]() for k in rotated}
    if t == 0:
        continue  # warm-up: page cache, CPU frequency, infertop's start-up cache
    for k, v in got.items():
        results[k].append(v)
    line = "  ".join(f"{k} {v['ts']:.2f} t/s" if v["ts"] else f"{k} -" for k, v in got.items())
    print(f"  round {t} ({' > '.join(rotated)}): {line}", flush=True)
base = [r["ts"] for r in results["bare"]]
print(f"  bare: {spread([b for b in base if b], 2)} tokens/s")
for k in ("defaults", "budget 0", "no sampler"):
    slow = [100 * (b / r["ts"] - 1) for b, r in zip(base, results[k]) if b and r["ts"]]
    cpu = [100 * r["cpu_share"] for r in results[k] if r["cpu_share"] is not None]
    ages = [a for r in results[k] for a in r["ages"]]
    lane_ages = [a for r in results[k] for a in r["lane_ages"]]
    print(f"  {k}: {spread([r['ts'] for r in results[k] if r['ts']], 2)} tokens/s; slowdown against the"
          f" triplet's bare run {spread(slow, 2) if slow else '-'} %; infertop's own CPU"
          f" {spread(cpu, 2) if cpu else '-'} % of a core (start-up included); op table age"
          f" {spread(ages, 1) if ages else '-'} s, lanes {spread(lane_ages, 1) if lane_ages else '-'} s, over"
          f" {len(ages)} decoding intervals;"
          f" sampling at the end: {sorted({str(r['sampling']) for r in results[k]})}")
PY
  done
fi
echo | tee -a "$out"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)  (per-pair lines: $out.log)" | tee -a "$out"
echo "written to $out"
