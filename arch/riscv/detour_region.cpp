// SPDX-License-Identifier: GPL-2.0
// The riscv64 jump probe's region check (detour_region.h says each rule and why).
#include "arch/riscv/detour_region.h"

#include "arch/riscv/dead_register.h"

namespace okp::riscv {

namespace {

const char* flow_name(const FlowInsn& in) {
  switch (in.flow) {
    case Flow::kJump: return "a jump";
    case Flow::kBranch: return "a branch";
    case Flow::kCall: return "a call";
    default: return "an instruction";
  }
}

// A direct edge or a hidden one that lands strictly inside (start, end).
[[gnu::noinline]] ErrorOr<void> no_edge_inside(const FunctionFlow& flow, okp_addr_t start, okp_addr_t end) {
  const okp_addr_t fs = flow.text().start;
  for (usize i = 0; i < flow.count(); ++i) {
    const FlowInsn& in = flow.insn(i);
    if (in.flow != Flow::kJump && in.flow != Flow::kBranch && in.flow != Flow::kCall) continue;
    if (in.target_addr > start && in.target_addr < end)
      return Error::formatted(Errno::kInval, "not optimized: %s at +%#lx goes to +%#lx, inside "
                              "the region +%#lx..+%#lx", flow_name(in), flow.addr_of(i) - fs,
                              in.target_addr - fs, start - fs, end - fs);
  }
  const FunctionText& fn = flow.text();
  for (usize h = 0; h < fn.n_hidden; ++h) {
    const okp_addr_t to = fn.hidden[h].to;
    if (to > start && to < end && fn.hidden[h].table)
      return Error::formatted(Errno::kInval, "not optimized: the jump table dispatched at +%#lx "
                              "sends it to +%#lx, inside the region +%#lx..+%#lx",
                              fn.hidden[h].from - fs, to - fs, start - fs, end - fs);
    if (to > start && to < end)
      return Error::formatted(Errno::kInval, "not optimized: the kernel's tables (a jump label "
                              "or an exception-table fixup) send +%#lx to +%#lx, inside the "
                              "region +%#lx..+%#lx", fn.hidden[h].from - fs, to - fs,
                              start - fs, end - fs);
  }
  return {};
}

// The checks on the region's own instructions.
[[gnu::noinline]] ErrorOr<void> check_region_insns(const FunctionFlow& flow, u32 first, u32 n) {
  const okp_addr_t fs = flow.text().start;
  const u32 lr = open_reservation(flow, first);
  if (lr != kNoInsn)
    return Error::formatted(Errno::kInval, "not optimized: the region at +%#lx is inside the "
                            "LR/SC sequence opened at +%#lx", flow.addr_of(first) - fs,
                            flow.addr_of(lr) - fs);
  for (u32 i = first; i < first + n; ++i) {
    const FlowInsn& in = flow.insn(i);
    const okp_addr_t off = flow.addr_of(i) - fs;
    if (in.lr || in.sc)
      return Error::formatted(Errno::kInval, "not optimized: the %s at +%#lx in the region %s an "
                              "LR/SC sequence", in.lr ? "lr" : "sc", off,
                              in.lr ? "opens" : "ends");
    if (in.hidden_from)
      return Error::formatted(Errno::kInval, "not optimized: +%#lx in the region is named by the "
                              "kernel's tables (a jump label's site or an exception-table entry: "
                              "it must stay at its address)", off);
    if (in.bug_site)
      return Error::formatted(Errno::kInval, "not optimized: the BUG/WARN at +%#lx in the region "
                              "must stay at its address (report_bug() finds it by the trap's "
                              "pc)", off);
    if (in.flow == Flow::kUnknown) {
      auto u = register_use(flow.text().bytes + in.offset, in.length, flow.addr_of(i));
      return Error::formatted(Errno::kInval, "not optimized: '%s' at +%#lx in the region cannot "
                              "run from the detour (it traps, leaves for a handler, or is not "
                              "understood)", u.is_error() ? "?" : u.value().mnemonic, off);
    }
    if (in.table_dispatch)
      return Error::formatted(Errno::kInval, "not optimized: the jump table's dispatch at +%#lx "
                              "is in the region", off);
    if (in.flow == Flow::kCall && i + 1 != first + n)
      return Error::formatted(Errno::kInval, "not optimized: the call at +%#lx would return into "
                              "the region (a call only as its last instruction)", off);
  }
  return {};
}

}  // namespace

ErrorOr<DetourRegion> check_detour_region(const FunctionFlow& flow, okp_addr_t addr,
                                          usize jump_size) {
  const okp_addr_t fs = flow.text().start;
  const u32 first = flow.index_of(addr);
  if (first == kNoInsn) {
    if (addr >= fs + flow.code_size())
      return Error::formatted(Errno::kIlSeq, "not optimized: +%#lx is past the function's "
                              "decoded code (+%#lx: %s)", addr - fs, flow.code_size(),
                              flow.stopped_because() ? flow.stopped_because() : "its end");
    return Error::formatted(Errno::kIlSeq, "not optimized: +%#lx is not an instruction boundary",
                            addr - fs);
  }
  if (flow.undecoded_bytes())
    return Error::formatted(Errno::kInval, "not optimized: the function's bytes at +%#lx do not "
                            "decode (%s): a branch from past them could land anywhere",
                            flow.code_size(), flow.stopped_because());
  DetourRegion r;
  r.addr = addr;
  u32 n = 0;
  usize length = 0;
  while (length < jump_size) {
    if (first + n >= flow.count())
      return Error::formatted(Errno::kInval, "not optimized: the %zu bytes of the jump at +%#lx "
                              "run past the function's code (it ends at +%#lx)", jump_size,
                              addr - fs, flow.code_size());
    const FlowInsn& in = flow.insn(first + n);
    RegionInsn& ri = r.insns[n];
    ri.offset = static_cast<u32>(length);
    ri.length = in.length;
    ri.flow = in.flow;
    ri.pc_relative = in.pc_relative;
    ri.target = in.target_addr;
    for (usize b = 0; b < in.length; ++b) ri.bytes[b] = flow.text().bytes[in.offset + b];
    length += in.length;
    ++n;
  }
  r.length = static_cast<u8>(length);
  r.count = static_cast<u8>(n);
  OKP_TRY(no_edge_inside(flow, addr, addr + length));
  const u32 indirect = flow.first_unresolved_indirect();
  if (indirect != kNoInsn)
    return Error::formatted(Errno::kInval, "not optimized: the indirect jump at +%#lx (a tail "
                            "call's, or a jump table's not resolved) may land inside the region",
                            flow.addr_of(indirect) - fs);
  OKP_TRY(check_region_insns(flow, first, n));
  r.dead_set = dead_in_region(flow, first, n);
  r.dead = pick_dead_register(r.dead_set);
  if (!r.dead && jump_size >= kJumpSize)
    return Error::formatted(Errno::kInval, "not optimized: no register is dead at the region "
                            "+%#lx..+%#lx and wherever it leaves (written before read on every "
                            "path)", addr - fs, addr + length - fs);
  return r;
}

ErrorOr<DetourRegion> check_detour_region(const FunctionText& fn, okp_addr_t addr,
                                          usize jump_size) {
  auto decoded = FunctionFlow::decode(fn);
  if (decoded.is_error()) return decoded.release_error();
  FunctionFlow flow = decoded.release_value();
  if (!flow.compute_liveness())
    return Error(Errno::kInval, "not optimized: the kernel's tables name an address inside the "
                                "function that its decode does not find an instruction at");
  return check_detour_region(flow, addr, jump_size);
}

}  // namespace okp::riscv
