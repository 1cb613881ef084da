# sass.awk: the summing chain of one kernel's SASS (round3.sh), from
# `cuobjdump -sass` (or `nvdisasm -hex`): each instruction's text and its
# two 64-bit words as /* 0x... */ comments.  Takes the basic block (from a
# label or branch to the next) with the most FADD (else DADD) and prints
# its instructions by opcode, instructions a term (a term: one add), and
# the stall cycles the compiler encoded: bits 41-44 of the second word
# (Volta to Hopper control bits: stall 41-44, yield 45, write barrier
# 46-48, read barrier 49-51, wait mask 52-57, reuse 58-61).  The sum of
# stalls over the block is the fewest cycles the warp takes to issue it
# (scoreboard waits come on top: "adds that wait" counts the FADDs whose
# wait mask is not empty).  With -v show=N the block's first N
# instructions with their stall and wait mask.
function hexval(s,   i, c, v) {
  v = 0; s = tolower(s); sub(/^0x/, "", s)
  for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); v = v * 16 + c - 1 }
  return v
}
function bits(x, lo, n) { return int(x / 2 ^ lo) % (2 ^ n) }
function close_block() {
  if (adds > best_adds) {
    best_adds = adds; best_n = n; best_stall = stall; best_wait = waiting
    for (o in cnt) best_cnt[o] = cnt[o]
    for (i = 1; i <= n; i++) best_line[i] = line[i]
  }
  n = 0; adds = 0; stall = 0; waiting = 0; split("", cnt)
}
BEGIN { add = "FADD" }
/^[ \t]*\.L_x_[0-9]+:/ || /Function :/ { close_block(); next }
/\/\*[0-9a-f]+\*\/[ \t]+[^ ]/ {
  # an instruction line: /*addr*/ [@P] OPCODE ... ; /* 0xlow */
  text = $0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]+/, "", text); sub(/[ \t]*;.*/, "", text)
  op = text; sub(/^@!?U?P[0-9T] /, "", op); sub(/[ \t].*/, "", op)
  pending = 1; next
}
pending && /\/\* 0x[0-9a-f]+ \*\// {
  pending = 0
  hi = $0; sub(/.*\/\* 0x/, "", hi); sub(/ \*\/.*/, "", hi)
  ctl = hexval(substr(hi, 1, 6))   # bits 40-63 of the second word
  st = bits(ctl, 1, 4); wm = bits(ctl, 12, 6)
  n++; stall += st
  base = op; sub(/\..*/, "", base); cnt[base]++
  if (base == add) { adds++; if (wm) waiting++ }
  line[n] = sprintf("    %-44s stall %2d wait %02x", text, st, wm)
  if (base == "BRA" || base == "EXIT" || base == "BAR") close_block()
}
END {
  close_block()
  if (!best_adds) { print "  sass: no " add " block found"; exit }
  other = best_n
  for (o in best_cnt) if (o != "FADD" && o != "FMUL" && o != "LDS") other -= best_cnt[o]
  o = ""; for (k in best_cnt) if (k != "FADD" && k != "FMUL" && k != "LDS") o = o " " k " " best_cnt[k]
  printf "  sass: block of %d instructions: %d FADD, %d FMUL, %d LDS, other%s\n", best_n, best_adds,
         best_cnt["FMUL"], best_cnt["LDS"], o
  printf "  sass: %.2f instructions a term; encoded stalls %d cycles, %.2f a term; adds that wait on a scoreboard %d\n",
         best_n / best_adds, best_stall, best_stall / best_adds, best_wait
  for (i = 1; i <= show && i <= best_n; i++) print best_line[i]
}
