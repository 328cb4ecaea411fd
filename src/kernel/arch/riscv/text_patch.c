// SPDX-License-Identifier: GPL-2.0
/*
 * How okprobes writes kernel text on riscv64: through the kernel's own patch_text_nosync()
 * (found in /proc/kallsyms by symbols.c) under text_mutex, as its jump labels and ftrace do.
 * It writes through a fixmap alias (module text included) and then flushes the I-cache of
 * every hart (flush_icache_range: fence.i here, SBI or IPI remote fence.i elsewhere), so no
 * hart runs the old bytes once it returns. Process context, registry lock held.
 *
 * No stop_machine (the kernel's kprobes stop every hart to write a breakpoint): no hart may
 * ever fetch a half-written instruction, and every write here is arranged so none can.
 *  - A 2-byte breakpoint (c.ebreak) or its original, or a 4-byte one at a 4-byte aligned
 *    address, is one naturally aligned store. (The source is copied to an aligned buffer first,
 *    so copy_to_kernel_nofault() writes it in one store, not byte by byte.)
 *  - A 4-byte write at an address that is only 2-byte aligned would be two stores, so it is
 *    done in three, each made visible to every hart before the next: the low parcel becomes a
 *    c.ebreak, then the high parcel takes its new value (no hart runs it: the instruction
 *    there is the 2-byte c.ebreak), then the low parcel does. Every state in between traps at
 *    the same address, which okprobes handles as a hit of the site (armed before the first
 *    write, removed only after the last), and the breakpoint keeps the instruction's length
 *    for every tool that walks the text.
 *  - Slots and detours are written while nothing runs them (a detour in chunks of
 *    OKP_PATCH_MAX bytes).
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kernel/okp_glue.h"
#include "text_patch.h"

/* Longest text one write changes (a slot cell) or an expect check compares. */
#define OKP_PATCH_MAX 32
static_assert(OKP_PATCH_MAX <= OKP_TEXT_EXPECT_MAX, "every write can be checked first");

/* No text the kernel rewrites itself beyond what text_owner.c checks for every arch. */
const char *okp_arch_text_owner(okp_addr_t addr, unsigned long len)
{
	return NULL;
}

static bool okp_in_slot_area(okp_addr_t addr, unsigned long len)
{
	return addr >= (okp_addr_t)okp_slot_area_start && addr + len <= (okp_addr_t)okp_slot_area_end;
}

/* One write of at most OKP_PATCH_MAX bytes, from an aligned copy. text_mutex held. */
static int okp_patch_once(okp_addr_t addr, const void *bytes, unsigned long len)
{
	int (*patch)(void *addr, const void *insns, size_t len) =
		(void *)okp_riscv_patch_text_nosync;
	u64 aligned[OKP_PATCH_MAX / sizeof(u64)];

	memcpy(aligned, bytes, len);
	return patch((void *)addr, aligned, len);
}

/* The three-step write of a 4-byte instruction at addr = 2 mod 4 (see the top). */
static int okp_patch_unaligned_insn(okp_addr_t addr, const u8 *bytes)
{
	static const u8 c_ebreak[2] = { 0x02, 0x90 };
	int ret;

	ret = okp_patch_once(addr, c_ebreak, 2);
	if (!ret)
		ret = okp_patch_once(addr + 2, bytes + 2, 2);
	if (!ret)
		ret = okp_patch_once(addr, bytes, 2);
	return ret;
}

int okp_seam_patch_text(okp_addr_t addr, const void *bytes, const void *expect,
			unsigned long len)
{
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;
	int ret = 0;

	if (!okp_riscv_patch_text_nosync || !text_mutex)
		return -EOPNOTSUPP;
	if (len > OKP_PATCH_MAX && !expect && okp_in_slot_area(addr, len)) {
		/* A detour (jump probes): okprobes' own cells, run by nobody while written. */
		unsigned long done, n;

		mutex_lock(text_mutex);
		for (done = 0; done < len && !ret; done += n) {
			n = min_t(unsigned long, len - done, OKP_PATCH_MAX);
			ret = okp_patch_once(addr + done, (const u8 *)bytes + done, n);
		}
		mutex_unlock(text_mutex);
		return ret;
	}
	if (len > OKP_PATCH_MAX || !len || (addr & 1))
		return -EINVAL;
	if (len == 4 && (addr & 3) && (((const u8 *)bytes)[0] & 3) != 3) {
		/* Only a 4-byte instruction may be written in steps. */
		pr_err("refusing a 4-byte write of a compressed instruction at %pS\n", (void *)addr);
		return -EINVAL;
	}
	mutex_lock(text_mutex);
	ret = okp_text_is(addr, expect, len);
	if (ret)
		goto out;
	if (len == 4 && (addr & 3))
		ret = okp_patch_unaligned_insn(addr, bytes);
	else if (len <= 4 && (addr & (len - 1)))
		ret = -EINVAL;	/* 2 bytes at an odd address: never asked */
	else
		ret = okp_patch_once(addr, bytes, len);
out:
	mutex_unlock(text_mutex);
	return ret;
}

