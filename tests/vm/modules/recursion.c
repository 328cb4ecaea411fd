// SPDX-License-Identifier: GPL-2.0
/*
 * Recursion, NMIs and faults in handlers (issue 15), x86-64, driven by
 * tests/vm/scripts/recursion.sh. Every check runs at load and prints one line
 *   OKP-RECURSION: ok - DESCRIPTION      or      OKP-RECURSION: not ok - DESCRIPTION
 * which the script numbers as TAP. Each scenario runs on a function-entry probe (ftrace) and on
 * a probe at the first boundary past the entry (a breakpoint, or with optimized=1 a jump once
 * the optimizer ran: the script sets debug.okprobes-optimization for each run).
 *
 *   self      a pre_handler calls the probed function (a module function) itself: every
 *             nested hit is a miss of cause OKP_MISS_REENTRY, the outer hits are counted exactly
 *   spinlock  a probe on _raw_spin_lock whose handler takes a spinlock (a real kernel path
 *             every CPU runs through meanwhile): the driver's hits, told apart by the lock
 *             argument, are counted exactly, each nested lock a re-entry miss
 *   printk    the same on vprintk, with a handler that calls printk
 *   nmi       a probed function called from an NMI handler (an NMI this CPU sends itself):
 *             hits counted in NMI context; then an NMI that arrives while a handler runs: its
 *             hit is a re-entry miss
 *   fault     a handler that reads an unmapped kernel address through copy_from_kernel_nofault
 *             and get_kernel_nofault: -EFAULT, no oops, the probe keeps counting
 *   refused   the kernel's NMI entry (exc_nmi, nmi_handle) is refused with an errno and a reason
 *   return    a return probe whose entry and return handlers both call the probed function
 *             (each nested entry a re-entry miss, every return handled once, values right), and
 *             a return probe on the function an NMI handler calls (entered and returned in NMI)
 * Every probe also checks nmissed == the sum of nmissed_by. The last self probe stays
 * registered until unload, so that the script compares debugfs `list` with the struct:
 *   OKP-RECURSION-LIST okp_rec_target+0xOFF hits=N nmissed=M reentry=R
 */
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/apic.h>
#include <asm/nmi.h>
#include <okprobes/okprobes.h>

static unsigned int calls = 1000;
module_param(calls, uint, 0444);
MODULE_PARM_DESC(calls, "driven calls per self, spinlock and fault scenario");
static unsigned int printk_calls = 20;
module_param(printk_calls, uint, 0444);
MODULE_PARM_DESC(printk_calls, "driven printk calls (each one a console line)");
static unsigned int nmis = 50;
module_param(nmis, uint, 0444);
MODULE_PARM_DESC(nmis, "NMIs sent per NMI scenario");
static bool optimized;
module_param(optimized, bool, 0444);
MODULE_PARM_DESC(optimized, "wait for the jump optimizer and require past-entry probes to be OPTIMIZED");

