// SPDX-License-Identifier: GPL-2.0
// riscv64 relative jump tables: the dispatch's pattern and the table's targets (jump_table.h).
#include "arch/riscv/jump_table.h"

namespace okp::riscv {

namespace {

// The instruction that last wrote reg before index, on straight-line code: every
// instruction from it up to index falls through. kNoInsn when there is none or the code
// before index is not straight.
u32 writer_of(const FunctionFlow& flow, u32 index, u8 reg) {
  for (u32 k = index; k-- > 0 && index - k <= 32;) {
    const FlowInsn& in = flow.insn(k);
    if (in.flow != Flow::kNext) return kNoInsn;
    if (in.writes & reg_bit(reg)) return k;
  }
  return kNoInsn;
}

bool decoded(const FunctionFlow& flow, u32 index, RegisterUse* u) {
  const FlowInsn& in = flow.insn(index);
  auto r = register_use(flow.text().bytes + in.offset, in.length, flow.addr_of(index));
  if (r.is_error()) return false;
  *u = r.value();
  return true;
}

bool is_add(const FunctionFlow& flow, u32 index, const RegisterUse& u) {
  const u8* b = flow.text().bytes + flow.insn(index).offset;
  if (u.length == 2) return (b[1] >> 5) == 4 && (b[1] & 0x10) && (b[0] & 3) == 2;  // c.add
  const u32 w = b[0] | b[1] << 8 | b[2] << 16 | static_cast<u32>(b[3]) << 24;
  return (w & 0xfe00707f) == 0x00000033;
}

// rB's value at index: `auipc rB, hi; addi rB, rB, lo` as its last two writes. 0: not that.
okp_addr_t address_in(const FunctionFlow& flow, u32 index, u8 reg, u32* first) {
  const u32 add = writer_of(flow, index, reg);
  RegisterUse u;
  if (add == kNoInsn || !decoded(flow, add, &u)) return 0;
  const u8* b = flow.text().bytes + flow.insn(add).offset;
  const bool addi = u.length == 4 ? (b[0] & 0x7f) == 0x13 && ((b[1] >> 4) & 7) == 0
                                  : (b[0] & 3) == 1 && (b[1] >> 5) == 0;  // c.addi
  if (!addi || u.rd != reg || u.rs1 != reg) return 0;
  const u32 w = b[0] | b[1] << 8 | (u.length == 4 ? b[2] << 16 | static_cast<u32>(b[3]) << 24 : 0);
  const i64 lo = u.length == 4 ? static_cast<i64>(static_cast<i32>(w) >> 20)
                               : static_cast<i64>(static_cast<i32>(((w >> 12) & 1) << 31 |
                                                                   ((w >> 2) & 31) << 26) >> 26);
  const u32 hi = writer_of(flow, add, reg);
  RegisterUse a;
  if (hi == kNoInsn || !decoded(flow, hi, &a) || a.rd != reg || !a.pc_relative ||
      a.flow != Flow::kNext)
    return 0;  // not an auipc
  *first = hi;
  return static_cast<okp_addr_t>(a.imm + lo);
}

// The entries are labels of the function: instructions its decode found, if the decode is
// right. It is, as far as the function's own branches can tell: each lands on one.
bool decode_agrees(const FunctionFlow& flow) {
  const FunctionText& fn = flow.text();
  for (usize i = 0; i < flow.count(); ++i) {
    const FlowInsn& in = flow.insn(i);
    const bool direct = in.flow == Flow::kJump || in.flow == Flow::kBranch;
    if (direct && in.target_addr >= fn.start && in.target_addr < fn.start + fn.size &&
        in.target == kNoInsn)
      return false;
  }
  return true;
}

okp_addr_t entry_target(okp_addr_t base, const u8* e) {
  const i32 v = static_cast<i32>(e[0] | e[1] << 8 | e[2] << 16 | static_cast<u32>(e[3]) << 24);
  return base + static_cast<i64>(v);
}

}  // namespace

okp_addr_t table_base(const FunctionFlow& flow, u32 jr) {
  RegisterUse j;
  if (!decoded(flow, jr, &j) || j.flow != Flow::kIndirect || j.imm != 0) return 0;
  // add rT, rL, rB (either order) before the jr.
  const u32 target_add = writer_of(flow, jr, j.rs1);
  RegisterUse t;
  if (target_add == kNoInsn || !decoded(flow, target_add, &t) || !is_add(flow, target_add, t))
    return 0;
  for (int order = 0; order < 2; ++order) {
    const u8 loaded = order ? t.rs2 : t.rs1, base_reg = order ? t.rs1 : t.rs2;
    if (!loaded || !base_reg || loaded == base_reg) continue;
    // lw rL, 0(rP)
    const u32 load = writer_of(flow, target_add, loaded);
    RegisterUse l;
    if (load == kNoInsn || !decoded(flow, load, &l) || !l.memory || l.rd != loaded) continue;
    const u8* lb = flow.text().bytes + flow.insn(load).offset;
    const bool lw = l.length == 4 ? (lb[0] & 0x7f) == 0x03 && ((lb[1] >> 4) & 7) == 2 &&
                                        lb[3] == 0 && (lb[2] >> 4) == 0
                                  : (lb[1] >> 5) == 2 && (lb[0] & 3) == 0 &&
                                        !(lb[1] & 0x1c) && !(lb[0] & 0x60);  // c.lw, offset 0
    if (!lw) continue;
    // add rP, rI, rB (either order), rB the same table address as at the target's add.
    const u32 index_add = writer_of(flow, load, l.rs1);
    RegisterUse p;
    if (index_add == kNoInsn || !decoded(flow, index_add, &p) || !is_add(flow, index_add, p))
      continue;
    if (p.rs1 != base_reg && p.rs2 != base_reg) continue;
    u32 first = kNoInsn;
    const okp_addr_t at_index = address_in(flow, index_add, base_reg, &first);
    // The base register is not written between the index's add and the target's add.
    if (!at_index || writer_of(flow, target_add, base_reg) != writer_of(flow, index_add, base_reg))
      continue;
    // Straight-line from the auipc to the jr: nothing lands after the auipc.
    const okp_addr_t from = flow.addr_of(first), to = flow.addr_of(jr);
    bool straight = true;
    for (usize i = 0; i < flow.count() && straight; ++i) {
      const FlowInsn& in = flow.insn(i);
      if ((in.flow == Flow::kJump || in.flow == Flow::kBranch) && in.target_addr > from &&
          in.target_addr <= to)
        straight = false;
    }
    const FunctionText& fn = flow.text();
    for (usize h = 0; h < fn.n_hidden && straight; ++h)
      if (fn.hidden[h].to > from && fn.hidden[h].to <= to) straight = false;
    if (straight) return at_index;
  }
  return 0;
}

usize table_targets(const FunctionFlow& flow, okp_addr_t base, const u8* entries, usize n_bytes,
                    okp_addr_t* out, usize max) {
  if (!decode_agrees(flow)) return 0;
  usize n = 0;
  for (usize at = 0; at + 4 <= n_bytes; at += 4) {
    const okp_addr_t target = entry_target(base, entries + at);
    // Not one of the function's instructions: not an entry, so past the table.
    if (flow.index_of(target) == kNoInsn) return n;
    if (n == max) return 0;
    out[n++] = target;
  }
  return 0;  // no end seen within what was read: the table may go on
}

usize resolve_jump_tables(const FunctionFlow& flow, ReadFn read, void* ctx, HiddenEdge* out,
                          usize cap) {
  if (!decode_agrees(flow)) return 0;
  usize total = 0;
  for (u32 jr = 0; jr < flow.count(); ++jr) {
    if (flow.insn(jr).flow != Flow::kIndirect) continue;
    const okp_addr_t base = table_base(flow, jr);
    if (!base) continue;
    constexpr usize kChunk = 16;  // entries read at a time: a small frame
    u8 chunk[4 * kChunk];
    usize n = 0;
    bool ended = false;
    while (!ended && n < kMaxTableEntries && total + n < cap) {
      if (!read(ctx, base + 4 * n, chunk, sizeof(chunk))) break;
      for (usize k = 0; k < kChunk && total + n < cap; ++k) {
        const okp_addr_t target = entry_target(base, chunk + 4 * k);
        if (flow.index_of(target) == kNoInsn) {
          ended = true;
          break;
        }
        out[total + n++] = {flow.addr_of(jr), target, true};
      }
    }
    if (ended) total += n;  // otherwise the edges written are dropped: not resolved
  }
  return total;
}

}  // namespace okp::riscv
