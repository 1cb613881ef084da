/* args.c: command-line arguments and the environment. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  printf("argc=%d\n", argc);
  for (int i = 1; i < argc; i++) printf("argv[%d]=[%s]\n", i, argv[i]);
  const char *v = getenv("TEST_VAR");
  printf("TEST_VAR=%s\n", v ? v : "(unset)");
  printf("UNSET_VAR=%s\n", getenv("TEST_SURELY_UNSET") ? "set" : "(unset)");
  return 0;
}