#define report(ok, fmt, ...) \
	pr_info("OKP-RECURSION: %s - " fmt "\n", (ok) ? "ok" : "not ok", ##__VA_ARGS__)

enum rec_kind { REC_ENTRY, REC_PAST_ENTRY };
static const char *const kind_names[] = { "entry", "past-entry" };

/* --- the probed module functions: ordinary text, probeable, kept out of line --- */

static unsigned long rec_target_calls;
static noinline int okp_rec_target(int x)
{
	WRITE_ONCE(rec_target_calls, READ_ONCE(rec_target_calls) + 1);
	return x * 3 + 1;
}

static unsigned long rec_nmi_target_calls;
static noinline void okp_rec_nmi_target(void)
{
	WRITE_ONCE(rec_nmi_target_calls, READ_ONCE(rec_nmi_target_calls) + 1);
}

/* --- registration --- */

/*
 * The first offset past fn's entry that okprobes accepts as a breakpoint (the offsets in
 * between are refused: not a boundary, or the ftrace call itself, which okprobes maps to the
 * entry), found with a probe that has no handler: the real one is registered once, so that its
 * handler runs only from then on (registration zeroes nhit, which the checks compare with it).
 * Returns the offset, or a negative errno (trial->okp_reason says why).
 */
static int rec_past_entry_offset(struct okp_kprobe *trial, void *fn)
{
	unsigned int off;
	int ret = -EILSEQ;

	for (off = 1; off < 64; off++) {
		memset(trial, 0, sizeof(*trial));
		trial->addr = (okp_kprobe_opcode_t *)fn + off;
		ret = okp_register_kprobe(trial);
		if (ret == -EILSEQ)
			continue;
		if (ret)
			return ret; /* refused for a reason other than the offset: no other offset helps */
		okp_unregister_kprobe(trial);
		if (!(trial->flags & OKP_KPROBE_FLAG_FTRACE))
			return off;
	}
	return ret;
}

/*
 * Registers kp on fn: at its entry (okprobes serves it through ftrace), or at the first offset
 * past the entry that is a breakpoint; with optimized, then waits for the optimizer. Returns
 * the errno; kp->okp_reason says why.
 */
static int rec_register(struct okp_kprobe *kp, void *fn, enum rec_kind kind,
			okp_kprobe_pre_handler_t pre)
{
	int off = 0, ret;

	if (kind == REC_PAST_ENTRY) {
		off = rec_past_entry_offset(kp, fn);
		if (off < 0)
			return off;
	}
	memset(kp, 0, sizeof(*kp));
	kp->addr = (okp_kprobe_opcode_t *)fn + off;
	kp->pre_handler = pre;
	ret = okp_register_kprobe(kp);
	if (!ret && kind == REC_PAST_ENTRY && optimized)
		okp_wait_for_optimizer();
	return ret;
}

/* The kind of hit a registered probe gets, and whether that is what the run asked for. */
static bool rec_mechanism_ok(const struct okp_kprobe *kp, enum rec_kind kind, const char *what)
{
	unsigned int f = READ_ONCE(kp->flags);
	bool ok;

	if (kind == REC_ENTRY)
		ok = f & OKP_KPROBE_FLAG_FTRACE;
	else if (optimized)
		ok = f & OKP_KPROBE_FLAG_OPTIMIZED;
	else
		ok = !(f & (OKP_KPROBE_FLAG_FTRACE | OKP_KPROBE_FLAG_OPTIMIZED));
	/* The optimizer may decline a region: then the scenario ran on a breakpoint, said so. */
	if (!ok && kind == REC_PAST_ENTRY && optimized && !(f & OKP_KPROBE_FLAG_FTRACE) &&
	    kp->okp_reason[0]) {
		report(1, "%s %s: probe at %pS is jump-optimized # SKIP %s", what, kind_names[kind],
		       kp->addr, kp->okp_reason);
		return true;
	}
	report(ok, "%s %s: probe at %pS is %s (flags %#x%s%s)", what, kind_names[kind], kp->addr,
	       kind == REC_ENTRY ? "an ftrace entry" : optimized ? "jump-optimized" : "a breakpoint",
	       f, kp->okp_reason[0] ? ", " : "", kp->okp_reason);
	return ok;
}

static void rec_check_causes(const struct okp_kprobe *kp, const char *what, enum rec_kind kind)
{
	unsigned long sum = 0;
	int i;

	for (i = 0; i < OKP_MISS_NR; i++)
		sum += READ_ONCE(kp->nmissed_by[i]);
	report(sum == READ_ONCE(kp->nmissed), "%s %s: nmissed %lu = sum by cause %lu (reentry %lu disabled %lu fault %lu)",
	       what, kind_names[kind], kp->nmissed, sum, kp->nmissed_by[OKP_MISS_REENTRY],
	       kp->nmissed_by[OKP_MISS_DISABLED], kp->nmissed_by[OKP_MISS_FAULT]);
}

/* --- self: the handler calls the probed function --- */

static struct okp_kprobe self_kp;
static bool self_kept;
static atomic_t self_handler_runs;

static int __okp_kprobes self_pre(struct okp_kprobe *kp, struct pt_regs *regs)
{
	atomic_inc(&self_handler_runs);
	okp_rec_target(-1); /* a nested hit: must not run this handler again */
	return 0;
}

/* keep: leave the probe registered (the script reads it in debugfs `list`). */
static void rec_self(enum rec_kind kind, bool keep)
{
	unsigned long expect_sum = 0, sum = 0;
	unsigned int i;
	int ret;

	ret = rec_register(&self_kp, okp_rec_target, kind, self_pre);
	report(!ret, "self %s: probe on okp_rec_target registered (%d %s)", kind_names[kind], ret,
	       okp_kprobe_reason(&self_kp));
	if (ret)
		return;
	rec_mechanism_ok(&self_kp, kind, "self");
	atomic_set(&self_handler_runs, 0);
	WRITE_ONCE(rec_target_calls, 0);
	for (i = 0; i < calls; i++) {
		sum += okp_rec_target(i);
		expect_sum += i * 3 + 1;
	}
	report(sum == expect_sum && READ_ONCE(rec_target_calls) == 2UL * calls,
	       "self %s: every call and nested call ran and returned right (%lu of %u calls, sum %s)",
	       kind_names[kind], READ_ONCE(rec_target_calls), 2 * calls,
	       sum == expect_sum ? "right" : "WRONG");
	report(self_kp.nhit == calls && atomic_read(&self_handler_runs) == calls,
	       "self %s: outer hits counted exactly (nhit %lu, handler runs %d, calls %u)",
	       kind_names[kind], self_kp.nhit, atomic_read(&self_handler_runs), calls);
	report(self_kp.nmissed == calls && self_kp.nmissed_by[OKP_MISS_REENTRY] == calls,
	       "self %s: every nested hit is one re-entry miss (nmissed %lu, reentry %lu, calls %u)",
	       kind_names[kind], self_kp.nmissed, self_kp.nmissed_by[OKP_MISS_REENTRY], calls);
	rec_check_causes(&self_kp, "self", kind);
	if (keep) {
		self_kept = true;
		pr_info("OKP-RECURSION-LIST okp_rec_target+%#lx hits=%lu nmissed=%lu reentry=%lu\n",
			(unsigned long)self_kp.addr - (unsigned long)okp_rec_target, self_kp.nhit,
			self_kp.nmissed, self_kp.nmissed_by[OKP_MISS_REENTRY]);
		return;
	}
	okp_unregister_kprobe(&self_kp);
}

/* --- spinlock and printk: kernel functions every CPU runs, the handler calls them --- */

/* One lock per probe kind: lockdep must see each taken in one context only (a breakpoint's
 * handler runs in NMI-like context, an ftrace or jump handler in the interrupted one). Raw
 * locks: they call _raw_spin_lock on every configuration, PREEMPT_RT's included, where a
 * spinlock_t sleeps and must not be taken in a handler. */
static DEFINE_RAW_SPINLOCK(rec_driver_lock);
static DEFINE_RAW_SPINLOCK(rec_handler_lock_entry);
static DEFINE_RAW_SPINLOCK(rec_handler_lock_past_entry);
static struct okp_kprobe lock_kp;
static enum rec_kind lock_kind;
static atomic_t lock_driver_hits, lock_nested, lock_handler_runs;

static int __okp_kprobes lock_pre(struct okp_kprobe *kp, struct pt_regs *regs)
{
	raw_spinlock_t *nested = lock_kind == REC_ENTRY ? &rec_handler_lock_entry :
						      &rec_handler_lock_past_entry;

	atomic_inc(&lock_handler_runs);
	/* The lock argument (rdi, untouched up to the first instruction past the entry) tells the
	 * driver's hits from every other CPU's. */
	if (okp_arg(regs, 0) != (unsigned long)&rec_driver_lock)
		return 0;
	atomic_inc(&lock_driver_hits);
	raw_spin_lock(nested); /* calls _raw_spin_lock: a nested hit */
	atomic_inc(&lock_nested);
	raw_spin_unlock(nested);
	return 0;
}

static void rec_spinlock(enum rec_kind kind)
{
	unsigned int i;
	int ret;

	lock_kind = kind;
	atomic_set(&lock_driver_hits, 0);
	atomic_set(&lock_nested, 0);
	atomic_set(&lock_handler_runs, 0);
	ret = rec_register(&lock_kp, _raw_spin_lock, kind, lock_pre);
	if (ret) {
		/* A refusal is an answer too, if it says why. */
		report(ret != -EILSEQ && okp_kprobe_reason(&lock_kp)[0],
		       "spinlock %s: probe on _raw_spin_lock refused with a reason (%d %s)",
		       kind_names[kind], ret, okp_kprobe_reason(&lock_kp));
		return;
	}
	report(1, "spinlock %s: probe on _raw_spin_lock registered at %pS", kind_names[kind],
	       lock_kp.addr);
	rec_mechanism_ok(&lock_kp, kind, "spinlock");
	for (i = 0; i < calls; i++) {
		raw_spin_lock(&rec_driver_lock);
		raw_spin_unlock(&rec_driver_lock);
	}
	okp_unregister_kprobe(&lock_kp);
	report(atomic_read(&lock_driver_hits) == calls && atomic_read(&lock_nested) == calls,
	       "spinlock %s: the driver's hits counted exactly, each handler took its lock (%d, %d of %u)",
	       kind_names[kind], atomic_read(&lock_driver_hits), atomic_read(&lock_nested), calls);
	report(lock_kp.nhit == atomic_read(&lock_handler_runs),
	       "spinlock %s: nhit %lu = handler runs %d (all CPUs)", kind_names[kind], lock_kp.nhit,
	       atomic_read(&lock_handler_runs));
	report(lock_kp.nmissed_by[OKP_MISS_REENTRY] >= calls,
	       "spinlock %s: each nested lock is a re-entry miss (reentry %lu >= %u)",
	       kind_names[kind], lock_kp.nmissed_by[OKP_MISS_REENTRY], calls);
	rec_check_causes(&lock_kp, "spinlock", kind);
}

static const char rec_printk_driver_fmt[] = KERN_DEBUG "okp_recursion: driven printk %u\n";
static const char rec_printk_nested_fmt[] = KERN_DEBUG "okp_recursion: printk from the handler\n";
static struct okp_kprobe printk_kp;
static atomic_t printk_driver_hits, printk_handler_runs;

static int __okp_kprobes printk_pre(struct okp_kprobe *kp, struct pt_regs *regs)
{
	atomic_inc(&printk_handler_runs);
	if (okp_arg(regs, 0) != (unsigned long)rec_printk_driver_fmt)
		return 0;
	atomic_inc(&printk_driver_hits);
	printk(rec_printk_nested_fmt); /* calls vprintk: a nested hit */
	return 0;
}

static void rec_printk(enum rec_kind kind)
{
	unsigned int i;
	int ret;

	atomic_set(&printk_driver_hits, 0);
	atomic_set(&printk_handler_runs, 0);
	ret = rec_register(&printk_kp, vprintk, kind, printk_pre);
	if (ret) {
		report(ret != -EILSEQ && okp_kprobe_reason(&printk_kp)[0],
		       "printk %s: probe on vprintk refused with a reason (%d %s)", kind_names[kind],
		       ret, okp_kprobe_reason(&printk_kp));
		return;
	}
	report(1, "printk %s: probe on vprintk registered at %pS", kind_names[kind], printk_kp.addr);
	rec_mechanism_ok(&printk_kp, kind, "printk");
	for (i = 0; i < printk_calls; i++)
		printk(rec_printk_driver_fmt, i);
	okp_unregister_kprobe(&printk_kp);
	report(atomic_read(&printk_driver_hits) == printk_calls,
	       "printk %s: the driver's hits counted exactly (%d of %u)", kind_names[kind],
	       atomic_read(&printk_driver_hits), printk_calls);
	report(printk_kp.nhit == atomic_read(&printk_handler_runs),
	       "printk %s: nhit %lu = handler runs %d", kind_names[kind], printk_kp.nhit,
	       atomic_read(&printk_handler_runs));
	report(printk_kp.nmissed_by[OKP_MISS_REENTRY] >= printk_calls,
	       "printk %s: each printk from the handler is a re-entry miss (reentry %lu >= %u)",
	       kind_names[kind], printk_kp.nmissed_by[OKP_MISS_REENTRY], printk_calls);
	rec_check_causes(&printk_kp, "printk", kind);
}

/* --- NMIs --- */

static DEFINE_PER_CPU(int, rec_nmi_pending);
static atomic_t nmi_handled;
static struct okp_kprobe nmi_kp, nmi_outer_kp;
static atomic_t nmi_hits_in_nmi, nmi_hits_elsewhere, nmi_outer_delivered, nmi_outer_runs;

/* Claims only the NMIs this module sent (others belong to perf or are unknown). */
static int __okp_kprobes rec_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (!this_cpu_read(rec_nmi_pending))
		return NMI_DONE;
	this_cpu_write(rec_nmi_pending, 0);
	okp_rec_nmi_target();
	atomic_inc(&nmi_handled);
	return NMI_HANDLED;
}

