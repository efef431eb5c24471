#!/usr/bin/env python3
# A peer for the overhead benchmark: what a hand-written BCC tracer of llama.cpp costs. Entry and return
# uprobes on 7 functions of the libraries given (llama_decode, the graph computes, the node loop's barrier, the
# busiest op kernels), each call's duration sent to user space through a perf buffer, summed per function.
# Usage: bcc-ggml.py LIBLLAMA LIBGGML_BASE LIBGGML_CPU   (root; stops on SIGINT/SIGTERM, prints its sums)
import signal
import sys

from bcc import BPF

PROGRAM = r"""
#include <uapi/linux/ptrace.h>
struct call_t { u32 fn; u64 ns; };
BPF_HASH(start, u64, u64);
BPF_PERF_OUTPUT(calls);
static int enter(struct pt_regs *ctx, u32 fn) {
    u64 key = (bpf_get_current_pid_tgid() << 8) | fn, now = bpf_ktime_get_ns();
    start.update(&key, &now);
    return 0;
}
static int leave(struct pt_regs *ctx, u32 fn) {
    u64 key = (bpf_get_current_pid_tgid() << 8) | fn;
    u64 *t = start.lookup(&key);
    if (!t) return 0;
    struct call_t c = {.fn = fn, .ns = bpf_ktime_get_ns() - *t};
    start.delete(&key);
    calls.perf_submit(ctx, &c, sizeof(c));
    return 0;
}
"""
FUNCTIONS = [  # (library index, symbol)
    (0, "llama_decode"),
    (1, "ggml_backend_graph_compute_async"),
    (2, "ggml_graph_compute"),
    (2, "ggml_barrier"),
    (2, "ggml_compute_forward_mul_mat"),
    (2, "ggml_compute_forward_rms_norm"),
    (2, "ggml_compute_forward_soft_max"),
]

libraries = sys.argv[1:4]
text = PROGRAM
for i, _ in enumerate(FUNCTIONS):
    text += f"int enter{i}(struct pt_regs *ctx) {{ return enter(ctx, {i}); }}\n"
    text += f"int leave{i}(struct pt_regs *ctx) {{ return leave(ctx, {i}); }}\n"
bpf = BPF(text=text)
for i, (lib, symbol) in enumerate(FUNCTIONS):
    bpf.attach_uprobe(name=libraries[lib], sym=symbol, fn_name=f"enter{i}")
    bpf.attach_uretprobe(name=libraries[lib], sym=symbol, fn_name=f"leave{i}")
sums = [0] * len(FUNCTIONS)
counts = [0] * len(FUNCTIONS)


def handle(cpu, data, size):
    call = bpf["calls"].event(data)
    sums[call.fn] += call.ns
    counts[call.fn] += 1


bpf["calls"].open_perf_buffer(handle, page_cnt=256)
running = True


def stop(*_):
    global running
    running = False


signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
print("bcc-ggml: attached", flush=True)
while running:
    bpf.perf_buffer_poll(timeout=100)
for i, (_, symbol) in enumerate(FUNCTIONS):
    print(f"{symbol}: {counts[i]} calls, {sums[i] / 1e6:.1f} ms")
