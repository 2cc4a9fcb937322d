// The daemon's own base URL: `server.public_url` when it is configured, else the address the
// daemon listens on (the server sets it once it listens and clears it when it stops), else
// unknown. Built first by the composition root; the postback URLs networks show, the media URLs
// and the test postbacks read it. A CLI command never listens: it knows the URL only from the
// configuration.
import type { Config } from './config/index.js';

export class SelfUrl {
  private listening: string | null = null;

  constructor(private readonly server: Pick<Config['server'], 'public_url'>) {}

  /** The server's listening address once it listens; null once it stops. */
  setListening(url: string | null): void {
    this.listening = url === null ? null : url.replace(/\/+$/, '');
  }

  /** The base URL without a trailing slash, or null while it is unknown. */
  get(): string | null {
    return this.server.public_url?.replace(/\/+$/, '') ?? this.listening;
  }
}
