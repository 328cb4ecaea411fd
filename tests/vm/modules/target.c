// SPDX-License-Identifier: GPL-2.0
/*
 * A module whose text guest scripts probe. Writing N to /sys/kernel/debug/okp_target/call
 * calls okp_target_fn N times; reading it gives the last result (so a script can check that
 * probed code still computes (x + 1) * 2); call_opt does the same for okp_target_opt.
 * call_read calls okp_target_read(&okp_target_record, 7): known memory for kprobe events'
 * fetch arguments (tests/vm/scripts/events.sh).
 */
#include <linux/debugfs.h>
#include <linux/module.h>

unsigned long okp_target_fn(unsigned long x);
unsigned long okp_target_opt(unsigned long x);

static struct dentry *dir;

/* Offsets events.sh names: magic 0, negative 8, bits 12, name 16, name_ptr 32, names 40 (an
 * array of string pointers, the last NULL, for string[N]), long_name 64 and longer_name 72
 * (strings of 3000 and 6000 letters: under and over the kernel's 4095). */
struct okp_target_record {
	u64 magic;
	s32 negative;
	u32 bits;
	char name[16];
	const char *name_ptr;
	const char *names[3];
	const char *long_name;
	const char *longer_name;
};
static char okp_target_long[3000 + 1], okp_target_longer[6000 + 1];
struct okp_target_record okp_target_record = {
	.magic = 0x1122334455667788ULL,
	.negative = -5,
	.bits = 0xa5,
	.name = "okprobes",
	.name_ptr = "pointed-to",
	.names = { "one", "two", NULL },
	.long_name = okp_target_long,
	.longer_name = okp_target_longer,
};
noinline unsigned long okp_target_read(const struct okp_target_record *r, unsigned long n);
noinline unsigned long okp_target_read(const struct okp_target_record *r, unsigned long n)
{
	/* the barrier keeps the call and its arguments: the compiler sees r escape */
	barrier_data((void *)r);
	return r->negative + n;
}
static u64 last;

static int call_set(void *data, u64 n)
{
	u64 i;

	for (i = 0; i < n; i++)
		last = okp_target_fn(i + 20);
	return 0;
}

static int call_get(void *data, u64 *val)
{
	*val = last;
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(call_fops, call_get, call_set, "%llu\n");

/* The same for okp_target_opt (x + 1) * 2 + 3: a target for jump-optimized probes. */
static int call_opt_set(void *data, u64 n)
{
	u64 i;

	for (i = 0; i < n; i++)
		last = okp_target_opt(i + 20);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(call_opt_fops, call_get, call_opt_set, "%llu\n");

static int call_read_set(void *data, u64 n)
{
	u64 i;

	for (i = 0; i < n; i++)
		last = okp_target_read(&okp_target_record, 7);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(call_read_fops, call_get, call_read_set, "%llu\n");

/* init_calls=N: okp_target_fn(10..) N times in the module's init, for probes that must be armed
 * by then (events.sh: an event on a module not loaded yet fires in its init). */
static unsigned int init_calls;
module_param(init_calls, uint, 0400);

static int __init okp_target_init(void)
{
	unsigned int i;

	/* "abc...xyzabc...", NUL-terminated by the arrays' last byte */
	for (i = 0; i + 1 < sizeof(okp_target_longer); i++) {
		okp_target_longer[i] = 'a' + i % 26;
		if (i + 1 < sizeof(okp_target_long))
			okp_target_long[i] = 'a' + i % 26;
	}
	for (i = 0; i < init_calls; i++)
		last = okp_target_fn(i + 10);
	dir = debugfs_create_dir("okp_target", NULL);
	debugfs_create_file("call", 0600, dir, NULL, &call_fops);
	debugfs_create_file("call_opt", 0600, dir, NULL, &call_opt_fops);
	debugfs_create_file("call_read", 0600, dir, NULL, &call_read_fops);
	return 0;
}

static void __exit okp_target_exit(void)
{
	debugfs_remove(dir);
}

module_init(okp_target_init);
module_exit(okp_target_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: a module whose text guest scripts probe");
