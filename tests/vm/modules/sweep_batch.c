// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep: a batch of the reliability sweep (sweep.c describes the whole). run: for each
 * function, its live text and its instruction boundaries by the kernel's own decoder, then
 * okp_register_kprobe at every byte offset, each outcome judged against the boundaries;
 * the accepted probes stay armed. release: unregistered at once, and every byte of the
 * batch's functions must be what it was. A splat stops the sweep at the probe that caused it.
 */
#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/debug_locks.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/panic.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/insn.h>
#include <okprobes/okprobes.h>
#include "sweep.h"
#include "sweep_state.h"

static uint batch_bytes = 256 * 1024;
module_param(batch_bytes, uint, 0444);
MODULE_PARM_DESC(batch_bytes, "a batch ends after this many bytes of text");

static unsigned int batch_first, batch_end;
static unsigned int sweep_cursor;
struct okp_kprobe *sweep_kps;
struct okp_kprobe **sweep_armed_probes;
unsigned int sweep_narmed;
static atomic_long_t sweep_hit_count;
struct sweep_stats sweep_st;
struct sweep_hot sweep_hot[NHOT];

/*
 * A splat taints the kernel (W: WARN or a BUG: message, D: oops, B: KASAN, L: soft lockup)
 * or turns lockdep off. The refusals' log lines would push it out of the ring buffer within
 * one batch, so the sweep checks after every registration and stops at once: the splat is
 * then among the last lines of the kernel log, and the last probe tried is named.
 */
static const unsigned int splat_taints[] = { TAINT_WARN, TAINT_DIE, TAINT_BAD_PAGE,
					     TAINT_SOFTLOCKUP, TAINT_MACHINE_CHECK };
static unsigned int taint_base;
static int debug_locks_base;

static unsigned int splat_state(void)
{
	unsigned int i, mask = 0;

	for (i = 0; i < ARRAY_SIZE(splat_taints); i++)
		if (test_taint(splat_taints[i]))
			mask |= 1u << i;
	if (debug_locks_base && !READ_ONCE(debug_locks))
		mask |= 1u << i;
	return mask;
}

int sweep_count_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	atomic_long_inc(&sweep_hit_count);
	return 0;
}

unsigned int sweep_new_splat(void)
{
	unsigned int now = splat_state() & ~taint_base;

	taint_base |= now;
	return now;
}

long sweep_hits(void)
{
	return atomic_long_read(&sweep_hit_count);
}

struct okp_kprobe **sweep_armed(unsigned int *n)
{
	*n = sweep_narmed;
	return sweep_armed_probes;
}

bool sweep_started(void)
{
	return sweep_cursor || sweep_narmed;
}

void sweep_splat_init(void)
{
	debug_locks_base = READ_ONCE(debug_locks);
	taint_base = splat_state();
}

/* --- the sweep ---------------------------------------------------------------------------- */

int sweep_prepare(struct sweep_func *f)
{
	unsigned int avail = f->size + SLACK, off = 0;
	struct insn insn;

	f->prepared = true;
	f->crossing = ~0u;
	f->orig = kvzalloc(f->size + SLACK, GFP_KERNEL);
	f->boundary = bitmap_zalloc(f->size, GFP_KERNEL);
	if (!f->orig || !f->boundary)
		return -ENOMEM;
	if (copy_from_kernel_nofault(f->orig, (void *)f->addr, avail)) {
		avail = f->size;
		if (copy_from_kernel_nofault(f->orig, (void *)f->addr, avail)) {
			sweep_st.unreadable++;
			sweep_note(f, "%s (%px, %u bytes) is unreadable: skipped", f->name,
			     (void *)f->addr, f->size);
			f->decoded = 0;
			return 0;
		}
	}
	while (off < f->size) {
		if (insn_decode(&insn, f->orig + off, avail - off, INSN_MODE_64) < 0 ||
		    !insn.length) {
			sweep_st.decode_stops++;
			sweep_note(f, "the kernel's decoder stops in %s at +%#x (%*ph): the sweep of it ends there",
			     f->name, off, (int)min(avail - off, 8u), f->orig + off);
			break;
		}
		__set_bit(off, f->boundary);
		if (off + insn.length > f->size)
			f->crossing = off;
		off += insn.length;
	}
	f->decoded = min(off, f->size);
	return 0;
}

