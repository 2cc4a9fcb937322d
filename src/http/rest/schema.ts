// The translation of Joi schemas into the `args` of the index documents and OPTIONS. The field
// schemas themselves live in src/schemas/fields.ts.
import type Joi from 'joi';

interface ArgSchema {
  type?: string | string[];
  format?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  items?: ArgSchema;
  properties?: Record<string, ArgSchema>;
  required?: boolean;
}

type Description = {
  type: string;
  flags?: { presence?: string; default?: unknown; description?: string; only?: boolean };
  allow?: unknown[];
  rules?: { name: string; args?: Record<string, unknown> }[];
  keys?: Record<string, Description>;
  items?: Description[];
  matches?: { schema: Description }[];
};

function toArg(d: Description): ArgSchema {
  const arg: ArgSchema = {};
  const rules = d.rules ?? [];
  const rule = (name: string) => rules.find((r) => r.name === name)?.args;
  switch (d.type) {
    case 'number':
      arg.type = rule('integer') !== undefined || rules.some((r) => r.name === 'integer') ? 'integer' : 'number';
      break;
    case 'string':
      arg.type = 'string';
      if (rules.some((r) => r.name === 'email')) arg.format = 'email';
      if (rules.some((r) => r.name === 'guid')) arg.format = 'uuid';
      if (rules.some((r) => r.name === 'isoDate')) arg.format = 'date-time';
      break;
    case 'date':
      arg.type = 'string';
      arg.format = 'date-time';
      break;
    case 'boolean':
      arg.type = 'boolean';
      break;
    case 'array':
    case 'commaList': // src/fields.ts anyOf(): an array, also taken comma-separated
      arg.type = 'array';
      if (d.items?.[0]) arg.items = toArg(d.items[0]);
      break;
    case 'object':
      arg.type = 'object';
      if (d.keys) arg.properties = Object.fromEntries(Object.entries(d.keys).map(([k, v]) => [k, toArg(v)]));
      break;
    case 'alternatives':
      arg.type = (d.matches ?? []).map((m) => toArg(m.schema).type as string).filter(Boolean);
      break;
    default:
      arg.type = d.type;
  }
  if (d.flags?.description) arg.description = d.flags.description;
  if (d.flags?.default !== undefined && typeof d.flags.default !== 'function') arg.default = d.flags.default;
  if (d.flags?.only && d.allow) arg.enum = d.allow;
  const min = rule('min')?.limit;
  const max = rule('max')?.limit;
  if (typeof min === 'number') d.type === 'string' ? (arg.minLength = min) : (arg.minimum = min);
  if (typeof max === 'number') d.type === 'string' ? (arg.maxLength = max) : (arg.maximum = max);
  const pattern = rule('pattern')?.regex;
  if (typeof pattern === 'string') arg.pattern = pattern.replace(/^\/|\/[a-z]*$/g, '');
  return arg;
}

/** `args` of an endpoint: one entry per key of its query and payload schemas. */
export function schemaArgs(...schemas: (Joi.ObjectSchema | undefined)[]): Record<string, ArgSchema> {
  const args: Record<string, ArgSchema> = {};
  for (const schema of schemas) {
    if (!schema) continue;
    const described = schema.describe() as Description;
    for (const [key, d] of Object.entries(described.keys ?? {})) args[key] = { ...toArg(d), required: d.flags?.presence === 'required' };
  }
  return args;
}
