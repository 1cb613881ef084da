/* math.c: the math library and printf of floats in several formats. */
#include <math.h>
#include <stdio.h>

int main(void) {
  const double xs[] = {0.0, 0.5, 1.0, 2.0, 3.14159265358979, 10.0, 123.456};
  for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
    double x = xs[i];
    printf("x=%g sin=%.6f cos=%.6f exp=%.6e sqrt=%.6f log1p=%.6f atan=%.6f\n", x, sin(x), cos(x),
           exp(x), sqrt(x), log1p(x), atan(x));
  }
  printf("pow=%.10g hypot=%.10g fmod=%.6f cbrt=%.6f\n", pow(2.0, 0.5), hypot(3, 4), fmod(10.5, 3),
         cbrt(27.0));
  printf("floor=%.1f ceil=%.1f round=%.1f trunc=%.1f\n", floor(-2.5), ceil(-2.5), round(-2.5),
         trunc(-2.5));
  float f = 1.0f / 3.0f;
  printf("float=%.9f double=%.17g small=%e big=%e\n", f, 1.0 / 3.0, 1e-300 * 1e-10, 1e300 * 10);
  printf("inf=%f nan=%f neg0=%g\n", INFINITY, NAN, -0.0);
  double acc = 0;
  for (int i = 1; i <= 100000; i++) acc += 1.0 / ((double)i * i);
  printf("basel=%.12f pi=%.12f\n", acc, sqrt(6 * acc));
  return 0;
}
