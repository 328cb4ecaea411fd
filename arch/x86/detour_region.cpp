// SPDX-License-Identifier: GPL-2.0
// The x86-64 detour region check (see detour_region.h).
#include "arch/x86/detour_region.h"

#include "arch/x86/jump_table.h"

#include <Zydis/Decoder.h>
#include <Zydis/Mnemonic.h>

namespace okp::x86 {

namespace {

// One decoded instruction, with what the checks ask of it.
struct Insn {
  u8 length = 0;
  ZydisMnemonic mnemonic = ZYDIS_MNEMONIC_INVALID;
  ZydisInstructionCategory category = ZYDIS_CATEGORY_INVALID;
  bool relative_branch = false;  // a direct branch: target is known
  bool rip_relative = false;
  bool indirect_jump = false;
  okp_addr_t target = 0;
  // Stack effect, in bytes pushed (positive) since the function's entry.
  enum class Stack : u8 { kNone, kDelta, kSetFramePointer, kFromFramePointer, kLeave, kUnknown };
  Stack stack = Stack::kNone;
  i32 delta = 0;  // kDelta: bytes pushed; kFromFramePointer: rsp = rbp + delta (bytes pushed)
};

// A stack effect of `bytes` pushed (kDelta) or of rsp = rbp - bytes (kFromFramePointer):
// computed in 64 bits, since add/sub of a sign-extended imm32 and lea's disp32 negate to +2^31
// (as an i32, the wrong sign). Beyond i32 the depth is not tracked: unknown.
void set_stack_effect(Insn& in, Insn::Stack kind, i64 bytes) {
  if (bytes < -0x7fffffffll || bytes > 0x7fffffffll) {
    in.stack = Insn::Stack::kUnknown;
    return;
  }
  in.stack = kind;
  in.delta = static_cast<i32>(bytes);
}

ErrorOr<Insn> decode_at(const FunctionText& fn, usize off) {
  ZydisDecoder decoder;
  if (ZYAN_FAILED(ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
    return Error(Errno::kInval, "decoder initialisation failed");
  ZydisDecoderContext context;
  ZydisDecodedInstruction zi;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT_VISIBLE];
  if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&decoder, &context, fn.bytes + off,
                                                fn.size - off, &zi)) ||
      ZYAN_FAILED(ZydisDecoderDecodeOperands(&decoder, &context, &zi, ops,
                                             zi.operand_count_visible)))
    return Error::formatted(Errno::kIlSeq, "bytes at +0x%lx do not decode", static_cast<unsigned long>(off));
  Insn in;
  in.length = zi.length;
  in.mnemonic = zi.mnemonic;
  in.category = zi.meta.category;
  const okp_addr_t next = fn.start + off + zi.length;
  for (u8 i = 0; i < zi.operand_count_visible; ++i) {
    const ZydisDecodedOperand& op = ops[i];
    if (op.type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op.imm.is_relative) {
      in.relative_branch = true;
      in.target = next + static_cast<okp_addr_t>(op.imm.value.s);
    }
    if (op.type == ZYDIS_OPERAND_TYPE_MEMORY && op.mem.base == ZYDIS_REGISTER_RIP)
      in.rip_relative = true;
  }
  if (zi.mnemonic == ZYDIS_MNEMONIC_JMP && !in.relative_branch) in.indirect_jump = true;
  // A jump to a retpoline thunk is `jmp *%reg` in disguise: it needs the tail-call proof (a
  // computed goto or a jump table through a thunk lands back inside the function). It stays a
  // relative branch too, so that in a region it is re-encoded for the detour.
  if (in.relative_branch && zi.meta.category != ZYDIS_CATEGORY_CALL) {
    for (usize i = 0; i < fn.n_thunks; ++i)
      if (in.target >= fn.thunks[i].start && in.target < fn.thunks[i].end) in.indirect_jump = true;
  }

