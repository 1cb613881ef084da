/* matmul_mixed.c: u8 activations times s8 weights summed in i32, the
 * usual quantised-inference operand types (each widens its own way). */
#include <stdint.h>
void qmm(int m, int n, int k, const uint8_t *a, const int8_t *b, int32_t *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      int32_t acc = 0;
      for (int p = 0; p < k; p++) acc += a[i * k + p] * b[p * n + j];
      c[i * n + j] = acc;
    }
}
