// SPDX-License-Identifier: GPL-2.0
/*
 * Parsing one fetch argument of a kprobe_events line: [NAME=]FETCHARG[:TYPE], where FETCHARG
 * is %REG, @ADDR, @SYM[+|-offs], $stackN, $stack, $retval, $comm, $argN, +|-[u]OFFS(FETCHARG),
 * \IMM or \"STRING", and TYPE u8..u64, s8..s64, x8..x64, char (6.12), string, ustring, symbol,
 * symstr or a bitfield b<width>@<offset>/<size>, each but symstr also as an array TYPE[N]
 * (string[N]: N string pointers in memory). The kernel's limits come from its fetch
 * instructions (FETCH_INSN_MAX of them per argument), so the parse counts them as it would
 * (arg->ops) to refuse what it refuses. The checks come in the kernel's order
 * (kernel/trace/trace_probe.c) so that a refused argument gets the kernel's message with the
 * caret at the kernel's column. Also what the events' format files say of each argument.
 *
 * Locking: called under okp_events_mutex (the error log is the mutex's).
 */
#include <linux/ctype.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/thread_info.h>

#include "../okp_glue.h"
#include "events.h"

/* The deepest $stackN the kernel accepts (PARAM_MAX_STACK). */
#define OKP_MAX_STACK_INDEX (THREAD_SIZE / sizeof(unsigned long))

static const char *const okp_reserved_field_names[] = {
	"common_type", "common_flags", "common_preempt_count", "common_pid", "common_tgid",
	"__probe_ip", "__probe_ret_ip", "__probe_func",
};

static bool okp_good_name(const char *name)
{
	if (!isalpha(*name) && *name != '_')
		return false;
	while (*++name)
		if (!isalnum(*name) && *name != '_')
			return false;
	return true;
}

struct okp_data_symbol {
	const char *name;
	unsigned long addr;
};

static OKP_KSYM_VISITOR(okp_data_symbol_visit)
{
	struct okp_data_symbol *s = data;

	if (strcmp(name, s->name))
		return 0;
	s->addr = addr;
	return 1;
}

/* @SYM: any symbol, vmlinux's first, as kallsyms_lookup_name() finds it. */
static unsigned long okp_lookup_data_symbol(const char *name)
{
	struct okp_data_symbol s = { .name = name };

	okp_ksyms.kallsyms_on_each_symbol(okp_data_symbol_visit, &s);
	if (!s.addr && okp_ksyms.module_kallsyms_on_each_symbol)
#if OKP_KSYM_NO_MODULE_ARG
		okp_ksyms.module_kallsyms_on_each_symbol(NULL, okp_data_symbol_visit, &s);
#else
		okp_ksyms.module_kallsyms_on_each_symbol(okp_data_symbol_visit, &s);
#endif
	return s.addr;
}

/* @SYM+offs / @SYM-offs */
static int okp_resolve_symbol_offset(char *text, unsigned long *addr)
{
	char *sign = strpbrk(text, "+-");
	long offset = 0;
	char saved = 0;

	if (sign) {
		if (kstrtol(sign + (*sign == '+'), 0, &offset))
			return -EINVAL;
		saved = *sign;
		*sign = '\0';
	}
	*addr = okp_lookup_data_symbol(text);
	if (sign)
		*sign = saved;
	if (!*addr)
		return -ENOENT;
	*addr += offset;
	return 0;
}

