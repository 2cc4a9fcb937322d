// The connect-time half of the guard: request-filtering-agent's http and https agents (which refuse
// every address ipaddr.js does not call unicast, for IP literals and for every address a lookup
// returns, at the moment the socket is made) with the one range it lets through added: IPv4-compatible
// IPv6 (::/96). One agent per request hop, told the exact private addresses the allow list admits.
import type { LookupAddress } from 'node:dns';
import { isIP, Socket, type TcpNetConnectOpts } from 'node:net';
import type { Duplex } from 'node:stream';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { refusedRange } from './addresses.js';

type ConnectionListener = (error: Error | null, socket: Duplex) => void;
type LookupCallback = (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;
type Lookup = (hostname: string, options: { all?: boolean }, callback: LookupCallback) => void;

/** Raised inside an agent when the address dialled is refused; the guard turns it into `private_address`. */
export class AddressRefused extends Error {
  readonly address: string;
  constructor(address: string, range: string) {
    super(`The address ${address} is refused (${range}).`);
    this.name = 'AddressRefused';
    this.address = address;
  }
}

/** The ::/96 check request-filtering-agent lacks, unless the address is admitted by the allow list. */
function ipv4CompatibleRefusal(address: string, admitted: ReadonlySet<string>): AddressRefused | null {
  if (admitted.has(address) || isIP(address) !== 6) return null;
  return refusedRange(address) === 'ipv4Compatible' ? new AddressRefused(address, 'ipv4Compatible') : null;
}

function refusedSocket(error: Error, listener?: ConnectionListener): Socket {
  const socket = new Socket();
  if (listener) listener(error, socket);
  else process.nextTick(() => socket.destroy(error));
  return socket;
}

/** Wraps a lookup so that an IPv4-compatible address in its answer fails the connection. */
function checkedLookup(lookup: Lookup, admitted: ReadonlySet<string>): Lookup {
  return (hostname, options, callback) => {
    lookup(hostname, options, (err, address, family) => {
      if (err) return callback(err);
      const list = Array.isArray(address) ? address.map((a) => a.address) : [address ?? ''];
      for (const one of list) {
        const refusal = ipv4CompatibleRefusal(one, admitted);
        if (refusal) return callback(refusal);
      }
      callback(null, address, family);
    });
  };
}

export interface HopAgentOptions {
  /** Private addresses the allow list admits for this hop (exact strings, as the lookup answers them). */
  admitted: string[];
}

function connect(
  base: (options: TcpNetConnectOpts, listener?: ConnectionListener) => Duplex | Socket,
  options: TcpNetConnectOpts,
  admitted: ReadonlySet<string>,
  listener?: ConnectionListener,
): Duplex | Socket {
  const host = options.host ?? '';
  const literal = ipv4CompatibleRefusal(host.replace(/^\[(.*)\]$/, '$1'), admitted);
  if (literal) return refusedSocket(literal, listener);
  if (!options.lookup) return refusedSocket(new Error('The guard dials only addresses it resolved and checked itself.'), listener);
  return base({ ...options, lookup: checkedLookup(options.lookup as unknown as Lookup, admitted) as unknown as TcpNetConnectOpts['lookup'] }, listener);
}

/** An http agent for one hop: request-filtering-agent's checks plus ::/96. */
export class GuardHttpAgent extends RequestFilteringHttpAgent {
  private readonly admitted: ReadonlySet<string>;
  constructor({ admitted }: HopAgentOptions) {
    super({ keepAlive: false, allowIPAddressList: admitted, allowPrivateIPAddress: false, allowMetaIPAddress: false });
    this.admitted = new Set(admitted);
  }
  override createConnection(options: TcpNetConnectOpts, listener?: ConnectionListener): Duplex | Socket {
    return connect((o, l) => super.createConnection(o, l), options, this.admitted, listener);
  }
}

/** An https agent for one hop: request-filtering-agent's checks plus ::/96. */
export class GuardHttpsAgent extends RequestFilteringHttpsAgent {
  private readonly admitted: ReadonlySet<string>;
  constructor({ admitted }: HopAgentOptions) {
    super({ keepAlive: false, allowIPAddressList: admitted, allowPrivateIPAddress: false, allowMetaIPAddress: false });
    this.admitted = new Set(admitted);
  }
  override createConnection(options: TcpNetConnectOpts, listener?: ConnectionListener): Duplex | Socket {
    return connect((o, l) => super.createConnection(o, l), options, this.admitted, listener);
  }
}
