/* hello.c: the README's first example: arguments, formatting, exit status. */
#include <stdio.h>

int main(int argc, char **argv) {
  printf("hello from WebAssembly");
  for (int i = 1; i < argc; i++) printf(", %s", argv[i]);
  printf("\nsqrt-free pi estimate: %.6f\n", 4.0 * (1 - 1.0 / 3 + 1.0 / 5 - 1.0 / 7 + 1.0 / 9));
  return 0;
}
