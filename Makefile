# twasmc: one non-recursive Makefile; every output under build/.
CC          ?= cc
LLVM_CONFIG ?= llvm-config-19
PREFIX      ?= /usr/local
DESTDIR     ?=
SPEC_DIR    ?= ../shared/wasm-spec
SPEC_BOUNDS ?= guard
SPEC_JOBS   ?= 2
WASI_SUITE  ?= ../shared/wasi-testsuite
WASI_FLAGS  ?= -O0

B := build
WARN    := -Wall -Wextra -Werror
CFLAGS  ?= -O2 -g
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -MMD -MP -Iinclude -fPIC
LLVM_INC := -I$(shell $(LLVM_CONFIG) --includedir)
LLVM_LIBS := -L$(shell $(LLVM_CONFIG) --libdir) -lLLVM-19 -Wl,-rpath,$(shell $(LLVM_CONFIG) --libdir) -lelf
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -lpthread)

# ---- sources ------------------------------------------------------------
# compiler/driver/main.c and cli_*.c make the command, the rest the library.
CLI_SRC      := compiler/driver/main.c $(wildcard compiler/driver/cli_*.c)
CLI_OBJ      := $(CLI_SRC:%.c=$(B)/obj/%.o)
COMPILER_SRC := $(filter-out $(CLI_SRC),$(wildcard compiler/*.c compiler/*/*.c kernels/*.c ptx/*.c))
RUNTIME_SRC  := $(wildcard runtime/*.c)
SPEC_SRC     := $(wildcard tests/spec/*.c)
UNIT_SRC     := $(wildcard tests/unit/test_*.c)

COMPILER_OBJ := $(COMPILER_SRC:%.c=$(B)/obj/%.o)
RUNTIME_OBJ  := $(RUNTIME_SRC:%.c=$(B)/obj/%.o)
SPEC_OBJ     := $(SPEC_SRC:%.c=$(B)/obj/%.o)
UNIT_BIN     := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)

TWASMC   := $(B)/bin/twasmc
LIBC     := $(B)/lib/libtwasmc.a
LIBRT    := $(B)/lib/libtwasm-rt.a
LIBRT_SO := $(B)/lib/libtwasm-rt.so
SPECRUN  := $(B)/bin/twasm-spec

.PHONY: layering examples-check fuzz fuzz-diff all check unit programs install-test spec spec-both wasi-testsuite spec-traps examples run-example bench install uninstall clean
all: $(TWASMC) $(LIBRT) $(LIBRT_SO) $(SPECRUN)

# ---- layering -------------------------------------------------------------
# The compiler's folders, lowest first (docs/ARCHITECTURE.md).  Each sees its
# own headers and those of the folders below it that it uses, never one
# above, so a back-edge does not compile (`make layering` checks that).
# include/ (the ABI and the public API) is below them all; runtime/ sees
# include/ alone.
INC_base    := -Icompiler/base
INC_ir      := -Icompiler/ir $(INC_base)
INC_front   := -Icompiler $(INC_ir)
INC_kernels := -Ikernels $(INC_ir)
INC_ptx     := -Iptx -Ikernels $(INC_base)
INC_off     := -Icompiler/off -Iptx -Ikernels $(INC_ir)
INC_driver  := -Icompiler/driver $(INC_off) -Icompiler
LAYERS      := base=compiler/base ir=compiler/ir front=compiler kernels=kernels ptx=ptx \
               off=compiler/off driver=compiler/driver
layer_args = 'runtime|runtime|' $(foreach l,$(LAYERS),'$(word 1,$(subst =, ,$(l)))|$(word 2,$(subst =, ,$(l)))|$(INC_$(word 1,$(subst =, ,$(l))))')
layering:
	@CC='$(CC)' LLVM_INC='$(LLVM_INC)' bash tests/layering/run.sh $(layer_args)
$(B)/obj/compiler/base/%.o:   CFLAGS_EXTRA = $(INC_base)
$(B)/obj/compiler/ir/%.o:     CFLAGS_EXTRA = $(LLVM_INC) $(INC_ir)
$(B)/obj/compiler/%.o:        CFLAGS_EXTRA = $(LLVM_INC) $(INC_front)
$(B)/obj/kernels/%.o:         CFLAGS_EXTRA = $(LLVM_INC) $(INC_kernels)
$(B)/obj/ptx/%.o:             CFLAGS_EXTRA = $(LLVM_INC) $(INC_ptx)
$(B)/obj/compiler/off/%.o:    CFLAGS_EXTRA = $(LLVM_INC) $(INC_off)
$(B)/obj/compiler/driver/%.o: CFLAGS_EXTRA = $(LLVM_INC) $(INC_driver)
$(B)/obj/tests/spec/%.o:      CFLAGS_EXTRA = $(LLVM_INC) $(INC_driver)
# libtwasm-rt exports only what include/ declares (twasm_*): the rest is
# hidden (rebuilt when these flags change).
$(B)/obj/runtime/%.o:         CFLAGS_EXTRA = -fvisibility=hidden
$(RUNTIME_OBJ): Makefile
$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(CFLAGS_EXTRA) -c $< -o $@

$(LIBC): $(COMPILER_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBRT): $(RUNTIME_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# What a program linking libtwasm-rt needs besides it: libzstd inflates the
# compressed PTX (runtime/rt_ptx.c).  twasmc's link (drv_tools.c) and
# twasm-rt.pc name the same (tests/install checks that they agree).
RT_LIBS := -lzstd -ldl -lm -lpthread

$(LIBRT_SO): $(RUNTIME_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^ $(RT_LIBS)

$(TWASMC): $(CLI_OBJ) $(LIBC) $(LIBRT)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(CLI_OBJ) $(LIBC) $(LIBRT) $(LLVM_LIBS) $(RT_LIBS)

# The spec runner loads compiled modules with dlopen: it exports the
# runtime's symbols to them (-rdynamic, whole archive).
$(SPECRUN): $(SPEC_OBJ) $(LIBC) $(LIBRT)
	@mkdir -p $(dir $@)
	$(CC) -rdynamic -o $@ $(SPEC_OBJ) $(LIBC) -Wl,--whole-archive $(LIBRT) -Wl,--no-whole-archive $(LLVM_LIBS) $(RT_LIBS)

# unit_ir.c: what the tests reading twasmc's IR share.
UNIT_LIB_OBJ := $(B)/obj/tests/unit/unit_ir.o $(B)/obj/tests/unit/unit_sh.o $(B)/obj/tests/unit/unit_fake.o
$(B)/tests/%: $(B)/obj/tests/unit/%.o $(UNIT_LIB_OBJ) $(LIBC) $(LIBRT)
	@mkdir -p $(dir $@)
	$(CC) -rdynamic -o $@ $< $(UNIT_LIB_OBJ) $(LIBC) -Wl,--whole-archive $(LIBRT) -Wl,--no-whole-archive $(LLVM_LIBS) $(CHECK_LIBS) $(RT_LIBS)
$(B)/obj/tests/unit/%.o: CFLAGS_EXTRA = $(LLVM_INC) $(INC_driver) -Iruntime
# test_ptx_mv_ws: the matrix-vector kernel's warp-specialised variant,
# ptx_matvec.c built with its macros and linked ahead of libtwasmc's copy.
MV_WS_OBJ := $(B)/obj/tests/unit/ptx_matvec_ws.o
$(MV_WS_OBJ): ptx/ptx_matvec.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude $(INC_ptx) $(LLVM_INC) -DPTX_MV_WS=2 -DPTX_MV_FIRST=64 \
	  -DPTX_MV_PDL=1 -c $< -o $@
$(B)/tests/test_ptx_mv_ws: $(B)/obj/tests/unit/test_ptx_mv_ws.o $(B)/obj/tests/unit/unit_mv.o $(MV_WS_OBJ) $(UNIT_LIB_OBJ) $(LIBC) $(LIBRT)
	@mkdir -p $(dir $@)
	$(CC) -rdynamic -o $@ $< $(B)/obj/tests/unit/unit_mv.o $(MV_WS_OBJ) $(UNIT_LIB_OBJ) $(LIBC) -Wl,--whole-archive $(LIBRT) -Wl,--no-whole-archive $(LLVM_LIBS) $(CHECK_LIBS) $(RT_LIBS)
# test_ptx_mv_pdl: the committed body with PTX_MV_PDL alone (16-16384-4-pdl).
MV_PDL_OBJ := $(B)/obj/tests/unit/ptx_matvec_pdl.o
$(MV_PDL_OBJ): ptx/ptx_matvec.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude $(INC_ptx) $(LLVM_INC) -DPTX_MV_PDL=1 -c $< -o $@
$(B)/tests/test_ptx_mv_pdl: $(B)/obj/tests/unit/test_ptx_mv_pdl.o $(B)/obj/tests/unit/unit_mv.o $(MV_PDL_OBJ) $(UNIT_LIB_OBJ) $(LIBC) $(LIBRT)
	@mkdir -p $(dir $@)
	$(CC) -rdynamic -o $@ $< $(B)/obj/tests/unit/unit_mv.o $(MV_PDL_OBJ) $(UNIT_LIB_OBJ) $(LIBC) -Wl,--whole-archive $(LIBRT) -Wl,--no-whole-archive $(LLVM_LIBS) $(CHECK_LIBS) $(RT_LIBS)
# test_ptx_mv_chain: round 12's products ahead, spread sums and v rotated
# (16-16384-4-pdl-m2-sp4-r).
MV_CHAIN_OBJ := $(B)/obj/tests/unit/ptx_matvec_chain.o
$(MV_CHAIN_OBJ): ptx/ptx_matvec.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude $(INC_ptx) $(LLVM_INC) -DPTX_MV_PDL=1 -DPTX_MV_MULS=2 \
	  -DPTX_MV_SPREAD=4 -DPTX_MV_VROT=1 -c $< -o $@
$(B)/tests/test_ptx_mv_chain: $(B)/obj/tests/unit/test_ptx_mv_chain.o $(B)/obj/tests/unit/unit_mv.o $(MV_CHAIN_OBJ) $(UNIT_LIB_OBJ) $(LIBC) $(LIBRT)
	@mkdir -p $(dir $@)
	$(CC) -rdynamic -o $@ $< $(B)/obj/tests/unit/unit_mv.o $(MV_CHAIN_OBJ) $(UNIT_LIB_OBJ) $(LIBC) -Wl,--whole-archive $(LIBRT) -Wl,--no-whole-archive $(LLVM_LIBS) $(CHECK_LIBS) $(RT_LIBS)

# ---- tests --------------------------------------------------------------
# The test groups run one after another (install-test runs make itself).
check: all
	$(MAKE) --no-print-directory layering
	$(MAKE) --no-print-directory unit
	$(MAKE) --no-print-directory programs
	$(MAKE) --no-print-directory examples-check
	$(MAKE) --no-print-directory install-test
	$(MAKE) --no-print-directory spec-both
	$(MAKE) --no-print-directory wasi-testsuite

# A stand-in libcuda.so.1 (tests/fake_cuda): driver states without a GPU.
FAKE_CUDA := $(B)/tests/fake-cuda/libcuda.so.1
$(FAKE_CUDA): tests/fake_cuda/fake_cuda.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -shared -Wl,-soname,libcuda.so.1 -o $@ $<

unit: $(UNIT_BIN) $(TWASMC) $(FAKE_CUDA)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; TWASMC=$(TWASMC) FAKE_CUDA_DIR=$(dir $(FAKE_CUDA)) $$t; done

programs: $(TWASMC) $(LIBRT)
	TWASMC=$(TWASMC) bash tests/programs/run.sh

install-test: all
	bash tests/install/run.sh

# The suites are not part of the repository (README: where they come from);
# without them the steps say so and pass.
SPEC_FILES = $(wildcard $(SPEC_DIR)/*.wast)
# twasmc's own .wast files: code paths the spec suite does not pin down
# (relaxed SIMD's chosen results, sealed tables, exact traps).
OWN_WAST = $(wildcard tests/wast/*.wast)
spec: $(SPECRUN)
ifeq ($(wildcard $(SPEC_DIR)/*.wast),)
	@echo "spec: skipped: no SPEC_DIR ($(SPEC_DIR)): the .wast files of WebAssembly/spec test/core"
else
	@echo "spec: $(words $(SPEC_FILES)) files of $(SPEC_DIR), bounds checks: $(SPEC_BOUNDS)"
	@$(SPECRUN) --jobs=$(SPEC_JOBS) --bounds-checks=$(SPEC_BOUNDS) $(SPEC_FILES)
endif
	@echo "spec: $(words $(OWN_WAST)) files of tests/wast, bounds checks: $(SPEC_BOUNDS)"
	@$(SPECRUN) --jobs=$(SPEC_JOBS) --bounds-checks=$(SPEC_BOUNDS) $(OWN_WAST)

spec-both: $(SPECRUN)
	@$(MAKE) --no-print-directory spec SPEC_BOUNDS=guard
	@$(MAKE) --no-print-directory spec SPEC_BOUNDS=explicit
	@$(MAKE) --no-print-directory spec-traps

# Our own .wast files (tests/spec/traps: traps exact in every mode and at
# every optimisation level), each bounds-check mode at -O0..-O3; then each
# out-of-bounds assert_trap as an executable: the offset it reports at
# -O0..-O3 is the faulting access's (offsets.sh).
TRAPS_FILES = $(wildcard tests/spec/traps/*.wast)
spec-traps: $(SPECRUN) $(TWASMC) $(LIBRT)
	@set -e; for m in guard explicit; do for o in 0 1 2 3; do \
	  printf 'traps %s -O%s: ' $$m $$o; \
	  $(SPECRUN) --jobs=$(SPEC_JOBS) --bounds-checks=$$m -O $$o $(TRAPS_FILES); done; done
	@TWASMC=$(TWASMC) bash tests/spec/traps/offsets.sh $(TRAPS_FILES)

# The WASI preview-1 suite (WebAssembly/wasi-testsuite): tests/wasi/run.sh
# compiles each test module with twasmc and checks it as the suite's
# doc/specification.md says.
WASI_JSON := $(B)/tests/wasi/wasi_json
$(WASI_JSON): tests/wasi/wasi_json.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $<
wasi-testsuite: $(TWASMC) $(LIBRT) $(WASI_JSON)
	@if [ -d $(WASI_SUITE)/tests ]; then \
	  TWASMC=$(TWASMC) WASI_JSON=$(WASI_JSON) WASI_FLAGS="$(WASI_FLAGS)" bash tests/wasi/run.sh $(WASI_SUITE); \
	  else echo "wasi-testsuite: skipped: no $(WASI_SUITE) (WebAssembly/wasi-testsuite, prod/testsuite-base, see README)"; fi

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# ---- examples -------------------------------------------------------------
WASI_CC := clang-19 --target=wasm32-wasi --sysroot=/usr -O2
EXAMPLES := $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))
.SECONDARY:
examples: $(EXAMPLES)
$(B)/examples/%.wasm: examples/%.c
	@mkdir -p $(dir $@)
	$(WASI_CC) $< -o $@ -lm
$(B)/examples/%: $(B)/examples/%.wasm $(TWASMC) $(LIBRT)
	$(TWASMC) $< -o $@
run-example: $(B)/examples/hello
	$(B)/examples/hello world

# Each example's output (args from NAME.args, stdin from NAME.input) must
# match NAME.expected.
examples-check: $(EXAMPLES)
	@set -e; for exe in $(EXAMPLES); do n=$$(basename $$exe); \
	  args=$$(cat examples/$$n.args 2>/dev/null || true); \
	  in=examples/$$n.input; [ -f $$in ] || in=/dev/null; \
	  $$exe $$args < $$in | diff -u examples/$$n.expected - >/dev/null \
	    || { echo "examples: FAIL $$n"; exit 1; }; done; \
	  echo "examples: $(words $(EXAMPLES)) passed, 0 failed"

# ---- benchmarks (figures, not tests) ------------------------------------------
bench: $(TWASMC) $(LIBRT) gpu-bench-apps gpu-apps
	TWASMC=$(TWASMC) bash tests/bench/cpu.sh
	@if command -v perf >/dev/null 2>&1; then TWASMC=$(TWASMC) bash tests/bench/bounds.sh; \
	  else echo "bench: bounds-check modes skipped: perf (linux-perf) not installed (tests/bench/bounds.sh)"; fi
	@if command -v nvidia-smi >/dev/null 2>&1; then bash tests/bench/gpu.sh $(B)/gpu/bench; \
	  bash tests/bench/start.sh $(B)/gpu/start; bash tests/bench/auto_cpu.sh $(B)/gpu/bin; \
	  else echo "bench: GPU benchmarks skipped: no nvidia-smi here (run tests/bench/gpu.sh $(B)/gpu/bench, tests/bench/start.sh $(B)/gpu/start and tests/bench/auto_cpu.sh $(B)/gpu/bin on a GPU machine)"; fi

# ---- install ----------------------------------------------------------------
# LIBDIR may lie anywhere (lib64, lib/x86_64-linux-gnu): the installed
# twasmc finds the runtime through share/twasm/libdir (its path relative
# to bin/), and the .pc file names it.  Install records the folders it
# creates in share/twasm/installed-dirs; uninstall removes those that are
# empty then, and nothing else.
LIBDIR ?= $(PREFIX)/lib
BINDIR := $(PREFIX)/bin
PC_LIBDIR = $(if $(filter $(PREFIX)/%,$(LIBDIR)),$${prefix}/$(patsubst $(PREFIX)/%,%,$(LIBDIR)),$(LIBDIR))
INSTALL_DIRS = $(BINDIR) $(LIBDIR)/pkgconfig $(PREFIX)/include $(PREFIX)/share/man/man1 \
  $(PREFIX)/share/man/man3 $(PREFIX)/share/twasm
INSTALLED_DIRS = $(PREFIX)/share/twasm/installed-dirs
$(B)/twasm-rt.pc:
	@mkdir -p $(dir $@)
	printf 'prefix=%s\nlibdir=%s\nincludedir=$${prefix}/include\n\nName: twasm-rt\nDescription: runtime for modules compiled by twasmc\nVersion: 0.1.0\nLibs: -L$${libdir} -l:libtwasm-rt.a %s\nCflags: -I$${includedir}\n' '$(PREFIX)' '$(PC_LIBDIR)' '$(RT_LIBS)' > $@
.PHONY: $(B)/twasm-rt.pc

install: all $(B)/twasm-rt.pc
	@set -e; $(if $(DESTDIR),mkdir -p "$(DESTDIR)";) for d in $(INSTALL_DIRS); do \
	  new=; p=$$d; while [ "$$p" != / ] && [ ! -d "$(DESTDIR)$$p" ]; do new="$$p $$new"; p=$$(dirname "$$p"); done; \
	  for n in $$new; do mkdir "$(DESTDIR)$$n"; made="$$made$$n\n"; done; done; \
	  printf '%b' "$$made" >> $(DESTDIR)$(INSTALLED_DIRS)
	install -m 755 $(TWASMC) $(DESTDIR)$(BINDIR)/twasmc
	install -m 644 $(LIBRT) $(LIBRT_SO) $(DESTDIR)$(LIBDIR)/
	install -m 644 include/twasm.h include/twasm_wasi.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(B)/twasm-rt.pc $(DESTDIR)$(LIBDIR)/pkgconfig/twasm-rt.pc
	install -m 644 man/twasmc.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/twasm-rt.3 $(DESTDIR)$(PREFIX)/share/man/man3/
	realpath -m --relative-to=$(BINDIR) $(LIBDIR) > $(DESTDIR)$(PREFIX)/share/twasm/libdir

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/twasmc $(DESTDIR)$(LIBDIR)/libtwasm-rt.a $(DESTDIR)$(LIBDIR)/libtwasm-rt.so \
	  $(DESTDIR)$(LIBDIR)/pkgconfig/twasm-rt.pc $(DESTDIR)$(PREFIX)/share/man/man1/twasmc.1 \
	  $(DESTDIR)$(PREFIX)/share/man/man3/twasm-rt.3 $(DESTDIR)$(PREFIX)/share/twasm/libdir
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/include/,$(notdir $(wildcard include/twasm*.h)))
	@if [ -f $(DESTDIR)$(INSTALLED_DIRS) ]; then \
	  dirs=$$(sort -u $(DESTDIR)$(INSTALLED_DIRS) | awk '{ print length, $$0 }' | sort -rn | cut -d' ' -f2-); \
	  rm -f $(DESTDIR)$(INSTALLED_DIRS); \
	  for d in $$dirs; do rmdir "$(DESTDIR)$$d" 2>/dev/null || true; done; fi

# ---- fuzzing (clang-19 libFuzzer over decode + validate) ------------------
FUZZ_SRC := $(wildcard compiler/dec_*.c compiler/val_*.c) compiler/wasm_simd.c compiler/base/arena.c compiler/base/diag.c
FUZZ_SECONDS ?= 600
$(B)/bin/fuzz_decode: tests/fuzz/fuzz_decode.c $(FUZZ_SRC)
	@mkdir -p $(dir $@)
	clang-19 -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude $(INC_front) $^ -o $@
fuzz: $(B)/bin/fuzz_decode
	@mkdir -p $(B)/fuzz-corpus
	$(B)/bin/fuzz_decode -max_total_time=$(FUZZ_SECONDS) -max_len=4096 $(B)/fuzz-corpus tests/fuzz/corpus

# ---- differential fuzzing against V8 (tests/fuzz/diff) -----------------------
# binaryen -ttf modules run in node and through twasmc at -O0/-O2 in both
# bounds-check modes; N modules, JOBS at a time, FUZZ_SIMD=1 for SIMD;
# selftest.sh checks the comparison and the NaN rewriting first.
N ?= 1000
FUZZ_JOBS ?= 2
FUZZ_DIFF := $(B)/bin/twasm-fuzz-diff
# built by make check too, so that a change of the API it uses cannot leave it broken unnoticed
check: $(FUZZ_DIFF)
$(FUZZ_DIFF): $(B)/obj/tests/fuzz/diff/fd_main.o $(LIBC) $(LIBRT)
	@mkdir -p $(dir $@)
	$(CC) -rdynamic -o $@ $< $(LIBC) -Wl,--whole-archive $(LIBRT) -Wl,--no-whole-archive $(LLVM_LIBS) $(RT_LIBS)
$(B)/obj/tests/fuzz/diff/%.o: CFLAGS_EXTRA = $(LLVM_INC) $(INC_driver)
fuzz-diff: $(FUZZ_DIFF) $(LIBRT)
	TWASM_FUZZ_DIFF=$(FUZZ_DIFF) bash tests/fuzz/diff/selftest.sh
	TWASM_FUZZ_DIFF=$(FUZZ_DIFF) bash tests/fuzz/diff/run.sh $(N) $(FUZZ_JOBS)

# ---- GPU test apps (tests/gpu/e2e, tests/bench/gpu) ------------------------
# C -> Wasm -> twasmc executables for the lent GPU machine; CUDA is not
# needed to build them.  Compiled with -O2 and linked without -O (which
# would run wasm-opt where it is installed and drop the name section the
# offload report names functions by).  A source's `/* twasmc-flags: ... */`
# line adds twasmc options.  Each build writes its offload report beside
# the executable's folder: build/gpu/report/NAME.txt.
GPU_WASI_CC     := clang-19 --target=wasm32-wasi --sysroot=/usr
GPU_APPS_CFLAGS ?= -O2 -fno-unroll-loops
GPU_APPS_LDFLAGS := -Wl,--max-memory=4294967296 -Wl,-z,stack-size=1048576 -lm
GPU_E2E_BIN     := $(patsubst tests/gpu/e2e/%.c,$(B)/gpu/bin/%,$(wildcard tests/gpu/e2e/*.c))
GPU_BENCH_BIN   := $(patsubst tests/bench/gpu/%.c,$(B)/gpu/bench/%,$(wildcard tests/bench/gpu/*.c))
gpu_twasmc_flags = $$(sed -n 's|.*/\* twasmc-flags: \(.*[^ ]\) *\*/.*|\1|p' $(1))
# `/* clang-flags: ... */` replaces GPU_APPS_CFLAGS for one source (programs
# built the way users build, plain -O2 or -O3); `/* clang-link-flags: ... */`
# adds to its link (-O2 there runs wasm-opt, where installed).
gpu_clang_flags = $$(f=$$(sed -n 's|.*/\* clang-flags: \(.*[^ ]\) *\*/.*|\1|p' $(1)); echo "$${f:-$(GPU_APPS_CFLAGS)}")
gpu_link_flags = $$(sed -n 's|.*/\* clang-link-flags: \(.*[^ ]\) *\*/.*|\1|p' $(1))

# The tensor-core kernel harness (tests/gpu/wmma): its PTX is generated
# here (LLVM), the GPU machine runs it next to cuBLAS (gpu.sh).
GPU_TC_DIR      := $(B)/gpu/bench/tc
GPU_TC_BIN      := $(GPU_TC_DIR)/wmma_mm $(GPU_TC_DIR)/ptx/.stamp
GPU_MV_DIR      := $(B)/gpu/bench/matvec
GPU_MV_BIN      := $(GPU_MV_DIR)/ptx/.stamp

.PHONY: gpu-apps gpu-bench-apps gpu-e2e gpu-start-apps
gpu-apps: $(GPU_E2E_BIN)
gpu-bench-apps: $(GPU_BENCH_BIN) $(GPU_TC_BIN) $(GPU_MV_BIN) gpu-start-apps

# Start-up cost of programs that never launch (tests/bench/start.sh): each
# built with and without offload; midstart (tests/gpu/start_exit.sh) exits
# while the GPU starts in the background.
GPU_START_BIN   := $(foreach p,startup hello,$(B)/gpu/start/$(p) $(B)/gpu/start/$(p).no-offload) \
                   $(B)/gpu/start/midstart
gpu-start-apps: $(GPU_START_BIN)
$(B)/gpu/obj/start/startup.o: tests/bench/start/startup.c
$(B)/gpu/obj/start/hello.o: examples/hello.c
$(B)/gpu/obj/start/midstart.o: tests/bench/start/midstart.c
$(B)/gpu/obj/start/%.o:
	@mkdir -p $(dir $@)
	$(GPU_WASI_CC) $(GPU_APPS_CFLAGS) -MMD -MP -c $< -o $@
$(B)/gpu/start/%.no-offload: $(B)/gpu/wasm/start/%.wasm $(TWASMC) $(LIBRT)
	@mkdir -p $(dir $@)
	$(TWASMC) --no-offload $< -o $@
$(B)/gpu/start/%: $(B)/gpu/wasm/start/%.wasm $(TWASMC) $(LIBRT)
	@mkdir -p $(dir $@)
	$(TWASMC) $< -o $@

$(GPU_TC_DIR)/wmma_gen: tests/gpu/wmma/wmma_gen.c $(LIBC)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude $(INC_ptx) $< $(LIBC) $(LLVM_LIBS) -o $@
$(GPU_TC_DIR)/ptx/.stamp: $(GPU_TC_DIR)/wmma_gen
	@mkdir -p $(dir $@)
	$< $(dir $@) >/dev/null && touch $@
$(GPU_TC_DIR)/wmma_mm: tests/gpu/wmma/wmma_mm.c $(wildcard runtime/cu_*.c) runtime/rt_tc.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude -Iruntime tests/gpu/wmma/wmma_mm.c $(wildcard runtime/cu_*.c) \
	  runtime/rt_tc.c -ldl -lpthread -lm -o $@

# The matrix-vector harness (tests/gpu/matvec): its PTX, generated here;
# gpu.sh builds matvec_bw.cu with nvcc on the GPU machine.
$(GPU_MV_DIR)/matvec_gen: tests/gpu/matvec/matvec_gen.c $(LIBC)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude $(INC_ptx) $< $(LIBC) $(LLVM_LIBS) -o $@
$(GPU_MV_DIR)/ptx/.stamp: $(GPU_MV_DIR)/matvec_gen
	@mkdir -p $(dir $@)
	$< $(dir $@) >/dev/null && touch $@

# Variants of the matrix-vector kernel for measurement (`make
# gpu-mv-variants`): ROWS-TILE-AHEAD[-DEPTH] each (ptx_matvec.c's PTX_MV_*), the
# PTX into $(GPU_MV_DIR)/variants/NAME/, timed there by `matvec_bw DIR
# --rows ROWS` (tests/gpu/matvec/variants.sh).
MV_VARIANTS ?= 16-16384-4 16-16384-4-2 16-8192-4-2 8-8192-4-2 8-16384-4-2 8-8192-4
.PHONY: gpu-mv-variants
gpu-mv-variants: $(foreach v,$(MV_VARIANTS),$(GPU_MV_DIR)/variants/$(v)/.stamp)
# After the three numbers, any of: a DEPTH (1 or 2), wsN (the
# warp-specialised body with a ring of N buffers, PTX_MV_WS), fN (its
# first chunk N terms a row, PTX_MV_FIRST), pdl (programmatic dependent
# launch on sm_90, PTX_MV_PDL), mN (the products of N vectors formed
# before their adds, PTX_MV_MULS), spN (the outputs summed by N warps,
# PTX_MV_SPREAD), r (v rotated by one in each 16-byte group, PTX_MV_VROT);
# e.g. 16-16384-4-ws2-f64, 16-16384-4-pdl-m2-sp4.  Each variant's
# sm_80 PTX goes into NAME/sm80 (assembled by ptxas in `make
# gpu-mv-round`, not loaded by matvec_bw).
$(GPU_MV_DIR)/variants/%/.stamp: tests/gpu/matvec/matvec_gen.c ptx/ptx_matvec.c $(LIBC)
	@mkdir -p $(dir $@)sm80
	v=$*; set -- $$(echo $$v | tr - ' '); r=$$1 t=$$2 a=$$3; shift 3; d=1 x=""; \
	for w; do case $$w in ws*) x="$$x -DPTX_MV_WS=$${w#ws}";; f*) x="$$x -DPTX_MV_FIRST=$${w#f}";; \
	  pdl) x="$$x -DPTX_MV_PDL=1";; m*) x="$$x -DPTX_MV_MULS=$${w#m}";; sp*) x="$$x -DPTX_MV_SPREAD=$${w#sp}";; \
	  r) x="$$x -DPTX_MV_VROT=1";; \
	  *) d=$$w;; esac; done; \
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude $(INC_ptx) $(LLVM_INC) -DPTX_MV_ROWS=$$r -DPTX_MV_TILE=$$t \
	  -DPTX_MV_AHEAD=$$a -DPTX_MV_DEPTH=$$d $$x tests/gpu/matvec/matvec_gen.c ptx/ptx_matvec.c $(LIBC) $(LLVM_LIBS) -o $(dir $@)gen && \
	$(dir $@)gen $(dir $@) >/dev/null && $(dir $@)gen $(dir $@)sm80 80 >/dev/null && rm -f $(dir $@)gen && touch $@

