/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kprobe events in the kernel's kprobe_events syntax, built on okprobes' own C API
 * (okp_register_kprobe/okp_register_kretprobe): the probe machinery is not touched. Shared
 * declarations of src/kernel/events/; docs/events.md describes the interface.
 *
 * Locking, for every file here, outer to inner:
 * - okp_events_change_mutex serializes what changes the set of events (kprobe_events writes,
 *   module unload), the events/ directory tree and the error log. No file operation of the
 *   events/ tree takes it, so debugfs_remove() of an event's files, which waits for their
 *   operations in progress, is called with it held and okp_events_mutex released.
 * - okp_events_mutex guards the event table (the lists of events and of probes, each event's
 *   probes and enabled state): the lists change with both held, so holding either is enough
 *   to walk them.
 * A probe is immutable once it is in the table, apart from its pending state, and so is an
 * event apart from its enabled state and its list of probes; the hit path reads its probe and
 * event without a lock because okp_unregister_k(ret)probe() returns only once no handler runs
 * any more, and an event is freed only after its last probe is unregistered. The trace buffer
 * has its own per-CPU locks and okp_trace_consume_mutex (trace_buffer.c), taken inside the
 * two above, never around them.
 *
 * Records are binary (record.c) and point to their probe's format (event_format.c): what the
 * reader needs to print them, which outlives the probe until no record in a ring can name it.
 */
#ifndef OKP_EVENTS_EVENTS_H
#define OKP_EVENTS_EVENTS_H

#include <linux/atomic.h>
#include <linux/kallsyms.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/types.h>

#include <okprobes/okprobes.h>

struct dentry;
struct pt_regs;
struct seq_file;

/* The kernel's limits (kernel/trace/trace_probe.h). */
#define OKP_EV_MAX_NAME_LEN 64		/* MAX_EVENT_NAME_LEN: group and event names */
#define OKP_EV_MAX_ARGS 128		/* MAX_TRACE_ARGS */
#define OKP_EV_MAX_ARGSTR_LEN 63	/* MAX_ARGSTR_LEN: one fetch argument's text */
#define OKP_EV_MAX_ARG_NAME_LEN 32	/* MAX_ARG_NAME_LEN */
#define OKP_EV_FETCH_INSN_MAX 16	/* FETCH_INSN_MAX: what limits nesting */
#define OKP_EV_MAX_DEREFS 14		/* nested +OFFS(...) levels FETCH_INSN_MAX leaves room for */
#define OKP_EV_MAX_EVENT_SIZE 3072	/* MAX_PROBE_EVENT_SIZE: the fields of an event's record */
#define OKP_EV_MAX_ARRAY_LEN 64		/* MAX_ARRAY_LEN */
#define OKP_EV_MAX_MAXACTIVE 4096	/* KRETPROBE_MAXACTIVE_MAX */
#define OKP_EV_DEFAULT_GROUP "kprobes"	/* KPROBE_EVENT_SYSTEM */
/* MAX_STRING_SIZE (PATH_MAX): a string argument keeps at most this many bytes with its NUL,
 * so 4095 characters, as the kernel's. */
#define OKP_EV_MAX_STRING 4096

/* Where a fetch argument's value comes from. */
enum okp_fetch_source {
	OKP_FETCH_REG,		/* %REG: param is the register's offset in pt_regs */
	OKP_FETCH_STACK,	/* $stackN: param is N */
	OKP_FETCH_STACKP,	/* $stack */
	OKP_FETCH_RETVAL,	/* $retval */
	OKP_FETCH_ARG,		/* $argN: param is N - 1 */
	OKP_FETCH_COMM,		/* $comm */
	OKP_FETCH_IMM,		/* \IMM, @ADDR, @SYM (param: the value or address) */
	OKP_FETCH_IMMSTR,	/* \"STRING" */
};

enum okp_fetch_kind {
	OKP_TYPE_UNSIGNED,	/* u8..u64 */
	OKP_TYPE_SIGNED,	/* s8..s64 */
	OKP_TYPE_HEX,		/* x8..x64 */
	OKP_TYPE_SYMBOL,	/* symbol: an address printed as sym+off/size */
	OKP_TYPE_SYMSTR,	/* symstr: the same, as a string */
	OKP_TYPE_STRING,	/* string */
	OKP_TYPE_USTRING,	/* ustring: the string is in user memory */
	OKP_TYPE_CHAR,		/* char (6.12): a byte printed as a character */
};

struct okp_fetch_deref {
	long offset;
	bool user;		/* +uOFFS(...): a user-memory read */
};

