// SPDX-License-Identifier: GPL-2.0
// Return probes, the API: the entry handler that arms a stub, registration (a pool of stubs
// and the entry probe, published together) and unregistration, debugfs descriptions and the
// functions a return probe refuses. The stubs' life cycle and the return path are in
// stub_life.cpp. See return_probe.h.
#include "core/return_probe.h"

#include "arch/arch_contract.h"
#include "core/hit_path.h"
#include "core/registry.h"
#include "core/stub_life.h"
#include "core/string.h"
#include "core/trap_path.h"
#include "seam/core_entries.h"

namespace okp {

namespace {

OKP_HIT_PATH okp_kretprobe* return_probe_of(okp_kprobe* kp) {
  return reinterpret_cast<okp_kretprobe*>(reinterpret_cast<u8*>(kp) -
                                          __builtin_offsetof(okp_kretprobe, kp));
}

OKP_HIT_PATH void note_peak(okp_kretprobe* rp, u32 in_use) {
  unsigned int peak = __atomic_load_n(&rp->peak, __ATOMIC_RELAXED);
  while (in_use > peak &&
         !__atomic_compare_exchange_n(&rp->peak, &peak, in_use, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
}

// The entry's uncommon ends, out of line so that the common one keeps few registers: an
// empty pool (a miss, as in the kernel's kretprobes: no reclaim scan here, it would walk the
// stubs on every miss, in the trap; frames that will never return are reclaimed when their
// task is freed and at unregister), no free stub (the instance goes back), and an entry
// handler that refused the frame (both go back; the stub was never armed).
[[gnu::noinline]] OKP_HIT_PATH void entry_missed_pool(okp_kretprobe* rp) {
  count_rp_miss(rp, OKP_RP_MISS_POOL_EMPTY);
}
[[gnu::noinline]] OKP_HIT_PATH void entry_missed_stub(okp_kretprobe* rp, u32 slot) {
  pool_of(rp)->free.push(slot);
  count_rp_miss(rp, OKP_RP_MISS_NO_STUB);
}
[[gnu::noinline]] OKP_HIT_PATH void entry_refused(usize index) {
  const StubState& st = g_stubs[index];
  st.pool->free.push(st.slot);
  g_free_stubs.push(static_cast<u32>(index));
}

// A frame was diverted: one more instance in use, and a new peak noted. Read through
// rp->okp_pool, as the glue's kernel routes do (kernel_return_route.h): nothing is kept across
// the entry handler's call for it.
[[gnu::always_inline]] inline void frame_in(okp_kretprobe* rp) {
  const u32 in_use = __atomic_add_fetch(&pool_of(rp)->head.in_use, 1, __ATOMIC_RELAXED);
  if (__builtin_expect(in_use > __atomic_load_n(&rp->peak, __ATOMIC_RELAXED), 0)) note_peak(rp, in_use);
}

}  // namespace

// The entry of a return probe through okprobes' stubs: takes an instance and a stub, fills
// both, runs the entry handler, then diverts the frame's return to the stub and arms it. One
// through the kernel's rethook has the glue's okp_seam_rethook_entry as its pre handler
// instead (see seam/kernel_services.h). Written for the fewest instructions on the common path
// (docs/benchmarks-return-rethook-icount.md lists them): what the steps after the entry
// handler's call need is read back from the stub's state, not kept in registers across it.
OKP_HIT_PATH int return_entry(okp_kprobe* kp, pt_regs* pt) {
  okp_kretprobe* rp = return_probe_of(kp);
  auto* regs = reinterpret_cast<okp_regs*>(pt);
  // First: where reading it is a call (the glue's), only rp and regs are live across it.
  void* const task = arch::current_task();
  // Set before the entry probe is registered, cleared only once no entry can run (unregister,
  // a failed registration): never null here (the rethook entry in the glue relies on it too).
  ReturnPool* pool = pool_of(rp);
  u32 slot;
  if (!pool->free.pop(&slot)) {
    entry_missed_pool(rp);
    return 0;
  }
  u32 taken;
  if (!take_stub(&taken)) {
    entry_missed_stub(rp, slot);
    return 0;
  }
  const usize index = taken;
  StubState& st = g_stubs[index];
  auto* ri = reinterpret_cast<okp_kretprobe_instance*>(pool->instances + slot * pool->instance_size);
  const okp_addr_t frame = arch::return_frame(regs);
  const unsigned long ret_addr = arch::return_address(regs);
  st.pool = pool;
  st.instance = ri;
  st.slot = slot;
  st.frame = frame;
  st.ret_addr = ret_addr;
  st.task = task;
  ri->ret_addr = ret_addr;  // (ri->rp was set when the pool was made)
  ri->frame = frame;
  ri->task = task;
  if (rp->entry_handler && rp->entry_handler(ri, pt)) {
    entry_refused(index);
    return 0;
  }
  arch::set_return_address(regs, arch::return_stub_address(index));
  // Published last: a reclaimer that sees kArmed also sees the slot diverted and the fields
  // set. The stub came off the free stack, so its word says kFree: arming it is one add.
  __atomic_store_n(&st.life, __atomic_load_n(&st.life, __ATOMIC_RELAXED) + kArmOnce,
                   __ATOMIC_RELEASE);
  frame_in(rp);
  return 0;
}

}  // namespace okp

// okp_seam_rethook_entry's rare cases (preemption off).
extern "C" OKP_HIT_PATH void okp_core_rethook_missed(struct okp_kretprobe* rp, int cause) {
  okp::count_rp_miss(rp, static_cast<okp_kretprobe_miss_cause>(cause));
}

extern "C" OKP_HIT_PATH void okp_core_rethook_reclaimed(struct okp_kretprobe* rp) {
  __atomic_fetch_sub(&okp::pool_of(rp)->head.in_use, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&rp->nreclaimed, 1, __ATOMIC_RELAXED);
}

extern "C" OKP_HIT_PATH void okp_core_rethook_peak(struct okp_kretprobe* rp, unsigned int in_use) {
  okp::note_peak(rp, in_use);
}

namespace okp {

namespace {

constexpr int kMaxActive = 65536;

unsigned int default_maxactive() {
  const unsigned int twice = 2 * okp_seam_possible_cpus();
  return twice > 10 ? twice : 10;
}

// Registry lock held. Readers that already hold the pool keep walking from it: its next
// stays valid until the grace period before it is freed.
void unlink_pool(ReturnPool* pool) {
  for (ReturnPool** link = &g_pools; *link; link = &(*link)->next) {
    if (*link != pool) continue;
    __atomic_store_n(link, pool->next, __ATOMIC_RELEASE);
    return;
  }
}

usize instance_size_of(const okp_kretprobe* rp) {
  return (sizeof(okp_kretprobe_instance) + rp->data_size + 7) & ~static_cast<usize>(7);
}

// The pool and its instances in one allocation, all instances free (the bytes per probe:
// docs/api.md).
ErrorOr<ReturnPool*> make_pool(okp_kretprobe* rp, u32 ninstances) {
  const usize instance_size = instance_size_of(rp);
  const usize links = (ninstances * sizeof(u32) + 7) & ~static_cast<usize>(7);
  const usize bytes = sizeof(ReturnPool) + links + ninstances * instance_size;
  auto* mem = static_cast<u8*>(okp_seam_alloc_large(bytes));
  if (!mem) return Error(Errno::kNoMem, "out of memory for the instance pool");
  auto* pool = reinterpret_cast<ReturnPool*>(mem);
  pool->rp = rp;
  pool->ninstances = ninstances;
  pool->instance_size = instance_size;
  pool->free_links = reinterpret_cast<u32*>(mem + sizeof(ReturnPool));
  pool->free.links = pool->free_links;
  pool->instances = mem + sizeof(ReturnPool) + links;
  // Each instance belongs to rp for the pool's life: written once here, not at every entry.
  for (u32 k = 0; k < ninstances; ++k)
    reinterpret_cast<okp_kretprobe_instance*>(pool->instances + k * instance_size)->rp = rp;
  fill_pool(pool);
  return pool;
}

void free_pool(ReturnPool* pool) {
  if (pool && pool->head.rethook) {
    okp_seam_rethook_release(pool->head.rethook);
    okp_seam_free(pool);
  } else {
    okp_seam_free_large(pool);
  }
}

// A pool of `want` rethook nodes: the kernel holds the instances, no stub is taken.
ErrorOr<ReturnPool*> make_rethook_pool(okp_kretprobe* rp, u32 want) {
  auto* pool = static_cast<ReturnPool*>(okp_seam_alloc(sizeof(ReturnPool), OKP_GFP_KERNEL));
  if (!pool) return Error(Errno::kNoMem, "out of memory for the instance pool");
  *pool = ReturnPool{};
  pool->rp = rp;
  pool->ninstances = want;
  pool->instance_size = instance_size_of(rp);
  pool->head.rethook = okp_seam_rethook_create(rp, want, pool->instance_size);
  if (!pool->head.rethook) {
    okp_seam_free(pool);
    return Error(Errno::kNoMem, "out of memory for the kernel's rethook nodes");
  }
  return pool;
}

// Why return probes registered now use okprobes' stubs (a static string), or nullptr: the
// kernel's rethook.
const char* stubs_reason() { return okp_seam_rethook_unusable(); }

// Called without the registry lock. The refusal is logged and kept for debugfs `refused`,
// as a probe's are.
int refuse(okp_kretprobe* rp, Errno code, const char* reason) {
  if (rp) copy_string(rp->kp.okp_reason, OKP_REASON_MAX, reason);
  char line[OKP_REASON_MAX + 64];
  okp_seam_format(line, sizeof(line), "refused return probe: %s (%d)", reason,
                  to_kernel_errno(code));
  okp_seam_log(OKP_LOG_ERR, line);
  registry().record_refusal(rp ? &rp->kp : nullptr, to_kernel_errno(code));
  return to_kernel_errno(code);
}

// Publishes the pool and registers the entry probe (registry lock held). On failure the pool
// stays published: the entry may have been hit before the registry detached it again (a
// rollback), so the caller undoes both as unregister does (rp->okp_pool stays set until no
// entry or return can read it, which the entries rely on).
int publish(Locked lock, okp_kretprobe* rp, ReturnPool* pool, okp_kprobe** rollback) {
  pool->next = g_pools;
  __atomic_store_n(&g_pools, pool, __ATOMIC_RELEASE);
  rp->nmissed = 0;
  rp->peak = 0;
  rp->nreclaimed = 0;
  for (auto& m : rp->nmissed_by) m = 0;
  rp->kp.pre_handler = pool->head.rethook ? okp_seam_rethook_entry : return_entry;
  rp->kp.post_handler = nullptr;
  __atomic_store_n(&rp->okp_pool, pool, __ATOMIC_RELEASE);
  return registry().register_probe_locked(lock, &rp->kp, /*return_probe=*/true, rollback);
}

// Unregister's two steps (below), also undoing a failed registration.
void detach_return_probe(Locked, ReturnPool* pool);
void free_return_probe(Locked, okp_kretprobe* rp, ReturnPool*);

}  // namespace

bool is_return_entry(const okp_kprobe* kp) {
  return kp->pre_handler == return_entry || kp->pre_handler == okp_seam_rethook_entry;
}

namespace {

// The reason table gives for name's function (a compiler suffix ignored), or nullptr.
template <usize N>
const char* unsafe_reason(const arch::UnsafeFunction (&table)[N], const char* name) {
  for (const auto& f : table)
    if (f.name[0] && same_function(name, f.name)) return f.why;
  return nullptr;
}

}  // namespace

// Functions a return probe must not be put on: they never return to their caller, so the
// frame's instance would be taken and its handler never run. Each arch adds its own (the
// context switch, which returns into another task: arch::kReturnProbeUnsafe).
const char* return_probe_unsafe(const char* symbol) {
  static constexpr arch::UnsafeFunction kUnsafe[] = {
      {"do_exit", "it never returns to its caller"},
      {"do_group_exit", "it never returns to its caller"},
      {"make_task_dead", "it never returns to its caller"},
      {"kthread_exit", "it never returns to its caller"},
      {"kthread_complete_and_exit", "it never returns to its caller"},
      {"panic", "it never returns to its caller"},
      {"__stack_chk_fail", "it never returns to its caller"},
      {"machine_power_off", "it never returns to its caller"},
      {"machine_halt", "it never returns to its caller"},
      {"machine_restart", "it never returns to its caller"},
      {"cpu_startup_entry", "it never returns to its caller"},
  };
  // symbol is "name" or "name+0xoff/0xsize": the name alone.
  char name[sizeof(okp_text_info::symbol)];
  usize n = 0;
  for (; symbol[n] && symbol[n] != '+' && n + 1 < sizeof(name); ++n) name[n] = symbol[n];
  name[n] = '\0';
  if (const char* why = unsafe_reason(arch::kReturnProbeUnsafe, name)) return why;
  return unsafe_reason(kUnsafe, name);
}

void describe_return_probe(const okp_kretprobe* rp, char* buf, usize len) {
  const ReturnPool* pool = pool_of(rp);
  const unsigned long pool_empty = rp->nmissed_by[OKP_RP_MISS_POOL_EMPTY];
  const unsigned long reentry = rp->nmissed_by[OKP_RP_MISS_REENTRY] + rp->kp.nmissed_by[OKP_MISS_REENTRY];
  const unsigned long no_stub = rp->nmissed_by[OKP_RP_MISS_NO_STUB];
  okp_seam_format(buf, len,
                  " maxactive=%u in_use=%u peak=%u missed_pool_empty=%lu missed_reentry=%lu "
                  "missed_disabled=%lu missed_no_stub=%lu reclaimed=%lu%s%s return=%s",
                  pool ? pool->ninstances : 0, pool ? __atomic_load_n(&pool->head.in_use, __ATOMIC_RELAXED) : 0,
                  rp->peak, pool_empty, reentry, rp->nmissed_by[OKP_RP_MISS_DISABLED], no_stub,
                  rp->nreclaimed, pool_empty ? " advice=\"raise maxactive\"" : "",
                  no_stub ? " advice=\"all return stubs were in use\"" : "",
                  pool && pool->head.rethook ? okp_seam_kernel_return_route() : "stubs");
}

}  // namespace okp

using namespace okp;

extern "C" int okp_core_register_kretprobe(struct okp_kretprobe* rp) {
  if (arch::kReturnStubs == 0) {
    char reason[OKP_REASON_MAX];
    okp_seam_format(reason, sizeof(reason), "return probes are not implemented on %s yet",
                    OKP_ARCH_NAME);
    return refuse(rp, Errno::kOpNotSupp, reason);
  }
  if (!rp) return refuse(nullptr, Errno::kInval, "NULL return probe");
  if (pool_of(rp)) return refuse(rp, Errno::kExist, "this okp_kretprobe is already registered");
  if (rp->data_size > OKP_KRETPROBE_MAX_DATA_SIZE)
    return refuse(rp, Errno::k2Big, "data_size over 4096 bytes per instance (KRETPROBE_MAX_DATA_SIZE)");
  // Instances are preallocated, as the kernel's: a maxactive no machine suspends at once is a
  // mistake (an unset field, a bad module parameter), not a request for gigabytes.
  if (rp->maxactive > kMaxActive) {
    char why[64];
    okp_seam_format(why, sizeof(why), "maxactive over %d instances", kMaxActive);
    return refuse(rp, Errno::k2Big, why);
  }
  const unsigned int want = rp->maxactive > 0 ? static_cast<unsigned int>(rp->maxactive)
                                              : default_maxactive();
  const bool use_stubs = stubs_reason() != nullptr;

  // The pool and the entry probe are published together under the lock.
  ReturnPool* pool = nullptr;
  okp_kprobe* rollback = nullptr;
  const char* own_refusal = nullptr;  // refused here, not by the entry's registration
  int err;
  {
    RegistryGuard guard;
    init_stubs();
    auto made = use_stubs ? make_pool(rp, want) : make_rethook_pool(rp, want);
    if (made.is_error()) {
      err = made.error().kernel_errno();
      own_refusal = made.error().reason();
    } else {
      pool = made.value();
      err = publish(guard, rp, pool, &rollback);
    }
  }
  if (!err) return 0;
  if (pool) {
    // Undone as okp_core_unregister_kretprobes() does: the entry may have run (a rollback's
    // record sat at a live site for a moment) and armed a stub of this pool.
    okp_seam_synchronize_rcu();  // no entry handler runs any more
    {
      RegistryGuard guard;
      if (rollback) registry().finish_unregister(guard, &rollback, 1);
      detach_return_probe(guard, pool);
    }
    okp_seam_synchronize_rcu();  // no return path or reclaim follows the pool
    {
      RegistryGuard guard;
      free_return_probe(guard, rp, pool);
    }
    free_pool(pool);
  }
  // The entry's own refusals were logged and kept by the registry.
  return own_refusal ? refuse(rp, from_kernel_errno(err), own_refusal) : err;
}

namespace okp {
namespace {

// Unregister, second step (registry lock held, a grace period after the entry probe was
// detached: no entry handler can arm a stub of this pool any more): frames that never return
// give their instance back, and frames still inside will return through a detached stub.
void detach_return_probe(Locked, ReturnPool* pool) {
  if (pool->head.rethook) {
    // No handler runs after the next grace period; the kernel frees the nodes, the ones
    // still out when their frames return (see src/kernel/rethook.c on unload).
    okp_seam_rethook_free(pool->head.rethook);
    unlink_pool(pool);
    return;
  }
  reclaim_pool(pool);
  reclaim_detached();  // earlier probes' frames that unwound without returning
  // The count goes up before each detach, so it is never below the number of detached stubs.
  // A stub whose word changed since it was read (its frame returned, the stub was armed again,
  // perhaps for another probe) fails the exchange: only this pool's frames are detached.
  bool detached = false;
  const u32 high = stubs_to_scan();
  for (u32 i = 0; i < high; ++i) {
    StubState& st = g_stubs[i];
    u64 word = __atomic_load_n(&st.life, __ATOMIC_ACQUIRE);
    if (life_of(word) != kArmed || __atomic_load_n(&st.pool, __ATOMIC_RELAXED) != pool) continue;
    __atomic_fetch_add(&g_detached_live, 1, __ATOMIC_ACQ_REL);
    if (__atomic_compare_exchange_n(&st.life, &word, with_life(word, kDetached), false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      detached = true;
    else
      __atomic_fetch_sub(&g_detached_live, 1, __ATOMIC_RELEASE);
  }
  // Those frames return into okprobes' stubs, whoever unloads what meanwhile.
  if (detached) okp_seam_return_stubs_detached();
  unlink_pool(pool);
}

// Bottom half, after the grace period (registry lock held): return paths and reclaims that
// took a stub out of kArmed have finished, nobody follows this pool (detached stubs still
// name it, and never follow it).
void free_return_probe(Locked, okp_kretprobe* rp, ReturnPool*) {
  __atomic_store_n(&rp->okp_pool, nullptr, __ATOMIC_RELEASE);
}

}  // namespace
}  // namespace okp

// num return probes, two RCU grace periods for all of them, each waited for unlocked:
//  1. detach the entry probes; after the first grace period no CPU runs an entry handler, so
//     no frame can take (arm) a stub of these pools any more;
//  2. reclaim, detach the armed stubs, unlink the pools; after the second, no return path or
//     reclaim follows them;
//  3. free.
// Detaching stubs before the first grace period would race with an entry handler still
// arming one: that stub would stay armed with its pool gone (seen in the return-probe stress).
extern "C" void okp_core_unregister_kretprobes(struct okp_kretprobe** rps, int num) {
  constexpr int kBatch = 64;  // kprobe pointers per pair of grace periods, on the stack
  for (int base = 0; base < num; base += kBatch) {
    const int n = num - base < kBatch ? num - base : kBatch;
    okp_kprobe* kps[kBatch] = {};
    bool any = false;
    {
      RegistryGuard guard;
      for (int i = 0; i < n; ++i) {
        okp_kretprobe* rp = rps[base + i];
        if (!rp || !pool_of(rp)) continue;
        bool repeated = false;
        for (int j = 0; j < i && !repeated; ++j) repeated = rps[base + j] == rp;
        if (repeated) continue;
        kps[i] = &rp->kp;
        registry().detach_probes(guard, &kps[i], 1);
        any = true;
      }
    }
    if (!any) continue;
    okp_seam_synchronize_rcu();  // 1: no entry handler runs any more
    {
      RegistryGuard guard;
      registry().finish_unregister(guard, kps, n);
      for (int i = 0; i < n; ++i)
        if (kps[i]) detach_return_probe(guard, pool_of(rps[base + i]));
    }
    okp_seam_synchronize_rcu();  // 2: no return path or reclaim follows the pools
    ReturnPool* pools[kBatch] = {};
    {
      RegistryGuard guard;
      for (int i = 0; i < n; ++i) {
        if (!kps[i]) continue;
        okp_kretprobe* rp = rps[base + i];
        pools[i] = pool_of(rp);
        free_return_probe(guard, rp, pools[i]);
      }
    }
    for (ReturnPool* pool : pools) free_pool(pool);
  }
}

extern "C" void okp_core_unregister_kretprobe(struct okp_kretprobe* rp) {
  okp_core_unregister_kretprobes(&rp, 1);
}

extern "C" int okp_core_set_kretprobe_disabled(struct okp_kretprobe* rp, int off) {
  if (!rp || !pool_of(rp)) return to_kernel_errno(Errno::kInval);
  return okp_core_set_kprobe_disabled(&rp->kp, off);
}

