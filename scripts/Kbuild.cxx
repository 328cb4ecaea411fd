# C++ in a kernel module (included by every okprobes Kbuild file).
#
# .cpp files compile with the target's g++ and flags derived from this kernel's own C flags
# (scripts/cxxflags), then go through the same post-processing as the kernel's C objects:
# fixdep, objtool (x86), recordmcount where the arch uses it. Any static constructor fails
# the build: nothing may run before okprobes' init, in an order nobody chose.

OKP_CXX ?= $(CROSS_COMPILE)g++
okp-cxx-derived := $(shell $(OKP_ROOT)/scripts/cxxflags "$(OKP_CXX)" $(KBUILD_CFLAGS) $(KBUILD_CFLAGS_MODULE))
ifneq ($(filter -okprobes-cxxflags-derivation-failed,$(okp-cxx-derived)),)
$(error okprobes: could not derive C++ flags from this kernel's C flags (see the message above))
endif

# arm64 gcc defaults to out-of-line atomics (calls into libgcc's __aarch64_* helpers, which
# the kernel does not provide: its own atomics are inline asm). Keep them inline.
okp-cxx-arch-$(CONFIG_ARM64) := $(call cc-option,-mno-outline-atomics)

okp-cxx-only := $(okp-cxx-arch-y) -std=gnu++20 -ffreestanding -fno-exceptions -fno-rtti -fno-threadsafe-statics \
	-fno-use-cxa-atexit -nostdinc++ -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-Wall -Wextra

# CXXFLAGS_REMOVE_<obj> takes flags out of the derived set, as CFLAGS_REMOVE_<obj> does for C
# (the hit path drops $(CC_FLAGS_FTRACE): it must not be traced).
cxx_flags = -Wp,-MMD,$(depfile) -nostdinc \
	$(filter-out $(CXXFLAGS_REMOVE_$(target-stem).o),$(okp-cxx-derived)) $(okp-cxx-only) \
	$(OKP_CXX_INCLUDES) $(CXXFLAGS_$(target-stem).o) $(modkern_cflags) $(basename_flags) $(modname_flags)

quiet_cmd_cxx_o_cpp = C++ $(quiet_modtag) $@
      cmd_cxx_o_cpp = $(OKP_CXX) $(cxx_flags) -c -o $@ $< $(cmd_objtool)

# .init_array/.ctors would be a static constructor; .eh_frame/.gcc_except_table exceptions.
quiet_cmd_okp_no_ctors = CHKCTOR $@
      cmd_okp_no_ctors = if $(OBJDUMP) -h $@ | grep -qE ' \.(init_array|ctors|fini_array|dtors|gcc_except_table)'; then \
		echo "$@: static constructor/destructor or exception table: not allowed in okprobes" >&2; \
		rm -f $@; exit 1; fi

define rule_cxx_o_cpp
	$(call cmd_and_fixdep,cxx_o_cpp)
	$(call cmd,okp_no_ctors)
	$(call cmd,gen_objtooldep)
	$(call cmd,record_mcount)
endef

$(obj)/%.o: $(src)/%.cpp FORCE
	$(call if_changed_rule,cxx_o_cpp)
