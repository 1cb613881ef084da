/* exit.c: a non-zero exit status from deep inside the program. */
#include <stdio.h>
#include <stdlib.h>

static void fail(int depth) {
  if (depth == 0) {
    printf("exiting with 42\n");
    exit(42);
  }
  fail(depth - 1);
}

int main(void) {
  fail(10);
  printf("not reached\n");
  return 0;
}
