// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's kprobes beside okprobes' patched bytes (x86-64). The kernel's can_probe()
 * decodes a function from its start through recover_probed_instruction(), which restores only
 * the kernel's own kprobes: okprobes' int3 (1 byte) or jmp rel32 (5 bytes) is decoded as it
 * is, and the walk after it may land inside the real instructions. This module puts an okprobe
 * at okp_kkd_fn+A or +C (kk_drift_text.S: immediates chosen to make that walk drift), as a
 * breakpoint or, with optimized=1, as a jump, then:
 *  1. asks register_kprobe() for every byte from A to G and counts what the kernel accepts
 *     at a byte that is not an instruction boundary (each one unregistered at once);
 *  2. keeps kernel kprobes on every boundary the kernel accepts, calls the function, removes
 *     the okprobe first, calls again, removes the kernel kprobes (order "okprobe first");
 *  3. the same with the kernel kprobes removed first ("kernel first").
 * Every call must compute (x + 1) * 2 + 3 and every probe must count its hits. One summary
 * line "OKP-KKD: ... PASS|FAIL"; results also in /sys/module/okp_kk_drift/parameters/.
 * Step 2 with a kernel kprobe on okprobes' jump would corrupt the function if the kernel were
 * allowed to put one there (docs/architecture.md, "The kernel's kprobes beside okprobes").
 */
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <okprobes/okprobes.h>

unsigned long okp_kkd_fn(unsigned long x);
extern const u32 okp_kkd_boundaries[7];	/* A..G */
unsigned long okp_kkd_branch_fn(unsigned long x);
extern const u32 okp_kkd_branch_offsets[2];	/* B (jnz), Y (4 bytes before its target) */
unsigned long okp_kkd_thunk_fn(unsigned long x, unsigned long (*fn)(unsigned long));
extern const u32 okp_kkd_thunk_offsets[2];	/* A (first instruction), J (jmp to a thunk) */
#define KKD_A 0
#define KKD_C 2
#define KKD_G 6
#define KKD_MAX_BYTES 64

static uint site = KKD_A;	/* okprobe at boundary A (0) or C (2) */
module_param(site, uint, 0444);
static bool optimized;	/* wait until okprobes has jump-optimized it */
module_param(optimized, bool, 0444);
static uint nonboundary;	/* bytes inside an instruction the kernel accepted */
module_param(nonboundary, uint, 0444);
static bool on_site;		/* did the kernel accept a kprobe on okprobes' own site? */
module_param(on_site, bool, 0444);
static char accepted[160];	/* "+off,+off,..." every offset the kernel accepted */
module_param_string(accepted, accepted, sizeof(accepted), 0444);
static char verdict[8] = "none";
/* For a demonstration only, never in make check: step 2 also keeps what the kernel accepted
 * inside an instruction or on okprobes' site, to show what that does to the function. */
static bool keep_risky;
module_param(keep_risky, bool, 0444);
/* Instead: okprobes' int3 on okp_kkd_branch_fn's jnz, then a kernel kprobe at Y, 1-4 bytes
 * before the jnz's target. branch_result: register_kprobe()'s; branch_optimized: did the
 * kernel optimize it (a jump over the jnz's target: the next x != 0 call would crash)? */
static bool branch;
module_param(branch, bool, 0444);
static int branch_result = 1;
module_param(branch_result, int, 0444);
static bool branch_optimized;
module_param(branch_optimized, bool, 0444);
/* The mirror: a kernel kprobe at A (optimized by the kernel into a jmp over A and B), then
 * okp_register_kprobe at every byte: mirror_nonboundary counts what okprobes accepted inside
 * an instruction; mirror_optimized says whether the kernel's jump was there. */
static bool mirror;
module_param(mirror, bool, 0444);
static uint mirror_nonboundary;
module_param(mirror_nonboundary, uint, 0444);
static bool mirror_optimized;
module_param(mirror_optimized, bool, 0444);
/* Instead: okprobes' int3 on okp_kkd_thunk_fn's jump to a retpoline thunk (J), which hides
 * an indirect jump from the kernel's can_optimize(): the whole function must be fenced, so
 * the kernel's register_kprobe() at A (far from J, accepted before) says -EINVAL.
 * thunk_form: the byte at J before okprobes' int3 (0xe9: the jump to the thunk is there, not
 * rewritten by the kernel's alternatives into `jmp *%r11`). */