# Matrix-vector round 10 (docs/PERFORMANCE.md): the committed kernel's PTX
# and the variants of MV_ROUND in $(GPU_MV_ROUND_DIR) (ptx/, variants/NAME/),
# every PTX assembled by ptxas for sm_90 (and a variant's sm80/ for sm_80)
# where ptxas is here; carried to the GPU machine and run there by
# `bash tests/gpu/matvec/round.sh $(GPU_MV_ROUND_DIR) LOGS`.
GPU_MV_ROUND_DIR := $(B)/gpu/mv-round
PTXAS ?= /usr/local/cuda/bin/ptxas
MV_ROUND ?= 16-16384-4-ws2 16-12288-4-ws3 16-8192-4-ws4 32-16384-4-ws2 16-16384-4-ws2-f64 16-12288-4-ws3-f64 \
  16-8192-4-ws4-f32 16-16384-4-ws2-f64-pdl
.PHONY: gpu-mv-round
gpu-mv-round: $(GPU_MV_BIN) $(foreach v,$(MV_ROUND),$(GPU_MV_DIR)/variants/$(v)/.stamp)
	rm -rf $(GPU_MV_ROUND_DIR) && mkdir -p $(GPU_MV_ROUND_DIR)/variants
	cp -r $(GPU_MV_DIR)/ptx $(GPU_MV_ROUND_DIR)/
	for v in $(MV_ROUND); do cp -r $(GPU_MV_DIR)/variants/$$v $(GPU_MV_ROUND_DIR)/variants/ || exit 1; done
	@if [ -x $(PTXAS) ]; then \
	  for f in $$(find $(GPU_MV_ROUND_DIR) -name '*.ptx'); do \
	    case $$f in */sm80/*) sm=sm_80;; *) sm=sm_90;; esac; \
	    $(PTXAS) -arch=$$sm $$f -o /dev/null || { echo "ptxas $$sm: $$f failed"; exit 1; }; \
	  done; echo "ptxas: every PTX of $(GPU_MV_ROUND_DIR) assembles"; \
	else echo "ptxas: not at $(PTXAS), PTX not assembled"; fi

# Matrix-vector round 11 (docs/PERFORMANCE.md): the committed kernel and
# its body with PTX_MV_PDL in $(B)/gpu/mv-round2, assembled as above; run
# there by `bash tests/gpu/matvec/round2.sh build/gpu/mv-round2 LOGS`.
MV_ROUND2 ?= 16-16384-4-pdl
.PHONY: gpu-mv-round2
gpu-mv-round2:
	$(MAKE) --no-print-directory gpu-mv-round MV_ROUND="$(MV_ROUND2)" GPU_MV_ROUND_DIR=$(B)/gpu/mv-round2

# Matrix-vector round 12 (docs/PERFORMANCE.md): the committed kernel and
# the chain variants (v rotated, r; products ahead, mN; sums spread over
# warps, spN) on
# the pdl body in $(B)/gpu/mv-round3, assembled as above; run there by
# `bash tests/gpu/matvec/round3.sh build/gpu/mv-round3 LOGS` (SASS, then
# --graph --pdl and stream timings).
# Where ptxas, python3 and readelf are here, sass-ctl.txt: each kernel's
# summing block as tests/gpu/matvec/sass_ctl.py reads it from its cubin.
MV_ROUND3 ?= 16-16384-4-pdl 16-16384-4-pdl-r 16-16384-4-pdl-m2 16-16384-4-pdl-sp2 16-16384-4-pdl-sp4 \
  16-16384-4-pdl-r-sp4 16-16384-4-2-pdl 16-16384-4-2-pdl-r 16-16384-4-pdl-m2-sp4-r
.PHONY: gpu-mv-round3
gpu-mv-round3:
	$(MAKE) --no-print-directory gpu-mv-round MV_ROUND="$(MV_ROUND3)" GPU_MV_ROUND_DIR=$(B)/gpu/mv-round3
	@d=$(B)/gpu/mv-round3; if [ -x $(PTXAS) ] && command -v python3 >/dev/null && command -v readelf >/dev/null; then \
	  for p in $$d/ptx/mv_f32.ptx $$d/variants/*/mv_f32.ptx; do \
	    n=$$(basename $$(dirname $$p)); [ $$n = ptx ] && n=committed; \
	    $(PTXAS) -arch=sm_90 -v $$p -o $$d/$$n.cubin 2>&1 | grep -o 'Used [0-9]* registers' | sed "s/^/$$n: /"; \
	    python3 tests/gpu/matvec/sass_ctl.py $$d/$$n.cubin mv_f32 && rm -f $$d/$$n.cubin || exit 1; \
	  done >$$d/sass-ctl.txt; cat $$d/sass-ctl.txt; fi

