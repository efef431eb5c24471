/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The register frames a uprobe program receives, for the two architectures infertop ships objects for.
 * These are user-space ABI layouts (the kernel hands probes the frame of the interrupted user thread), so
 * they are fixed per architecture: no vmlinux.h is needed, and the arm64 object can be compiled on x86_64.
 * Defining __VMLINUX_H__ makes bpf_tracing.h use the kernel's register names (di, si, sp, ...).
 */
#ifndef INFERTOP_REGS_H
#define INFERTOP_REGS_H

#define __VMLINUX_H__ 1

#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
#elif defined(__TARGET_ARCH_arm64)
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
};
struct pt_regs {
	struct user_pt_regs user_regs;
};
#else
#error "infertop BPF objects are built for __TARGET_ARCH_x86 or __TARGET_ARCH_arm64"
#endif

/*
 * A perf_event program's context, struct bpf_perf_event_data of linux/bpf_perf_event.h: the interrupted
 * registers (bpf_user_pt_regs_t: struct pt_regs on x86-64, struct user_pt_regs on arm64, both as above) first.
 */
struct bpf_perf_event_data_regs {
	struct pt_regs regs;
	__u64 sample_period;
	__u64 addr;
};

#endif /* INFERTOP_REGS_H */
