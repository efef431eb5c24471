// SPDX-License-Identifier: BSD-2-Clause
/*
 * uprobe-cost: the loop `infertop machine` times with and without a uprobe on one of its instructions, to learn
 * what one probe hit costs on this machine (the overhead budget multiplies it by the hits infertop's probes take).
 *
 * Protocol, one line each way: for every line "N" read on stdin, call the probed function N times and print the
 * nanoseconds that took (CLOCK_MONOTONIC); exit at the end of input or on a line that is not a count.
 *
 * The probed instruction (infertop_probe_site) is a call, as the operator layer's probes are (`call ggml_barrier`
 * in ggml's node loop): an instruction the kernel emulates on x86_64 and simulates on arm64 instead of
 * single-stepping it out of line, so the hit costs what infertop's own hits cost.
 * Built for the build machine's architecture only (src/scripts/compile-bpf.sh): a user-space program needs a
 * linker for its target, BPF objects do not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void infertop_probe_leaf(void);
void infertop_probe_caller(void);

__asm__(".text\n"
	".globl infertop_probe_leaf\n"
	".type infertop_probe_leaf,@function\n"
	"infertop_probe_leaf:\n"
	"	ret\n"
	".size infertop_probe_leaf, .-infertop_probe_leaf\n"
	".globl infertop_probe_caller\n"
	".type infertop_probe_caller,@function\n"
	"infertop_probe_caller:\n"
#if defined(__x86_64__)
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	".globl infertop_probe_site\n"
	".type infertop_probe_site,@function\n"
	"infertop_probe_site:\n"
	"	call infertop_probe_leaf\n"
	"	pop %rbp\n"
	"	ret\n"
#elif defined(__aarch64__)
	"	stp x29, x30, [sp, #-16]!\n"
	"	mov x29, sp\n"
	".globl infertop_probe_site\n"
	".type infertop_probe_site,@function\n"
	"infertop_probe_site:\n"
	"	bl infertop_probe_leaf\n"
	"	ldp x29, x30, [sp], #16\n"
	"	ret\n"
#else
#error "uprobe-cost: only x86_64 and arm64"
#endif
	".size infertop_probe_site, .-infertop_probe_site\n"
	".size infertop_probe_caller, .-infertop_probe_caller\n");

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
	char line[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		char *end;
		long long calls = strtoll(line, &end, 10);
		long long start;

		if (end == line || calls <= 0 || calls > 100000000LL)
			return 0;
		start = now_ns();
		for (long long i = 0; i < calls; i++)
			infertop_probe_caller();
		printf("%lld\n", now_ns() - start);
	}
	return 0;
}
