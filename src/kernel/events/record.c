// SPDX-License-Identifier: GPL-2.0
/*
 * The events' probe handlers: one binary record per hit, as the kernel's kprobe events store
 * theirs: the task's comm and pid, the CPU, the latency flags, the probed address (a return
 * event's return address and function), the probe's format (event_format.c) and the
 * arguments' values (fetch.c). They are printed in the kernel's trace output format when
 * `trace` or `trace_pipe` is read (record_text.c), so a hit pays no formatting nor symbol
 * lookup; the tracefs instance's copy, when it is on, is the same binary record in the
 * kernel's ring, printed when the instance is read (tracefs_instance.c, instance_event.c).
 *
 * Runs in probe handlers: never sleeps, never allocates, is never traced (Kbuild) nor probed
 * (NOKPROBE_SYMBOL; okprobes' own probes refuse all of okprobes.ko).
 *
 * Locking: the trace buffer's per-CPU lock, held from okp_trace_buffer_begin() to commit.
 * The probe (and so its format) lives while its handler runs (events.h).
 */
#include <linux/hardirq.h>
#if __has_include(<linux/hex.h>)
#include <linux/hex.h> /* hex_asc: linux/kernel.h no longer brings it in (7.x) */
#endif
#include <linux/kprobes.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>

#include "events.h"

/* The kernel's five latency columns: irqs-off, need-resched, hardirq/softirq, preempt depth,
 * migrate-disable (which okprobes does not see: '.'). */
static void okp_record_flags(char *flags)
{
	unsigned int depth = preempt_count() & 0xf;

	flags[0] = irqs_disabled() ? 'd' : '.';
	flags[1] = tif_need_resched() ? 'n' : '.';
	flags[2] = in_nmi() ? (in_hardirq() ? 'Z' : 'z') :
		   in_hardirq() ? (in_serving_softirq() ? 'H' : 'h') :
		   in_serving_softirq() ? 's' : '.';
	flags[3] = depth ? hex_asc[depth] : '.';
	flags[4] = '.';
}
NOKPROBE_SYMBOL(okp_record_flags);

static void okp_event_write_record(struct okp_event_probe *probe, struct pt_regs *regs,
				   unsigned long ip, unsigned long func)
{
	struct okp_event_record *rec;
	unsigned long irq_flags;
	u64 ts;
	int len;

	rec = okp_trace_buffer_begin(&irq_flags, &ts);
	if (!rec)
		return;
	okp_record_flags(rec->latency);
	rec->format = probe->format;
	rec->ip = ip;
	rec->func = func;
	rec->pid = task_pid_nr(current);
	rec->cpu = raw_smp_processor_id();
	memcpy(rec->comm, current->comm, sizeof(rec->comm));
	len = sizeof(*rec) + okp_fetch_args_store(probe->args, probe->nargs, regs, rec->data,
						  OKP_TRACE_RECORD_MAX - sizeof(*rec),
						  &rec->nstored);
	/* Written under this CPU's ring lock: a hit locked out of it (an NMI on top of this
	 * CPU's writer) is in neither buffer; one okprobes' full ring drops is still in the
	 * instance, which overwrites its oldest instead; a copy only while it is on there */
	okp_tracefs_instance_write(rec, len, ts);
	okp_trace_buffer_commit(len, irq_flags);
}
NOKPROBE_SYMBOL(okp_event_write_record);

int okp_event_kprobe_hit(struct okp_kprobe *kp, struct pt_regs *regs)
{
	struct okp_event_probe *probe = container_of(kp, struct okp_event_probe, kp);

	okp_event_write_record(probe, regs, probe->record_addr, 0);
	return 0;
}
NOKPROBE_SYMBOL(okp_event_kprobe_hit);

int okp_event_kretprobe_hit(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct okp_kretprobe *rp = okp_get_kretprobe(ri);
	struct okp_event_probe *probe = container_of(rp, struct okp_event_probe, rp);

	okp_event_write_record(probe, regs, okp_get_kretprobe_retaddr(ri), (unsigned long)rp->kp.addr);
	return 0;
}
NOKPROBE_SYMBOL(okp_event_kretprobe_hit);
