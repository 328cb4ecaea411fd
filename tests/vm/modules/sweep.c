// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep: a probe at every byte of a deterministic sample of vmlinux functions.
 *
 * The guest script (tests/vm/scripts/sweep.sh) writes vmlinux text symbols, as /proc/kallsyms
 * lines "ADDR t|T NAME", to /sys/kernel/debug/okp_sweep/funcs. Of those that are functions
 * (t/T, not __pfx_ or .L, 0 < size <= max_size, the first name of their address, vmlinux and
 * not a module) the module keeps every stride-th one, counted from `start` (an index into
 * that list or a symbol name), at most max_funcs of them.
 *
 * Each write to `run` sweeps the next batch: for each function it reads the live text with
 * copy_from_kernel_nofault, finds the instruction boundaries with the kernel's own x86 decoder
 * (arch/x86/lib/insn.c and inat.c compiled into this module: a decoder other than okprobes'),
 * then calls okp_register_kprobe at every byte offset with a pre_handler that only counts.
 * Expected: every offset that is not a boundary is refused with -EILSEQ (or, counted apart, as
 * okprobes checks these first: -EINVAL "blacklisted" or -EBUSY "static call trampoline" (whole
 * functions refused before decoding), or -EBUSY because an int3 before it that
 * okprobes cannot explain, e.g. after a call, hides where the instructions are); every boundary is accepted or refused with
 * another errno and a non-empty reason, except that a last instruction whose bytes run past
 * the symbol's end (retbleed_untrain_ret's "test $0xcc,%bl" overlapping the next symbol) may
 * be refused with -EILSEQ: okprobes decodes within the symbol (counted apart). Accepted probes stay armed until the script wrote
 * `release` (after running a workload): up to max_armed probes at once, a batch ends early
 * there, in the middle of a function if need be. `release` unregisters them in one
 * okp_unregister_kprobes and checks that every byte of the batch's functions is again what
 * it was before the sweep.
 *
 * `state` says how far the sweep is; `report` prints the OKP-SWEEP summary line, the tables
 * by errno and by reason, and the first failures. A failure is also logged with pr_err
 * (rate-limited): function+offset, the instruction holding it (offset, bytes), errno, reason.
 *
 * Files: this one (the module: parameters, debugfs files, state and report),
 * sweep_intake.c (the function list), sweep_batch.c (a batch: probes at every byte, release),
 * sweep_reasons.c (refusals grouped, notes); what they share: sweep_state.h.
 *
 * With coverage=1 the same functions serve the jump-optimization coverage measurement
 * (sweep_coverage.c): `run`/`release` then step its batches, and kregister, kwait, krelease
 * appear for the kernel's own kprobes.
 */
#include <linux/atomic.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <okprobes/okprobes.h>
#include "sweep.h"
#include "sweep_state.h"

uint sweep_max_armed = 1500;	/* okprobes has 4096 out-of-line slots */
module_param_named(max_armed, sweep_max_armed, uint, 0444);
MODULE_PARM_DESC(max_armed, "most probes armed at once (a batch ends there)");
static bool coverage;
module_param(coverage, bool, 0444);
MODULE_PARM_DESC(coverage, "jump-optimization coverage, okprobes vs the kernel (sweep_coverage.c)");

static DEFINE_MUTEX(lock);
static struct dentry *dir;

static unsigned long sweep_failures(void)
{
	return sweep_st.nb_accepted + sweep_st.nb_wrong + sweep_st.b_ilseq + sweep_st.b_no_reason +
	       sweep_st.text_mismatch + sweep_st.splat;
}

void sweep_lock(void)
{
	mutex_lock(&lock);
}

void sweep_unlock(void)
{
	mutex_unlock(&lock);
}

static ssize_t run_write(struct file *file, const char __user *ubuf, size_t count, loff_t *ppos)
{
	int ret;

	mutex_lock(&lock);
	ret = coverage ? coverage_run() : sweep_run_batch();
	mutex_unlock(&lock);
	return ret ? ret : count;
}

static ssize_t release_write(struct file *file, const char __user *ubuf, size_t count,
			     loff_t *ppos)
{
	int ret = 0;

	mutex_lock(&lock);
	if (coverage)
		ret = coverage_release();
	else
		sweep_release_batch();
	mutex_unlock(&lock);
	return ret ? ret : count;
}

/* Coverage mode: the kernel's kprobes at the batch's addresses (sweep_coverage.c). */
static ssize_t kstep_write(struct file *file, const char __user *ubuf, size_t count,
			   loff_t *ppos)
{
	int (*step)(void) = file->private_data;
	int ret;

	mutex_lock(&lock);
	ret = step();
	mutex_unlock(&lock);
	return ret ? ret : count;
}

static const struct file_operations kstep_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = kstep_write,
	.llseek = noop_llseek,
};

static const struct file_operations run_fops = {
	.owner = THIS_MODULE,
	.write = run_write,
	.llseek = noop_llseek,
};

static const struct file_operations release_fops = {
	.owner = THIS_MODULE,
	.write = release_write,
	.llseek = noop_llseek,
};

