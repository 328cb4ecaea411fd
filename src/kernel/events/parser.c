// SPDX-License-Identifier: GPL-2.0
/*
 * One line written to kprobe_events:
 *   p[:[GRP/][EVENT]] [MOD:]SYM[+OFFS]|MEMADDR [FETCHARGS]
 *   r[MAXACTIVE][:[GRP/][EVENT]] [MOD:]SYM[+0] [FETCHARGS]     (or SYM%return with p)
 *   -:[GRP/]EVENT [PROBE [ARGS]]
 * split into arguments at white space, checked in the kernel's order
 * (kernel/trace/trace_kprobe.c, __trace_kprobe_create) so that a refused line leaves the
 * kernel's message in error_log with the caret under the same character, and then added to
 * the event table: a new event, or a probe appended to the existing event of that name
 * (append.c). A refused line changes nothing but the error log.
 *
 * Locking: called under okp_events_change_mutex.
 */
#include <linux/ctype.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../okp_glue.h"
#include "events.h"

static bool okp_good_event_name(const char *name, bool dash_ok)
{
	if (!isalpha(*name) && *name != '_' && (!dash_ok || *name != '-'))
		return false;
	while (*++name)
		if (!isalnum(*name) && *name != '_' && (!dash_ok || *name != '-'))
			return false;
	return true;
}

/* [GRP/]EVENT after "p:" / "r:"; offset is the column of its first character. An empty
 * EVENT after GRP/ leaves *event NULL (a default name in that group). */
static int okp_parse_event_name(const char **event, char *group, int offset)
{
	const char *name = *event, *slash = strchr(name, '/');
	size_t len;

	if (!slash)
		slash = strchr(name, '.');
	if (slash) {
		if (slash == name) {
			okp_event_log_err(offset, "Group name is not specified");
			return -EINVAL;
		}
		if (slash - name + 1 > OKP_EV_MAX_NAME_LEN) {
			okp_event_log_err(offset, "Group name is too long");
			return -EINVAL;
		}
		memcpy(group, name, slash - name);
		group[slash - name] = '\0';
		if (!okp_good_event_name(group, true)) {
			okp_event_log_err(offset, "Group name must follow the same rules as C identifiers");
			return -EINVAL;
		}
		offset += slash - name + 1;
		name = slash + 1;
		*event = name;
	}
	len = strlen(name);
	if (len == 0) {
		if (slash) {
			*event = NULL;
			return 0;
		}
		okp_event_log_err(offset, "Event name is not specified");
		return -EINVAL;
	}
	if (len >= OKP_EV_MAX_NAME_LEN) {
		okp_event_log_err(offset, "Event name is too long");
		return -EINVAL;
	}
	if (!okp_good_event_name(name, false)) {
		okp_event_log_err(offset, "Event name must follow the same rules as C identifiers");
		return -EINVAL;
	}
	return 0;
}

/* SYM+OFFS / SYM-OFFS into SYM and OFFS, as traceprobe_split_symbol_offset(). */
static int okp_split_symbol_offset(char *symbol, long *offset)
{
	char *sign = strpbrk(symbol, "+-");

	*offset = 0;
	if (!sign)
		return 0;
	if (kstrtol(sign + (*sign == '+'), 0, offset))
		return -EINVAL;
	if (*sign == '-')
		*offset = -*offset;
	*sign = '\0';
	return 0;
}

/* The room the kernel gives the rewritten %pd/%pD arguments of a line (MAX_DENTRY_ARGS_LEN). */
#define OKP_DENTRY_ARGS_LEN 256

/*
 * 6.12's %pd and %pD types (traceprobe_expand_dentry_args()): [NAME=]FETCHARG:%pd, a struct
 * dentry's address, becomes [NAME=]+0x0(+0xN(FETCHARG)):string, its d_name.name; :%pD, a
 * struct file's, goes through its f_path.dentry first. The words of argv from the third on
 * are rewritten in place to point into *buf (kfree it), as the kernel's, so kprobe_events
 * lists the rewritten argument and error_log shows it. The offsets are this kernel's.
 */
