#!/usr/bin/env bash
# gpu.sh BIN_DIR [LOG_DIR]: runs the GPU benchmark programs built by
# `make gpu-bench-apps` (tests/bench/gpu/*.c -> BIN_DIR) under
# TWASM_DEVICE=cpu and gpu where that means something, builds copy_bw.cu
# and tests/bench/gpu_mm/cublas_mm.cu with nvcc when it is there, and
# prints one markdown table of figures with gpu/cpu and twasmc/reference
# ratios, then gpu_llm.sh's (the LLM-style program in tokens/s under cpu,
# gpu and auto; the matrix-vector kernel against the copy bandwidth).  CPU runs of large products are skipped (mm at 4096, mm_i8).
# Where BIN_DIR/tc holds the tensor-core harness (make gpu-bench-apps),
# its packed-product timings are rows too ("kernel: ...").
# Figures, not tests: a failed run shows as "-" and the script goes on.
set -u
bin=${1:?usage: gpu.sh BIN_DIR [LOG_DIR]}
logs=${2:-${TMPDIR:-/tmp}/twasm-gpu-bench}
limit=${GPU_BENCH_TIMEOUT:-240}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$logs"
rows=()

# run TAG MODE PROG ARGS...: output in $logs/TAG.MODE.log, wall seconds of
# the whole program in $logs/TAG.MODE.wall; "-" when it failed.
run() {
  local tag=$1 mode=$2 prog=$3
  shift 3
  local log=$logs/$tag.$mode.log t0 t1
  t0=$(date +%s.%N)
  if TWASM_DEVICE=$mode TWASM_TRACE=1 timeout "$limit" "$bin/$prog" "$@" >"$log" 2>"$log.err"; then
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }' >"$logs/$tag.$mode.wall"
  else
    echo "run failed: $prog $* (TWASM_DEVICE=$mode, status $?)" >>"$log"
    echo - >"$logs/$tag.$mode.wall"
  fi
}

# fig FILE PATTERN: the number just before PATTERN in FILE ("-" if none).
fig() {
  local v
  v=$(grep -o -E "[0-9.e+-]+ $2" "$1" 2>/dev/null | head -n 1 | cut -d' ' -f1)
  echo "${v:--}"
}

ratio() {
  if [[ $1 =~ ^[0-9.e+-]+$ && $2 =~ ^[0-9.e+-]+$ ]]; then
    awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx\n", a / b; else print "-" }'
  else
    echo -
  fi
}

launched() { grep -c -E '^twasm: offload [^ ]+( \([a-z]+\))?: gpu' "$1" 2>/dev/null || true; }

# row NAME UNIT CPU GPU REF REFNAME: one table line.
row() {
  rows+=("| $1 | $2 | $3 | $4 | $(ratio "$4" "$3") | $5 | $(ratio "$4" "$5") |")
}

{
  command -v nvidia-smi >/dev/null && nvidia-smi
  uname -a
  nproc
} >"$logs/machine.log" 2>&1

# Reference programs (CUDA toolkit only).
ref_copy=- ref_i8=- ref_tf32=- ref_f32=-
if command -v nvcc >/dev/null; then
  if nvcc -O2 -o "$logs/copy_bw" "$here/gpu/copy_bw.cu" >"$logs/nvcc.log" 2>&1; then
    "$logs/copy_bw" 1024 >"$logs/copy_bw.log" 2>&1
    ref_copy=$(fig "$logs/copy_bw.log" GB/s)
  fi
  if nvcc -O2 -o "$logs/cublas_mm" "$here/gpu_mm/cublas_mm.cu" -lcublas >>"$logs/nvcc.log" 2>&1; then
    "$logs/cublas_mm" 4096 >"$logs/cublas_mm.log" 2>&1
    ref_i8=$(grep 'cublas int8' "$logs/cublas_mm.log" | grep -o -E '[0-9.]+ TOPS' | cut -d' ' -f1)
    ref_tf32=$(grep 'cublas tf32' "$logs/cublas_mm.log" | grep -o -E '[0-9.]+ TFLOP/s' | cut -d' ' -f1)
    ref_f32=$(grep 'cublas f32' "$logs/cublas_mm.log" | grep -o -E '[0-9.]+ TFLOP/s' | cut -d' ' -f1)
  fi
  ref_i8=${ref_i8:--} ref_tf32=${ref_tf32:--} ref_f32=${ref_f32:--}
