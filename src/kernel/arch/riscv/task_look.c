// SPDX-License-Identifier: GPL-2.0
/*
 * The task look of riscv64's jump switch on a kernel that preempts kernel code (issue 28):
 * inside the switch's stop_machine (every other hart spinning in its stopper, interrupts off,
 * so no task runs and no stack changes), every task's kernel stack is read through its
 * frame-pointer chain (arch/riscv/task_stack_walk.cpp) and the switch is written only when no
 * task is stopped strictly inside a region being switched, either way. A task preempted by an
 * interrupt has the interrupted pc in the pt_regs its exception entry saved on its stack;
 * every other stop is at a call, whose return address is never inside a region (the region
 * check keeps a call as a region's last instruction). A chain that cannot be followed to the
 * pt_regs at the top of the stack proves nothing: the switch is not written then, and tried
 * again (text_patch.c).
 *
 * What cannot be seen on the task list: a thread that exits reaping itself is unhashed in
 * exit_notify() and still runs preemptible code until do_task_dead(). Such a task, preempted,
 * is on a runqueue: so the runnable tasks found on the list are counted against the kernel's
 * own count (nr_running(), every CPU's queued tasks, stable while every hart is stopped), and
 * any runnable task the list did not show makes the look prove nothing.
 *
 * Idle tasks are on no list and not read: each runs with preemption disabled and leaves its
 * CPU only through schedule_idle(), a call.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/debugfs.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/seq_file.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kernel/okp_glue.h"
#include "okp_riscv.h"
#include "seam/jump_services.h"
#include "task_stack_walk.h"
#include "text_patch.h"

/* Tasks read in one stop: bounds how long every hart stays stopped. */
#define OKP_LOOK_MAX_TASKS 20000
/* No fork return or exception entry is longer (a symbol's extent beyond is not that code). */
#define OKP_ENTRY_CODE_MAX 0x4000

/* The longest detour (arch::kMaxDetourSize) and its cells' alignment (arch::kSlotSize). */
#define OKP_DETOUR_MAX 192
#define OKP_DETOUR_CELL 16

/* The detours' common entries (detour_entry.S), found once. */
static struct okp_riscv_text_range okp_detour_entries[2];
/* The sites of the switch being looked at (set inside the stop, read by the walk). */
static const struct okp_riscv_patch *okp_look_patches;
static unsigned int okp_look_n;

/* The entry code's ranges: handle_exception's, and the fork returns'. */
static struct okp_riscv_text_range okp_entry_code[5];
static unsigned int okp_n_entry_code;
static const char *okp_look_missing;
static bool okp_look_prepared;

/* What debugfs switch_look shows; written by the one hart that looks, inside the stop. */
static struct {
	unsigned long looks, proven, inside, unknown;
	unsigned int last_tasks;
	char last_why[160];
} okp_look_stats;

/* A code symbol's [start, end) from kallsyms, 0 when not found or implausible. */
static bool okp_code_extent(unsigned long addr, struct okp_riscv_text_range *out)
{
	char name[KSYM_NAME_LEN];
	unsigned long start, size;

	if (!addr || !okp_symbol_extent(addr, name, sizeof(name), &start, &size) ||
	    start != addr || !size || size > OKP_ENTRY_CODE_MAX)
		return false;
	out->start = start;
	out->end = start + size;
	return true;
}

/*
 * The exception entry's code: 6.12 and 7.x mark its end (ret_from_exception_end, where the
 * kernel's unwinder stops looking); 6.1 keeps all of it inside handle_exception's ENTRY/END,
 * ret_from_exception and the preemption in resume_kernel included, right before ret_from_fork.
 */
static bool okp_entry_range(struct okp_riscv_text_range *out)
{
	const struct okp_riscv_ksyms *k = &okp_riscv_ksyms;
	unsigned long start = k->handle_exception, end = 0;

	if (k->ret_from_exception_end > start)
		end = k->ret_from_exception_end;
	else if (k->ret_from_exception > start && k->ret_from_fork > k->ret_from_exception)
		end = k->ret_from_fork;
	if (!start || !end || end - start > OKP_ENTRY_CODE_MAX)
		return false;
	out->start = start;
	out->end = end;
	return true;
}