  // The stack effect, for the tail-call proof.
  const bool op0_rsp = zi.operand_count_visible > 0 && ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
                       ops[0].reg.value == ZYDIS_REGISTER_RSP;
  const bool op1_imm = zi.operand_count_visible > 1 && ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
  const bool wide = zi.operand_width == 64;
  switch (zi.mnemonic) {
    case ZYDIS_MNEMONIC_PUSH:
    case ZYDIS_MNEMONIC_PUSHFQ:
      in.stack = wide ? Insn::Stack::kDelta : Insn::Stack::kUnknown;
      in.delta = 8;
      return in;
    case ZYDIS_MNEMONIC_POP:
    case ZYDIS_MNEMONIC_POPFQ:
      in.stack = wide && !op0_rsp ? Insn::Stack::kDelta : Insn::Stack::kUnknown;
      in.delta = -8;
      return in;
    case ZYDIS_MNEMONIC_LEAVE:
      in.stack = Insn::Stack::kLeave;
      return in;
    case ZYDIS_MNEMONIC_SUB:
    case ZYDIS_MNEMONIC_ADD:
      if (op0_rsp) {
        if (op1_imm) {
          const i64 v = ops[1].imm.value.s;  // a sign-extended imm8/imm32
          set_stack_effect(in, Insn::Stack::kDelta, zi.mnemonic == ZYDIS_MNEMONIC_SUB ? v : -v);
        } else {
          in.stack = Insn::Stack::kUnknown;
        }
      }
      return in;
    case ZYDIS_MNEMONIC_LEA:
      if (op0_rsp) {
        const ZydisDecodedOperand& m = ops[1];
        if (m.mem.index != ZYDIS_REGISTER_NONE) {
          in.stack = Insn::Stack::kUnknown;
        } else if (m.mem.base == ZYDIS_REGISTER_RSP) {
          set_stack_effect(in, Insn::Stack::kDelta, -m.mem.disp.value);
        } else if (m.mem.base == ZYDIS_REGISTER_RBP) {
          set_stack_effect(in, Insn::Stack::kFromFramePointer, -m.mem.disp.value);
        } else {
          in.stack = Insn::Stack::kUnknown;
        }
      }
      return in;
    case ZYDIS_MNEMONIC_MOV:
      if (zi.operand_count_visible > 1 && ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
          ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER) {
        if (ops[0].reg.value == ZYDIS_REGISTER_RBP && ops[1].reg.value == ZYDIS_REGISTER_RSP) {
          in.stack = Insn::Stack::kSetFramePointer;
          return in;
        }
        if (op0_rsp && ops[1].reg.value == ZYDIS_REGISTER_RBP) {
          in.stack = Insn::Stack::kFromFramePointer;
          return in;
        }
      }
      break;
    default:
      break;
  }
  // Any other write to rsp (and rsp, imm alignment, xchg, ...) loses track of the depth.
  for (u8 i = 0; i < zi.operand_count_visible; ++i)
    if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER && ops[i].reg.value == ZYDIS_REGISTER_RSP &&
        (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
      in.stack = Insn::Stack::kUnknown;
  return in;
}

bool ends_flow(const Insn& in) {
  return in.category == ZYDIS_CATEGORY_RET || in.category == ZYDIS_CATEGORY_UNCOND_BR ||
         in.mnemonic == ZYDIS_MNEMONIC_INT3 || in.mnemonic == ZYDIS_MNEMONIC_UD2 ||
         in.mnemonic == ZYDIS_MNEMONIC_IRETQ || in.mnemonic == ZYDIS_MNEMONIC_HLT;
}

// Instructions that cannot run from a copy in the detour (anywhere in the region).
const char* cannot_copy(const Insn& in) {
  switch (in.mnemonic) {
    case ZYDIS_MNEMONIC_INT3: return "an int3 (padding, or another tool's breakpoint)";
    case ZYDIS_MNEMONIC_UD2:
    case ZYDIS_MNEMONIC_UD1:
    case ZYDIS_MNEMONIC_UD0: return "a BUG/WARN trap (its table entry is keyed by its address)";
    case ZYDIS_MNEMONIC_LOOP:
    case ZYDIS_MNEMONIC_LOOPE:
    case ZYDIS_MNEMONIC_LOOPNE:
    case ZYDIS_MNEMONIC_JRCXZ:
    case ZYDIS_MNEMONIC_JECXZ: return "a rel8-only branch (cannot be re-encoded for the detour)";
    case ZYDIS_MNEMONIC_XBEGIN:
    case ZYDIS_MNEMONIC_XEND:
    case ZYDIS_MNEMONIC_XABORT: return "a transactional-memory instruction";
    case ZYDIS_MNEMONIC_SYSCALL:
    case ZYDIS_MNEMONIC_SYSRET:
    case ZYDIS_MNEMONIC_SYSENTER:
    case ZYDIS_MNEMONIC_SYSEXIT:
    case ZYDIS_MNEMONIC_IRET:
    case ZYDIS_MNEMONIC_IRETD:
    case ZYDIS_MNEMONIC_IRETQ:
    case ZYDIS_MNEMONIC_INT:
    case ZYDIS_MNEMONIC_INT1:
    case ZYDIS_MNEMONIC_SWAPGS:
    case ZYDIS_MNEMONIC_HLT: return "a privilege or flow transition";
    default: break;
  }
  if (in.category == ZYDIS_CATEGORY_UNCOND_BR && in.relative_branch == false && !in.indirect_jump)
    return "a far branch";
  return nullptr;
}

constexpr i32 kUnvisited = -0x7fffffff;
constexpr i32 kUnknownDepth = -0x7ffffffe;

// depth + delta, or unknown when that leaves i32 (found by tests/fuzz: `sub $0x7fffffff,%rsp`
// twice overflowed, undefined behaviour, and a wrapped depth could read as 0, a tail call)
// or collides with a marker.
i32 add_depth(i32 depth, i32 delta) {
  i32 sum;
  if (__builtin_add_overflow(depth, delta, &sum) || sum == kUnvisited || sum == kUnknownDepth)
    return kUnknownDepth;
  return sum;
}

// The stack depth on entry to every instruction of the function (kUnknownDepth where paths
// disagree or the depth was lost), propagated along direct control flow from the entry.
ErrorOr<void> track_stack(const FunctionText& fn, i32* depth, i32* frame) {
  for (usize i = 0; i < fn.size; ++i) depth[i] = frame[i] = kUnvisited;
  struct Work {
    u32 off;
    i32 depth, frame;
  };
  // Every instruction is (re)queued at most twice (unvisited -> known -> unknown): bounded.
  const usize cap = fn.size * 2 + 2;
  auto* work = static_cast<Work*>(okp_seam_alloc(cap * sizeof(Work), OKP_GFP_KERNEL));
  if (!work) return Error(Errno::kNoMem, "no memory for the region check");
  usize n = 0;
  work[n++] = {0, 0, kUnknownDepth};
  auto merge = [](i32 old_value, i32 value) {
    return old_value == kUnvisited || old_value == value ? value : kUnknownDepth;
  };
  while (n) {
    Work w = work[--n];
    usize off = w.off;
    i32 d = w.depth, fp = w.frame;
    while (off < fn.size) {
      const i32 nd = merge(depth[off], d), nfp = merge(frame[off], fp);
      if (nd == depth[off] && nfp == frame[off]) break;  // nothing new from this path
      depth[off] = d = nd;
      frame[off] = fp = nfp;
      auto r = decode_at(fn, off);
      if (r.is_error()) break;  // data or padding: stop this path
      const Insn& in = r.value();
      const bool known = d != kUnknownDepth;
      switch (in.stack) {
        case Insn::Stack::kNone: break;
        case Insn::Stack::kDelta: d = known ? add_depth(d, in.delta) : d; break;
        case Insn::Stack::kSetFramePointer: fp = d; break;
        case Insn::Stack::kFromFramePointer:
          d = fp != kUnknownDepth ? add_depth(fp, in.delta) : kUnknownDepth;
          break;
        case Insn::Stack::kLeave: d = fp != kUnknownDepth ? add_depth(fp, -8) : kUnknownDepth; break;
        case Insn::Stack::kUnknown: d = kUnknownDepth; break;
      }
      if (in.relative_branch && in.target >= fn.start && in.target < fn.start + fn.size &&
          in.category != ZYDIS_CATEGORY_CALL && n < cap)
        work[n++] = {static_cast<u32>(in.target - fn.start), d, fp};
      if (ends_flow(in)) break;
      off += in.length;
    }
  }
  okp_seam_free(work);
  return {};
}

// The linear decode's instruction starts, and where direct branches (calls too) and
// exception fixups land inside the function: what the jump-table guards are checked against.
void mark_function(const FunctionText& fn, const ExtableEntry* extable, usize n_extable,
                   u8* marks) {
  for (usize i = 0; i < fn.size; ++i) marks[i] = 0;
  auto mark_target = [&](okp_addr_t a) {
    if (a >= fn.start && a < fn.start + fn.size) marks[a - fn.start] |= kMarkBranchTarget;
  };
  for (usize off = 0; off < fn.size;) {
    auto r = decode_at(fn, off);
    if (r.is_error()) break;  // check_function refuses it
    marks[off] |= kMarkInsnStart;
    if (r.value().relative_branch) mark_target(r.value().target);
    off += r.value().length;
  }
  for (usize i = 0; i < n_extable; ++i) mark_target(extable[i].fixup);
}

// Every jump table of the function, resolved once to mark its entries as branch targets
// (check_function then checks each table's guard against all of them).
ErrorOr<void> mark_jump_tables(const FunctionText& fn, const DetourRegion& region, u8* marks) {
  for (usize off = 0; off < fn.size;) {
    auto r = decode_at(fn, off);
    if (r.is_error()) return {};  // check_function refuses it
    if (r.value().indirect_jump)
      OKP_TRY(check_jump_table(fn, marks, off, region.addr, region.addr + region.length, true));
    off += r.value().length;
  }
  return {};
}

// Step 3 of the check: the whole function against the region.
ErrorOr<void> check_function(const FunctionText& fn, const DetourRegion& region,
                             const ExtableEntry* extable, usize n_extable, i32* depth, i32* frame,
                             u8* marks) {
  OKP_TRY(track_stack(fn, depth, frame));
  mark_function(fn, extable, n_extable, marks);
  OKP_TRY(mark_jump_tables(fn, region, marks));
  const okp_addr_t addr = region.addr, end = addr + region.length;
  const unsigned long at = addr - fn.start;
  for (usize off = 0; off < fn.size;) {
    auto r = decode_at(fn, off);
    if (r.is_error())
      return Error::formatted(Errno::kIlSeq, "not optimized: the function does not decode at +0x%lx",
                              static_cast<unsigned long>(off));
    const Insn& in = r.value();
    if (in.relative_branch && in.target > addr && in.target < end)
      return Error::formatted(Errno::kInval,
                              "not optimized: %s at +0x%lx jumps to +0x%lx, inside the region "
                              "+0x%lx..+0x%lx", ZydisMnemonicGetString(in.mnemonic),
                              static_cast<unsigned long>(off),
                              static_cast<unsigned long>(in.target - fn.start), at,
                              at + region.length - 1);
    // A jump table is resolved whatever the stack depth (a frameless switch is at depth 0,
    // yet no tail call): accepted when bounded and none of its entries lands in the region.
    if (in.indirect_jump) {
      auto table = check_jump_table(fn, marks, off, addr, end, false);
      if (table.is_error()) return table.release_error();
      if (table.value() == JumpTableVerdict::kResolved) {
        off += in.length;
        continue;
      }
    }
    if (in.indirect_jump && depth[off] != 0) {
      if (depth[off] == kUnvisited || depth[off] == kUnknownDepth)
        return Error::formatted(Errno::kInval,
                                "not optimized: indirect jump at +0x%lx is not provably a tail "
                                "call (stack depth unknown): it may target the region",
                                static_cast<unsigned long>(off));
      return Error::formatted(Errno::kInval,
                              "not optimized: indirect jump at +0x%lx is not a tail call (%d bytes "
                              "on the stack): it may target the region",
                              static_cast<unsigned long>(off), depth[off]);
    }
    off += in.length;
  }
  return {};
}

}  // namespace

