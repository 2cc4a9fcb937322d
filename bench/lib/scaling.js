// The scaling line of a benchmark run with `--workers N`: per database, the rate of the daemon
// alone next to that of `cashtrack serve --workers N` on the same load, and their ratio.

/** Prints `scaling <db>: 1 worker X unit, N workers Y unit: ×ratio` for each database measured both ways. */
export function printScaling(results, rate, unit) {
  for (const one of results.filter((r) => r.workers === 1)) {
    for (const many of results.filter((r) => r.db === one.db && r.workers > 1)) {
      console.log(
        `scaling ${one.db}: 1 worker ${rate(one).toFixed(0)} ${unit}, ${many.workers} workers ${rate(many).toFixed(0)} ${unit}: ×${(rate(many) / rate(one)).toFixed(2)}`,
      );
    }
  }
}