static bool thunk;
module_param(thunk, bool, 0444);
static int thunk_before = 1;
module_param(thunk_before, int, 0444);
static int thunk_result = 1;
module_param(thunk_result, int, 0444);
static uint thunk_form;
module_param(thunk_form, uint, 0444);
module_param_string(verdict, verdict, sizeof(verdict), 0444);

static unsigned long okp_hits;
static int okp_count(struct okp_kprobe *p, struct pt_regs *regs)
{
	okp_hits++;
	return 0;
}
OKP_NOKPROBE_SYMBOL(okp_count);

static unsigned long kernel_hits[KKD_MAX_BYTES];
static int kernel_count(struct kprobe *p, struct pt_regs *regs)
{
	kernel_hits[(unsigned long)p->addr - (unsigned long)okp_kkd_fn]++;
	return 0;
}
NOKPROBE_SYMBOL(kernel_count);

static struct okp_kprobe okp;
static struct kprobe kps[KKD_MAX_BYTES];
static bool kept[KKD_MAX_BYTES];
static bool failed;

#define fail(fmt, ...) do { failed = true; pr_err("OKP-KKD: FAIL: " fmt "\n", ##__VA_ARGS__); } while (0)

static bool is_boundary(unsigned int off)
{
	unsigned int i;

	for (i = 0; i <= KKD_G; i++)
		if (okp_kkd_boundaries[i] == off)
			return true;
	return false;
}

static int okprobe_on(void)
{
	int i, ret;

	memset(&okp, 0, sizeof(okp));
	okp.addr = (void *)((unsigned long)okp_kkd_fn + okp_kkd_boundaries[site]);
	okp.pre_handler = okp_count;
	ret = okp_register_kprobe(&okp);
	if (ret) {
		fail("okp_register_kprobe(+%u) = %d", okp_kkd_boundaries[site], ret);
		return ret;
	}
	for (i = 0; optimized && i < 100 && !(okp.flags & OKP_KPROBE_FLAG_OPTIMIZED); i++)
		msleep(50);
	if (optimized && !(okp.flags & OKP_KPROBE_FLAG_OPTIMIZED)) {
		fail("the okprobe was not optimized: %s", okp.okp_reason);
		okp_unregister_kprobe(&okp);
		return -EAGAIN;
	}
	return 0;
}

/* n calls, each checked; the okprobe and every kept kernel kprobe must count them. */
static void calls(const char *when, unsigned long n, bool okprobe_armed)
{
	unsigned long before = okp_hits, kbefore[KKD_MAX_BYTES], i, r;
	unsigned int off;

	memcpy(kbefore, kernel_hits, sizeof(kbefore));
	for (i = 0; i < n; i++) {
		r = okp_kkd_fn(i + 20);
		if (r != (i + 21) * 2 + 3)
			fail("%s: okp_kkd_fn(%lu) = %lu", when, i + 20, r);
	}
	if (okprobe_armed && okp_hits - before != n)
		fail("%s: okprobe counted %lu of %lu calls", when, okp_hits - before, n);
	for (off = 0; off < KKD_MAX_BYTES; off++)
		if (kept[off] && kernel_hits[off] - kbefore[off] != n)
			fail("%s: kernel kprobe at +%u counted %lu of %lu calls", when, off,
			     kernel_hits[off] - kbefore[off], n);
}

static void keep_kernel_kprobes(void)
{
	unsigned int off;
	int ret;

	for (off = okp_kkd_boundaries[KKD_A]; off < okp_kkd_boundaries[KKD_G]; off++) {
		/* Only what the sweep saw accepted at a boundary: never knowingly corrupt. */
		if (!kept[off])
			continue;
		memset(&kps[off], 0, sizeof(kps[off]));
		kps[off].addr = (void *)((unsigned long)okp_kkd_fn + off);
		kps[off].pre_handler = kernel_count;
		ret = register_kprobe(&kps[off]);
		if (ret) {
			fail("register_kprobe(+%u) = %d on the second try", off, ret);
			kept[off] = false;
		}
	}
}

static void drop_kernel_kprobes(void)
{
	unsigned int off;

	for (off = 0; off < KKD_MAX_BYTES; off++)
		if (kept[off])
			unregister_kprobe(&kps[off]);
	memset(kept, 0, sizeof(kept));
}

