// The AI provider: any OpenAI-compatible chat-completions endpoint, through the openai SDK. The
// SDK's own retries are off (maxRetries 0): it sleeps for whatever Retry-After a server sends and
// an AbortSignal does not interrupt that sleep, so a cancelled bulk run would hang. Retries here
// are capped (Retry-After too) and a signal stops both the request and the wait at once.
//
// Output is structured: `response_format: json_schema` (strict), falling back to `json_object`
// for a provider that refuses the schema (remembered per provider, so a run does not pay the
// refusal on every call). The content is parsed and validated by the caller's Joi schema; anything
// else is refused with `svc_ai_bad_output` and a reason, never half-used.
//
// The SDK fetches through the outbound guard (src/outbound/fetch-api.ts): the base URL is a
// setting, and the key rides on every request, so the provider is held to the same rules as a
// feed or a logo (no private address unless allowed, no redirect, the size and time caps). What a
// failed provider answered is never quoted back: only its status and a short error code.
import { createRequire } from 'node:module';
import type OpenAI from 'openai';
import type Joi from 'joi';
import { isServiceError, ServiceError } from '../../errors.js';
import { guardedFetch, type FetchingGuard } from '../../outbound/index.js';

// The SDK is loaded with the first provider made: a command that calls no AI never pays for it.
const require = createRequire(import.meta.url);
const sdk = () => require('openai') as typeof import('openai');