/* Sends this CPU an NMI and waits (up to 100 ms) until its handler ran. Preemption off. An NMI
 * that comes later is still claimed: the pending flag stays set until it does. */
static bool __okp_kprobes rec_self_nmi(void)
{
	unsigned int i;

	this_cpu_write(rec_nmi_pending, 1);
	apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
	for (i = 0; i < 100000 && this_cpu_read(rec_nmi_pending); i++)
		udelay(1);
	return !this_cpu_read(rec_nmi_pending);
}

static int __okp_kprobes nmi_pre(struct okp_kprobe *kp, struct pt_regs *regs)
{
	if (in_nmi())
		atomic_inc(&nmi_hits_in_nmi);
	else
		atomic_inc(&nmi_hits_elsewhere);
	return 0;
}

/* An NMI while this handler runs: the NMI's hit on okp_rec_nmi_target is a re-entry. */
static int __okp_kprobes nmi_outer_pre(struct okp_kprobe *kp, struct pt_regs *regs)
{
	atomic_inc(&nmi_outer_runs);
	if (rec_self_nmi())
		atomic_inc(&nmi_outer_delivered);
	return 0;
}

static void rec_nmi(enum rec_kind kind)
{
	unsigned int i, delivered = 0;
	unsigned long missed0;
	int ret;

	atomic_set(&nmi_handled, 0);
	atomic_set(&nmi_hits_in_nmi, 0);
	atomic_set(&nmi_hits_elsewhere, 0);
	ret = rec_register(&nmi_kp, okp_rec_nmi_target, kind, nmi_pre);
	report(!ret, "nmi %s: probe on okp_rec_nmi_target registered (%d %s)", kind_names[kind],
	       ret, okp_kprobe_reason(&nmi_kp));
	if (ret)
		return;
	rec_mechanism_ok(&nmi_kp, kind, "nmi");
	for (i = 0; i < nmis; i++) {
		preempt_disable();
		delivered += rec_self_nmi();
		preempt_enable();
	}
	report(delivered == nmis && atomic_read(&nmi_handled) == nmis,
	       "nmi %s: every NMI sent was handled (%u delivered, %d handled of %u)",
	       kind_names[kind], delivered, atomic_read(&nmi_handled), nmis);
	report(nmi_kp.nhit == nmis && atomic_read(&nmi_hits_in_nmi) == nmis &&
		       !atomic_read(&nmi_hits_elsewhere) && !nmi_kp.nmissed,
	       "nmi %s: hits in NMI context counted exactly (nhit %lu, in_nmi %d, elsewhere %d, missed %lu of %u)",
	       kind_names[kind], nmi_kp.nhit, atomic_read(&nmi_hits_in_nmi),
	       atomic_read(&nmi_hits_elsewhere), nmi_kp.nmissed, nmis);

	/* An NMI during a handler: the outer probe's handler sends it and waits for it. */
	atomic_set(&nmi_handled, 0);
	atomic_set(&nmi_outer_delivered, 0);
	atomic_set(&nmi_outer_runs, 0);
	missed0 = nmi_kp.nmissed_by[OKP_MISS_REENTRY];
	ret = rec_register(&nmi_outer_kp, okp_rec_target, kind, nmi_outer_pre);
	report(!ret, "nmi %s: outer probe on okp_rec_target registered (%d %s)", kind_names[kind],
	       ret, okp_kprobe_reason(&nmi_outer_kp));
	if (!ret) {
		for (i = 0; i < nmis; i++)
			okp_rec_target(i);
		okp_unregister_kprobe(&nmi_outer_kp);
		report(atomic_read(&nmi_outer_runs) == nmis &&
			       atomic_read(&nmi_outer_delivered) == nmis,
		       "nmi %s: an NMI arrived inside each handler run (%d of %d runs, %u calls)",
		       kind_names[kind], atomic_read(&nmi_outer_delivered),
		       atomic_read(&nmi_outer_runs), nmis);
		report(nmi_kp.nmissed_by[OKP_MISS_REENTRY] - missed0 == nmis && nmi_kp.nhit == nmis,
		       "nmi %s: each NMI's hit inside a handler is a re-entry miss (reentry +%lu, nhit still %lu, %u NMIs)",
		       kind_names[kind], nmi_kp.nmissed_by[OKP_MISS_REENTRY] - missed0,
		       nmi_kp.nhit, nmis);
	}
	okp_unregister_kprobe(&nmi_kp);
	rec_check_causes(&nmi_kp, "nmi", kind);
}

