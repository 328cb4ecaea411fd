// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep's return-probe sweep: okp_register_kretprobe on every function of the sample
 * (sweep.c's list), armed all at once while a workload runs, then unregistered.
 *
 * The guest script writes commands to /sys/kernel/debug/okp_sweep/return, in this order:
 *   run      register a return probe on every sampled function. Each is accepted, or refused
 *            with a negative errno and a non-empty reason (counted by errno and by reason class,
 *            as sweep.c counts kprobes); a refusal without a reason is a failure. Each holds
 *            maxactive instances (ret_maxactive=, default max(10, 2 * CPUs)) and no stub: a
 *            frame takes one of okprobes' stubs at entry.
 *   check    (after a workload) with every CPU stopped (stop_machine: no handler, no entry or
 *            return path half done), the counts must add up exactly:
 *              per probe   returns <= entries, entries = returns + reclaimed + in flight >= 0;
 *              in all      sum(entries - returns - reclaimed) == okp_return_stubs_in_use():
 *            every instance handed out either ran its return handler, was reclaimed (its task
 *            exited inside), or still holds one stub; nothing else holds a stub.
 *   release  okp_unregister_kretprobes of all of them; the counts are frozen there.
 *   verify   (after another workload) no handler ran after unregister (entries and returns
 *            exactly as frozen), stubs still in use <= the instances in flight at unregister
 *            (a task still sleeping inside a probed function keeps its frame), and the first
 *            bytes of every probed function are again what they were before `run`.
 * Every handler also checks its instance's data: the entry handler writes a cookie (the probe's
 * index, the task) into ri->data, the return handler must find it there, in the same task.
 * Reading `return` prints the OKP-RETURN lines.
 */
#include <linux/atomic.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/stop_machine.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <okprobes/okprobes.h>
#include "sweep.h"

static int ret_maxactive;	/* 0: okprobes' default, max(10, 2 * CPUs) */
module_param(ret_maxactive, int, 0444);
MODULE_PARM_DESC(ret_maxactive, "return probes: instances per probe (okprobes has 4096 return stubs in all)");

#define RET_MAX_CLASSES 48
#define RET_CLASS_LEN 96
#define ENTRY_BYTES 16		/* bytes compared at each function's entry after unregister */
#define COOKIE_MAGIC 0x6f6b7072657475UL

struct ret_probe {
	struct okp_kretprobe rp;
	unsigned int func;
	atomic_long_t entries, returns;
	long frozen_entries, frozen_returns, frozen_reclaimed;
	u8 entry[ENTRY_BYTES];
	bool entry_read;
};

struct cookie {
	unsigned long magic;	/* COOKIE_MAGIC ^ the probe's index */
	void *task;
};

struct ret_class {
	int err;
	unsigned long count;
	char text[RET_CLASS_LEN];
	char example[OKP_REASON_MAX + 96];
};

enum phase { R_IDLE, R_ARMED, R_RELEASED, R_VERIFIED };

static struct ret_probe *rps;
static struct okp_kretprobe **armed_rps;
static unsigned int nrps, narmed_rps;
static enum phase phase;
static atomic_long_t cookie_bad, task_bad;

static struct {
	unsigned long tried, accepted, refused, no_reason, wrong_errno;
	unsigned long errno_count[256];
	unsigned long checks, check_bad_order, check_bad_sum, frozen_bad, stubs_left_bad,
		text_bad, negative_flight;
	long entries, returns, reclaimed, missed, in_flight_armed, stubs_armed;
	long in_flight_release, stubs_release, stubs_verify;
	unsigned long fired;	/* probes whose function returned at least once */
} rs;
static struct ret_class rclasses[RET_MAX_CLASSES];
static unsigned int nrclasses;
static unsigned long rclasses_dropped;

static struct ret_probe *probe_of(struct okp_kretprobe_instance *ri)
{
	return container_of(okp_get_kretprobe(ri), struct ret_probe, rp);
}

