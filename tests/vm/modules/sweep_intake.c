// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep: the function list. The guest script writes /proc/kallsyms lines to the debugfs
 * file "funcs"; of the vmlinux functions among them the module keeps every stride-th one,
 * counted from `start`, at most max_funcs of them (sweep.c describes which are eligible).
 */
#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <okprobes/okprobes.h>
#include "sweep.h"
#include "sweep_state.h"

static uint stride = 150;	/* Debian 12's stock kernel: a few hundred functions */
module_param(stride, uint, 0444);
MODULE_PARM_DESC(stride, "sweep every stride-th eligible vmlinux function");
static uint max_funcs;		/* 0: no limit */
module_param(max_funcs, uint, 0444);
MODULE_PARM_DESC(max_funcs, "at most this many functions (0: no limit)");
static char *start;
module_param(start, charp, 0444);
MODULE_PARM_DESC(start, "first function: an index into the eligible list, or a symbol name");
uint sweep_max_size = 64 * 1024;
module_param_named(max_size, sweep_max_size, uint, 0444);
MODULE_PARM_DESC(max_size, "skip functions larger than this");

/* Intake. */
static struct sweep_func *funcs;
static unsigned int nfuncs, funcs_cap;
static unsigned long eligible, lines_in, skipped_size, skipped_alias, skipped_other;
static bool started;
static unsigned long start_index, base_index;
static char line[KSYM_NAME_LEN + 64];
static size_t line_len;
static bool line_overflow;

static bool grow_funcs(void)
{
	unsigned int cap = funcs_cap ? funcs_cap * 2 : 1024;
	struct sweep_func *n = kvcalloc(cap, sizeof(*n), GFP_KERNEL);

	if (!n)
		return false;
	if (funcs)
		memcpy(n, funcs, nfuncs * sizeof(*n));
	kvfree(funcs);
	funcs = n;
	funcs_cap = cap;
	return true;
}

/* "ffffffff81000000 T name": eligible if a vmlinux function whose first name this is. */
static int take_line(char *l)
{
	static char sym[KSYM_SYMBOL_LEN];
	static char name[KSYM_NAME_LEN];
	unsigned long addr, size, idx;
	char type, *plus, *slash;
	struct sweep_func *f;

	lines_in++;
	if (sscanf(l, "%lx %c %511s", &addr, &type, name) != 3 || strchr(l, '[') ||
	    (type != 't' && type != 'T') || !strncmp(name, "__pfx_", 6) ||
	    !strncmp(name, ".L", 2)) {
		skipped_other++;
		return 0;
	}
	sprint_symbol(sym, addr);
	plus = strrchr(sym, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (!plus || !slash || strchr(sym, '[') || strncmp(plus, "+0x0/", 5)) {
		skipped_other++;	/* a module's, or not a symbol start */
		return 0;
	}
	*plus = '\0';
	if (strcmp(sym, name)) {
		skipped_alias++;	/* a second name of an address: swept under the first */
		return 0;
	}
	if (kstrtoul(slash + 1, 16, &size) || size == 0 || size > sweep_max_size) {
		skipped_size++;
		return 0;
	}
	idx = eligible++;
	if (!started) {
		if (!start || !*start)
			started = true;
		else if (isdigit(start[0]))
			started = idx >= start_index;
		else
			started = !strcmp(name, start);
		if (!started)
			return 0;
		base_index = idx;
	}
	if ((idx - base_index) % (stride ? stride : 1) || (max_funcs && nfuncs >= max_funcs))
		return 0;
	if (nfuncs == funcs_cap && !grow_funcs())
		return -ENOMEM;
	f = &funcs[nfuncs];
	memset(f, 0, sizeof(*f));
	f->addr = addr;
	f->size = size;
	f->name = kstrdup(name, GFP_KERNEL);
	if (!f->name)
		return -ENOMEM;
	nfuncs++;
	return 0;
}

static ssize_t funcs_write(struct file *file, const char __user *ubuf, size_t count,
			   loff_t *ppos)
{
	char chunk[256];
	size_t done = 0;
	int ret = 0;

	sweep_lock();
	if (sweep_started()) {
		ret = -EBUSY;	/* the sweep started: the list is fixed */
		goto out;
	}
	while (done < count && !ret) {
		size_t n = min(count - done, sizeof(chunk)), i;

		if (copy_from_user(chunk, ubuf + done, n)) {
			ret = -EFAULT;
			break;
		}
		for (i = 0; i < n && !ret; i++) {
			if (chunk[i] != '\n') {
				if (line_len < sizeof(line) - 1)
					line[line_len++] = chunk[i];
				else
					line_overflow = true;
				continue;
			}
			line[line_len] = '\0';
			if (!line_overflow && line_len)
				ret = take_line(line);
			line_len = 0;
			line_overflow = false;
		}
		done += n;
		cond_resched();
	}
out:
	sweep_unlock();
	return ret ? ret : count;
}

const struct file_operations sweep_funcs_fops = {
	.owner = THIS_MODULE,
	.write = funcs_write,
	.llseek = noop_llseek,
};

unsigned int sweep_nfuncs(void)
{
	return nfuncs;
}

struct sweep_func *sweep_func(unsigned int i)
{
	return &funcs[i];
}

void sweep_show_selection(struct seq_file *m, const char *prefix)
{
	seq_printf(m, "%s: selection stride=%u start=%s max_funcs=%u: %u of %lu eligible "
		   "(lines %lu; skipped: %lu size, %lu alias, %lu other)\n", prefix, stride,
		   start ? start : "0", max_funcs, nfuncs, eligible, lines_in, skipped_size,
		   skipped_alias, skipped_other);
}

int intake_init(void)
{
	if (sweep_max_size > 1024 * 1024)
		return -EINVAL;
	if (start && isdigit(start[0]) && kstrtoul(start, 0, &start_index))
		return -EINVAL;
	return 0;
}

void intake_exit(void)
{
	unsigned int i;

	for (i = 0; i < nfuncs; i++) {
		sweep_free_func(&funcs[i]);
		kfree(funcs[i].name);
	}
	kvfree(funcs);
}
