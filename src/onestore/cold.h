// ONESTORE_COLD: a function no measured workload runs in a loop (opening a
// store, declaring a table, restoring, snapshots), optimized for size rather
// than speed where the compiler can be told so per function (clang: the wasm
// build; issue 13, the download). It marks the function's own code only: what
// it calls keeps its file's level. g++ (the native build) leaves it as it is.
#ifndef ONESTORE_ONESTORE_COLD_H_
#define ONESTORE_ONESTORE_COLD_H_

#if defined(__clang__)
#define ONESTORE_COLD __attribute__((minsize, cold))
#else
#define ONESTORE_COLD
#endif

// ONESTORE_NOINLINE: a small function kept out of line where inlining it into
// many callers (each of a std::map's operations) would grow the download for
// no measured speed.
#if defined(__GNUC__) || defined(__clang__)
#define ONESTORE_NOINLINE __attribute__((noinline))
#else
#define ONESTORE_NOINLINE
#endif

#endif  // ONESTORE_ONESTORE_COLD_H_
