// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An Ollama-shaped engine for the tests: no llama.cpp, its own LLM-shaped graphs run by ggml's scheduler
 * (ggml_backend_sched_graph_compute_async on the CPU backend), as Ollama's engine does. Each graph embeds its
 * batch's tokens with a GET_ROWS on a weight named token_embd.weight from an I32 input, ropes a projection with
 * an I32 positions input named inp_pos, and computes logits named result_output for its last token only.
 * Odd sequences' graphs have the same node count in another order.
 * It feeds SEQUENCES sequences, each a prompt of PROMPT tokens (positions 0..PROMPT-1) then STEPS single-token
 * steps, and prints what it fed on its last line: "fed prompt P generated G graphs N".
 * It waits for SIGUSR1 before its first graph (after the backends are loaded), so that a tracer attaches first.
 * Usage: sched-engine [SEQUENCES PROMPT STEPS]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#define N_EMBD 64
#define N_HEAD 4
#define N_VOCAB 256

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void fill(struct ggml_tensor *t, unsigned seed)
{
	size_t n = ggml_nelements(t);
	float *v = malloc(n * sizeof(float));

	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = ((seed >> 16) & 0x7fff) / 32768.0f - 0.5f;
	}
	ggml_backend_tensor_set(t, v, 0, n * sizeof(float));
	free(v);
}

int main(int argc, char **argv)
{
	int sequences = argc > 3 ? atoi(argv[1]) : 2;
	int prompt = argc > 3 ? atoi(argv[2]) : 16;
	int steps = argc > 3 ? atoi(argv[3]) : 8;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);

	ggml_backend_load_all();
	ggml_backend_t cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
	if (!cpu) {
		fprintf(stderr, "sched-engine: no CPU backend\n");
		return 1;
	}

	// The weights, in a backend buffer of their own.
	struct ggml_init_params wp = {.mem_size = 8 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true};
	struct ggml_context *wctx = ggml_init(wp);
	struct ggml_tensor *tok_embd = ggml_new_tensor_2d(wctx, GGML_TYPE_F32, N_EMBD, N_VOCAB);
	ggml_set_name(tok_embd, "token_embd.weight");
	struct ggml_tensor *wq = ggml_new_tensor_2d(wctx, GGML_TYPE_F32, N_EMBD, N_EMBD);
	ggml_set_name(wq, "blk.0.attn_q.weight");
	struct ggml_tensor *out_w = ggml_new_tensor_2d(wctx, GGML_TYPE_F32, N_EMBD, N_VOCAB);
	ggml_set_name(out_w, "output.weight");
	ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors(wctx, cpu);
	fill(tok_embd, 1);
	fill(wq, 2);
	fill(out_w, 3);

	ggml_backend_sched_t sched = ggml_backend_sched_new(&cpu, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, false);

	while (!go)
		pause();

	long fed_prompt = 0, fed_generated = 0, graphs = 0;
	int32_t *ids = malloc(sizeof(int32_t) * (prompt > 1 ? prompt : 1));
	int32_t *pos = malloc(sizeof(int32_t) * (prompt > 1 ? prompt : 1));
	for (int s = 0; s < sequences; s++) {
		int next_pos = 0;
		for (int step = 0; step <= steps; step++) {
			int n = step == 0 ? prompt : 1;
			struct ggml_init_params gp = {
				.mem_size = ggml_tensor_overhead() * 64 + ggml_graph_overhead(),
				.mem_buffer = NULL,
				.no_alloc = true,
			};
			struct ggml_context *ctx = ggml_init(gp);
			struct ggml_tensor *inp_tokens = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
			ggml_set_name(inp_tokens, "inp_tokens");
			ggml_set_input(inp_tokens);
			struct ggml_tensor *inp_pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n);
			ggml_set_name(inp_pos, "inp_pos");
			ggml_set_input(inp_pos);
			struct ggml_tensor *inp_out = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
			ggml_set_name(inp_out, "inp_out_ids");
			ggml_set_input(inp_out);

			// Odd sequences build their graphs of the same node count in another order (a SCALE of a weight
			// first, no norm), so that a tracer that remembers where a graph's inputs were must look again.
			struct ggml_tensor *scaled = s % 2 ? ggml_scale(ctx, wq, 1.0f) : NULL;
			struct ggml_tensor *x = ggml_get_rows(ctx, tok_embd, inp_tokens);
			ggml_set_name(x, "inp_embd");
			struct ggml_tensor *h = s % 2 ? x : ggml_rms_norm(ctx, x, 1e-5f);
			struct ggml_tensor *q = ggml_mul_mat(ctx, wq, h);
			q = ggml_reshape_3d(ctx, q, N_EMBD / N_HEAD, N_HEAD, n);
			q = ggml_rope_ext(ctx, q, inp_pos, NULL, N_EMBD / N_HEAD, 0, 4096, 10000.0f, 1.0f, 0.0f, 1.0f,
					  32.0f, 1.0f);
			q = ggml_reshape_2d(ctx, q, N_EMBD, n);
			h = ggml_add(ctx, h, q);
			h = ggml_get_rows(ctx, h, inp_out); // the last token's row only, as llama.cpp's outputs
			struct ggml_tensor *logits = ggml_mul_mat(ctx, out_w, h);
			ggml_set_name(logits, "result_output");
			ggml_set_output(logits);
			struct ggml_cgraph *gf = ggml_new_graph(ctx);
			if (scaled)
				ggml_build_forward_expand(gf, scaled);
			ggml_build_forward_expand(gf, logits);

			ggml_backend_sched_reset(sched);
			if (!ggml_backend_sched_alloc_graph(sched, gf)) {
				fprintf(stderr, "sched-engine: cannot allocate the graph\n");
				return 1;
			}
			for (int i = 0; i < n; i++) {
				ids[i] = (s * 31 + step * 7 + i) % N_VOCAB;
				pos[i] = next_pos + i;
			}
			int32_t last = n - 1;
			ggml_backend_tensor_set(inp_tokens, ids, 0, sizeof(int32_t) * n);
			ggml_backend_tensor_set(inp_pos, pos, 0, sizeof(int32_t) * n);
			ggml_backend_tensor_set(inp_out, &last, 0, sizeof(last));
			if (ggml_backend_sched_graph_compute_async(sched, gf) != GGML_STATUS_SUCCESS) {
				fprintf(stderr, "sched-engine: compute failed\n");
				return 1;
			}
			ggml_backend_sched_synchronize(sched);
			next_pos += n;
			graphs++;
			if (step == 0)
				fed_prompt += n;
			else
				fed_generated += n;
			ggml_free(ctx);
		}
	}
	printf("fed prompt %ld generated %ld graphs %ld\n", fed_prompt, fed_generated, graphs);
	fflush(stdout);
	ggml_backend_sched_free(sched);
	ggml_backend_buffer_free(wbuf);
	ggml_free(wctx);
	ggml_backend_free(cpu);
	free(ids);
	free(pos);
	return 0;
}
