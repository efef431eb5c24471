#!/usr/bin/env bash
# How fast does infertop start, and how much memory does it take? Meant for a warm machine (second attach).
#
#   src/scripts/bench-start.sh [-r RUNS] [-o OUT] [-m MODEL] [-b LLAMA_BENCH] [-L LAYERS] [-V live|json]
#                              [-T decode|idle] [LABEL=COMMAND ...]
#
# Starts one target on the bench model (-T decode, the default: `llama-bench -p 0 -n 64 -r 100000 -t 2`, which
# keeps every core of a 2-core machine busy decoding; -T idle: a llama-server waiting for requests), then, RUNS
# times, runs each COMMAND (default: this=src/scripts/infertop) against it, the commands interleaved (run 1 of
# each, then run 2 of each, ...) so a machine whose load drifts treats them alike. One warm-up run of each
# comes first and is not counted (it fills the layout and probe-site caches and the page cache: the figures
# are a second attach's). Each run is, with -V live (the default), `COMMAND [--layers LAYERS] -p PID` on a
# pseudo-terminal (120x40) with INFERTOP_DEBUG=1, quit with q once its first screen of figures is drawn; with
# -V json, `COMMAND --json -n 1 [--layers LAYERS] -p PID`. For each command it prints, over the RUNS runs:
#   first        the time from the exec of the command to its first interval shown: the live view's
#                "start: first interval shown" line (said on stderr right after the screen was drawn; its
#                first interval is 0.25 s), or the first line on stdout for JSON (its interval is -d, 1 s);
#   CPU by then  the CPU time (user + system, all threads) the command had used then: steadier than the wall
#                time on a loaded machine, where the wall time mostly measures the run queue;
#   peak RSS     the command's peak resident set (wait4's ru_maxrss: the JVM, children included).
# as median [min..max]. Live needs a build that says the start line (JSON works with any): to compare with an
# older jar, use -V json. Example, main's jar against this build:
#   src/scripts/bench-start.sh -V json -r 9 main="env INFERTOP_JAR=/tmp/main/infertop.jar src/scripts/infertop" \
#       this=src/scripts/infertop
# Everything printed is also written to OUT (default: bench-start-<date>.txt in the current directory).
# Needs root. Hold /tmp/infertop-probes.lock if other infertop tests may run at the same time.
set -euo pipefail
here="$(dirname "$(readlink -f "$0")")"
die() { printf 'bench-start: %s\n' "$*" >&2; exit 1; }

runs=7
out="bench-start-$(date +%Y%m%d-%H%M%S).txt"
model=""
bench=""
layers=""
view=live
target_kind=decode
while getopts "r:o:m:b:L:V:T:h" opt; do
  case "$opt" in
    r) runs="$OPTARG" ;;
    o) out="$OPTARG" ;;
    m) model="$OPTARG" ;;
    b) bench="$OPTARG" ;;
    L) layers="$OPTARG" ;;
    V) view="$OPTARG" ;;
    T) target_kind="$OPTARG" ;;
    h) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option (see -h)" ;;
  esac
done
shift $((OPTIND - 1))
[[ "$runs" =~ ^[0-9]+$ && "$runs" -ge 1 ]] || die "-r RUNS must be a positive number, got '$runs'"
[[ "$view" = live || "$view" = json ]] || die "-V VIEW must be live or json, got '$view'"
[[ "$target_kind" = decode || "$target_kind" = idle ]] || die "-T TARGET must be decode or idle, got '$target_kind'"
[ "$(id -u)" = 0 ] || die "needs root (BPF probes): run it with sudo"
commands=("$@")
[ "${#commands[@]}" -gt 0 ] || commands=("this=$here/infertop")
source "$here/bench-workload.sh"
bench_workload # bench, model (-b, -m, else the cache's), PYTHONPATH for benchlib

if [ "$target_kind" = decode ]; then
  decode_workload 100000
  "${workload[@]}" >/dev/null 2>&1 &
else
  server="$(dirname "$bench")/llama-server"
  [ -x "$server" ] || die "llama-server not found at $server (beside llama-bench): run src/scripts/setup.sh"
  "$server" -m "$model" --host 127.0.0.1 --port 0 -t 2 >/dev/null 2>&1 &
fi
target=$!
trap 'kill "$target" 2>/dev/null || true' EXIT
sleep 3 # the model loaded (and decoding, for llama-bench)
kill -0 "$target" 2>/dev/null || die "the target exited at once: try it by hand: $bench -m $model"