static void try_offset(struct sweep_func *f, unsigned int off)
{
	struct okp_kprobe *kp = &sweep_kps[sweep_narmed];
	unsigned long addr = f->addr + off;
	const char *reason;
	u64 t0;
	int ret;

	memset(kp, 0, sizeof(*kp));
	kp->addr = (okp_kprobe_opcode_t *)addr;
	kp->pre_handler = sweep_count_pre;
	t0 = ktime_get_ns();
	ret = okp_register_kprobe(kp);
	if (ret)
		sweep_st.refuse_ns += ktime_get_ns() - t0;
	else
		sweep_st.accept_ns += ktime_get_ns() - t0;
	reason = okp_kprobe_reason(kp);
	sweep_st.offsets++;
	if (test_bit(off, f->boundary)) {
		sweep_st.boundaries++;
		if (!ret) {
			sweep_st.accepted++;
			sweep_count_errno(K_BOUNDARY_REFUSED, 0);
			if ((unsigned long)kp->addr != addr)
				sweep_st.moved++;
			if (reason[0])
				sweep_count_reason(K_ACCEPTED_NOTE, 0, reason, f, off);
			sweep_armed_probes[sweep_narmed++] = kp;
			sweep_st.max_armed = max_t(unsigned long, sweep_st.max_armed, sweep_narmed);
			return;
		}
		sweep_st.b_refused++;
		sweep_count_reason(K_BOUNDARY_REFUSED, ret, reason[0] ? reason : "(no reason)", f, off);
		if (ret == -EILSEQ && off == f->crossing) {
			/* Its bytes run into the next symbol: okprobes decodes within the symbol. */
			sweep_st.b_crossing_ilseq++;
		} else if (ret == -EILSEQ) {
			sweep_st.b_ilseq++;
			sweep_failure("a boundary refused with -EILSEQ", f, off, ret, reason);
		} else if (!reason[0]) {
			sweep_st.b_no_reason++;
			sweep_failure("a boundary refused without a reason", f, off, ret, reason);
		}
		return;
	}
	sweep_st.nonboundaries++;
	if (!ret) {
		/* An int3 inside an instruction: take it out at once. */
		okp_unregister_kprobe(kp);
		sweep_st.nb_accepted++;
		sweep_count_errno(K_NONBOUNDARY, 0);
		sweep_failure("a non-boundary accepted", f, off, ret, reason);
		return;
	}
	sweep_count_reason(K_NONBOUNDARY, ret, reason[0] ? reason : "(no reason)", f, off);
	if (ret == -EILSEQ && reason[0]) {
		sweep_st.nb_ilseq++;
	} else if ((ret == -EINVAL && strstr(reason, "blacklisted")) ||
		   (ret == -EBUSY && strstr(reason, "static call trampoline"))) {
		/* Whole-function refusals, checked before any decoding: the blacklist, and a
		 * static call's trampoline (__SCT__*, refused by name at every offset; the 6.12
		 * stock kernel's sample has some). */
		sweep_st.nb_blacklisted++;
	} else if (ret == -EBUSY && strstr(reason, "hides the instructions before the probe")) {
		sweep_st.nb_hidden++;
	} else {
		sweep_st.nb_wrong++;
		sweep_failure("a non-boundary not refused with -EILSEQ", f, off, ret, reason);
	}
}

