// SPDX-License-Identifier: GPL-2.0
/*
 * Appending a probe to an existing event, with the kernel's rules (6.1's trace_kprobe.c,
 * register_trace_kprobe() and append_trace_kprobe(); trace_probe.c,
 * trace_probe_compare_arg_type()): a line naming an existing GRP/EVENT adds a probe to it when
 * - it is the same probe type (p or r): else "Probe type is different from existing probe",
 *   the caret under the line's first character;
 * - its arguments have the same names and types, in the same number, as the event's first
 *   probe: else "Argument type or name is different from existing probe", the caret under the
 *   first argument that differs (after the last one when the line has fewer);
 * - it is not the same probe again (the same place and the same fetch args as written): else
 *   "There is already the exact same probe event".
 * Each refusal is -EEXIST. Types compare as the kernel's fetch types do: a bitfield is its
 * container's unsigned type, no type is x64, $comm and \"STRING" are string; an array's length
 * counts. What the kernel compares for "the same place" is its symbol text and offset; an
 * address probe has no symbol ("unknown") and offset 0, so two address probes with the same
 * args are "the same probe" to it, and to okprobes.
 *
 * And the rest of a -: line (`-:GRP/EVENT PROBE [NAME=ARG...]`) picks the probes to remove as
 * trace_kprobe_match_command_head() does: PROBE as the definition prints it, then each
 * NAME=ARG given equal to the probe's own, in order (fewer are fine).
 *
 * Locking: under okp_events_change_mutex (the event's probes change only with it held).
 */
#include <linux/kernel.h>
#include <linux/string.h>

#include "events.h"

/* The kernel's fetch type: equal kinds and sizes (the bitfield is its container, u8..u64). */
static bool okp_same_fetch_type(const struct okp_fetch_arg *a, const struct okp_fetch_arg *b)
{
	return a->kind == b->kind && a->size == b->size && a->count == b->count &&
	       !strcmp(a->name, b->name);
}

/* The first argument (from 1) whose name or type differ, or 0: trace_probe_compare_arg_type(). */
static unsigned int okp_compare_args(const struct okp_event_probe *a,
				     const struct okp_event_probe *b)
{
	unsigned int i;

	if (a->nargs != b->nargs)
		return min(a->nargs, b->nargs) + 1;
	for (i = 0; i < a->nargs; i++)
		if (!okp_same_fetch_type(&a->args[i], &b->args[i]))
			return i + 1;
	return 0;
}

/* trace_kprobe_has_same_kprobe(): the same symbol text and offset, the same args as written. */
static bool okp_same_probe(const struct okp_event_probe *a, const struct okp_event_probe *b)
{
	unsigned int i;

	if (strcmp(a->symbol ?: "unknown", b->symbol ?: "unknown") || a->offset != b->offset)
		return false;
	for (i = 0; i < a->nargs; i++)
		if (strcmp(a->args[i].text, b->args[i].text))
			return false;
	return true;
}

int okp_event_append_check(const struct okp_event *ev, bool is_return,
			   const struct okp_event_probe *probe)
{
	const struct okp_event_probe *first, *other;
	unsigned int diff;

	if (ev->is_return != is_return) {
		okp_event_log_set_index(0);
		okp_event_log_err(0, "Probe type is different from existing probe");
		return -EEXIST;
	}
	first = list_first_entry(&ev->probes, struct okp_event_probe, node);
	diff = okp_compare_args(probe, first);
	if (diff) {
		/* argument n is the line's word n + 1 */
		okp_event_log_set_index(diff + 1);
		okp_event_log_err(0, "Argument type or name is different from existing probe");
		return -EEXIST;
	}
	list_for_each_entry(other, &ev->probes, node)
		if (okp_same_probe(other, probe)) {
			okp_event_log_set_index(0);
			okp_event_log_err(0, "There is already the exact same probe event");
			return -EEXIST;
		}
	return 0;
}

bool okp_event_probe_matches(const struct okp_event_probe *probe, int argc,
			     const char *const *argv)
{
	char place[OKP_EV_MAX_ARGSTR_LEN + 1];
	int i;

	if (!argc)
		return true;
	if (!probe->symbol)
		snprintf(place, sizeof(place), "0x%p", (void *)probe->addr);
	else if (probe->offset)
		snprintf(place, sizeof(place), "%s+%u", probe->symbol, probe->offset);
	else
		snprintf(place, sizeof(place), "%s", probe->symbol);
	if (strcmp(place, argv[0]))
		return false;
	argc--;
	argv++;
	if (probe->nargs < argc)
		return false;
	for (i = 0; i < argc; i++) {
		size_t len = strlen(probe->args[i].name);

		if (strncmp(argv[i], probe->args[i].name, len) || argv[i][len] != '=' ||
		    strcmp(argv[i] + len + 1, probe->args[i].text))
			return false;
	}
	return true;
}