static int okp_parse_vars(struct okp_fetch_arg *arg, const char *var, bool is_return,
			  bool at_func_entry, int offs)
{
	unsigned long param;
	int len;

	arg->ops = 1;
	if (!strcmp(var, "retval")) {
		if (!is_return) {
			okp_event_log_err(offs, "$retval is not available on probe");
			return -EINVAL;
		}
		arg->source = OKP_FETCH_RETVAL;
		return 0;
	}
	len = str_has_prefix(var, "stack");
	if (len) {
		if (var[len] == '\0') {
			arg->source = OKP_FETCH_STACKP;
			return 0;
		}
		if (!isdigit(var[len]) || kstrtoul(var + len, 10, &param))
			goto bad_var;
		if (param > OKP_MAX_STACK_INDEX) {
			okp_event_log_err(offs, "Invalid stack number");
			return -EINVAL;
		}
		arg->source = OKP_FETCH_STACK;
		arg->param = param;
		return 0;
	}
	if (!strcmp(var, "comm") || !strcmp(var, "COMM")) {
		arg->source = OKP_FETCH_COMM;
		return 0;
	}
	/* $argN: at a function's entry only, as 6.1 (not on return events) */
	len = str_has_prefix(var, "arg");
	if (len && at_func_entry && !is_return) {
		if (kstrtoul(var + len, 10, &param))
			goto bad_var;
		if (!param || param > OKP_MAX_STACK_INDEX) {
			okp_event_log_err(offs, "Invalid argument number");
			return -EINVAL;
		}
		arg->source = OKP_FETCH_ARG;
		arg->param = param - 1;
		return 0;
	}
bad_var:
	okp_event_log_err(offs, "Invalid $-variable specified");
	return -EINVAL;
}

static int okp_str_to_immediate(const char *str, unsigned long *imm)
{
	if (isdigit(str[0]))
		return kstrtoul(str, 0, imm);
	if (str[0] == '-')
		return kstrtol(str, 0, (long *)imm);
	if (str[0] == '+')
		return kstrtol(str + 1, 0, (long *)imm);
	return -EINVAL;
}

/* One more of the kernel's fetch instructions for this argument, if its FETCH_INSN_MAX leaves
 * room (the last is its END). */
static bool okp_take_fetch_op(struct okp_fetch_arg *arg)
{
	if (arg->ops >= OKP_EV_FETCH_INSN_MAX - 1)
		return false;
	arg->ops++;
	return true;
}

/*
 * FETCHARG, recursively through +OFFS(...): the derefs are collected innermost first.
 * text is a private copy, cut in place as the kernel's parser cuts its own.
 */
static int okp_parse_fetch(struct okp_fetch_arg *arg, char *text, bool is_return,
			   bool at_func_entry, int offs)
{
	unsigned long param;
	long offset;
	bool user = false;
	char *open, *close;
	int ret;

	switch (text[0]) {
	case '$':
		return okp_parse_vars(arg, text + 1, is_return, at_func_entry, offs);
	case '%':
		ret = okp_event_register_offset(text + 1);
		if (ret < 0) {
			okp_event_log_err(offs, "Invalid register name");
			return -EINVAL;
		}
		arg->source = OKP_FETCH_REG;
		arg->param = ret;
		arg->ops = 1;
		return 0;
	case '@':
		if (isdigit(text[1])) {
			if (kstrtoul(text + 1, 0, &param)) {
				okp_event_log_err(offs, "Invalid memory address");
				return -EINVAL;
			}
		} else if (text[1] == '+') {
			okp_event_log_err(offs, "File offset is not available with kprobe");
			return -EINVAL;
		} else {
			ret = okp_resolve_symbol_offset(text + 1, &param);
			if (ret == -ENOENT) {
				/* the kernel finds this out at registration, and says so there */
				okp_event_log_set_index(1);
				okp_event_log_err(0, "Invalid probed address or symbol");
				return -ENOENT;
			}
			if (ret) {
				okp_event_log_err(offs, "Invalid memory address");
				return -EINVAL;
			}
		}
		arg->source = OKP_FETCH_IMM;
		arg->param = param;
		/* the kernel's IMM and DEREF, after a NOP_SYMBOL kept for a symbol */
		arg->ops = isdigit(text[1]) ? 2 : 3;
		if (arg->nderef == OKP_EV_MAX_DEREFS) {
			okp_event_log_err(offs, "Dereference is too much nested");
			return -EINVAL;
		}
		arg->deref[arg->nderef].offset = 0;
		arg->deref[arg->nderef].user = false;
		arg->nderef++;
		return 0;
	case '+':
	case '-':
		if (text[1] == 'u') {
			user = true;
			text[1] = text[0];
			text++;
		}
		if (text[0] == '+')
			text++;	/* kstrtol() takes no '+' */
		open = strchr(text, '(');
		if (!open) {
			okp_event_log_err(offs, "Dereference needs a brace");
			return -EINVAL;
		}
		*open = '\0';
		if (kstrtol(text, 0, &offset)) {
			okp_event_log_err(offs, "Invalid dereference offset");
			return -EINVAL;
		}
		offs += (open + 1 - text) + (text[0] != '-' ? 1 : 0);
		text = open + 1;
		close = strrchr(text, ')');
		if (!close) {
			okp_event_log_err(offs + strlen(text), "Dereference brace is not closed");
			return -EINVAL;
		}
		*close = '\0';
		ret = okp_parse_fetch(arg, text, is_return, at_func_entry, offs);
		if (ret)
			return ret;
		if (arg->source == OKP_FETCH_COMM || arg->source == OKP_FETCH_IMMSTR) {
			okp_event_log_err(offs, "$comm can not be dereferenced");
			return -EINVAL;
		}
		if (!okp_take_fetch_op(arg) || arg->nderef == OKP_EV_MAX_DEREFS) {
			okp_event_log_err(offs, "Dereference is too much nested");
			return -EINVAL;
		}
		arg->deref[arg->nderef].offset = offset;
		arg->deref[arg->nderef].user = user;
		arg->nderef++;
		return 0;
	case '\\':
		if (text[1] == '"') {
			size_t len = strlen(text + 2);

			if (!len || text[2 + len - 1] != '"') {
				okp_event_log_err(offs + 2 + len, "String is not closed with '\"'");
				return -EINVAL;
			}
			arg->immstr = kstrndup(text + 2, len - 1, GFP_KERNEL);
			if (!arg->immstr)
				return -ENOMEM;
			arg->source = OKP_FETCH_IMMSTR;
			arg->ops = 1;
			return 0;
		}
		if (okp_str_to_immediate(text + 1, &param)) {
			okp_event_log_err(offs + 1, "Invalid immediate value");
			return -EINVAL;
		}
		arg->source = OKP_FETCH_IMM;
		arg->param = param;
		arg->ops = 1;
		return 0;
	}
	okp_event_log_err(offs, "Invalid fetch argument");
	return -EINVAL;
}