export interface ProviderSettings {
  base_url: string;
  api_key: string;
  model: string;
  temperature: number;
  timeout_ms: number;
  max_attempts: number;
  retry_base_ms: number;
  retry_max_ms: number;
  retry_after_max_seconds: number;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export type OutputFormat = 'json_schema' | 'json_object';

/** Why an answer was refused (`data.reason` of svc_ai_bad_output). */
export type BadOutputReason = 'empty' | 'malformed_json' | 'wrong_shape' | 'refusal' | 'truncated';

export interface StructuredRequest<T> {
  messages: ChatMessage[];
  /** The schema's name (letters, digits, _ and -) and the JSON Schema asked for. */
  name: string;
  jsonSchema: Record<string, unknown>;
  /** Validates (and may convert) the parsed content: the same schema the routes use. */
  validate: Joi.ObjectSchema<T>;
  signal?: AbortSignal;
}

export interface StructuredAnswer<T> {
  value: T;
  model: string;
  usage: Usage;
  format: OutputFormat;
  attempts: number;
}

/** What every call spent, also when it failed: tokens are billed for a refused answer too. */
export interface CallTrace {
  model: string;
  usage: Usage;
  attempts: number;
  format: OutputFormat;
}

/** A failed call: the error, and what it spent. */
export class ProviderCallError extends Error {
  constructor(
    readonly error: ServiceError,
    readonly trace: CallTrace,
  ) {
    super(error.message);
    this.name = 'ProviderCallError';
  }
}

const ZERO: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

function addUsage(a: Usage, b: Partial<Usage> | null | undefined): Usage {
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
  const prompt = a.prompt_tokens + n(b?.prompt_tokens);
  const completion = a.completion_tokens + n(b?.completion_tokens);
  const total = a.total_tokens + (n(b?.total_tokens) || n(b?.prompt_tokens) + n(b?.completion_tokens));
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
}

export function badOutput(reason: BadOutputReason, message: string, extra: Record<string, unknown> = {}): ServiceError {
  return new ServiceError('svc_ai_bad_output', `The AI provider's answer was refused (${reason}): ${message}`, 502, { reason, ...extra });
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Seconds (or an HTTP date) of a Retry-After header, in ms; null when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** True for a 400 that says the provider does not take `response_format: json_schema`. */
function refusesSchema(err: unknown): boolean {
  if (!(err instanceof sdk().APIError) || (err.status !== 400 && err.status !== 422)) return false;
  const text = `${err.message} ${JSON.stringify(err.error ?? '')} ${err.param ?? ''}`.toLowerCase();
  return text.includes('response_format') || text.includes('json_schema');
}

type Failure = { retry: boolean; waitMs: number | null; error: ServiceError };

/** Calls one provider. */
export class AiProvider {
  private readonly client: OpenAI;

  /**
   * `formats` remembers, per provider and model (one provider's models differ in what they take),
   * that it refused json_schema; share one map between the providers a process builds so the
   * memory outlives a settings change elsewhere.
   */
  constructor(
    private readonly settings: ProviderSettings,
    guard: FetchingGuard,
    private readonly formats: Map<string, OutputFormat> = new Map(),
    private readonly random: () => number = Math.random,
  ) {
    this.client = new (sdk().OpenAI)({
      baseURL: settings.base_url,
      apiKey: settings.api_key,
      timeout: settings.timeout_ms,
      maxRetries: 0,
      fetch: guardedFetch(guard, { timeoutMs: settings.timeout_ms }),
    });
  }

  get model(): string {
    return this.settings.model;
  }

  /** The format asked for next from this provider. */
  get format(): OutputFormat {
    return this.formats.get(this.formatKey) ?? 'json_schema';
  }

  private get formatKey(): string {
    return `${this.settings.base_url} ${this.settings.model}`;
  }

  /**
   * One structured answer: retried on 429, 5xx, timeouts and connection errors (capped backoff,
   * Retry-After capped too), falling back to json_object when the schema is refused. Throws a
   * ProviderCallError (with what the call spent) for a bad answer or a provider error; the
   * signal's reason, at once, when it aborts.
   */
  async complete<T>(request: StructuredRequest<T>): Promise<StructuredAnswer<T>> {
    const s = this.settings;
    let usage = ZERO;
    let model = s.model;
    let attempts = 0;
    const trace = (): CallTrace => ({ model, usage, attempts, format: this.format });
    for (;;) {
      request.signal?.throwIfAborted();
      attempts++;
      const format = this.format;
      let completion: OpenAI.Chat.Completions.ChatCompletion;
      // The SDK adds an abort listener to the signal it is given and never removes it: given a bulk
      // job's signal, a thousand calls would leave a thousand listeners on it. It gets a signal of
      // this attempt's own, tied to the caller's for as long as the attempt lasts.
      const attempt = new AbortController();
      const forward = () => attempt.abort(request.signal!.reason);
      request.signal?.addEventListener('abort', forward, { once: true });
      try {
        completion = await this.client.chat.completions.create(
          {
            model: s.model,
            temperature: s.temperature,
            messages: format === 'json_object' ? withShapeHint(request.messages, request.jsonSchema) : request.messages,
            response_format:
              format === 'json_schema'
                ? { type: 'json_schema', json_schema: { name: request.name, strict: true, schema: request.jsonSchema } }
                : { type: 'json_object' },
          },
          { signal: attempt.signal },
        );
      } catch (err) {
        request.signal?.removeEventListener('abort', forward);
        if (request.signal?.aborted) throw request.signal.reason;
        if (format === 'json_schema' && refusesSchema(err)) {
          // Not the provider's fault nor an attempt of ours: ask again in the form it takes.
          this.formats.set(this.formatKey, 'json_object');
          attempts--;
          continue;
        }
        const failure = this.classify(err, attempts);
        if (!failure.retry || attempts >= s.max_attempts) throw new ProviderCallError(withAttempts(failure.error, attempts), trace());
        await sleep(this.backoff(attempts, failure.waitMs), request.signal);
        continue;
      }
      request.signal?.removeEventListener('abort', forward);
      usage = addUsage(usage, completion.usage);
      if (typeof completion.model === 'string' && completion.model) model = completion.model.slice(0, 191);
      try {
        const value = this.read(completion, request.validate);
        return { value, model, usage, format, attempts };
      } catch (err) {
        throw new ProviderCallError(err as ServiceError, trace());
      }
    }
  }

  /** The validated content of an answer, or svc_ai_bad_output. */
  private read<T>(completion: OpenAI.Chat.Completions.ChatCompletion, schema: Joi.ObjectSchema<T>): T {
    const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined;
    if (!choice?.message) throw badOutput('empty', 'it has no choice.');
    const message = choice.message;
    if (typeof message.refusal === 'string' && message.refusal.trim()) throw badOutput('refusal', message.refusal.trim().slice(0, 300));
    if (choice.finish_reason === 'content_filter') throw badOutput('refusal', 'the provider filtered the content.');
    if (choice.finish_reason === 'length') throw badOutput('truncated', 'it stopped at the token limit before the JSON was complete.');
    const content = typeof message.content === 'string' ? message.content.trim() : '';
    if (!content) throw badOutput('empty', 'it has no content.');
    let parsed: unknown;
    try {
      parsed = JSON.parse(stripFence(content));
    } catch {
      throw badOutput('malformed_json', 'its content is not JSON.');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw badOutput('wrong_shape', 'its content is not a JSON object.');
    const { value, error } = schema.validate(parsed, { abortEarly: false, convert: true, stripUnknown: true, errors: { wrap: { label: false } } });
    if (error)
      throw badOutput(
        'wrong_shape',
        error.details
          .map((d) => d.message)
          .join('; ')
          .slice(0, 500),
        { fields: [...new Set(error.details.map((d) => d.path.join('.')))].slice(0, 20) },
      );
    return value as T;
  }

  private classify(err: unknown, attempts: number): Failure {
    if (err instanceof sdk().APIUserAbortError) return { retry: false, waitMs: null, error: providerError('aborted', 'The call was aborted.', null) };
    const timedOut = (): Failure => ({
      retry: true,
      waitMs: null,
      error: providerError('timeout', `The provider did not answer within ${this.settings.timeout_ms} ms.`, null),
    });
    if (err instanceof sdk().APIConnectionTimeoutError) return timedOut();
    if (err instanceof sdk().APIConnectionError) {
      // The guard's refusals reach here as the cause: a destination it refuses is not retried.
      const cause = (err as { cause?: unknown }).cause;
      if (isServiceError(cause) && cause.code === 'svc_fetch_blocked') {
        const reason = cause.data.reason;
        if (reason === 'timeout') return timedOut();
        if (reason === 'too_large')
          return {
            retry: false,
            waitMs: null,
            error: providerError('too_large', `The provider's answer is larger than ${String(cause.data.max_bytes)} bytes (outbound.max_bytes).`, null),
          };
        if (reason !== 'connection_failed') return { retry: false, waitMs: null, error: cause };
      }
      return { retry: true, waitMs: null, error: providerError('connection', 'The provider could not be reached.', null) };
    }
    if (err instanceof sdk().APIError && typeof err.status === 'number') {
      const status = err.status;
      const code = errorCode(err.error);
      const detail = code ? `, ${code}` : '';
      if (status === 429)
        return {
          retry: true,
          waitMs: retryAfterMs(err.headers?.get('retry-after')),
          error: providerError('rate_limited', `The provider is rate limiting (429) after ${attempts} attempt(s).`, status),
        };
      if (status >= 500 || status === 408 || status === 409)
        return {
          retry: true,
          waitMs: retryAfterMs(err.headers?.get('retry-after')),
          error: providerError('server_error', `The provider failed (${status}${detail}) after ${attempts} attempt(s).`, status),
        };
      if (status === 401 || status === 403)
        return {
          retry: false,
          waitMs: null,
          error: providerError(
            'unauthorized',
            `The provider refused the API key (${status}): check ai.api_key (\`cashtrack ai configure --api-key-stdin\`).`,
            status,
          ),
        };
      if (status >= 300 && status < 400)
        return {
          retry: false,
          waitMs: null,
          error: providerError('redirected', `The provider answered with a redirect (${status}), which is not followed: check ai.base_url.`, status),
        };
      return { retry: false, waitMs: null, error: providerError('refused', `The provider refused the request (${status}${detail}).`, status) };
    }
    // A body that is not JSON surfaces as a plain SyntaxError from the SDK; its message quotes the
    // body, so it is not passed on.
    return { retry: false, waitMs: null, error: providerError('bad_response', "The provider's answer could not be read (it is not JSON).", null) };
  }

  /** Capped exponential backoff with jitter; a Retry-After within the cap is honoured as it is. */
  private backoff(attempt: number, retryAfter: number | null): number {
    const s = this.settings;
    if (retryAfter !== null) return Math.min(retryAfter, s.retry_after_max_seconds * 1000);
    const ceiling = Math.min(s.retry_max_ms, s.retry_base_ms * 2 ** (attempt - 1));
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }
}

/**
 * The provider's own error code or type (`model_not_found`, `invalid_request_error`), when it is a
 * short word: all of a failed answer that is passed on. Its message and the rest of its body are
 * not (they may be any page that answered, and may echo the key).
 */
function errorCode(body: unknown): string | null {
  const error = body && typeof body === 'object' ? (body as Record<string, unknown>) : null;
  for (const value of [error?.code, error?.type]) if (typeof value === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(value)) return value;
  return null;
}

function providerError(reason: string, message: string, status: number | null): ServiceError {
  return new ServiceError('svc_ai_provider_error', message, 502, { reason, ...(status === null ? {} : { provider_status: status }) });
}

function withAttempts(err: ServiceError, attempts: number): ServiceError {
  return new ServiceError(err.code, err.message, err.status, { ...err.data, attempts });
}

/** Some providers wrap JSON in a Markdown fence even when asked for an object. */
function stripFence(text: string): string {
  const m = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/i.exec(text);
  return m ? m[1] : text;
}

/** json_object mode needs the word JSON and the shape in the prompt itself. */
function withShapeHint(messages: ChatMessage[], schema: Record<string, unknown>): ChatMessage[] {
  const hint = `Answer with one JSON object matching this JSON Schema, and nothing else: ${JSON.stringify(schema)}`;
  const [first, ...rest] = messages;
  if (first?.role === 'system') return [{ role: 'system', content: `${first.content}\n\n${hint}` }, ...rest];
  return [{ role: 'system', content: hint }, ...messages];
}
