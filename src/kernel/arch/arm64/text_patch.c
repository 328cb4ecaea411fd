// SPDX-License-Identifier: GPL-2.0
/*
 * How okprobes writes kernel text on arm64: through the kernel's own instruction patching,
 * after checking the word is still what okprobes expects.
 *
 * - A probe site's word (original <-> BRK) goes through aarch64_insn_patch_text(), which
 *   writes it under stop_machine: the architecture allows another CPU to execute a word being
 *   rewritten only when both old and new are among a few instructions (b, bl, brk, nop, ...),
 *   and the original instruction is arbitrary. stop_machine needs the CPU-hotplug lock held
 *   (cpus_read_lock), taken before text_mutex as the kernel's kprobes do: lock order
 *   registry lock -> cpu hotplug lock -> text_mutex.
 * - A kernel built without CONFIG_KALLSYMS_ALL (Debian's arm64 kernel) lists no data in
 *   /proc/kallsyms, so text_mutex is not found. Then the check and the write of a probe site
 *   are made one step inside okprobes' own stop_machine callback (the kernel's protocol:
 *   the last CPU in writes with aarch64_insn_patch_text_nosync(), the others wait and
 *   synchronise their pipelines): every writer that also stops the machine (the kernel's
 *   kprobes arming or disarming, ftrace) is then before or after it, never between the check
 *   and the write. What text_mutex would exclude on top is the kernel's kprobes copying an
 *   instruction at register time; text_owner.c refuses an address already in their table, and
 *   a kernel kprobe registered at that same word in that same instant would overwrite
 *   okprobes' BRK with its own (okprobes' probe then misses hits; the kernel stays correct,
 *   its copy being the original instruction; okprobes' disarm finds the word changed and
 *   leaves it).
 * - A slot (okprobes' own text, run by nobody while it is written: the core writes a slot
 *   before arming the site that leads there) goes word by word through
 *   aarch64_insn_patch_text_nosync(), which cleans the D-cache and invalidates the I-cache to
 *   the point of unification, for module text as for the kernel's (it maps the page through
 *   the fixmap, read-only text stays read-only).
 * Process context, registry lock held.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/cpu.h>
#include <linux/errno.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <linux/stop_machine.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/barrier.h>

#include "kernel/okp_glue.h"
#include "okp_arm64.h"

/*
 * No text the kernel rewrites itself beyond what text_owner.c checks for every arch (jump
 * labels, static calls, ftrace, alternatives are applied once at boot or module load on arm64).
 * But text_owner.c finds the kernel's own kprobes in their table, a data symbol: where kallsyms
 * lists no data (no CONFIG_KALLSYMS_ALL), ask their get_kprobe() instead, under RCU as its
 * readers do.
 * (An armed one is a BRK #0x004 the planner refuses anyway; a disabled one is the original
 * word, which the kernel's kprobes would write their BRK over when enabled.)
 */
const char *okp_arch_text_owner(okp_addr_t addr, unsigned long len)
{
	okp_addr_t a;
	bool found = false;

	if (okp_ksyms.kprobe_table || !okp_arm64_ksyms.get_kprobe)
		return NULL;
	rcu_read_lock();
	for (a = addr & ~3UL; a < addr + len && !found; a += 4)
		found = okp_arm64_ksyms.get_kprobe((void *)a) != NULL;
	rcu_read_unlock();
	return found ? "kernel kprobe" : NULL;
}

/* okprobes' own slots, or the detours it keeps in the kernel's text padding (text_padding.c). */
static bool okp_in_slot_area(okp_addr_t addr, unsigned long len)
{
	return (addr >= (okp_addr_t)okp_slot_area_start &&
		addr + len <= (okp_addr_t)okp_slot_area_end) || okp_in_text_padding(addr, len);
}

/* One probe site's word, checked and written with every other CPU stopped. */
struct okp_stopped_patch {
	void *addr;
	u32 insn;
	u32 expect;
	bool check;
	int ret;
	atomic_t cpus_in;
};

static int okp_patch_stopped_cb(void *arg)
{
	struct okp_stopped_patch *p = arg;

	if (atomic_inc_return(&p->cpus_in) == num_online_cpus()) {
		u32 now;

		/* The last CPU in: all others are spinning below, nothing else runs. */
		if (p->check && (copy_from_kernel_nofault(&now, p->addr, sizeof(now)) ||
				 now != p->expect))
			p->ret = -EBUSY;
		else
			p->ret = okp_arm64_ksyms.aarch64_insn_patch_text_nosync(p->addr, p->insn);
		atomic_inc(&p->cpus_in); /* releases the others */
	} else {
		while (atomic_read(&p->cpus_in) <= num_online_cpus())
			cpu_relax();
		isb(); /* fetch the new word, not a stale one */
	}
	return 0;
}

