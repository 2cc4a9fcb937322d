import type { ReactNode } from 'react';
import { href, onLinkClick } from './router';

/** An in-app link: a real <a href> (keyboard, middle click, copy link), followed without a reload. */
export function Link({
  to,
  query,
  children,
  className,
}: {
  to: string;
  query?: Record<string, string | number | undefined>;
  children: ReactNode;
  className?: string;
}) {
  return (
    <a href={href(to, query)} onClick={onLinkClick} className={className}>
      {children}
    </a>
  );
}