static int branch_check(void)
{
	struct kprobe kp = { .pre_handler = kernel_count };
	unsigned long i, r;
	int ret;

	memset(&okp, 0, sizeof(okp));
	okp.addr = (void *)((unsigned long)okp_kkd_branch_fn + okp_kkd_branch_offsets[0]);
	okp.pre_handler = okp_count;
	ret = okp_register_kprobe(&okp);
	if (ret) {
		fail("okp_register_kprobe(okp_kkd_branch_fn+%u) = %d", okp_kkd_branch_offsets[0], ret);
		return 0;
	}
	kp.addr = (void *)((unsigned long)okp_kkd_branch_fn + okp_kkd_branch_offsets[1]);
	branch_result = register_kprobe(&kp);
	/* The kernel optimizes after a few jiffies; its jmp then replaces the int3 at Y (the
	 * flag is on its aggregate probe, not on kp). */
	for (i = 0; branch_result == 0 && i < 40 && !branch_optimized; i++) {
		u8 first = 0;

		msleep(50);
		branch_optimized = !copy_from_kernel_nofault(&first, kp.addr, 1) && first == 0xe9;
	}
	pr_info("OKP-KKD: branch: register_kprobe(okp_kkd_branch_fn+%u) = %d, %soptimized\n",
		okp_kkd_branch_offsets[1], branch_result, branch_optimized ? "" : "not ");
	if (!branch_optimized || keep_risky) {
		for (i = 0; i < 10; i++) {
			r = okp_kkd_branch_fn(i);
			if (r != (i + 1) * 2 + 3)
				fail("okp_kkd_branch_fn(%lu) = %lu", i, r);
		}
	}
	if (branch_result == 0)
		unregister_kprobe(&kp);
	okp_unregister_kprobe(&okp);
	for (i = 0; i < 10; i++) {
		r = okp_kkd_branch_fn(i);
		if (r != (i + 1) * 2 + 3)
			fail("okp_kkd_branch_fn(%lu) = %lu after both went", i, r);
	}
	strscpy(verdict, failed ? "FAIL" : "PASS", sizeof(verdict));
	return 0;
}

static int thunk_check(void)
{
	struct kprobe kp = { .pre_handler = kernel_count };
	unsigned long addr_a = (unsigned long)okp_kkd_thunk_fn + okp_kkd_thunk_offsets[0];
	unsigned long addr_j = (unsigned long)okp_kkd_thunk_fn + okp_kkd_thunk_offsets[1];
	unsigned long i, r;
	u8 form = 0;
	int ret;

	if (copy_from_kernel_nofault(&form, (void *)addr_j, 1))
		fail("cannot read okp_kkd_thunk_fn+%u", okp_kkd_thunk_offsets[1]);
	thunk_form = form;
	kp.addr = (void *)addr_a;
	thunk_before = register_kprobe(&kp);
	if (thunk_before == 0)
		unregister_kprobe(&kp);
	memset(&okp, 0, sizeof(okp));
	okp.addr = (void *)addr_j;
	okp.pre_handler = okp_count;
	ret = okp_register_kprobe(&okp);
	if (ret) {
		fail("okp_register_kprobe(okp_kkd_thunk_fn+%u) = %d", okp_kkd_thunk_offsets[1], ret);
		goto out;
	}
	memset(&kp, 0, sizeof(kp));
	kp.addr = (void *)addr_a;
	kp.pre_handler = kernel_count;
	thunk_result = register_kprobe(&kp);
	if (thunk_result == 0)
		unregister_kprobe(&kp);
	for (i = 0; i < 10; i++) {
		r = okp_kkd_thunk_fn(i, NULL);
		if (r != (i + 1) * 2)
			fail("okp_kkd_thunk_fn(%lu) = %lu", i, r);
	}
	okp_unregister_kprobe(&okp);
	pr_info("OKP-KKD: thunk: byte at J %#x; register_kprobe(A) = %d before okprobes' int3 on J, %d with it\n",
		thunk_form, thunk_before, thunk_result);
out:
	strscpy(verdict, failed ? "FAIL" : "PASS", sizeof(verdict));
	return 0;
}