/* TYPE; NULL for the default (x64 or x32, the arch's long, as the kernel's). */
static int okp_parse_type(struct okp_fetch_arg *arg, const char *type)
{
	static const struct { const char *name; enum okp_fetch_kind kind; } named[] = {
		{ "string", OKP_TYPE_STRING }, { "ustring", OKP_TYPE_USTRING },
		{ "symbol", OKP_TYPE_SYMBOL }, { "symstr", OKP_TYPE_SYMSTR },
	};
	unsigned long width, offset;
	const char *digits;
	char *tail;
	unsigned int bits, i;

	if (!type) {
		arg->kind = OKP_TYPE_HEX;
		arg->size = sizeof(long);
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(named); i++)
		if (!strcmp(type, named[i].name)) {
			arg->kind = named[i].kind;
			arg->size = sizeof(long);
			return 0;
		}
	if (!strcmp(type, "char")) {
		/* 6.12's: a u8 printed as '%c' */
		arg->kind = OKP_TYPE_CHAR;
		arg->size = 1;
		return 0;
	}
	if (type[0] == 'b') {
		/* b<width>@<offset>/<container size in bits> */
		const char *slash = strchr(type, '/');

		if (!slash || kstrtouint(slash + 1, 0, &bits) ||
		    (bits != 8 && bits != 16 && bits != 32 && bits != 64))
			return -EINVAL;
		width = simple_strtoul(type + 1, &tail, 0);
		if (width == 0 || *tail != '@')
			return -ENOTSUPP;	/* a bad bitfield, told apart from a bad type */
		digits = tail + 1;
		offset = simple_strtoul(digits, &tail, 0);
		if (tail != digits && tail == slash && width + offset <= bits) {
			arg->kind = OKP_TYPE_UNSIGNED;
			arg->size = bits / 8;
			arg->bit_width = width;
			arg->bit_offset = offset;
			return 0;
		}
		return -ENOTSUPP;
	}
	if (type[0] != 'u' && type[0] != 's' && type[0] != 'x')
		return -EINVAL;
	if (kstrtouint(type + 1, 10, &bits) ||
	    (bits != 8 && bits != 16 && bits != 32 && bits != 64))
		return -EINVAL;
	arg->kind = type[0] == 'u' ? OKP_TYPE_UNSIGNED :
		    type[0] == 's' ? OKP_TYPE_SIGNED : OKP_TYPE_HEX;
	arg->size = bits / 8;
	return 0;
}

