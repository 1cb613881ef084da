/* off_extract.c: `twasmc --extract-ptx APP -o DIR`: reads the .twasm_ptx
 * section of an object or executable (libelf) back into PTX files: the
 * zstd frames of PTX stores (off_store.c) inflated, and plain records of
 * executables made before the store. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

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

/* The header line at data + at, NUL-terminated in line (cap bytes), and
 * *body the offset after its newline; false when no newline ends it
 * within the section and cap.  sscanf then reads line, never the section
 * (which need not end in a NUL). */
static bool header(const char *data, size_t size, size_t at, char *line, size_t cap, size_t *body) {
  size_t room = size - at < cap ? size - at : cap;
  const char *nl = memchr(data + at, '\n', room);
  if (!nl) return false;
  size_t n = (size_t)(nl - (data + at));
  memcpy(line, data + at, n);
  line[n] = 0;
  *body = at + n + 1;
  return true;
}

static bool split_records(const char *data, size_t size, const char *dir, unsigned *count,
                          bool inflated, tw_diag *d);

/* Room for a header line: "twasm-ptx" + a 127-byte name + the rest. */
enum { HEADER_CAP = 256 };
/* The most PTX one store may hold (the JIT would not take more). */
#define STORE_MAX ((size_t)1 << 30)

/* A store at data + at: "twasm-ptz SIZE ZSIZE\n" + ZSIZE bytes of zstd
 * frame (with a checksum) holding SIZE bytes of records.  *next: the byte
 * after it. */
static bool inflate_store(const char *data, size_t size, size_t at, const char *dir,
                          unsigned *count, size_t *next, tw_diag *d) {
  char line[HEADER_CAP], end = 0;
  size_t raw, packed, body;
  if (!header(data, size, at, line, sizeof line, &body) ||
      sscanf(line, "twasm-ptz %zu %zu%c", &raw, &packed, &end) != 2 || strchr(line + 10, '-') ||
      packed > size - body || raw > STORE_MAX)
    return tw_fail(d, TW_DIAG_NO_OFFSET, "corrupt .twasm_ptx section: malformed PTX store at byte %zu", at);
  char *text = malloc(raw ? raw : 1);
  if (!text) return tw_fail(d, TW_DIAG_NO_OFFSET, "out of memory inflating the PTX store");
  size_t n = ZSTD_decompress(text, raw, data + body, packed);
  bool ok = !ZSTD_isError(n) && n == raw;
  if (!ok)
    tw_fail(d, TW_DIAG_NO_OFFSET, "corrupt .twasm_ptx section: the PTX store at byte %zu does not inflate (%s)",
            at, ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size");
  ok = ok && split_records(text, raw, dir, count, true, d);
  free(text);
  *next = body + packed;
  return ok;
}

static bool name_ok(const char *name) {
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  return true;
}

/* Records: "twasm-ptx NAME sm_N ISA LENGTH\n" + LENGTH bytes (off_store.c),
 * and in a section (not inflated) also stores.  dir NULL: only checks
 * and counts. */
static bool split_records(const char *data, size_t size, const char *dir, unsigned *count,
                          bool inflated, tw_diag *d) {
  size_t at = 0;
  while (at < size) {
    if (data[at] == 0) { /* padding between input sections; each record's NUL */
      at++;
      continue;
    }
    if (!inflated && size - at > 10 && !memcmp(data + at, "twasm-ptz ", 10)) {
      if (!inflate_store(data, size, at, dir, count, &at, d)) return false;
      continue;
    }
    char line[HEADER_CAP], name[128], arch[16], suffix = 0, end = 0;
    unsigned sm, isa;
    size_t len, body;
    /* the arch: sm_N, or sm_Na (arch-specific) */
    bool ok = header(data, size, at, line, sizeof line, &body) &&
              sscanf(line, "twasm-ptx %127s %15s %u %zu%c", name, arch, &isa, &len, &end) == 4 &&
              !strchr(line + 10, '-'); /* %u and %zu would take "-1" */
    int fields = ok ? sscanf(arch, "sm_%u%c", &sm, &suffix) : 0;
    if (!ok || fields < 1 || (fields == 2 && (suffix != 'a' || arch[strlen(arch) - 1] != 'a' ||
                                              strlen(arch) > 7)) ||
        len > size - body)
      return tw_fail(d, TW_DIAG_NO_OFFSET, "corrupt .twasm_ptx section: malformed record at byte %zu", at);
    if (!name_ok(name))
      return tw_fail(d, TW_DIAG_NO_OFFSET, "corrupt .twasm_ptx section: malformed kernel name at byte %zu", at);
    if (dir && !write_ptx(dir, name, arch, data + body, len, d)) return false;
    (*count)++;
    at = body + len;
  }
  return true;
}

/* Every .twasm_ptx section of e through split_records. */
static bool each_section(Elf *e, size_t shstrndx, const char *dir, unsigned *count, bool *found, tw_diag *d) {
  bool ok = true;
  for (Elf_Scn *s = elf_nextscn(e, NULL); ok && s; s = elf_nextscn(e, s)) {
    GElf_Shdr sh;
    const char *name = gelf_getshdr(s, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
    if (!name || strcmp(name, ".twasm_ptx") != 0) continue;
    *found = true;
    Elf_Data *data = elf_getdata(s, NULL);
    if (data && data->d_buf) ok = split_records(data->d_buf, data->d_size, dir, count, false, d);
  }
  return ok;
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
  unsigned checked = 0;
  /* all checked before the first file is written: a corrupt section
   * leaves no partial output */
  ok = ok && each_section(e, shstrndx, NULL, &checked, &found, d);
  if (ok && found) {
    mkdir(dir, 0777);
    ok = each_section(e, shstrndx, dir, count, &found, d);
  }
  if (ok && !found) ok = tw_fail(d, TW_DIAG_NO_OFFSET, "no embedded PTX (no .twasm_ptx section): compiled with --no-offload, or no loop was offloaded");
  if (e) elf_end(e);
  close(fd);
  return ok;
}
