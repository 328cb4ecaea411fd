// SPDX-License-Identifier: GPL-2.0
#include "host_seam.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

namespace okp_host {
SeamCounters& seam_counters() {
  static SeamCounters counters;
  return counters;
}

alignas(4096) uint8_t g_text[4096];
alignas(4096) uint8_t g_slots[128 * 1024];

namespace {

// Hand-assembled x86-64 functions, each padded with int3 to 64 bytes.
struct FakeFunction {
  const char* name;
  std::vector<uint8_t> bytes;
};
const FakeFunction kFunctions[] = {
    // mov %rdi,%rax; add $1,%rax; ret
    {"fake_add_one", {0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x01, 0xc3}},
    // push %rbp; mov %rsp,%rbp; imul %rsi,%rdi; mov %rdi,%rax; pop %rbp; ret
    {"fake_mul", {0x55, 0x48, 0x89, 0xe5, 0x48, 0x0f, 0xaf, 0xfe, 0x48, 0x89, 0xf8, 0x5d, 0xc3}},
    // xor %eax,%eax; test %rdi,%rdi; je +3; mov %rsi,%rax; ret
    {"fake_select", {0x31, 0xc0, 0x48, 0x85, 0xff, 0x74, 0x03, 0x48, 0x89, 0xf0, 0xc3}},
    // mov $42,%eax (5 bytes: a region of one instruction); add %edi,%eax; ret
    {"fake_answer", {0xb8, 0x2a, 0x00, 0x00, 0x00, 0x01, 0xf8, 0xc3}},
    // a blacklisted one: nop; nop; ret
    {"fake_forbidden", {0x90, 0x90, 0xc3}},
};
constexpr size_t kFunctionSize = 64;
constexpr size_t kTextSize = 4096;

alignas(4096) uint8_t g_pristine[kTextSize];

struct Placed {
  okp_addr_t start;
  size_t size;
};
std::map<std::string, Placed>& placed() {
  static std::map<std::string, Placed> m;
  if (m.empty()) {
    std::memset(g_text, 0xcc, sizeof(g_text));
    std::memset(g_slots, 0xcc, sizeof(g_slots));
    size_t off = 0;
    for (const auto& f : kFunctions) {
      std::memcpy(g_text + off, f.bytes.data(), f.bytes.size());
      m[f.name] = {reinterpret_cast<okp_addr_t>(g_text + off), f.bytes.size()};
      off += kFunctionSize;
    }
    std::memcpy(g_pristine, g_text, sizeof(g_text));
  }
  return m;
}

bool in_text(okp_addr_t a) {
  return a >= reinterpret_cast<okp_addr_t>(g_text) && a < reinterpret_cast<okp_addr_t>(g_text) + kTextSize;
}
bool in_slots(okp_addr_t a) {
  return a >= reinterpret_cast<okp_addr_t>(g_slots) &&
         a < reinterpret_cast<okp_addr_t>(g_slots) + sizeof(g_slots);
}
const std::pair<const std::string, Placed>* function_containing(okp_addr_t a) {
  for (const auto& kv : placed())
    if (a >= kv.second.start && a < kv.second.start + kv.second.size) return &kv;
  return nullptr;
}

}  // namespace

okp_addr_t fake_function(const std::string& name) {
  auto it = placed().find(name);
  return it == placed().end() ? 0 : it->second.start;
}

bool fake_text_pristine() {
  placed();
  bool same = std::memcmp(g_text, g_pristine, sizeof(g_text)) == 0;
  std::memcpy(g_text, g_pristine, sizeof(g_text));
  return same;
}

}  // namespace okp_host

using okp_host::seam_counters;

extern "C" void* okp_seam_alloc(unsigned long size, enum okp_gfp) {
  auto& c = seam_counters();
  if (c.fail_next_alloc) {
    c.fail_next_alloc = false;
    return nullptr;
  }
  ++c.allocs;
  return std::calloc(1, size);
}

extern "C" void okp_seam_free(void* ptr) {
  if (ptr) ++seam_counters().frees;
  std::free(ptr);
}

extern "C" void* okp_seam_alloc_large(unsigned long size) {
  return okp_seam_alloc(size, OKP_GFP_KERNEL);
}

extern "C" void okp_seam_free_large(void* ptr) { okp_seam_free(ptr); }

extern "C" void okp_seam_log(enum okp_log_level level, const char* msg) {
  if (std::getenv("OKP_HOST_LOG")) std::fprintf(stderr, "okprobes<%d>: %s\n", static_cast<int>(level), msg);
}

extern "C" void okp_seam_invariant_failed(const char* what, const char* file, int line) {
  ++seam_counters().invariant_failures;
  std::fprintf(stderr, "okprobes: invariant broken: %s (%s:%d)\n", what, file, line);
}

