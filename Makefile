# okprobes: top-level commands. See README.md.
#   make [ARCH=x86_64|arm64|riscv] [KERNEL=debian|test|test-debug]   build okprobes.ko
#   make KERNEL=host   build for the running kernel (/lib/modules/$(uname -r)/build)
#   make install KERNEL=host   install it there (modules_install, as root)
#   make run        build, boot a guest, load okprobes + the sample, show debugfs and hits
#   make check      every test (host, builds, KUnit in guests, stock-kernel smoke)
#   make check-long make check plus what does not fit CI's budget (docs/testing.md)
#   make stress     the reliability sweep over a large sample (docs/reliability.md)
#   make coverage   jump-optimization coverage, okprobes vs the kernel (docs/jump-optimization.md)
#   make compat-modules   the kernel's kprobes samples and test_kprobes.c, via kprobes_compat.h
#   make livepatch-modules   the kernel's livepatch sample (kernels with CONFIG_LIVEPATCH)
#   make print-kdir ARCH=... KERNEL=...   kernel build directory for client modules
#   make setup      install packages and fetch third-party sources (done on demand)

SHELL := /bin/bash
OKP_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
# KERNEL=host: the running kernel, built natively (no cross compiler) for this machine's arch.
ifeq ($(KERNEL),host)
ARCH ?= $(shell uname -m)
endif
ARCH ?= x86_64
OKP_ARCH := $(shell $(OKP_ROOT)/scripts/okp-arch $(ARCH))
KERNEL ?= $(if $(filter x86_64,$(OKP_ARCH)),debian,test)
OKP_CACHE ?= $(HOME)/.cache/okprobes
export OKP_CACHE

# Overridable so two builds for one (arch, kernel) can run side by side.
BUILD ?= $(OKP_ROOT)/build/$(OKP_ARCH)-$(KERNEL)
OKP_KARCH := $(shell . $(OKP_ROOT)/scripts/lib.sh && kbuild_arch $(OKP_ARCH))
OKP_CROSS := $(if $(filter host,$(KERNEL)),,$(shell . $(OKP_ROOT)/scripts/lib.sh && cross_compile $(OKP_ARCH)))
# The set-up a build needs: everything for the guests and tests, or for KERNEL=host only the
# compiler and Zydis (nothing once Zydis is cached).
OKP_SETUP := $(OKP_ROOT)/scripts/setup $(if $(filter host,$(KERNEL)),--host-build)
KMAKE = $(MAKE) -C "$$kdir" ARCH=$(OKP_KARCH) CROSS_COMPILE=$(OKP_CROSS) OKP_ROOT=$(OKP_ROOT) OKP_CACHE=$(OKP_CACHE)
# Modules with C++ objects get no BTF: pahole (1.24, the one Debian's 6.12 kernel was built
# with) cannot encode C++ DWARF (templates, rvalue references) and fails the link. Kernels
# whose headers ship no vmlinux (6.1) skip module BTF anyway. Client modules in C keep theirs.
OKP_NO_BTF := CONFIG_DEBUG_INFO_BTF_MODULES=

.PHONY: all module samples kunit-module test-modules compat-modules livepatch-modules print-kdir setup install run check check-long stress coverage host-test bench fuzz clean
all: module samples

setup:
	@$(OKP_SETUP)

# Objects go to a per-(arch, kernel) shadow tree of symlinks, so builds for several
# kernels never overwrite each other's objects.
module: setup
	@kdir=$$($(OKP_ROOT)/scripts/kernel kdir $(OKP_ARCH) $(KERNEL)) && \
	$(OKP_ROOT)/scripts/shadow-tree $(BUILD) && \
	$(KMAKE) $(OKP_NO_BTF) M=$(BUILD) modules 2>&1 | tee $(BUILD)/build.log; exit $${PIPESTATUS[0]}

# Client modules are built exactly as docs/client-modules.md says.
samples: module
	@kdir=$$($(OKP_ROOT)/scripts/kernel kdir $(OKP_ARCH) $(KERNEL)) && \
	$(KMAKE) M=$(BUILD)/samples OKPROBES=$(OKP_ROOT) KBUILD_EXTRA_SYMBOLS=$(BUILD)/Module.symvers modules

kunit-module: module
	@kdir=$$($(OKP_ROOT)/scripts/kernel kdir $(OKP_ARCH) $(KERNEL)) && \
	$(KMAKE) $(OKP_NO_BTF) M=$(BUILD)/tests/kunit OKPROBES=$(OKP_ROOT) KBUILD_EXTRA_SYMBOLS=$(BUILD)/Module.symvers modules

# Modules the guest scripts drive (tests/vm/modules), built as clients too.
test-modules: module
	@kdir=$$($(OKP_ROOT)/scripts/kernel kdir $(OKP_ARCH) $(KERNEL)) && \
	$(KMAKE) M=$(BUILD)/tests/vm/modules OKPROBES=$(OKP_ROOT) KBUILD_EXTRA_SYMBOLS=$(BUILD)/Module.symvers modules