usize code_size(const FunctionText& fn) {
  usize zeros_from = fn.size;
  while (zeros_from > 0 && fn.bytes[zeros_from - 1] == 0) --zeros_from;
  if (zeros_from == fn.size) return fn.size;
  bool flow_ended = false;
  for (usize off = 0; off < fn.size;) {
    if (off >= zeros_from && flow_ended) return off;
    auto r = decode_at(fn, off);
    if (r.is_error()) return fn.size;
    flow_ended = ends_flow(r.value());
    off += r.value().length;
  }
  return fn.size;
}

namespace {

bool is_padding(const Insn& in) {
  return in.mnemonic == ZYDIS_MNEMONIC_INT3 || in.mnemonic == ZYDIS_MNEMONIC_NOP;
}

}  // namespace

ErrorOr<okp_addr_t> foreign_branch_into(const FunctionText& other, okp_addr_t region_start,
                                        okp_addr_t region_end) {
  for (usize off = 0; off < other.size;) {
    auto r = decode_at(other, off);
    if (r.is_error())
      return Error::formatted(Errno::kIlSeq, "bytes at %#lx do not decode", other.start + off);
    const Insn& in = r.value();
    if (in.relative_branch && in.target > region_start && in.target < region_end)
      return other.start + off;
    off += in.length;
  }
  return okp_addr_t{0};
}

