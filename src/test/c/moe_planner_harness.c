// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * native/moe.bpf.h run in user space, for MoePlannerAgreementTest: the BPF planner (moe_on_node, the walk
 * of a graph with no plan yet) and the arrival numbering (moe_on_fused, moe_on_arrival), compiled with the
 * host C compiler against stand-ins for what they take from libbpf and infertop.bpf.c. The header itself is
 * included unchanged: the test checks the code BPF runs, not a copy of it.
 *
 * Stand-ins: maps are fixed tables found by their definition's address (array, per-CPU array with one CPU,
 * hash with BPF_ANY / BPF_NOEXIST and its max_entries); target memory is a list of regions the script
 * maps (a read outside them fails and zeroes, like bpf_probe_read_user); the ring buffer prints each
 * MOE_IDS record.
 *
 * Script on stdin, one command a line (numbers decimal, addresses and signatures hex):
 *   config OP_MUL_MAT_ID COMPUTE_FLAG EMPTY_OPS_LO EMPTY_OPS_HI   probe_config's MoE fields; layer enabled
 *   graph SEQ SIGNATURE              moe_on_graph (handle_graph_walk, before its node walk)
 *   node TENSOR OP FLAGS IDS NAME    moe_on_node; NAME: the name's bytes in hex, or "-" when unreadable
 *   write SIGNATURE GROUP IDS LAYER  one plan entry and its group bit, as user space writes them (MoePlans)
 *   thread TID GROUPS                one thread runs the graph: GROUPS has one letter per node group, 'f'
 *                                    for a fused call, 'n' otherwise; it arrives at the barrier after each
 *   plans SIGNATURE                  prints "plan GROUP IDS LAYER" per planned group of SIGNATURE, in order
 *   mark WORD                        prints WORD (sections of the output)
 * A thread prints "read GROUP LAYER" per ids record it sent (GROUP: its arrival index), or "unplanned" when
 * the graph had no plan at its start.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include "events.h"

#define SEC(name)
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#undef __always_inline
#define __always_inline inline __attribute__((always_inline))
#define __noinline __attribute__((noinline))

/* ---- maps ---- */

struct shim_map {
	const void *definition;
	size_t key_bytes, value_bytes;
	uint32_t max_entries, count;
	int hash;
	unsigned char *keys, *values;
};

static struct shim_map shim_maps[32];

static struct shim_map *shim_map_of(const void *definition, int type, uint32_t max_entries, size_t key_bytes,
				    size_t value_bytes)
{
	for (int i = 0; i < 32; i++) {
		struct shim_map *m = &shim_maps[i];

		if (m->definition == definition)
			return m;
		if (!m->definition) {
			m->definition = definition;
			m->key_bytes = key_bytes;
			m->value_bytes = value_bytes;
			m->max_entries = max_entries;
			m->hash = type == BPF_MAP_TYPE_HASH;
			m->keys = calloc(max_entries, key_bytes);
			m->values = calloc(max_entries, value_bytes);
			if (!m->keys || !m->values)
				abort();
			return m;
		}
	}
	abort();
}

static void *shim_slot(struct shim_map *m, const void *key)
{
	if (!m->hash) {
		uint32_t index = *(const uint32_t *)key;

		return index < m->max_entries ? m->values + (size_t)index * m->value_bytes : 0;
	}
	for (uint32_t i = 0; i < m->count; i++)
		if (!memcmp(m->keys + (size_t)i * m->key_bytes, key, m->key_bytes))
			return m->values + (size_t)i * m->value_bytes;
	return 0;
}

static long shim_update(struct shim_map *m, const void *key, const void *value, uint64_t flags)
{
	void *slot = shim_slot(m, key);

	if (!m->hash && !slot)
		return -E2BIG;
	if (slot && flags == BPF_NOEXIST)
		return -EEXIST;
	if (!slot) {
		if (m->count == m->max_entries)
			return -E2BIG;
		memcpy(m->keys + (size_t)m->count * m->key_bytes, key, m->key_bytes);
		slot = m->values + (size_t)m->count++ * m->value_bytes;
	}
	memcpy(slot, value, m->value_bytes);
	return 0;
}