#ifdef OKP_JUMP_PROBES
/*
 * The jump optimizer's switches (arch/riscv/jump_probe_arch.cpp): a site's 8 bytes (or a jal's
 * 4) between its breakpoint (or, without a breakpoint trap, its original instructions) and the
 * jump to its detour. The pair is two instructions: a hart between its auipc and its jalr when
 * the site goes back would run the original's second half without its first, and the original
 * is arbitrary; a task stopped between two original instructions when the jump goes in would
 * resume in the middle of the pair. So every switch is made with every other hart stopped, at
 * an instant when no task is stopped inside a region: on a kernel that preempts no kernel code
 * that holds by itself (a task sleeps only in a call, a region's call is its last
 * instruction); on one that does, the stop first reads every task's stack (task_look.c) and
 * writes nothing when a task is inside or a stack cannot be read to its end, then lets the
 * tasks run and stops again. The one exception is from a breakpoint that traps to the jump
 * (okp_riscv_patch_behind_breakpoints).
 *
 * Lock order: text_mutex, then the CPU-hotplug lock stop_machine() takes (as riscv's ftrace:
 * ftrace_arch_code_modify_prepare() takes text_mutex before its stop_machine).
 */
#include <linux/delay.h>
#include <linux/preempt.h>
#include <linux/stop_machine.h>
#include <linux/workqueue.h>
#include <asm/cacheflush.h>

#include "okp_riscv.h"

struct okp_stopped_switch {
	struct okp_riscv_patch *patches;
	unsigned int n;
	atomic_t cpus_in;
	bool look;	/* the kernel preempts: read every task's stack before writing */
	bool busy;	/* out: the look proved nothing, nothing was written */
	char *why;	/* out, why_len bytes: why not (busy) */
	unsigned long why_len;
};

static int okp_switch_stopped_cb(void *arg)
{
	struct okp_stopped_switch *p = arg;
	unsigned int i;

	if (atomic_inc_return(&p->cpus_in) == num_online_cpus()) {
		/* The last hart in: all others spin below, nothing else runs. */
		if (p->look && !okp_riscv_task_look(p->patches, p->n, p->why, p->why_len))
			p->busy = true;
		for (i = 0; i < p->n && !p->busy; i++) {
			struct okp_riscv_patch *s = &p->patches[i];

			s->failed = okp_text_is(s->addr, s->expect, s->len) ||
				    okp_patch_once(s->addr, s->bytes, s->len);
		}
		atomic_inc(&p->cpus_in); /* releases the others */
	} else {
		while (atomic_read(&p->cpus_in) <= num_online_cpus())
			cpu_relax();
		local_flush_icache_all(); /* fetch the new bytes, not stale ones */
	}
	return 0;
}

/* How often a switch to the jump is tried before the registration is refused (each a stop). */
#define OKP_SWITCH_TRIES 16
/* The longest wait between two stops, in ms: the tasks get the harts back meanwhile. */
#define OKP_SWITCH_BACKOFF_MAX 200

/* Why a preemptible kernel's switch cannot be proven here, or NULL. Registry lock held. */
static const char *okp_preemptible_unproven(void)
{
	return preempt_model_preemptible() ? okp_riscv_task_look_missing() : NULL;
}

/* The optimizer asks before it plans a site (seam/jump_services.h). */
const char *okp_seam_jumps_refused(void)
{
	static char why[256];
	const char *missing = okp_preemptible_unproven();

	if (!missing)
		return NULL;
	if (!why[0])
		snprintf(why, sizeof(why), "not optimized: this kernel preempts kernel code, so a "
			 "task may be stopped inside a region, and okprobes cannot prove none is: %s",
			 missing);
	return why;
}

/* Whether a jump may be written at all (both ways must be): the optimizer asked first. */
static int okp_jump_switch_allowed(char *why, unsigned long why_len)
{
	const char *refused = okp_seam_jumps_refused();

	if (refused) {
		pr_warn_once("jump probes: %s\n", refused);
		if (why)
			strscpy(why, refused, why_len);
		return -EBUSY;
	}
	return okp_riscv_patch_text_nosync ? 0 : -EOPNOTSUPP;
}

