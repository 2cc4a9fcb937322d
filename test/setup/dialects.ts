// vitest globalSetup: CI must test both dialects. Without CASHTRACK_TEST_MYSQL_URL the suite would
// quietly run on SQLite alone and pass; with CI set, that is a failed run instead.
export default function checkDialects(): void {
  const ci = process.env.CI;
  if (ci && ci !== 'false' && ci !== '0' && !process.env.CASHTRACK_TEST_MYSQL_URL) {
    throw new Error(
      'CI is set but CASHTRACK_TEST_MYSQL_URL is not: the MariaDB half of the suite would be skipped. ' +
        'Set CASHTRACK_TEST_MYSQL_URL=mysql://root@127.0.0.1:3306/test (see README, Tests), or unset CI to test SQLite only.',
    );
  }
}
