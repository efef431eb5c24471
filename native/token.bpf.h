/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Token layer: llama_decode's entry and return (one record per call, the batch's tokens before it), and the
 * speculative drafts a server removes. llama_process and its batch builders are in batch_ext.bpf.h, whisper.cpp's
 * calls in whisper.bpf.h, tokens read from the graphs in graph_tokens.bpf.h. Included by infertop.bpf.c.
 */
struct decode_start {
	__u64 start_ns;
	__u64 ctx;
	__s32 n_tokens;
	__u32 pad;
	/* The batch's per-token arrays (NULL for llama_batch_get_one): read at return, the caller's memory. */
	__u64 pos;
	__u64 n_seq_id;
	__u64 seq_id;
	__u64 logits;
};

/* A batch_event is built here (too big for the stack), then copied into the ring at its real length. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct batch_event);
} batch_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct decode_start);
} decode_start_by_tid SEC(".maps");


/*
 * int32_t llama_decode(struct llama_context *ctx, struct llama_batch batch)
 * llama_batch is 56 bytes and passed by value.  x86-64 SysV passes it in memory, just above the return
 * address; AAPCS64 passes a pointer to a copy in x1.  n_tokens is its first field.
 */
SEC("uprobe")
int BPF_KPROBE(handle_decode_enter, void *llama_ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct decode_start start = {};
	const void *batch;

	if (!is_target(pid_tgid))
		return 0;
#if defined(__TARGET_ARCH_x86)
	batch = (const void *)(PT_REGS_SP(ctx) + 8);
#else
	batch = (const void *)PT_REGS_PARM2(ctx);
#endif
	start.ctx = (__u64)llama_ctx;
	if (bpf_probe_read_user(&start.n_tokens, sizeof(start.n_tokens), batch))
		start.n_tokens = -1;
	/* A failed read leaves the pointer NULL: the call is then counted by n_tokens alone. */
	bpf_probe_read_user(&start.pos, sizeof(start.pos), batch + config.batch_pos_offset);
	bpf_probe_read_user(&start.n_seq_id, sizeof(start.n_seq_id), batch + config.batch_n_seq_id_offset);
	bpf_probe_read_user(&start.seq_id, sizeof(start.seq_id), batch + config.batch_seq_id_offset);
	bpf_probe_read_user(&start.logits, sizeof(start.logits), batch + config.batch_logits_offset);
	start.start_ns = bpf_ktime_get_ns();
	__u32 tid = (__u32)pid_tgid;
	bpf_map_update_elem(&decode_start_by_tid, &tid, &start, BPF_ANY);
	return 0;
}

struct batch_copy {
	const struct decode_start *start;
	struct batch_event *e;
};

/* Copies token i of the batch (bpf_loop callback): its position, first sequence id, logits flag. */
static long copy_batch_token(__u32 i, void *data)
{
	struct batch_copy *copy = data;
	const struct decode_start *start = copy->start;
	struct batch_token *token;
	__u64 seq_ids = 0;
	__s32 n_seq = 1;
	__s8 logits = 0;

	if (i >= MAX_BATCH_TOKENS)
		return 1;
	token = &copy->e->tokens[i];
	token->pos = -1;
	token->seq = -1;
	if (start->pos)
		bpf_probe_read_user(&token->pos, sizeof(token->pos), (const void *)(start->pos + 4 * (__u64)i));
	if (start->seq_id &&
	    !bpf_probe_read_user(&seq_ids, sizeof(seq_ids), (const void *)(start->seq_id + 8 * (__u64)i)) && seq_ids)
		bpf_probe_read_user(&token->seq, sizeof(token->seq), (const void *)seq_ids);
	if (start->logits)
		bpf_probe_read_user(&logits, sizeof(logits), (const void *)(start->logits + (__u64)i));
	else
		logits = -1;
	if (start->n_seq_id)
		bpf_probe_read_user(&n_seq, sizeof(n_seq), (const void *)(start->n_seq_id + 4 * (__u64)i));
	token->logits = logits;
	token->n_seq = n_seq > 127 ? 127 : (__s8)n_seq;
	return 0;
}

/* The batch's tokens, for batches with per-token positions or sequences: one record before the decode's. */
static __always_inline void send_batch(const struct decode_start *start, __u32 tid, __u64 end_ns)
{
	struct batch_copy copy = {.start = start};
	__u32 zero = 0;
	__u32 recorded;
	__u64 size;

	if ((!start->pos && !start->seq_id) || start->n_tokens <= 0)
		return;
	copy.e = bpf_map_lookup_elem(&batch_scratch, &zero);
	if (!copy.e)
		return;
	recorded = start->n_tokens < MAX_BATCH_TOKENS ? start->n_tokens : MAX_BATCH_TOKENS;
	copy.e->header.kind = EVENT_BATCH;
	copy.e->header.tid = tid;
	copy.e->header.start_ns = start->start_ns;
	copy.e->header.end_ns = end_ns;
	copy.e->ctx = start->ctx;
	copy.e->n_tokens = start->n_tokens;
	copy.e->recorded = recorded;
	bpf_loop(recorded, copy_batch_token, &copy, 0);
	size = __builtin_offsetof(struct batch_event, tokens) + (__u64)recorded * sizeof(struct batch_token);
	if (size > sizeof(struct batch_event))
		size = sizeof(struct batch_event);
	if (bpf_ringbuf_output(&events, copy.e, size, BPF_RB_NO_WAKEUP))
		count_lost();
}

/* One llama_decode or llama_process call's record (EVENT_DECODE, or EVENT_ENCODE for an encoder pass). */
static __always_inline void send_call(__u32 kind, __u32 tid, __u64 start_ns, __u64 end_ns, __u64 llama_ctx,
				      __s32 n_tokens, long ret)
{
	struct decode_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_lost();
		return;
	}
	e->header.kind = kind;
	e->header.tid = tid;
	e->header.start_ns = start_ns;
	e->header.end_ns = end_ns;
	e->ctx = llama_ctx;
	e->n_tokens = n_tokens;
	e->ret = (__s32)ret;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

SEC("uretprobe")
int BPF_KRETPROBE(handle_decode_exit, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct decode_start *start;

	if (!is_target(pid_tgid))
		return 0;
	start = bpf_map_lookup_elem(&decode_start_by_tid, &tid);
	if (!start)
		return 0; /* attached mid-call */
	__u64 end_ns = bpf_ktime_get_ns();
	send_batch(start, tid, end_ns);
	send_call(EVENT_DECODE, tid, start->start_ns, end_ns, start->ctx, start->n_tokens, ret);
	bpf_map_delete_elem(&decode_start_by_tid, &tid);
	return 0;
}

/*
 * bool llama_memory_seq_rm(llama_memory_t mem, llama_seq_id seq_id, llama_pos p0, llama_pos p1), and the same
 * shape with a llama_context * in older releases (llama_kv_self_seq_rm, llama_kv_cache_seq_rm).
 * Entry only: what was asked is what tells a speculative verification's kept tokens.
 */
SEC("uprobe")
int BPF_KPROBE(handle_seq_rm, void *memory, int seq, int p0, int p1)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct seq_rm_event *e;

	if (!is_target(pid_tgid))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		return 0;
	}
	e->header.kind = EVENT_SEQ_RM;
	e->header.tid = (__u32)pid_tgid;
	e->header.start_ns = bpf_ktime_get_ns();
	e->header.end_ns = e->header.start_ns;
	e->memory = (__u64)memory;
	e->seq = seq;
	e->p0 = p0;
	e->p1 = p1;
	e->pad = 0;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}