struct okp_fetch_arg {
	char name[OKP_EV_MAX_ARG_NAME_LEN + 1];
	char *text;			/* the fetch argument as written, for reading back */
	enum okp_fetch_source source;
	unsigned long param;
	char *immstr;			/* OKP_FETCH_IMMSTR */
	unsigned int nderef;
	struct okp_fetch_deref deref[OKP_EV_MAX_DEREFS];
	/* the kernel's fetch instructions this takes so far (parsing only: its nesting limit) */
	unsigned int ops;
	enum okp_fetch_kind kind;
	unsigned int size;		/* bytes of a numeric type */
	/* TYPE[count]: an array in memory; 0: one value. string[count] and ustring[count]: an
	 * array of string pointers in memory */
	unsigned int count;
	/* bitfield b<width>@<offset>/<size>: width 0 means none */
	unsigned int bit_width, bit_offset;
};

/*
 * An event (GRP/EVENT: its files, its enabled state) and its probes, as the kernel's
 * trace_probe_event and trace_kprobes: a line naming an existing event with the same probe
 * type and the same argument names and types adds a probe to it (append.c).
 */
struct okp_event {
	struct list_head node;		/* in okp_events */
	char group[OKP_EV_MAX_NAME_LEN];
	char name[OKP_EV_MAX_NAME_LEN];
	bool is_return;			/* of every probe of it */
	bool enabled;
	unsigned int id;
	struct list_head probes;	/* its okp_event_probes, oldest first; never empty */
	struct dentry *dir;		/* events/GROUP/NAME */
	void *enable_scope;		/* what its enable file covers (event_files.c) */
};

/* One probe of an event: where it probes and what it fetches there. */
struct okp_event_probe {
	struct list_head node;		/* in its event's probes */
	struct list_head all_node;	/* in okp_event_probes: every probe, oldest first */
	struct okp_event *event;
	char *symbol;			/* "[MOD:]SYM" or NULL for an address */
	char *module;			/* MOD of MOD:SYM (not vmlinux), or NULL */
	bool pending;			/* its module is not loaded: no probe registered */
	unsigned long addr;		/* the address asked for, when no symbol */
	unsigned int offset;
	/* the probed address its records print (the kernel's choice, event_address.h): set when
	 * its probe is registered, read at each hit */
	unsigned long record_addr;
	int maxactive;
	unsigned int nargs;
	struct okp_fetch_arg *args;	/* names and types the same in every probe of an event */
	/* what its records print with (event_format.c): made before the probe is registered,
	 * owns args; retired when the probe is freed */
	struct okp_event_format *format;
	/* what okprobes probes with: kprobe for p events, kretprobe for r events */
	struct okp_kprobe kp;
	struct okp_kretprobe rp;
};

extern struct mutex okp_events_change_mutex;
extern struct mutex okp_events_mutex;
extern struct list_head okp_events;
extern struct list_head okp_event_probes;

/* error_log.c: the kernel's tracing error log, for the line being parsed. */
void okp_event_log_begin(int argc, const char *const *argv);
void okp_event_log_set_index(int index);
void okp_event_log_err(int offset, const char *message);
void okp_event_log_end(void);
int okp_event_log_show(struct seq_file *m);
void okp_event_log_clear(void);

/* registers.c: an arch's register name (%REG without the %) to its offset in pt_regs, from
 * the arch's table (src/kernel/arch/<arch>/event_registers.c). */
struct okp_event_register {
	const char *name;
	unsigned int offset;
};
extern const struct okp_event_register okp_event_registers[];
extern const unsigned int okp_event_register_count;
int okp_event_register_offset(const char *name);

/* fetch_args.c: parse argument i of an event; what its format file says of each argument. */
int okp_fetch_arg_parse(struct okp_fetch_arg *args, unsigned int i, const char *text,
			bool is_return, bool at_func_entry);
void okp_fetch_arg_free(struct okp_fetch_arg *arg);
void okp_fetch_arg_show_format(struct seq_file *m, const struct okp_fetch_arg *arg,
			       unsigned int *offset);
void okp_fetch_arg_show_print_fmt(struct seq_file *m, const struct okp_fetch_arg *arg);
void okp_fetch_arg_show_print_args(struct seq_file *m, const struct okp_fetch_arg *arg);

/* fetch.c: at a hit, every argument's value stored binary (numbers as u64, strings as a
 * length and their bytes) into data, at most room bytes; the bytes used. *nstored: the
 * arguments that fit (a record holds at most OKP_TRACE_RECORD_MAX bytes). */
int okp_fetch_args_store(const struct okp_fetch_arg *args, unsigned int nargs,
			 struct pt_regs *regs, u8 *data, int room, u16 *nstored);
/* record_text.c: the stored values printed " name=value" as the kernel prints them. */
int okp_fetch_args_format(const struct okp_fetch_arg *args, unsigned int nstored,
			  const u8 *data, int data_len, char *buf, int len);