/* The map's type, size and key/value types, from its definition as libbpf's __uint/__type macros spell it. */
#define SHIM_MAP(map)                                                                                          \
	shim_map_of((map), (int)(sizeof(*(map)->type) / sizeof(int)),                                          \
		    (uint32_t)(sizeof(*(map)->max_entries) / sizeof(int)), sizeof(*(map)->key), sizeof(*(map)->value))
#define bpf_map_lookup_elem(map, key) shim_slot(SHIM_MAP(map), (key))
#define bpf_map_update_elem(map, key, value, flags) shim_update(SHIM_MAP(map), (key), (value), (flags))

/* ---- target memory ---- */

struct shim_region {
	uint64_t base;
	unsigned char bytes[NODE_NAME_BYTES];
};

static struct shim_region *shim_regions;
static size_t shim_region_count, shim_region_capacity;

static void shim_map_region(uint64_t base, const unsigned char *bytes)
{
	for (size_t i = 0; i < shim_region_count; i++) {
		if (shim_regions[i].base == base) {
			memcpy(shim_regions[i].bytes, bytes, NODE_NAME_BYTES);
			return;
		}
	}
	if (shim_region_count == shim_region_capacity) {
		shim_region_capacity = shim_region_capacity ? shim_region_capacity * 2 : 1024;
		shim_regions = realloc(shim_regions, shim_region_capacity * sizeof(*shim_regions));
		if (!shim_regions)
			abort();
	}
	shim_regions[shim_region_count].base = base;
	memcpy(shim_regions[shim_region_count++].bytes, bytes, NODE_NAME_BYTES);
}

static long bpf_probe_read_user(void *dst, uint32_t size, const void *src)
{
	uint64_t address = (uint64_t)(uintptr_t)src;

	for (size_t i = 0; i < shim_region_count; i++) {
		struct shim_region *r = &shim_regions[i];

		if (address >= r->base && address - r->base + size <= NODE_NAME_BYTES) {
			memcpy(dst, r->bytes + (address - r->base), size);
			return 0;
		}
	}
	memset(dst, 0, size);
	return -EFAULT;
}

/* ---- what infertop.bpf.c (common.bpf.h, operator.bpf.h) defines before including moe.bpf.h ---- */

static struct probe_config config;
static uint64_t shim_clock_ns;

static uint64_t bpf_ktime_get_ns(void)
{
	return ++shim_clock_ns;
}

static void count_lost(void)
{
	printf("lost\n");
}

static long bpf_ringbuf_output(void *ring, const struct moe_event *e, uint64_t size, uint64_t flags)
{
	(void)ring;
	(void)size;
	(void)flags;
	if (e->subtype == MOE_IDS)
		printf("read %u %d\n", e->group, e->layer);
	return 0;
}

static int events;

#include "moe.bpf.h"

/* ---- the script ---- */

static uint64_t hex(const char *text)
{
	return strtoull(text, 0, 16);
}

static int name_bytes(const char *text, unsigned char *bytes)
{
	memset(bytes, 0, NODE_NAME_BYTES);
	if (!strcmp(text, "-"))
		return 0;
	for (size_t i = 0; i < NODE_NAME_BYTES && text[2 * i] && text[2 * i + 1]; i++) {
		char pair[3] = {text[2 * i], text[2 * i + 1], 0};

		bytes[i] = (unsigned char)strtoul(pair, 0, 16);
	}
	return 1;
}

