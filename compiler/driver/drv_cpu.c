/* drv_cpu.c: the host target machine, and the x86-64 CPU names `--cpu`
 * accepts (LLVM 19's, as `llc -march=x86-64 -mcpu=help` lists them), so
 * that a misspelt name is a usage error rather than LLVM's warning and a
 * silently generic build. */
#include <pthread.h>
#include <string.h>

#include <llvm-c/Target.h>

#include "drv_internal.h"

static const char *const cpus[] = {
    "alderlake", "amdfam10", "arrowlake", "arrowlake-s", "arrowlake_s", "athlon", "athlon-4",
    "athlon-fx", "athlon-mp", "athlon-tbird", "athlon-xp", "athlon64", "athlon64-sse3", "atom",
    "atom_sse4_2", "atom_sse4_2_movbe", "barcelona", "bdver1", "bdver2", "bdver3", "bdver4",
    "bonnell", "broadwell", "btver1", "btver2", "c3", "c3-2", "cannonlake", "cascadelake",
    "clearwaterforest", "cooperlake", "core-avx-i", "core-avx2", "core2", "core_2_duo_sse4_1",
    "core_2_duo_ssse3", "core_2nd_gen_avx", "core_3rd_gen_avx", "core_4th_gen_avx",
    "core_4th_gen_avx_tsx", "core_5th_gen_avx", "core_5th_gen_avx_tsx", "core_aes_pclmulqdq",
    "core_i7_sse4_2", "corei7", "corei7-avx", "emeraldrapids", "generic", "geode", "goldmont",
    "goldmont-plus", "goldmont_plus", "gracemont", "grandridge", "graniterapids",
    "graniterapids-d", "graniterapids_d", "haswell", "i386", "i486", "i586", "i686",
    "icelake-client", "icelake-server", "icelake_client", "icelake_server", "ivybridge", "k6",
    "k6-2", "k6-3", "k8", "k8-sse3", "knl", "knm", "lakemont", "lunarlake", "meteorlake",
    "mic_avx512", "nehalem", "nocona", "opteron", "opteron-sse3", "pantherlake", "penryn",
    "pentium", "pentium-m", "pentium-mmx", "pentium2", "pentium3", "pentium3m", "pentium4",
    "pentium4m", "pentium_4", "pentium_4_sse3", "pentium_ii", "pentium_iii",
    "pentium_iii_no_xmm_regs", "pentium_m", "pentium_mmx", "pentium_pro", "pentiumpro",
    "prescott", "raptorlake", "rocketlake", "sandybridge", "sapphirerapids", "sierraforest",
    "silvermont", "skx", "skylake", "skylake-avx512", "skylake_avx512", "slm", "tigerlake",
    "tremont", "westmere", "winchip-c6", "winchip2", "x86-64", "x86-64-v2", "x86-64-v3",
    "x86-64-v4", "yonah", "znver1", "znver2", "znver3", "znver4", "znver5",
};

bool drv_cpu_known(const char *name) {
  if (!strcmp(name, "native")) return true;
  for (size_t i = 0; i < sizeof cpus / sizeof cpus[0]; i++)
    if (!strcmp(name, cpus[i])) return true;
  return false;
}

static void init_x86(void) {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  LLVMInitializeX86AsmParser(); /* guard mode's labels are inline asm (bnd_late.c) */
}

LLVMTargetMachineRef drv_host_machine(int opt_level, const char *cpu, bool exe, tw_diag *d) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, init_x86);
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef target;
  char *err = NULL;
  LLVMTargetMachineRef tm = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) {
    tw_fail(d, TW_DIAG_NO_OFFSET, "no LLVM target for %s: %s", triple, err ? err : "");
  } else {
    LLVMCodeGenOptLevel level = opt_level <= 0 ? LLVMCodeGenLevelNone
                                : opt_level == 1 ? LLVMCodeGenLevelLess
                                : opt_level == 2 ? LLVMCodeGenLevelDefault
                                                 : LLVMCodeGenLevelAggressive;
    /* Portable x86-64 by default: the output runs on any x86-64 machine;
     * --cpu picks a CPU (and with native its features) instead. */
    bool native = cpu && !strcmp(cpu, "native");
    char *host_cpu = native ? LLVMGetHostCPUName() : NULL;
    char *features = native ? LLVMGetHostCPUFeatures() : NULL;
    /* An executable is linked non-PIE (drv_link_objects), so its code is
     * static: a switch's jump table holds absolute addresses and its
     * dispatch is one `jmp *table(,%reg,8)`, where PIC needs the table's
     * address, a load of a 32-bit offset and an add (a bytecode loop's
     * br_table pays them per opcode: docs/PERFORMANCE.md, issue 22).
     * Objects (-c) and shared objects (the spec runner) stay PIC. */
    LLVMRelocMode reloc = exe ? LLVMRelocStatic : LLVMRelocPIC;
    tm = LLVMCreateTargetMachine(target, triple, native ? host_cpu : cpu ? cpu : "x86-64",
                                 features ? features : "", level, reloc, LLVMCodeModelDefault);
    LLVMDisposeMessage(host_cpu);
    LLVMDisposeMessage(features);
    if (!tm) tw_fail(d, TW_DIAG_NO_OFFSET, "cannot create an LLVM target machine for %s", triple);
  }
  LLVMDisposeMessage(err);
  LLVMDisposeMessage(triple);
  return tm;
}
