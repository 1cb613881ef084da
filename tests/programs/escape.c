/* escape.c: a sandboxed program that tries to leave its preopened
 * directory; every attempt must fail.  Only run under twasmc (run.sh sets
 * up outlink -> ../outside.txt and dirlink -> .. inside the sandbox). */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static void try_open(const char *path, int flags) {
  int fd = open(path, flags, 0644);
  printf("%-28s %s\n", path, fd >= 0 ? "OPENED" : "blocked");
  if (fd >= 0) close(fd);
}

int main(void) {
  try_open("../outside.txt", O_RDONLY);
  try_open("sub/../../outside.txt", O_RDONLY);
  try_open("/etc/passwd", O_RDONLY);
  try_open("/outside.txt", O_RDONLY);
  try_open("outlink", O_RDONLY);
  try_open("dirlink/outside.txt", O_RDONLY);
  try_open("dirlink/created.txt", O_WRONLY | O_CREAT);
  try_open("../created.txt", O_WRONLY | O_CREAT);
  printf("%-28s %s\n", "symlink dirlink/x", symlink("x", "dirlink/x") == 0 ? "OPENED" : "blocked");
  printf("%-28s %s\n", "mkdir ../made", mkdir("../made", 0755) == 0 ? "OPENED" : "blocked");
  printf("%-28s %s\n", "unlink ../outside.txt", unlink("../outside.txt") == 0 ? "OPENED" : "blocked");
  printf("%-28s %s\n", "rename outlink", rename("dirlink/outside.txt", "stolen.txt") == 0 ? "OPENED" : "blocked");
  try_open("sub/inlink", O_RDONLY);
  FILE *f = fopen("sub/inside.txt", "w");
  if (!f) return printf("cannot write sub/inside.txt\n"), 1;
  fputs("written inside\n", f);
  fclose(f);
  printf("wrote sub/inside.txt\n");
  return 0;
}
