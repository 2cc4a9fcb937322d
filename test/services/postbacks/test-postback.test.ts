import { describe, expect, it } from 'vitest';
import { builtInModules } from '../../../src/networks/index.js';
import { templateMapping } from '../../../src/services/postbacks/test.js';
import { fakeModule } from '../../helpers/networks.js';

describe('test postbacks for built-in networks', () => {
  it('learn which parameter carries which field from the module template and parser', () => {
    expect(templateMapping(fakeModule())).toEqual({
      transaction_id: 'tid',
      status: 'state',
      sale_amount: 'sale',
      commission: 'comm',
      currency: 'cur',
      sub_id: 'clickref',
    });
    expect(templateMapping({ ...fakeModule(), postbackTemplate: undefined })).toBeNull();
  });

  it.each(builtInModules.map((m) => [m.id, m] as const))('can be built for %s', (_id, module) => {
    const mapping = templateMapping(module);
    expect(mapping).toMatchObject({ transaction_id: expect.any(String), commission: expect.any(String), sub_id: expect.any(String) });
  });
});
