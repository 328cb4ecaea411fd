// SPDX-License-Identifier: GPL-2.0
// Fuzz target, differential: every instruction okprobes emulates in the trap (x86::emulate,
// and the inline emulate_register_move for moves, lea and nops) against this CPU executing
// the same bytes. Registers, rip, rsp, the arithmetic flags and the stack must come out the
// same.
//
// How the CPU runs an instruction, in user mode, in this process:
//  - a 512 MiB PROT_NONE reservation; its page 0 holds a stub that loads every general
//    register and rflags from a frame, page 1 the instruction, placed to end 2 bytes before
//    the page's end, where a ud2 sits; everything after is inaccessible;
//  - the instruction's end is therefore a SIGILL at ud2, and a control transfer a SIGSEGV on
//    fetching its target: either way the signal's context is the register state after the
//    instruction. The handler (on its own signal stack, so rsp may hold anything) copies it
//    and siglongjmps back; signals outside a native run go to the handlers that were there;
//  - relative branches get their displacement re-aimed past the ud2 (both for the CPU and for
//    the emulation; conditions and counts are what is compared), return addresses and
//    indirect targets are addresses in the inaccessible area, each distinct, so the target
//    tells which word or register was used; memory operands of indirect branches are aimed
//    at a data page of such words through the registers the plan names (a plan that named
//    the wrong ones reads elsewhere, and the targets differ);
//  - rsp starts on a scratch stack (push/pop/call/ret touch it); its page is compared after.
// Not run natively: cli/sti (privileged in user mode). Flags given to the CPU are those user
// mode can set (IF=1, IOPL=0, no TF/AC); rflags are compared on CF PF AF ZF SF DF OF NT ID.
//
// Input: the instruction (first byte: how many bytes follow for it, 1..15; the first
// instruction in them is the one run), then registers, flags and choices as little-endian
// words (zero past the end of the input).
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <Zydis/Decoder.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "arch/x86/insn_emulate.h"
#include "arch/x86/insn_plan.h"
#include "fuzz_seam.h"

using namespace okp;
using namespace okp::x86;

namespace {

constexpr usize kPage = 4096;
constexpr usize kReserve = 512ul << 20;
constexpr unsigned long kCF = 0x1, kPF = 0x4, kAF = 0x10, kZF = 0x40, kSF = 0x80, kDF = 0x400,
                        kOF = 0x800, kNT = 0x4000, kID = 0x200000;
constexpr unsigned long kUserFlags = kCF | kPF | kAF | kZF | kSF | kDF | kOF | kNT | kID;
constexpr unsigned long kCompared = kUserFlags;

u8* g_area;          // the reservation: stub page, instruction page, then inaccessible
u8* g_stack_page;    // the scratch stack (one page, rsp starts inside it)
u8* g_data_page;     // memory operands of indirect branches
u8* g_low_page;      // the same for an absolute [disp32] (sign-extended: below 2 GiB)
constexpr okp_addr_t kLowPage = 0x70000000;
okp_addr_t g_guard;  // first inaccessible byte: targets go at or past it
okp_regs g_in;       // what the stub loads

// The native run's outcome, written by the signal handler.
volatile sig_atomic_t g_native_active;
sigjmp_buf g_jump;
struct Native {
  int signo;
  okp_addr_t fault_addr;
  greg_t gregs[NGREG];
} g_native;
struct sigaction g_previous[32];

const int kSignals[] = {SIGILL, SIGSEGV, SIGBUS, SIGTRAP, SIGFPE};

[[clang::no_sanitize("address", "undefined")]] void on_signal(int signo, siginfo_t* info, void* ctx) {
  if (!g_native_active) {
    // Not ours: hand it to whoever had it (libFuzzer's and the sanitizers' crash reports).
    struct sigaction& prev = g_previous[signo];
    if (prev.sa_flags & SA_SIGINFO) {
      if (prev.sa_sigaction) prev.sa_sigaction(signo, info, ctx);
    } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
      prev.sa_handler(signo);
    } else {
      signal(signo, SIG_DFL);
      raise(signo);
    }
    return;
  }
  g_native_active = 0;
  const ucontext_t* uc = static_cast<const ucontext_t*>(ctx);
  g_native.signo = signo;
  g_native.fault_addr = reinterpret_cast<okp_addr_t>(info->si_addr);
  for (int i = 0; i < NGREG; ++i) g_native.gregs[i] = uc->uc_mcontext.gregs[i];
  siglongjmp(g_jump, 1);
}

