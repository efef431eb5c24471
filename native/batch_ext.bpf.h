/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Token layer, newer releases: int32_t llama_process(struct llama_context *ctx, enum llama_process_type type,
 * struct llama_batch_ext *batch). The batch is an opaque C++ object (a vector of per-token records whose layout
 * differs between releases and compilers), so it is not read: its public C builders are followed instead, each
 * with register arguments the ABI fixes,
 *   llama_batch_ext_add / _add_token / _add_embd (batch, seq_id, ...)  a token of sequence seq_id, at the end
 *   llama_batch_ext_add_seq(batch, idx, seq_id)                        token idx also goes to seq_id
 *   llama_batch_ext_set_pos(batch, idx, const llama_pos *pos)          its position, pos[0]
 *   llama_batch_ext_set_output_logits / _embd(batch, idx, bool)        whether its output is wanted
 *   llama_batch_ext_clear(batch), llama_batch_ext_init (return), llama_batch_ext_free(batch)
 * into one ext_batch per batch object. llama_process then sends the same batch_event and decode_event a
 * llama_decode call sends, so everything downstream is one path; an ENCODE is sent as EVENT_ENCODE.
 * Included at the end of infertop.bpf.c.
 */

struct ext_batch_key {
	__u32 tgid;
	__u32 pad;
	__u64 batch; /* struct llama_batch_ext * */
};

struct ext_batch {
	__s32 n_tokens;  /* tokens added since the batch was cleared (or made) */
	__u32 synced;    /* 0: first seen mid-fill (made before the attach): its count is not known */
	__u32 has_pos;   /* the caller set positions (llama-bench leaves them to llama.cpp: no per-token record) */
	__u32 pad;
	struct batch_token tokens[MAX_BATCH_TOKENS];
};

/* Live batch objects; a server keeps one or two for its life, so LRU eviction only drops leaked ones. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 64);
	__type(key, struct ext_batch_key);
	__type(value, struct ext_batch);
} ext_batches SEC(".maps");

/* Never written: the zeroed value a new ext_batch is made from (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ext_batch);
} ext_batch_zero SEC(".maps");

struct process_start {
	__u64 start_ns;
	__u64 ctx;
	__u64 batch;
	__s32 type; /* enum llama_process_type: 0 ENCODE, 1 DECODE */
	__s32 n_tokens;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct process_start);
} process_start_by_tid SEC(".maps");

/* llama_batch_ext_init's return: the constructor's argument is gone by then, the new object is in the result. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, __u8);
} ext_init_by_tid SEC(".maps");

static __always_inline struct ext_batch *ext_batch_of(__u64 pid_tgid, const void *batch, int make, int synced)
{
	struct ext_batch_key key = {.tgid = (__u32)(pid_tgid >> 32), .batch = (__u64)batch};
	struct ext_batch *b;
	__u32 zero = 0;

	b = bpf_map_lookup_elem(&ext_batches, &key);
	if (b || !make)
		return b;
	b = bpf_map_lookup_elem(&ext_batch_zero, &zero);
	if (!b)
		return 0;
	bpf_map_update_elem(&ext_batches, &key, b, BPF_NOEXIST);
	b = bpf_map_lookup_elem(&ext_batches, &key);
	if (b)
		b->synced = synced;
	return b;
}

static __always_inline void ext_batch_reset(struct ext_batch *b)
{
	b->n_tokens = 0;
	b->has_pos = 0;
	b->synced = 1;
}

/* A token appended to the batch (add, add_token and add_embd alike): its index is the count so far. */
SEC("uprobe")
int BPF_KPROBE(handle_ext_add, void *batch, int seq)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ext_batch *b;
	__s32 i;

	if (!is_target(pid_tgid))
		return 0;
	b = ext_batch_of(pid_tgid, batch, 1, 0);
	if (!b)
		return 0;
	i = b->n_tokens;
	if (i >= 0 && i < MAX_BATCH_TOKENS) {
		b->tokens[i].pos = -1;
		b->tokens[i].seq = seq;
		b->tokens[i].logits = 0;
		b->tokens[i].n_seq = 1;
	}
	b->n_tokens = i + 1;
	return 0;
}

/* Token idx of the batch, if known; *batch_out the batch (one lookup per builder call: they run per token). */
static __always_inline struct batch_token *ext_token(__u64 pid_tgid, void *batch, int idx, struct ext_batch **batch_out)
{
	struct ext_batch *b;

	if (!is_target(pid_tgid))
		return 0;
	b = ext_batch_of(pid_tgid, batch, 0, 0);
	if (!b || idx < 0 || idx >= MAX_BATCH_TOKENS || idx >= b->n_tokens)
		return 0;
	if (batch_out)
		*batch_out = b;
	return &b->tokens[idx];
}

