/* files.c: file I/O in the working directory (a preopened directory under
 * twasmc): create, write, read, append, seek, list, rename, remove. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list(const char *dir) {
  DIR *d = opendir(dir);
  char *names[32];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 32)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], by_name);
  printf("%s:", dir);
  for (int i = 0; i < n; i++) {
    printf(" %s", names[i]);
    free(names[i]);
  }
  printf("\n");
}

int main(void) {
  if (mkdir("work", 0755) != 0) return perror("mkdir"), 1;
  mkdir("work/sub", 0755);
  FILE *f = fopen("work/a.txt", "w");
  for (int i = 0; i < 5; i++) fprintf(f, "line %d: %d\n", i, i * i);
  fclose(f);
  f = fopen("work/a.txt", "a");
  fputs("appended\n", f);
  fclose(f);
  f = fopen("work/a.txt", "r");
  char line[64];
  int n = 0;
  while (fgets(line, sizeof line, f)) printf("%d> %s", ++n, line);
  fseek(f, 5, SEEK_SET);
  printf("at %ld: %c\n", ftell(f), fgetc(f));
  fseek(f, 0, SEEK_END);
  printf("size by seek: %ld\n", ftell(f));
  fclose(f);
  struct stat st;
  stat("work/a.txt", &st);
  printf("size by stat: %lld regular=%d\n", (long long)st.st_size, S_ISREG(st.st_mode));
  printf("rename: %d\n", rename("work/a.txt", "work/sub/b.txt"));
  f = fopen("work/c.bin", "wb");
  for (int i = 0; i < 1000; i++) fwrite(&i, sizeof i, 1, f);
  fclose(f);
  list("work");
  list("work/sub");
  errno = 0;
  printf("missing: %s enoent=%d\n", fopen("work/nope.txt", "r") ? "opened" : "failed", errno == ENOENT);
  printf("rmdir non-empty: %d\n", rmdir("work/sub") == 0);
  printf("unlink: %d %d %d\n", unlink("work/sub/b.txt"), unlink("work/c.bin"), rmdir("work/sub"));
  printf("access after: %d\n", access("work/sub", F_OK) == 0);
  printf("rmdir: %d\n", rmdir("work"));
  return 0;
}