static bool okp_kind_is_string(enum okp_fetch_kind kind)
{
	return kind == OKP_TYPE_STRING || kind == OKP_TYPE_USTRING;
}

static bool okp_kind_is_dynamic(enum okp_fetch_kind kind)
{
	return okp_kind_is_string(kind) || kind == OKP_TYPE_SYMSTR;
}

/* The bytes of an argument's field in the kernel's record (a string's: its data_loc). */
static unsigned int okp_fetch_arg_field_size(const struct okp_fetch_arg *arg)
{
	return (okp_kind_is_dynamic(arg->kind) ? 4 : arg->size) * (arg->count ?: 1);
}

/* symstr takes a value (the kernel's REG, STACK, RETVAL, ARG or DEREF fetch), not data. */
static bool okp_symstr_source_ok(const struct okp_fetch_arg *arg)
{
	if (arg->nderef)
		return !arg->deref[arg->nderef - 1].user;
	return arg->source == OKP_FETCH_REG || arg->source == OKP_FETCH_STACK ||
	       arg->source == OKP_FETCH_RETVAL || arg->source == OKP_FETCH_ARG;
}

/*
 * What the kernel checks once the fetch argument is parsed (traceprobe_parse_probe_arg_body's
 * store, bitfield and array stages), in its order: what a string may be fetched from, and room
 * for the instructions the type, bitfield and array add. type_col: the caret under TYPE.
 */
static int okp_check_fetch_for_type(struct okp_fetch_arg *arg, int offset, int type_col)
{
	bool dynamic = okp_kind_is_dynamic(arg->kind);

	if (arg->kind == OKP_TYPE_SYMSTR && !okp_symstr_source_ok(arg)) {
		okp_event_log_err(type_col, "Symbol String doesn't accept data/userdata");
		return -EINVAL;
	}
	if (okp_kind_is_string(arg->kind) && !arg->nderef && arg->source != OKP_FETCH_IMM &&
	    arg->source != OKP_FETCH_COMM && arg->source != OKP_FETCH_IMMSTR) {
		okp_event_log_err(type_col, "String accepts only memory argument");
		return -EINVAL;
	}
	if (!dynamic && (arg->source == OKP_FETCH_COMM || arg->source == OKP_FETCH_IMMSTR)) {
		okp_event_log_err(type_col, "Unknown type is specified");
		return -EINVAL;
	}
	/* a store instruction after the fetch, unless it replaces the last dereference */
	if ((dynamic && (arg->kind == OKP_TYPE_SYMSTR || !arg->nderef || arg->count)) ||
	    (!dynamic && !arg->nderef)) {
		if (!okp_take_fetch_op(arg)) {
			okp_event_log_err(offset, "Dereference is too much nested");
			return -EINVAL;
		}
	}
	if (arg->bit_width && !okp_take_fetch_op(arg)) {
		okp_event_log_err(type_col, "Invalid bitfield");
		return -EINVAL;
	}
	if (!arg->count)
		return 0;
	/*
	 * An array is read from memory. The kernel takes \IMM:string[N] too, but fetches only its
	 * first string (its loop over the array has no memory to step through): okprobes refuses
	 * it with the message the kernel gives a register's array.
	 */
	if (!arg->nderef || arg->kind == OKP_TYPE_SYMSTR) {
		okp_event_log_err(type_col, "String accepts only memory argument");
		return -EINVAL;
	}
	if (!okp_take_fetch_op(arg)) {
		okp_event_log_err(offset, "Dereference is too much nested");
		return -EINVAL;
	}
	return 0;
}