/* Sweeps the next batch; the probes it accepted stay armed until release. */
int sweep_run_batch(void)
{
	unsigned long bytes = 0;
	u64 t0 = ktime_get_ns();
	int ret = 0;

	if (sweep_narmed)
		return -EBUSY;
	if (sweep_st.splat)
		return -EIO;
	batch_first = sweep_cursor;
	batch_end = sweep_cursor;
	while (sweep_cursor < sweep_nfuncs()) {
		struct sweep_func *f = sweep_func(sweep_cursor);

		if (!f->prepared) {
			ret = sweep_prepare(f);
			if (ret)
				break;
		}
		batch_end = sweep_cursor + 1;
		while (f->next < f->decoded && sweep_narmed < sweep_max_armed) {
			unsigned int off = f->next++, now;

			try_offset(f, off);
			now = splat_state() & ~taint_base;
			if (now) {
				sweep_st.splat++;
				taint_base |= now;
				sweep_note(f, "FAILURE a splat (taint/lockdep mask %#x) while %s+%#x was the last probe tried (%u armed): see the kernel log above",
				     now, f->name, off, sweep_narmed);
				ret = -EIO;
				break;
			}
			/* A batch runs minutes under TCG in this one syscall: let RCU-tasks, which
			 * okprobes' optimizer waits for, see a quiescent state (cond_resched() is a
			 * preemption, and a preempted task is an RCU-tasks holdout). */
			cond_resched_tasks_rcu_qs();
		}
		if (ret)
			break;
		if (f->next < f->decoded)
			break;	/* max_armed reached: the rest of f in the next batch */
		sweep_st.funcs_done++;
		sweep_cursor++;
		bytes += f->size;
		if (bytes >= batch_bytes)
			break;
	}
	sweep_st.batches++;
	sweep_st.register_ns += ktime_get_ns() - t0;
	return ret;
}

void sweep_free_func(struct sweep_func *f)
{
	kvfree(f->orig);
	f->orig = NULL;
	bitmap_free(f->boundary);
	f->boundary = NULL;
	bitmap_free(f->todo);
	f->todo = NULL;
}

/* Unregisters the batch's probes; its functions' text must be as it was. */
void sweep_release_batch(void)
{
	unsigned int i;
	u64 t0;
	u8 *now;

	for (i = 0; i < sweep_narmed; i++) {
		unsigned long n = READ_ONCE(sweep_armed_probes[i]->nhit);
		unsigned int j = NHOT;

		while (j > 0 && sweep_hot[j - 1].nhit < n)
			j--;
		if (j == NHOT)
			continue;
		memmove(&sweep_hot[j + 1], &sweep_hot[j], (NHOT - 1 - j) * sizeof(sweep_hot[0]));
		sweep_hot[j].nhit = n;
		sprint_symbol(sweep_hot[j].where, (unsigned long)sweep_armed_probes[i]->addr);
	}
	t0 = ktime_get_ns();
	if (sweep_narmed)
		okp_unregister_kprobes(sweep_armed_probes, sweep_narmed);
	sweep_narmed = 0;
	sweep_st.unregister_ns += ktime_get_ns() - t0;
	now = kvmalloc(sweep_max_size + SLACK, GFP_KERNEL);
	for (i = batch_first; i < batch_end; i++) {
		struct sweep_func *f = sweep_func(i);
		unsigned int off;

		if (!f->orig)
			continue;
		if (now && f->decoded && !copy_from_kernel_nofault(now, (void *)f->addr, f->size) &&
		    memcmp(now, f->orig, f->size)) {
			for (off = 0; off < f->size && now[off] == f->orig[off]; off++)
				;
			sweep_st.text_mismatch++;
			sweep_note(f, "FAILURE text not restored: %s+%#x is %*ph, was %*ph", f->name, off,
			     (int)min(f->size - off, 8u), now + off, (int)min(f->size - off, 8u),
			     f->orig + off);
		}
		if (f->next >= f->decoded)
			sweep_free_func(f);
	}
	kvfree(now);
	batch_first = batch_end = sweep_cursor;
}
