// `exports.run`: writes one export's file (POST /exports, `cashtrack export`): the rows of its kind
// under its filters, streamed chunk by chunk into `<data_dir>/exports/`. Progress counts rows.
import Joi from 'joi';
import type { JobType } from '../registry.js';

export const exportsRun: JobType<{ export_id: number }> = {
  type: 'exports.run',
  description: 'Write the file of one export (orders, ledger entries, payouts, balances, clicks or claims as CSV or JSON Lines).',
  params: Joi.object({
    export_id: Joi.number().integer().min(1).required().description('The export whose file to write.'),
  }),
  run: (ctx, job) => ctx.exports.run(job.params.export_id, job),
};
