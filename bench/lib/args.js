// The `--name value` options of the one-process-per-run benchmarks (sync, feed, coupons, content,
// poll): `arg(name, fallback)` answers the value after `--name`, else the fallback.
export function argReader(argv = process.argv.slice(2)) {
  return (name, fallback) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : fallback;
  };
}