namespace okp_host {
namespace {
std::map<okp_addr_t, std::vector<uint8_t>>& fake_memory() {
  static std::map<okp_addr_t, std::vector<uint8_t>> m;
  return m;
}
}  // namespace
void map_fake_memory(okp_addr_t addr, const void* data, size_t len) {
  if (!len) {
    fake_memory().clear();
    return;
  }
  auto* bytes = static_cast<const uint8_t*>(data);
  fake_memory()[addr] = std::vector<uint8_t>(bytes, bytes + len);
}
}  // namespace okp_host

// Host memory is all readable except the null page, which stands in for an unmapped kernel
// address so tests can reach the -EFAULT paths; kernel-half addresses are the fake memory
// mapped by map_fake_memory() or unmapped.
extern "C" int okp_seam_read_nofault(void* dst, okp_addr_t src, unsigned long len) {
  if (src < 4096) return -14;  // -EFAULT
  if (src >= 0xffff800000000000ul) {
    for (const auto& kv : okp_host::fake_memory())
      if (src >= kv.first && len <= kv.second.size() && src - kv.first <= kv.second.size() - len) {
        std::memcpy(dst, kv.second.data() + (src - kv.first), len);
        return 0;
      }
    return -14;
  }
  std::memcpy(dst, reinterpret_cast<const void*>(src), len);
  return 0;
}

extern "C" void okp_seam_format(char* buf, unsigned long len, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, len, fmt, ap);
  va_end(ap);
}

extern "C" void okp_seam_vformat(char* buf, unsigned long len, const char* fmt, va_list args) {
  std::vsnprintf(buf, len, fmt, args);
}

// --- The lock contract -------------------------------------------------------------------

extern "C" void okp_seam_registry_lock(void) {
  if (seam_counters().lock_held) std::abort();  // a mutex: never taken twice
  seam_counters().lock_held = true;
}
extern "C" void okp_seam_registry_unlock(void) { seam_counters().lock_held = false; }
extern "C" void okp_seam_assert_registry_locked(void) {
  if (!seam_counters().lock_held) ++seam_counters().unlocked_asserts;
}
extern "C" void okp_seam_synchronize_rcu(void) {
  auto& c = seam_counters();
  ++c.rcu_waits;
  if (c.lock_held) ++c.waits_under_lock;
}
extern "C" void okp_seam_synchronize_tasks(void) {
  auto& c = seam_counters();
  ++c.tasks_waits;
  if (c.lock_held) ++c.waits_under_lock;
}
extern "C" int okp_seam_tasks_outside(okp_text_span* spans, unsigned long n) {
  auto& c = seam_counters();
  ++c.tasks_outside_asks;
  if (c.lock_held) ++c.waits_under_lock;
  if (c.rcu_waits == 0) ++c.tasks_outside_before_rcu;
  c.last_spans.assign(spans, spans + n);
  return c.tasks_outside;
}
extern "C" void okp_seam_defer_slot_collection(void) { ++seam_counters().deferred_collections; }
extern "C" void okp_seam_flush_slot_collection(void) {
  if (seam_counters().lock_held) ++seam_counters().waits_under_lock;
  okp_core_collect_slots();
}

// --- The fake kernel ---------------------------------------------------------------------

extern "C" int okp_seam_locate(const char* symbol_name, okp_addr_t addr, unsigned int offset,
                               okp_addr_t* resolved, struct okp_text_info* info, char* reason,
                               unsigned long reason_len) {
  if (symbol_name) {
    addr = okp_host::fake_function(symbol_name);
    if (!addr) {
      std::snprintf(reason, reason_len, "no text symbol '%s'", symbol_name);
      return -2;
    }
  }
  addr += offset;
  auto* f = okp_host::function_containing(addr);
  if (!f) {
    std::snprintf(reason, reason_len, "%#lx is not kernel or module text", addr);
    return -22;
  }
  info->func_start = f->second.start;
  info->func_size = f->second.size;
  info->module = nullptr;
  info->module_init_text = 0;
  std::snprintf(info->symbol, sizeof(info->symbol), "%s+%#lx/%#lx", f->first.c_str(),
                addr - f->second.start, static_cast<unsigned long>(f->second.size));
  info->module_name[0] = '\0';
  *resolved = addr;
  return 0;
}

extern "C" const char* okp_seam_text_owner(okp_addr_t, unsigned long) { return nullptr; }
extern "C" okp_addr_t okp_seam_kernel_kprobe_in(okp_addr_t, unsigned long) { return 0; }
extern "C" void* okp_seam_fence_kernel_kprobes(void* handle, okp_addr_t, okp_addr_t) { return handle; }
extern "C" void okp_seam_unfence_kernel_kprobes(void*) {}
namespace {
okp_addr_range g_thunks{0, 0};
}  // namespace
void okp_host::set_indirect_thunks(okp_addr_t start, okp_addr_t end) { g_thunks = {start, end}; }
extern "C" unsigned int okp_seam_indirect_thunks(struct okp_addr_range* out, unsigned int max) {
  if (g_thunks.start == g_thunks.end || max == 0) return 0;
  out[0] = g_thunks;
  return 1;
}
extern "C" int okp_seam_module_get(void*) { return 0; }
extern "C" void okp_seam_module_put(void*) {}