/* The body after NAME=, at column offset of the argument; size_before: the fields before it. */
static int okp_parse_body(struct okp_fetch_arg *arg, const char *body, bool is_return,
			  bool at_func_entry, int offset, unsigned int size_before)
{
	char *text, *type;
	size_t len = strlen(body);
	int ret = -EINVAL, type_col;

	if (len > OKP_EV_MAX_ARGSTR_LEN) {
		okp_event_log_err(offset, "Argument expression is too long");
		return -EINVAL;
	}
	if (len == 0) {
		okp_event_log_err(offset, "No argument expression");
		return -EINVAL;
	}
	text = kstrdup(body, GFP_KERNEL);
	arg->text = kstrdup(body, GFP_KERNEL);
	if (!text || !arg->text) {
		ret = -ENOMEM;
		goto out;
	}
	type = strchr(text, ':');
	if (type) {
		char *count = strchr(++type, '['), *close;

		type[-1] = '\0';
		if (count) {
			/* TYPE[N] */
			*count++ = '\0';
			close = strchr(count, ']');
			if (!close) {
				okp_event_log_err(offset + (count + strlen(count) - text),
						  "Array is not closed");
				goto out;
			}
			if (close[1] != '\0') {
				okp_event_log_err(offset + (close + 1 - text), "Array has wrong suffix");
				goto out;
			}
			*close = '\0';
			if (kstrtouint(count, 0, &arg->count) || !arg->count) {
				okp_event_log_err(offset + (count - text), "Invalid array size");
				goto out;
			}
			if (arg->count > OKP_EV_MAX_ARRAY_LEN) {
				okp_event_log_err(offset + (count - text), "Array number is too big");
				goto out;
			}
		}
	}
	type_col = offset + (type ? (type - text) : 0);
	if (!strcmp(text, "$comm") || !strcmp(text, "$COMM") || !strncmp(text, "\\\"", 2)) {
		/* the kernel refuses another type or an array here without a log entry; okprobes
		 * says why */
		if ((type && strcmp(type, "string")) || arg->count) {
			okp_event_log_err(type_col, "Unknown type is specified");
			goto out;
		}
		ret = okp_parse_type(arg, "string");
	} else {
		ret = okp_parse_type(arg, type);
	}
	if (ret == -ENOTSUPP) {
		/* the kernel checks a bitfield after the fetch argument; keep its order */
		ret = okp_parse_fetch(arg, text, is_return, at_func_entry, offset);
		if (!ret) {
			okp_event_log_err(type_col, "Invalid bitfield");
			ret = -EINVAL;
		}
		goto out;
	}
	if (ret) {
		okp_event_log_err(type_col, "Unknown type is specified");
		goto out;
	}
	if (size_before + okp_fetch_arg_field_size(arg) > OKP_EV_MAX_EVENT_SIZE) {
		okp_event_log_err(offset, "Event too big (too many fields?)");
		ret = -E2BIG;
		goto out;
	}
	ret = okp_parse_fetch(arg, text, is_return, at_func_entry, offset);
	if (!ret)
		ret = okp_check_fetch_for_type(arg, offset, type_col);
out:
	kfree(text);
	return ret;
}

int okp_fetch_arg_parse(struct okp_fetch_arg *args, unsigned int i, const char *text,
			bool is_return, bool at_func_entry)
{
	struct okp_fetch_arg *arg = &args[i];
	const char *eq = strchr(text, '=');
	const char *body = text;
	unsigned int j, size_before = 0;

	if (eq) {
		if (eq - text > OKP_EV_MAX_ARG_NAME_LEN) {
			okp_event_log_err(0, "Argument name is too long");
			return -EINVAL;
		}
		if (eq == text) {
			okp_event_log_err(0, "Argument name is not specified");
			return -EINVAL;
		}
		memcpy(arg->name, text, eq - text);
		arg->name[eq - text] = '\0';
		body = eq + 1;
	} else {
		snprintf(arg->name, sizeof(arg->name), "arg%u", i + 1);
	}
	if (!okp_good_name(arg->name)) {
		okp_event_log_err(0, "Argument name must follow the same rules as C identifiers");
		return -EINVAL;
	}
	for (j = 0; j < ARRAY_SIZE(okp_reserved_field_names); j++)
		if (!strcmp(okp_reserved_field_names[j], arg->name))
			goto used;
	for (j = 0; j < i; j++)
		if (!strcmp(args[j].name, arg->name))
			goto used;
	for (j = 0; j < i; j++)
		size_before += okp_fetch_arg_field_size(&args[j]);
	return okp_parse_body(arg, body, is_return, at_func_entry, body - text, size_before);
used:
	okp_event_log_err(0, "This argument name is already used");
	return -EINVAL;
}

void okp_fetch_arg_free(struct okp_fetch_arg *arg)
{
	kfree(arg->text);
	kfree(arg->immstr);
	arg->text = NULL;
	arg->immstr = NULL;
}

