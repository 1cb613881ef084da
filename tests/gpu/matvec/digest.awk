# digest.awk: the summary of one matvec_bw log (round.sh, round2.sh):
# the correctness, copy, floor, pdl, graph, chain, FAIL and status lines
# as they are, each timing shortened to its figure and share of copy, and
# each --sweep fitted: slope 2048 -> 8192 (ns and cycles at 1.98 GHz a
# term) and intercept at K 0.  With -v row=NAME (round3.sh) a last line
# "row | NAME | correct | chain | 2048x768 | 768x2048 | slopes" for its table.
/^device/ { next }
/^correctness/ { correct = $0 ~ /every output bit-identical/ ? "yes" : "NO" }
/^chain/ { chain = $0 ~ /every output bit-identical/ ? "yes" : "NO" }
/^(correctness|copy|floor|pdl|graph|chain|FAIL|status)/ { print; next }
/^matvec / {
  split($3, d, "x"); t = $0; sub(/.*: /, "", t); split(t, f, " ")
  if ($0 ~ /sweep/) { sweep[d[1] " " d[2]] = f[1]; next }
  pct = $0; sub(/% of copy.*/, "", pct); sub(/.* /, "", pct)
  k = $4; gsub(/[(,]/, "", k)
  printf "  %s %s: %s us, %s%% of copy\n", k, $3, f[1], pct
  fig[k " " $3] = f[1] " (" pct " %)"
}
END {
  split("768 2112", outs, " ")
  for (i = 1; i <= 2; i++) {
    o = outs[i]; line = "  sweep " o " outputs:"
    for (k = 256; k <= 8192; k *= 2) line = line " " ((o " " k) in sweep ? sweep[o " " k] : "-")
    if ((o " 2048") in sweep && (o " 8192") in sweep) {
      slope = (sweep[o " 8192"] - sweep[o " 2048"]) / 6144 * 1000
      line = sprintf("%s us; slope %.2f ns (%.2f cycles) a term, intercept %.2f us", line, slope,
                     slope * 1.98, sweep[o " 2048"] - slope * 2048 / 1000)
      cycles[o] = sprintf("%.2f", slope * 1.98)
    }
    print line
  }
  if (row != "")
    printf "row | %s | %s | %s | %s | %s | %s / %s |\n", row, correct == "" ? "-" : correct, chain == "" ? "-" : chain,
           ("mv_f32 2048x768" in fig) ? fig["mv_f32 2048x768"] : "-", ("mv_f32 768x2048" in fig) ? fig["mv_f32 768x2048"] : "-",
           (768 in cycles) ? cycles[768] : "-", (2112 in cycles) ? cycles[2112] : "-"
}
