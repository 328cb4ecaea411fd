// SPDX-License-Identifier: GPL-2.0
// Jump-table resolution for the x86-64 region check (see jump_table.h).
#include "arch/x86/jump_table.h"

#include <Zydis/Decoder.h>
#include <Zydis/Mnemonic.h>
#include <Zydis/Register.h>

namespace okp::x86 {

namespace {

struct Decoded {
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT_VISIBLE];
};

bool decode(const u8* bytes, usize avail, Decoded& d) {
  ZydisDecoder decoder;
  if (ZYAN_FAILED(ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
    return false;
  ZydisDecoderContext context;
  return ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decoder, &context, bytes, avail, &d.insn)) &&
         ZYAN_SUCCESS(ZydisDecoderDecodeOperands(&decoder, &context, &d.insn, d.ops,
                                                 d.insn.operand_count_visible));
}

bool decode_in(const FunctionText& fn, usize off, Decoded& d) {
  return off < fn.size && decode(fn.bytes + off, fn.size - off, d);
}

// The instruction before the one at off in the linear decode (marks), if any.
bool previous_insn(const u8* marks, usize off, usize* prev) {
  for (usize back = 1; back <= 15 && back <= off; ++back)
    if (marks[off - back] & kMarkInsnStart) {
      *prev = off - back;
      return true;
    }
  return false;
}

bool is_register(const Decoded& d, u8 i, ZydisRegisterClass cls) {
  return d.insn.operand_count_visible > i && d.ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
         ZydisRegisterGetClass(d.ops[i].reg.value) == cls;
}

// A table operand: qword [disp32 + index*8], no base, no segment override; the table's
// address is the sign-extended disp32 (-mcmodel=kernel).
bool table_operand(const Decoded& d, u8 i, okp_addr_t* table, ZydisRegister* index) {
  if (d.insn.operand_count_visible <= i) return false;
  const ZydisDecodedOperand& m = d.ops[i];
  if (m.type != ZYDIS_OPERAND_TYPE_MEMORY || m.mem.type != ZYDIS_MEMOP_TYPE_MEM ||
      m.mem.base != ZYDIS_REGISTER_NONE || m.mem.scale != 8 || m.size != 64 ||
      ZydisRegisterGetClass(m.mem.index) != ZYDIS_REGCLASS_GPR64 ||
      (m.mem.segment != ZYDIS_REGISTER_DS && m.mem.segment != ZYDIS_REGISTER_NONE))
    return false;
  *table = static_cast<okp_addr_t>(m.mem.disp.value);
  *index = m.mem.index;
  return true;
}

// The register a retpoline thunk jumps through, read from its own text (every flavour names
// it: `jmp *%reg`, `lfence; jmp *%reg`, or the retpoline's `mov %reg,(%rsp); ret`); NONE when
// the text says nothing certain.
[[gnu::noinline]] ZydisRegister thunk_register(okp_addr_t thunk) {
  u8 text[32];
  if (okp_seam_read_nofault(text, thunk, sizeof(text))) return ZYDIS_REGISTER_NONE;
  for (usize off = 0; off < sizeof(text);) {
    Decoded d;
    if (!decode(text + off, sizeof(text) - off, d)) break;
    if (d.insn.mnemonic == ZYDIS_MNEMONIC_JMP && is_register(d, 0, ZYDIS_REGCLASS_GPR64))
      return d.ops[0].reg.value;
    if (d.insn.mnemonic == ZYDIS_MNEMONIC_MOV && d.ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY &&
        d.ops[0].mem.base == ZYDIS_REGISTER_RSP && d.ops[0].mem.index == ZYDIS_REGISTER_NONE &&
        d.ops[0].mem.disp.value == 0 && is_register(d, 1, ZYDIS_REGCLASS_GPR64))
      return d.ops[1].reg.value;
    off += d.insn.length;
  }
  return ZYDIS_REGISTER_NONE;
}

bool in_thunk(const FunctionText& fn, okp_addr_t a) {
  for (usize i = 0; i < fn.n_thunks; ++i)
    if (a >= fn.thunks[i].start && a < fn.thunks[i].end) return true;
  return false;
}

// Where the table is read and with which index: at the jump itself (jmp *table(,%idx,8)) or
// by the load feeding the register it jumps through.
struct TableForm {
  usize load_off;
  okp_addr_t table;
  ZydisRegister index;
};

[[gnu::noinline]] bool find_table_form(const FunctionText& fn, const u8* marks, usize jump_off, TableForm* form) {
  Decoded jmp;
  if (!decode_in(fn, jump_off, jmp) || jmp.insn.mnemonic != ZYDIS_MNEMONIC_JMP) return false;
  if (table_operand(jmp, 0, &form->table, &form->index)) {
    form->load_off = jump_off;
    return true;
  }
  ZydisRegister through = ZYDIS_REGISTER_NONE;
  if (is_register(jmp, 0, ZYDIS_REGCLASS_GPR64)) {
    through = jmp.ops[0].reg.value;
  } else if (jmp.ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && jmp.ops[0].imm.is_relative) {
    const okp_addr_t target = fn.start + jump_off + jmp.insn.length +
                              static_cast<okp_addr_t>(jmp.ops[0].imm.value.s);
    if (in_thunk(fn, target)) through = thunk_register(target);
  }
  if (through == ZYDIS_REGISTER_NONE) return false;
  usize load_off;
  if (!previous_insn(marks, jump_off, &load_off)) return false;
  Decoded load;
  if (!decode_in(fn, load_off, load)) return false;
  if (load.insn.mnemonic == ZYDIS_MNEMONIC_LFENCE) {  // a retpoline-lfence call site
    if (!previous_insn(marks, load_off, &load_off) || !decode_in(fn, load_off, load)) return false;
  }
  if (load.insn.mnemonic != ZYDIS_MNEMONIC_MOV || !is_register(load, 0, ZYDIS_REGCLASS_GPR64) ||
      load.ops[0].reg.value != through || !table_operand(load, 1, &form->table, &form->index))
    return false;
  form->load_off = load_off;
  return true;
}

// The bound on the index: `cmp $imm,%reg` then ja/jae right before the load, %reg the index
// or (through `mov %e_src,%e_idx`, which zero-extends) the mov's 32-bit source. 0 with
// *why set when there is none.
struct Bound {
  u32 entries = 0;
  usize cmp_off = 0;
  const char* why = nullptr;
  ZydisRegister bound_reg = ZYDIS_REGISTER_NONE;
  long long imm = 0;
};

[[gnu::noinline]] Bound find_bound(const FunctionText& fn, const u8* marks, const TableForm& form) {
  Bound b;
  ZydisRegister reg = form.index;
  const ZydisRegister index32 =
      ZydisRegisterEncode(ZYDIS_REGCLASS_GPR32, static_cast<ZyanU8>(ZydisRegisterGetId(form.index)));
  usize off;
  Decoded d;
  if (!previous_insn(marks, form.load_off, &off) || !decode_in(fn, off, d)) {
    b.why = "nothing before it";
    return b;
  }
  if (d.insn.mnemonic == ZYDIS_MNEMONIC_MOV && is_register(d, 0, ZYDIS_REGCLASS_GPR32) &&
      d.ops[0].reg.value == index32 && is_register(d, 1, ZYDIS_REGCLASS_GPR32)) {
    reg = d.ops[1].reg.value;  // the upper half of the index is zero from here
    if (!previous_insn(marks, off, &off) || !decode_in(fn, off, d)) {
      b.why = "nothing before it";
      return b;
    }
  }
  const bool ja = d.insn.mnemonic == ZYDIS_MNEMONIC_JNBE, jae = d.insn.mnemonic == ZYDIS_MNEMONIC_JNB;
  if (!ja && !jae) {
    b.why = "no ja/jae before the table read";
    return b;
  }
  if (!previous_insn(marks, off, &off) || !decode_in(fn, off, d) ||
      d.insn.mnemonic != ZYDIS_MNEMONIC_CMP || d.insn.operand_count_visible < 2 ||
      d.ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
      d.ops[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE) {
    b.why = "no cmp $imm before the ja/jae";
    return b;
  }
  if (d.ops[0].reg.value != reg) {
    b.why = ZydisRegisterGetClass(d.ops[0].reg.value) == ZYDIS_REGCLASS_GPR32 &&
                    d.ops[0].reg.value == index32
                ? "the cmp is on its 32-bit half, with no zero-extending mov"
                : "the cmp is on another register";
    return b;
  }
  // The immediate is sign-extended to the operand size and compared unsigned: a negative one
  // bounds nothing useful.
  const long long imm = d.ops[1].imm.value.s;
  const long long n = ja ? imm + 1 : imm;
  b.imm = imm;
  b.bound_reg = reg;
  b.cmp_off = off;
  if (imm < 0 || n > kMaxJumpTableEntries || n < 1) {
    b.why = "its bound is not a table size the check reads";
    return b;
  }
  b.entries = static_cast<u32>(n);
  return b;
}

}  // namespace

ErrorOr<JumpTableVerdict> check_jump_table(const FunctionText& fn, u8* marks, usize jump_off,
                                           okp_addr_t region_start, okp_addr_t region_end,
                                           bool mark_entries) {
  TableForm form;
  if (!find_table_form(fn, marks, jump_off, &form)) return JumpTableVerdict::kNotATable;
  const unsigned long at = jump_off;
  const okp_addr_t fn_end = fn.start + fn.size;
  auto inside = [&](okp_addr_t a) { return a >= fn.start && a < fn_end; };
  u64 first;
  if (okp_seam_read_nofault(&first, form.table, sizeof(first)))
    return Error::formatted(Errno::kFault, "not optimized: indirect jump at +0x%lx: cannot read "
                            "its jump table at %#lx", at, form.table);

  const Bound bound = find_bound(fn, marks, form);
  if (bound.why) {
    // A table whose first entry leaves the function is one of function pointers: the jump is
    // a tail call, for the tail-call rule to judge.
    if (!inside(first)) return JumpTableVerdict::kLeavesFunction;
    return Error::formatted(Errno::kInval, "not optimized: indirect jump at +0x%lx: jump table "
                            "not bounded by a cmp on %%%s (%s)", at,
                            ZydisRegisterGetString(form.index), bound.why);
  }
  // Nothing may enter between the cmp and the jump: the bound holds on every path.
  for (usize b = bound.cmp_off + 1; b <= jump_off; ++b)
    if (marks[b] & kMarkBranchTarget)
      return Error::formatted(Errno::kInval, "not optimized: indirect jump at +0x%lx: jump table "
                              "not bounded: +0x%lx, after its cmp at +0x%lx, is a branch target",
                              at, static_cast<unsigned long>(b),
                              static_cast<unsigned long>(bound.cmp_off));

  u32 outside = 0, first_outside = 0;
  okp_addr_t first_outside_target = 0;
  constexpr u32 kChunk = 16;  // entries read at once, on the stack
  u64 entries[kChunk];
  for (u32 base = 0; base < bound.entries; base += kChunk) {
    const u32 n = bound.entries - base < kChunk ? bound.entries - base : kChunk;
    if (okp_seam_read_nofault(entries, form.table + base * 8ul, n * 8ul))
      return Error::formatted(Errno::kFault, "not optimized: jump table at +0x%lx: cannot read "
                              "its %u entries at %#lx", at, bound.entries, form.table);
    for (u32 i = 0; i < n; ++i) {
      const okp_addr_t target = entries[i];
      const u32 index = base + i;
      if (!inside(target)) {
        if (!outside++) {
          first_outside = index;
          first_outside_target = target;
        }
        continue;
      }
      const usize off = target - fn.start;
      if (target > region_start && target < region_end)
        return Error::formatted(Errno::kInval, "not optimized: jump table at +0x%lx: entry %u "
                                "targets +0x%lx, inside the region +0x%lx..+0x%lx", at, index,
                                static_cast<unsigned long>(off),
                                static_cast<unsigned long>(region_start - fn.start),
                                static_cast<unsigned long>(region_end - fn.start - 1));
      if (!(marks[off] & kMarkInsnStart))
        return Error::formatted(Errno::kInval, "not optimized: jump table at +0x%lx: entry %u "
                                "targets +0x%lx, not an instruction boundary", at, index,
                                static_cast<unsigned long>(off));
      if (mark_entries) marks[off] |= kMarkBranchTarget;
    }
  }
  if (outside == bound.entries) return JumpTableVerdict::kLeavesFunction;
  if (outside)
    return Error::formatted(Errno::kInval, "not optimized: jump table at +0x%lx: entry %u targets "
                            "%#lx, outside the function", at, first_outside, first_outside_target);
  return JumpTableVerdict::kResolved;
}

}  // namespace okp::x86