static int state_show(struct seq_file *m, void *v)
{
	mutex_lock(&lock);
	if (coverage) {
		coverage_state(m);
		mutex_unlock(&lock);
		return 0;
	}
	seq_printf(m, "funcs=%u done=%lu armed=%u hits=%ld failures=%lu offsets=%lu batches=%lu\n",
		   sweep_nfuncs(), sweep_st.funcs_done, sweep_narmed, sweep_hits(), sweep_failures(),
		   sweep_st.offsets, sweep_st.batches);
	mutex_unlock(&lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(state);

static int report_show(struct seq_file *m, void *v)
{
	unsigned int i, nfuncs = sweep_nfuncs();
	bool pass;

	mutex_lock(&lock);
	if (coverage) {
		coverage_report(m);
		mutex_unlock(&lock);
		return 0;
	}
	pass = nfuncs > 0 && sweep_st.funcs_done == nfuncs && !sweep_narmed && !sweep_failures();
	seq_printf(m, "OKP-SWEEP: %s funcs=%lu offsets=%lu boundaries=%lu accepted=%lu moved=%lu "
		   "refused_boundary=%lu nonboundaries=%lu refused_ilseq_ok=%lu "
		   "refused_blacklisted_ok=%lu refused_hidden_ok=%lu hits=%ld failures=%lu text_mismatch=%lu "
		   "crossing_end_ilseq=%lu decode_stops=%lu unreadable=%lu batches=%lu max_armed=%lu register_ms=%llu "
		   "(accepting %llu, refusing %llu) unregister_ms=%llu\n", pass ? "PASS" : "FAIL",
		   sweep_st.funcs_done, sweep_st.offsets, sweep_st.boundaries, sweep_st.accepted,
		   sweep_st.moved, sweep_st.b_refused, sweep_st.nonboundaries, sweep_st.nb_ilseq,
		   sweep_st.nb_blacklisted, sweep_st.nb_hidden, sweep_hits(), sweep_failures(),
		   sweep_st.text_mismatch, sweep_st.b_crossing_ilseq, sweep_st.decode_stops,
		   sweep_st.unreadable, sweep_st.batches, sweep_st.max_armed,
		   div_u64(sweep_st.register_ns, NSEC_PER_MSEC), div_u64(sweep_st.accept_ns, NSEC_PER_MSEC),
		   div_u64(sweep_st.refuse_ns, NSEC_PER_MSEC), div_u64(sweep_st.unregister_ns, NSEC_PER_MSEC));
	sweep_show_selection(m, "OKP-SWEEP");
	seq_printf(m, "OKP-SWEEP: failures: nonboundary_accepted=%lu nonboundary_wrong_errno=%lu "
		   "boundary_ilseq=%lu boundary_no_reason=%lu text_mismatch=%lu\n", sweep_st.nb_accepted,
		   sweep_st.nb_wrong, sweep_st.b_ilseq, sweep_st.b_no_reason, sweep_st.text_mismatch);
	reasons_show(m);
	for (i = 0; i < NHOT && sweep_hot[i].nhit; i++)
		seq_printf(m, "OKP-SWEEP: hot %s hits %lu\n", sweep_hot[i].where, sweep_hot[i].nhit);
	sweep_show_notes(m, "OKP-SWEEP");
	mutex_unlock(&lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(report);

static int __init okp_sweep_init(void)
{
	int ret;

	if (okp_api_version() != OKP_API_VERSION)
		return -EPROTO;
	if (!sweep_max_armed)
		return -EINVAL;
	ret = intake_init();
	if (ret)
		return ret;
	sweep_splat_init();
	if (coverage) {
		ret = coverage_init();
		if (ret)
			return ret;
	} else {
		sweep_kps = kvcalloc(sweep_max_armed, sizeof(*sweep_kps), GFP_KERNEL);
		sweep_armed_probes = kvcalloc(sweep_max_armed, sizeof(*sweep_armed_probes), GFP_KERNEL);
		if (!sweep_kps || !sweep_armed_probes) {
			kvfree(sweep_kps);
			kvfree(sweep_armed_probes);
			return -ENOMEM;
		}
	}
	dir = debugfs_create_dir("okp_sweep", NULL);
	debugfs_create_file("funcs", 0200, dir, NULL, &sweep_funcs_fops);
	debugfs_create_file("run", 0200, dir, NULL, &run_fops);
	debugfs_create_file("release", 0200, dir, NULL, &release_fops);
	debugfs_create_file("state", 0400, dir, NULL, &state_fops);
	debugfs_create_file("report", 0400, dir, NULL, &report_fops);
	if (coverage) {
		debugfs_create_file("kregister", 0200, dir, coverage_kregister, &kstep_fops);
		debugfs_create_file("kwait", 0200, dir, coverage_kwait, &kstep_fops);
		debugfs_create_file("krelease", 0200, dir, coverage_krelease, &kstep_fops);
	}
	/* sweep_return.c and sweep_decode.c: their own debugfs files, run by the script. */
	return_init(dir);
	optimize_init(dir);
	return decode_init(dir);
}

static void __exit okp_sweep_exit(void)
{
	debugfs_remove(dir);
	return_exit();
	decode_exit();
	if (coverage)
		coverage_exit();
	else
		sweep_release_batch();
	intake_exit();
	reasons_exit();
	kvfree(sweep_kps);
	kvfree(sweep_armed_probes);
}

module_init(okp_sweep_init);
module_exit(okp_sweep_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: a probe at every byte of a sample of vmlinux functions");
