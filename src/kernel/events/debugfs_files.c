// SPDX-License-Identifier: GPL-2.0
/*
 * The kprobe events' files in /sys/kernel/debug/okprobes/, named and formatted as in the
 * kernel's tracing directory: kprobe_events (definitions: write lines, read them back; opened
 * with O_TRUNC it removes every event, or fails with -EBUSY while one is enabled),
 * kprobe_profile (event, hits, misses), error_log (O_TRUNC clears it), trace (every record,
 * O_TRUNC clears them), trace_pipe (takes records as it reads, blocks while there are none),
 * README (the syntax), tracefs_instance (1: records copied to the tracefs instance okprobes;
 * 0, the default: not) and events/ (event_files.c). Also the module's init and exit of it all.
 *
 * Locking (events.h): kprobe_events' writes and error_log take okp_events_change_mutex;
 * listings take okp_events_mutex; the trace files only the trace buffer's own locks.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "events.h"

/* The kernel's WRITE_BUFSIZE: the longest kprobe_events line. */
#define OKP_EVENTS_WRITE_MAX 4096

static struct dentry *okp_events_root;
static struct dentry *okp_events_files[7];
static bool okp_events_closing;

static int okp_kprobe_events_show(struct seq_file *m, void *unused)
{
	struct okp_event_probe *probe;

	mutex_lock(&okp_events_mutex);
	list_for_each_entry(probe, &okp_event_probes, all_node)
		okp_event_show_definition(m, probe);
	mutex_unlock(&okp_events_mutex);
	return 0;
}

static int okp_kprobe_events_open(struct inode *inode, struct file *file)
{
	int ret;

	if ((file->f_mode & FMODE_WRITE) && (file->f_flags & O_TRUNC)) {
		mutex_lock(&okp_events_change_mutex);
		ret = okp_event_remove_all();
		mutex_unlock(&okp_events_change_mutex);
		if (ret)
			return ret;
	}
	return single_open(file, okp_kprobe_events_show, NULL);
}

/* Every whole line of the buffer, '#' comments dropped, as trace_parse_run_command(). */
static ssize_t okp_kprobe_events_write(struct file *file, const char __user *ubuf,
				       size_t count, loff_t *ppos)
{
	size_t len = min_t(size_t, count, OKP_EVENTS_WRITE_MAX), done = 0;
	char *buf, *line, *end;
	int ret = 0;

	buf = kmalloc(len + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, ubuf, len)) {
		kfree(buf);
		return -EFAULT;
	}
	buf[len] = '\0';
	mutex_lock(&okp_events_change_mutex);
	for (line = buf; done < len; line = end + 1) {
		char *comment;

		end = strchr(line, '\n');
		if (!end) {
			if (len < count) {	/* a line cut by the buffer's end */
				if (line == buf) {
					ret = -EINVAL;	/* "Line length is too long" */
					pr_warn("okprobes: kprobe_events: line length is too long\n");
				}
				break;
			}
			end = buf + len;
		}
		*end = '\0';
		done = end + 1 - buf;
		comment = strchr(line, '#');
		if (comment)
			*comment = '\0';
		ret = okp_event_command(line);
		if (ret)
			break;
	}
	mutex_unlock(&okp_events_change_mutex);
	kfree(buf);
	if (ret)
		return ret;
	done = min(done, len);
	*ppos += done;
	return done;
}

