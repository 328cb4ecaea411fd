// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/okprobes/{list,enabled,blacklist,refused}, root-only (explain: explain.c).
 *
 * list, blacklist and refused are read through seq_file; the core produces their lines. enabled disarms/re-arms every probe
 * without touching each probe's own disabled state; anything but 0/1 is -EINVAL.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "okp_glue.h"

static struct dentry *okp_debugfs_dir;

static void okp_emit_line(void *ctx, const char *line)
{
	seq_printf(ctx, "%s\n", line);
}

static int okp_list_show(struct seq_file *m, void *v)
{
	okp_core_list_show(okp_emit_line, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(okp_list);

static int okp_blacklist_show(struct seq_file *m, void *v)
{
	okp_core_blacklist_show(okp_emit_line, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(okp_blacklist);

/* The last refusals: what was asked, the errno, and why (the probe may be gone by now). */
static int okp_refused_show(struct seq_file *m, void *v)
{
	okp_core_refused_show(okp_emit_line, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(okp_refused);

/* Which return mechanism return probes registered now get, and why (rethook.c). */
static int okp_return_probes_show(struct seq_file *m, void *v)
{
	const char *why_stubs = okp_seam_rethook_unusable();

	if (why_stubs)
		seq_printf(m, "stubs: %s\n", why_stubs);
	else if (!strcmp(okp_seam_kernel_return_route(), "kretprobe"))
		seq_puts(m, "kretprobe: the kernel's kretprobe trampoline; its unwinder shows the real callers\n");
	else
		seq_puts(m, "rethook: the kernel's rethook; its unwinders show the real callers\n");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(okp_return_probes);

static ssize_t okp_enabled_read(struct file *file, char __user *ubuf, size_t count, loff_t *ppos)
{
	char buf[3];

	buf[0] = okp_core_armed() ? '1' : '0';
	buf[1] = '\n';
	buf[2] = '\0';
	return simple_read_from_buffer(ubuf, count, ppos, buf, 2);
}

static ssize_t okp_enabled_write(struct file *file, const char __user *ubuf, size_t count,
				 loff_t *ppos)
{
	char buf[8];
	int armed, ret;

	if (count > sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	ret = okp_core_parse_switch(buf, count, &armed);
	if (ret)
		return ret;
	ret = okp_core_set_armed(armed);
	return ret ? ret : count;
}

static const struct file_operations okp_enabled_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = okp_enabled_read,
	.write = okp_enabled_write,
	.llseek = default_llseek,
};

int okp_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("okprobes", NULL);

	if (IS_ERR(dir)) {
		pr_err("cannot create debugfs directory: %ld\n", PTR_ERR(dir));
		return PTR_ERR(dir);
	}
	debugfs_create_file("list", 0400, dir, NULL, &okp_list_fops);
	debugfs_create_file("enabled", 0600, dir, NULL, &okp_enabled_fops);
	debugfs_create_file("blacklist", 0400, dir, NULL, &okp_blacklist_fops);
	debugfs_create_file("refused", 0400, dir, NULL, &okp_refused_fops);
	debugfs_create_file("return_probes", 0400, dir, NULL, &okp_return_probes_fops);
	okp_explain_debugfs(dir);
#ifdef OKP_JUMP_PROBES
	okp_task_snapshot_debugfs(dir);	/* optimizer_waits */
#endif
	okp_debugfs_dir = dir;
	return 0;
}

void okp_debugfs_exit(void)
{
	debugfs_remove(okp_debugfs_dir);
	okp_debugfs_dir = NULL;
}
