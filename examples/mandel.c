/* mandel.c: an ASCII Mandelbrot set (floating point, formatted output). */
#include <stdio.h>

int main(void) {
  const char *shades = " .:-=+*#%@";
  double area = 0;
  for (int row = 0; row < 24; row++) {
    for (int col = 0; col < 64; col++) {
      double cr = -2.2 + col * 3.0 / 64, ci = -1.2 + row * 2.4 / 24, zr = 0, zi = 0;
      int it = 0;
      while (it < 200 && zr * zr + zi * zi <= 4.0) {
        double t = zr * zr - zi * zi + cr;
        zi = 2 * zr * zi + ci;
        zr = t;
        it++;
      }
      if (it == 200) area += (3.0 / 64) * (2.4 / 24);
      putchar(shades[it == 200 ? 9 : it % 9]);
    }
    putchar('\n');
  }
  printf("area estimate: %.6f\n", area);
  return 0;
}
