// Why a target of issue 5 is missed, from the profiles (bench/README.md,
// "Profiling"). Keyed by the target ids of bench/lib/report.mjs; the report
// prints the text of every missed target.
export const WHY = {};
