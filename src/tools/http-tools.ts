import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { isPrivateAddress } from './private-address.js';
import { ToolError } from './tool-error.js';
import { TOOL_RISKS, type ToolDefinition } from './types.js';

/** `dns.lookup`'s callback form with `all: true`; tests pass one that maps names to 127.0.0.1. */
export type AddressLookup = (
  hostname: string,
  callback: (error: Error | null, addresses: LookupAddress[]) => void,
) => void;

export interface HttpToolsOptions {
  /** AGENTIC_BLOCK_PRIVATE_IPS: refuse private, loopback and link-local destinations. */
  blockPrivateIps: boolean;
  maxRedirects: number;
  maxResponseBytes: number;
  timeoutMs: number;
  /** Name resolution; the system resolver by default. */
  lookup?: AddressLookup;
  /** Which addresses the block refuses. @default {@link isPrivateAddress} */
  isBlockedAddress?: (address: string) => boolean;
}

const systemLookup: AddressLookup = (hostname, callback) =>
  dnsLookup(hostname, { all: true }, (error, addresses) => callback(error, addresses));

/**
 * `http_get` and `http_post` over undici. With the block on, every address a name resolves to
 * is checked inside the dispatcher's `connect.lookup`, so the check applies to the address
 * actually connected (no rebinding between check and connect); IP literals, which skip the
 * lookup, are checked from the URL (whose parser has already turned decimal, octal and hex
 * spellings into dotted form). Redirects are followed by hand, each hop checked the same way.
 */
export function createHttpTools(options: HttpToolsOptions): {
  tools: ToolDefinition[];
  close: () => Promise<void>;
} {
  const resolveName = options.lookup ?? systemLookup;
  const isBlocked = options.isBlockedAddress ?? isPrivateAddress;
  const guardedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolveName(hostname, (error, addresses) => {
      if (error !== null) return callback(error, '', 4);
      const blocked = options.blockPrivateIps
        ? addresses.find((entry) => isBlocked(entry.address))
        : undefined;
      if (blocked !== undefined) {
        return callback(blockedError(hostname, blocked.address), '', 4);
      }
      if (addresses.length === 0) return callback(new Error(`${hostname} has no address`), '', 4);
      if (lookupOptions.all === true)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
  const dispatcher = new Agent({ connect: { lookup: guardedLookup, timeout: options.timeoutMs } });

  const fetchTool = async (
    tool: string,
    method: 'GET' | 'POST',
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<unknown> => {
    let url = parseUrl(tool, String(args.url));
    let body = method === 'POST' && typeof args.body === 'string' ? args.body : undefined;
    let currentMethod: Dispatcher.HttpMethod = method;
    const headers = (args.headers ?? {}) as Record<string, string>;
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const combined = AbortSignal.any([signal, timeout]);
    for (let hop = 0; ; hop += 1) {
      checkLiteral(tool, url, options.blockPrivateIps, isBlocked);
      let response: Dispatcher.ResponseData;
      try {
        response = await request(url, {
          method: currentMethod,
          headers:
            body === undefined
              ? headers
              : { 'content-type': 'text/plain; charset=utf-8', ...headers },
          body: body ?? null,
          dispatcher,
          signal: combined,
        });
      } catch (error) {
        if (error instanceof Error && (error as { code?: string }).code === 'ERR_BLOCKED_ADDRESS') {
          throw new ToolError(tool, error.message, 'blocked', error);
        }
        const reason = timeout.aborted
          ? `timed out after ${options.timeoutMs} ms`
          : signal.aborted
            ? 'aborted'
            : `request failed (${errorCode(error)})`;
        throw new ToolError(tool, reason, 'request', error);
      }
      const location = response.headers.location;
      if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
        await response.body.dump();
        if (hop >= options.maxRedirects)
          throw new ToolError(tool, `more than ${options.maxRedirects} redirects`, 'redirect');
        url = parseUrl(tool, location, url);
        if (
          response.statusCode === 303 ||
          ((response.statusCode === 301 || response.statusCode === 302) && currentMethod === 'POST')
        ) {
          currentMethod = 'GET';
          body = undefined;
        }
        continue;
      }
      const text = await readCapped(tool, response, options.maxResponseBytes);
      return {
        status: response.statusCode,
        url: url.href,
        headers: pickHeaders(response.headers),
        body: text,
      };
    }
  };

  /** The tools' `check`: the URL's own refusals (names are resolved only when the call runs). */
  const checkUrl = (tool: string, args: Record<string, unknown>): void => {
    checkLiteral(tool, parseUrl(tool, String(args.url)), options.blockPrivateIps, isBlocked);
  };
  const urlArg = { type: 'string', minLength: 1, maxLength: 8192 } as const;
  const headersArg = {
    type: 'object',
    additionalProperties: { type: 'string' },
    maxProperties: 50,
  } as const;
  return {
    tools: [
      {
        name: 'http_get',
        description: 'GETs an http(s) URL: {url, headers?} → {status, url, headers, body}.',
        risk: TOOL_RISKS.HIGH,
        parameters: {
          type: 'object',
          properties: { url: urlArg, headers: headersArg },
          required: ['url'],
          additionalProperties: false,
        },
        check: (args) => checkUrl('http_get', args),
        run: (args, { signal }) => fetchTool('http_get', 'GET', args, signal),
      },
      {
        name: 'http_post',
        description:
          'POSTs a text body to an http(s) URL: {url, body, headers?} → {status, url, headers, body}.',
        risk: TOOL_RISKS.HIGH,
        parameters: {
          type: 'object',
          properties: { url: urlArg, body: { type: 'string' }, headers: headersArg },
          required: ['url', 'body'],
          additionalProperties: false,
        },
        check: (args) => checkUrl('http_post', args),
        run: (args, { signal }) => fetchTool('http_post', 'POST', args, signal),
      },
    ],
    close: () => dispatcher.close(),
  };
}

function parseUrl(tool: string, text: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch (error) {
    throw new ToolError(tool, 'invalid URL', 'url', error);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolError(tool, `scheme ${url.protocol} is not allowed`, 'url');
  if (url.username !== '' || url.password !== '')
    throw new ToolError(tool, 'credentials in URLs are not allowed', 'url');
  return url;
}

function checkLiteral(
  tool: string,
  url: URL,
  block: boolean,
  isBlocked: (address: string) => boolean,
): void {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (block && isIP(host) !== 0 && isBlocked(host)) {
    throw new ToolError(
      tool,
      `destination ${url.hostname} is a private address (AGENTIC_BLOCK_PRIVATE_IPS)`,
      'blocked',
    );
  }
}

function blockedError(hostname: string, address: string): Error {
  const error = new Error(
    `destination ${hostname} resolves to private address ${address} (AGENTIC_BLOCK_PRIVATE_IPS)`,
  );
  (error as Error & { code: string }).code = 'ERR_BLOCKED_ADDRESS';
  return error;
}

async function readCapped(
  tool: string,
  response: Dispatcher.ResponseData,
  max: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += (chunk as Buffer).length;
    if (size > max) {
      response.body.destroy();
      throw new ToolError(tool, `response larger than ${max} bytes`, 'response');
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function pickHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && name !== 'set-cookie')
      out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function errorCode(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  return (error as { code?: string }).code ?? cause?.code ?? 'error';
}
