// SPDX-License-Identifier: GPL-2.0
/*
 * The driver of the kprobe-events benchmark (tests/bench/events): okprobes' kprobe event
 * against the kernel's own on the same instruction. The events are defined, enabled and read
 * by the guest script (tests/bench/events-guest.sh) through the two kprobe_events files, as a
 * user would; this module only gives them a site and calls it, timed. It is no client of
 * okprobes (it calls none of its API), so the kernel's kprobe event and okprobes' are treated
 * alike.
 *
 * /sys/kernel/debug/okp_bench_events/
 *   site    the probed instruction as kprobe_events names it: "okp_bench_event_target+0x..",
 *           its `add $1,%rax`
 *   run     write N: call okp_bench_event_target(&okp_bench_event_record) N times in a loop,
 *           timed with ktime_get_ns() around the loop, each result checked; read: "NS N ERR",
 *           the last run's time, calls and wrong results
 *   jump    1 when the site's first byte is a jmp rel32 (a framework's jump optimization is
 *           in the text), else 0
 *   intact  1 when the site's 7 bytes (add + mov, the jump's region) are those of load time
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/* What the events read: +0(%di) is magic (the benchmark's deref argument). */
struct okp_bench_event_record {
	u64 magic;
};
static struct okp_bench_event_record okp_bench_event_record = {
	.magic = 0x1122334455667788ULL,
};

/*
 * The probed function: C, so that it has an ftrace site (the kernel's kprobe events refuse a
 * function without one, "Could not probe notrace function", unless
 * CONFIG_KPROBE_EVENTS_ON_NOTRACE), its body the instructions the probe goes on, in inline
 * assembly so that both frameworks see exactly these: no branch, every instruction boostable
 * and position-independent (the shape of okp_bench_target_opt, okp_bench_text.S), so the probe
 * at `add $1,%rax` is an int3 with optimization off and, with it on, a jmp rel32 over `add` +
 * `mov` (7 bytes) in both frameworks. %rdi holds r at the probe (the events' %di, +0(%di)).
 * Returns (unsigned long)r + 1.
 */
static const u8 site_pattern[] = {
	0x48, 0x89, 0xf8,		/* mov %rdi,%rax */
	0x48, 0x83, 0xc0, 0x01,		/* add $1,%rax: the probe */
	0x48, 0x89, 0xc2,		/* mov %rax,%rdx */
};
#define SITE_OFFSET 3	/* of the add in the pattern */

noinline unsigned long okp_bench_event_target(const struct okp_bench_event_record *r)
{
	unsigned long ret;

	asm volatile("mov %%rdi, %%rax\n\tadd $1, %%rax\n\tmov %%rax, %%rdx"
		     : "=a" (ret) : "D" (r) : "rdx", "cc");
	return ret;
}

#define SITE_LEN 7	/* add $1,%rax; mov %rax,%rdx: the region a jump replaces */
static u8 *site;
static u8 site_bytes[SITE_LEN];
static u64 last_ns;
static unsigned long last_calls, last_errors;
static struct dentry *dir;

/* The loop; direct calls, no retpoline. The compiler cannot drop a call: the result counts. */
static noinline unsigned long run_calls(unsigned long n, u64 *ns)
{
	const unsigned long want = (unsigned long)&okp_bench_event_record + 1;
	unsigned long i, wrong = 0;
	u64 t0;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		wrong += okp_bench_event_target(&okp_bench_event_record) != want;
	*ns = ktime_get_ns() - t0;
	return wrong;
}

static ssize_t run_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	unsigned long n;
	int ret = kstrtoul_from_user(ubuf, len, 0, &n);

	if (ret)
		return ret;
	if (!n || n > 10000000)
		return -EINVAL;
	last_errors = run_calls(n, &last_ns);
	last_calls = n;
	return len;
}

static ssize_t run_read(struct file *f, char __user *ubuf, size_t len, loff_t *pos)
{
	char buf[64];
	int n = scnprintf(buf, sizeof(buf), "%llu %lu %lu\n", last_ns, last_calls, last_errors);

	return simple_read_from_buffer(ubuf, len, pos, buf, n);
}

static const struct file_operations run_fops = {
	.owner = THIS_MODULE,
	.write = run_write,
	.read = run_read,
	.llseek = default_llseek,
};

static ssize_t site_read(struct file *f, char __user *ubuf, size_t len, loff_t *pos)
{
	char buf[64];
	int n = scnprintf(buf, sizeof(buf), "okp_bench_event_target+0x%lx\n",
			  (unsigned long)(site - (u8 *)okp_bench_event_target));

	return simple_read_from_buffer(ubuf, len, pos, buf, n);
}

static const struct file_operations site_fops = {
	.owner = THIS_MODULE,
	.read = site_read,
	.llseek = default_llseek,
};

static int jump_get(void *data, u64 *val)
{
	*val = READ_ONCE(*site) == 0xe9;	/* jmp rel32 */
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(jump_fops, jump_get, NULL, "%llu\n");

static int intact_get(void *data, u64 *val)
{
	*val = !memcmp(site, site_bytes, SITE_LEN);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(intact_fops, intact_get, NULL, "%llu\n");

static int __init okp_bench_events_init(void)
{
	u8 *fn = (u8 *)okp_bench_event_target;
	unsigned int i;

	/* The inline assembly, after whatever the compiler put first (ENDBR64, the ftrace call). */
	for (i = 0; i < 32 && !site; i++) {
		if (!memcmp(fn + i, site_pattern, sizeof(site_pattern)))
			site = fn + i + SITE_OFFSET;
	}
	if (!site) {
		pr_err("EVB-ERROR okp_bench_event_target: its inline assembly not found in its first 32 bytes\n");
		return -ENOEXEC;
	}
	memcpy(site_bytes, site, SITE_LEN);
	dir = debugfs_create_dir("okp_bench_events", NULL);
	debugfs_create_file("site", 0444, dir, NULL, &site_fops);
	debugfs_create_file("run", 0600, dir, NULL, &run_fops);
	debugfs_create_file("jump", 0444, dir, NULL, &jump_fops);
	debugfs_create_file("intact", 0444, dir, NULL, &intact_fops);
	return 0;
}

static void __exit okp_bench_events_exit(void)
{
	debugfs_remove(dir);
}

module_init(okp_bench_events_init);
module_exit(okp_bench_events_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes benchmark: a site and a timed loop for kprobe events (tests/bench/events)");
