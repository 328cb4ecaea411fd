// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep's coverage mode, the kernel's side (sweep_coverage.c has the whole protocol): the
 * batch's addresses that okprobes accepted, registered with the kernel's register_kprobe
 * (kregister), waited for until its optimizer did them (kwait: counted, then tallied), and
 * unregistered until the kernel gave the text back (krelease).
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/kprobes.h>
#include <okprobes/okprobes.h>
#include "sweep.h"
#include "sweep_coverage.h"

static uint kwait_ms = 120000;
module_param(kwait_ms, uint, 0444);
MODULE_PARM_DESC(kwait_ms, "coverage: longest wait for the kernel's optimizer");

atomic_long_t cov_k_hits;

int cov_k_pre(struct kprobe *p, struct pt_regs *regs)
{
	atomic_long_inc(&cov_k_hits);
	return 0;
}

/* The aggregate kprobe the kernel made for p (to optimize it), or NULL. */
static struct kprobe *aggregate(struct kprobe *p)
{
	struct kprobe *ap = container_of(READ_ONCE(p->list.next), struct kprobe, list);

	return ap == p ? NULL : ap;
}

int coverage_kregister(void)
{
	unsigned int i;
	u64 t0 = ktime_get_ns();

	if (cov_phase != P_OKP_RELEASED)
		return -EBUSY;
	cov_phase = P_K_ARMED;
	for (i = 0; i < cov_nprobes; i++) {
		struct cov_probe *p = &cov_probes[i];
		struct sweep_func *f = sweep_func(p->func);
		struct kprobe *kk = &cov_kprobes[i];

		if (p->okp_ret)
			continue;	/* okprobes refused it: the kernel is not asked */
		memset(kk, 0, sizeof(*kk));
		kk->addr = (kprobe_opcode_t *)(f->addr + p->off);
		kk->pre_handler = cov_k_pre;
		p->k_ret = register_kprobe(kk);
		if (!p->k_ret) {
			cov_k_armed[cov_nk++] = kk;
			p->k_moved = (unsigned long)kk->addr != f->addr + p->off;
			p->k_ftrace = kk->flags & KPROBE_FLAG_FTRACE;
		}
		if (cov_splat("while registering with the kernel", f, p->off))
			return -EIO;
		cond_resched();
	}
	cov_st.k_reg_ns += ktime_get_ns() - t0;
	return 0;
}

int coverage_kwait(void)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(kwait_ms);
	unsigned int i, pending;
	u64 t0 = ktime_get_ns();

	if (cov_phase != P_K_ARMED)
		return -EBUSY;
	for (;;) {
		pending = 0;
		for (i = 0; i < cov_nk; i++) {
			struct kprobe *ap = aggregate(cov_k_armed[i]);

			if (ap && (READ_ONCE(ap->flags) & KPROBE_FLAG_OPTIMIZED) &&
			    cov_byte_at((unsigned long)cov_k_armed[i]->addr) != 0xe9)
				pending++;
		}
		if (!pending || time_after(jiffies, deadline))
			break;
		msleep(50);
	}
	cov_st.k_wait_ns += ktime_get_ns() - t0;
	if (pending) {
		cov_st.k_pending += pending;
		sweep_note(NULL, "FAILURE %u kernel kprobes still queued for optimization after %u ms",
			   pending, kwait_ms);
	}
	cov_st.k_flagged_batch = 0;
	for (i = 0; i < cov_nprobes; i++) {
		struct cov_probe *p = &cov_probes[i];
		struct kprobe *ap;

		if (p->okp_ret || p->k_ret)
			continue;
		ap = aggregate(&cov_kprobes[i]);
		p->k_aggr = ap;
		if (ap && (READ_ONCE(ap->flags) & KPROBE_FLAG_OPTIMIZED)) {
			cov_st.k_flagged_batch++;
			p->k_opt = cov_byte_at((unsigned long)cov_kprobes[i].addr) == 0xe9;
		}
		if (ap && !p->k_opt)
			cov_st.k_prepared_not_opt++;
	}
	cov_tally();
	cov_phase = P_K_WAITED;
	return 0;
}

int coverage_krelease(void)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(kwait_ms);
	u64 t0 = ktime_get_ns();

	if (cov_phase != P_K_WAITED)
		return -EBUSY;
	if (cov_nk)
		unregister_kprobes(cov_k_armed, cov_nk);
	cov_nk = 0;
	/* An optimized kprobe's jump is taken out by the kernel's optimizer, later. */
	while (cov_text_differs(false)) {
		if (time_after(jiffies, deadline)) {
			cov_st.k_text_timeout += cov_text_differs(true);
			break;
		}
		msleep(50);
	}
	cov_st.k_unreg_ns += ktime_get_ns() - t0;
	cov_free_finished();
	cov_phase = P_IDLE;
	return cov_st.k_text_timeout ? -EIO : 0;
}
