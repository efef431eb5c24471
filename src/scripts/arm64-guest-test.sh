#!/bin/bash
# Runs inside the emulated arm64 guest (arm64-stage.sh copies it to the 9p share as guest-test.sh; the guest's
# /init runs it and powers off): installs infertop from the release tarball as a board would, and traces the
# cross-built llama-bench. Everything it writes goes to /share, which the host reads afterwards.
# Parameters come from /share/params (shell assignments written by arm64-stage.sh): BENCH_ARGS, MOE_BENCH_ARGS,
# LIVE_BENCH_ARGS, LLAMA_DIR, PATIENCE.
set -u
cd /tmp
share=/share
. "$share/params"
step() { echo "guest: $* ($(cut -d' ' -f1 /proc/uptime) s since boot)"; }
step "kernel $(uname -r) $(uname -m), $(nproc) CPUs"
# Off the share: uprobes sit on the page cache of the file the target maps; tmpfs is what a board's disk is here.
mkdir -p "$LLAMA_DIR" && cp -a "$share"/llama/. "$LLAMA_DIR"/ && cp "$share/model.gguf" /tmp/model.gguf \
  && cp "$share/moe.gguf" /tmp/moe.gguf
mkdir -p /opt && tar xzf "$share"/infertop-*.tar.gz -C /opt
infertop="$(echo /opt/infertop-*/bin/infertop)"
step "unpacked $infertop"
"$infertop" --version >"$share/version.txt" 2>&1
echo $? >"$share/version.rc"
step "version: $(cat "$share/version.txt")"
# What the machine offers the counters layer: the PMU the guest sees (counts only; never timed here).
ls /sys/bus/event_source/devices >"$share/pmu.txt" 2>&1
step "tracing llama-bench $BENCH_ARGS"
# shellcheck disable=SC2086
# --budget 0: every graph is traced, so the counts are exact oracles, whatever the emulated cost estimate says.
# With --json, llama-bench's own output (its -o jsonl records) goes to stderr, beside infertop's messages.
"$infertop" --json -d 1 --budget 0 --patience "$PATIENCE" \
  -- "$LLAMA_DIR/llama-bench" -m /tmp/model.gguf $BENCH_ARGS -o jsonl >"$share/infertop.json" 2>"$share/infertop.stderr"
echo $? >"$share/infertop.rc"
step "infertop exited with $(cat "$share/infertop.rc")"

# A mixture-of-experts model with the MoE and counters layers: routed selections per token row, and what the
# emulated PMU (QEMU's armv8_pmuv3) counts for each operator.
step "tracing llama-bench on the MoE model $MOE_BENCH_ARGS"
# shellcheck disable=SC2086
"$infertop" --json -d 1 --budget 0 --patience "$PATIENCE" --layers token,graph,moe,counters \
  -- "$LLAMA_DIR/llama-bench" -m /tmp/moe.gguf $MOE_BENCH_ARGS -o jsonl >"$share/moe.json" 2>"$share/moe.stderr"
echo $? >"$share/moe.rc"
step "infertop (MoE) exited with $(cat "$share/moe.rc")"

# The live view in a terminal (script gives it a pty): drawn while llama-bench runs, its last screen kept
# (TARGET EXITED) until q, which this feeder types once llama-bench has come and gone. Optional: a failure here
# leaves live.rc non-zero and the results above intact.
feeder() {
  i=0
  while ! pidof llama-bench >/dev/null && [ $i -lt 900 ]; do sleep 1; i=$((i + 1)); done
  while pidof llama-bench >/dev/null; do sleep 1; done
  sleep 8
  printf q
  sleep 120
}
# A JVM that dies under the emulator (SIGSEGV in the JVM itself, exit 134: seen once in several runs under TCG on
# a loaded host) is run once more; its crash report is kept on the share and the IT prints it.
for attempt in 1 2; do
  step "live view (attempt $attempt)"
  rm -f /tmp/keys && mkfifo /tmp/keys
  feeder >/tmp/keys &
  feeder_pid=$!
  # -T: when each byte reached the terminal, so the host can tell how long the first screen took.
  TERM=xterm-256color script -q -e -T "$share/live.timing" -c "stty rows 30 cols 110; exec $infertop --patience $PATIENCE -- $LLAMA_DIR/llama-bench -m /tmp/model.gguf $LIVE_BENCH_ARGS" "$share/live.typescript" </tmp/keys >/dev/null 2>&1
  echo $? >"$share/live.rc"
  kill "$feeder_pid" 2>/dev/null
  pkill -x llama-bench 2>/dev/null
  step "live view exited with $(cat "$share/live.rc")"
  for report in /tmp/hs_err_pid*.log; do
    [ -f "$report" ] && mv "$report" "$share/jvm-crash-$attempt.log"
  done
  [ "$(cat "$share/live.rc")" = 134 ] || break
  cp "$share/live.typescript" "$share/live-crashed.typescript"
done
# No probe may be left behind: libbpf's perf-event uprobes are gone with infertop's descriptors.
cat /sys/kernel/tracing/uprobe_events >"$share/uprobe_events.after" 2>&1
step "done"
touch "$share/done"
