/* simd_dsp.c: tests/gpu/survey/textbook_dsp.c (a Q15 FIR filter, RGB to
 * grey of 8-bit pixels, a layer normalisation, y = A^T x, an integer dot
 * product, written as tutorials write them) built with `clang -O2
 * -msimd128`, all of it inlined into main (docs/PERFORMANCE.md, round 9's
 * new program, has what each function offloads when it is not).
 * Offloaded here: the layer normalisation's last loop as two maps (its
 * f32x4 vector loop and its scalar remainder, 4096 and 3 elements at the
 * default size: the 2 launches counted), the grey conversion's scalar
 * remainder (its u8 vector loop stays: narrow lanes) and loops of main
 * that fill the inputs.  .expected: the CPU run's, equal to a native gcc
 * build's and to simd_dsp_o3's. */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 2 */
#include "../survey/textbook_dsp.c"