/* The kernel's own NMI entry and perf's NMI handler: blacklisted (noinstr, NOKPROBE_SYMBOL),
 * refused with a reason. */
static void rec_nmi_refusals(void)
{
	static const char *const names[] = { "exc_nmi", "nmi_handle", "default_do_nmi",
					     "perf_event_nmi_handler" };
	struct okp_kprobe kp;
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		memset(&kp, 0, sizeof(kp));
		kp.symbol_name = names[i];
		kp.pre_handler = nmi_pre;
		ret = okp_register_kprobe(&kp);
		if (!ret)
			okp_unregister_kprobe(&kp);
		if (ret == -ENOENT) {
			report(1, "refused: %s is not a symbol here # SKIP not in kallsyms", names[i]);
			continue;
		}
		report(ret == -EINVAL && kp.okp_reason[0],
		       "refused: a probe on the NMI entry %s (%d %s)", names[i], ret, kp.okp_reason);
	}
}

/* --- faults in handlers --- */

static struct okp_kprobe fault_kp;
static void *rec_unmapped; /* the guard page past a vmalloc'ed page: never mapped */
static unsigned long rec_readable = 0x6f6b70726f626573UL;
static atomic_t fault_efault, fault_good_reads, fault_runs;

static int __okp_kprobes fault_pre(struct okp_kprobe *kp, struct pt_regs *regs)
{
	unsigned long v = 0;

	atomic_inc(&fault_runs);
	if (copy_from_kernel_nofault(&v, rec_unmapped, sizeof(v)) == -EFAULT)
		atomic_inc(&fault_efault);
	if (get_kernel_nofault(v, (unsigned long *)rec_unmapped) == -EFAULT)
		atomic_inc(&fault_efault);
	/* The same copy of a mapped address works: the -EFAULTs are the address's doing. */
	if (!copy_from_kernel_nofault(&v, &rec_readable, sizeof(v)) && v == rec_readable)
		atomic_inc(&fault_good_reads);
	return 0;
}

