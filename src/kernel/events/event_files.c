// SPDX-License-Identifier: GPL-2.0
/*
 * events/: enable (every event), events/GROUP/enable (the group's), and per event
 * events/GROUP/EVENT/{enable,format}, as in the kernel's tracing directory. Reading an enable
 * file of several events gives 0, 1, or X when they differ; writing 0 or 1 disables or
 * enables them all; anything else is -EINVAL. A group's directory exists while it has events.
 *
 * Locking (events.h): the files' operations take okp_events_mutex only; directories are
 * created and removed under okp_events_change_mutex, which none of them takes, so removal
 * (which waits for the operations in progress) cannot wait on one that waits on it.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "events.h"

static struct dentry *okp_events_dir;

/* What an enable file covers: every event, a group's, or one event. */
struct okp_enable_scope {
	const char *group;		/* NULL: every group */
	struct okp_event *event;	/* NULL: every event of the scope's group(s) */
};

struct okp_group_dir {
	struct list_head node;
	char name[OKP_EV_MAX_NAME_LEN];
	struct dentry *dir;
	unsigned int events;
	struct okp_enable_scope scope;
};

static LIST_HEAD(okp_group_dirs);
static struct okp_enable_scope okp_all_scope;

static bool okp_in_scope(const struct okp_enable_scope *scope, const struct okp_event *ev)
{
	if (scope->event)
		return scope->event == ev;
	return !scope->group || !strcmp(scope->group, ev->group);
}

static ssize_t okp_enable_read(struct file *file, char __user *ubuf, size_t count, loff_t *ppos)
{
	const struct okp_enable_scope *scope = file->private_data;
	bool any_on = false, any_off = false;
	struct okp_event *ev;
	char buf[2] = { '0', '\n' };

	mutex_lock(&okp_events_mutex);
	list_for_each_entry(ev, &okp_events, node)
		if (okp_in_scope(scope, ev)) {
			any_on |= ev->enabled;
			any_off |= !ev->enabled;
		}
	mutex_unlock(&okp_events_mutex);
	if (any_on)
		buf[0] = any_off ? 'X' : '1';
	return simple_read_from_buffer(ubuf, count, ppos, buf, sizeof(buf));
}

static ssize_t okp_enable_write(struct file *file, const char __user *ubuf, size_t count,
				loff_t *ppos)
{
	const struct okp_enable_scope *scope = file->private_data;
	struct okp_event *ev;
	unsigned int value;
	bool enable;
	int ret;

	ret = kstrtouint_from_user(ubuf, count, 10, &value);
	if (ret)
		return ret;
	if (value > 1)
		return -EINVAL;
	enable = value;
	mutex_lock(&okp_events_mutex);
	list_for_each_entry(ev, &okp_events, node)
		if (okp_in_scope(scope, ev)) {
			ret = okp_event_set_enabled(ev, enable);
			if (ret)
				break;
		}
	mutex_unlock(&okp_events_mutex);
	return ret ? ret : count;
}

static const struct file_operations okp_enable_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = okp_enable_read,
	.write = okp_enable_write,
	.llseek = default_llseek,
};

/* As the kernel's event format file: the common fields, the probe's, then the arguments. */
static int okp_format_show(struct seq_file *m, void *unused)
{
	struct okp_event *ev = m->private;
	const struct okp_event_probe *first;
	const struct okp_fetch_arg *args;
	unsigned int i, offset, nargs;

	mutex_lock(&okp_events_mutex);
	if (list_empty(&ev->probes)) {
		mutex_unlock(&okp_events_mutex);
		return 0;	/* not in the table yet: its first probe is being added */
	}
	/* every probe of an event has the same argument names and types (append.c) */
	first = list_first_entry(&ev->probes, struct okp_event_probe, node);
	args = first->args;
	nargs = first->nargs;
	seq_printf(m, "name: %s\nID: %u\nformat:\n", ev->name, ev->id);
	seq_puts(m, "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n");
	seq_puts(m, "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n");
	seq_puts(m, "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n");
	seq_puts(m, "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n");
	offset = 8;
	if (ev->is_return) {
		seq_printf(m, "\tfield:unsigned long __probe_func;\toffset:%u;\tsize:%zu;\tsigned:0;\n",
			   offset, sizeof(long));
		offset += sizeof(long);
		seq_printf(m, "\tfield:unsigned long __probe_ret_ip;\toffset:%u;\tsize:%zu;\tsigned:0;\n",
			   offset, sizeof(long));
	} else {
		seq_printf(m, "\tfield:unsigned long __probe_ip;\toffset:%u;\tsize:%zu;\tsigned:0;\n",
			   offset, sizeof(long));
	}
	offset += sizeof(long);
	for (i = 0; i < nargs; i++)
		okp_fetch_arg_show_format(m, &args[i], &offset);
	seq_puts(m, ev->is_return ? "\nprint fmt: \"(%lx <- %lx)" : "\nprint fmt: \"(%lx)");
	for (i = 0; i < nargs; i++)
		okp_fetch_arg_show_print_fmt(m, &args[i]);
	seq_puts(m, ev->is_return ? "\", REC->__probe_func, REC->__probe_ret_ip" :
				    "\", REC->__probe_ip");
	for (i = 0; i < nargs; i++)
		okp_fetch_arg_show_print_args(m, &args[i]);
	seq_putc(m, '\n');
	mutex_unlock(&okp_events_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(okp_format);

static struct okp_group_dir *okp_group_dir_find(const char *name)
{
	struct okp_group_dir *g;

	list_for_each_entry(g, &okp_group_dirs, node)
		if (!strcmp(g->name, name))
			return g;
	return NULL;
}

int okp_event_files_add(struct okp_event *ev)
{
	struct okp_group_dir *g = okp_group_dir_find(ev->group);
	struct okp_enable_scope *scope;

	if (!g) {
		g = kzalloc(sizeof(*g), GFP_KERNEL);
		if (!g)
			return -ENOMEM;
		strscpy(g->name, ev->group, sizeof(g->name));
		g->scope.group = g->name;
		g->dir = debugfs_create_dir(g->name, okp_events_dir);
		debugfs_create_file("enable", 0600, g->dir, &g->scope, &okp_enable_fops);
		list_add_tail(&g->node, &okp_group_dirs);
	}
	scope = kzalloc(sizeof(*scope), GFP_KERNEL);
	if (!scope) {
		if (!g->events) {
			debugfs_remove(g->dir);
			list_del(&g->node);
			kfree(g);
		}
		return -ENOMEM;
	}
	scope->event = ev;
	g->events++;
	ev->dir = debugfs_create_dir(ev->name, g->dir);
	ev->enable_scope = scope;
	debugfs_create_file("enable", 0600, ev->dir, scope, &okp_enable_fops);
	debugfs_create_file("format", 0400, ev->dir, ev, &okp_format_fops);
	return 0;
}

void okp_event_files_remove(struct okp_event *ev)
{
	struct okp_group_dir *g = okp_group_dir_find(ev->group);

	debugfs_remove(ev->dir);
	kfree(ev->enable_scope);
	if (g && !--g->events) {
		debugfs_remove(g->dir);
		list_del(&g->node);
		kfree(g);
	}
}

int okp_event_files_init(struct dentry *root)
{
	okp_events_dir = debugfs_create_dir("events", root);
	debugfs_create_file("enable", 0600, okp_events_dir, &okp_all_scope, &okp_enable_fops);
	return 0;
}

void okp_event_files_exit(void)
{
	debugfs_remove(okp_events_dir);
	okp_events_dir = NULL;
}