/* One stop, text_mutex held: 0 written, -EAGAIN when the task look proved nothing (why). */
static int okp_switch_stopped_locked(struct okp_riscv_patch *patches, unsigned int n, char *why,
				     unsigned long why_len)
{
	struct okp_stopped_switch p = { .patches = patches, .n = n, .why = why,
					.why_len = why_len };
	int *in_stop_machine = (int *)okp_riscv_ksyms.riscv_patch_in_stop_machine;
	int ret = okp_jump_switch_allowed(why, why_len);

	if (ret)
		return ret;
	p.look = preempt_model_preemptible();
	atomic_set(&p.cpus_in, 0);
	if (in_stop_machine)
		WRITE_ONCE(*in_stop_machine, 1);
	stop_machine(okp_switch_stopped_cb, &p, cpu_online_mask);
	if (in_stop_machine)
		WRITE_ONCE(*in_stop_machine, 0);
	return p.busy ? -EAGAIN : 0;
}

/*
 * Before a stop_machine: let the queued frees of modules' init memory finish. A stop waits for
 * every hart to reach its stopper while the ones already there spin, and do_free_init (a
 * kworker, queued when a module's init returns) is a long non-preemptible stretch on riscv:
 * it resets its pages' permissions one page at a time, each a remote TLB flush that waits for
 * every other hart. With the others spinning in the stopper each flush is answered late (an
 * emulator running the harts in turn: one time slice each), so a stop right after a module's
 * load waited for the whole free. Without KGDB the first switch is made at registration,
 * usually in the init of the module loaded just after another (docs/riscv64-detours.md).
 * Waiting here, outside text_mutex and with no hart stopped, lets the free run at its normal
 * pace. A free queued after this returns only makes the stop slow again, never wrong. No
 * deadlock: do_free_init (an RCU grace period, then vfree) takes none of the locks a switch's
 * caller may hold (okprobes' registry lock; a module's init runs with no module lock held),
 * and text_mutex is not held yet. flush_module_init_free_work is the kernel's own way to wait
 * for it (init's mark_readonly, before mark_rodata_ro); a kernel without it keeps the slow
 * stop. ftrace's own stop (riscv patches ftrace sites in stop_machine) waits the same way: the
 * glue calls this before it arms or disarms an ftrace site too (ftrace.c).
 *
 * The kernel's flush waits uninterruptibly for as long as the frees take: on an emulator that
 * runs the harts in turn that can pass the hung-task watchdog's 120 s, which then reports the
 * waiting task (and would report a worker that waited for it). So where the work item itself
 * is found, it is polled: each sleep is a context switch the watchdog counts, and the wait
 * ends as the flush's would, once no free is queued or running.
 */
void okp_arch_before_text_stop(void)
{
	struct work_struct *frees = (struct work_struct *)okp_riscv_ksyms.init_free_wq;

	might_sleep();
	if (frees) {
		/* Backing off to a second: each wake-up is a hart the frees' remote fences wait on
		 * (an emulator runs the harts in turn), and a long wait need not be seen to end at
		 * once. */
		unsigned int ms = 10;

		while (work_busy(frees)) {
			msleep(ms);
			ms = min(2 * ms, 1000U);
		}
	} else if (okp_riscv_ksyms.flush_module_init_free_work) {
		((void (*)(void))okp_riscv_ksyms.flush_module_init_free_work)();
	}
}

/*
 * A stop whose look found a task inside (or a stack it could not read) wrote nothing: the tasks
 * run again, each preempted one soon leaves the region, and the next stop looks again. The way
 * back is tried until it is written (an unregistration must end with the original text, and
 * a preempted task needs no lock to move on); the way in gives up after OKP_SWITCH_TRIES.
 */
int okp_riscv_patch_stopped(struct okp_riscv_patch *patches, unsigned int n, int may_refuse,
			    char *why, unsigned long why_len)
{
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;
	char own_why[160];
	unsigned int tries = 0, ms = 2;
	int ret;

	if (!text_mutex)
		return -EOPNOTSUPP;
	if (!why) {
		why = own_why;
		why_len = sizeof(own_why);
	}
	for (;;) {
		okp_arch_before_text_stop();
		mutex_lock(text_mutex);
		ret = okp_switch_stopped_locked(patches, n, why, why_len);
		mutex_unlock(text_mutex);
		if (ret != -EAGAIN)
			return ret;
		if (++tries >= OKP_SWITCH_TRIES && may_refuse)
			return -EBUSY;
		if (tries % 25 == 0)
			pr_warn("jump probes: %u sites not switched back yet after %u tries: %s\n", n,
				tries, why);
		msleep(ms);
		ms = min(2 * ms, (unsigned int)OKP_SWITCH_BACKOFF_MAX);
	}
}

