/* test_offload.c: the offload stage end to end on small C loops: the
 * --offload-report lines, --no-offload, --gpu-arch, --extract-ptx (ASCII PTX
 * per arch, no fma, accepted by ptxas when installed) and the kernel table
 * in the module descriptor. */
#include <check.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"
#include "rt_offload.h"
#include "twasm_abi.h"
#include "unit_sh.h"

static char tmpdir[64];

static int run(const char *args, char *out, size_t cap) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s %s", unit_twasmc(), args);
  return unit_sh(cmd, out, cap);
}

/* tests/gpu/detect/NAME.c -> tmpdir/NAME.wasm.  Compiled and linked in two
 * steps: a linking clang -O2 would run wasm-opt, which drops the name
 * section the report takes function names from. */
static void wasm_of(const char *name) {
  char cmd[1024], out[4096];
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 -c tests/gpu/detect/%s.c -o %s/%s.o && "
           "clang-19 --target=wasm32-wasi --sysroot=/usr -nostdlib -Wl,--no-entry -Wl,--export-all "
           "-Wl,--allow-undefined %s/%s.o -o %s/%s.wasm",
           name, tmpdir, name, tmpdir, name, tmpdir, name);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
}

static void setup(void) {
  strcpy(tmpdir, "/tmp/twasm-offXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) {
  char cmd[128], out[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  unit_sh(cmd, out, sizeof out);
}

/* The report of `twasmc -c --offload-report [extra] NAME.wasm`. */
static void report_of(const char *name, const char *extra, char *out, size_t cap) {
  char args[1024];
  wasm_of(name);
  snprintf(args, sizeof args, "-c --offload-report %s %s/%s.wasm -o %s/%s.obj", extra, tmpdir,
           name, tmpdir, name);
  ck_assert_int_eq(run(args, out, cap), 0);
}

static const struct {
  const char *name, *extra, *line;
} report_cases[] = {
    {"saxpy", "", "saxpy.wasm:0x"},
    {"saxpy", "", ": saxpy: offloaded as map"},
    {"saxpy", "", ": offloaded as map (sm_75,sm_80,sm_90); runs on the GPU when"},
    {"dot_i32", "", ": offloaded as reduce (sm_75,sm_80,sm_90); runs on the GPU when"},
    {"matmul_ijk_f32", "",
     ": offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (f32 takes tensor cores only with "
     "--tensor-cores=tf32); runs on the GPU when"},
    {"matmul_ijk_f32", "--tensor-cores=tf32", "; exact kernel (too small for tensor cores"},
    {"matmul_f32_large", "--tensor-cores=tf32",
     "; tensor cores (wmma) on sm_80,sm_90, wgmma on sm_90a (compute capability 9.0: A and B packed "
     "into device scratch, then multiplied in 128x256 tiles fed by bulk copies, for products that "
     "fill those tiles; smaller ones run the wmma body), exact kernel on the others; tf32 tensor cores"},
    {"matmul_f32_large", "", "; exact kernel (f32 takes tensor cores only with --tensor-cores=tf32)"},
    {"matmul_i8", "", "; exact kernel (too small for tensor cores"},
    {"matmul_i8_large", "", "; tensor cores (wmma) on sm_80,sm_90, wgmma on sm_90a (compute "
                            "capability 9.0: A and B packed into device scratch, then multiplied in "
                            "128x256 tiles fed by bulk copies, for products that fill those tiles; "
                            "smaller ones run the wmma body), exact kernel on the others (int8 with "
                            "s32 sums that wrap like Wasm i32: exact)"},
    {"jacobi_n", "", ": jacobi_n: offloaded as map (sm_75,sm_80,sm_90); runs on the GPU when"},
    /* PolyBench's gemm and 2mm in plain C at plain -O2: one product per
     * nest, scaled on the exact kernel, also where tf32 is allowed */
    {"scaled_products", "", ": gemm: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (scaled operands"},
    {"scaled_products", "", ": gemm_beta: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (scaled"},
    {"scaled_products", "", ": gemm_ijk: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (scaled"},
    {"scaled_products", "", ": mm2_first: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (scaled"},
    {"scaled_products", "", ": mm2_second: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (scaled"},
    {"scaled_products", "--tensor-cores=tf32",
     ": gemm: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (scaled operands or start (alpha * A, "
     "beta * C) take the exact kernel, scaled per element as the source does); runs on the GPU when"},
    {"scaled_products", "",
     ": neg_other_scaled: not offloaded: a loop before the product's k loop that is not `C[i][j] *= factor`\n"},
    {"neg_call", "", ": apply: not offloaded: calls a function\n"},
    {"neg_div", "", ": divide: not offloaded: may trap: integer division\n"},
    {"neg_dependence", "", ": recur: not offloaded: loop-carried dependence\n"},
    /* without the flag an exact in-order sum, one GPU thread (ptx_seqsum.c) */
    {"dot_f32", "", ": dot_f32: offloaded as reduce (sm_75,sm_80,sm_90); exact in-order float sum: one GPU thread, "
                    "chosen only when its data is on the GPU; runs on the GPU when"},
    {"dot_f32", "--fp-reassociate",
     ": offloaded as reduce (sm_75,sm_80,sm_90); float reduction made eligible by --fp-reassociate"},
    /* a nest that exists only as its bounds-checked copy still has its
     * line (symm: LLVM kept no fast copy), and the fast copy's line
     * speaks for a checked copy beside it (mvt: one line per nest) */
    {"polybench_suite", "", ": neg_symm: not offloaded: stores to more than one array (2; as one kernel each, part 1: "
                            "not a product (only products are split out)) (the nest exists only as its bounds-checked "
                            "copy)\n"},
    /* syr2k: the whole nest, a triangle with two products per term */
    {"polybench_suite", "", ": syr2k: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (two products summed "
                            "per term (A B^T + B A^T) over a triangle (j <= i)"},
    {"polybench_suite", "", ": neg_syr2k_chain: not offloaded: "},
    /* bicg: one nest, two kernels, launched by one call */
    {"polybench_suite", "", ": bicg: part 1 of 2: offloaded as matmul (sm_75,sm_80,sm_90); exact matrix-vector"},
    {"polybench_suite", "", ": bicg: part 2 of 2: offloaded as matmul (sm_75,sm_80,sm_90); exact matrix-vector"},
    /* gesummv: two products in one j loop, then a map after it */
    {"polybench_suite", "", ": gesummv: part 2 of 3: offloaded as matmul (sm_75,sm_80,sm_90); exact matrix-vector"},
    {"polybench_suite", "", ": gesummv: part 3 of 3: offloaded as map (sm_75,sm_80,sm_90); runs on the GPU when"},
    {"polybench_suite", "", ": neg_symm: not offloaded: the nest exists only as its bounds-checked copy (each "
                            "access checked, trapping at the exact one), which is never offloaded\n"},
    /* covariance's product over its upper triangle, each value mirrored
     * to C[j][i]: one exact product; a mirror elsewhere is no product */
    {"upper_tri", "", ": cov_tri: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (a product over an upper "
                      "triangle (j >= i), each output also stored at its transposed element"},
    {"upper_tri", "", ": neg_mirror_shift: not offloaded: stores to more than one array"},
    /* correlation's: the strict triangle, its mirror and its diagonal */
    {"upper_tri", "", ": corr_tri: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (a product over a strict "
                      "upper triangle (j > i), each output also stored at its transposed element"},
    /* sums combined with an element at the output's index as they are
     * stored (`r[i] = b[i] - sum`): the exact kernel, its reason */
    {"post_elem", "", ": residual: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum combined with an "
                      "element at its own index before its store"},
    {"post_elem", "", ": bias_after: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum combined"},
    {"post_elem", "", ": plus_matrix: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum combined"},
    /* s + b[i] * c: an element added, scaled (kn_mm_blend, issue 19 round 10) */
    {"post_elem", "", ": neg_two_ops: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (an element at each "
                      "sum's own index added"},
    {"post_elem", "", ": neg_two_consts: not offloaded: stores something other than the sum\n"},
    {"post_elem", "", ": conv1d_bias: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum offset by a "
                      "value before its store"},
    /* sums through a ReLU as they are stored (`s > 0 ? s : 0`,
     * kn_mm_act; a leaky ReLU, fmaxf, f32.max): the exact kernel, its reason;
     * a leaky ReLU with a run-time slope no product */
    {"post_relu", "", ": relu_start: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum compared with a "
                      "constant and selected before its store"},
    {"post_relu", "", ": relu_bias: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum compared"},
    {"post_relu", "", ": relu_matrix: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum compared"},
    {"post_relu", "", ": leaky: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum compared with a "
                      "constant and selected before its store, or multiplied by a constant (`y[i] = s > 0 ? s : "
                      "0.01f * s`, a leaky ReLU)"},
    {"post_relu", "", ": fmax_lib: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum compared"},
    {"post_relu", "", ": wasm_max: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum compared with a "
                      "constant and selected before its store (Wasm's `f32.max(s, k)`, `f32.min`: a NaN sum stores s + "
                      "k)"},
    {"post_relu", "", ": fmin_cap: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum compared"},
    {"post_relu", "", ": neg_leaky_var: not offloaded: stores something other than the sum\n"},
    /* sums clamped as they are stored (two compares and selects in a
     * row: kn_mm_act then act2): the exact kernel, its reason; a bound
     * that is a run-time value, crossed bounds: no product */
    {"post_clamp", "", ": relu6_lib: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum compared with a "
                       "constant and selected twice before its store (`fminf(fmaxf(s, 0), 6)`, a ReLU6"},
    {"post_clamp", "", ": relu6_mixed: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum compared"},
    {"post_clamp", "", ": relu6_wasm: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum compared"},
    {"post_clamp", "", ": clamp_tern: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum compared"},
    {"post_clamp", "", ": clamp_if: offloaded as matmul (sm_75,sm_80,sm_90); exact kernel (each sum compared"},
    {"post_clamp", "", ": neg_clamp_var: not offloaded: stores something other than the sum\n"},
    {"post_clamp", "", ": neg_clamp_cross: not offloaded: stores something other than the sum\n"},
    {"saxpy", "--gpu-arch=sm_80", ": offloaded as map (sm_80); runs on the GPU when"},
    {"saxpy", "--gpu-arch=90,75", ": offloaded as map (sm_90,sm_75); runs on the GPU when"},
};

START_TEST(report_lines) {
  char out[8192];
  report_of(report_cases[_i].name, report_cases[_i].extra, out, sizeof out);
  ck_assert_msg(strstr(out, report_cases[_i].line), "want '%s' in:\n%s", report_cases[_i].line, out);
}
END_TEST

/* Each report line starts FILE:0xOFF with the offset of the nest's outer
 * Wasm `loop` instruction, as wasm-objdump shows it. */
/* A nest the bounds pass versioned is one line, its fast copy's: mvt_x1's
 * loop exists twice in the host IR (fast and bounds-checked copy). */
START_TEST(report_one_line_per_versioned_nest) {
  char out[8192];
  report_of("polybench_suite", "", out, sizeof out);
  int lines = 0;
  for (const char *p = out; (p = strstr(p, ": mvt_x1: ")); p++) lines++;
  ck_assert_msg(lines == 1, "%d lines for mvt_x1 in:\n%s", lines, out);
}
END_TEST

START_TEST(report_names_loop_offset) {
  char out[8192], cmd[1024], dump[256];
  report_of("neg_dependence", "", out, sizeof out);
  snprintf(cmd, sizeof cmd, "wasm-objdump -d %s/neg_dependence.wasm | grep -m1 -E '\\| +loop' "
           "| sed -E 's/^ *0*([0-9a-f]+):.*/\\1/'", tmpdir);
  ck_assert_int_eq(unit_sh(cmd, dump, sizeof dump), 0);
  dump[strcspn(dump, "\n")] = 0;
  ck_assert_msg(dump[0] != 0, "wasm-objdump found no loop");
  char want[300];
  snprintf(want, sizeof want, "neg_dependence.wasm:0x%s: recur: not offloaded", dump);
  ck_assert_msg(strstr(out, want), "want '%s' in:\n%s", want, out);
}
END_TEST

/* A -msimd128 build of the 1-D maps of tests/gpu/e2e/map1d.c: their
 * f32x4 loops are offloaded as the scalar maps they implement
 * (kernels/kn_lanes.c), a loop of narrow lanes (u8 -> f32) is not, and
 * the report says why; the program (run on the CPU) prints what the
 * scalar build's expected output says. */
START_TEST(simd_loops_offloaded) {
  char cmd[2048], out[16384];
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 -msimd128 -fno-unroll-loops -c "
           "tests/gpu/e2e/map1d.c -o %s/map1d.o && clang-19 --target=wasm32-wasi --sysroot=/usr "
           "%s/map1d.o -o %s/map1d.wasm -lm",
           tmpdir, tmpdir, tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
  snprintf(cmd, sizeof cmd, "--offload-report %s/map1d.wasm -o %s/map1d 2>&1", tmpdir, tmpdir);
  ck_assert_int_eq(run(cmd, out, sizeof out), 0);
  ck_assert_msg(!strstr(out, "k_f32_select: not offloaded"), "%s", out);
  ck_assert_msg(strstr(out, "k_f32_select: offloaded as map"), "%s", out);
  ck_assert_msg(strstr(out, "k_u8_to_f32: not offloaded: vector (SIMD) operations on narrow lanes"), "%s", out);
  snprintf(cmd, sizeof cmd, "TWASM_DEVICE=cpu %s/map1d | cmp - tests/gpu/e2e/map1d.expected", tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "output differs: %s", out);
}
END_TEST

/* tests/gpu/detect/saxpy.c at -O2 -msimd128: its vector loop, the peeled
 * iteration and the unrolled scalar remainder are one nest at the top of
 * saxpy (kernels/kn_recog_top.c), one kernel launched once from the
 * region's one way in over the whole count: one report line, one call of
 * twasm_rt_offload in the versioned module, leaving to the region's done
 * block (the region kept as the CPU path). */
START_TEST(simd_region_one_launch) {
  char cmd[2048], out[16384];
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 -msimd128 -nostdlib -Wl,--no-entry "
           "-Wl,--export-all -Wl,--allow-undefined tests/gpu/detect/saxpy.c -o %s/saxpy_simd.wasm",
           tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
  snprintf(cmd, sizeof cmd, "--offload-report=all -c %s/saxpy_simd.wasm -o %s/saxpy_simd.o 2>&1", tmpdir, tmpdir);
  ck_assert_int_eq(run(cmd, out, sizeof out), 0);
  int lines = 0;
  for (const char *p = out; (p = strstr(p, "offloaded as map")); p++) lines++;
  ck_assert_msg(lines == 1 && !strstr(out, "not offloaded"), "want one map in:\n%s", out);
  snprintf(cmd, sizeof cmd, "--dump-after=offload -c %s/saxpy_simd.wasm -o %s/saxpy_simd.o 2>&1 "
           "| grep -c 'call i32 @twasm_rt_offload('", tmpdir, tmpdir);
  ck_assert_int_eq(run(cmd, out, sizeof out), 0);
  ck_assert_int_eq(atoi(out), 1);
}
END_TEST

/* tests/gpu/e2e/unwaited.c (three matrix-vector products back to back,
 * the outputs' pointers loaded from a struct between them): the waits
 * pass makes its product launches twasm_rt_offload_unwaited; under
 * the stand-in driver at once on pinned memory (the device copy),
 * launches go unwaited and a round of four waits about twice (the struct
 * loads between q, k and v only check their bytes), where
 * TWASM_GPU_DEFER=0 waits once a launch; with --skip-pass=waits nothing
 * is unwaited.  The CPU run's output is the
 * expected file's. */
START_TEST(unwaited_launches_chain) {
  char cmd[2048], out[4096];
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 tests/gpu/e2e/unwaited.c -o %s/uw.wasm", tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
  snprintf(cmd, sizeof cmd, "-v %s/uw.wasm -o %s/uw 2>&1 | grep -E '^twasmc: waits'", tmpdir, tmpdir);
  ck_assert_int_eq(run(cmd, out, sizeof out), 0);
  /* main's four products (matvec inlined) and matvec's own copy */
  const char *n = strstr(out, "(");
  ck_assert_msg(n && atoi(n + 1) >= 4, "%s", out);
  snprintf(cmd, sizeof cmd, "TWASM_DEVICE=cpu %s/uw 40 | cmp - tests/gpu/e2e/unwaited.expected", tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "output differs: %s", out);
  const char *fake = getenv("FAKE_CUDA_DIR");
  if (!fake) {
    fprintf(stderr, "test_offload: unwaited_launches_chain: the stand-in driver's part SKIPPED (FAKE_CUDA_DIR unset)\n");
    return;
  }
  snprintf(cmd, sizeof cmd, "--skip-pass=waits %s/uw.wasm -o %s/uw_off", tmpdir, tmpdir);
  ck_assert_int_eq(run(cmd, out, sizeof out), 0);
  int launches[3], unwaited[3], waits[3];
  const char *const how[3] = {"", "TWASM_GPU_DEFER=0", ""};
  for (int k = 0; k < 3; k++) {
    snprintf(cmd, sizeof cmd,
             "rm -f %s/log; env LD_LIBRARY_PATH=%s FAKE_CUDA=any FAKE_CUDA_PAGEABLE=0 FAKE_CUDA_LOG=%s/log "
             "FAKE_CUDA_LOG_WAITS=1 TWASM_DEVICE=auto TWASM_GPU_START_MS=0 TWASM_TRACE=1 %s %s/%s 40 2>%s/err "
             ">/dev/null && echo $(grep -c ': gpu: sm' %s/err) $(grep -c ', not waited for$' %s/err) "
             "$(grep -c synchronise %s/log)",
             tmpdir, fake, tmpdir, how[k], tmpdir, k == 2 ? "uw_off" : "uw", tmpdir, tmpdir, tmpdir, tmpdir);
    ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
    ck_assert_int_eq(sscanf(out, "%d %d %d", &launches[k], &unwaited[k], &waits[k]), 3);
  }
  /* the launches start once the kernels loaded in the background: how
   * many varies, so the waits are weighed per launch */
  ck_assert_msg(launches[0] >= 40 && unwaited[0] >= launches[0] / 2, "launches %d, unwaited %d", launches[0],
                unwaited[0]);
  ck_assert_msg(launches[1] >= 40 && unwaited[1] == 0 && waits[1] >= launches[1],
                "TWASM_GPU_DEFER=0: launches %d, unwaited %d, waits %d", launches[1], unwaited[1], waits[1]);
  /* the other waits (the start's timing launch, ...) as without; then a
   * round's four launches wait twice (where the CPU reads q, then o), not
   * four times: q, k and v queue behind one another */
  int other = waits[1] - launches[1];
  ck_assert_msg(waits[0] - other <= launches[0] * 6 / 10, "%d waits (%d other) for %d launches", waits[0], other,
                launches[0]);
  ck_assert_msg(launches[2] >= 40 && unwaited[2] == 0 && waits[2] >= launches[2],
                "--skip-pass=waits: launches %d, unwaited %d, waits %d", launches[2], unwaited[2], waits[2]);
}
END_TEST

/* tests/gpu/e2e/struct_fields.c under TWASM_DEVICE=gpu with linear
 * memory in host memory (TWASM_GPU_MEMORY=host), pinned at its first
 * launch and again, as a piece of its own, after each growth: copies to
 * the device copy whose host bytes cross two pieces were refused by the
 * driver (CUDA_ERROR_INVALID_VALUE on the H200; the stand-in driver checks
 * the same) and their nests ran on the CPU.  cu_launch.c splits them at
 * the pieces' ends: every nest launches, as with managed memory. */
START_TEST(host_memory_grown_after_pinning) {
  const char *fake = getenv("FAKE_CUDA_DIR");
  if (!fake) {
    fprintf(stderr, "test_offload: host_memory_grown_after_pinning SKIPPED (FAKE_CUDA_DIR unset)\n");
    return;
  }
  char cmd[2048], out[4096];
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 tests/gpu/e2e/struct_fields.c -o %s/sf.wasm", tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
  snprintf(cmd, sizeof cmd, "%s/sf.wasm -o %s/sf", tmpdir, tmpdir);
  ck_assert_int_eq(run(cmd, out, sizeof out), 0);
  int launches[2], refused[2];
  for (int k = 0; k < 2; k++) {
    snprintf(cmd, sizeof cmd,
             "env LD_LIBRARY_PATH=%s FAKE_CUDA=any FAKE_CUDA_PAGEABLE=0 TWASM_DEVICE=gpu TWASM_TRACE=1 %s %s/sf "
             "2>%s/err >/dev/null; echo $(grep -c ': gpu: sm' %s/err) $(grep -c 'cpu: cuMemcpy' %s/err)",
             fake, k ? "TWASM_GPU_MEMORY=host" : "", tmpdir, tmpdir, tmpdir, tmpdir);
    ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
    ck_assert_int_eq(sscanf(out, "%d %d", &launches[k], &refused[k]), 2);
  }
  ck_assert_msg(launches[0] >= 4 && refused[0] == 0, "managed: %d launches, %d refused", launches[0], refused[0]);
  ck_assert_msg(launches[1] == launches[0] && refused[1] == 0, "host memory: %d launches (managed %d), %d refused",
                launches[1], launches[0], refused[1]);
}
END_TEST

/* A C program's report names its own loops and folds those of the C
 * library (malloc, printf, memset...) into one line, which says how many
 * and where; --offload-report=all lists every one. */
START_TEST(report_folds_libc) {
  char cmd[2048], out[32768];
  snprintf(cmd, sizeof cmd,
           "printf '%%s\\n' '#include <stdio.h>' '#include <stdlib.h>' "
           "'__attribute__((noinline)) void scale(float *y, const float *x, int n) { for (int i = 0; i < n; i++) y[i] = 2 * x[i]; }' "
           "'int main(int c, char **v) { int n = 1000 + c; float *x = calloc(n, 4), *y = malloc(4 * n);' "
           "'  scale(y, x, n); printf(\"%%g %%s\\n\", y[3], v[0]); return 0; }' >%s/lib.c && "
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 -fno-unroll-loops -c %s/lib.c -o %s/lib.o && "
           "clang-19 --target=wasm32-wasi --sysroot=/usr %s/lib.o -o %s/lib.wasm",
           tmpdir, tmpdir, tmpdir, tmpdir, tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
  snprintf(cmd, sizeof cmd, "-c --offload-report %s/lib.wasm -o %s/lib.o 2>&1", tmpdir, tmpdir);
  ck_assert_int_eq(run(cmd, out, sizeof out), 0);
  ck_assert_msg(strstr(out, ": scale: offloaded as map"), "%s", out);
  ck_assert_msg(strstr(out, "lib.wasm: C library: "), "no summary line:\n%s", out);
  ck_assert_msg(strstr(out, "printf_core") && strstr(out, "--offload-report=all lists them\n"), "%s", out);
  ck_assert_msg(!strstr(out, ": printf_core: not offloaded") && !strstr(out, ": dlmalloc: "),
                "C library lines not folded:\n%s", out);
  snprintf(cmd, sizeof cmd, "-c --offload-report=all %s/lib.wasm -o %s/lib.o 2>&1", tmpdir, tmpdir);
  ck_assert_int_eq(run(cmd, out, sizeof out), 0);
  ck_assert_msg(strstr(out, ": scale: offloaded as map"), "%s", out);
  ck_assert_msg(strstr(out, ": printf_core: not offloaded: ") && !strstr(out, "C library: "), "%s", out);
}
END_TEST

/* Built the usual way, `clang -O2 x.c -o x.wasm`, a module has no
 * function names when clang runs binaryen's wasm-opt after linking: the
 * C library cannot be told by name, so the refusals of large unnamed
 * functions (printf_core's dozens, dlmalloc's) fold into one line; the
 * nests that are offloaded and a small function's refusals stay listed. */
START_TEST(report_folds_unnamed) {
  char cmd[2048], out[32768];
  if (system("command -v wasm-opt >/dev/null 2>&1") != 0) {
    printf("offload: report_folds_unnamed skipped: binaryen's wasm-opt is not on PATH (clang then keeps the names)\n");
    return;
  }
  snprintf(cmd, sizeof cmd,
           "printf '%%s\\n' '#include <stdio.h>' '#include <stdlib.h>' "
           "'__attribute__((noinline)) void scale(float *y, const float *x, int n) { for (int i = 0; i < n; i++) y[i] = 2 * x[i]; }' "
           "'__attribute__((noinline)) void prefix(float *y, int n) { for (int i = 1; i < n; i++) y[i] += y[i - 1]; }' "
           "'int main(int c, char **v) { int n = 1000 + c; float *x = calloc(n, 4), *y = malloc(4 * n);' "
           "'  scale(y, x, n); prefix(y, n); printf(\"%%g %%s\\n\", y[3], v[0]); return 0; }' >%s/anon.c && "
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 -fno-unroll-loops %s/anon.c -o %s/anon.wasm",
           tmpdir, tmpdir, tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
  snprintf(cmd, sizeof cmd, "wasm-objdump -h %s/anon.wasm | grep -c '\"name\"'", tmpdir);
  unit_sh(cmd, out, sizeof out);
  if (atoi(out) != 0) {
    printf("offload: report_folds_unnamed skipped: this wasm-opt kept the name section\n");
    return;
  }
  snprintf(cmd, sizeof cmd, "-c --offload-report=all %s/anon.wasm -o %s/anon.o 2>&1", tmpdir, tmpdir);
  ck_assert_int_eq(run(cmd, out, sizeof out), 0);
  int all = 0;
  for (const char *p = out; (p = strstr(p, ": not offloaded: ")); p++) all++;
  ck_assert_msg(all >= 20, "want the C library's many refusals under =all:\n%s", out);
  snprintf(cmd, sizeof cmd, "-c --offload-report %s/anon.wasm -o %s/anon.o 2>&1", tmpdir, tmpdir);
  ck_assert_int_eq(run(cmd, out, sizeof out), 0);
  int listed = 0;
  for (const char *p = out; (p = strstr(p, ": not offloaded: ")); p++) listed++;
  ck_assert_msg(strstr(out, "]: offloaded as map"), "scale's map not listed:\n%s", out);
  ck_assert_msg(strstr(out, "]: not offloaded: loop-carried dependence"), "prefix's reason not listed:\n%s", out);
  ck_assert_msg(strstr(out, "anon.wasm: ") && strstr(out, " unnamed function") &&
                    strstr(out, "--offload-report=all lists them\n"),
                "no summary line:\n%s", out);
  ck_assert_msg(listed * 4 < all, "%d of %d refusals listed:\n%s", listed, all, out);
}
END_TEST

/* Two reduction nests of one accumulator in one function, versioned one
 * after the other: every bounds mode compiles it (the module was invalid
 * in explicit mode and without the bounds pass: a use of the first sum
 * left behind when the second nest's phi held it several times). */
START_TEST(offload_twice_merged) {
  static const char *modes[] = {"--bounds-checks=explicit", "--bounds-checks=guard", "--skip-pass=bounds"};
  for (int m = 0; m < 3; m++) {
    char args[1024], out[4096];
    snprintf(args, sizeof args, "-O2 -c --offload-report %s tests/gpu/detect/reduce_twice.wat -o %s/twice.o",
             modes[m], tmpdir);
    ck_assert_msg(run(args, out, sizeof out) == 0, "%s: %s", modes[m], out);
    ck_assert_msg(strstr(out, "offloaded as reduce"), "%s: %s", modes[m], out);
  }
}
END_TEST

START_TEST(no_offload_reports_nothing) {
  char args[1024], out[4096];
  wasm_of("saxpy");
  snprintf(args, sizeof args, "-c --no-offload --offload-report %s/saxpy.wasm -o %s/plain.o", tmpdir, tmpdir);
  ck_assert_int_eq(run(args, out, sizeof out), 0);
  ck_assert_msg(out[0] == 0, "--no-offload still reported: %s", out);
  snprintf(args, sizeof args, "--extract-ptx %s/plain.o -o %s/none", tmpdir, tmpdir);
  ck_assert_int_eq(run(args, out, sizeof out), 1);
  ck_assert_msg(strstr(out, "no embedded PTX"), "%s", out);
  ck_assert_int_ne(run("-c --gpu-arch=sm_xx x.wasm", out, sizeof out), 0);
}
END_TEST

static size_t slurp(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "missing %s", path);
  size_t n = fread(buf, 1, cap - 1, f);
  buf[n] = 0;
  fclose(f);
  return n;
}

/* Every extracted file: ASCII, the right .target, no fma (exact kernels);
 * ptxas accepts it when installed. */
static void check_ptx_file(const char *dir, const char *file, bool have_ptxas) {
  static char ptx[1 << 18];
  char path[512], cmd[1024], out[8192];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  size_t n = slurp(path, ptx, sizeof ptx);
  for (size_t k = 0; k < n; k++) ck_assert_msg((unsigned char)ptx[k] < 128, "non-ASCII PTX in %s", file);
  unsigned sm = 0;
  char suffix = 0;
  ck_assert(sscanf(strstr(file, ".sm_") + 4, "%u%c", &sm, &suffix) == 2);
  const char *a = suffix == 'a' ? "a" : "";  /* sm_90a: the wgmma kernel */
  char target[32];
  snprintf(target, sizeof target, ".target sm_%u%s\n", sm, a);
  ck_assert_msg(strstr(ptx, target), "%s lacks %s", file, target);
  ck_assert_msg(!strstr(ptx, "fma."), "exact kernel %s contains fma", file);
  if (have_ptxas) {
    snprintf(cmd, sizeof cmd, "/usr/local/cuda/bin/ptxas -arch=sm_%u%s %s -o /dev/null", sm, a, path);
    ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "ptxas rejects %s: %s", file, out);
  }
}

START_TEST(extract_ptx) {
  /* files per kernel: one per default arch, and sm_90a for tensor cores */
  static const struct {
    const char *app;
    unsigned per_kernel;
  } apps[] = {{"saxpy", 3}, {"dot_i32", 3}, {"matmul_ijk_f32", 3}, {"matmul_i8_large", 4}, {"scaled_products", 3}};
  bool have_ptxas = access("/usr/local/cuda/bin/ptxas", X_OK) == 0;
  if (!have_ptxas) printf("skipped: ptxas not installed\n");
  for (size_t i = 0; i < sizeof apps / sizeof *apps; i++) {
    const char *app = apps[i].app;
    char out[8192], dir[256], args[1024];
    report_of(app, "", out, sizeof out);
    snprintf(dir, sizeof dir, "%s/ptx_%s", tmpdir, app);
    snprintf(args, sizeof args, "--extract-ptx %s/%s.obj -o %s", tmpdir, app, dir);
    ck_assert_int_eq(run(args, out, sizeof out), 0);
    /* one file per arch and kernel: clang's unrolled loop and its
     * remainder loop may be two kernels */
    unsigned written = 0;
    ck_assert_msg(sscanf(out, "%u PTX files written", &written) == 1 && written % apps[i].per_kernel == 0 &&
                      written,
                  "%s", out);
    snprintf(args, sizeof args, "ls %s", dir);
    char list[4096];
    ck_assert_int_eq(unit_sh(args, list, sizeof list), 0);
    int files = 0;
    for (char *f = strtok(list, "\n"); f; f = strtok(NULL, "\n"), files++) check_ptx_file(dir, f, have_ptxas);
    ck_assert_int_eq(files, (int)written);
    /* the object holds them compressed: at least 4 times smaller */
    snprintf(args, sizeof args,
             "objcopy -O binary --only-section=.twasm_ptx %s/%s.obj %s/sec && stat -c %%s %s/sec && "
             "cat %s/*.ptx | wc -c", tmpdir, app, dir, dir, dir);
    unsigned long packed = 0, plain = 0;
    ck_assert_int_eq(unit_sh(args, out, sizeof out), 0);
    ck_assert_msg(sscanf(out, "%lu %lu", &packed, &plain) == 2 && packed && packed * 4 < plain,
                  "%s: .twasm_ptx %lu bytes for %lu of PTX", app, packed, plain);
  }
}
END_TEST

/* The descriptor lists each kernel with its PTX per arch, launch rule,
 * binds and ranges (what rt_offload needs). */
START_TEST(kernel_table) {
  char path[256], so[256];
  wasm_of("saxpy");
  snprintf(path, sizeof path, "%s/saxpy.wasm", tmpdir);
  uint8_t *bytes, *obj;
  size_t size, obj_size;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  ck_assert_int_eq(drv_read_input(path, &bytes, &size, &d), DRV_OK);
  drv_options o;
  drv_options_default(&o);
  o.desc_symbol = "offload_test_module";
  ck_assert_int_eq(drv_compile(bytes, size, path, &o, &obj, &obj_size, &d), DRV_OK);
  snprintf(path, sizeof path, "%s/saxpy.o", tmpdir);
  FILE *f = fopen(path, "wb");
  ck_assert(f && fwrite(obj, 1, obj_size, f) == obj_size);
  fclose(f);
  snprintf(so, sizeof so, "%s/saxpy.so", tmpdir);
  ck_assert_msg(drv_link_shared(path, so, &d), "%s", d.msg);
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(h != NULL, "%s", dlerror());
  const twasm_module_abi *m = dlsym(h, "offload_test_module");
  ck_assert_ptr_nonnull(m);
  ck_assert_uint_eq(m->abi_version, TWASM_ABI_VERSION);
  ck_assert_uint_eq(m->nkernels, 1);
  const twasm_kernel_abi *k = &m->kernels[0];
  ck_assert_uint_eq(k->kind, TWASM_KERNEL_MAP);
  ck_assert_uint_eq(k->nptx, 3);
  ck_assert(k->nparams >= 1 && k->nranges >= 3); /* out written, x and y read */
  ck_assert(k->launch.block[0] > 0 && k->launch.per_block[0] > 0);
  int writes = 0;
  for (uint32_t r = 0; r < k->nranges; r++) writes += k->ranges[r].is_write != 0;
  ck_assert_int_eq(writes, 1);
  /* compressed until a GPU needs it: the texts are zeroes, then PTX */
  ck_assert_ptr_nonnull(k->ptx_store);
  ck_assert_uint_eq(k->ptx_store->state, 0);
  ck_assert_msg(!k->ptx[0].text[0], "the PTX is there before it was inflated");
  ck_assert(k->ptx_store->zstd_size * 4 < k->ptx_store->size);
  char why[256] = "";
  ck_assert_msg(rt_ptx_inflate(k->ptx_store, why, sizeof why), "%s", why);
  ck_assert_uint_eq(k->ptx_store->state, 1);
  static const unsigned sms[] = {75, 80, 90};
  for (int i = 0; i < 3; i++) {
    char entry[128];
    ck_assert_uint_eq(k->ptx[i].sm, sms[i]);
    ck_assert(k->ptx[i].ptx_isa >= 63);
    snprintf(entry, sizeof entry, ".entry %s", k->name);
    ck_assert_msg(strstr(k->ptx[i].text, entry), "no %s in the PTX", entry);
  }
  dlclose(h);
  free(obj);
  free(bytes);
}
END_TEST

static Suite *offload_suite(void) {
  Suite *s = suite_create("offload");
  TCase *tc = tcase_create("offload");
  tcase_set_timeout(tc, 600); /* extract_ptx: five compilations and ptxas on about 100 files */
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, report_lines, 0, sizeof report_cases / sizeof report_cases[0]);
  tcase_add_test(tc, report_names_loop_offset);
  tcase_add_test(tc, report_one_line_per_versioned_nest);
  tcase_add_test(tc, no_offload_reports_nothing);
  tcase_add_test(tc, offload_twice_merged);
  tcase_add_test(tc, simd_loops_offloaded);
  tcase_add_test(tc, simd_region_one_launch);
  tcase_add_test(tc, unwaited_launches_chain);
  tcase_add_test(tc, host_memory_grown_after_pinning);
  tcase_add_test(tc, report_folds_libc);
  tcase_add_test(tc, report_folds_unnamed);
  tcase_add_test(tc, extract_ptx);
  tcase_add_test(tc, kernel_table);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(offload_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
