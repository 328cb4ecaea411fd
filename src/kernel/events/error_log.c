// SPDX-License-Identifier: GPL-2.0
/*
 * error_log: the kernel's tracing error log (kernel/trace/trace.c) for refused kprobe_events
 * lines. The parser names the argument it is in (okp_event_log_set_index) and the offset of the
 * offending character in it; an entry holds the whole command, rebuilt from its arguments with
 * single spaces as the kernel does, and the caret's column. The last 16 entries are kept.
 *
 * Locking: everything here runs under okp_events_mutex (parsing, reading, clearing).
 */
#include <linux/kernel.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "events.h"

#define OKP_EVENT_LOG_MAX 16		/* TRACING_LOG_ERRS_MAX */
#define OKP_EVENT_LOG_PREFIX "  Command: "

struct okp_event_log_entry {
	struct list_head node;
	u64 ts;
	const char *message;	/* a string literal of the parser */
	unsigned int pos;
	char command[];
};

static LIST_HEAD(okp_event_log);
static unsigned int okp_event_log_count;

/* The line being parsed. */
static int okp_log_argc;
static const char *const *okp_log_argv;
static int okp_log_index;

void okp_event_log_begin(int argc, const char *const *argv)
{
	okp_log_argc = argc;
	okp_log_argv = argv;
	okp_log_index = 0;
}

void okp_event_log_set_index(int index)
{
	okp_log_index = index;
}

void okp_event_log_end(void)
{
	okp_log_argc = 0;
	okp_log_argv = NULL;
}

void okp_event_log_err(int offset, const char *message)
{
	struct okp_event_log_entry *e;
	size_t len = 0, pos = 0;
	char *p;
	int i;

	if (!okp_log_argv || !okp_log_argc)
		return;
	for (i = 0; i < okp_log_argc; i++) {
		if (i == okp_log_index)
			pos = len;
		len += strlen(okp_log_argv[i]) + 1;
	}
	if (okp_log_index >= okp_log_argc) {
		/* after the last argument and its space, as the kernel places it */
		pos = len;
		offset = 0;
	}
	e = kzalloc(sizeof(*e) + len, GFP_KERNEL);
	if (!e)
		return;
	p = e->command;
	for (i = 0; i < okp_log_argc; i++) {
		size_t n = strlen(okp_log_argv[i]);

		memcpy(p, okp_log_argv[i], n);
		p[n] = ' ';
		p += n + 1;
	}
	*(p - 1) = '\0';
	e->message = message;
	e->pos = pos + offset;
	e->ts = local_clock();
	if (okp_event_log_count == OKP_EVENT_LOG_MAX) {
		struct okp_event_log_entry *oldest =
			list_first_entry(&okp_event_log, struct okp_event_log_entry, node);

		list_del(&oldest->node);
		kfree(oldest);
		okp_event_log_count--;
	}
	list_add_tail(&e->node, &okp_event_log);
	okp_event_log_count++;
}

int okp_event_log_show(struct seq_file *m)
{
	struct okp_event_log_entry *e;
	unsigned int i;

	list_for_each_entry(e, &okp_event_log, node) {
		u64 sec = e->ts;
		u32 nsec = do_div(sec, NSEC_PER_SEC);

		seq_printf(m, "[%5llu.%06u] trace_kprobe: error: %s\n", sec, nsec / 1000, e->message);
		seq_printf(m, OKP_EVENT_LOG_PREFIX "%s\n", e->command);
		for (i = 0; i < sizeof(OKP_EVENT_LOG_PREFIX) - 1 + e->pos; i++)
			seq_putc(m, ' ');
		seq_puts(m, "^\n");
	}
	return 0;
}

void okp_event_log_clear(void)
{
	struct okp_event_log_entry *e, *next;

	list_for_each_entry_safe(e, next, &okp_event_log, node) {
		list_del(&e->node);
		kfree(e);
	}
	okp_event_log_count = 0;
}
