// Input rules of a member's data requests, shared by the routes and `cashtrack members ...`.
import Joi from 'joi';
import { id, note, lazySchemas } from '../../fields.js';

/** `POST /members/{id}/erase`: `force` (with a note) writes off a positive balance and cancels pending payouts first. */
export interface EraseInput {
  force?: boolean;
  note?: string;
}

export const memberSchemas = lazySchemas(() => ({
  memberId: Joi.object<{ id: number }, true>({ id: id().required() }),
  erase: Joi.object<EraseInput, true>({
    force: Joi.boolean()
      .default(false)
      .description('Erase even with a positive balance or a pending payout: the payouts are cancelled and the balance written off. Needs a note.'),
    note: note().description('Why (required with force): kept on the write-off entry and in the log.'),
  }),
}));