/* Process context, before the first stop that needs the look (registry lock held). */
const char *okp_riscv_task_look_missing(void)
{
	const struct okp_riscv_ksyms *k = &okp_riscv_ksyms;
	const unsigned long fork_returns[] = { k->ret_from_fork, k->ret_from_kernel_thread,
					       k->ret_from_fork_kernel_asm,
					       k->ret_from_fork_user_asm };
	unsigned int i;

	if (okp_look_prepared)
		return okp_look_missing;
	okp_look_prepared = true;
	if (!IS_ENABLED(CONFIG_FRAME_POINTER))
		return okp_look_missing = "this kernel is built without frame pointers, so its "
					  "tasks' stacks cannot be read";
	if (!IS_ENABLED(CONFIG_TASKS_RCU))
		return okp_look_missing = "no tasks-RCU in this kernel to retire a detour by";
	if (!k->kernel_text_address || !k->nr_running)
		return okp_look_missing = "kernel_text_address or nr_running is not in kallsyms";
	if (!okp_entry_range(&okp_entry_code[0]))
		return okp_look_missing = "the exception entry's code (handle_exception to "
					  "ret_from_exception's end) is not in kallsyms";
	okp_n_entry_code = 1;
	for (i = 0; i < ARRAY_SIZE(fork_returns); i++)
		if (okp_code_extent(fork_returns[i], &okp_entry_code[okp_n_entry_code]))
			okp_n_entry_code++;
	if (okp_n_entry_code == 1)
		return okp_look_missing = "no fork return (ret_from_fork) in kallsyms";
	if (!okp_code_extent(okp_seam_detour_entry(0), &okp_detour_entries[0]) ||
	    !okp_code_extent(okp_seam_detour_post_entry(), &okp_detour_entries[1]))
		return okp_look_missing = "okprobes' own detour entries have no extent in kallsyms";
	return NULL;
}

/*
 * A task in a detour goes back to the probed code where the detour's region ended (or to a
 * branch's target out of it). A detour retired from a site stays, with tasks preempted in it,
 * until a tasks-RCU grace period, and the site may meanwhile get a jump of another form: a jal
 * (4 bytes) covers a region ending at +4 or +6, strictly inside a pair written later (the
 * other way round the pair's region ends past the jal). So when a switch writes a pair over
 * text that was no pair (okp_riscv_patch's check_detours), a task whose pc or return address
 * is in a detour of that site (its header, at the detour's first cell, names the probe), or
 * in the detours' entries (on its way back to some detour), keeps the switch. After it no task
 * is in a jal's detour of the site, and none can enter one until the site is a jal again.
 */
static int okp_look_keeps_switch(okp_addr_t pc)
{
	const okp_addr_t slots = (okp_addr_t)okp_slot_area_start;
	const okp_addr_t slots_end = (okp_addr_t)okp_slot_area_end;
	okp_addr_t cell;
	unsigned int i;

	for (i = 0; i < okp_look_n && !okp_look_patches[i].check_detours; i++)
		;
	if (i == okp_look_n)
		return 0;
	for (i = 0; i < ARRAY_SIZE(okp_detour_entries); i++)
		if (pc >= okp_detour_entries[i].start && pc < okp_detour_entries[i].end)
			return 1;
	if (pc < slots || pc >= slots_end)
		return 0;
	for (cell = pc & ~(okp_addr_t)(OKP_DETOUR_CELL - 1);
	     cell >= slots && pc - cell < OKP_DETOUR_MAX; cell -= OKP_DETOUR_CELL) {
		unsigned long probe;

		if (copy_from_kernel_nofault(&probe, (const void *)cell, sizeof(probe)))
			return 1;
		for (i = 0; i < okp_look_n; i++)
			if (okp_look_patches[i].check_detours && probe == okp_look_patches[i].addr)
				return 1;
	}
	return 0;
}

static int okp_look_read_word(okp_addr_t addr, unsigned long *value)
{
	return copy_from_kernel_nofault(value, (const void *)addr, sizeof(*value)) ? -EFAULT : 0;
}

static int okp_look_is_text(okp_addr_t addr)
{
	return ((int (*)(unsigned long))okp_riscv_ksyms.kernel_text_address)(addr);
}

/* One task off its CPU: 1 outside, 0 not proven (why written). */
static int okp_look_task(const struct okp_riscv_walk_env *env, struct task_struct *t, char *why,
			 size_t why_len)
{
	struct okp_riscv_task_stack stack;
	enum okp_riscv_walk_result r;
	const char *reason;
	okp_addr_t where;

	/* Switched out for good in do_task_dead(); its stack may be gone already. */
	if (READ_ONCE(t->__state) == TASK_DEAD)
		return 1;
	if (!refcount_read(&t->stack_refcount) || !task_stack_page(t)) {
		snprintf(why, why_len, "task %d (%s) has no stack but is not dead", task_pid_nr(t),
			 t->comm);
		return 0;
	}
	stack.stack_low = (okp_addr_t)task_stack_page(t);
	stack.stack_high = stack.stack_low + THREAD_SIZE;
	stack.top_regs = (okp_addr_t)task_pt_regs(t);
	stack.pc = t->thread.ra;
	stack.fp = t->thread.s[0];
	stack.sp = t->thread.sp;
	r = okp_riscv_walk_task_stack(env, &stack, &where, &reason);
	if (r == OKP_RISCV_TASK_OUTSIDE)
		return 1;
	if (r == OKP_RISCV_TASK_INSIDE)
		snprintf(why, why_len, "task %d (%s) is stopped inside the region (or in its detour) at %pS",
			 task_pid_nr(t), t->comm, (void *)where);
	else
		snprintf(why, why_len, "the stack of task %d (%s) cannot be read to its end: %s (at %#lx)",
			 task_pid_nr(t), t->comm, reason, where);
	return 0;
}