fi

# map: 1 GiB of arrays (512 MiB in, 512 MiB out), GB/s.
run map cpu map 512 5
run map gpu map 512 10
row "map f32, 2 x 512 MiB (GB/s, read+write)" GB/s "$(fig "$logs/map.cpu.log" GB/s)" \
  "$(fig "$logs/map.gpu.log" GB/s)" "${ref_copy:--}" 

# the same map with both arrays 4 bytes past a 16-byte boundary: the
# kernel's element-aligned copy instead of its 16-byte vectors.
run map1 gpu map 512 10 1
row "map f32, arrays one element off 16-byte alignment (GB/s)" GB/s - \
  "$(fig "$logs/map1.gpu.log" GB/s)" "${ref_copy:--}"

# 2-D five-point Jacobi step, 8192 x 8192 f32 (GB/s: one read and one write
# per point).
run jacobi cpu jacobi 8192 2
run jacobi gpu jacobi 8192 10
row "jacobi f32 2-D 5-point step, 8192^2 (GB/s, read+write)" GB/s \
  "$(fig "$logs/jacobi.cpu.log" GB/s)" "$(fig "$logs/jacobi.gpu.log" GB/s)" "${ref_copy:--}"

# launch overhead: 256 elements x 10000 calls.
run launch cpu launch 256 10000
run launch gpu launch 256 10000
row "tiny map, 256 elements (us per call; launched $(launched "$logs/launch.gpu.log.err"))" us \
  "$(fig "$logs/launch.cpu.log" 'us per call')" "$(fig "$logs/launch.gpu.log" 'us per call')" -

# exact f32 products, TFLOP/s of the call; CPU at 1024 and 2048 only.
for n in 1024 2048 4096; do
  reps=3
  cpu=-
  if [ "$n" != 4096 ]; then
    run mm$n cpu mm "$n" 1
    cpu=$(fig "$logs/mm$n.cpu.log" TFLOP/s)
  fi
  run mm$n gpu mm "$n" "$reps"
  ref=-
  [ "$n" = 4096 ] && ref=$ref_f32
  row "mm f32 exact $n (TFLOP/s)" TFLOP/s "$cpu" "$(fig "$logs/mm$n.gpu.log" TFLOP/s)" "$ref"
done
# End to end: the whole program at 2048, one product (data set-up, product,
# checksum), wall clock around the process.
run mm2048e gpu mm 2048 1
row "mm f32 2048 end to end (s, whole program)" s "$(cat "$logs/mm2048.cpu.wall")" \
  "$(cat "$logs/mm2048e.gpu.wall")" -
if ! cmp -s <(grep -o 'checksum.*' "$logs/mm2048.cpu.log") <(grep -o 'checksum.*' "$logs/mm2048e.gpu.log"); then
  rows+=("| mm f32 2048: cpu and gpu checksums DIFFER | | | | | | |")
fi

# The textbook ijk order (dot product per element, B read by columns): the
# same exact kernel on the GPU, a scalar strided loop on the CPU.
run mm_ijk cpu mm_ijk 2048
run mm_ijk gpu mm_ijk 2048
row "mm_ijk f32 2048 end to end (s, whole program)" s "$(cat "$logs/mm_ijk.cpu.wall")" \
  "$(cat "$logs/mm_ijk.gpu.wall")" -
if ! cmp -s <(grep -o 'checksum.*' "$logs/mm_ijk.cpu.log") <(grep -o 'checksum.*' "$logs/mm_ijk.gpu.log"); then
  rows+=("| mm_ijk f32 2048: cpu and gpu checksums DIFFER | | | | | | |")
