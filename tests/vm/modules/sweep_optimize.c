// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep with jump optimization on: after a batch's probes are registered (sweep.c, a probe
 * at every boundary) and a first workload ran through them as okprobes left them, the script
 * writes /sys/kernel/debug/okp_sweep/optimize. The module waits for okprobes' optimizer
 * (okp_wait_for_optimizer: every probe registered before the call has been tried when it
 * returns) and counts what became of the armed probes: jump-optimized ([OPTIMIZED]), served by
 * ftrace (function entries), refused with a "not optimized: …" reason (by class), or none of
 * these (pending: a failure, the optimizer promised to be done). A second workload then runs
 * through the optimized probes, and `release` unregisters them: the jumps are taken out again
 * and sweep.c checks every byte of the text. Reading `optimize` prints the OKP-OPTIMIZE lines.
 * With every boundary probed, a jump's 5 bytes usually cover the next probe; the ones that
 * optimize are mostly at instructions of 5 bytes or more (calls, moves with 32-bit constants).
 */
#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <okprobes/okprobes.h>
#include "sweep.h"

#define OPT_CLASSES 48
#define OPT_CLASS_LEN 96

struct opt_class {
	unsigned long count;
	char text[OPT_CLASS_LEN];
	char example[OKP_REASON_MAX + 32];
};

static struct {
	unsigned long batches, armed, optimized, ftrace, not_optimized, pending, optimized_max;
	u64 wait_ns;
} os;
static struct opt_class oclasses[OPT_CLASSES];
static unsigned int noclasses;
static unsigned long oclasses_dropped;

static void count_not_optimized(const struct okp_kprobe *kp, const char *reason)
{
	char text[OPT_CLASS_LEN];
	unsigned int i;

	sweep_classify(reason, text, sizeof(text));
	for (i = 0; i < noclasses; i++) {
		if (!strcmp(oclasses[i].text, text)) {
			oclasses[i].count++;
			return;
		}
	}
	if (noclasses == OPT_CLASSES) {
		oclasses_dropped++;
		return;
	}
	oclasses[noclasses].count = 1;
	strscpy(oclasses[noclasses].text, text, sizeof(oclasses[0].text));
	snprintf(oclasses[noclasses].example, sizeof(oclasses[0].example), "%pS: %s", kp->addr,
		 reason);
	noclasses++;
}

/* After a batch's registration: wait for the optimizer, count what it did (sweep.c's lock). */
static int optimize_batch(void)
{
	unsigned int i, n, optimized = 0;
	struct okp_kprobe **armed = sweep_armed(&n);
	u64 t0 = ktime_get_ns();

	if (!n)
		return 0;
	okp_wait_for_optimizer();
	os.wait_ns += ktime_get_ns() - t0;
	os.batches++;
	for (i = 0; i < n; i++) {
		struct okp_kprobe *kp = armed[i];
		unsigned long flags = READ_ONCE(kp->flags);
		const char *reason = okp_kprobe_reason(kp);

		os.armed++;
		if (flags & OKP_KPROBE_FLAG_OPTIMIZED) {
			optimized++;
		} else if (flags & OKP_KPROBE_FLAG_FTRACE) {
			os.ftrace++;
		} else if (strstr(reason, "not optimized: ")) {
			/* Classed by what follows "not optimized: " (the reason proper). */
			os.not_optimized++;
			count_not_optimized(kp, strstr(reason, "not optimized: ") + 15);
		} else {
			os.pending++;
			sweep_note(NULL, "FAILURE %pS: neither optimized nor refused after okp_wait_for_optimizer (reason \"%s\")",
				   kp->addr, reason);
		}
	}
	os.optimized += optimized;
	os.optimized_max = max_t(unsigned long, os.optimized_max, optimized);
	return 0;
}

static ssize_t optimize_write(struct file *file, const char __user *ubuf, size_t count,
			      loff_t *ppos)
{
	int ret;

	sweep_lock();
	ret = optimize_batch();
	sweep_unlock();
	return ret ? ret : count;
}

static int cmp_oclass(const void *a, const void *b)
{
	const struct opt_class *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static int optimize_show(struct seq_file *m, void *v)
{
	unsigned int i;

	sweep_lock();
	seq_printf(m, "OKP-OPTIMIZE: batches=%lu armed=%lu optimized=%lu ftrace=%lu not_optimized=%lu "
		   "pending=%lu optimized_max_batch=%lu wait_ms=%llu\n", os.batches, os.armed,
		   os.optimized, os.ftrace, os.not_optimized, os.pending, os.optimized_max,
		   div_u64(os.wait_ns, NSEC_PER_MSEC));
	sort(oclasses, noclasses, sizeof(oclasses[0]), cmp_oclass, NULL);
	for (i = 0; i < noclasses; i++)
		seq_printf(m, "OKP-OPTIMIZE: reason \"%s\" count %lu e.g. %s\n", oclasses[i].text,
			   oclasses[i].count, oclasses[i].example);
	if (oclasses_dropped)
		seq_printf(m, "OKP-OPTIMIZE: reason \"(more classes than the table holds)\" count %lu\n",
			   oclasses_dropped);
	sweep_unlock();
	return 0;
}

static int optimize_open(struct inode *inode, struct file *file)
{
	return single_open(file, optimize_show, NULL);
}

static const struct file_operations optimize_fops = {
	.owner = THIS_MODULE,
	.open = optimize_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = optimize_write,
};

void optimize_init(struct dentry *dir)
{
	debugfs_create_file("optimize", 0600, dir, NULL, &optimize_fops);
}