static int mirror_check(void)
{
	struct kprobe kp = { .pre_handler = kernel_count };
	unsigned int off, start = okp_kkd_boundaries[KKD_A], end = okp_kkd_boundaries[KKD_G];
	int i, ret, len = 0;

	kp.addr = (void *)((unsigned long)okp_kkd_fn + start);
	ret = register_kprobe(&kp);
	if (ret) {
		fail("register_kprobe(A) = %d", ret);
		return 0;
	}
	for (i = 0; i < 40 && !mirror_optimized; i++) {
		u8 first = 0;

		msleep(50);
		mirror_optimized = !copy_from_kernel_nofault(&first, kp.addr, 1) && first == 0xe9;
	}
	for (off = start + 1; off < end; off++) {
		memset(&okp, 0, sizeof(okp));
		okp.addr = (void *)((unsigned long)okp_kkd_fn + off);
		okp.pre_handler = okp_count;
		if (okp_register_kprobe(&okp))
			continue;
		okp_unregister_kprobe(&okp);
		len += scnprintf(accepted + len, sizeof(accepted) - len, "%s+%u", len ? "," : "", off);
		if (!is_boundary(off))
			mirror_nonboundary++;
	}
	pr_info("OKP-KKD: mirror: kernel kprobe at +%u %soptimized; okprobes accepted [%s], %u inside an instruction\n",
		start, mirror_optimized ? "" : "not ", accepted, mirror_nonboundary);
	unregister_kprobe(&kp);
	calls("mirror, after", 10, false);
	strscpy(verdict, failed ? "FAIL" : "PASS", sizeof(verdict));
	return 0;
}

static int __init kk_drift_init(void)
{
	unsigned int off, start = okp_kkd_boundaries[KKD_A], end = okp_kkd_boundaries[KKD_G];
	bool keep[KKD_MAX_BYTES] = {};
	int ret, refused_ilseq = 0, refused_inval = 0, refused_other = 0, len = 0;

	if (branch)
		return branch_check();
	if (mirror)
		return mirror_check();
	if (thunk)
		return thunk_check();
	if ((site != KKD_A && site != KKD_C) || end > KKD_MAX_BYTES)
		return -EINVAL;
	if (okprobe_on())
		goto out;
	calls("okprobe alone", 10, true);
	/* 1. Every byte A..G, one kernel kprobe at a time. */
	for (off = start; off < end; off++) {
		struct kprobe kp = { .addr = (void *)((unsigned long)okp_kkd_fn + off),
				     .pre_handler = kernel_count };

		ret = register_kprobe(&kp);
		if (ret == -EILSEQ)
			refused_ilseq++;
		else if (ret == -EINVAL)
			refused_inval++;
		else if (ret)
			refused_other++;
		if (ret)
			continue;
		unregister_kprobe(&kp);
		len += scnprintf(accepted + len, sizeof(accepted) - len, "%s+%u", len ? "," : "", off);
		if (keep_risky)
			keep[off] = true;
		if (!is_boundary(off)) {
			nonboundary++;
			pr_info("OKP-KKD: the kernel accepted a kprobe at okp_kkd_fn+%u, inside an instruction\n", off);
		} else if (off == okp_kkd_boundaries[site]) {
			on_site = true;
			pr_info("OKP-KKD: the kernel accepted a kprobe on okprobes' %s at okp_kkd_fn+%u\n",
				optimized ? "jump" : "int3", off);
		} else {
			keep[off] = true;
		}
	}
	pr_info("OKP-KKD: site=+%u %s: accepted [%s], refused -EILSEQ %d, -EINVAL %d, other %d\n",
		okp_kkd_boundaries[site], optimized ? "jump" : "int3", accepted, refused_ilseq,
		refused_inval, refused_other);
	/* 2. okprobe removed first, then the kernel's. */
	memcpy(kept, keep, sizeof(kept));
	keep_kernel_kprobes();
	calls("both", 10, true);
	okp_unregister_kprobe(&okp);
	calls("kernel kprobes only (okprobe removed first)", 10, false);
	drop_kernel_kprobes();
	calls("none", 10, false);
	/* 3. The kernel's removed first. */
	memcpy(kept, keep, sizeof(kept));
	if (okprobe_on())
		goto out;
	keep_kernel_kprobes();
	calls("both again", 10, true);
	drop_kernel_kprobes();
	calls("okprobe only (kernel kprobes removed first)", 10, true);
	okp_unregister_kprobe(&okp);
	calls("none again", 10, false);
out:
	strscpy(verdict, failed ? "FAIL" : "PASS", sizeof(verdict));
	pr_info("OKP-KKD: site=+%u %s nonboundary=%u on_site=%d %s\n", okp_kkd_boundaries[site],
		optimized ? "jump" : "int3", nonboundary, on_site, verdict);
	return 0;
}

static void __exit kk_drift_exit(void)
{
}

module_init(kk_drift_init);
module_exit(kk_drift_exit);
MODULE_LICENSE("GPL");