fi
# The fixed cost in every GPU process: driver, context, managed memory.
init=-
if cc -std=c11 -D_GNU_SOURCE -O2 -o "$logs/init_cost" "$here/gpu_init/init_cost.c" -ldl >>"$logs/nvcc.log" 2>&1; then
  "$logs/init_cost" >"$logs/init_cost.log" 2>&1
  init=$(grep -o -E 'total [0-9.]+' "$logs/init_cost.log" | cut -d' ' -f2)
fi
row "driver + context + managed memory set-up (ms)" ms - "${init:--}" -

# tensor-core products at 4096 (GPU only).
run mm_tf32 gpu mm_tf32 4096 10
row "mm tf32 4096 (TFLOP/s)" TFLOP/s - "$(fig "$logs/mm_tf32.gpu.log" TFLOP/s)" "$ref_tf32"
run mm_i8 gpu mm_i8 4096 10
row "mm int8 4096 (TOPS)" TOPS - "$(fig "$logs/mm_i8.gpu.log" TOPS)" "$ref_i8"
run mm_i8_1024 cpu mm_i8 1024 1
run mm_i8_1024 gpu mm_i8 1024 3
row "mm int8 1024 (TOPS)" TOPS "$(fig "$logs/mm_i8_1024.cpu.log" TOPS)" \
  "$(fig "$logs/mm_i8_1024.gpu.log" TOPS)" -

# The same products as kernels alone (tests/gpu/wmma harness, built by
# `make gpu-bench-apps` into BIN_DIR/tc): packed product and pack launched
# by runtime/rt_tc.c, best of 10, no Wasm program around them.
if [ -x "$bin/tc/wmma_mm" ] && [ -d "$bin/tc/ptx" ]; then
  timeout "$limit" "$bin/tc/wmma_mm" "$bin/tc/ptx" tc-bench >"$logs/tc.log" 2>&1
  # tcfig LINE UNIT: the figure before UNIT on the harness line starting LINE
  tcfig() {
    local v
    v=$(grep -F "$1" "$logs/tc.log" | head -n 1 | grep -o -E "[0-9.]+ $2" | cut -d' ' -f1)
    echo "${v:--}"
  }
  row "kernel: int8 4096 C = A B, packed product (TOPS)" TOPS - \
    "$(tcfig 'sm_90a packed tc (pack included) s8' TOPS)" "$ref_i8"
  row "kernel: int8 4096 C += A B, packed product (TOPS)" TOPS - \
    "$(tcfig 'sm_90a packed tc, C += (pack included) s8' TOPS)" "$ref_i8"
  row "kernel: tf32 4096, packed product (TFLOP/s)" TFLOP/s - \
    "$(tcfig 'sm_90a packed tc (pack included) tf32' TFLOP/s)" "$ref_tf32"
fi

# batched 16x16x16 products per second.
run batch16 cpu batch16 65536 3
run batch16 gpu batch16 65536 5
for t in f32 i8; do
  row "batch16 $t, 65536 products (products/s; launched $(launched "$logs/batch16.gpu.log.err"))" \
    products/s "$(grep "batch16 $t" "$logs/batch16.cpu.log" | grep -o -E '[0-9.e+]+ products/s' | cut -d' ' -f1)" \
    "$(grep "batch16 $t" "$logs/batch16.gpu.log" | grep -o -E '[0-9.e+]+ products/s' | cut -d' ' -f1)" -
done

# The LLM-style program and the matrix-vector kernel: a table of their own.
bash "$here/gpu_llm.sh" "$bin" "$logs/llm" >"$logs/llm.md" 2>&1

echo "| benchmark | unit | cpu | gpu | gpu/cpu | reference | gpu/reference |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "Reference: copy_bw (cudaMemcpy device to device, 1 GiB) for map; cuBLAS at 4096 for"
echo "f32 (CUBLAS_COMPUTE_32F), tf32 and int8.  For us per call and seconds lower is better."
[ -s "$logs/init_cost.log" ] && cat "$logs/init_cost.log"
echo
cat "$logs/llm.md"
echo "Logs: $logs (machine.log: nvidia-smi, uname, nproc)."