/*
 * A probe's format: what a record of it needs to be printed (its event's name and return
 * kind, its arguments' names and types). A probe's records point to it; it is freed once no
 * ring can hold a record of it any more (event_format.c).
 */
struct okp_event_format {
	struct list_head retired_node;	/* in the trace buffer's retired formats */
	char name[OKP_EV_MAX_NAME_LEN];
	bool is_return;
	unsigned int nargs;
	struct okp_fetch_arg *args;	/* owned: the probe's args */
	u64 *retired_heads;		/* each CPU's ring head when it was retired */
	/* The probed address's "(sym+off/size [mod])" for the tracefs instance's copy, printed
	 * by the first hit that claims it and used by the hits at the same address after it
	 * (record_text.c); forgotten when the probe is disarmed (its module goes). */
	atomic_t site_claimed;
	unsigned long site_addr;	/* published (release) once site_text is whole */
	char site_text[KSYM_SYMBOL_LEN];
	/* What the tracefs instance's binary copies of its records name it by: they can outlive
	 * it there, so its reader finds it by id (okp_event_format_find()), not by pointer. */
	u32 id;
	struct rcu_head rcu;
};

/* event_format.c */
int okp_event_format_attach(struct okp_event_probe *probe);
void okp_event_format_retire(struct okp_event_format *format);
void okp_event_format_free(struct okp_event_format *format);
void okp_event_format_forget_site(struct okp_event_format *format);
/* The format an id names, or NULL once it is freed (rcu_read_lock() held: it lives until
 * rcu_read_unlock()). */
const struct okp_event_format *okp_event_format_find(u32 id);
/* Unload: wait for the formats being freed (their RCU callbacks are okprobes' text). */
void okp_event_formats_exit(void);

/*
 * record.c: the hit handlers, which write one binary record per hit; record_text.c prints
 * one as the kernel's trace line. Each record in a ring is this header and the arguments'
 * values (okp_fetch_args_store()).
 */
struct okp_event_record {
	const struct okp_event_format *format;
	unsigned long ip;		/* the probed address; a return event's return address */
	unsigned long func;		/* a return event's function; 0 for an entry event */
	s32 pid;
	u16 cpu;
	u16 nstored;			/* arguments stored (the rest did not fit) */
	char latency[5];		/* the five latency columns (irqs-off...) */
	char comm[TASK_COMM_LEN];
	u8 data[] __aligned(8);
};
int okp_event_kprobe_hit(struct okp_kprobe *kp, struct pt_regs *regs);
int okp_event_kretprobe_hit(struct okp_kretprobe_instance *ri, struct pt_regs *regs);
/* The whole line, "<comm>-<pid> [<cpu>] <flags> <sec>.<usec>: <event>: ...\n", or from the
 * event name on (body_only: the tracefs instance's); its length (at most len - 1). */
int okp_event_record_text(const struct okp_event_record *rec, int rec_len, u64 ts,
			  bool body_only, char *buf, int len);
enum okp_record_text_kind {
	OKP_RECORD_TEXT_LINE,		/* okprobes' trace: the whole line */
	OKP_RECORD_TEXT_BODY_AT_HIT,	/* from the event name on, at a hit */
	/* the tracefs instance's reader: the function's name, ": ", then the body */
	OKP_RECORD_TEXT_INSTANCE,
};
/* The same, with the format given (a record copied elsewhere names it by id). */
int okp_event_record_text_as(const struct okp_event_format *format,
			     const struct okp_event_record *rec, int rec_len, u64 ts,
			     enum okp_record_text_kind kind, char *buf, int len);

/* parser.c: one kprobe_events line (a definition or a removal). */
int okp_event_command(char *line);

/* event_table.c: the events, their probes and enabled state. */
/* A new event with its first probe, or one more probe of an existing event. */
int okp_event_add(struct okp_event *ev, struct okp_event_probe *probe);
int okp_event_append(struct okp_event *ev, struct okp_event_probe *probe);
/* -:[GRP/]EVENT [PROBE [ARGS]]: the probes matching the rest of the line, or all of them, of
 * EVENT in GRP (group NULL: in any group; name "": every event of GRP). */
int okp_event_remove(const char *group, const char *name, int argc, const char *const *argv);
int okp_event_remove_all(void);
struct okp_event *okp_event_find(const char *group, const char *name);
void okp_event_probe_free(struct okp_event_probe *probe);
int okp_event_set_enabled(struct okp_event *ev, bool enable);
unsigned long okp_event_hits(const struct okp_event_probe *probe);
unsigned long okp_event_misses(const struct okp_event_probe *probe);
void okp_event_show_definition(struct seq_file *m, const struct okp_event_probe *probe);
void okp_events_teardown(void);
/* Register (and enable, if its event is) the probe of a pending event; unregister it. */
void okp_event_arm(struct okp_event_probe *probe);
void okp_event_disarm(struct okp_event_probe *probe);