// okp_regs index -> hardware register number (rax 0 .. r15 15).
int hw_number(u8 index) {
  switch (index) {
    case kRegIndexAx: return 0;
    case kRegIndexCx: return 1;
    case kRegIndexDx: return 2;
    case kRegIndexBx: return 3;
    case kRegIndexSp: return 4;
    case kRegIndexBp: return 5;
    case kRegIndexSi: return 6;
    case kRegIndexDi: return 7;
    case kRegIndexR8: return 8;
    case kRegIndexR9: return 9;
    case kRegIndexR10: return 10;
    case kRegIndexR11: return 11;
    case kRegIndexR12: return 12;
    case kRegIndexR13: return 13;
    case kRegIndexR14: return 14;
    default: return 15;
  }
}
// okp_regs index -> the signal context's gregs index.
int greg_of(u8 index) {
  switch (index) {
    case kRegIndexAx: return REG_RAX;
    case kRegIndexCx: return REG_RCX;
    case kRegIndexDx: return REG_RDX;
    case kRegIndexBx: return REG_RBX;
    case kRegIndexSp: return REG_RSP;
    case kRegIndexBp: return REG_RBP;
    case kRegIndexSi: return REG_RSI;
    case kRegIndexDi: return REG_RDI;
    case kRegIndexR8: return REG_R8;
    case kRegIndexR9: return REG_R9;
    case kRegIndexR10: return REG_R10;
    case kRegIndexR11: return REG_R11;
    case kRegIndexR12: return REG_R12;
    case kRegIndexR13: return REG_R13;
    case kRegIndexR14: return REG_R14;
    default: return REG_R15;
  }
}
constexpr u8 kGprs[] = {kRegIndexAx, kRegIndexCx, kRegIndexDx, kRegIndexBx, kRegIndexSp,
                        kRegIndexBp, kRegIndexSi, kRegIndexDi, kRegIndexR8, kRegIndexR9,
                        kRegIndexR10, kRegIndexR11, kRegIndexR12, kRegIndexR13, kRegIndexR14,
                        kRegIndexR15};

unsigned long& reg(okp_regs& r, u8 index) { return reinterpret_cast<unsigned long*>(&r)[index]; }

// The stub: rax = &g_in; rsp, rflags, every register but rax, rax last; jmp to the insn.
void write_stub(okp_addr_t insn_addr) {
  u8* p = g_area;
  auto put = [&](std::initializer_list<u8> b) { for (u8 x : b) *p++ = x; };
  auto put32 = [&](u32 v) { for (int i = 0; i < 4; ++i) *p++ = static_cast<u8>(v >> (8 * i)); };
  const u64 in = reinterpret_cast<u64>(&g_in);
  put({0x48, 0xb8});
  for (int i = 0; i < 8; ++i) *p++ = static_cast<u8>(in >> (8 * i));
  put({0x48, 0x8b, 0xa0});  // mov disp32(%rax),%rsp
  put32(kRegIndexSp * 8);
  put({0xff, 0xb0});  // push disp32(%rax)
  put32(offsetof(okp_regs, flags));
  put({0x9d});  // popfq
  for (u8 index : kGprs) {
    if (index == kRegIndexAx || index == kRegIndexSp) continue;
    const int n = hw_number(index);
    put({static_cast<u8>(0x48 | (n >= 8 ? 4 : 0)), 0x8b, static_cast<u8>(0x80 | (n & 7) << 3)});
    put32(index * 8);
  }
  put({0x48, 0x8b, 0x80});  // mov disp32(%rax),%rax
  put32(kRegIndexAx * 8);
  put({0xe9});
  put32(static_cast<u32>(insn_addr - (reinterpret_cast<okp_addr_t>(p) + 4)));
}

