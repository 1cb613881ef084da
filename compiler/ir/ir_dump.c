/* ir_dump.c: text dumps of loops and affine forms, for tests and debugging. */
#include <inttypes.h>
#include <string.h>

#include "ir.h"

/* Unnamed values have only the slot number the printer gives them: the
 * text before " = " for an instruction, the last word for an argument. */
static void put_unnamed(FILE *out, LLVMValueRef v) {
  char *text = LLVMPrintValueToString(v);
  char *eq = strstr(text, " = ");
  char *word = text;
  if (LLVMIsAInstruction(v) && eq) *eq = '\0';
  else if (strrchr(text, ' ')) word = strrchr(text, ' ') + 1;
  fputs(word + strspn(word, " "), out);
  LLVMDisposeMessage(text);
}

static void put_value(FILE *out, LLVMValueRef v) {
  size_t len;
  const char *name = LLVMGetValueName2(v, &len);
  if (LLVMIsAConstantInt(v)) fprintf(out, "%lld", LLVMConstIntGetSExtValue(v));
  else if (len) fprintf(out, "%%%s", name);
  else put_unnamed(out, v);
}

/* Unnamed blocks go by their reverse post-order number. */
static void put_block(FILE *out, const char *before, const ir_cfg *cfg, int b) {
  const char *name = LLVMGetBasicBlockName(cfg->blocks[b].bb);
  if (*name) fprintf(out, "%s%s", before, name);
  else fprintf(out, "%s#%d", before, b);
}

static void dump_trip(FILE *out, const ir_trip *t, const ir_cfg *cfg, int indent) {
  static const char *preds[] = {
      [LLVMIntEQ] = "eq",   [LLVMIntNE] = "ne",   [LLVMIntUGT] = "ugt", [LLVMIntUGE] = "uge",
      [LLVMIntULT] = "ult", [LLVMIntULE] = "ule", [LLVMIntSGT] = "sgt", [LLVMIntSGE] = "sge",
      [LLVMIntSLT] = "slt", [LLVMIntSLE] = "sle"};
  if (t->kind == IR_TRIP_NONE) {
    fprintf(out, "%*strip: unknown\n", indent, "");
    return;
  }
  fprintf(out, "%*strip: ", indent, "");
  if (t->kind == IR_TRIP_CONST) fprintf(out, "%" PRIu64 " ", t->count);
  fputs("while ", out);
  put_value(out, t->iv->phi);
  fprintf(out, "%s %s ", t->cmp_next ? "+step" : "", preds[t->pred]);
  put_value(out, t->bound);
  fprintf(out, " (i%u, start ", t->bits);
  put_value(out, t->start);
  fprintf(out, ", step %" PRId64, t->step);
  put_block(out, ", exit ", cfg, t->exit.from);
  put_block(out, "->", cfg, t->exit.to);
  fprintf(out, "%s)\n", t->other_exits ? ", other exits" : "");
}

static void dump_loop(FILE *out, const ir_loop *l, const ir_cfg *cfg) {
  int indent = 2 * (l->depth - 1);
  fprintf(out, "%*s", indent, "");
  put_block(out, "loop ", cfg, l->header);
  fprintf(out, " depth %d", l->depth);
  if (l->preheader >= 0) put_block(out, " preheader ", cfg, l->preheader);
  else fputs(" preheader -", out);
  fputs(" latches", out);
  for (int i = 0; i < l->nlatches; i++) put_block(out, " ", cfg, l->latches[i]);
  fputs(" body", out);
  for (int i = 0; i < l->nbody; i++) put_block(out, " ", cfg, l->body[i]);
  fputs(" exits", out);
  for (int i = 0; i < l->nexits; i++) {
    put_block(out, " ", cfg, l->exits[i].from);
    put_block(out, "->", cfg, l->exits[i].to);
  }
  fputc('\n', out);
  for (int i = 0; i < l->nivs; i++) {
    fprintf(out, "%*s  iv ", indent, "");
    put_value(out, l->ivs[i].phi);
    fputs(" {", out); /* start, then step per iteration, as SCEV writes it */
    put_value(out, l->ivs[i].start);
    fprintf(out, ",+,%" PRId64 "}\n", l->ivs[i].step);
  }
  dump_trip(out, &l->trip, cfg, indent + 2);
  for (int i = 0; i < l->nchildren; i++) dump_loop(out, l->children[i], cfg);
}

void ir_dump_loops(FILE *out, const ir_loops *lp) {
  for (int i = 0; i < lp->nroots; i++) dump_loop(out, lp->roots[i], lp->cfg);
}

void ir_dump_affine(FILE *out, const ir_affine *a) {
  if (!a->ok) {
    fputs("not affine\n", out);
    return;
  }
  for (int i = 0; i < a->nterms; i++) {
    fprintf(out, "%" PRId64, a->terms[i].coeff);
    if (a->terms[i].inv) fputc('*', out), put_value(out, a->terms[i].inv);
    if (a->terms[i].iv) fputc('*', out), put_value(out, a->terms[i].iv->phi);
    fputs(" + ", out);
  }
  fprintf(out, "%" PRId64 "%s\n", a->constant, a->may_wrap ? " (may wrap)" : "");
}
