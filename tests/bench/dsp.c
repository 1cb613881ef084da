/* dsp.c: float signal processing that vectorises: a 32-tap FIR filter
 * (taps outer, samples inner), gain and mix, complex multiplication of
 * interleaved spectra and an energy per block; 2^20 samples, 64 passes. */
#include <math.h>
#include <stdio.h>

#define N (1 << 20)
#define TAPS 32

static float x[N + TAPS], y[N], z[N], re[N / 2], im[N / 2], cre[N / 2], cim[N / 2], h[TAPS];

static unsigned seed = 7;
static float rnd(void) {
  seed = seed * 1103515245u + 12345u;
  return (float)((seed >> 9) & 0xffff) / 32768.0f - 1.0f;
}

static void fir(float *dst, const float *src, const float *taps) {
  for (int i = 0; i < N; i++) dst[i] = 0.0f;
  for (int k = 0; k < TAPS; k++) {
    float c = taps[k];
    for (int i = 0; i < N; i++) dst[i] += c * src[i + k];
  }
}

static void mix(float *dst, const float *p, const float *q, float g) {
  for (int i = 0; i < N; i++) dst[i] = g * p[i] + (1.0f - g) * q[i];
}

static void cmul(float *ore, float *oim, const float *ar, const float *ai, const float *br, const float *bi) {
  for (int i = 0; i < N / 2; i++) {
    float r = ar[i] * br[i] - ai[i] * bi[i];
    float m = ar[i] * bi[i] + ai[i] * br[i];
    ore[i] = r;
    oim[i] = m;
  }
}

int main(void) {
  for (int i = 0; i < N + TAPS; i++) x[i] = rnd();
  for (int k = 0; k < TAPS; k++) h[k] = sinf((float)k * 0.2f) / (float)(k + 1);
  for (int i = 0; i < N / 2; i++) cre[i] = rnd(), cim[i] = rnd();
  double energy = 0;
  for (int pass = 0; pass < 64; pass++) {
    fir(y, x, h);
    mix(z, y, x, 0.25f + 0.05f * (float)pass);
    for (int i = 0; i < N / 2; i++) re[i] = z[2 * i], im[i] = z[2 * i + 1];
    cmul(re, im, re, im, cre, cim);
    for (int i = 0; i < N / 2; i++) x[2 * i] = re[i] * 0.5f, x[2 * i + 1] = im[i] * 0.5f;
    for (int b = 0; b < N; b += 4096) {
      float e = 0.0f;
      for (int i = b; i < b + 4096; i++) e += x[i] * x[i];
      energy += sqrt((double)e);
    }
  }
  printf("dsp %.6f\n", energy);
  return 0;
}
