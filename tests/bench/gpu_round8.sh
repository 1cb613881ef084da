#!/usr/bin/env bash
# gpu_round8.sh: the two device calls of issue 20 round 8 as they ran, from
# the root of a tree with build/carry-gpu/{e2e,bench/llm,before/llm,mv,matvec_bw.cu}
# (docs/PERFORMANCE.md, "Attention's copies and the measured choice" and "The add
# chain ..."): `gpu_round8.sh 1` or `gpu_round8.sh 2`, logs under $OUT.  Their trace
# summaries printed nothing (call 1 grepped source names, call 2 f13_nest/f14_nest:
# not found why); the launch counts in the doc come from the profiles.
case ${1:-1} in
1)
  set -u
  C=build/carry-gpu
  O=${OUT:?}
  t0=$(date +%s)
  nvidia-smi -L >"$O/smi.txt" 2>&1
  GPU_TEST_TIMEOUT=20 timeout 60 bash tests/gpu/e2e.sh "$C/e2e" "$O/e2e" >"$O/e2e.txt" 2>&1
  echo "e2e done $(( $(date +%s) - t0 )) s"; tail -n 3 "$O/e2e.txt"
  LLM_BEFORE=$C/before/llm LLM_AB_SET=phases LLM_AB_ARGS="full phases" LLM_AB_PROFILE_COUNT=1 \
    timeout 90 bash tests/bench/gpu_llm_ab.sh "$C/bench" 2 "$O/ab" >"$O/ab.txt" 2>&1
  echo "ab done $(( $(date +%s) - t0 )) s"; cat "$O/ab.txt"
  for b in bench before; do
    TWASM_DEVICE=auto TWASM_GPU_START_MS=0 TWASM_TRACE=1 timeout 25 "$C/$b/llm" 128 full >"$O/trace.$b.out" 2>"$O/trace.$b.err"
    for k in heads_scores heads_mix; do
      echo "== $b $k"
      grep "offload $k " "$O/trace.$b.err" | grep -v 'params\|(part' | sed -E 's/[0-9]+(\.[0-9]+)?/N/g' | sort | uniq -c | sort -rn | head -8
    done
    grep -E "offload heads_(scores|mix) .*gpu:" "$O/trace.$b.err" | tail -n 4
    tail -n 1 "$O/trace.$b.out"
  done
  gzip -q "$O"/trace.*.err
  echo "trace done $(( $(date +%s) - t0 )) s"
  if nvcc -O2 -Xcompiler -ffp-contract=off -o "$O/matvec_bw" "$C/matvec_bw.cu" -lcuda >"$O/nvcc.log" 2>&1; then
    for v in "$C/mv/ptx" "$C"/mv/variants/*/; do
      v=${v%/}; n=$(basename "$v"); r=16
      echo "== $n"
      timeout 30 "$O/matvec_bw" "$v" --rows $r --sweep >"$O/mv.$n.log" 2>&1
      grep -E '^(correctness|copy|matvec|FAIL)' "$O/mv.$n.log" | sed -E 's/ \(back to back.*//'
      [ $(( $(date +%s) - t0 )) -gt 185 ] && break
    done
    rm -f "$O/matvec_bw"
  else
    echo "nvcc failed"; tail -n 5 "$O/nvcc.log"
  fi
  echo "all done $(( $(date +%s) - t0 )) s"
  ;;
*)
  set -u
  C=build/carry-gpu
  O=${OUT:?}
  T=$(mktemp -d)
  t0=$(date +%s)
  GPU_TEST_TIMEOUT=20 timeout 40 bash tests/gpu/e2e.sh "$C/e2e" "$T/e2e" >"$O/e2e.txt" 2>&1
  tail -n 7 "$O/e2e.txt"
  LLM_BEFORE=$C/before/llm LLM_AB_SET=phases LLM_AB_ARGS="full phases" LLM_AB_PROFILE_COUNT=1 \
    timeout 100 bash tests/bench/gpu_llm_ab.sh "$C/bench" 3 "$T/ab" >"$O/ab.txt" 2>&1
  echo "ab done $(( $(date +%s) - t0 )) s"; cat "$O/ab.txt"
  for b in bench before; do
    TWASM_DEVICE=auto TWASM_GPU_START_MS=0 TWASM_TRACE=1 timeout 25 "$C/$b/llm" 128 full >"$T/t.out" 2>"$T/t.err"
    tail -n 1 "$T/t.out"
    for k in f13_nest f14_nest; do
      echo "== $b $k: launches by outcome"
      grep -E "offload ${k}[0-9_part]* \(" "$T/t.err" | sed -E 's/ \[[0-9.]+ ms\]//; s/[0-9]+(\.[0-9]+)?/N/g' | sort | uniq -c | sort -rn | head -6
      echo "== $b $k: bytes copied per launch (count, bytes)"
      grep -E "offload ${k}[0-9_part]* \(.*gpu:" "$T/t.err" | sed -nE 's/.*device copy: ([0-9]+) bytes copied.*/\1/p' | sort -n | uniq -c | sort -rn | head -6
    done
    grep -E "offload f1[34]_nest[0-9]* \(.*gpu:" "$T/t.err" | tail -n 2
    grep -E "offload f1[34]_nest[0-9]* \(.*cpu: cost" "$T/t.err" | tail -n 2
  done
  echo "all done $(( $(date +%s) - t0 )) s"
  rm -rf "$T"
  ;;
esac
