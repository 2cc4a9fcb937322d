import { describe, expect, it } from 'vitest';
import { XMLParser } from 'fast-xml-parser';
import { pain001, sepaDestination, sepaMessageId, type BatchItem } from '../../../src/services/payouts/sepa.js';
import { isSepaReference, isSepaText, sepaText } from '../../../src/services/payouts/sepa-text.js';
import { schemaErrors } from './sepa-schema.js';

const item = (over: Partial<BatchItem> = {}): BatchItem => ({
  payout_id: 7,
  member_id: 3,
  login: 'anna',
  display_name: 'Anna Müller',
  amount: '12.50',
  amount_minor: 1250,
  currency: 'EUR',
  method: 'sepa',
  details: 'DE89370400440532013000',
  item_ref: 'B12-P7',
  ...over,
});

const debtor = { name: 'Cashback GmbH & Co. KG', iban: 'DE02120300000000202051', bic: 'BYLADEM1001' };
const batch = { id: 12, created_at: '2026-11-27T14:05:09.123Z' };

/** Several items: an IBAN-only EEA creditor, one with a BIC, one outside the EEA, odd names. */
const items: BatchItem[] = [
  item(),
  item({
    payout_id: 8,
    item_ref: 'B12-P8',
    amount: '0.01',
    amount_minor: 1,
    details: 'FR14 2004 1010 0505 0001 3M02 606 BNPAFRPPXXX',
    display_name: 'Zoë Ŀéger',
  }),
  item({
    payout_id: 9,
    item_ref: 'B12-P9',
    amount: '1999.99',
    amount_minor: 199_999,
    details: '{"iban": "CH93 0076 2011 6238 5295 7", "bic": "UBSWCHZH80A", "name": "Jürg Straße"}',
  }),
  item({ payout_id: 10, item_ref: 'B12-P10', amount: '100.00', amount_minor: 10_000, display_name: '  ', login: 'bob_<script>' }),
];

const parse = (xml: string) => new XMLParser({ ignoreAttributes: false, parseTagValue: false }).parse(xml);

describe('SEPA destinations', () => {
  it('reads an IBAN in electronic or print format, with or without a BIC, or a JSON object', () => {
    expect(sepaDestination(item())).toEqual({ iban: 'DE89370400440532013000', name: 'Anna Mueller' });
    expect(sepaDestination(item({ details: ' de89 3704 0044 0532 0130 00 ' }))).toEqual({ iban: 'DE89370400440532013000', name: 'Anna Mueller' });
    expect(sepaDestination(item({ details: 'IBAN: DE89 3704 0044 0532 0130 00, BIC: cobadeffxxx' }))).toEqual({
      iban: 'DE89370400440532013000',
      bic: 'COBADEFFXXX',
      name: 'Anna Mueller',
    });
    expect(sepaDestination(item({ details: 'DE89370400440532013000 COBADEFF' }))).toMatchObject({ bic: 'COBADEFF' });
    expect(sepaDestination(item({ details: '{"iban":"DE89370400440532013000","name":"Ärzte & Söhne"}' }))).toEqual({
      iban: 'DE89370400440532013000',
      name: 'Aerzte + Soehne',
    });
  });

  it('defaults the creditor name to the display name, then the login', () => {
    expect(sepaDestination(item({ display_name: ' ', login: 'j.doe' }))).toMatchObject({ name: 'j.doe' });
  });

  it.each([
    [{ currency: 'USD' }, 'in EUR; this payout is in USD'],
    [{ amount_minor: 0 }, 'between 0.01 and 999999999.99 EUR'],
    [{ amount_minor: 100_000_000_000 }, 'between 0.01 and 999999999.99 EUR'],
    [{ item_ref: 'has space' }, 'end-to-end id'],
    [{ item_ref: '/B1' }, 'end-to-end id'],
    [{ details: null }, 'no payment details'],
    [{ details: '   ' }, 'no payment details'],
    [{ details: 'DE88370400440532013000' }, 'wrong check digits'],
    [{ details: 'DE8937040044053201300' }, 'wrong length'],
    [{ details: 'paypal: anna@example.com' }, 'not an IBAN'],
    [{ details: 'US12345678901234567890' }, 'known country code'],
    [{ details: 'BR1800360305000010009795493C1' }, 'outside SEPA'],
    [{ details: 'CH9300762011623852957' }, "needs the bank's BIC"],
    [{ details: 'DE89370400440532013000 COBADE1F' }, 'not a BIC'],
    [{ details: 'DE89370400440532013000 DEUTDE01XXX' }, 'not a BIC'],
    [{ details: '{"iban": 42}' }, 'without an "iban" text'],
    [{ details: '{"iban": "DE89370400440532013000", "name": 7}' }, '"name" is not text'],
    [{ details: '{not json' }, 'not JSON'],
    [{ details: '{"iban": "DE89370400440532013000", "name": "李小龍"}' }, 'no letter or digit of the SEPA character set'],
  ] as [Partial<BatchItem>, string][])('holds out %j: %s', (over, reason) => {
    const out = sepaDestination(item(over));
    expect(out).toHaveProperty('reason');
    expect((out as { reason: string }).reason).toContain(reason);
  });

  it('transliterates names to the SEPA character set and cuts them at 70', () => {
    expect(sepaText('Ääkkönen Øster-Ærø, Łódź — “Straße” & Söhne_1 ')).toBe("Aeaekkoenen Oster-AEro, Lodz - 'Strasse' + Soehne-1");
    expect(sepaText('José Núñez Çelik Dvořák Ångström')).toBe('Jose Nunez Celik Dvorak Angstroem');
    expect(sepaText('a\u0000b\tc😀d <e>')).toBe('a b c d e');
    // The mapping table of docs/operations.md.
    expect(sepaText('ẞ æÆœŒøØłŁđĐðÐþÞıħŀ')).toBe('SS aeAEoeOEoOlLdDdDthTHihl');
    expect(sepaText('ﬁ Ａ² ő ş x@y#z*€%')).toBe('fi A2 o s x y z');
    expect(sepaText('"“”„‚‘’«»´` –—‐_ [x]{y}')).toBe("''''''''''' ---- (x)(y)");
    expect(sepaText('x'.repeat(80))).toHaveLength(70);
    expect(isSepaText(sepaText('€ ½ ¿ «» ©'))).toBe(true);
    expect(isSepaReference('B12-P7')).toBe(true);
    expect(isSepaReference('a//b')).toBe(false);
    expect(isSepaReference('x'.repeat(36))).toBe(false);
  });
});