static int okp_expand_dentry_args(int argc, char **argv, char **buf)
{
	int i, used = 0, len;

	*buf = NULL;
	for (i = 2; i < argc; i++) {
		char *arg = argv[i], *equal, *fetch;
		size_t arg_len = strlen(arg);
		bool file;

		/* the kernel's glob "*:%p[dD]" (lib/glob.c is not in every kernel) */
		if (arg_len < 4 || (strcmp(arg + arg_len - 4, ":%pd") &&
				    strcmp(arg + arg_len - 4, ":%pD")))
			continue;
		if (!*buf) {
			*buf = kmalloc(OKP_DENTRY_ARGS_LEN, GFP_KERNEL);
			if (!*buf)
				return -ENOMEM;
		}
		file = arg[arg_len - 1] == 'D';
		arg[arg_len - 4] = '\0';	/* the fetch arg, without :%pd */
		equal = strchr(arg, '=');
		fetch = equal ? equal + 1 : arg;
		if (file)
			len = snprintf(*buf + used, OKP_DENTRY_ARGS_LEN - used,
				       "%.*s+0x0(+0x%zx(+0x%zx(%s))):string",
				       equal ? (int)(fetch - arg) : 0, arg,
				       offsetof(struct dentry, d_name.name),
				       offsetof(struct file, f_path.dentry), fetch);
		else
			len = snprintf(*buf + used, OKP_DENTRY_ARGS_LEN - used,
				       "%.*s+0x0(+0x%zx(%s)):string",
				       equal ? (int)(fetch - arg) : 0, arg,
				       offsetof(struct dentry, d_name.name), fetch);
		if (len >= OKP_DENTRY_ARGS_LEN - used) {
			kfree(*buf);
			*buf = NULL;
			return -ENOMEM;	/* as the kernel's */
		}
		argv[i] = *buf + used;
		used += len + 1;
	}
	return 0;
}

/* Where the kernel would put the default event name's ':' and '.': '_'. */
static void okp_sanitize_event_name(char *name)
{
	for (; *name; name++)
		if (*name == ':' || *name == '.')
			*name = '_';
}

/*
 * "-:[GRP/]EVENT [PROBE [ARGS]]", as the kernel's dyn_event_release(): EVENT in any group when
 * there is no GRP/ (only '/' separates them here, not '.'), every event of GRP for "-:GRP/";
 * with the rest of the line, only the probes it matches. No error_log entry, as the kernel's.
 */
static int okp_event_delete(int argc, char **argv)
{
	char group[OKP_EV_MAX_NAME_LEN];
	const char *name = argv[0] + 1, *slash;
	bool any_group = true;

	if (*name != ':')
		return -EINVAL;
	name++;
	slash = strchr(name, '/');
	if (slash) {
		if (slash - name >= OKP_EV_MAX_NAME_LEN)
			return -ENOENT;	/* no group has so long a name */
		memcpy(group, name, slash - name);
		group[slash - name] = '\0';
		name = slash + 1;
		any_group = false;
	} else if (!*name) {
		return -EINVAL;
	}
	return okp_event_remove(any_group ? NULL : group, name, argc - 1,
				(const char *const *)argv + 1);
}