static int ret_entry(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct ret_probe *p = probe_of(ri);
	struct cookie *c = (struct cookie *)ri->data;

	c->magic = COOKIE_MAGIC ^ (p - rps);
	c->task = current;
	atomic_long_inc(&p->entries);
	return 0;
}

static int ret_handler(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct ret_probe *p = probe_of(ri);
	struct cookie *c = (struct cookie *)ri->data;

	if (c->magic != (COOKIE_MAGIC ^ (p - rps)))
		atomic_long_inc(&cookie_bad);
	if (c->task != current)
		atomic_long_inc(&task_bad);
	/* Counted after the checks: a reader that takes returns before entries sees <=. */
	atomic_long_inc(&p->returns);
	return 0;
}

static void count_refusal(int err, const char *reason, const struct sweep_func *f)
{
	char text[RET_CLASS_LEN];
	unsigned int i;

	if (err < 0 && -err < 256)
		rs.errno_count[-err]++;
	sweep_classify(reason, text, sizeof(text));
	for (i = 0; i < nrclasses; i++) {
		if (rclasses[i].err == err && !strcmp(rclasses[i].text, text)) {
			rclasses[i].count++;
			return;
		}
	}
	if (nrclasses == RET_MAX_CLASSES) {
		rclasses_dropped++;
		return;
	}
	rclasses[nrclasses].err = err;
	rclasses[nrclasses].count = 1;
	strscpy(rclasses[nrclasses].text, text, sizeof(rclasses[0].text));
	snprintf(rclasses[nrclasses].example, sizeof(rclasses[0].example), "%s: %s", f->name,
		 reason);
	nrclasses++;
}

static int return_run(void)
{
	unsigned int i, n = sweep_nfuncs();

	if (phase != R_IDLE || !n)
		return -EBUSY;
	rps = kvcalloc(n, sizeof(*rps), GFP_KERNEL);
	armed_rps = kvcalloc(n, sizeof(*armed_rps), GFP_KERNEL);
	if (!rps || !armed_rps)
		return -ENOMEM;
	nrps = n;
	for (i = 0; i < n; i++) {
		struct sweep_func *f = sweep_func(i);
		struct ret_probe *p = &rps[i];
		const char *reason;
		int ret;

		p->func = i;
		p->entry_read = !copy_from_kernel_nofault(p->entry, (void *)f->addr,
							  min_t(unsigned int, f->size, ENTRY_BYTES));
		p->rp.kp.addr = (okp_kprobe_opcode_t *)f->addr;
		p->rp.entry_handler = ret_entry;
		p->rp.handler = ret_handler;
		p->rp.data_size = sizeof(struct cookie);
		p->rp.maxactive = ret_maxactive;
		rs.tried++;
		ret = okp_register_kretprobe(&p->rp);
		reason = okp_kprobe_reason(&p->rp.kp);
		if (!ret) {
			rs.accepted++;
			rs.errno_count[0]++;
			armed_rps[narmed_rps++] = &p->rp;
		} else {
			rs.refused++;
			if (ret > 0 || ret <= -256)
				rs.wrong_errno++;
			if (!reason[0]) {
				rs.no_reason++;
				sweep_note(f, "FAILURE a return probe on %s refused (%d) without a reason",
					   f->name, ret);
			}
			count_refusal(ret, reason[0] ? reason : "(no reason)", f);
		}
		if (sweep_new_splat()) {
			sweep_note(f, "FAILURE a splat while registering a return probe on %s", f->name);
			phase = R_ARMED;
			return -EIO;
		}
		cond_resched_tasks_rcu_qs();	/* see sweep.c's run_batch */
	}
	phase = R_ARMED;
	return 0;
}

/*
 * The sums, with returns read before entries for each probe (a return is counted after its
 * entry, so a probe can never show more returns than entries unless one was counted twice).
 */
