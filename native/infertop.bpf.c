// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * infertop's probes on an unmodified llama.cpp / GGML process: one BPF object, one file per layer, included here
 * in order (a layer may use what an earlier one defines; later layers reach earlier ones, never the reverse).
 *
 * Each entry probe stores what it needs in a per-thread map; the return probe completes one fixed-size record in
 * the `events` ring buffer.  Records are written without a wake-up: the reader drains on its own clock, so a busy
 * engine pays no extra wake-ups.
 */
#include <linux/bpf.h>
#include "regs.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The layers in the order they build on each other: each file is one layer's maps and programs. */
#include "common.bpf.h"
#include "token.bpf.h"
#include "graph.bpf.h"
#include "operator.bpf.h"
#include "op_sample.bpf.h"
#include "sched.bpf.h"
#include "counters.bpf.h"
#include "backends.bpf.h"
#include "moe_host_copy.bpf.h"
#include "offload.bpf.h"
#include "batch_ext.bpf.h"
#include "whisper.bpf.h"