static void rec_fault(enum rec_kind kind)
{
	unsigned long sum = 0;
	unsigned int i;
	int ret;

	atomic_set(&fault_efault, 0);
	atomic_set(&fault_good_reads, 0);
	atomic_set(&fault_runs, 0);
	ret = rec_register(&fault_kp, okp_rec_target, kind, fault_pre);
	report(!ret, "fault %s: probe on okp_rec_target registered (%d %s)", kind_names[kind], ret,
	       okp_kprobe_reason(&fault_kp));
	if (ret)
		return;
	rec_mechanism_ok(&fault_kp, kind, "fault");
	WRITE_ONCE(rec_target_calls, 0);
	for (i = 0; i < calls; i++)
		sum += okp_rec_target(i);
	okp_unregister_kprobe(&fault_kp);
	report(atomic_read(&fault_efault) == 2 * calls && atomic_read(&fault_good_reads) == calls,
	       "fault %s: nofault reads of an unmapped address return -EFAULT (%d of %u), mapped ones read (%d of %u)",
	       kind_names[kind], atomic_read(&fault_efault), 2 * calls,
	       atomic_read(&fault_good_reads), calls);
	report(fault_kp.nhit == calls && atomic_read(&fault_runs) == calls && !fault_kp.nmissed &&
		       READ_ONCE(rec_target_calls) == calls,
	       "fault %s: the probe kept counting (nhit %lu, runs %d, missed %lu, calls %lu of %u)",
	       kind_names[kind], fault_kp.nhit, atomic_read(&fault_runs), fault_kp.nmissed,
	       READ_ONCE(rec_target_calls), calls);
}