bool runs_on_past_end(const FunctionText& fn) {
  bool ends = true;  // an empty symbol runs on into nothing
  usize off = 0;
  while (off < fn.size) {
    auto r = decode_at(fn, off);
    if (r.is_error()) return false;  // data, not code
    const Insn& in = r.value();
    off += in.length;
    if (is_padding(in)) {
      ends = true;  // padding before the end: a flow that reached it was not meant to
      continue;
    }
    // A last call is to a function that does not return (__stack_chk_fail, panic, BUG
    // helpers): compiled code never falls off its end after a call that returns. ud1/ud0
    // trap like ud2 (a static-call trampoline ends `jmp; ud1`).
    ends = ends_flow(in) || in.category == ZYDIS_CATEGORY_CALL ||
           in.mnemonic == ZYDIS_MNEMONIC_UD1 || in.mnemonic == ZYDIS_MNEMONIC_UD0;
  }
  return !ends && off == fn.size;
}

usize outside_jump_targets(const FunctionText& fn, okp_addr_t* out, usize max) {
  usize n = 0;
  for (usize off = 0; off < fn.size;) {
    auto r = decode_at(fn, off);
    if (r.is_error()) break;
    const Insn& in = r.value();
    off += in.length;
    if (!in.relative_branch || in.category == ZYDIS_CATEGORY_CALL) continue;
    if (in.target >= fn.start && in.target < fn.start + fn.size) continue;
    bool seen = false;
    for (usize i = 0; i < n && !seen; ++i) seen = out[i] == in.target;
    if (!seen && n < max) out[n++] = in.target;
  }
  return n;
}

