// SPDX-License-Identifier: GPL-2.0
/*
 * A jump over several instructions may only be written once no task can resume inside it:
 * one stopped at an instruction boundary strictly inside the region would come back to the
 * middle of the jump. The kernel's optimizer proves that by waiting for a tasks-RCU grace
 * period, nearly all of what optimizing one probe costs (docs/benchmarks.md has the figures).
 * This file proves it directly instead: in stop_machine(),
 * with every task off its CPU and its state saved, it reads every task's stack with the
 * reliable unwinder (as livepatch does to decide a task may switch) and looks for an address
 * inside a region.
 *
 * Why one look suffices (the invariant the core provides, core/optimizer/jump_optimizer.h): the caller has
 * published each region's copy and waited for an RCU grace period, so every breakpoint hit
 * since resumes in the copy, never inside the region, and no branch, return or exception fixup
 * of the function lands inside it (the region check). After that the set of contexts inside a
 * region can only shrink: a task seen outside once stays outside. Interrupt and NMI contexts
 * nest on a task and end before it can be switched out, so in stop_machine() none is left
 * open below any stopper.
 *
 * What the unwinder reports: every return address, and for a task interrupted in the kernel
 * (preempted by an interrupt, an exception) the interrupted address itself, ORC unwinding
 * through the interrupt frame. A task stopped strictly inside a region therefore shows that
 * address; a task in okprobes' slot area (a boosted slot about to jump back into a region, a
 * detour copy) shows an address there and is not accepted either, nor a stack the unwinder
 * cannot read to its end (frame-pointer kernels stop at any interrupt frame; BPF or ftrace
 * trampolines have no ORC). Any of those, and the caller waits for tasks-RCU as before. So
 * does PREEMPT_RT (stop_machine() there would stall every CPU of a real-time system, and its
 * preemptible kernel leaves more tasks stopped anywhere) and a system with more tasks than
 * the stall bound below.
 *
 * Idle tasks: tasks-RCU does not wait for them at all (they never block voluntarily); here they
 * are read too when the kernel's idle_task() is found in kallsyms.
 *
 * Exiting tasks: between exit_notify() (which unhashes a self-reaping task: an exiting thread)
 * and do_exit()'s preempt_disable(), a task still runs preemptible code (kfree, put_page, ...)
 * but is on no list the look walks. tasks-RCU covers that window with an SRCU read section
 * (6.1: tasks_rcu_exit_srcu) or a per-CPU list (6.12). Where the SRCU is found, the proof
 * waits for it after the look (one SRCU grace period, milliseconds): every task that was in
 * the window has left it for code that cannot be preempted. Where it is not (6.12), the window
 * matters only if the kernel preempts involuntarily: with preempt=none or voluntary (Debian's
 * default) a task stops only at a call, never inside a region; with full preemption the look
 * proves nothing and the batch waits for tasks-RCU. (Left open: a task preempted inside such
 * a window while the mode was still full, the mode switched since; the same edge the kernel's
 * own PREEMPT_DYNAMIC switch leaves its preemption points with.)
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/debugfs.h>
#include <linux/export.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/stop_machine.h>

#include "kernel/okp_glue.h"
#include "okp_x86.h"

/* Frames read per task: a deeper stack counts as unreadable (the caller then waits). */
#define OKP_SNAPSHOT_DEPTH 128
/* Tasks read in one stop_machine(): bounds the stall of every CPU (each task costs an unwind). */
#define OKP_SNAPSHOT_MAX_TASKS 20000
/* No region is longer: a 5-byte jump over instructions of at most 15 bytes. */
#define OKP_SNAPSHOT_MAX_REGION 32

struct okp_snapshot {
	struct okp_text_span *spans;	/* sorted by start */
	unsigned long n;
	okp_addr_t slots, slots_end;
	unsigned long entries[OKP_SNAPSHOT_DEPTH];
	/* Results, written by the one CPU that reads the stacks. */
	bool proven;
	unsigned int tasks;
	char why[160];
};

/* 0: always wait for tasks-RCU, as before (benchmarks compare the two in one boot). */
static bool okp_optimizer_snapshot = true;
module_param_named(optimizer_snapshot, okp_optimizer_snapshot, bool, 0644);
MODULE_PARM_DESC(optimizer_snapshot,
		 "prove no task is inside a jump's region from the stacks instead of waiting for tasks-RCU (x86-64)");

/* What debugfs optimizer_waits shows; written by the optimizer's one work item. */
static DEFINE_SPINLOCK(okp_snapshot_stats_lock);
static struct {
	unsigned long proven, waited, not_needed;
	unsigned int last_tasks;
	u64 last_stall_ns;
	char last_why[160];
} okp_snapshot_stats;

