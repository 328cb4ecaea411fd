// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/okprobes/explain: write "[MOD:]SYM[+OFF]" or an address ("0xADDR[+OFF]", or
 * the bare hex digits /proc/kallsyms prints), read back one line: whether a probe there would
 * be accepted and how it would run, or the refusal a registration would give, in its words (okp_core_explain: the registration's own
 * checks, nothing registered or written). Bad input gets an "error (errno): ..." line and the
 * write fails with that errno. Each open file keeps its answer; a new open starts with the
 * last answer given, so that `echo SYM > explain; cat explain` works from a shell.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <okprobes/okprobes.h>

#include "okp_glue.h"

/* "module:symbol+0xoffset" at the longest, and some blanks around it. */
#define OKP_EXPLAIN_INPUT_MAX (MODULE_NAME_LEN + KSYM_NAME_LEN + 32)
#define OKP_EXPLAIN_ANSWER_MAX (OKP_REASON_MAX + KSYM_NAME_LEN + MODULE_NAME_LEN + 128)

struct okp_explain_file {
	char answer[OKP_EXPLAIN_ANSWER_MAX];
};

static DEFINE_MUTEX(okp_explain_last_lock);
static char okp_explain_last[OKP_EXPLAIN_ANSWER_MAX] =
	"write [MOD:]SYM[+OFF] or 0xADDR[+OFF], then read: would a probe there be accepted, "
	"and how would it run\n";

/* The 16 (or 8) hex digits of an address as /proc/kallsyms prints it. */
static bool okp_kallsyms_address(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return !s[n] && n == 2 * sizeof(long);
}

/* The request in s (modified in place): a symbol, or an address; 0 or -EINVAL with *why. */
static int okp_explain_parse(char *s, const char **symbol, unsigned long *addr,
			     unsigned int *offset, const char **why)
{
	char *plus;
	const char *c;

	s = strim(s);
	*symbol = NULL;
	*addr = 0;
	*offset = 0;
	if (!*s) {
		*why = "empty request: write [MOD:]SYM[+OFF] or 0xADDR[+OFF]";
		return -EINVAL;
	}
	plus = strrchr(s, '+');
	if (plus) {
		*plus = '\0';
		if (kstrtouint(plus + 1, 0, offset)) {
			*why = "the offset after '+' is not a number";
			return -EINVAL;
		}
	}
	if (!strncmp(s, "0x", 2) || okp_kallsyms_address(s)) {
		if (kstrtoul(s, 16, addr)) {
			*why = "the address is not a hexadecimal number";
			return -EINVAL;
		}
		return 0;
	}
	for (c = s; *c; c++) {
		if (!isalnum(*c) && !strchr("_.:$-", *c)) {
			*why = "a symbol is [MOD:]NAME of letters, digits and _ . $ "
			       "(addresses start with 0x)";
			return -EINVAL;
		}
	}
	*symbol = s;
	return 0;
}

static void okp_explain_answer(struct okp_explain_file *f, const char *line)
{
	snprintf(f->answer, sizeof(f->answer), "%s\n", line);
	mutex_lock(&okp_explain_last_lock);
	strscpy(okp_explain_last, f->answer, sizeof(okp_explain_last));
	mutex_unlock(&okp_explain_last_lock);
}

static int okp_explain_open(struct inode *inode, struct file *file)
{
	struct okp_explain_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	mutex_lock(&okp_explain_last_lock);
	strscpy(f->answer, okp_explain_last, sizeof(f->answer));
	mutex_unlock(&okp_explain_last_lock);
	file->private_data = f;
	return 0;
}

static int okp_explain_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static ssize_t okp_explain_read(struct file *file, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct okp_explain_file *f = file->private_data;

	return simple_read_from_buffer(ubuf, count, ppos, f->answer, strlen(f->answer));
}

static ssize_t okp_explain_write(struct file *file, const char __user *ubuf, size_t count,
				 loff_t *ppos)
{
	struct okp_explain_file *f = file->private_data;
	char line[OKP_EXPLAIN_ANSWER_MAX - 1];
	const char *symbol, *why;
	unsigned long addr;
	unsigned int offset;
	char *request;
	int ret;

	*ppos = 0;	/* the next read gives this request's answer from its start */
	if (count > OKP_EXPLAIN_INPUT_MAX) {
		snprintf(line, sizeof(line), "error (%d): a request is at most %d bytes, not %zu",
			 -EINVAL, (int)OKP_EXPLAIN_INPUT_MAX, count);
		ret = -EINVAL;
		goto bad_request;
	}
	request = memdup_user_nul(ubuf, count);
	if (IS_ERR(request))
		return PTR_ERR(request);
	ret = okp_explain_parse(request, &symbol, &addr, &offset, &why);
	if (ret) {
		kfree(request);
		snprintf(line, sizeof(line), "error (%d): %s", ret, why);
		goto bad_request;
	}
	okp_core_explain(symbol, addr, offset, line, sizeof(line));
	kfree(request);
	okp_explain_answer(f, line);
	return count;

bad_request:
	pr_notice_ratelimited("explain: %s\n", line);
	okp_explain_answer(f, line);
	return ret;
}

static const struct file_operations okp_explain_fops = {
	.owner = THIS_MODULE,
	.open = okp_explain_open,
	.release = okp_explain_release,
	.read = okp_explain_read,
	.write = okp_explain_write,
	.llseek = default_llseek,
};

void okp_explain_debugfs(struct dentry *dir)
{
	debugfs_create_file("explain", 0600, dir, NULL, &okp_explain_fops);
}
