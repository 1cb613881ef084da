/* strings.c: string processing: tokenising, reversing, counting, formatting. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

static void reverse(char *s) {
  for (size_t i = 0, j = strlen(s); i + 1 < j; i++, j--) {
    char t = s[i];
    s[i] = s[j - 1];
    s[j - 1] = t;
  }
}

int main(void) {
  char text[] = "the quick brown fox jumps over the lazy dog";
  int counts[26] = {0};
  for (const char *p = text; *p; p++)
    if (isalpha((unsigned char)*p)) counts[*p - 'a']++;
  for (int i = 0; i < 26; i++)
    if (counts[i] > 1) printf("%c=%d ", 'a' + i, counts[i]);
  printf("\n");
  char copy[sizeof text];
  strcpy(copy, text);
  int words = 0;
  for (char *w = strtok(copy, " "); w; w = strtok(NULL, " ")) {
    reverse(w);
    printf("%s%s", words++ ? " " : "", w);
  }
  printf("\nwords=%d len=%zu\n", words, strlen(text));
  char buf[64];
  snprintf(buf, sizeof buf, "%-8s|%8s|%08.3f|%x|%o", "left", "right", 3.14159, 48879, 8);
  puts(buf);
  printf("strstr: %s\n", strstr(text, "fox"));
  printf("cmp: %d %d\n", strcmp("abc", "abd") < 0, strncmp("hello", "help", 3) == 0);
  return 0;
}