describe('pain.001', () => {
  it('writes a pain.001.001.09 file that the ISO schema accepts, with the right counts and sums', async () => {
    const xml = pain001(batch, debtor, items);
    expect(await schemaErrors(xml, 'pain.001.001.09')).toEqual([]);
    const doc = parse(xml).Document;
    expect(doc['@_xmlns']).toBe('urn:iso:std:iso:20022:tech:xsd:pain.001.001.09');
    const { GrpHdr, PmtInf } = doc.CstmrCdtTrfInitn;
    expect(GrpHdr).toMatchObject({ MsgId: 'CASHTRACK-BATCH-12', CreDtTm: '2026-11-27T14:05:09', NbOfTxs: '4', CtrlSum: '2112.50' });
    expect(PmtInf).toMatchObject({
      PmtInfId: 'CASHTRACK-BATCH-12-1',
      PmtMtd: 'TRF',
      NbOfTxs: '4',
      CtrlSum: '2112.50',
      PmtTpInf: { SvcLvl: { Cd: 'SEPA' } },
      ReqdExctnDt: { Dt: '2026-11-27' },
      Dbtr: { Nm: 'Cashback GmbH + Co. KG' },
      DbtrAcct: { Id: { IBAN: 'DE02120300000000202051' } },
      DbtrAgt: { FinInstnId: { BICFI: 'BYLADEM1001' } },
      ChrgBr: 'SLEV',
    });
    const txs = PmtInf.CdtTrfTxInf;
    expect(txs.map((t: { PmtId: { EndToEndId: string } }) => t.PmtId.EndToEndId)).toEqual(['B12-P7', 'B12-P8', 'B12-P9', 'B12-P10']);
    expect(txs[0]).toMatchObject({ Amt: { InstdAmt: { '#text': '12.50', '@_Ccy': 'EUR' } }, Cdtr: { Nm: 'Anna Mueller' } });
    expect(txs[0].CdtrAgt).toBeUndefined();
    expect(txs[1]).toMatchObject({ Amt: { InstdAmt: { '#text': '0.01' } }, CdtrAgt: { FinInstnId: { BICFI: 'BNPAFRPPXXX' } }, Cdtr: { Nm: 'Zoe Leger' } });
    expect(txs[2]).toMatchObject({
      CdtrAgt: { FinInstnId: { BICFI: 'UBSWCHZH80A' } },
      Cdtr: { Nm: 'Juerg Strasse' },
      CdtrAcct: { Id: { IBAN: 'CH9300762011623852957' } },
    });
    expect(txs[3]).toMatchObject({ Cdtr: { Nm: 'bob- script' }, RmtInf: { Ustrd: 'Cashback GmbH + Co. KG payout 10' } });
  });

  it('writes a pain.001.001.03 file that its ISO schema accepts', async () => {
    const xml = pain001({ ...batch, execution_date: '2026-11-30' }, { ...debtor, bic: null }, items, '03');
    expect(await schemaErrors(xml, 'pain.001.001.03')).toEqual([]);
    const { PmtInf } = parse(xml).Document.CstmrCdtTrfInitn;
    expect(PmtInf.ReqdExctnDt).toBe('2026-11-30');
    expect(PmtInf.DbtrAgt).toEqual({ FinInstnId: { Othr: { Id: 'NOTPROVIDED' } } });
    expect(PmtInf.CdtTrfTxInf[1].CdtrAgt).toEqual({ FinInstnId: { BIC: 'BNPAFRPPXXX' } });
    expect(await schemaErrors(xml.replace('<ChrgBr>SLEV</ChrgBr>', '<ChrgBr>NONE</ChrgBr>'), 'pain.001.001.03')).not.toEqual([]);
    // The other version's file is not this one's.
    expect(await schemaErrors(xml, 'pain.001.001.09')).not.toEqual([]);
  });

  it('is refused by the schema when broken, so the check can fail', async () => {
    const xml = pain001(batch, debtor, items);
    const broken = [
      xml.replace('<ChrgBr>SLEV</ChrgBr>', '<ChrgBr>NONE</ChrgBr>'),
      xml.replace(/<ReqdExctnDt>\s*<Dt>2026-11-27<\/Dt>\s*<\/ReqdExctnDt>/, '<ReqdExctnDt>2026-11-27</ReqdExctnDt>'),
      xml.replace('<InstdAmt Ccy="EUR">12.50</InstdAmt>', '<InstdAmt Ccy="EURO">12.50</InstdAmt>'),
      xml.replace('<EndToEndId>B12-P7</EndToEndId>', ''),
      xml.replace('<IBAN>DE89370400440532013000</IBAN>', '<IBAN>de89370400440532013000</IBAN>'),
    ];
    for (const b of broken) expect(b).not.toBe(xml);
    for (const b of broken) expect(await schemaErrors(b, 'pain.001.001.09')).not.toEqual([]);
  });

  it('gives the same file, ids included, whenever the same batch is written', () => {
    const a = pain001(batch, debtor, items);
    expect(pain001(batch, debtor, items)).toBe(a);
    expect(a).toContain(`<MsgId>${sepaMessageId(12)}</MsgId>`);
    expect(pain001({ ...batch, id: 13 }, debtor, items)).toContain('<MsgId>CASHTRACK-BATCH-13</MsgId>');
  });

  it('escapes what a name or reference could smuggle into the XML', async () => {
    const xml = pain001(batch, { ...debtor, name: 'A</Nm><Evil>x' }, [item({ display_name: '"><x y="' })]);
    expect(xml).not.toContain('<Evil>');
    expect(await schemaErrors(xml, 'pain.001.001.09')).toEqual([]);
  });

  it('refuses an empty batch, an item that cannot go by SEPA and a debtor account that is not one', () => {
    expect(() => pain001(batch, debtor, [])).toThrow(expect.objectContaining({ code: 'svc_sepa_empty_batch', status: 409 }));
    expect(() => pain001(batch, debtor, [item(), item({ payout_id: 99, currency: 'USD' })])).toThrow(
      expect.objectContaining({ code: 'svc_sepa_item_invalid', status: 409, data: expect.objectContaining({ payout_id: 99 }) }),
    );
    expect(() => pain001(batch, debtor, [item(), item()])).toThrow(expect.objectContaining({ code: 'svc_sepa_item_invalid' }));
    expect(() => pain001(batch, { name: '李', iban: 'DE02 1203 0000 0000 2020 51' }, [item()])).toThrow(
      expect.objectContaining({ code: 'svc_sepa_not_configured', data: { missing: ['name'] } }),
    );
    expect(() => pain001(batch, { ...debtor, iban: 'DE03120300000000202051' }, [item()])).toThrow(
      expect.objectContaining({ code: 'svc_sepa_not_configured', data: { missing: ['iban'] } }),
    );
  });
});
