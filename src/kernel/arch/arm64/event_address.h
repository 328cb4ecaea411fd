/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which address an okprobes kprobe event's records print for a probe asked at a function's
 * start (src/kernel/events/event_table.c): the one the kernel's own kprobe event on the same
 * place would print, so records compare line for line.
 * arm64: the kernel's kprobes put a probe asked at a function's start there, on its BTI
 * landing pad or ftrace's first NOP (arm64 has no arch_adjust_kprobe_addr() and no
 * KPROBES_ON_FTRACE), and record that address; okprobes serves it on the ftrace call site after
 * them. An entry event therefore records the function's start, as the kernel's would.
 */
#ifndef OKP_EVENT_ADDRESS_H
#define OKP_EVENT_ADDRESS_H

#define OKP_ARCH_EVENT_RECORDS_FUNCTION_START 1

#endif /* OKP_EVENT_ADDRESS_H */
