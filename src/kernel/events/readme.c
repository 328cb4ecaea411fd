// SPDX-License-Identifier: GPL-2.0
/*
 * README: the kernel's kprobe-events syntax summary (the kprobe lines of the tracing
 * README), listing exactly what okprobes accepts; tools and tests read it to detect features.
 *
 * Locking: none; constant text.
 */
#include "events.h"

const char okp_events_readme[] =
	"okprobes kprobe events (the kernel's kprobe_events syntax; docs/events.md)\n"
	"\n"
	"  kprobe_events\t\t- Create/append/remove/show the kernel dynamic events\n"
	"\t\t\t  Write into this file to define/undefine new trace events.\n"
	"  kprobe_profile\t- Event name, hits and misses of each event\n"
	"  error_log\t\t- Why the last lines were refused (> error_log clears it)\n"
	"  trace\t\t\t- The records (> trace clears them)\n"
	"  trace_pipe\t\t- A consuming read of the records, blocking while there are none\n"
	"  events/\t\t- enable (all), GROUP/enable, GROUP/EVENT/{enable,format}\n"
	"  tracefs_instance\t- 1: records copied to the tracefs instance okprobes too; 0: not\n"
	"\n"
	"  Create/append a kprobe event:\n"
	"\t  p[:[<group>/][<event>]] <place> [<args>]\n"
	"\t  r[maxactive][:[<group>/][<event>]] <place> [<args>]\n"
	"\t  -:[<group>/][<event>] [<place> [<args>]]\n"
	"\t    place: [<module>:]<symbol>[+<offset>]|<memaddr>\n"
	"\t    place (kretprobe): [<module>:]<symbol>[+<offset>]%return|<memaddr>\n"
	"\t     args: <name>=fetcharg[:type]\n"
	"\t fetcharg: (%<register>|$<efield>), @<address>, @<symbol>[+|-<offset>],\n"
	"\t           $stack<index>, $stack, $retval, $comm, $arg<N>,\n"
	"\t           +|-[u]<offset>(<fetcharg>), \\imm-value, \\\"imm-string\"\n"
	"\t     type: s8/16/32/64, u8/16/32/64, x8/16/32/64, char, string, symbol,\n"
	"\t           b<bit-width>@<bit-offset>/<container-size>, ustring,\n"
	"\t           symstr, %pd/%pD, <type>\\[<array-size>\\]\n"
	"\n"
	"  Where the kernel has tracing, every record also goes to the tracefs instance\n"
	"  okprobes (instances/okprobes/trace), as trace_array_printk() text entries.\n"
	"\n"
	"  A line naming an existing event appends a probe to it (same probe type, same\n"
	"  argument names and types); -:<group>/<event> <place> removes only that probe.\n"
	"  -:<event> removes <event> of every group, -:<group>/ every event of <group>.\n"
	"\n"
	"  Not supported by okprobes: $arg<N> on return probes, BTF argument names\n"
	"  ($arg*, <argname>->field). Events on modules not loaded yet wait for the module.\n";