/* append.c: may a probe be added to an existing event (the kernel's rules, and messages)? */
int okp_event_append_check(const struct okp_event *ev, bool is_return,
			   const struct okp_event_probe *probe);
/* Does a probe match "PROBE [NAME=ARG...]" (the rest of a -: line), as the kernel compares? */
bool okp_event_probe_matches(const struct okp_event_probe *probe, int argc,
			     const char *const *argv);

/* pending.c: events on modules not loaded yet. */
bool okp_event_module_loaded(const char *name);
int okp_events_pending_init(void);
void okp_events_pending_exit(void);

/* trace_buffer.c: per-CPU rings of binary records, printed when they are read. */
int okp_trace_buffer_init(void);
void okp_trace_buffer_exit(void);
/* The hit path: this CPU's ring locked and room for a record of at most OKP_TRACE_RECORD_MAX
 * bytes; then commit it (len bytes). NULL: the ring is locked by an NMI's victim (dropped). */
void *okp_trace_buffer_begin(unsigned long *irq_flags, u64 *ts);
void okp_trace_buffer_commit(int len, unsigned long irq_flags);
/* Between begin and commit: this CPU's scratch for a record's text (OKP_TRACE_TEXT_MAX). */
char *okp_trace_buffer_text_scratch(void);
void okp_trace_buffer_clear(void);
/* A snapshot of every record, oldest first, as text (vfree it). */
char *okp_trace_buffer_snapshot(size_t *len, unsigned long *entries, unsigned long *written);
/* Take the oldest record's text into buf (at most len bytes): its length, 0 if none, or
 * -ENOSPC. */
int okp_trace_buffer_consume(char *buf, size_t len);
bool okp_trace_buffer_empty(void);
/* Records refused because a ring was full (trace's header, the profile's tests). */
unsigned long okp_trace_buffer_dropped(void);
/* A format no new record can name any more: freed once no ring holds a record of it. */
void okp_trace_buffer_retire(struct okp_event_format *format);
/* Bytes of a binary record: a string at the kernel's length limit and the other arguments
 * beside it (the kernel's own records end at its ring's page, a little under 4 KiB, and it
 * drops a record that does not fit whole). */
#define OKP_TRACE_RECORD_MAX 8192
/* Bytes of a record's text: its strings as they are stored, its numbers printed wider. */
#define OKP_TRACE_TEXT_MAX 12288
/* A stored string that could not be read: printed (fault). */
#define OKP_STORED_FAULT (-1)

/* tracefs_instance.c: the `okprobes` tracefs instance, where the kernel has tracing. Made at
 * the first event's definition (before its probe is registered), destroyed at unload after
 * every probe is unregistered; while the copy is on (okprobes/record enabled in the instance,
 * off by default; the file tracefs_instance), the hit path copies each record there: binary
 * (instance_event.c), or where the kernel has not taken okprobes' event, its text from the
 * event name on. */
void okp_tracefs_instance_get(void);
/* The file tracefs_instance: whether the copy is on; turn it on or off (change mutex held). */
bool okp_tracefs_mirror_on(void);
int okp_tracefs_mirror_set(bool on);
void okp_tracefs_instance_write(const struct okp_event_record *rec, int len, u64 ts);
void okp_tracefs_instance_exit(void);

/* instance_event.c: the kernel trace event okprobes/record, whose entries in the instance are
 * binary copies of okprobes' records, printed by okprobes when the instance is read. */
struct trace_array;
/* The instance it writes to (tr alone), enabled there if on: 0, or why the kernel has it not
 * (the caller copies text instead). */
int okp_instance_event_attach(struct trace_array *tr, bool on);
/* Enable or disable it in that instance, as its enable file does. */
int okp_instance_event_set(bool on);
/* Whether it is enabled there (by anyone: okprobes, the enable file, trace-cmd). */
bool okp_instance_event_on(void);
/* Disable it (unload, before tr is destroyed). */
void okp_instance_event_disable(struct trace_array *tr);
/* At a hit: copy the record into tr's buffer, if the event is enabled there. */
void okp_instance_event_write(const struct okp_event_record *rec, int len);

/* event_files.c: events/, events/GROUP/, events/GROUP/NAME/{enable,format}. */
int okp_event_files_init(struct dentry *root);
void okp_event_files_exit(void);
int okp_event_files_add(struct okp_event *ev);
void okp_event_files_remove(struct okp_event *ev);

/* readme.c */
extern const char okp_events_readme[];

/* debugfs_files.c */
int okp_events_init(void);
void okp_events_exit(void);

#endif /* OKP_EVENTS_EVENTS_H */