static const struct file_operations okp_kprobe_events_fops = {
	.owner = THIS_MODULE,
	.open = okp_kprobe_events_open,
	.read = seq_read,
	.write = okp_kprobe_events_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int okp_kprobe_profile_show(struct seq_file *m, void *unused)
{
	struct okp_event_probe *probe;

	/* one line per probe, as the kernel's: an event with appended probes has several */
	mutex_lock(&okp_events_mutex);
	list_for_each_entry(probe, &okp_event_probes, all_node)
		seq_printf(m, "  %-44s %15lu %15lu\n", probe->event->name, okp_event_hits(probe),
			   okp_event_misses(probe));
	mutex_unlock(&okp_events_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(okp_kprobe_profile);

static int okp_error_log_show(struct seq_file *m, void *unused)
{
	mutex_lock(&okp_events_change_mutex);
	okp_event_log_show(m);
	mutex_unlock(&okp_events_change_mutex);
	return 0;
}

static int okp_error_log_open(struct inode *inode, struct file *file)
{
	if ((file->f_mode & FMODE_WRITE) && (file->f_flags & O_TRUNC)) {
		mutex_lock(&okp_events_change_mutex);
		okp_event_log_clear();
		mutex_unlock(&okp_events_change_mutex);
	}
	return single_open(file, okp_error_log_show, NULL);
}

/* Writes are accepted and ignored, as the kernel's: only O_TRUNC clears. */
static ssize_t okp_ignored_write(struct file *file, const char __user *ubuf, size_t count,
				 loff_t *ppos)
{
	return count;
}

static const struct file_operations okp_error_log_fops = {
	.owner = THIS_MODULE,
	.open = okp_error_log_open,
	.read = seq_read,
	.write = okp_ignored_write,
	.llseek = seq_lseek,
	.release = single_release,
};

struct okp_trace_text {
	char *text;
	size_t len;
};

static const char okp_trace_header_space[] = "  ";

static int okp_trace_open(struct inode *inode, struct file *file)
{
	struct okp_trace_text *t;
	unsigned long entries, written;
	char *records;
	size_t records_len = 0;
	int used;

	if ((file->f_mode & FMODE_WRITE) && (file->f_flags & O_TRUNC))
		okp_trace_buffer_clear();
	if (!(file->f_mode & FMODE_READ))
		return 0;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	records = okp_trace_buffer_snapshot(&records_len, &entries, &written);
	if (!records) {
		kfree(t);
		return -ENOMEM;
	}
	t->text = vmalloc(records_len + 1024);
	if (!t->text) {
		vfree(records);
		kfree(t);
		return -ENOMEM;
	}
	/* the kernel's header for the nop tracer with irq-info columns */
	used = scnprintf(t->text, 1024,
		"# tracer: nop\n#\n# entries-in-buffer/entries-written: %lu/%lu   #P:%d\n"
		"# okprobes: %lu dropped (a CPU's ring full or locked)\n#\n"
		"#                            %s  _-----=> irqs-off/BH-disabled\n"
		"#                            %s / _----=> need-resched\n"
		"#                            %s| / _---=> hardirq/softirq\n"
		"#                            %s|| / _--=> preempt-depth\n"
		"#                            %s||| / _-=> migrate-disable\n"
		"#                            %s|||| /     delay\n"
		"#           TASK-PID  %s CPU#  |||||  TIMESTAMP  FUNCTION\n"
		"#              | |    %s   |   |||||     |         |\n",
		entries, written, num_online_cpus(), okp_trace_buffer_dropped(),
		okp_trace_header_space,
		okp_trace_header_space, okp_trace_header_space, okp_trace_header_space,
		okp_trace_header_space, okp_trace_header_space, "  ", "  ");
	memcpy(t->text + used, records, records_len);
	t->len = used + records_len;
	vfree(records);
	file->private_data = t;
	return 0;
}

static ssize_t okp_trace_read(struct file *file, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct okp_trace_text *t = file->private_data;

	if (!t)
		return -EINVAL;
	return simple_read_from_buffer(ubuf, count, ppos, t->text, t->len);
}

static int okp_trace_release(struct inode *inode, struct file *file)
{
	struct okp_trace_text *t = file->private_data;

	if (t) {
		vfree(t->text);
		kfree(t);
	}
	return 0;
}

static const struct file_operations okp_trace_fops = {
	.owner = THIS_MODULE,
	.open = okp_trace_open,
	.read = okp_trace_read,
	.write = okp_ignored_write,
	.llseek = default_llseek,
	.release = okp_trace_release,
};

/*
 * trace_pipe: records taken oldest first until the reader's buffer is full or none is left;
 * with none at all, waits for one (polling: the hit path wakes nobody, it may run in an NMI).
 * A record is taken whole; what of its text the reader's buffer had no room for waits in the
 * open file for the next read (a record's text may exceed a small reader's buffer: cat's is
 * 4 KiB in busybox), as the kernel's trace_pipe keeps the rest of its trace_seq.
 */
struct okp_pipe_reader {
	struct mutex lock;	/* one read at a time on this open file */
	char *text;		/* OKP_TRACE_TEXT_MAX bytes: the last record's text */
	size_t pos, len;	/* its part not read yet: text[pos, len) */
};

static int okp_trace_pipe_open(struct inode *inode, struct file *file)
{
	struct okp_pipe_reader *reader = kzalloc(sizeof(*reader), GFP_KERNEL);

	if (!reader)
		return -ENOMEM;
	reader->text = kvmalloc(OKP_TRACE_TEXT_MAX, GFP_KERNEL);
	if (!reader->text) {
		kfree(reader);
		return -ENOMEM;
	}
	mutex_init(&reader->lock);
	file->private_data = reader;
	return nonseekable_open(inode, file);
}

static int okp_trace_pipe_release(struct inode *inode, struct file *file)
{
	struct okp_pipe_reader *reader = file->private_data;

	kvfree(reader->text);
	kfree(reader);
	return 0;
}

/* The rest of the last record's text, as much as fits: bytes copied, or -EFAULT. */
static ssize_t okp_pipe_drain(struct okp_pipe_reader *reader, char __user *ubuf, size_t count)
{
	size_t n = min(count, reader->len - reader->pos);

	if (copy_to_user(ubuf, reader->text + reader->pos, n))
		return -EFAULT;
	reader->pos += n;
	return n;
}

static ssize_t okp_trace_pipe_read(struct file *file, char __user *ubuf, size_t count,
				   loff_t *ppos)
{
	struct okp_pipe_reader *reader = file->private_data;
	ssize_t done = 0, n;
	int len;

	if (mutex_lock_interruptible(&reader->lock))
		return -ERESTARTSYS;
	while (done < count) {
		if (reader->pos < reader->len) {
			n = okp_pipe_drain(reader, ubuf + done, count - done);
			if (n < 0) {
				done = done ?: n;	/* the reader's buffer was bad */
				break;
			}
			done += n;
			continue;
		}
		/* a text never exceeds OKP_TRACE_TEXT_MAX: consume cuts it there */
		len = okp_trace_buffer_consume(reader->text, OKP_TRACE_TEXT_MAX);
		if (len > 0) {
			reader->pos = 0;
			reader->len = len;
			continue;
		}
		if (done)
			break;
		if (file->f_flags & O_NONBLOCK) {
			done = -EAGAIN;
			break;
		}
		if (READ_ONCE(okp_events_closing))
			break;
		schedule_timeout_interruptible(HZ / 10);
		if (signal_pending(current)) {
			done = -ERESTARTSYS;
			break;
		}
	}
	mutex_unlock(&reader->lock);
	return done;
}

static const struct file_operations okp_trace_pipe_fops = {
	.owner = THIS_MODULE,
	.open = okp_trace_pipe_open,
	.read = okp_trace_pipe_read,
	.release = okp_trace_pipe_release,
};

static ssize_t okp_readme_read(struct file *file, char __user *ubuf, size_t count,
			       loff_t *ppos)
{
	return simple_read_from_buffer(ubuf, count, ppos, okp_events_readme,
				       strlen(okp_events_readme));
}

static const struct file_operations okp_readme_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = okp_readme_read,
	.llseek = default_llseek,
};

/* tracefs_instance: 1 while records are copied to the tracefs instance okprobes, 0 (the
 * default) while they are in okprobes' own buffer only: the instance's okprobes/record enable
 * file, by another door (tracefs_instance.c). */
static ssize_t okp_mirror_read(struct file *file, char __user *ubuf, size_t count, loff_t *ppos)
{
	char text[2] = { okp_tracefs_mirror_on() ? '1' : '0', '\n' };

	return simple_read_from_buffer(ubuf, count, ppos, text, sizeof(text));
}

static ssize_t okp_mirror_write(struct file *file, const char __user *ubuf, size_t count,
				loff_t *ppos)
{
	bool on;
	int ret = kstrtobool_from_user(ubuf, count, &on);

	if (ret) {
		pr_info("okprobes: tracefs_instance takes 1 or 0\n");
		return ret;
	}
	mutex_lock(&okp_events_change_mutex);
	ret = okp_tracefs_mirror_set(on);
	mutex_unlock(&okp_events_change_mutex);
	return ret ?: count;
}

static const struct file_operations okp_mirror_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = okp_mirror_read,
	.write = okp_mirror_write,
	.llseek = default_llseek,
};

int okp_events_init(void)
{
	struct dentry *root = debugfs_lookup("okprobes", NULL);
	int ret;

	if (!root)
		return -ENOENT;
	ret = okp_trace_buffer_init();
	if (ret) {
		dput(root);
		return ret;
	}
	okp_events_root = root;
	okp_events_files[0] = debugfs_create_file("kprobe_events", 0600, root, NULL,
						  &okp_kprobe_events_fops);
	okp_events_files[1] = debugfs_create_file("kprobe_profile", 0400, root, NULL,
						  &okp_kprobe_profile_fops);
	okp_events_files[2] = debugfs_create_file("error_log", 0600, root, NULL,
						  &okp_error_log_fops);
	okp_events_files[3] = debugfs_create_file("trace", 0600, root, NULL, &okp_trace_fops);
	okp_events_files[4] = debugfs_create_file("trace_pipe", 0400, root, NULL,
						  &okp_trace_pipe_fops);
	okp_events_files[5] = debugfs_create_file("README", 0400, root, NULL, &okp_readme_fops);
	okp_events_files[6] = debugfs_create_file("tracefs_instance", 0600, root, NULL,
						  &okp_mirror_fops);
	okp_event_files_init(root);
	ret = okp_events_pending_init();
	if (ret)
		okp_events_exit();
	return ret;
}

void okp_events_exit(void)
{
	unsigned int i;

	if (!okp_events_root)
		return;
	WRITE_ONCE(okp_events_closing, true);	/* a trace_pipe reader returns */
	okp_events_pending_exit();
	for (i = 0; i < ARRAY_SIZE(okp_events_files); i++)
		debugfs_remove(okp_events_files[i]);
	mutex_lock(&okp_events_change_mutex);
	okp_events_teardown();
	okp_event_log_clear();
	mutex_unlock(&okp_events_change_mutex);
	/* after the teardown: no probe is registered, so no hit can use the instance */
	okp_tracefs_instance_exit();
	okp_event_files_exit();
	okp_trace_buffer_exit();
	okp_event_formats_exit();
	dput(okp_events_root);
	okp_events_root = NULL;
}
