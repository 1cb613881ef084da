/* alloc.c: malloc-heavy work: a linked list, a growing array, a hash table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct node { int value; struct node *next; } node;
typedef struct entry { char *key; int count; struct entry *next; } entry;

static unsigned hash(const char *s) {
  unsigned h = 5381;
  while (*s) h = h * 33 + (unsigned char)*s++;
  return h;
}

int main(void) {
  node *head = NULL;
  for (int i = 0; i < 100000; i++) {
    node *n = malloc(sizeof *n);
    n->value = i;
    n->next = head;
    head = n;
  }
  long long sum = 0;
  while (head) {
    node *next = head->next;
    sum += head->value;
    free(head);
    head = next;
  }
  printf("list sum=%lld\n", sum);
  size_t cap = 1, len = 0;
  double *arr = malloc(cap * sizeof *arr);
  for (int i = 0; i < 50000; i++) {
    if (len == cap) arr = realloc(arr, (cap *= 2) * sizeof *arr);
    arr[len++] = i * 0.5;
  }
  printf("array len=%zu cap=%zu last=%.1f\n", len, cap, arr[len - 1]);
  free(arr);
  enum { BUCKETS = 64 };
  entry *table[BUCKETS] = {0};
  const char *words[] = {"alpha", "beta", "gamma", "alpha", "delta", "beta", "alpha"};
  for (int round = 0; round < 1000; round++) {
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
      unsigned b = hash(words[i]) % BUCKETS;
      entry *e = table[b];
      while (e && strcmp(e->key, words[i])) e = e->next;
      if (!e) {
        e = calloc(1, sizeof *e);
        e->key = strdup(words[i]);
        e->next = table[b];
        table[b] = e;
      }
      e->count++;
    }
  }
  const char *order[] = {"alpha", "beta", "gamma", "delta"};
  for (int i = 0; i < 4; i++) {
    entry *e = table[hash(order[i]) % BUCKETS];
    while (strcmp(e->key, order[i])) e = e->next;
    printf("%s=%d\n", e->key, e->count);
  }
  for (int b = 0; b < BUCKETS; b++) {
    while (table[b]) {
      entry *next = table[b]->next;
      free(table[b]->key);
      free(table[b]);
      table[b] = next;
    }
  }
  char *big = malloc(8 << 20);
  memset(big, 'x', 8 << 20);
  printf("big[%d]=%c\n", (8 << 20) - 1, big[(8 << 20) - 1]);
  free(big);
  return 0;
}