/*
 * Inside stop_machine, on the one hart that writes, every other spinning with interrupts off:
 * 1 when no task is stopped strictly inside any of the n regions [addr, addr + len), else 0
 * with why written.
 */
int okp_riscv_task_look(const struct okp_riscv_patch *patches, unsigned int n, char *why,
			unsigned long why_len)
{
	struct okp_riscv_text_range inside[16];
	struct okp_riscv_walk_env env = {
		.regs = {
			.size = ALIGN(sizeof(struct pt_regs), STACK_ALIGN),
			.epc = offsetof(struct pt_regs, epc),
			.ra = offsetof(struct pt_regs, ra),
			.sp = offsetof(struct pt_regs, sp),
			.s0 = offsetof(struct pt_regs, s0),
			.status = offsetof(struct pt_regs, status),
			.status_spp = SR_SPP,
		},
		.entry = okp_entry_code,
		.n_entry = okp_n_entry_code,
		.inside = inside,
		.n_inside = n,
		.read_word = okp_look_read_word,
		.is_text = okp_look_is_text,
		.keeps_switch = okp_look_keeps_switch,
	};
	struct task_struct *g, *t;
	unsigned int tasks = 0, queued = 0, i, running;
	int proven = 0;

	if (okp_look_missing || !okp_n_entry_code || n > ARRAY_SIZE(inside)) {
		snprintf(why, why_len, "the task look is not available: %s",
			 okp_look_missing ?: "not prepared");
		return 0;
	}
	for (i = 0; i < n; i++) {
		inside[i].start = patches[i].addr;
		inside[i].end = patches[i].addr + patches[i].len;
	}
	okp_look_patches = patches;
	okp_look_n = n;
	rcu_read_lock();
	for_each_process_thread(g, t) {
		if (++tasks > OKP_LOOK_MAX_TASKS) {
			snprintf(why, why_len, "more than %d tasks to read in one stop",
				 OKP_LOOK_MAX_TASKS);
			goto out;
		}
		/* Runnable: on a runqueue (sched.h's TASK_ON_RQ_QUEUED, the only value then). */
		if (READ_ONCE(t->on_rq))
			queued++;
		if (READ_ONCE(t->on_cpu)) {
			/* Only the stoppers run now, each in multi_cpu_stop(), nothing below it. */
			if (t->flags & PF_KTHREAD)
				continue;
			snprintf(why, why_len, "task %d (%s) is on a CPU inside stop_machine()",
				 task_pid_nr(t), t->comm);
			goto out;
		}
		if (!okp_look_task(&env, t, why, why_len))
			goto out;
	}
	running = ((unsigned int (*)(void))okp_riscv_ksyms.nr_running)();
	if (running > queued) {
		snprintf(why, why_len, "%u runnable tasks are on no task list (threads exiting after "
			 "their unhash), %u on it", running - queued, queued);
		goto out;
	}
	proven = 1;
out:
	rcu_read_unlock();
	okp_look_stats.looks++;
	okp_look_stats.last_tasks = tasks;
	if (proven) {
		okp_look_stats.proven++;
	} else {
		if (strstr(why, "is stopped inside"))
			okp_look_stats.inside++;
		else
			okp_look_stats.unknown++;
		strscpy(okp_look_stats.last_why, why, sizeof(okp_look_stats.last_why));
	}
	return proven;
}

static int okp_switch_look_show(struct seq_file *m, void *v)
{
	const char *missing = okp_look_prepared ? okp_look_missing : NULL;

	seq_printf(m, "method: %s\n",
		   !preempt_model_preemptible() ?
		   "none needed (no kernel preemption: a task stops only at a call)" :
		   missing ? "none: jumps refused" :
		   "every task's stack read in each switch's stop_machine");
	if (missing)
		seq_printf(m, "missing: %s\n", missing);
	seq_printf(m, "looks: %lu\nproven: %lu\nrefused_task_inside: %lu\nrefused_unreadable: %lu\n",
		   okp_look_stats.looks, okp_look_stats.proven, okp_look_stats.inside,
		   okp_look_stats.unknown);
	seq_printf(m, "last_tasks_read: %u\nlast_refusal: %s\n", okp_look_stats.last_tasks,
		   okp_look_stats.last_why[0] ? okp_look_stats.last_why : "-");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(okp_switch_look);

/* debugfs okprobes/switch_look (called for every arch's optimizer_waits slot). */
void okp_task_snapshot_debugfs(struct dentry *dir)
{
	debugfs_create_file("switch_look", 0400, dir, NULL, &okp_switch_look_fops);
}