/* --- return probes: handlers that call the probed function, and frames inside NMIs --- */

struct rec_ret_data {
	long x;
};
static atomic_t ret_entries, ret_returns, ret_right;

static int __okp_kprobes ret_entry(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	((struct rec_ret_data *)ri->data)->x = (int)okp_arg(regs, 0);
	atomic_inc(&ret_entries);
	okp_rec_target(-1); /* a nested entry: a re-entry miss, no instance */
	return 0;
}

static int __okp_kprobes ret_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	long x = ((struct rec_ret_data *)ri->data)->x;

	atomic_inc(&ret_returns);
	if ((int)regs_return_value(regs) == x * 3 + 1)
		atomic_inc(&ret_right);
	okp_rec_target(-2); /* from the return handler: a re-entry miss too */
	return 0;
}

static struct okp_kretprobe ret_rp;

static void rec_return_self(void)
{
	unsigned long sum = 0, expect_sum = 0;
	unsigned int i;
	int ret;

	memset(&ret_rp, 0, sizeof(ret_rp));
	ret_rp.kp.addr = (okp_kprobe_opcode_t *)okp_rec_target;
	ret_rp.entry_handler = ret_entry;
	ret_rp.handler = ret_return;
	ret_rp.data_size = sizeof(struct rec_ret_data);
	ret_rp.maxactive = 8;
	atomic_set(&ret_entries, 0);
	atomic_set(&ret_returns, 0);
	atomic_set(&ret_right, 0);
	ret = okp_register_kretprobe(&ret_rp);
	report(!ret, "return self: return probe on okp_rec_target registered (%d %s)", ret,
	       okp_kprobe_reason(&ret_rp.kp));
	if (ret)
		return;
	WRITE_ONCE(rec_target_calls, 0);
	for (i = 0; i < calls; i++) {
		sum += okp_rec_target(i);
		expect_sum += i * 3 + 1;
	}
	okp_unregister_kretprobe(&ret_rp);
	report(sum == expect_sum && READ_ONCE(rec_target_calls) == 3UL * calls,
	       "return self: every call and nested call ran and returned right (%lu of %u calls, sum %s)",
	       READ_ONCE(rec_target_calls), 3 * calls, sum == expect_sum ? "right" : "WRONG");
	report(atomic_read(&ret_entries) == calls && atomic_read(&ret_returns) == calls &&
		       atomic_read(&ret_right) == calls,
	       "return self: each outer call entered and returned once (entries %d, returns %d, right values %d of %u)",
	       atomic_read(&ret_entries), atomic_read(&ret_returns), atomic_read(&ret_right), calls);
	report(ret_rp.kp.nmissed_by[OKP_MISS_REENTRY] == 2UL * calls && !ret_rp.nmissed &&
		       !ret_rp.nmissed_by[OKP_RP_MISS_POOL_EMPTY],
	       "return self: each nested entry is a re-entry miss (reentry %lu of %u, pool empty %lu)",
	       ret_rp.kp.nmissed_by[OKP_MISS_REENTRY], 2 * calls,
	       ret_rp.nmissed_by[OKP_RP_MISS_POOL_EMPTY]);
	report(!okp_return_stubs_in_use(), "return self: no return stub left in use (%lu)",
	       okp_return_stubs_in_use());
}

