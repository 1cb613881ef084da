// A JavaScript engine's work: calls (recursion), objects and property
// access, strings, arrays with sorting, closures.
// usage: mujs < bench.js   (sizes fixed: mujs has no argument on stdin).
// The sort comparator is total: mujs sorts with the C library's qsort,
// which orders equal elements differently in glibc and musl.
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
var out = [];
out.push("fib " + fib(24));
var seed = 12345;
function rand(k) { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % k; }
var counts = {};
for (var i = 0; i < 60000; i++) {
  var w = "w" + rand(2000).toString(16) + "_" + rand(17);
  counts[w] = (counts[w] || 0) + 1;
}
var keys = Object.keys(counts).sort();
out.push("keys " + keys.length + " " + keys[0] + " " + keys[keys.length - 1]);
var pts = [];
for (var i = 0; i < 20000; i++) pts.push({ x: rand(1000), y: rand(1000), i: i, tag: "p" + i });
pts.sort(function (a, b) { return a.x - b.x || a.y - b.y || a.i - b.i; });
var sum = 0;
pts.forEach(function (p) { sum += p.x * 3 + p.y; });
out.push("pts " + pts[0].tag + " " + pts[pts.length - 1].tag + " " + sum);
var s = "";
for (var i = 0; i < 3000; i++) s += String.fromCharCode(97 + i % 26);
var parts = s.split("a").map(function (t) { return t.toUpperCase(); }).join("-");
out.push("str " + parts.length + " " + parts.substring(0, 20) + " " + s.replace(/b+c/g, "X").length);
print(out.join("\n"));