/*
 * Breakpoints to jumps (KGDB): no stop_machine. A stopped switch waits for every hart to reach
 * its stopper while the ones already there spin, and a hart in a long non-preemptible stretch
 * keeps them spinning: freeing a module's init memory (do_free_init) resets its pages'
 * permissions one page at a time, each a remote TLB flush that waits for every other hart, and
 * the module that registered a probe frees it just when the optimizer's batch runs. Where the
 * spinning harts answer those flushes slowly (an emulator running the harts in turn) the stop
 * lasts long enough to starve RCU's kthread on a stopped hart (docs/riscv64-detours.md).
 * Nothing needs the stop this way, as with x86-64's int3 to jump: the
 * breakpoint traps at the region's start, and the optimizer waited until no context is inside
 * the region (every hit resumes in the detour's copy). So the bytes after the breakpoint are
 * written first, run by no hart, and made visible to every hart (patch_text_nosync's flush);
 * then the breakpoint becomes the jump's first instruction in one store (a 4-byte one at an
 * address = 2 mod 4 in the three steps above, each a trap or the whole instruction). A hart
 * fetching the site then sees the breakpoint or the whole jump.
 */
int okp_riscv_patch_behind_breakpoints(struct okp_riscv_patch *patches, unsigned int n)
{
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;
	unsigned int i;
	int ret;

	if (!text_mutex)
		return -EOPNOTSUPP;
	ret = okp_jump_switch_allowed(NULL, 0);
	if (ret)
		return ret;
	mutex_lock(text_mutex);
	for (i = 0; i < n; i++) {
		struct okp_riscv_patch *s = &patches[i];
		unsigned int head = s->breakpoint_size;

		s->failed = !head || head > s->len || okp_text_is(s->addr, s->expect, s->len) ||
			    (s->len > head &&
			     okp_patch_once(s->addr + head, s->bytes + head, s->len - head));
	}
	for (i = 0; i < n; i++) {
		struct okp_riscv_patch *s = &patches[i];

		if (s->failed)
			continue;
		if (s->breakpoint_size == 4 && (s->addr & 3))
			s->failed = !!okp_patch_unaligned_insn(s->addr, s->bytes);
		else
			s->failed = !!okp_patch_once(s->addr, s->bytes, s->breakpoint_size);
	}
	mutex_unlock(text_mutex);
	return 0;
}

void okp_seam_text_lock(void)
{
	if (okp_ksyms.text_mutex)
		mutex_lock((struct mutex *)okp_ksyms.text_mutex);
}

void okp_seam_text_unlock(void)
{
	if (okp_ksyms.text_mutex)
		mutex_unlock((struct mutex *)okp_ksyms.text_mutex);
}

/*
 * One site's jump over another (a jump-only site's detour changed): stopped, as a switch, and
 * like the way back tried until written: a task between the old pair's auipc and jalr would
 * take the new jalr with the old auipc's value. The caller holds text_mutex (the batch's
 * lock): it is dropped while the tasks run between two tries.
 */
int okp_seam_poke_text(okp_addr_t addr, const void *bytes, const void *expect, unsigned long len)
{
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;
	const u8 *b = bytes, *e = expect;
	/* To a pair from a jal (a pair's first parcels: auipc, then jalr x0): the old jal's
	 * detour may still hold tasks (okp_riscv_patch's check_detours). */
	const bool to_pair = len == 8 && (b[0] & 0x7f) == 0x17 && (b[4] & 0x7f) == 0x67;
	const bool from_pair = e && (e[0] & 0x7f) == 0x17 && (e[4] & 0x7f) == 0x67;
	struct okp_riscv_patch patch = { addr, bytes, expect, (unsigned char)len, 0, 0,
					 to_pair && !from_pair };
	unsigned int tries = 0, ms = 2;
	char why[160];
	int ret;

	if (len > 8 || (addr & 1))
		return -EINVAL;
	while ((ret = okp_switch_stopped_locked(&patch, 1, why, sizeof(why))) == -EAGAIN) {
		if (++tries % 25 == 0)
			pr_warn("jump probes: a jump at %pS not moved yet after %u tries: %s\n",
				(void *)addr, tries, why);
		mutex_unlock(text_mutex);
		msleep(ms);
		ms = min(2 * ms, (unsigned int)OKP_SWITCH_BACKOFF_MAX);
		mutex_lock(text_mutex);
	}
	return ret ? ret : (patch.failed ? -EBUSY : 0);
}

/* Every write above flushed every hart's I-cache (patch_text_nosync, then fence.i). */
void okp_seam_text_sync(void)
{
}
#endif
