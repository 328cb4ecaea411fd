// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep's coverage mode (coverage=1): how many instruction boundaries end up jump-optimized
 * with okprobes, and with the kernel's own kprobes (CONFIG_OPTPROBES), at the same addresses.
 *
 * The functions are the sweep's (every stride-th vmlinux function; instruction boundaries by
 * the kernel's own decoder, sweep.c). A batch takes boundaries round-robin over the functions,
 * at least `gap` bytes apart within a function (a probe inside another's 5-byte region keeps it
 * from being optimized, in both frameworks), at most batch_max of them. Per batch the guest
 * script (tests/vm/scripts/coverage.sh) writes, in this order:
 *   run        okprobes: okp_register_kprobe at each boundary (pre_handler only), then
 *              okp_wait_for_optimizer(); each probe is OKP_KPROBE_FLAG_OPTIMIZED or has a
 *              "not optimized: ..." reason. Checked on the way: an optimized probe's first byte
 *              is a jmp (e9), a breakpoint probe's an int3 (cc), and no branch of the function
 *              (by the kernel's decoder) lands inside an optimized region, which lies inside
 *              the function and holds no int3/ud2/ud1
 *   release    (after the script ran a workload through them) okp_unregister_kprobes; the
 *              text must be as it was
 *   kregister  the kernel's register_kprobe (pre_handler only) at the addresses okprobes
 *              accepted; the script sets debug.kprobes-optimization=0 before and 1 after, so the
 *              kernel's optimizer takes them all in one pass instead of one pass (a tasks-RCU
 *              grace period, kprobe_mutex held) every few registrations
 *   kwait      until the kernel's optimizer has done every probe it queued: optimized means
 *              KPROBE_FLAG_OPTIMIZED on the probe's aggregate kprobe (the flag is set when it is
 *              queued; a user's struct kprobe never gets it) and a jmp (e9) at the address
 *   krelease   unregister_kprobes, then waits until the kernel's optimizer restored the text
 * Only boundaries both frameworks accepted, at the address asked for (not moved past an
 * ENDBR64), are compared. Why the kernel did not optimize one is inferred here from its rules
 * in arch/x86/kernel/kprobes/opt.c (can_optimize, copy_optimized_instructions, can_boost),
 * except the exception table and reserved text ("other"); a kernel-optimized probe that these
 * rules would refuse is counted (kernel_infer_mismatch): the inference is then wrong somewhere.
 *
 * Files: this one (the batches, okprobes' side), sweep_coverage_kernel.c (the kernel's side),
 * sweep_coverage_rules.c (the kernel's rules, for its reasons), sweep_coverage_tally.c (the
 * reason tables and the report); what they share: sweep_coverage.h.
 *
 * `report` prints the OKP-COVERAGE lines: the summary, tables (okprobes' reasons, the
 * kernel's inferred ones, each also for the probes only the other framework optimized), the
 * "only kernel" examples with their bytes and okprobes' reason, then notes and failures.
 */
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/kallsyms.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <asm/insn.h>
#include <linux/kprobes.h>
#include <okprobes/okprobes.h>
#include "sweep.h"
#include "sweep_coverage.h"

uint cov_gap = 32;
module_param_named(gap, cov_gap, uint, 0444);
MODULE_PARM_DESC(gap, "coverage: least distance between two probes of one function in a batch");
uint cov_batch_max = 500;	/* okprobes: a step slot and a detour's cells each */
module_param_named(batch_max, cov_batch_max, uint, 0444);
MODULE_PARM_DESC(batch_max, "coverage: most boundaries per batch");

struct cov_func *cov_funcs;
struct cov_probe *cov_probes;
static struct okp_kprobe *okps;
static struct okp_kprobe **okp_armed;
struct kprobe *cov_kprobes;
struct kprobe **cov_k_armed;
unsigned int cov_nprobes, cov_nk;
static unsigned int nokp, batch_no, rr;
enum cov_step cov_phase;
struct cov_stats cov_st;

unsigned long cov_failures(void)
{
	return cov_st.okp_byte_bad + cov_st.okp_region_bad + cov_st.okp_pending +
	       cov_st.okp_no_reason + cov_st.okp_slots_full + cov_st.text_mismatch +
	       cov_st.k_text_timeout + cov_st.k_pending + cov_st.splat;
}

/* --- batches ------------------------------------------------------------------------------ */

static int prepare_func(unsigned int i)
{
	struct sweep_func *f = sweep_func(i);
	int ret = sweep_prepare(f);

	if (ret)
		return ret;
	f->todo = bitmap_zalloc(max(f->size, 1u), GFP_KERNEL);
	if (!f->todo)
		return -ENOMEM;
	if (f->decoded) {
		bitmap_copy(f->todo, f->boundary, f->decoded);
		f->left = bitmap_weight(f->todo, f->decoded);
		ret = cov_scan_function(f, &cov_funcs[i]);
	}
	return ret;
}

void cov_free_finished(void)
{
	unsigned int i, n = sweep_nfuncs();

	for (i = 0; i < n; i++) {
		struct sweep_func *f = sweep_func(i);

		if (f->prepared && !f->left && f->orig) {
			sweep_free_func(f);
			kvfree(cov_funcs[i].br);
			cov_funcs[i].br = NULL;
			cov_st.funcs_done++;
		}
	}
}

/* Boundaries at least gap apart within each function, round-robin over the functions. */
static int select_batch(void)
{
	unsigned int n = sweep_nfuncs(), visited;

	cov_nprobes = 0;
	batch_no++;
	for (visited = 0; visited < n && cov_nprobes < cov_batch_max; visited++) {
		unsigned int i = (rr + visited) % n, off, last = 0;
		struct sweep_func *f = sweep_func(i);
		bool have = false;

		if (!f->prepared) {
			int ret = prepare_func(i);

			if (ret)
				return ret;
		}
		if (!f->left)
			continue;
		for (off = find_first_bit(f->todo, f->decoded); off < f->decoded;
		     off = find_next_bit(f->todo, f->decoded, off + 1)) {
			if (have && off < last + cov_gap)
				continue;
			memset(&cov_probes[cov_nprobes], 0, sizeof(cov_probes[cov_nprobes]));
			cov_probes[cov_nprobes].func = i;
			cov_probes[cov_nprobes].off = off;
			__clear_bit(off, f->todo);
			f->left--;
			f->mark = batch_no;
			last = off;
			have = true;
			if (++cov_nprobes == cov_batch_max)
				break;
		}
		if (cov_nprobes == cov_batch_max && f->left)
			break;	/* this function again first in the next batch */
	}
	rr = (rr + visited) % n;
	return 0;
}

bool cov_splat(const char *when, const struct sweep_func *f, unsigned int off)
{
	unsigned int now = sweep_new_splat();

	if (!now)
		return false;
	cov_st.splat++;
	sweep_note(f, "FAILURE a splat (taint/lockdep mask %#x) %s %s+%#x: see the kernel log",
		   now, when, f->name, off);
	return true;
}

/* Each function of the batch must read as it did before the sweep. */
unsigned int cov_text_differs(bool report)
{
	unsigned int i, n = sweep_nfuncs(), bad = 0, biggest = 0;
	u8 *now;

	for (i = 0; i < n; i++)
		if (sweep_func(i)->mark == batch_no)
			biggest = max(biggest, sweep_func(i)->size);
	now = kvmalloc(biggest + 1, GFP_KERNEL);
	if (!now)
		return 1;
	for (i = 0; i < n; i++) {
		struct sweep_func *f = sweep_func(i);
		unsigned int off;

		if (f->mark != batch_no || !f->decoded)
			continue;
		if (copy_from_kernel_nofault(now, (void *)f->addr, f->size) ||
		    !memcmp(now, f->orig, f->size))
			continue;
		bad++;
		if (!report)
			continue;
		for (off = 0; off < f->size && now[off] == f->orig[off]; off++)
			;
		sweep_note(f, "FAILURE text not restored: %s+%#x is %*ph, was %*ph", f->name, off,
			   (int)min(f->size - off, 8u), now + off, (int)min(f->size - off, 8u),
			   f->orig + off);
	}
	kvfree(now);
	return bad;
}

/*
 * An optimized okprobes probe, checked with the kernel's decoder: the instructions covering
 * the jump's 5 bytes lie in the function, hold no int3/ud2/ud1, and no relative branch or call
 * of the function lands inside them (after their first byte).
 */
static void check_region(const struct sweep_func *f, const struct cov_func *c, unsigned int off)
{
	unsigned int r = off, i;
	unsigned long a = f->addr + off, end;
	struct insn insn;

	while (r < off + 5) {
		if (r >= f->decoded || !cov_decode(f, r, &insn)) {
			cov_st.okp_region_bad++;
			sweep_note(f, "FAILURE optimized, but the region of %s+%#x runs past the decoded function (%u bytes)",
				   f->name, off, f->decoded);
			return;
		}
		if (insn.opcode.bytes[0] == 0xcc || (insn.opcode.bytes[0] == 0x0f &&
		    (insn.opcode.bytes[1] == 0x0b || insn.opcode.bytes[1] == 0xb9))) {
			cov_st.okp_region_bad++;
			sweep_note(f, "FAILURE optimized, but the region of %s+%#x holds %*ph at +%#x",
				   f->name, off, insn.length, f->orig + r, r);
			return;
		}
		r += insn.length;
	}
	if (r > f->size) {
		cov_st.okp_region_bad++;
		sweep_note(f, "FAILURE optimized, but the region %s+%#x..+%#x crosses the end (+%#x)",
			   f->name, off, r, f->size);
		return;
	}
	end = f->addr + r;
	for (i = 0; i < c->nbr; i++) {
		if (c->br[i].target > a && c->br[i].target < end) {
			cov_st.okp_region_bad++;
			sweep_note(f, "FAILURE optimized, but %s+%#x (%*ph) branches to +%#lx, inside the region +%#x..+%#x",
				   f->name, c->br[i].off, 5, f->orig + c->br[i].off,
				   c->br[i].target - f->addr, off, r - 1);
			return;
		}
	}
}

u8 cov_byte_at(unsigned long a)
{
	u8 b = 0;

	if (copy_from_kernel_nofault(&b, (void *)a, 1))
		return 0;
	return b;
}

int coverage_run(void)
{
	unsigned int i, tries;
	u64 t0;
	int ret;

	if (cov_phase != P_IDLE)
		return -EBUSY;
	if (cov_st.splat)
		return -EIO;
	if (!cov_funcs) {
		cov_funcs = kvcalloc(max(sweep_nfuncs(), 1u), sizeof(*cov_funcs), GFP_KERNEL);
		if (!cov_funcs)
			return -ENOMEM;
	}
	ret = select_batch();
	if (ret)
		return ret;
	cov_phase = P_OKP_ARMED;
	if (!cov_nprobes)
		return 0;
	cov_st.batches++;
	t0 = ktime_get_ns();
	for (i = 0; i < cov_nprobes; i++) {
		struct cov_probe *p = &cov_probes[i];
		struct sweep_func *f = sweep_func(p->func);
		struct okp_kprobe *kp = &okps[i];

		memset(kp, 0, sizeof(*kp));
		kp->addr = (okp_kprobe_opcode_t *)(f->addr + p->off);
		kp->pre_handler = sweep_count_pre;
		p->okp_ret = okp_register_kprobe(kp);
		if (p->okp_ret)
			strscpy(p->reason, okp_kprobe_reason(kp), sizeof(p->reason));
		else
			okp_armed[nokp++] = kp;
		if (cov_splat("while registering with okprobes", f, p->off))
			return -EIO;
		cond_resched();
	}
	cov_st.okp_reg_ns += ktime_get_ns() - t0;
	t0 = ktime_get_ns();
	/* Every probe registered before it is done when it returns; more rounds are a safety net. */
	for (tries = 0; tries < 5; tries++) {
		unsigned int pending = 0;

		okp_wait_for_optimizer();
		for (i = 0; i < cov_nprobes; i++) {
			struct okp_kprobe *kp = &okps[i];

			if (!cov_probes[i].okp_ret && !(READ_ONCE(kp->flags) &
			     (OKP_KPROBE_FLAG_OPTIMIZED | OKP_KPROBE_FLAG_FTRACE)) &&
			    !okp_kprobe_reason(kp)[0])
				pending++;
		}
		if (!pending)
			break;
		msleep(100);
	}
	cov_st.okp_wait_ns += ktime_get_ns() - t0;
	for (i = 0; i < cov_nprobes; i++) {
		struct cov_probe *p = &cov_probes[i];
		struct sweep_func *f = sweep_func(p->func);
		struct okp_kprobe *kp = &okps[i];
		unsigned int flags = READ_ONCE(kp->flags), koff;
		u8 b;

		if (p->okp_ret)
			continue;
		p->okp_moved = (unsigned long)kp->addr != f->addr + p->off;
		p->okp_opt = flags & OKP_KPROBE_FLAG_OPTIMIZED;
		p->okp_ftrace = flags & OKP_KPROBE_FLAG_FTRACE;
		strscpy(p->reason, okp_kprobe_reason(kp), sizeof(p->reason));
		koff = (unsigned long)kp->addr - f->addr;
		b = cov_byte_at((unsigned long)kp->addr);
		if (p->okp_opt) {
			if (b != 0xe9) {
				cov_st.okp_byte_bad++;
				sweep_note(f, "FAILURE %s+%#x is OPTIMIZED but its first byte is %02x, not a jmp",
					   f->name, koff, b);
			}
			if (koff < f->size)
				check_region(f, &cov_funcs[p->func], koff);
		} else if (!p->okp_ftrace) {
			if (b != 0xcc) {
				cov_st.okp_byte_bad++;
				sweep_note(f, "FAILURE %s+%#x is a breakpoint probe but its first byte is %02x",
					   f->name, koff, b);
			}
			if (!p->reason[0]) {
				cov_st.okp_pending++;
				sweep_note(f, "FAILURE %s+%#x: neither optimized nor a reason after okp_wait_for_optimizer()",
					   f->name, koff);
			} else if (strstr(p->reason, "slot cells are in use")) {
				cov_st.okp_slots_full++;	/* the batch is too large: lower batch_max */
				if (cov_st.okp_slots_full == 1)
					sweep_note(f, "FAILURE %s+%#x: %s (lower batch_max)", f->name,
						   koff, p->reason);
			}
		}
	}
	return 0;
}

int coverage_release(void)
{
	u64 t0 = ktime_get_ns();

	if (cov_phase != P_OKP_ARMED)
		return -EBUSY;
	if (nokp)
		okp_unregister_kprobes(okp_armed, nokp);
	nokp = 0;
	cov_st.okp_unreg_ns += ktime_get_ns() - t0;
	cov_st.text_mismatch += cov_text_differs(true);
	cov_phase = P_OKP_RELEASED;
	return 0;
}

void coverage_state(struct seq_file *m)
{
	seq_printf(m, "funcs=%u done=%lu batch=%u phase=%d probes=%u okp_armed=%u k_armed=%u "
		   "kernel_flagged=%lu hits=%ld kernel_hits=%ld failures=%lu\n", sweep_nfuncs(),
		   cov_st.funcs_done, batch_no, cov_phase, cov_nprobes, nokp, cov_nk,
		   cov_st.k_flagged_batch, sweep_hits(),
		   atomic_long_read(&cov_k_hits), cov_failures());
}

int coverage_init(void)
{
	if (!cov_batch_max || cov_batch_max > 4096)
		return -EINVAL;
	cov_probes = kvcalloc(cov_batch_max, sizeof(*cov_probes), GFP_KERNEL);
	okps = kvcalloc(cov_batch_max, sizeof(*okps), GFP_KERNEL);
	okp_armed = kvcalloc(cov_batch_max, sizeof(*okp_armed), GFP_KERNEL);
	cov_kprobes = kvcalloc(cov_batch_max, sizeof(*cov_kprobes), GFP_KERNEL);
	cov_k_armed = kvcalloc(cov_batch_max, sizeof(*cov_k_armed), GFP_KERNEL);
	if (!cov_probes || !okps || !okp_armed || !cov_kprobes || !cov_k_armed) {
		coverage_exit();
		return -ENOMEM;
	}
	return 0;
}

void coverage_exit(void)
{
	unsigned int i;

	if (nokp)
		okp_unregister_kprobes(okp_armed, nokp);
	if (cov_nk)
		unregister_kprobes(cov_k_armed, cov_nk);
	nokp = cov_nk = 0;
	if (cov_funcs)
		for (i = 0; i < sweep_nfuncs(); i++)
			kvfree(cov_funcs[i].br);
	kvfree(cov_funcs);
	cov_tally_exit();
	kvfree(cov_probes);
	kvfree(okps);
	kvfree(okp_armed);
	kvfree(cov_kprobes);
	kvfree(cov_k_armed);
	cov_funcs = NULL;
	cov_probes = NULL;
}
