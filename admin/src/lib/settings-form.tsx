// A settings form over a GET/POST settings route with one write-only secret (the AI provider's API
// key, the PayPal client secret): the stored view, the form edited from it, the secret (null until
// the user asks to set one), what changed, and saving only that. The route answers the new view.
import { Button, Notice, TextControl } from '@wordpress/components';
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, errorMessage } from './api';

export interface SettingsForm<V> {
  settings: V | null;
  form: Record<string, string>;
  setField: (name: string, value: string) => void;
  secret: string | null;
  setSecret: (value: string | null) => void;
  error: string | null;
  saved: boolean;
  dismissSaved: () => void;
  busy: boolean;
  dirty: boolean;
  save: (event: FormEvent) => void;
  /** Back to the stored view, the secret untouched. */
  undo: () => void;
}

/**
 * `formOf` makes the form's text fields of a view; `value` what a changed field sends (an emptied
 * one sends null: the setting is removed); `secretName` is the secret's name in the POST.
 */
export function useSettingsForm<V>({
  path,
  formOf,
  secretName,
  value = (_name, text) => text,
}: {
  path: string;
  formOf: (view: V) => Record<string, string>;
  secretName: string;
  value?: (name: string, text: string) => string | number;
}): SettingsForm<V> {
  const [settings, setSettings] = useState<V | null>(null);
  const [form, setForm] = useState<Record<string, string>>({});
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: formOf is a module-level function of its screen.
  const show = useCallback((view: V) => {
    setSettings(view);
    setForm(formOf(view));
    setSecret(null);
  }, []);
  useEffect(() => {
    api<V>(path).then(show, (err: unknown) => setError(errorMessage(err)));
  }, [path, show]);
  const initial = settings ? formOf(settings) : {};
  const changed = Object.keys(form).filter((k) => form[k] !== initial[k]);
  const dirty = changed.length > 0 || (secret !== null && secret !== '');
  const save = (event: FormEvent) => {
    event.preventDefault();
    if (!dirty || busy) return;
    const data: Record<string, string | number | null> = {};
    for (const k of changed) data[k] = form[k] === '' ? null : value(k, form[k]!);
    if (secret) data[secretName] = secret;
    setBusy(true);
    setError(null);
    setSaved(false);
    api<V>(path, { method: 'POST', data }).then(
      (view) => {
        show(view);
        setSaved(true);
        setBusy(false);
      },
      (err: unknown) => {
        setError(errorMessage(err));
        setBusy(false);
      },
    );
  };
  return {
    settings,
    form,
    setField: (name, text) => setForm({ ...form, [name]: text }),
    secret,
    setSecret,
    error,
    saved,
    dismissSaved: () => setSaved(false),
    busy,
    dirty,
    save,
    undo: () => settings && show(settings),
  };
}

/** The form's error and, once saved, its success notice (in a live region). */
export function SettingsNotices({ state, savedText }: { state: SettingsForm<unknown>; savedText: string }) {
  return (
    <>
      {state.error ? (
        <Notice status="error" isDismissible={false}>
          {state.error}
        </Notice>
      ) : null}
      <div role="status">
        {state.saved ? (
          <Notice status="success" onRemove={state.dismissSaved}>
            {savedText}
          </Notice>
        ) : null}
      </div>
    </>
  );
}

/** The write-only secret: whether one is stored and a button to replace it, then its field. */
export function SecretField({
  state,
  isSet,
  name,
  noun,
  label,
  help,
}: {
  state: SettingsForm<unknown>;
  isSet: boolean;
  /** "API key", "Client secret". */
  name: string;
  /** In the button: "Replace the key", "Set a client secret". */
  noun: string;
  /** The field's label once opened. */
  label: string;
  help: string;
}) {
  if (state.secret === null)
    return (
      <div className="ct-toolbar">
        <span>
          {name}: <strong>{isSet ? 'set' : 'not set'}</strong>
          {isSet ? <span className="ct-aside"> (never shown)</span> : null}
        </span>
        <Button variant="secondary" onClick={() => state.setSecret('')}>
          {isSet ? `Replace the ${noun}` : `Set a ${noun}`}
        </Button>
      </div>
    );
  return (
    <TextControl
      __next40pxDefaultSize
      __nextHasNoMarginBottom
      label={label}
      type="password"
      autoComplete="new-password"
      value={state.secret}
      help={help}
      onChange={state.setSecret}
    />
  );
}

/** Undo and Save, disabled while nothing changed or a save runs. */
export function SettingsButtons({ state, undoText, saveText }: { state: SettingsForm<unknown>; undoText: string; saveText: string }) {
  return (
    <div className="ct-modal-buttons">
      <Button __next40pxDefaultSize variant="tertiary" onClick={state.undo} disabled={!state.dirty || state.busy} accessibleWhenDisabled>
        {undoText}
      </Button>
      <Button __next40pxDefaultSize variant="primary" type="submit" isBusy={state.busy} disabled={!state.dirty || state.busy} accessibleWhenDisabled>
        {saveText}
      </Button>
    </div>
  );
}