static int okp_span_cmp(const void *a, const void *b)
{
	const struct okp_text_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Is addr strictly inside a span, past its first byte (the jump's start is safe to resume at)? */
static bool okp_inside_span(const struct okp_snapshot *s, unsigned long addr)
{
	unsigned long lo = 0, hi = s->n;

	while (lo < hi) {	/* first span starting at or after addr */
		unsigned long mid = lo + (hi - lo) / 2;

		if (s->spans[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Spans starting before addr, nearest first: only those within a region's length matter. */
	while (lo-- > 0 && addr - s->spans[lo].start < OKP_SNAPSHOT_MAX_REGION) {
		if (addr < s->spans[lo].start + s->spans[lo].length)
			return true;
	}
	return false;
}

static bool okp_snapshot_task(struct okp_snapshot *s, struct task_struct *t)
{
	int len, i;

	if (++s->tasks > OKP_SNAPSHOT_MAX_TASKS) {
		snprintf(s->why, sizeof(s->why), "more than %d tasks to read in one stop",
			 OKP_SNAPSHOT_MAX_TASKS);
		return false;
	}
	if (READ_ONCE(t->on_cpu)) {
		/* Only the stoppers run now, each in multi_cpu_stop(), with nothing nested below. */
		if (t->flags & PF_KTHREAD)
			return true;
		snprintf(s->why, sizeof(s->why), "task %d (%s) is on a CPU inside stop_machine()",
			 task_pid_nr(t), t->comm);
		return false;
	}
	len = okp_x86_ksyms.stack_trace_save_tsk_reliable(t, s->entries, OKP_SNAPSHOT_DEPTH);
	if (len < 0) {
		snprintf(s->why, sizeof(s->why),
			 "the reliable unwinder cannot read the stack of task %d (%s): %d",
			 task_pid_nr(t), t->comm, len);
		return false;
	}
	for (i = 0; i < len; i++) {
		unsigned long a = s->entries[i];

		if (a >= s->slots && a < s->slots_end) {
			snprintf(s->why, sizeof(s->why),
				 "task %d (%s) is stopped in okprobes' slot area at %pS",
				 task_pid_nr(t), t->comm, (void *)a);
			return false;
		}
		if (okp_inside_span(s, a)) {
			snprintf(s->why, sizeof(s->why), "task %d (%s) is stopped inside a region at %pS",
				 task_pid_nr(t), t->comm, (void *)a);
			return false;
		}
	}
	return true;
}

/* Runs on one CPU while every other spins in multi_cpu_stop() with interrupts off. */
static int okp_snapshot_stopped(void *data)
{
	struct okp_snapshot *s = data;
	struct task_struct *g, *t;
	int cpu;

	rcu_read_lock();
	for_each_process_thread(g, t) {
		if (!okp_snapshot_task(s, t))
			goto out;
	}
	if (okp_x86_ksyms.idle_task) {
		for_each_online_cpu(cpu) {
			if (!okp_snapshot_task(s, okp_x86_ksyms.idle_task(cpu)))
				goto out;
		}
	}
	s->proven = true;
out:
	rcu_read_unlock();
	return 0;
}

/* One batch's outcome for debugfs: proven (why NULL), or waited for tasks-RCU because of why. */
static void okp_snapshot_account(const char *why, unsigned int tasks, u64 stall_ns)
{
	spin_lock(&okp_snapshot_stats_lock);
	if (!why) {
		okp_snapshot_stats.proven++;
	} else {
		okp_snapshot_stats.waited++;
		strscpy(okp_snapshot_stats.last_why, why, sizeof(okp_snapshot_stats.last_why));
	}
	okp_snapshot_stats.last_tasks = tasks;
	okp_snapshot_stats.last_stall_ns = stall_ns;
	spin_unlock(&okp_snapshot_stats_lock);
}

/* The look itself: s->spans/n set, the rest zero. Returns the stall in ns. */
static u64 okp_snapshot_run(struct okp_snapshot *s)
{
	unsigned long size;
	u64 t0;

	sort(s->spans, s->n, sizeof(*s->spans), okp_span_cmp, NULL);
	s->slots = okp_seam_slot_area(&size);
	s->slots_end = s->slots + size;
	t0 = ktime_get_ns();
	if (stop_machine(okp_snapshot_stopped, s, NULL))
		snprintf(s->why, sizeof(s->why), "stop_machine() failed");
	return ktime_get_ns() - t0;
}

/* After a look that proved every listed task outside: the exiting ones it cannot see (above). */
static bool okp_exiting_tasks_out(struct okp_snapshot *s)
{
	if (okp_x86_ksyms.tasks_rcu_exit_srcu) {
		synchronize_srcu((struct srcu_struct *)okp_x86_ksyms.tasks_rcu_exit_srcu);
		return true;
	}
	if (preempt_model_preemptible()) {
		snprintf(s->why, sizeof(s->why),
			 "full preemption, and exiting tasks are out of sight (no tasks_rcu_exit_srcu in this kernel)");
		return false;
	}
	return true;
}

int okp_seam_tasks_outside(struct okp_text_span *spans, unsigned long n)
{
	struct okp_snapshot *s = NULL;
	const char *skip = NULL;
	u64 stall;
	bool proven;

	/* Without preemption no task stops inside a region: the caller's RCU grace period, which
	 * no CPU passes while running one, was enough (synchronize_rcu_tasks() would be that). */
	if (!IS_ENABLED(CONFIG_TASKS_RCU)) {
		spin_lock(&okp_snapshot_stats_lock);
		okp_snapshot_stats.not_needed++;
		spin_unlock(&okp_snapshot_stats_lock);
		return 1;
	}
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		skip = "PREEMPT_RT: no stop_machine() for this";
	else if (!okp_x86_ksyms.stack_trace_save_tsk_reliable)
		skip = "no reliable unwinder in this kernel";
	else if (!okp_optimizer_snapshot)
		skip = "okprobes.optimizer_snapshot=0";
	else
		s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!skip && !s)
		skip = "no memory for the look";
	if (skip) {
		okp_snapshot_account(skip, 0, 0);
		return 0;
	}
	s->spans = spans;
	s->n = n;
	stall = okp_snapshot_run(s);
	proven = s->proven && okp_exiting_tasks_out(s);
	okp_snapshot_account(proven ? NULL : s->why, s->tasks, stall);
	if (!proven)
		pr_debug("waiting for tasks-RCU before writing %lu jumps: %s\n", n, s->why);
	kfree(s);
	return proven;
}

/*
 * Test hook (KUnit okprobes_task_snapshot): the look itself, whatever the kernel's preemption
 * and okprobes.optimizer_snapshot say. 1: proven; 0: not, why filled; -EOPNOTSUPP without
 * a reliable unwinder; -ENOMEM.
 */
int okp_test_tasks_snapshot(struct okp_text_span *spans, unsigned long n, char *why,
			    size_t why_len)
{
	struct okp_snapshot *s;
	int ret;

	if (!okp_x86_ksyms.stack_trace_save_tsk_reliable)
		return -EOPNOTSUPP;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->spans = spans;
	s->n = n;
	okp_snapshot_run(s);
	ret = s->proven;
	strscpy(why, s->why, why_len);
	kfree(s);
	return ret;
}
EXPORT_SYMBOL_GPL(okp_test_tasks_snapshot);

static int okp_optimizer_waits_show(struct seq_file *m, void *v)
{
	const char *how = !IS_ENABLED(CONFIG_TASKS_RCU) ?
			  "none needed (no preemption: the RCU grace period is enough)" :
			  IS_ENABLED(CONFIG_PREEMPT_RT) ? "tasks-RCU (PREEMPT_RT)" :
			  !okp_x86_ksyms.stack_trace_save_tsk_reliable ?
			  "tasks-RCU (no reliable unwinder in this kernel)" :
			  !okp_optimizer_snapshot ? "tasks-RCU (okprobes.optimizer_snapshot=0)" :
			  "every task's stack read in stop_machine(), tasks-RCU when that proves nothing";

	spin_lock(&okp_snapshot_stats_lock);
	seq_printf(m, "method: %s\n", how);
	seq_printf(m, "exiting_tasks: %s\n",
		   okp_x86_ksyms.tasks_rcu_exit_srcu ? "one SRCU grace period of tasks_rcu_exit_srcu after the look" :
		   preempt_model_preemptible() ? "out of sight under full preemption: tasks-RCU" :
		   "no involuntary preemption: they stop only at calls");
	seq_printf(m, "proven_by_stacks: %lu\nwaited_for_tasks_rcu: %lu\nno_wait_needed: %lu\n",
		   okp_snapshot_stats.proven, okp_snapshot_stats.waited, okp_snapshot_stats.not_needed);
	seq_printf(m, "last_tasks_read: %u\nlast_stop_ns: %llu\n", okp_snapshot_stats.last_tasks,
		   okp_snapshot_stats.last_stall_ns);
	seq_printf(m, "last_reason_to_wait: %s\n",
		   okp_snapshot_stats.last_why[0] ? okp_snapshot_stats.last_why : "-");
	spin_unlock(&okp_snapshot_stats_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(okp_optimizer_waits);

void okp_task_snapshot_debugfs(struct dentry *dir)
{
	debugfs_create_file("optimizer_waits", 0400, dir, NULL, &okp_optimizer_waits_fops);
}