# Matrix-vector round 13 (docs/PERFORMANCE.md): the committed mv_f32's
# whole chunk summed in a loop of its own, from shared memory filled once
# (no staging, no barrier), and register-only add and multiply chains:
# tests/gpu/matvec/chain_gen.py writes them into $(B)/gpu/mv-round4/chain.ptx
# from the committed PTX (also there, ptx/); assembled by ptxas for sm_90
# and read by sass_ctl.py (sass-ctl.txt) where those are here.  Carried to
# the GPU machine and run there by `bash tests/gpu/matvec/round4.sh
# build/gpu/mv-round4 LOGS` (chain_bw.cu).
GPU_MV_ROUND4_DIR := $(B)/gpu/mv-round4
.PHONY: gpu-mv-round4
gpu-mv-round4: $(GPU_MV_BIN)
	rm -rf $(GPU_MV_ROUND4_DIR) && mkdir -p $(GPU_MV_ROUND4_DIR)
	cp -r $(GPU_MV_DIR)/ptx $(GPU_MV_ROUND4_DIR)/
	python3 tests/gpu/matvec/chain_gen.py $(GPU_MV_ROUND4_DIR)/ptx/mv_f32.ptx $(GPU_MV_ROUND4_DIR)/chain.ptx
	@d=$(GPU_MV_ROUND4_DIR); if [ -x $(PTXAS) ]; then \
	  $(PTXAS) -arch=sm_90 $$d/chain.ptx -o $$d/chain.cubin || { echo "ptxas sm_90: $$d/chain.ptx failed"; exit 1; }; \
	  if command -v readelf >/dev/null; then \
	    $(PTXAS) -arch=sm_90 $$d/ptx/mv_f32.ptx -o $$d/mv_f32.cubin || exit 1; \
	    { python3 tests/gpu/matvec/sass_ctl.py $$d/mv_f32.cubin mv_f32 | sed 's/^/committed /'; \
	      for k in chain_f32 chain_f32_st chain_fadd chain_fmuladd chain_muladd; do \
	        python3 tests/gpu/matvec/sass_ctl.py $$d/chain.cubin $$k || exit 1; done; } >$$d/sass-ctl.txt; \
	    cat $$d/sass-ctl.txt; fi; \
	  rm -f $$d/*.cubin; \
	else echo "ptxas: not at $(PTXAS), chain.ptx not assembled"; fi

# Matrix-vector round 14 (docs/PERFORMANCE.md): round 13's chain.ptx plus
# chunk variants with W and/or v in registers loaded ahead of the chain
# (tests/gpu/matvec/chain_pipe.py, each checked on the CPU before it is
# written), into $(B)/gpu/mv-round5; ptxas -v for sm_90 (registers,
# spills) and sass_ctl.py (sass-ctl.txt) where those are here.  Carried to
# the GPU machine and run there by `bash tests/gpu/matvec/round5.sh
# build/gpu/mv-round5 LOGS`.
GPU_MV_ROUND5_DIR := $(B)/gpu/mv-round5
MV_ROUND5_KERNELS := chain_f32 chain_f32_st chain_f32_w chain_f32_wg chain_f32_wg4 chain_f32_v chain_f32_wv chain_f32_wgv
.PHONY: gpu-mv-round5
gpu-mv-round5: $(GPU_MV_BIN)
	rm -rf $(GPU_MV_ROUND5_DIR) && mkdir -p $(GPU_MV_ROUND5_DIR)
	cp -r $(GPU_MV_DIR)/ptx $(GPU_MV_ROUND5_DIR)/
	python3 tests/gpu/matvec/chain_pipe.py $(GPU_MV_ROUND5_DIR)/ptx/mv_f32.ptx $(GPU_MV_ROUND5_DIR)/chain.ptx
	@d=$(GPU_MV_ROUND5_DIR); if [ -x $(PTXAS) ]; then \
	  $(PTXAS) -arch=sm_90 -v $$d/chain.ptx -o $$d/chain.cubin >$$d/ptxas.txt 2>&1 || { cat $$d/ptxas.txt; echo "ptxas sm_90: $$d/chain.ptx failed"; exit 1; }; \
	  { grep -A3 "Compiling entry function 'chain_f32" $$d/ptxas.txt | grep -o "function '[a-z_0-9]*'\|Used [0-9]* registers\|[0-9]* bytes spill stores" | \
	      paste -d' ' - - - | sed "s/^function /registers /"; \
	    if command -v readelf >/dev/null; then for k in $(MV_ROUND5_KERNELS); do \
	      python3 tests/gpu/matvec/sass_ctl.py $$d/chain.cubin $$k || exit 1; done; fi; } >$$d/sass-ctl.txt; \
	  cat $$d/sass-ctl.txt; rm -f $$d/*.cubin $$d/ptxas.txt; \
	else echo "ptxas: not at $(PTXAS), chain.ptx not assembled"; fi

# The exact-matmul harness (tests/gpu/mm_exact): its PTX, generated here.
GPU_MM_EXACT_GEN := $(B)/gpu/mm_exact/mm_exact_gen
$(GPU_MM_EXACT_GEN): tests/gpu/mm_exact/mm_exact_gen.c $(LIBC)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(CFLAGS) -Iinclude $(INC_ptx) $< $(LIBC) $(LLVM_LIBS) -o $@

# Offload reports and PTX of every GPU corpus against a recorded baseline
# (tests/gpu/ptx_same.sh): `make ptx-baseline` records, `make ptx-same`
# compares, both in PTX_BASELINE.
PTX_BASELINE ?= $(B)/ptx-baseline
.PHONY: ptx-same-tools ptx-baseline ptx-same
ptx-same-tools: $(TWASMC) $(GPU_TC_DIR)/wmma_gen $(GPU_MM_EXACT_GEN)
ptx-baseline: ptx-same-tools
	bash tests/gpu/ptx_same.sh record $(PTX_BASELINE)
ptx-same: ptx-same-tools
	bash tests/gpu/ptx_same.sh check $(PTX_BASELINE)

$(B)/gpu/obj/e2e/%.o: tests/gpu/e2e/%.c
	@mkdir -p $(dir $@)
	$(GPU_WASI_CC) $(call gpu_clang_flags,$<) -MMD -MP -c $< -o $@
$(B)/gpu/obj/bench/%.o: tests/bench/gpu/%.c
	@mkdir -p $(dir $@)
	$(GPU_WASI_CC) $(GPU_APPS_CFLAGS) -MMD -MP -c $< -o $@
$(B)/gpu/wasm/%.wasm: $(B)/gpu/obj/%.o
	@mkdir -p $(dir $@)
	$(GPU_WASI_CC) $< -o $@ $(GPU_APPS_LDFLAGS)
$(B)/gpu/wasm/e2e/%.wasm: $(B)/gpu/obj/e2e/%.o tests/gpu/e2e/%.c
	@mkdir -p $(dir $@)
	$(GPU_WASI_CC) $(call gpu_link_flags,tests/gpu/e2e/$*.c) $< -o $@ $(GPU_APPS_LDFLAGS)
$(B)/gpu/bin/%: $(B)/gpu/wasm/e2e/%.wasm tests/gpu/e2e/%.c $(TWASMC) $(LIBRT)
	@mkdir -p $(dir $@) $(B)/gpu/report
	$(TWASMC) $(call gpu_twasmc_flags,tests/gpu/e2e/$*.c) --offload-report $< -o $@ 2>$(B)/gpu/report/$*.txt \
	  || { cat $(B)/gpu/report/$*.txt; exit 1; }
$(B)/gpu/bench/%: $(B)/gpu/wasm/bench/%.wasm tests/bench/gpu/%.c $(TWASMC) $(LIBRT)
	@mkdir -p $(dir $@) $(B)/gpu/report
	$(TWASMC) $(call gpu_twasmc_flags,tests/bench/gpu/$*.c) --offload-report $< -o $@ 2>$(B)/gpu/report/bench-$*.txt \
	  || { cat $(B)/gpu/report/bench-$*.txt; exit 1; }

# Runs the corpus here: on a machine without a GPU only the cpu half.
gpu-e2e: gpu-apps
	bash tests/gpu/e2e.sh $(B)/gpu/bin $(B)/gpu/logs