SEC("uprobe")
int BPF_KPROBE(handle_ext_add_seq, void *batch, int idx, int seq)
{
	struct batch_token *t = ext_token(bpf_get_current_pid_tgid(), batch, idx, 0);

	if (t && t->n_seq < 127)
		t->n_seq++;
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(handle_ext_set_pos, void *batch, int idx, const void *pos)
{
	struct ext_batch *b = 0;
	struct batch_token *t = ext_token(bpf_get_current_pid_tgid(), batch, idx, &b);
	__s32 p = -1;

	if (!t || !b || !pos || bpf_probe_read_user(&p, sizeof(p), pos))
		return 0;
	t->pos = p;
	b->has_pos = 1;
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(handle_ext_set_output, void *batch, int idx, long value)
{
	struct batch_token *t = ext_token(bpf_get_current_pid_tgid(), batch, idx, 0);

	if (t)
		t->logits = (value & 0xff) ? 1 : 0;
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(handle_ext_clear, void *batch)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ext_batch *b;

	if (!is_target(pid_tgid))
		return 0;
	b = ext_batch_of(pid_tgid, batch, 1, 1);
	if (b)
		ext_batch_reset(b);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(handle_ext_free, void *batch)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ext_batch_key key = {.tgid = (__u32)(pid_tgid >> 32), .batch = (__u64)batch};

	if (!is_target(pid_tgid))
		return 0;
	bpf_map_delete_elem(&ext_batches, &key);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(handle_ext_init_enter)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	__u8 one = 1;

	if (!is_target(pid_tgid))
		return 0;
	bpf_map_update_elem(&ext_init_by_tid, &tid, &one, BPF_ANY);
	return 0;
}

/* A batch made after the attach starts empty: its count is known from the first token on. */
SEC("uretprobe")
int BPF_KRETPROBE(handle_ext_init_exit, void *batch)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct ext_batch *b;

	if (!is_target(pid_tgid) || !bpf_map_lookup_elem(&ext_init_by_tid, &tid))
		return 0;
	bpf_map_delete_elem(&ext_init_by_tid, &tid);
	if (!batch)
		return 0;
	b = ext_batch_of(pid_tgid, batch, 1, 1);
	if (b)
		ext_batch_reset(b);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(handle_process_enter, void *llama_ctx, int type, void *batch)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct process_start start = {};
	struct ext_batch *b;

	if (!is_target(pid_tgid))
		return 0;
	b = ext_batch_of(pid_tgid, batch, 0, 0);
	start.ctx = (__u64)llama_ctx;
	start.batch = (__u64)batch;
	start.type = type;
	/* -1, as for an unreadable llama_batch: a batch filled before the attach is counted as a call only. */
	start.n_tokens = b && b->synced ? b->n_tokens : -1;
	start.start_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&process_start_by_tid, &tid, &start, BPF_ANY);
	return 0;
}

/* The batch's tokens as llama_decode's return probe sends them: only where positions were set. */
static __always_inline void send_ext_batch(const struct process_start *start, __u64 pid_tgid, __u64 end_ns)
{
	struct ext_batch *b = ext_batch_of(pid_tgid, (const void *)start->batch, 0, 0);
	struct batch_event *e;
	__u32 zero = 0;
	__s32 recorded;
	__u64 size;

	if (!b || !b->synced || !b->has_pos || start->n_tokens <= 0)
		return;
	e = bpf_map_lookup_elem(&batch_scratch, &zero);
	if (!e)
		return;
	recorded = start->n_tokens < MAX_BATCH_TOKENS ? start->n_tokens : MAX_BATCH_TOKENS;
	e->header.kind = EVENT_BATCH;
	e->header.tid = (__u32)pid_tgid;
	e->header.start_ns = start->start_ns;
	e->header.end_ns = end_ns;
	e->ctx = start->ctx;
	e->n_tokens = start->n_tokens;
	e->recorded = recorded;
	size = (__u64)recorded * sizeof(struct batch_token);
	if (size > sizeof(e->tokens))
		size = sizeof(e->tokens);
	bpf_probe_read_kernel(e->tokens, size, b->tokens);
	size += __builtin_offsetof(struct batch_event, tokens);
	if (bpf_ringbuf_output(&events, e, size, BPF_RB_NO_WAKEUP))
		count_lost();
}

SEC("uretprobe")
int BPF_KRETPROBE(handle_process_exit, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct process_start *start;

	if (!is_target(pid_tgid))
		return 0;
	start = bpf_map_lookup_elem(&process_start_by_tid, &tid);
	if (!start)
		return 0; /* attached mid-call */
	__u64 end_ns = bpf_ktime_get_ns();
	if (start->type == 1)
		send_ext_batch(start, pid_tgid, end_ns);
	send_call(start->type == 1 ? EVENT_DECODE : EVENT_ENCODE, tid, start->start_ns, end_ns, start->ctx,
		  start->n_tokens, ret);
	bpf_map_delete_elem(&process_start_by_tid, &tid);
	return 0;
}