bool init() {
  void* a = mmap(nullptr, kReserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (a == MAP_FAILED) return false;
  g_area = static_cast<u8*>(a);
  if (mprotect(g_area, 2 * kPage, PROT_READ | PROT_WRITE | PROT_EXEC)) return false;
  g_guard = reinterpret_cast<okp_addr_t>(g_area) + 2 * kPage;
  void* s = mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED) return false;
  g_stack_page = static_cast<u8*>(s);
  g_data_page = g_stack_page + kPage;
  void* low = mmap(reinterpret_cast<void*>(kLowPage), kPage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (low != reinterpret_cast<void*>(kLowPage)) return false;
  g_low_page = static_cast<u8*>(low);
  static u8 altstack[256 * 1024];
  stack_t ss = {};
  ss.ss_sp = altstack;
  ss.ss_size = sizeof(altstack);
  if (sigaltstack(&ss, nullptr)) return false;
  for (int sig : kSignals) {
    struct sigaction sa = {};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &g_previous[sig])) return false;
  }
  return true;
}

[[noreturn]] void fail(const char* what, const u8* bytes, usize n, const okp_regs& emu) {
  std::fprintf(stderr, "fuzz_emulate_diff: %s\n  insn:", what);
  for (usize i = 0; i < n; ++i) std::fprintf(stderr, " %02x", bytes[i]);
  std::fprintf(stderr, "\n  native: signal %d at rip %#llx (fault address %#lx)\n",
               g_native.signo, static_cast<unsigned long long>(g_native.gregs[REG_RIP]),
               g_native.fault_addr);
  std::fprintf(stderr, "  %-6s %18s %18s %18s\n", "", "input", "emulated", "native");
  static const char* names[] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};
  for (int i = 0; i < 16; ++i)
    std::fprintf(stderr, "  %-6s %18lx %18lx %18llx\n", names[i], reg(g_in, kGprs[i]),
                 reg(const_cast<okp_regs&>(emu), kGprs[i]),
                 static_cast<unsigned long long>(g_native.gregs[greg_of(kGprs[i])]));
  std::fprintf(stderr, "  %-6s %18lx %18lx %18llx\n", "flags", g_in.flags, emu.flags,
               static_cast<unsigned long long>(g_native.gregs[REG_EFL]));
  std::fprintf(stderr, "  %-6s %18lx %18lx %18llx\n", "rip", g_in.ip, emu.ip,
               static_cast<unsigned long long>(g_native.gregs[REG_RIP]));
  std::abort();
}

bool native_class(Emulation e) {
  return e != Emulation::kNone && e != Emulation::kCli && e != Emulation::kSti;
}

void put_le(u8* p, u64 v, usize n) { for (usize i = 0; i < n; ++i) p[i] = static_cast<u8>(v >> (8 * i)); }

// The inverse of an odd number modulo 2^64 (Newton's iteration).
u64 inverse(u64 a) {
  u64 x = a;
  for (int i = 0; i < 6; ++i) x *= 2 - a * x;
  return x;
}

// Comparisons made, per emulation class (printed at exit with OKP_FUZZ_STATS=1).
unsigned long g_compared[32];
const char* const kClassNames[] = {"none", "jmp", "jcc", "call", "ret", "loop", "call*", "jmp*",
                                   "pushf", "popf", "cli", "sti", "mov", "mov$", "push", "pop",
                                   "nop", "lea", "alu"};
