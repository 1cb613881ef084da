/* simd_dsp_o3.c: simd_dsp.c (tests/gpu/survey/textbook_dsp.c) built with
 * `clang -O3 -msimd128`: the same nests offloaded as at -O2 -msimd128. */
/* clang-flags: -O3 -msimd128 */
/* expect-gpu-launches: 2 */
#include "../survey/textbook_dsp.c"
