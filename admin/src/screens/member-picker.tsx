// The one member picker: a combobox over GET /lookup/users (a prefix of a login, email or display
// name; at most 20 matches at a time), so finding one member never loads the user table. It
// serves every form that names a member (orders, payouts, referrals) and the members list's finder.
import { ComboboxControl } from '@wordpress/components';
import { useEffect, useState } from 'react';
import { api } from '../lib/api';

interface Match {
  id: number;
  label: string;
}

export function MemberPicker({
  label = 'Member',
  value,
  onChange,
  help,
  initialLabel,
}: {
  label?: string;
  /** The chosen member's id as a string, or null. */
  value: string | null;
  onChange: (id: string | null, label: string | null) => void;
  help?: string;
  /** What to show for `value` before a search has found it (e.g. from the URL). */
  initialLabel?: string;
}) {
  const [search, setSearch] = useState('');
  const [matches, setMatches] = useState<Match[]>([]);
  const [loading, setLoading] = useState(false);
  useEffect(() => {
    let live = true;
    const typed = search.trim() !== '';
    if (typed) setLoading(true);
    // The first matches load at once; what the user types waits for a pause in the typing.
    const timer = window.setTimeout(
      () => {
        api<Match[]>('/lookup/users', { query: { search: search.trim(), per_page: 20 } }).then(
          (found) => {
            if (!live) return;
            setMatches(found);
            setLoading(false);
          },
          () => live && setLoading(false),
        );
      },
      typed ? 200 : 0,
    );
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [search]);
  const options = matches.map((m) => ({ value: String(m.id), label: m.label }));
  if (value && !options.some((o) => o.value === value)) options.unshift({ value, label: initialLabel ?? `Member #${value}` });
  return (
    <ComboboxControl
      __next40pxDefaultSize
      __nextHasNoMarginBottom
      label={label}
      help={help}
      value={value}
      options={options}
      isLoading={loading}
      onFilterValueChange={setSearch}
      onChange={(id) => onChange(id ?? null, options.find((o) => o.value === id)?.label ?? null)}
    />
  );
}
