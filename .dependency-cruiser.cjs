/**
 * The layering rules of ../shared/DESIGN.md §2, checked by `npm test` (`npm run lint:deps`).
 * dependency-cruiser resolves imports the way TypeScript does (tsconfig.json) and tells runtime
 * imports from `import type`, so a cycle of type-only imports (erased at build) is not reported.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'domain-face',
      comment: 'A domain (src/services/<noun>/) is imported from outside only through its index.ts or schemas.ts.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/services/([^/]+)/' },
      to: { path: '^src/services/[^/]+/', pathNot: '^src/services/[^/]+/(index|schemas)\\.tsx?$' },
    },
    {
      name: 'domain-face-between-domains',
      comment: 'One domain imports another only through its index.ts or schemas.ts.',
      severity: 'error',
      from: { path: '^src/services/([^/]+)/' },
      to: { path: '^src/services/[^/]+/', pathNot: ['^src/services/$1/', '^src/services/[^/]+/(index|schemas)\\.tsx?$'] },
    },
    {
      name: 'services-not-up',
      comment: 'Services know nothing of the doors or the composition root: no http/, cli/, jobs/ or context.ts.',
      severity: 'error',
      from: { path: '^src/services/' },
      to: { path: ['^src/http/', '^src/cli/', '^src/jobs/', '^src/context\\.ts$'] },
    },
    {
      name: 'below-services',
      comment: 'Network modules, config, the database layer and the outbound guard sit below the services.',
      severity: 'error',
      from: { path: ['^src/networks/', '^src/config', '^src/db/', '^src/outbound/'] },
      to: { path: '^src/services/' },
    },
    {
      name: 'cli-not-http',
      comment: 'The CLI calls the services in-process, never the HTTP layer.',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'admin-is-an-api-client',
      comment: 'The admin screens reach the daemon only through the documented API, and the daemon does not import them.',
      severity: 'error',
      from: { path: '^admin/' },
      to: { path: '^src/' },
    },
    {
      name: 'daemon-not-admin',
      comment: 'The daemon serves the built screens as files; it never imports their code.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^admin/' },
    },
    {
      name: 'no-runtime-cycle',
      comment: 'No import cycle of runtime imports (type-only imports are erased at build).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(src|admin/src)/',
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js'],
    },
  },
};
