// SPDX-License-Identifier: GPL-2.0
/*
 * The events' probe handlers: one trace record per hit, formatted at the hit in the kernel's
 * trace output format,
 *   "<comm>-<pid> [<cpu>] <flags> <sec>.<usec>: <event>: (<sym+off/size>) <args>"
 * and for a return event "(<caller+off/size> <- <func>)". The kernel stores binary fields and
 * formats them when `trace` is read; formatting here keeps a record readable after its event
 * is removed and the reader simple.
 *
 * Runs in probe handlers: never sleeps, never allocates, is never traced (Kbuild) nor probed
 * (NOKPROBE_SYMBOL; okprobes' own probes refuse all of okprobes.ko).
 *
 * Locking: the trace buffer's per-CPU lock, held from okp_trace_buffer_begin() to commit.
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
	flags[5] = '\0';
}
NOKPROBE_SYMBOL(okp_record_flags);

static void okp_event_write_record(struct okp_event_probe *probe, struct pt_regs *regs,
				   unsigned long ip, unsigned long func)
{
	const struct okp_event *ev = probe->event;
	unsigned long irq_flags;
	char flags[6];
	char *buf;
	u64 ts;
	int len, body;

	buf = okp_trace_buffer_begin(&irq_flags, &ts);
	if (!buf)
		return;
	okp_record_flags(flags);
	body = scnprintf(buf, OKP_TRACE_RECORD_MAX, "%16s-%-7d [%03d] %s %5llu.%06llu: ",
			 current->comm, task_pid_nr(current), raw_smp_processor_id(), flags,
			 ts / NSEC_PER_SEC, (ts % NSEC_PER_SEC) / NSEC_PER_USEC);
	len = body + scnprintf(buf + body, OKP_TRACE_RECORD_MAX - body, "%s: ", ev->name);
	if (func) {
		int name;

		len += scnprintf(buf + len, OKP_TRACE_RECORD_MAX - len, "(%pS <- ", (void *)ip);
		/* the function's bare name, as the kernel's kallsyms_lookup(): no " [module]" */
		name = len;
		len += scnprintf(buf + len, OKP_TRACE_RECORD_MAX - len, "%ps", (void *)func);
		while (name < len && buf[name] != ' ')
			name++;
		len = name;
		len += scnprintf(buf + len, OKP_TRACE_RECORD_MAX - len, ")");
	} else
		len += scnprintf(buf + len, OKP_TRACE_RECORD_MAX - len, "(%pS)", (void *)ip);
	len += okp_fetch_args_print(probe->args, probe->nargs, regs, buf + len,
				    OKP_TRACE_RECORD_MAX - 1 - len);
	buf[len++] = '\n';
	/* the tracefs instance adds its own task, CPU, flags and time columns, then the probed
	 * address's symbol. Written under this CPU's ring lock: a hit locked out of it (an NMI on
	 * top of this CPU's writer) is in neither buffer; one okprobes' full ring drops is still
	 * in the instance, which overwrites its oldest instead */
	okp_tracefs_instance_write(func ?: ip, buf + body, len - body);
	okp_trace_buffer_commit(buf, len, irq_flags);
}
NOKPROBE_SYMBOL(okp_event_write_record);

int okp_event_kprobe_hit(struct okp_kprobe *kp, struct pt_regs *regs)
{
	struct okp_event_probe *probe = container_of(kp, struct okp_event_probe, kp);

	okp_event_write_record(probe, regs, (unsigned long)kp->addr, 0);
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