extern "C" int okp_seam_patch_text(okp_addr_t addr, const void* bytes, const void* expect,
                                   unsigned long len) {
  auto& c = seam_counters();
  ++c.patches;
  if (!c.lock_held) ++c.patches_without_lock;
  if (!okp_host::in_text(addr) && !okp_host::in_slots(addr)) return -14;
  if (expect && std::memcmp(reinterpret_cast<void*>(addr), expect, len)) return -16;
  std::memcpy(reinterpret_cast<void*>(addr), bytes, len);
  return 0;
}

// Jump optimization's batches: text_mutex is the host's lock_held's companion.
extern "C" void okp_seam_text_lock(void) { seam_counters().text_lock_held = true; }
extern "C" void okp_seam_text_unlock(void) { seam_counters().text_lock_held = false; }
extern "C" int okp_seam_poke_text(okp_addr_t addr, const void* bytes, const void* expect,
                                  unsigned long len) {
  if (!seam_counters().text_lock_held) ++seam_counters().pokes_without_text_lock;
  return okp_seam_patch_text(addr, bytes, expect, len);
}
extern "C" void okp_seam_text_sync(void) { ++seam_counters().text_syncs; }
// The detours' common entry: any address within reach of the slot area does on the host.
extern "C" okp_addr_t okp_seam_detour_entry(int with_post) {
  return reinterpret_cast<okp_addr_t>(okp_host::g_text) + (with_post ? 128 : 0);
}
extern "C" okp_addr_t okp_seam_detour_post_entry(void) {
  return reinterpret_cast<okp_addr_t>(okp_host::g_text) + 64;
}
extern "C" int okp_seam_extable_in(okp_addr_t, okp_addr_t, struct okp_extable_entry*, unsigned int) {
  return 0;
}
extern "C" const char* okp_seam_jumps_refused(void) { return seam_counters().jumps_refused; }
extern "C" void okp_seam_defer_optimizer(void) { ++seam_counters().deferred_optimizations; }
extern "C" void okp_seam_flush_optimizer(void) {
  if (seam_counters().lock_held) ++seam_counters().waits_under_lock;
  okp_core_run_optimizer();
}
extern "C" void okp_seam_cancel_optimizer(void) {}

extern "C" okp_addr_t okp_seam_slot_area(unsigned long* size) {
  okp_host::placed();
  *size = sizeof(okp_host::g_slots);
  return reinterpret_cast<okp_addr_t>(okp_host::g_slots);
}

// No detour cells near the (fake) kernel's text: x86-64's rel32 reaches the slot area.
extern "C" okp_addr_t okp_seam_near_text_area(unsigned long* size) {
  *size = 0;
  return 0;
}

extern "C" okp_addr_t okp_seam_ftrace_site(okp_addr_t) { return 0; }
extern "C" okp_addr_t okp_seam_ftrace_site_in(okp_addr_t, unsigned long) { return 0; }
extern "C" int okp_seam_ftrace_arm(okp_addr_t, int) { return -95; }
extern "C" void okp_seam_ftrace_disarm(okp_addr_t, int) {}

extern "C" int okp_seam_function_at(okp_addr_t addr, okp_addr_t* start, unsigned long* size,
                                    char* name, unsigned long name_len) {
  auto* f = okp_host::function_containing(addr);
  if (!f) return -2;
  *start = f->second.start;
  *size = f->second.size;
  std::snprintf(name, name_len, "%s", f->first.c_str());
  return 0;
}
extern "C" void okp_seam_resolve_functions(const char* const* names, okp_addr_t* addrs,
                                           unsigned int n) {
  for (unsigned int i = 0; i < n; ++i) addrs[i] = names[i][0] ? okp_host::fake_function(names[i]) : 0;
}

static int g_task;
extern "C" void* okp_seam_current_task(void) { return &g_task; }
extern "C" unsigned int okp_seam_possible_cpus(void) { return 2; }

// No kernel rethook on the host: return probes use the stubs, as on a kernel without one.
extern "C" const char* okp_seam_rethook_unusable(void) { return "no kernel on the host"; }
extern "C" void* okp_seam_rethook_create(void*, unsigned int, unsigned long) { return nullptr; }
extern "C" void okp_seam_rethook_free(void*) {}
extern "C" void okp_seam_rethook_release(void*) {}
extern "C" const char* okp_seam_kernel_return_route(void) { return "rethook"; }
extern "C" void okp_seam_return_stubs_detached(void) {}
extern "C" int okp_seam_rethook_entry(okp_kprobe*, pt_regs*) { return 0; }

// Return probes' stubs live in okprobes' text in the kernel; here they are plain memory.
extern "C" const unsigned char okp_return_stubs[4096 * 16] = {};

// The break hook's answer for a breakpoint no site explains (registry_test checks the core
// tail-calls it with the trap's regs, and passes its answer on).
okp_regs* g_not_ours_regs = nullptr;
extern "C" int okp_seam_break_not_ours(okp_regs* regs) {
  g_not_ours_regs = regs;
  return 7;
}