ErrorOr<DetourRegion> check_detour_region(const FunctionText& fn, okp_addr_t addr,
                                          const ExtableEntry* extable, usize n_extable) {
  if (addr < fn.start || addr >= fn.start + fn.size)
    return Error::formatted(Errno::kInval, "%#lx is outside its function", addr);
  const usize at = addr - fn.start;

  // 1. The region: whole instructions covering the jump, inside the function.
  DetourRegion region;
  region.addr = addr;
  Insn last_in;
  while (region.length < kJumpSize) {
    const usize off = at + region.length;
    if (off >= fn.size)
      return Error::formatted(Errno::kInval,
                              "not optimized: the region +0x%lx..+0x%lx crosses the end of the "
                              "function (+0x%lx)", static_cast<unsigned long>(at),
                              static_cast<unsigned long>(at + kJumpSize),
                              static_cast<unsigned long>(fn.size));
    auto r = decode_at(fn, off);
    if (r.is_error())
      return Error::formatted(Errno::kIlSeq, "not optimized: bytes at +0x%lx do not decode",
                              static_cast<unsigned long>(off));
    const Insn& in = r.value();
    if (const char* why = cannot_copy(in))
      return Error::formatted(Errno::kInval, "not optimized: %s '%s' at +0x%lx is in the region",
                              why, ZydisMnemonicGetString(in.mnemonic),
                              static_cast<unsigned long>(off));
    if (region.count && (ends_flow(last_in) || last_in.category == ZYDIS_CATEGORY_CALL))
      return Error::formatted(Errno::kInval,
                              "not optimized: '%s' at +0x%lx is in the middle of the region (%s)",
                              ZydisMnemonicGetString(last_in.mnemonic),
                              static_cast<unsigned long>(at + region.insns[region.count - 1].offset),
                              last_in.category == ZYDIS_CATEGORY_CALL
                                  ? "a call must be the region's last instruction"
                                  : "the flow ends there; what follows is reached from elsewhere");
    RegionInsn& ri = region.insns[region.count++];
    ri.offset = region.length;
    ri.length = in.length;
    ri.rip_relative = in.rip_relative;
    ri.relative_branch = in.relative_branch && in.category != ZYDIS_CATEGORY_CALL;
    ri.is_call = in.category == ZYDIS_CATEGORY_CALL;
    ri.target = in.target;
    region.length += in.length;
    last_in = in;
  }
  const okp_addr_t end = addr + region.length;
  if (end > fn.start + fn.size)
    return Error::formatted(Errno::kInval,
                            "not optimized: the region +0x%lx..+0x%lx crosses the end of the "
                            "function (+0x%lx)", static_cast<unsigned long>(at),
                            static_cast<unsigned long>(at + region.length),
                            static_cast<unsigned long>(fn.size));

  // 2. Exception table: a fault is fixed up by its instruction's address.
  for (usize i = 0; i < n_extable; ++i) {
    const ExtableEntry& e = extable[i];
    if (e.insn >= addr && e.insn < end)
      return Error::formatted(Errno::kInval,
                              "not optimized: exception-table entry at +0x%lx: a fault there must "
                              "happen at that address, not in the detour",
                              static_cast<unsigned long>(e.insn - fn.start));
    if (e.fixup > addr && e.fixup < end)
      return Error::formatted(Errno::kInval,
                              "not optimized: exception fixup of +0x%lx lands in the region "
                              "+0x%lx..+0x%lx", static_cast<unsigned long>(e.insn - fn.start),
                              static_cast<unsigned long>(at), static_cast<unsigned long>(at + region.length));
  }

  // 3. Every instruction of the function: no direct branch into the region, every indirect
  //    jump a proved tail call.
  auto* depth = static_cast<i32*>(
      okp_seam_alloc(fn.size * 2 * sizeof(i32) + fn.size, OKP_GFP_KERNEL));
  if (!depth) return Error(Errno::kNoMem, "no memory for the region check");
  auto checked = check_function(fn, region, extable, n_extable, depth, depth + fn.size,
                                reinterpret_cast<u8*>(depth + 2 * fn.size));
  okp_seam_free(depth);
  if (checked.is_error()) return checked.release_error();
  return region;
}

}  // namespace okp::x86