static void sum_counts(long *in_flight, bool check_order)
{
	unsigned int i;

	*in_flight = 0;
	rs.entries = rs.returns = rs.reclaimed = rs.missed = 0;
	rs.fired = 0;
	for (i = 0; i < nrps; i++) {
		struct ret_probe *p = &rps[i];
		long r, e, rc, flight;

		r = atomic_long_read(&p->returns);
		e = atomic_long_read(&p->entries);
		rc = READ_ONCE(p->rp.nreclaimed);
		flight = e - r - rc;
		if (check_order && r > e)
			rs.check_bad_order++;
		if (flight < 0)
			rs.negative_flight++;
		*in_flight += flight;
		rs.entries += e;
		rs.returns += r;
		rs.reclaimed += rc;
		rs.missed += READ_ONCE(p->rp.nmissed);
		rs.fired += r > 0;
	}
}

/* With every other CPU spinning in the stopper, irqs off: nothing is half done. */
static int quiescent_snapshot(void *unused)
{
	sum_counts(&rs.in_flight_armed, true);
	rs.stubs_armed = okp_return_stubs_in_use();
	return 0;
}

static int return_check(void)
{
	if (phase != R_ARMED)
		return -EBUSY;
	rs.checks++;
	stop_machine(quiescent_snapshot, NULL, NULL);
	if (rs.in_flight_armed != rs.stubs_armed) {
		rs.check_bad_sum++;
		pr_err("OKP-RETURN: FAILURE in flight %ld (entries %ld - returns %ld - reclaimed %ld) != return stubs in use %ld\n",
		       rs.in_flight_armed, rs.entries, rs.returns, rs.reclaimed, rs.stubs_armed);
	}
	return 0;
}

static int return_release(void)
{
	unsigned int i;

	if (phase != R_ARMED)
		return -EBUSY;
	if (narmed_rps)
		okp_unregister_kretprobes(armed_rps, narmed_rps);
	phase = R_RELEASED;
	for (i = 0; i < nrps; i++) {
		struct ret_probe *p = &rps[i];

		p->frozen_returns = atomic_long_read(&p->returns);
		p->frozen_entries = atomic_long_read(&p->entries);
		p->frozen_reclaimed = READ_ONCE(p->rp.nreclaimed);
	}
	sum_counts(&rs.in_flight_release, true);
	rs.stubs_release = okp_return_stubs_in_use();
	return 0;
}

static int return_verify(void)
{
	unsigned int i;
	u8 now[ENTRY_BYTES];

	if (phase != R_RELEASED)
		return -EBUSY;
	for (i = 0; i < nrps; i++) {
		struct ret_probe *p = &rps[i];
		struct sweep_func *f = sweep_func(p->func);
		unsigned int len = min_t(unsigned int, f->size, ENTRY_BYTES);

		if (atomic_long_read(&p->entries) != p->frozen_entries ||
		    atomic_long_read(&p->returns) != p->frozen_returns) {
			rs.frozen_bad++;
			sweep_note(f, "FAILURE a handler of %s ran after unregister: entries %ld->%ld returns %ld->%ld",
				   f->name, p->frozen_entries, atomic_long_read(&p->entries),
				   p->frozen_returns, atomic_long_read(&p->returns));
		}
		if (p->entry_read && (copy_from_kernel_nofault(now, (void *)f->addr, len) ||
				      memcmp(now, p->entry, len))) {
			rs.text_bad++;
			sweep_note(f, "FAILURE %s's entry not restored: %*ph, was %*ph", f->name,
				   (int)len, now, (int)len, p->entry);
		}
	}
	rs.stubs_verify = okp_return_stubs_in_use();
	/* Frames that were in flight at unregister may still be out; nothing else may hold one. */
	if (rs.stubs_verify > max(rs.in_flight_release, 0L))
		rs.stubs_left_bad++;
	phase = R_VERIFIED;
	return 0;
}

static unsigned long return_failures(void)
{
	return rs.no_reason + rs.wrong_errno + rs.check_bad_order + rs.check_bad_sum +
	       rs.frozen_bad + rs.stubs_left_bad + rs.text_bad + rs.negative_flight +
	       atomic_long_read(&cookie_bad) + atomic_long_read(&task_bad);
}

