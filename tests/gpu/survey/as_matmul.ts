// as_matmul.ts: matrix products as AssemblyScript users write them (typed arrays
// with checked and unchecked() indexing, StaticArray, raw load/store, a
// matrix-vector product and an axpy map); read by tests/gpu/as_survey.sh.
function fill(a: Float32Array, seed: i32): void {
  let s = seed;
  for (let i = 0; i < a.length; i++) {
    s = s * 1103515245 + 12345;
    a[i] = <f32>((s >>> 16) & 255) / 256.0 - 0.5;
  }
}

// typed arrays, checked indexing
export function mm_typed(a: Float32Array, b: Float32Array, c: Float32Array, n: i32): void {
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let s: f32 = 0;
      for (let k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
}

// typed arrays, unchecked()
export function mm_unchecked(a: Float32Array, b: Float32Array, c: Float32Array, n: i32): void {
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let s: f32 = 0;
      for (let k = 0; k < n; k++) s += unchecked(a[i * n + k]) * unchecked(b[k * n + j]);
      unchecked(c[i * n + j] = s);
    }
}

// StaticArray
export function mm_static(a: StaticArray<f32>, b: StaticArray<f32>, c: StaticArray<f32>, n: i32): void {
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let s: f32 = 0;
      for (let k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
}

// matrix-vector, typed
export function mv_typed(a: Float32Array, x: Float32Array, y: Float32Array, m: i32, n: i32): void {
  for (let i = 0; i < m; i++) {
    let s: f32 = 0;
    for (let j = 0; j < n; j++) s += a[i * n + j] * x[j];
    y[i] = s;
  }
}

// raw pointers (load/store)
export function mm_raw(a: usize, b: usize, c: usize, n: i32): void {
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let s: f32 = 0;
      for (let k = 0; k < n; k++)
        s += load<f32>(a + (<usize>(i * n + k) << 2)) * load<f32>(b + (<usize>(k * n + j) << 2));
      store<f32>(c + (<usize>(i * n + j) << 2), s);
    }
}

// map: elementwise
export function axpy(a: f32, x: Float32Array, y: Float32Array): void {
  for (let i = 0; i < x.length; i++) y[i] = a * x[i] + y[i];
}

function sum(c: Float32Array): f64 {
  let t: f64 = 0;
  for (let i = 0; i < c.length; i++) t += <f64>c[i] * <f64>(i % 7 + 1);
  return t;
}

const N = 96;
let a = new Float32Array(N * N), b = new Float32Array(N * N), c = new Float32Array(N * N);
fill(a, 1); fill(b, 2);
mm_typed(a, b, c, N); console.log("typed " + sum(c).toString());
mm_unchecked(a, b, c, N); console.log("unchecked " + sum(c).toString());
let sa = new StaticArray<f32>(N * N), sb = new StaticArray<f32>(N * N), sc = new StaticArray<f32>(N * N);
for (let i = 0; i < N * N; i++) { sa[i] = a[i]; sb[i] = b[i]; }
mm_static(sa, sb, sc, N);
let t: f64 = 0; for (let i = 0; i < N * N; i++) t += <f64>sc[i] * <f64>(i % 7 + 1);
console.log("static " + t.toString());
let x = new Float32Array(N), y = new Float32Array(N);
fill(x, 3);
mv_typed(a, x, y, N, N); console.log("mv " + sum(y).toString());
mm_raw(a.dataStart, b.dataStart, c.dataStart, N); console.log("raw " + sum(c).toString());
axpy(2.0, x, y); console.log("axpy " + sum(y).toString());
