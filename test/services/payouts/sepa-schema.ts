// Validates a document against an official ISO 20022 schema in test/fixtures/iso20022/, with
// libxml2's xmllint compiled to WebAssembly (no native build, no network).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateXML } from 'xmllint-wasm';

const DIR = join(import.meta.dirname, '../../fixtures/iso20022');

/** The schema's file name, e.g. `pain.001.001.09`. */
export type SchemaName = 'pain.001.001.09' | 'pain.001.001.03' | 'pain.002.001.10' | 'pain.002.001.03';

const cache = new Map<SchemaName, string>();

/** The errors libxml2 reports for `xml` against the schema: none when it is valid. */
export async function schemaErrors(xml: string, name: SchemaName): Promise<string[]> {
  let schema = cache.get(name);
  if (!schema) {
    schema = readFileSync(join(DIR, `${name}.xsd`), 'utf8');
    cache.set(name, schema);
  }
  const result = await validateXML({ xml: { fileName: 'document.xml', contents: xml }, schema: { fileName: `${name}.xsd`, contents: schema } });
  return result.valid ? [] : result.errors.map((e) => e.message);
}