# The kernel's kprobes samples and lib/test_kprobes.c, unmodified, built against okprobes with
# -include okprobes/kprobes_compat.h (tests/compat/Kbuild copies them from linux-source-6.1).
compat-modules: module
	@kdir=$$($(OKP_ROOT)/scripts/kernel kdir $(OKP_ARCH) $(KERNEL)) && \
	$(KMAKE) M=$(BUILD)/tests/compat OKPROBES=$(OKP_ROOT) KBUILD_EXTRA_SYMBOLS=$(BUILD)/Module.symvers modules

# The kernel's livepatch sample, unmodified (tests/livepatch/Kbuild copies it from
# linux-source-6.1), on kernels with CONFIG_LIVEPATCH: tests/vm/scripts/livepatch.sh.
livepatch-modules: module
	@kdir=$$($(OKP_ROOT)/scripts/kernel kdir $(OKP_ARCH) $(KERNEL)) && \
	$(KMAKE) M=$(BUILD)/tests/livepatch modules

# A query: installs nothing (scripts/kernel says what is missing).
print-kdir:
	@$(OKP_ROOT)/scripts/kernel kdir $(OKP_ARCH) $(KERNEL)

# Into the running kernel's /lib/modules/$(uname -r)/updates (Kbuild's modules_install, depmod).
# Installs what `make KERNEL=host` built, building nothing (run as root: root's cache is not
# the builder's).
install:
	@[ "$(KERNEL)" = host ] || { echo "make install installs into this machine's kernel: use KERNEL=host" >&2; exit 1; }
	@[ -f $(BUILD)/okprobes.ko ] || { echo "no $(BUILD)/okprobes.ko: run 'make KERNEL=host' first" >&2; exit 1; }
	@kdir=$$($(OKP_ROOT)/scripts/kernel kdir $(OKP_ARCH) $(KERNEL)) && \
	$(KMAKE) M=$(BUILD) INSTALL_MOD_DIR=updates modules_install

host-test: setup
	@cmake -S $(OKP_ROOT)/tests/host -B $(OKP_ROOT)/build/host -DOKP_CACHE=$(OKP_CACHE) >/dev/null && \
	cmake --build $(OKP_ROOT)/build/host -j$$(nproc) && \
	cd $(OKP_ROOT)/build/host && ctest --output-on-failure

run:  # (its build runs the set-up; tests/vm/make-run keeps the terminal to what matters)
	@$(OKP_ROOT)/tests/vm/make-run $(OKP_ARCH) $(KERNEL)

check: setup
	@$(OKP_ROOT)/tests/check

# make check plus what does not fit CI's 90 minutes: kprobe events on every x86-64 kernel, the
# x86-64 sweeps of test-debug and debian-6.12-rt, the arm64 sweeps at every instruction and on
# 6.12-rt (docs/testing.md).
check-long: setup
	@OKP_CHECK_LONG=1 $(OKP_ROOT)/tests/check

# A probe at every byte of every k-th vmlinux function, x86_64 guests: docs/reliability.md.
# STRESS_KERNELS (test), STRESS_STRIDE (5), STRESS_SHARDS (1), STRESS_BG (1).
stress: setup
	@$(OKP_ROOT)/tests/vm/sweep-stress

# Every boundary of every k-th vmlinux function, optimized by okprobes and by the kernel's
# kprobes, x86_64 guests: docs/jump-optimization.md. COVERAGE_KERNELS (debian),
# COVERAGE_STRIDE (80), COVERAGE_START, COVERAGE_ARGS, COVERAGE_BUILD (build/).
coverage: setup
	@$(OKP_ROOT)/tests/vm/coverage

# okprobes against the kernel's kprobes, one x86_64 guest per kernel (Debian's stock kernel,
# then the test kernel): docs/benchmarks.md. KERNEL=debian|test on the command line measures
# that kernel only; BUILD=DIR builds in DIR/<kernel>; BENCH_ARGS go to tests/bench/run.
# ARCH=arm64|riscv: that arch's test kernel, docs/benchmarks-<arch>.md (tests/bench/run-arch).
bench: setup
	@$(OKP_ROOT)/tests/bench/run --arch $(OKP_ARCH) $(if $(filter command line,$(origin KERNEL)),--kernels "$(KERNEL)") \
	  $(if $(filter command line,$(origin BUILD)),--build "$(BUILD)") $(BENCH_ARGS)

# libFuzzer on x86-64's decoder -> planner -> slot builder / emulator (the emulation against
# this CPU) and on the jump optimizer's region check + relocator: tests/fuzz/README.md.
# FUZZ_TIME seconds per target (600); FUZZ_ARGS go to tests/fuzz/run (--targets "...").
fuzz: setup
	@$(OKP_ROOT)/tests/fuzz/run --time $(or $(FUZZ_TIME),600) $(FUZZ_ARGS)

# A self-contained DKMS source tree (dkms.conf, sources, Zydis): build/dkms/okprobes-<version>/
# (docs/client-modules.md, "okprobes itself through DKMS").
.PHONY: dkms-tree
dkms-tree: setup
	@$(OKP_ROOT)/scripts/dkms-tree

clean:
	rm -rf $(OKP_ROOT)/build