/* The C type of a field, in the kernel's words. */
static const char *okp_field_type(const struct okp_fetch_arg *arg)
{
	static const char *const unsigned_names[] = { "u8", "u16", "u32", "u32", "u64" };
	static const char *const signed_names[] = { "s8", "s16", "s32", "s32", "s64" };
	unsigned int index = arg->size == 8 ? 4 : arg->size / 2;

	switch (arg->kind) {
	case OKP_TYPE_STRING:
	case OKP_TYPE_USTRING:
	case OKP_TYPE_SYMSTR:
		return "__data_loc char[]";
	case OKP_TYPE_SIGNED:
		return signed_names[index];
	default:
		return unsigned_names[index];
	}
}

/*
 * The field's line, as the kernel's format file prints a probe argument: strings (their
 * data_locs) count as signed, as the kernel's string fetch types say; an array's length is not
 * given (the kernel defines the field with no length: "name[]"), a string array's is, in its
 * type ("__data_loc char[][N]").
 */
void okp_fetch_arg_show_format(struct seq_file *m, const struct okp_fetch_arg *arg,
			       unsigned int *offset)
{
	unsigned int size = okp_fetch_arg_field_size(arg);
	bool dynamic = okp_kind_is_dynamic(arg->kind);
	int is_signed = dynamic || arg->kind == OKP_TYPE_SIGNED;

	if (arg->count && dynamic)
		seq_printf(m, "\tfield:%s[%u] %s;\toffset:%u;\tsize:%u;\tsigned:%d;\n",
			   okp_field_type(arg), arg->count, arg->name, *offset, size, is_signed);
	else if (arg->count)
		seq_printf(m, "\tfield:%s %s[];\toffset:%u;\tsize:%u;\tsigned:%d;\n",
			   okp_field_type(arg), arg->name, *offset, size, is_signed);
	else
		seq_printf(m, "\tfield:%s %s;\toffset:%u;\tsize:%u;\tsigned:%d;\n",
			   okp_field_type(arg), arg->name, *offset, size, is_signed);
	*offset += size;
}

/* " name=FMT", or for TYPE[N] " name={FMT,FMT,...}", as the kernel's __set_print_fmt(). */
void okp_fetch_arg_show_print_fmt(struct seq_file *m, const struct okp_fetch_arg *arg)
{
	const char *fmt;
	unsigned int i;

	switch (arg->kind) {
	case OKP_TYPE_STRING:
	case OKP_TYPE_USTRING:
	case OKP_TYPE_SYMSTR:
		fmt = "\\\"%s\\\"";
		break;
	case OKP_TYPE_SYMBOL:
		fmt = "%pS";
		break;
	case OKP_TYPE_CHAR:
		fmt = "'%c'";
		break;
	case OKP_TYPE_SIGNED:
		fmt = arg->size == 8 ? "%Ld" : "%d";
		break;
	case OKP_TYPE_UNSIGNED:
		fmt = arg->size == 8 ? "%Lu" : "%u";
		break;
	default:
		fmt = arg->size == 8 ? "0x%Lx" : "0x%x";
		break;
	}
	if (!arg->count) {
		seq_printf(m, " %s=%s", arg->name, fmt);
		return;
	}
	seq_printf(m, " %s={%s", arg->name, fmt);
	for (i = 1; i < arg->count; i++)
		seq_printf(m, ",%s", fmt);
	seq_putc(m, '}');
}

/* What the print fmt prints: ", REC->name" or ", __get_str(name)", each element of an array. */
void okp_fetch_arg_show_print_args(struct seq_file *m, const struct okp_fetch_arg *arg)
{
	const char *fmt = okp_kind_is_dynamic(arg->kind) ? ", __get_str(%s" : ", REC->%s";
	unsigned int i;

	if (!arg->count) {
		seq_printf(m, fmt, arg->name);
		seq_puts(m, okp_kind_is_dynamic(arg->kind) ? ")" : "");
		return;
	}
	for (i = 0; i < arg->count; i++) {
		seq_printf(m, fmt, arg->name);
		seq_printf(m, "[%u]%s", i, okp_kind_is_dynamic(arg->kind) ? ")" : "");
	}
}