python3 - "$target" "$runs" "$layers" "$view" "$target_kind" "${commands[@]}" <<'PY' | tee "$out"
import fcntl, os, pty, select, shlex, statistics, struct, subprocess, sys, termios, time
from benchlib import spread_brackets

target, runs, layers, view, target_kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
commands = []
for arg in sys.argv[6:]:
    label, _, command = arg.partition("=")
    commands.append((label, shlex.split(command)))

TICK_S = 1 / os.sysconf("SC_CLK_TCK")

def cpu_s(pid):
    """CPU time of process pid so far (user + system, its threads and the children it waited for)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return sum(int(v) for v in fields[11:15]) * TICK_S
    except (OSError, ValueError, IndexError):
        return float("nan")

def one(command):
    return one_live(command) if view == "live" else one_json(command)

def one_json(command):
    """(s from exec to the first stdout line, CPU s used by then, peak RSS MB), or None when no line came."""
    args = command + ["--json", "-n", "1"] + (["--layers", layers] if layers else []) + ["-p", str(target)]
    started = time.monotonic()
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = process.stdout.readline()
    while line and not line.startswith(b"{"):  # a JVM warning (a CDS archive refused) is not the first interval
        line = process.stdout.readline()
    first = time.monotonic() - started
    cpu = cpu_s(process.pid)
    process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    if not line or status != 0:
        return None
    return first, cpu, usage.ru_maxrss / 1024

def one_live(command):
    """The live view on a pseudo-terminal: (s to its first screen of figures, CPU s by then, peak RSS MB)."""
    args = command + (["--layers", layers] if layers else []) + ["-p", str(target)]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = dict(os.environ, INFERTOP_DEBUG="1", TERM="xterm-256color")
    started = time.monotonic()
    process = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=subprocess.PIPE, env=env,
                               start_new_session=True)
    os.close(slave)
    first = cpu = None
    deadline = started + 60
    while first is None and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr, master], [], [], 1)
        if master in ready:
            try:
                os.read(master, 1 << 16)  # the screen: read so the view never blocks on a full terminal
            except OSError:
                break
        if process.stderr in ready:
            line = process.stderr.readline()
            if not line:
                break
            if b"start: first interval shown" in line:
                first = time.monotonic() - started
                cpu = cpu_s(process.pid)
    try:
        os.write(master, b"q")
        while True:  # drain the screen until the view has restored the terminal and exited
            ready, _, _ = select.select([master], [], [], 10)
            if not ready or not os.read(master, 1 << 16):
                break
    except OSError:
        pass
    os.close(master)
    _, status, usage = os.wait4(process.pid, 0)
    if first is None or status != 0:
        return None
    return first, cpu, usage.ru_maxrss / 1024

print(f"infertop start benchmark  {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}  {os.uname().release}"
      f"  {os.cpu_count()} CPUs  load {' '.join(open('/proc/loadavg').read().split()[:3])}")
each_run = ("COMMAND" if view == "live" else "COMMAND --json -n 1") + (" --layers " + layers if layers else "")
print(f"target: {'llama-bench decoding' if target_kind == 'decode' else 'llama-server idle'}, pid {target};"
      f" each run: {each_run} -p {target}{' (live view on a pty, q at its first screen)' if view == 'live' else ''};"
      f" {runs} runs each, interleaved, after one warm-up run each")
for label, command in commands:
    if one(command) is None:
        print(f"{label}: the warm-up run printed nothing or failed: {shlex.join(command)}")
        sys.exit(1)
results = {label: [] for label, _ in commands}
for run in range(runs):
    for label, command in commands:
        result = one(command)
        if result is None:
            print(f"{label}: run {run + 1} printed nothing or failed")
            continue
        results[label].append(result)
        print(f"  run {run + 1} {label:<12} first {result[0]:6.2f} s   CPU by then {result[1]:6.2f} s"
              f"   peak RSS {result[2]:6.1f} MB", flush=True)
print("median [min..max] over the runs:")
print(f"{'':<12}{'first (s)':>22}{'CPU by then (s)':>22}{'peak RSS (MB)':>24}")
for label, values in results.items():
    if not values:
        continue
    cells = []
    for column, digits in ((0, 2), (1, 2), (2, 1)):
        cells.append(spread_brackets([r[column] for r in values], digits))
    print(f"{label:<12}{cells[0]:>22}{cells[1]:>22}{cells[2]:>24}")
print(f"load at the end: {' '.join(open('/proc/loadavg').read().split()[:3])}")
PY
