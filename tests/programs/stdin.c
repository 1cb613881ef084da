/* stdin.c: reading standard input line by line. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  char line[256];
  int lines = 0, words = 0;
  long chars = 0;
  while (fgets(line, sizeof line, stdin)) {
    lines++;
    chars += (long)strlen(line);
    int in_word = 0;
    for (char *p = line; *p; p++) {
      if (isspace((unsigned char)*p)) in_word = 0;
      else if (!in_word) {
        in_word = 1;
        words++;
      }
      *p = (char)toupper((unsigned char)*p);
    }
    fputs(line, stdout);
  }
  printf("lines=%d words=%d chars=%ld\n", lines, words, chars);
  return 0;
}
