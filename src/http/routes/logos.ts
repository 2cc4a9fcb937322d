// Shop logos: POST /advertisers/{module}/{advertiser}/logo (fetch one: 201 when fetched, 200 with
// the logo on file), and the bulk run at /advertisers/logos (GET its state, POST starts it: 202,
// DELETE cancels it). The media files themselves are served outside the namespace (media-routes.ts).
import { none } from '../../fields.js';
import { advertiserSchemas } from '../../services/advertisers/schemas.js';
import { logoSchemas } from '../../services/logos/schemas.js';
import { accepted, RestResponse, route, type RouteDef } from '../rest/types.js';

export const logosRoutes: RouteDef[] = [
  route({
    id: 'advertisers.logo',
    // What was made is the advertiser's logo: the advertiser answers it (`logo`, its media URL).
    location: ({ module, advertiser }) => `/advertisers/${encodeURIComponent(module)}/${encodeURIComponent(advertiser)}`,
    method: 'POST',
    path: '/advertisers/{module}/{advertiser}/logo',
    auth: 'manage_options',
    description:
      "Fetch the advertiser's logo (the network's logo URL, else the shop's site icons, else /favicon.ico) into local media: 201 when fetched, 200 with the logo on file (without force); 422 svc_logo_not_found lists what was tried.",
    validate: { params: advertiserSchemas.key, payload: logoSchemas.fetch },
    async handler({ params, payload, actor }, ctx) {
      const result = await ctx.logos.fetch(params.module, params.advertiser, { force: Boolean(payload.force), actor });
      return new RestResponse(result, result.fetched ? 201 : 200);
    },
  }),
  route({
    id: 'logos.bulk.state',
    method: 'GET',
    path: '/advertisers/logos',
    auth: 'manage_options',
    description: 'The bulk logo run: the latest logos.bulk job with its progress, and how many active advertisers have and lack a logo.',
    validate: { query: none() },
    handler: (_input, ctx) => ctx.logoBulk.state(),
  }),
  route({
    id: 'logos.bulk.start',
    method: 'POST',
    path: '/advertisers/logos',
    auth: 'manage_options',
    description:
      'Start a bulk logo run (202 with the job): advertisers without a logo (all of them with force), optionally of one network and status; 409 svc_job_already_running while one is queued or running.',
    validate: { payload: logoSchemas.bulk },
    handler: async ({ payload, actor }, ctx) => accepted(await ctx.logoBulk.start(payload, actor)),
  }),
  route({
    id: 'logos.bulk.cancel',
    method: 'DELETE',
    path: '/advertisers/logos',
    auth: 'manage_options',
    description: 'Cancel the queued or running bulk logo run (it stops after the fetches under way); 409 svc_job_not_running when none is.',
    validate: { payload: none() },
    handler: ({ actor }, ctx) => ctx.logoBulk.cancel(actor),
  }),
];