static ssize_t return_write(struct file *file, const char __user *ubuf, size_t count,
			    loff_t *ppos)
{
	char cmd[16];
	size_t n = min(count, sizeof(cmd) - 1);
	int ret;

	if (copy_from_user(cmd, ubuf, n))
		return -EFAULT;
	cmd[n] = '\0';
	strim(cmd);
	sweep_lock();
	if (!strcmp(cmd, "run"))
		ret = return_run();
	else if (!strcmp(cmd, "check"))
		ret = return_check();
	else if (!strcmp(cmd, "release"))
		ret = return_release();
	else if (!strcmp(cmd, "verify"))
		ret = return_verify();
	else
		ret = -EINVAL;
	sweep_unlock();
	return ret ? ret : count;
}

static int cmp_rclass(const void *a, const void *b)
{
	const struct ret_class *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static int return_show(struct seq_file *m, void *v)
{
	static const char *const phase_name[] = { "idle", "armed", "released", "verified" };
	unsigned int i, e;
	bool pass;

	sweep_lock();
	pass = phase == R_VERIFIED && rs.checks > 0 && !return_failures();
	seq_printf(m, "OKP-RETURN: %s phase=%s funcs=%lu accepted=%lu refused=%lu failures=%lu "
		   "no_reason=%lu wrong_errno=%lu entries=%ld returns=%ld reclaimed=%ld missed=%ld "
		   "fired=%lu checks=%lu check_order_bad=%lu check_sum_bad=%lu negative_flight=%lu "
		   "in_flight_armed=%ld stubs_armed=%ld in_flight_release=%ld stubs_release=%ld "
		   "stubs_verify=%ld frozen_bad=%lu stubs_left_bad=%lu text_bad=%lu cookie_bad=%ld "
		   "task_bad=%ld\n", pass ? "PASS" : "FAIL", phase_name[phase], rs.tried,
		   rs.accepted, rs.refused, return_failures(), rs.no_reason, rs.wrong_errno,
		   rs.entries, rs.returns, rs.reclaimed, rs.missed, rs.fired, rs.checks,
		   rs.check_bad_order, rs.check_bad_sum, rs.negative_flight, rs.in_flight_armed,
		   rs.stubs_armed, rs.in_flight_release, rs.stubs_release, rs.stubs_verify,
		   rs.frozen_bad, rs.stubs_left_bad, rs.text_bad, atomic_long_read(&cookie_bad),
		   atomic_long_read(&task_bad));
	for (e = 0; e < 256; e++)
		if (rs.errno_count[e])
			seq_printf(m, "OKP-RETURN: errno %d count %lu\n", -(int)e, rs.errno_count[e]);
	sort(rclasses, nrclasses, sizeof(rclasses[0]), cmp_rclass, NULL);
	for (i = 0; i < nrclasses; i++)
		seq_printf(m, "OKP-RETURN: reason \"%s\" count %lu errno %d e.g. %s\n",
			   rclasses[i].text, rclasses[i].count, rclasses[i].err, rclasses[i].example);
	if (rclasses_dropped)
		seq_printf(m, "OKP-RETURN: reason \"(more classes than the table holds)\" count %lu\n",
			   rclasses_dropped);
	sweep_unlock();
	return 0;
}

static int return_open(struct inode *inode, struct file *file)
{
	return single_open(file, return_show, NULL);
}

static const struct file_operations return_fops = {
	.owner = THIS_MODULE,
	.open = return_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = return_write,
};

void return_init(struct dentry *dir)
{
	debugfs_create_file("return", 0600, dir, NULL, &return_fops);
}

/* Module exit, sweep.c's mutex held or no longer needed. */
void return_exit(void)
{
	if (phase == R_ARMED && narmed_rps)
		okp_unregister_kretprobes(armed_rps, narmed_rps);
	kvfree(rps);
	kvfree(armed_rps);
	rps = NULL;
	armed_rps = NULL;
}
