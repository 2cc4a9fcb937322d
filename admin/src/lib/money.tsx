// Amounts are the API's decimal strings, shown as they are (never through a float), right-aligned.

/** "12.50 EUR"; an absent amount is a dash. */
export function Money({ amount, currency }: { amount: string | null | undefined; currency?: string | null }) {
  if (amount === null || amount === undefined) return <span className="ct-money">—</span>;
  const negative = amount.startsWith('-');
  return (
    <span className={negative ? 'ct-money ct-negative' : 'ct-money'}>
      {amount}
      {currency ? <span className="ct-currency"> {currency}</span> : null}
    </span>
  );
}

/** A table cell of an amount with how many it adds up: "120.00 (4)". */
export function CountedMoneyCell({ figure }: { figure: { commission: string | null; count: number } }) {
  return (
    <td className="ct-num">
      <Money amount={figure.commission} /> <span className="ct-aside">({figure.count})</span>
    </td>
  );
}
