/* pure_call.c: maps calling a small exp-like function of their own
 * module, as libm's expf is (kn_recog_call.c): range reduction, a table
 * of 2^(i/32) read at a masked index, a polynomial, branches for the
 * special cases.  pure_exp is pure: pure_call maps it.  count_exp stores
 * a count on every call, wild_exp reads its table at an index nothing
 * bounds: their maps stay on the CPU. */
#include <stdint.h>
#include <string.h>

static const double tab[32] = {1, 1.0218971486541166, 1.0442737824274138, 1.0671404006768237, 1.0905077326652577, 1.1143867425958924, 1.1387886347566916, 1.1637248587775775, 1.189207115002721, 1.215247359980469, 1.241857812073484, 1.2690509571917332, 1.2968395546510096, 1.3252366431597413, 1.3542555469368927, 1.383909881963832, 1.4142135623730951, 1.4451808069770467, 1.4768261459394993, 1.5091644275934228, 1.5422108254079407, 1.5759808451078865, 1.6104903319492543, 1.6457554781539649, 1.681792830507429, 1.7186192981224779, 1.7562521603732995, 1.7947090750031072, 1.8340080864093424, 1.8741676341103, 1.9152065613971474, 1.9571441241754002};
unsigned calls;

static float exp_body(float x, uint32_t mask) {
  if (x != x) return x + x;
  if (x > 88.0f) return x * 1e30f;
  if (x < -100.0f) return 0.0f;
  double z = (double)x * 46.166241308446828; /* 32 / ln 2 */
  double kd = z + 0x1.8p52;
  uint64_t ki;
  memcpy(&ki, &kd, 8);
  kd -= 0x1.8p52;
  double r = z - kd;
  double p = 1.0 + r * (0.021660849390173098 + r * (0.00023459809186637306 + r * 1.6938963105765846e-06));
  uint64_t bits;
  double t = tab[ki & mask];
  memcpy(&bits, &t, 8);
  bits += (ki >> 5) << 52;
  memcpy(&t, &bits, 8);
  return (float)(t * p);
}

__attribute__((noinline)) float pure_exp(float x) { return exp_body(x, 31); }

__attribute__((noinline)) float count_exp(float x) {
  calls++;
  return exp_body(x, 31);
}

__attribute__((noinline)) float wild_exp(float x, uint32_t mask) { return exp_body(x, mask); }

void pure_call(int n, float *y, const float *x) {
  for (int i = 0; i < n; i++) y[i] = pure_exp(x[i]);
}

void pure_call_scaled(int n, float *y, const float *x, float s) {
  for (int i = 0; i < n; i++) y[i] = s * pure_exp(x[i] - s);
}

void count_call(int n, float *y, const float *x) {
  for (int i = 0; i < n; i++) y[i] = count_exp(x[i]);
}

void wild_call(int n, float *y, const float *x, uint32_t mask) {
  for (int i = 0; i < n; i++) y[i] = wild_exp(x[i], mask);
}

