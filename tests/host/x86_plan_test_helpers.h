// SPDX-License-Identifier: GPL-2.0
// What the x86 planning and emulation tests share: instruction bytes, planning helpers and a
// trap frame whose stack is real memory.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>

#include "arch/x86/insn_emulate.h"
#include "arch/x86/insn_plan.h"
#include "host_seam.h"

namespace x86_plan_test {

using okp::u8;
using okp::u64;
using okp::usize;
using okp::x86::Emulation;
using okp::x86::InsnPlan;
using okp::x86::kSlotSize;

// A kernel text address and a slot 512 MiB above it (module space is within 2 GiB of text).
constexpr okp_addr_t kAddr = 0xffffffff81234560ul;
constexpr okp_addr_t kSlot = 0xffffffffa0001000ul;

constexpr unsigned long kCF = 0x1, kPF = 0x4, kAF = 0x10, kZF = 0x40, kSF = 0x80, kTF = 0x100,
                        kIF = 0x200, kDF = 0x400, kOF = 0x800, kIOPL = 0x3000, kNT = 0x4000,
                        kRF = 0x10000, kVM = 0x20000, kAC = 0x40000, kVIF = 0x80000,
                        kVIP = 0x100000, kID = 0x200000;

struct Code {
  u8 bytes[16] = {};
  usize size = 0;
  Code(std::initializer_list<u8> b) {
    std::memcpy(bytes, b.begin(), b.size());
    size = b.size();
  }
};

inline okp::ErrorOr<InsnPlan> plan(const Code& c, okp_addr_t addr = kAddr, okp_addr_t slot = kSlot) {
  return okp::x86::plan_insn(addr, c.bytes, c.size, slot);
}

inline InsnPlan plan_ok(const Code& c, okp_addr_t addr = kAddr, okp_addr_t slot = kSlot) {
  auto r = plan(c, addr, slot);
  EXPECT_FALSE(r.is_error()) << (r.is_error() ? r.error().reason() : "");
  return r.is_error() ? InsnPlan{} : r.value();
}

// 0 or the negative errno, and the reason for messages.
inline int plan_errno(const Code& c, const char** reason = nullptr) {
  auto r = plan(c);
  if (reason) *reason = r.is_error() ? r.error().reason() : nullptr;
  return r.is_error() ? r.error().kernel_errno() : 0;
}

// A trap frame whose stack is a local array: pushes and pops land in real memory.
struct Frame {
  alignas(16) unsigned long stack[64] = {};
  okp_regs regs{};
  explicit Frame(okp_addr_t addr = kAddr) {
    regs.ip = addr + 1;  // after the probe's int3
    regs.sp = reinterpret_cast<unsigned long>(&stack[32]);
    regs.flags = 0x202;
  }
  unsigned long initial_sp() const { return reinterpret_cast<unsigned long>(&stack[32]); }
  unsigned long top() const { return *reinterpret_cast<const unsigned long*>(regs.sp); }
};

inline void emulate_ok(const InsnPlan& p, Frame& f, okp_addr_t addr = kAddr) {
  auto r = okp::x86::emulate(p, addr, &f.regs);
  EXPECT_FALSE(r.is_error()) << (r.is_error() ? r.error().reason() : "");
}

}  // namespace x86_plan_test
