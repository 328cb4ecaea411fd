// SPDX-License-Identifier: GPL-2.0
// OKP_HIT_PATH marks a function that the breakpoint trap, the ftrace entry or a return stub
// runs. It goes into .kprobes.text, which the kernel adds to its own kprobes' blacklist when it
// loads the module (add_module_kprobe_blacklist): a kernel kprobe there would trap inside
// okprobes' handling of a trap. okprobes' own probes never go there either (its whole text is
// in its blacklist). The C glue's entry points use NOKPROBE_SYMBOL() to the same end.
//
// Helpers that are always inlined need no mark. tests/vm/scripts/probes.sh proves the set is
// complete on each kernel: every okprobes function the derived trap path reaches
// (core/trap_path.h) is refused by the kernel's kprobe_events.
#pragma once

#define OKP_HIT_PATH [[gnu::section(".kprobes.text")]]