void print_stats() {
  unsigned long total = 0;
  for (unsigned long c : g_compared) total += c;
  std::fprintf(stderr, "fuzz_emulate_diff: %lu comparisons with the CPU:", total);
  for (usize i = 0; i < sizeof(kClassNames) / sizeof(kClassNames[0]); ++i)
    if (g_compared[i]) std::fprintf(stderr, " %s %lu", kClassNames[i], g_compared[i]);
  std::fprintf(stderr, "\n");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (!init()) {
    std::perror("fuzz_emulate_diff: set-up");
    std::abort();
  }
  if (std::getenv("OKP_FUZZ_STATS")) std::atexit(print_stats);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  okp_fuzz::Input in{data, size};
  if (size < 2) return 0;
  usize n = in.u8() % 15 + 1;
  if (in.left() < n) return 0;
  u8 bytes[15];
  std::memcpy(bytes, data + in.pos, n);
  in.pos += n;

  u8* const page = g_area + kPage;
  // The instruction is the first one in the n bytes (what follows it is not run).
  {
    auto length = plan_insn(0xffffffff81000000ul, bytes, n, 0xffffffff81000000ul);
    if (length.is_error() || !native_class(length.value().emulation)) return 0;
    n = length.value().length;
  }
  const okp_addr_t x = reinterpret_cast<okp_addr_t>(page) + kPage - 2 - n;  // ud2 after it
  // Planned at its real address: the emulation's next-ip and pushes match the CPU's.
  auto first = plan_insn(x, bytes, n, x);
  if (first.is_error() || !native_class(first.value().emulation)) return 0;
  InsnPlan plan = first.value();
  if (plan.length != n) std::abort();

  ZydisDecoder dec;
  ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  ZydisDecodedInstruction zi;
  if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&dec, nullptr, bytes, n, &zi))) std::abort();

  // Relative branches: re-aim past the ud2, into the inaccessible area. The rel32 value
  // also puts a ud2 (0f 0b) at its third byte, so a CPU that read only a rel16 (AMD, 66
  // prefix) stops there instead of running the displacement's bytes.
  const bool relative = plan.emulation == Emulation::kJcc || plan.emulation == Emulation::kJmpRel ||
                        plan.emulation == Emulation::kCallRel || plan.emulation == Emulation::kLoop;
  if (relative) {
    const auto& imm = zi.raw.imm[0];
    if (!imm.is_relative || imm.size == 0) std::abort();
    const u64 d = imm.size == 8 ? 0x10 : imm.size == 16 ? 0x0010 : 0x0b0f0010;
    put_le(bytes + imm.offset, d, imm.size / 8);
  }
  // Registers, flags, the stack: from the input.
  okp_regs r = {};
  for (u8 index : kGprs) reg(r, index) = in.u64();
  const u64 choice = in.u64();
  r.flags = (in.u64() & kUserFlags) | 0x202;
  r.sp = reinterpret_cast<okp_addr_t>(g_stack_page) + 0x800 + ((choice & 0x7f) - 0x40) * 8;
  r.ip = x + 1;  // as at the probe's int3
  r.cs = r.ss = r.orig_ax = 0;
  // Stack and data words: distinct inaccessible addresses (targets), except a popf's word.
  for (usize i = 0; i < kPage / 8; ++i) {
    reinterpret_cast<u64*>(g_stack_page)[i] = g_guard + 0x1000 + i * 8;
    reinterpret_cast<u64*>(g_data_page)[i] = g_guard + 0x3000 + i * 8;
    reinterpret_cast<u64*>(g_low_page)[i] = g_guard + 0x5000 + i * 8;
  }
  if (plan.emulation == Emulation::kPopf)
    *reinterpret_cast<u64*>(r.sp) = (in.u64() & kUserFlags) | 0x202;
  // Indirect branches: a register holds a target; a memory operand names a data word.
  if (plan.emulation == Emulation::kJmpIndirect || plan.emulation == Emulation::kCallIndirect) {
    const IndirectOperand& m = plan.indirect;
    const okp_addr_t word = reinterpret_cast<okp_addr_t>(g_data_page) + ((choice >> 8) & 0x1f8);
    if (m.is_register) {
      if (m.reg != kRegIndexSp) reg(r, m.reg) = g_guard + 0x2000 + ((choice >> 8) & 0xff8);
    } else if (m.rip_relative) {
      if (zi.raw.disp.size != 32) std::abort();
      put_le(bytes + zi.raw.disp.offset, word - (x + n), 4);
    } else if (m.reg == kNoReg && m.index == kNoReg) {
      if (zi.raw.disp.size != 32) std::abort();
      put_le(bytes + zi.raw.disp.offset, kLowPage + ((choice >> 8) & 0x1f8), 4);
    } else if (m.reg == kRegIndexSp) {
      // rsp is the stack's: a small index, and a disp32 brought within the two pages.
      if (m.index != kNoReg) reg(r, m.index) = (choice >> 16) & 7;
      if (zi.raw.disp.size == 32)
        put_le(bytes + zi.raw.disp.offset, ((choice >> 24) & 0x7f8) - 0x400, 4);
    } else {
      const u64 target = word - static_cast<u64>(m.disp);
      if (m.reg == kNoReg && m.index != kNoReg) {
        reg(r, m.index) = target / m.scale;  // a word or a few bytes off: both read the same
      } else if (m.reg != kNoReg && m.reg == m.index) {
        const u64 k = 1 + m.scale;
        reg(r, m.reg) = k & 1 ? target * inverse(k) : target / k;
      } else if (m.reg != kNoReg) {
        const u64 idx = m.index != kNoReg ? reg(r, m.index) * m.scale : 0;
        reg(r, m.reg) = target - idx;
      }
    }
  }
  // The (possibly re-aimed) bytes again: both sides run exactly these.
  auto second = plan_insn(x, bytes, n, x);
  if (second.is_error() || second.value().emulation != plan.emulation ||
      second.value().length != plan.length)
    std::abort();
  plan = second.value();

  // The stub's push of the flags leaves them below rsp: the emulation starts from that too.
  reinterpret_cast<u64*>(r.sp)[-1] = r.flags;
  u8 stack_before[kPage];
  std::memcpy(stack_before, g_stack_page, kPage);

  // The CPU.
  std::memcpy(page + kPage - 2 - n, bytes, n);
  page[kPage - 2] = 0x0f;
  page[kPage - 1] = 0x0b;
  write_stub(x);
  __builtin___clear_cache(reinterpret_cast<char*>(g_area), reinterpret_cast<char*>(g_area + 2 * kPage));
  g_in = r;
  if (sigsetjmp(g_jump, 1) == 0) {
    g_native_active = 1;
    reinterpret_cast<void (*)()>(g_area)();
    __builtin_unreachable();
  }
  u8 stack_native[kPage];
  std::memcpy(stack_native, g_stack_page, kPage);
  std::memcpy(g_stack_page, stack_before, kPage);

  // The emulation (the seam reads only the stack and data pages, as the CPU may: a
  // word a few bytes off the one aimed at straddles them).
  okp_regs e = r;
  const void* win[] = {g_stack_page, g_low_page};  // the data page is right after the stack's
  const size_t len[] = {2 * kPage, kPage};
  okp_fuzz::set_readable(win, len, 2);
  auto res = emulate(plan, x, &e);
  okp_fuzz::clear_readable();
  // The inline path the hit takes for moves, lea and nops agrees with emulate().
  okp_regs e2 = r;
  if (emulate_register_move(plan, x, &e2) && std::memcmp(&e, &e2, sizeof(e)) != 0)
    fail("emulate_register_move() and emulate() differ", bytes, n, e);

  const okp_addr_t native_rip = g_native.gregs[REG_RIP];
  const bool native_faulted_here = native_rip == x && g_native.signo != SIGILL;
  if (res.is_error()) {
    // -EFAULT: only where the CPU faulted on the same instruction's memory access.
    if (!native_faulted_here) fail("emulation failed where the CPU did not fault", bytes, n, e);
    return 0;
  }
  if (native_faulted_here) {
    // The CPU refused the target itself (#GP on a non-canonical address): the emulation
    // sends the kernel there, where it faults the same way on return from the trap.
    const u64 top = e.ip >> 47;
    if (top != 0 && top != 0x1ffff) return 0;
    fail("the CPU faulted on the instruction, the emulation did not", bytes, n, e);
  }
  if (native_rip != e.ip) fail("rip differs", bytes, n, e);
  for (u8 index : kGprs)
    if (static_cast<unsigned long>(g_native.gregs[greg_of(index)]) != reg(e, index))
      fail("a register differs", bytes, n, e);
  if ((static_cast<unsigned long>(g_native.gregs[REG_EFL]) & kCompared) != (e.flags & kCompared))
    fail("rflags differ", bytes, n, e);
  if (std::memcmp(stack_native, g_stack_page, kPage) != 0) fail("the stack differs", bytes, n, e);
  ++g_compared[static_cast<usize>(plan.emulation) & 31];
  return 0;
}
