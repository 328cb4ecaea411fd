/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which address an okprobes kprobe event's records print for a probe asked at a function's
 * start (src/kernel/events/event_table.c): the one the kernel's own kprobe event on the same
 * place would print, so records compare line for line.
 * x86-64: the kernel's kprobes skip an ENDBR64 at a function's start as okprobes does
 * (arch_adjust_kprobe_addr()), and the ftrace call site is where both then land: an entry event
 * records the address okprobes probes.
 */
#ifndef OKP_EVENT_ADDRESS_H
#define OKP_EVENT_ADDRESS_H

#define OKP_ARCH_EVENT_RECORDS_FUNCTION_START 0

#endif /* OKP_EVENT_ADDRESS_H */
