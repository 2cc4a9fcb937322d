import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pain002 } from '../../../src/services/payouts/sepa-report.js';
import { schemaErrors } from './sepa-schema.js';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, '../../fixtures/iso20022', name), 'utf8');
const V10 = fixture('pain.002.001.10-one-rejected.xml');
const V03 = fixture('pain.002.001.03-one-rejected.xml');

/** A pain.002.001.10 report with only a group status (and its reasons). */
const groupOnly = (status: string, reason = '') => `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10"><CstmrPmtStsRpt>
<GrpHdr><MsgId>BANK-1</MsgId><CreDtTm>2026-11-28T08:00:00</CreDtTm></GrpHdr>
<OrgnlGrpInfAndSts><OrgnlMsgId>CASHTRACK-BATCH-5</OrgnlMsgId><OrgnlMsgNmId>pain.001.001.09</OrgnlMsgNmId><GrpSts>${status}</GrpSts>${reason}</OrgnlGrpInfAndSts>
</CstmrPmtStsRpt></Document>`;

describe('pain.002 status reports', () => {
  it('are real documents: the samples validate against the ISO schemas', async () => {
    expect(await schemaErrors(V10, 'pain.002.001.10')).toEqual([]);
    expect(await schemaErrors(V03, 'pain.002.001.03')).toEqual([]);
    expect(await schemaErrors(groupOnly('RJCT', '<StsRsnInf><Rsn><Cd>FF01</Cd></Rsn></StsRsnInf>'), 'pain.002.001.10')).toEqual([]);
    // And the schema check can fail: a status code longer than the four letters codes have.
    expect(await schemaErrors(V10.replace('<TxSts>RJCT</TxSts>', '<TxSts>REJECTED</TxSts>'), 'pain.002.001.10')).not.toEqual([]);
    expect(await schemaErrors(V03.replace('<p:TxSts>ACCP</p:TxSts>', '<p:TxSts>PAID</p:TxSts>'), 'pain.002.001.03')).not.toEqual([]);
  });

  it('reads a pain.002.001.10 report with one rejected item', () => {
    const report = pain002(V10, ['B12-P7', 'B12-P8', 'B12-P9', 'B12-P10']);
    expect(report).toEqual({
      original_msg_id: 'CASHTRACK-BATCH-12',
      version: 'pain.002.001.10',
      group_status: 'PART',
      results: [
        { item_ref: 'B12-P7', outcome: 'paid', reason: null, reference: 'BANKREF-7' },
        { item_ref: 'B12-P8', outcome: 'failed', reason: 'AC04 (closed account): Konto erloschen & aufgeloest', reference: 'STS-2' },
        { item_ref: 'B12-P9', outcome: 'paid', reason: null, reference: 'STS-3' },
        // Not listed, in a payment only partly accepted: nothing is known of it yet.
        { item_ref: 'B12-P10', outcome: 'pending', reason: null, reference: null },
      ],
    });
  });

  it('reads a pain.002.001.03 report with a namespace prefix and a proprietary reason', () => {
    const report = pain002(V03);
    expect(report.version).toBe('pain.002.001.03');
    expect(report.original_msg_id).toBe('CASHTRACK-BATCH-12');
    expect(report.results).toEqual([
      { item_ref: 'B12-P7', outcome: 'pending', reason: null, reference: null },
      { item_ref: 'B12-P8', outcome: 'failed', reason: 'X123: Empfaenger unbekannt bitte pruefen', reference: 'STS-2' },
    ]);
  });

  it("applies a group's status to every item of the batch the report does not list", () => {
    const rejected = pain002(groupOnly('RJCT', '<StsRsnInf><Rsn><Cd>FF01</Cd></Rsn><AddtlInf>Schema error</AddtlInf></StsRsnInf>'), ['B5-P1', 'B5-P2']);
    expect(rejected.group_status).toBe('RJCT');
    expect(rejected.results).toEqual([
      { item_ref: 'B5-P1', outcome: 'failed', reason: 'FF01 (invalid file format): Schema error', reference: null },
      { item_ref: 'B5-P2', outcome: 'failed', reason: 'FF01 (invalid file format): Schema error', reference: null },
    ]);
    expect(pain002(groupOnly('ACSC'), ['B5-P1']).results).toEqual([{ item_ref: 'B5-P1', outcome: 'paid', reason: null, reference: null }]);
    expect(pain002(groupOnly('ACTC'), ['B5-P1']).results[0].outcome).toBe('pending');
    expect(pain002(groupOnly('RJCT')).results).toEqual([]);
    expect(pain002(groupOnly('RJCT'), ['B5-P1']).results[0].reason).toContain('without a reason');
  });

  it.each([
    ['empty', ''],
    ['not XML', 'hello'],
    ['not well-formed', V10.replace('</TxSts>', '</TxStatus>')],
    ['with a DOCTYPE', `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>${V10.slice(V10.indexOf('<Document'))}`],
    ['of another namespace', V10.replace('pain.002.001.10', 'pain.002.001.99')],
    ['a pain.001', '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"><CstmrCdtTrfInitn/></Document>'],
    ['with two roots', `${V10}<Document/>`],
    ['without an original message id', V10.replace('<OrgnlMsgId>CASHTRACK-BATCH-12</OrgnlMsgId>', '')],
    ['answering a direct debit', V10.replace('<OrgnlMsgNmId>pain.001.001.09', '<OrgnlMsgNmId>pain.008.001.08')],
    ['giving an item two outcomes', V10.replace('<OrgnlEndToEndId>B12-P9</OrgnlEndToEndId>', '<OrgnlEndToEndId>B12-P8</OrgnlEndToEndId>')],
  ])('refuses a report %s with 400 svc_sepa_report_invalid', (_, xml) => {
    expect(() => pain002(xml)).toThrow(expect.objectContaining({ code: 'svc_sepa_report_invalid', status: 400 }));
  });
});