static int okp_patch_site_stopped(okp_addr_t addr, u32 insn, const void *expect)
{
	struct okp_stopped_patch p = { .addr = (void *)addr, .insn = insn, .check = !!expect };

	if (expect)
		memcpy(&p.expect, expect, 4);
	atomic_set(&p.cpus_in, 0);
	/* (stop_machine_cpuslocked is not exported: stop_machine takes the hotplug lock.) */
	stop_machine(okp_patch_stopped_cb, &p, cpu_online_mask);
	if (p.ret == -EBUSY)
		pr_err("text at %pS changed under us: not patching\n", (void *)addr);
	return p.ret;
}

int okp_seam_patch_text(okp_addr_t addr, const void *bytes, const void *expect,
			unsigned long len)
{
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;
	unsigned long i;
	int ret = 0;

	if (!okp_arm64_ksyms.aarch64_insn_patch_text ||
	    !okp_arm64_ksyms.aarch64_insn_patch_text_nosync)
		return -EOPNOTSUPP;
	if ((addr | len) & 3 || !len)
		return -EINVAL;

	/* okprobes' own slots: nobody else writes there; text_mutex only orders it with them. */
	if (okp_in_slot_area(addr, len)) {
		if (text_mutex)
			mutex_lock(text_mutex);
		for (i = 0; i < len && !ret; i += 4) {
			u32 word;

			memcpy(&word, (const u8 *)bytes + i, 4);
			if (expect)
				ret = okp_text_is(addr + i, (const u8 *)expect + i, 4);
			if (!ret)
				ret = okp_arm64_ksyms.aarch64_insn_patch_text_nosync((void *)(addr + i),
										     le32_to_cpu(word));
		}
		if (text_mutex)
			mutex_unlock(text_mutex);
		return ret;
	}

	/* A probe site: one instruction. */
	if (len != 4)
		return -EINVAL;
	if (!text_mutex) {
		u32 word;

		memcpy(&word, bytes, 4);
		return okp_patch_site_stopped(addr, le32_to_cpu(word), expect);
	}
	{
		void *addrs[1] = { (void *)addr };
		u32 word, insns[1];

		memcpy(&word, bytes, 4);
		insns[0] = le32_to_cpu(word);
		cpus_read_lock();
		mutex_lock(text_mutex);
		ret = okp_text_is(addr, expect, 4);
		if (!ret)
			ret = okp_arm64_ksyms.aarch64_insn_patch_text(addrs, insns, 1);
		mutex_unlock(text_mutex);
		cpus_read_unlock();
	}
	return ret;
}

#ifdef OKP_JUMP_PROBES
/*
 * The jump optimizer's switch (arch/arm64/jump_probe_arch.cpp): one probe site's word between
 * okprobes' BRK and the `b` to its detour. Both are among the instructions the architecture
 * lets one CPU write while others execute the word (B, BL, BRK, NOP, ...), and either is
 * correct while a CPU still runs the other (a BRK hit on a site whose detour is published
 * resumes in the detour's copy), so each is one aligned write, no stop_machine. With
 * text_mutex (found in kallsyms) it orders the write with every other writer; without it,
 * the check and the write are made with every CPU stopped, as a probe site's are above.
 * Registry lock held.
 */
void okp_seam_text_lock(void)
{
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;

	if (text_mutex)
		mutex_lock(text_mutex);
}

void okp_seam_text_unlock(void)
{
	struct mutex *text_mutex = (struct mutex *)okp_ksyms.text_mutex;

	if (text_mutex)
		mutex_unlock(text_mutex);
}

int okp_seam_poke_text(okp_addr_t addr, const void *bytes, const void *expect, unsigned long len)
{
	u32 word;
	int ret;

	if (len != 4 || (addr & 3) || !okp_arm64_ksyms.aarch64_insn_patch_text_nosync)
		return -EINVAL;
	memcpy(&word, bytes, 4);
	if (!okp_ksyms.text_mutex)
		return okp_patch_site_stopped(addr, le32_to_cpu(word), expect);
	ret = okp_text_is(addr, expect, 4);
	if (!ret)
		ret = okp_arm64_ksyms.aarch64_insn_patch_text_nosync((void *)addr, le32_to_cpu(word));
	return ret;
}

/* aarch64_insn_patch_text_nosync() cleaned and invalidated each word to the point of
 * unification: a CPU fetches the new word from then on, and the old one was as good. */
void okp_seam_text_sync(void)
{
}
#endif
