// A member's data requests: GET /members/{id}/data (the export, streamed as one JSON document)
// and POST /members/{id}/erase (anonymise, keep every amount).
import { Readable } from 'node:stream';
import { none } from '../../fields.js';
import { memberSchemas } from '../../services/members/schemas.js';
import { RestResponse, route, type RouteDef } from '../rest/types.js';

export const membersRoutes: RouteDef[] = [
  route({
    id: 'members.data',
    method: 'GET',
    path: '/members/{id}/data',
    auth: 'manage_options',
    description: "Everything held about one member as one JSON document (an access request's answer), streamed; _fields and _envelope do not apply.",
    validate: { params: memberSchemas.memberId, query: none() },
    async handler({ params, actor }, ctx) {
      const parts = await ctx.members.exportDocument(params.id, actor);
      return new RestResponse(Readable.from(parts, { objectMode: false }), 200, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Disposition': `attachment; filename="member-${params.id}-data.json"`,
        'Cache-Control': 'no-store',
      });
    },
  }),
  route({
    id: 'members.erase',
    method: 'POST',
    path: '/members/{id}/erase',
    auth: 'manage_options',
    description:
      'Erase (anonymise) a member, keeping every amount: 409 svc_member_has_balance / svc_member_payout_in_flight unless force with a note. A second call answers the same.',
    validate: { params: memberSchemas.memberId, payload: memberSchemas.erase },
    handler: ({ params, payload, actor }, ctx) => ctx.members.erase(params.id, payload, actor),
  }),
];