static atomic_t nmi_ret_entries_in_nmi, nmi_ret_returns_in_nmi;

static int __okp_kprobes nmi_ret_entry(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	if (in_nmi())
		atomic_inc(&nmi_ret_entries_in_nmi);
	return 0;
}

static int __okp_kprobes nmi_ret_return(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	if (in_nmi())
		atomic_inc(&nmi_ret_returns_in_nmi);
	return 0;
}

static void rec_return_nmi(void)
{
	unsigned int i, delivered = 0;
	int ret;

	memset(&ret_rp, 0, sizeof(ret_rp));
	ret_rp.kp.addr = (okp_kprobe_opcode_t *)okp_rec_nmi_target;
	ret_rp.entry_handler = nmi_ret_entry;
	ret_rp.handler = nmi_ret_return;
	ret_rp.maxactive = 8;
	atomic_set(&nmi_ret_entries_in_nmi, 0);
	atomic_set(&nmi_ret_returns_in_nmi, 0);
	atomic_set(&nmi_handled, 0);
	ret = okp_register_kretprobe(&ret_rp);
	report(!ret, "return nmi: return probe on okp_rec_nmi_target registered (%d %s)", ret,
	       okp_kprobe_reason(&ret_rp.kp));
	if (ret)
		return;
	for (i = 0; i < nmis; i++) {
		preempt_disable();
		delivered += rec_self_nmi();
		preempt_enable();
	}
	okp_unregister_kretprobe(&ret_rp);
	report(delivered == nmis && atomic_read(&nmi_ret_entries_in_nmi) == nmis &&
		       atomic_read(&nmi_ret_returns_in_nmi) == nmis && !ret_rp.nmissed &&
		       !ret_rp.kp.nmissed,
	       "return nmi: entered and returned in NMI context (entries %d, returns %d, missed %d/%lu, %u of %u NMIs)",
	       atomic_read(&nmi_ret_entries_in_nmi), atomic_read(&nmi_ret_returns_in_nmi),
	       ret_rp.nmissed, ret_rp.kp.nmissed, delivered, nmis);
	report(!okp_return_stubs_in_use(), "return nmi: no return stub left in use (%lu)",
	       okp_return_stubs_in_use());
}