int main(void)
{
	static char line[16384], word[16], a[8192], b[8192], c[8192], d[8192], e[8192];
	uint64_t graph_seq = 0;
	__u32 zero = 0;

	while (fgets(line, sizeof(line), stdin)) {
		int fields = sscanf(line, "%15s %8191s %8191s %8191s %8191s %8191s", word, a, b, c, d, e);

		if (fields <= 0)
			continue;
		if (!strcmp(word, "config") && fields == 5) {
			struct moe_control *control = bpf_map_lookup_elem(&moe_control, &zero);

			config.op_mul_mat_id = (__u32)strtoul(a, 0, 10);
			config.compute_flag = (__u32)strtoul(b, 0, 10);
			config.empty_ops[0] = hex(c);
			config.empty_ops[1] = hex(d);
			config.tensor_name_offset = 0x120;
			config.tensor_ne_offset = 0x10;
			config.tensor_nb_offset = 0x30;
			config.tensor_data_offset = 0xf8;
			control->enabled = 1;
		} else if (!strcmp(word, "graph") && fields == 3) {
			graph_seq = strtoull(a, 0, 10);
			moe_on_graph(1, graph_seq, hex(b), 0);
		} else if (!strcmp(word, "node") && fields == 6) {
			uint64_t tensor = hex(a);
			unsigned char bytes[NODE_NAME_BYTES];

			if (name_bytes(e, bytes))
				shim_map_region(tensor + config.tensor_name_offset, bytes);
			moe_on_node(graph_seq, (__s32)strtol(b, 0, 10), (__s32)strtol(c, 0, 10), hex(d),
				    (const void *)(uintptr_t)tensor);
		} else if (!strcmp(word, "write") && fields == 5) {
			struct moe_plan_key key = {.signature = hex(a), .group = (__u32)strtoul(b, 0, 10)};
			struct moe_plan plan = {.ids_tensor = hex(c), .layer = (__s32)strtol(d, 0, 10)};
			struct moe_group_bits *bits;

			if (key.group >= MOE_PLAN_GROUPS || bpf_map_update_elem(&moe_plan, &key, &plan, BPF_ANY))
				continue;
			bits = bpf_map_lookup_elem(&moe_graph_plans, &key.signature);
			if (!bits) {
				if (bpf_map_update_elem(&moe_graph_plans, &key.signature,
							bpf_map_lookup_elem(&moe_zero_bits, &zero), BPF_NOEXIST))
					continue;
				bits = bpf_map_lookup_elem(&moe_graph_plans, &key.signature);
			}
			bits->bits[key.group / 64] |= 1ULL << (key.group % 64);
		} else if (!strcmp(word, "thread") && fields == 3) {
			__u32 tid = (__u32)strtoul(a, 0, 10);

			if (!(moe_thread_start(graph_seq) & ARRIVAL_READ_MOE)) {
				printf("unplanned\n");
				continue;
			}
			for (__u32 group = 0; b[group]; group++) {
				if (b[group] == 'f')
					moe_on_fused(tid, graph_seq);
				moe_on_arrival(tid, graph_seq, group);
			}
		} else if (!strcmp(word, "mark") && fields == 2) {
			printf("%s\n", a);
		} else if (!strcmp(word, "plans") && fields == 2) {
			__u64 signature = hex(a);
			struct moe_group_bits *bits = bpf_map_lookup_elem(&moe_graph_plans, &signature);

			for (__u32 group = 0; bits && group < MOE_PLAN_GROUPS; group++) {
				struct moe_plan_key key = {.signature = signature, .group = group};
				struct moe_plan *plan;

				if (!(bits->bits[group / 64] & (1ULL << (group % 64))))
					continue;
				plan = bpf_map_lookup_elem(&moe_plan, &key);
				if (plan)
					printf("plan %u %llx %d\n", group, (unsigned long long)plan->ids_tensor, plan->layer);
				else
					printf("plan %u missing\n", group);
			}
		} else {
			fprintf(stderr, "bad line: %s", line);
			return 2;
		}
		fflush(stdout);
	}
	return 0;
}
