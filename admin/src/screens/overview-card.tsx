// The overview's building blocks: one card (its title, what sits beside the title, its body) and
// one table of figures (a header row whose number columns are right-aligned, as amounts are).
import { Card, CardBody, CardHeader } from '@wordpress/components';
import type { ReactNode } from 'react';

export function SummaryCard({ title, className, aside, children }: { title: ReactNode; className?: string; aside?: ReactNode; children: ReactNode }) {
  return (
    <Card className={className}>
      <CardHeader>
        <h2>{title}</h2>
        {aside}
      </CardHeader>
      <CardBody>{children}</CardBody>
    </Card>
  );
}

export interface FigureColumn {
  label: ReactNode;
  /** A column of numbers: right-aligned. */
  num?: boolean;
}

/** A table of figures, or `empty` (a sentence) when it has no rows. */
export function FigureTable({ columns, empty, children }: { columns: FigureColumn[]; empty?: string | null; children: ReactNode }) {
  if (empty) return <p>{empty}</p>;
  return (
    <table className="ct-table">
      <thead>
        <tr>
          {columns.map((c, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the columns are fixed; a label may be an element.
            <th key={i} scope="col" className={c.num ? 'ct-num' : undefined}>
              {c.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