static void *rec_vmalloc_page;

static int __init okp_recursion_init(void)
{
	enum rec_kind kind;
	int ret;

	rec_vmalloc_page = vmalloc(PAGE_SIZE);
	if (!rec_vmalloc_page)
		return -ENOMEM;
	rec_unmapped = rec_vmalloc_page + PAGE_SIZE;
	ret = register_nmi_handler(NMI_LOCAL, rec_nmi_handler, 0, "okp_recursion");
	if (ret) {
		vfree(rec_vmalloc_page);
		return ret;
	}
	pr_info("OKP-RECURSION-START optimized=%d calls=%u\n", optimized, calls);
	for (kind = REC_ENTRY; kind <= REC_PAST_ENTRY; kind++) {
		rec_spinlock(kind);
		rec_printk(kind);
		rec_nmi(kind);
		rec_fault(kind);
	}
	rec_nmi_refusals();
	rec_return_self();
	rec_return_nmi();
	rec_self(REC_ENTRY, false);
	rec_self(REC_PAST_ENTRY, true);
	pr_info("OKP-RECURSION-END\n");
	return 0;
}

static void __exit okp_recursion_exit(void)
{
	if (self_kept)
		okp_unregister_kprobe(&self_kp);
	unregister_nmi_handler(NMI_LOCAL, "okp_recursion");
	vfree(rec_vmalloc_page);
}

module_init(okp_recursion_init);
module_exit(okp_recursion_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: recursion through handlers, hits in NMIs, faults in handlers");
