// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_sweep_riscv" (riscv64): a probe tried at every halfword of a few
 * compiled vmlinux functions that a workload here can drive (sort_r, list_sort, memparse,
 * kstrtoull, match_string, crc32_le, and llist_del_first, whose cmpxchg loop is an LR/SC
 * sequence), all armed at once. (vsnprintf, hex_dump_to_buffer and llist_add_batch are on the
 * trap path of this kernel: blacklisted.) The boundaries are computed here, independently of
 * okprobes, by walking the live text from the function's start with the RVC length rules
 * before any probe is armed. Then:
 *  - every mid-instruction halfword is refused with -EILSEQ;
 *  - the ftrace site (the function's first 8 bytes) takes one probe at +0, the rest -EILSEQ;
 *  - every other boundary is accepted, or refused with -EINVAL/-EBUSY and a reason (LR/SC,
 *    CSR accesses, someone else's text), never -EILSEQ;
 *  - with every accepted probe armed, the workload computes exactly what it computed before,
 *    and the probes were hit.
 */
#include <kunit/test.h>
#include <linux/list.h>
#include <linux/list_sort.h>
#include <linux/llist.h>
#include <linux/printk.h>
#include <linux/crc32.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <okprobes/okprobes.h>
#include "okp_need_breakpoints.h"

/* Longest function swept: its halfwords each get a probe record. */
#define OKP_SW_MAX_BYTES 8192
/* The patchable entry ftrace owns on riscv64 (auipc t0 + jalr t0, or 4 c.nop). */
#define OKP_SW_FTRACE_BYTES 8

struct okp_sw_result {
	char text[160];
	int sorted[48];
	int list_order[16];
	u32 crc;
	unsigned long long parsed;
	int found;
	int ret;
	unsigned long long mem;
	int llist_order[4];
};

static int okp_sw_cmp(const void *a, const void *b, const void *priv)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

struct okp_sw_node {
	struct list_head link;
	int value;
};

static int okp_sw_list_cmp(void *priv, const struct list_head *a, const struct list_head *b)
{
	return list_entry(a, struct okp_sw_node, link)->value -
	       list_entry(b, struct okp_sw_node, link)->value;
}

struct okp_sw_lnode {
	struct llist_node node;
	int value;
};

/* llist_add (llist_add_batch) and llist_del_first: cmpxchg loops, LR/SC on riscv64. */
static void okp_sw_llist(struct okp_sw_result *r)
{
	struct okp_sw_lnode nodes[ARRAY_SIZE(r->llist_order)];
	LLIST_HEAD(head);
	struct llist_node *n;
	int i;

	for (i = 0; i < ARRAY_SIZE(nodes); i++) {
		nodes[i].value = 10 + i;
		llist_add(&nodes[i].node, &head);
	}
	for (i = 0; i < ARRAY_SIZE(nodes) && (n = llist_del_first(&head)); i++)
		r->llist_order[i] = llist_entry(n, struct okp_sw_lnode, node)->value;
}

static noinline void okp_sw_workload(struct okp_sw_result *r)
{
	static const u8 data[] = "okprobes sweeps riscv64 text, every halfword of it";
	static const char * const words[] = { "alpha", "beta", "gamma", "delta" };
	struct okp_sw_node nodes[ARRAY_SIZE(r->list_order)];
	struct okp_sw_node *node;
	LIST_HEAD(list);
	int i;

	memset(r, 0, sizeof(*r));
	hex_dump_to_buffer(data, 32, 16, 4, r->text, sizeof(r->text), true);
	for (i = 0; i < ARRAY_SIZE(r->sorted); i++)
		r->sorted[i] = (i * 37 + 11) % 53;
	sort_r(r->sorted, ARRAY_SIZE(r->sorted), sizeof(int), okp_sw_cmp, NULL, NULL);
	for (i = 0; i < ARRAY_SIZE(nodes); i++) {
		nodes[i].value = (i * 7 + 3) % 16;
		list_add_tail(&nodes[i].link, &list);
	}
	list_sort(NULL, &list, okp_sw_list_cmp);
	i = 0;
	list_for_each_entry(node, &list, link)
		r->list_order[i++] = node->value;
	r->crc = crc32_le(~0u, data, sizeof(data) - 1);
	r->ret = kstrtoull("18446744073709551615", 10, &r->parsed);
	r->found = match_string(words, ARRAY_SIZE(words), "gamma");
	r->mem = memparse("96k", NULL) + memparse("3G", NULL);
	okp_sw_llist(r);
}

struct okp_sw_target {
	const char *name;
	void *fn;
};

static unsigned long okp_sw_hits;

static int okp_sw_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	okp_sw_hits++;	/* racy across CPUs: only "hit at all" is asserted */
	return 0;
}

/* The function's size, from kallsyms ("name+0x0/0x1a4"). 0: unknown. */
static unsigned long okp_sw_size(void *fn)
{
	char buf[KSYM_SYMBOL_LEN];
	char *slash, *end;
	unsigned long size;

	sprint_symbol(buf, (unsigned long)fn);
	slash = strchr(buf, '/');
	if (!slash)
		return 0;
	end = strchr(slash, ' ');
	if (end)
		*end = '\0';
	return kstrtoul(slash + 1, 0, &size) ? 0 : size;
}

static void okp_sw_sweep(struct kunit *test, const struct okp_sw_target *t,
			 const struct okp_sw_result *expect)
{
	const unsigned long fn = (unsigned long)t->fn;
	unsigned long size = okp_sw_size(t->fn), off;
	unsigned int n, i, armed = 0, refused = 0, mid = 0, nboundaries = 0;
	struct okp_kprobe *kps;
	struct okp_sw_result got;
	bool *boundary;
	u16 parcel;

	KUNIT_ASSERT_GT_MSG(test, size, 0UL, "%s: no size in kallsyms", t->name);
	KUNIT_ASSERT_LE(test, size, (unsigned long)OKP_SW_MAX_BYTES);
	n = size / 2;
	kps = kcalloc(n, sizeof(*kps), GFP_KERNEL);
	boundary = kcalloc(n + 2, sizeof(*boundary), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kps);
	KUNIT_ASSERT_NOT_NULL(test, boundary);

	/* The boundaries, from the start, before anything is armed. */
	for (off = 0; off < size;) {
		boundary[off / 2] = true;
		nboundaries++;
		KUNIT_ASSERT_EQ(test, copy_from_kernel_nofault(&parcel, (void *)(fn + off), 2), 0L);
		off += (parcel & 3) != 3 ? 2 : 4;
	}

	for (i = 0; i < n; i++) {
		int ret;

		off = 2 * i;
		kps[i].addr = (okp_kprobe_opcode_t *)(fn + off);
		kps[i].pre_handler = okp_sw_pre;
		ret = okp_register_kprobe(&kps[i]);
		if (!ret) {
			armed++;
			KUNIT_EXPECT_TRUE_MSG(test, boundary[i], "%s+%#lx accepted mid-instruction",
					      t->name, off);
			continue;
		}
		kps[i].addr = NULL;	/* not registered: skipped at unregister */
		if (!boundary[i] || (off > 0 && off < OKP_SW_FTRACE_BYTES)) {
			mid++;
			KUNIT_EXPECT_EQ_MSG(test, ret, -EILSEQ, "%s+%#lx: %s", t->name, off,
					    okp_kprobe_reason(&kps[i]));
			continue;
		}
		refused++;
		KUNIT_EXPECT_TRUE_MSG(test, ret == -EINVAL || ret == -EBUSY, "%s+%#lx: %d %s",
				      t->name, off, ret, okp_kprobe_reason(&kps[i]));
		KUNIT_EXPECT_NE_MSG(test, okp_kprobe_reason(&kps[i])[0], '\0', "%s+%#lx", t->name, off);
	}
	kunit_info(test, "%s: %lu bytes, %u boundaries: %u probes armed, %u refused, %u "
		   "mid-instruction refused\n", t->name, size, nboundaries, armed, refused, mid);
	KUNIT_EXPECT_GT(test, armed, nboundaries / 2);

	okp_sw_hits = 0;
	okp_sw_workload(&got);
	KUNIT_EXPECT_STREQ(test, got.text, expect->text);
	KUNIT_EXPECT_EQ(test, memcmp(got.sorted, expect->sorted, sizeof(got.sorted)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got.list_order, expect->list_order, sizeof(got.list_order)), 0);
	KUNIT_EXPECT_EQ(test, got.crc, expect->crc);
	KUNIT_EXPECT_EQ(test, got.parsed, expect->parsed);
	KUNIT_EXPECT_EQ(test, got.ret, expect->ret);
	KUNIT_EXPECT_EQ(test, got.found, expect->found);
	KUNIT_EXPECT_EQ(test, got.mem, expect->mem);
	KUNIT_EXPECT_EQ(test, memcmp(got.llist_order, expect->llist_order,
				     sizeof(got.llist_order)), 0);
	KUNIT_EXPECT_GT(test, okp_sw_hits, 0UL);

	for (i = 0; i < n; i++)
		if (kps[i].addr)
			okp_unregister_kprobe(&kps[i]);
	kfree(boundary);
	kfree(kps);
}

static const struct okp_sw_target okp_sw_targets[] = {
	{ "sort_r", sort_r },
	{ "list_sort", list_sort },
	{ "memparse", memparse },
	{ "kstrtoull", kstrtoull },
	{ "match_string", match_string },
	{ "crc32_le", crc32_le },
	{ "llist_del_first", llist_del_first },
};

static void okp_sw_desc(const struct okp_sw_target *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}
KUNIT_ARRAY_PARAM(okp_sw, okp_sw_targets, okp_sw_desc);

/*
 * A target the derived trap path covers is refused whole, which is right, and no sweep: 6.12's
 * riscv64 test kernel reaches llist_del_first from its breakpoint path (through
 * kvfree_call_rcu). Any other refusal of the start is left to the sweep to judge.
 */
static void okp_sw_skip_if_trap_path(struct kunit *test, const struct okp_sw_target *t)
{
	struct okp_kprobe probe = { .addr = (okp_kprobe_opcode_t *)t->fn, .pre_handler = okp_sw_pre };
	int ret = okp_register_kprobe(&probe);

	if (!ret) {
		okp_unregister_kprobe(&probe);
		return;
	}
	if (ret == -EINVAL && strstr(okp_kprobe_reason(&probe), "[trap path"))
		kunit_skip(test, "%s: refused whole on this kernel: %s", t->name,
			   okp_kprobe_reason(&probe));
}

static void okp_sw_case(struct kunit *test)
{
	const struct okp_sw_target *t = test->param_value;
	struct okp_sw_result expect, again;

	okp_kunit_need_breakpoints(test);
	okp_sw_skip_if_trap_path(test, t);
	okp_sw_workload(&expect);
	okp_sw_sweep(test, t, &expect);
	/* Everything is unregistered: the text is back, the workload the same. */
	okp_sw_workload(&again);
	KUNIT_EXPECT_EQ(test, memcmp(&again, &expect, sizeof(again)), 0);
}

static struct kunit_case okp_sw_cases[] = {
	KUNIT_CASE_PARAM(okp_sw_case, okp_sw_gen_params),
	{}
};

static struct kunit_suite okp_sw_suite = {
	.name = "okprobes_sweep_riscv",
	.test_cases = okp_sw_cases,
};

kunit_test_suites(&okp_sw_suite);
