// Configuration: JSON defaults in config/, a per-environment file beside them, then CASHTRACK_*
// environment variables; validated once at start with a message that names the bad key.
// The pieces live in src/config/ (types, schema, variables, merging); this file loads and re-exports.
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceError } from '../errors.js';
import { privateDir, tighten } from '../private-files.js';
import type { Config } from './types.js';
import { coerceEnv, ENV_KEYS } from './env.js';
import { schema } from './schema.js';
import { deepMerge, getPath, readJson, setPath } from './merge.js';

export { SCHEDULE_NAMES, PER_NETWORK_SCHEDULES } from './types.js';
export type { ScheduleName, ScheduleConfig, Config, PageTemplate, AiPrompt, AiConfig, WatchdogConfig } from './types.js';
export { ENV_KEYS } from './env.js';
export { HOST_ENTRY } from './schema.js';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), fileURLToPath(import.meta.url).includes('/dist/') ? '../../..' : '../..');

export interface LoadOptions {
  /** Environment to read CASHTRACK_* variables from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Values applied last, e.g. `--port` on the command line or a test's database URL. */
  overrides?: Record<string, unknown>;
  /** Directory holding default.json and <env>.json (default: the project's config/). */
  configDir?: string;
  /** Generate and keep a secret in the data directory when none is configured (not in production). */
  persistSecret?: boolean;
}

/** Loads, merges and validates the configuration. Throws ServiceError `svc_invalid_config`. */
export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const dir = options.configDir ?? join(projectRoot, 'config');
  const envName = env.CASHTRACK_ENV ?? env.NODE_ENV ?? 'development';
  let merged: Record<string, unknown> = readJson(join(dir, 'default.json'));
  const envFile = join(dir, `${envName}.json`);
  if (existsSync(envFile)) merged = deepMerge(merged, readJson(envFile));
  merged.env = envName;
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    setPath(merged, key, coerceEnv(name, key, raw, getPath(merged, key)));
  }
  for (const [key, value] of Object.entries(options.overrides ?? {})) setPath(merged, key, value);

  const { value, error } = schema.validate(merged, { abortEarly: true, convert: true, errors: { wrap: { label: false } } });
  if (error) {
    const detail = error.details[0];
    const key = detail.path.join('.');
    // A list item's path ends in its index (server.allowed_hosts.1): the variable set the whole list.
    const fromEnv = Object.keys(ENV_KEYS).find((name) => env[name] && (ENV_KEYS[name] === key || key.startsWith(`${ENV_KEYS[name]}.`)));
    const where = fromEnv ? `${fromEnv} (${key})` : key;
    throw new ServiceError('svc_invalid_config', `Invalid configuration ${where}: ${detail.message.replace(/^[\w.[\]]+ /, '')}`, 500, { key });
  }
  const config = value as Config;
  config.data_dir = isAbsolute(config.data_dir) ? config.data_dir : resolve(process.cwd(), config.data_dir);
  if (!config.secret) {
    if (config.env === 'production') {
      throw new ServiceError('svc_invalid_config', 'Invalid configuration CASHTRACK_SECRET (secret): required in production (at least 32 characters)', 500, {
        key: 'secret',
      });
    }
    config.secret = options.persistSecret === false ? randomBytes(32).toString('hex') : readOrCreateSecret(config.data_dir);
  }
  // Without it the Host header of each request would become the site URL of index documents and links.
  if (config.env === 'production' && !config.server.public_url) {
    throw new ServiceError(
      'svc_invalid_config',
      'Invalid configuration CASHTRACK_PUBLIC_URL (server.public_url): required in production (the URL clients reach the daemon at, e.g. https://admin.example.com)',
      500,
      { key: 'server.public_url' },
    );
  }
  return config;
}

function readOrCreateSecret(dataDir: string): string {
  const file = join(dataDir, 'secret');
  if (existsSync(file)) {
    tighten(file);
    const secret = readFileSync(file, 'utf8').trim();
    if (secret.length >= 32) return secret;
    throw new ServiceError('svc_invalid_config', `Invalid configuration secret: ${file} holds fewer than 32 characters`, 500, { key: 'secret' });
  }
  privateDir(dataDir);
  const secret = randomBytes(32).toString('hex');
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  return secret;
}