static int okp_event_create(int argc, char **argv)
{
	char group[OKP_EV_MAX_NAME_LEN] = OKP_EV_DEFAULT_GROUP;
	char default_name[OKP_EV_MAX_NAME_LEN], maxactive_text[OKP_EV_MAX_NAME_LEN];
	const char *event;
	char *symbol = NULL, *suffix, *dentry_args = NULL;
	bool is_return = argv[0][0] == 'r';
	unsigned long addr = 0;
	unsigned int maxactive = 0;
	struct okp_event *ev = NULL, *existing;
	struct okp_event_probe *probe = NULL;
	long offset = 0;
	int i, ret, len;

	if (argc < 2)
		return -EINVAL;	/* the kernel's -ECANCELED: no log entry */
	okp_event_log_begin(argc, (const char *const *)argv);

	event = strchr(&argv[0][1], ':');
	if (event)
		event++;
	if (isdigit(argv[0][1])) {
		if (!is_return) {
			okp_event_log_err(1, "Maxactive is not for kprobe");
			goto parse_error;
		}
		len = event ? event - &argv[0][1] - 1 : strlen(&argv[0][1]);
		if (len > OKP_EV_MAX_NAME_LEN - 1) {
			okp_event_log_err(1, "Invalid maxactive number");
			goto parse_error;
		}
		memcpy(maxactive_text, &argv[0][1], len);
		maxactive_text[len] = '\0';
		if (kstrtouint(maxactive_text, 0, &maxactive) || !maxactive) {
			okp_event_log_err(1, "Invalid maxactive number");
			goto parse_error;
		}
		if (maxactive > OKP_EV_MAX_MAXACTIVE) {
			okp_event_log_err(1, "Maxactive is too big");
			goto parse_error;
		}
	}

	if (kstrtoul(argv[1], 0, &addr)) {
		okp_event_log_set_index(1);
		symbol = kstrdup(argv[1], GFP_KERNEL);
		if (!symbol) {
			ret = -ENOMEM;
			goto out;
		}
		suffix = strchr(symbol, '%');
		if (suffix) {
			if (strcmp(suffix, "%return")) {
				okp_event_log_err(suffix - symbol, "Invalid probed address suffix");
				goto parse_error;
			}
			*suffix = '\0';
			is_return = true;
		}
		if (okp_split_symbol_offset(symbol, &offset) || offset < 0 || offset > UINT_MAX) {
			okp_event_log_err(0, "Invalid probed address or symbol");
			goto parse_error;
		}
		if (is_return && offset) {
			okp_event_log_err(0, "Retprobe address must be an function entry");
			goto parse_error;
		}
		if (!strchr(symbol, ':')) {
			char reason[OKP_REASON_MAX];

			ret = okp_resolve_symbol(symbol, &addr, reason, sizeof(reason));
			if (ret == -EADDRNOTAVAIL) {
				okp_event_log_err(0, "The symbol is not unique");
				goto out;
			}
			if (ret) {
				okp_event_log_err(0, "Invalid probed address or symbol");
				ret = -ENOENT;
				goto out;
			}
		}
	}

	okp_event_log_set_index(0);
	if (event) {
		ret = okp_parse_event_name(&event, group, event - argv[0]);
		if (ret)
			goto out;
	}
	if (!event) {
		if (symbol)
			snprintf(default_name, sizeof(default_name), "%c_%s_%ld",
				 is_return ? 'r' : 'p', symbol, offset);
		else
			snprintf(default_name, sizeof(default_name), "%c_0x%p",
				 is_return ? 'r' : 'p', (void *)addr);
		okp_sanitize_event_name(default_name);
		event = default_name;
	}
	probe = kzalloc(sizeof(*probe), GFP_KERNEL);
	if (probe)
		probe->args = kcalloc(max(argc - 2, 1), sizeof(*probe->args), GFP_KERNEL);
	if (!probe || !probe->args) {
		ret = -ENOMEM;
		goto out;
	}
	if (symbol && strchr(symbol, ':') && strncmp(symbol, "vmlinux:", 8)) {
		probe->module = kstrndup(symbol, strchr(symbol, ':') - symbol, GFP_KERNEL);
		if (!probe->module) {
			ret = -ENOMEM;
			goto out;
		}
	}
	probe->symbol = symbol;
	symbol = NULL;
	probe->addr = probe->symbol ? 0 : addr;
	probe->offset = offset;
	probe->maxactive = maxactive;

	ret = okp_expand_dentry_args(argc, argv, &dentry_args);
	if (ret)
		goto out;
	for (i = 2; i < argc && i - 2 < OKP_EV_MAX_ARGS; i++) {
		okp_event_log_set_index(i);
		/* $argN needs a function's entry: a symbol at offset 0, as the kernel decides */
		ret = okp_fetch_arg_parse(probe->args, i - 2, argv[i], is_return,
					  probe->symbol && offset == 0);
		probe->nargs = i - 1;
		if (ret)
			goto out;
	}

	/* as the kernel's register_trace_kprobe(): a new event, or one more probe of an existing
	 * event of that name when its rules allow (append.c logs why not) */
	existing = okp_event_find(group, event);
	if (existing) {
		ret = okp_event_append_check(existing, is_return, probe);
		if (!ret)
			ret = okp_event_append(existing, probe);
	} else {
		ev = kzalloc(sizeof(*ev), GFP_KERNEL);
		if (!ev) {
			ret = -ENOMEM;
			goto out;
		}
		strscpy(ev->group, group, sizeof(ev->group));
		strscpy(ev->name, event, sizeof(ev->name));
		ev->is_return = is_return;
		ret = okp_event_add(ev, probe);
		if (!ret)
			ev = NULL;	/* the table's now */
	}
	if (ret) {
		okp_event_log_set_index(1);
		if (ret == -EILSEQ)
			okp_event_log_err(0, "Probe point is not an instruction boundary");
		else if (ret == -ENOENT)
			okp_event_log_err(0, "Invalid probed address or symbol");
		else if (ret != -ENOMEM && ret != -EEXIST)
			okp_event_log_err(0, "Failed to register probe event");
		goto out;
	}
	probe = NULL;	/* the table's now */
	goto out;

parse_error:
	ret = -EINVAL;
out:
	if (probe)
		okp_event_probe_free(probe);
	kfree(ev);
	kfree(symbol);
	okp_event_log_end();
	kfree(dentry_args);
	return ret;
}

int okp_event_command(char *line)
{
	char **argv;
	int argc, ret;

	argv = argv_split(GFP_KERNEL, line, &argc);
	if (!argv)
		return -ENOMEM;
	if (!argc)
		ret = 0;
	else if (argv[0][0] == '-')
		ret = okp_event_delete(argc, argv);
	else if (argv[0][0] == 'p' || argv[0][0] == 'r')
		ret = okp_event_create(argc, argv);
	else
		ret = -EINVAL;
	argv_free(argv);
	return ret;
}
