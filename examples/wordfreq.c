/* wordfreq.c: counts words on standard input with a hash table, prints
 * the most frequent ones (qsort, strings, malloc). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry { char *word; int count; struct entry *next; } entry;
static entry *table[4096];

static unsigned hash(const char *s) {
  unsigned h = 2166136261u;
  while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h & 4095;
}

static int by_count(const void *a, const void *b) {
  const entry *x = *(entry *const *)a, *y = *(entry *const *)b;
  return x->count != y->count ? y->count - x->count : strcmp(x->word, y->word);
}

int main(void) {
  char word[64];
  int len = 0, c, distinct = 0;
  do {
    c = getchar();
    if (c != EOF && isalpha(c) && len < 63) {
      word[len++] = (char)tolower(c);
    } else if (len) {
      word[len] = 0;
      len = 0;
      entry **slot = &table[hash(word)];
      while (*slot && strcmp((*slot)->word, word)) slot = &(*slot)->next;
      if (!*slot) {
        *slot = calloc(1, sizeof **slot);
        (*slot)->word = strdup(word);
        distinct++;
      }
      (*slot)->count++;
    }
  } while (c != EOF);
  entry **all = malloc(sizeof *all * (size_t)(distinct ? distinct : 1));
  int k = 0;
  for (int i = 0; i < 4096; i++)
    for (entry *e = table[i]; e; e = e->next) all[k++] = e;
  qsort(all, (size_t)k, sizeof *all, by_count);
  printf("%d distinct words\n", distinct);
  for (int i = 0; i < k && i < 5; i++) printf("%6d %s\n", all[i]->count, all[i]->word);
  return 0;
}
