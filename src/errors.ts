// The one error type services throw. `code` is stable (clients branch on it), `message` is for
// people, `status` is the HTTP status the REST host answers with, `data` adds fields to `data`.
export class ServiceError extends Error {
  readonly code: string;
  readonly status: number;
  readonly data: Record<string, unknown>;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Record<string, string>;

  constructor(code: string, message: string, status = 400, data: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    this.status = status;
    this.data = data;
    this.headers = headers;
  }
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof ServiceError;
}

export const notFound = (code: string, what: string): ServiceError => new ServiceError(code, `${what} not found.`, 404);
