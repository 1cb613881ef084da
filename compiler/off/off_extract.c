/* off_extract.c: `twasmc --extract-ptx APP -o DIR`: reads the .twasm_ptx
 * section of an object or executable (libelf) back into PTX files. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "off.h"

static bool write_ptx(const char *dir, const char *name, const char *arch, const char *text,
                      size_t len, tw_diag *d) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s.ptx", dir, name, arch);
  FILE *f = fopen(path, "wb");
  if (!f) return tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s: %s", path, strerror(errno));
  bool ok = fwrite(text, 1, len, f) == len;
  ok = (fclose(f) == 0) && ok;
  return ok ? true : tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s", path);
}

/* Records: "twasm-ptx NAME sm_N ISA LENGTH\n" + LENGTH bytes (see off.c). */
static bool split_records(const char *data, size_t size, const char *dir, unsigned *count,
                          tw_diag *d) {
  size_t at = 0;
  while (at < size) {
    if (data[at] == 0) { /* padding between input sections */
      at++;
      continue;
    }
    char name[128];
    char arch[16];
    unsigned sm, isa;
    size_t len;
    int used = 0;
    char suffix = 0;
    const char *nl = memchr(data + at, '\n', size - at);
    /* the arch: sm_N, or sm_Na (arch-specific) */
    bool ok = nl && sscanf(data + at, "twasm-ptx %127s %15s %u %zu%n", name, arch, &isa, &len, &used) == 4;
    int fields = ok ? sscanf(arch, "sm_%u%c", &sm, &suffix) : 0;
    if (!ok || fields < 1 || (fields == 2 && (suffix != 'a' || arch[strlen(arch) - 1] != 'a' ||
                                              strlen(arch) > 7)) ||
        data + at + used != nl || len > size - (size_t)(nl + 1 - data))
      return tw_fail(d, TW_DIAG_NO_OFFSET, "malformed .twasm_ptx section at byte %zu", at);
    for (const char *p = name; *p; p++)
      if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
        return tw_fail(d, TW_DIAG_NO_OFFSET, "malformed kernel name in .twasm_ptx");
    if (!write_ptx(dir, name, arch, nl + 1, len, d)) return false;
    (*count)++;
    at = (size_t)(nl + 1 - data) + len;
  }
  return true;
}

bool off_extract(const char *app, const char *dir, unsigned *count, tw_diag *d) {
  *count = 0;
  if (elf_version(EV_CURRENT) == EV_NONE) return tw_fail(d, TW_DIAG_NO_OFFSET, "libelf is unusable");
  int fd = open(app, O_RDONLY);
  if (fd < 0) return tw_fail(d, TW_DIAG_NO_OFFSET, "cannot open: %s", strerror(errno));
  Elf *e = elf_begin(fd, ELF_C_READ, NULL);
  size_t shstrndx;
  bool ok = e && elf_kind(e) == ELF_K_ELF && elf_getshdrstrndx(e, &shstrndx) == 0;
  if (!ok) tw_fail(d, TW_DIAG_NO_OFFSET, "not an ELF object or executable");
  bool found = false;
  for (Elf_Scn *s = ok ? elf_nextscn(e, NULL) : NULL; ok && s; s = elf_nextscn(e, s)) {
    GElf_Shdr sh;
    const char *name = gelf_getshdr(s, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
    if (!name || strcmp(name, ".twasm_ptx") != 0) continue;
    found = true;
    Elf_Data *data = elf_getdata(s, NULL);
    if (data && data->d_buf) {
      mkdir(dir, 0777);
      ok = split_records(data->d_buf, data->d_size, dir, count, d);
    }
  }
  if (ok && !found) ok = tw_fail(d, TW_DIAG_NO_OFFSET, "no embedded PTX (no .twasm_ptx section): compiled with --no-offload, or no loop was offloaded");
  if (e) elf_end(e);
  close(fd);
  return ok;
}
