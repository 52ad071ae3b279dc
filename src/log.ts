import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/** Paths pino replaces with `[Redacted]` wherever they appear in a log record. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'req.headers["sec-websocket-protocol"]',
  'headers["sec-websocket-protocol"]',
  'apiKey',
  '*.apiKey',
  '*.api_key',
  '*.password',
  '*.secret',
  '*.token',
];

export interface LogOptions {
  level?: string;
  format?: 'json' | 'text';
  /** Where records go; defaults to stdout. Tests pass a sink. */
  destination?: NodeJS.WritableStream;
}

/**
 * Creates the process logger. `text` renders one readable line per record; `json` is raw pino.
 * Both redact credentials.
 */
export function createLogger(options: LogOptions = {}): Logger {
  const base: LoggerOptions = {
    level: options.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
    base: null,
  };
  if (options.format === 'text') {
    base.formatters = {};
    base.timestamp = pino.stdTimeFunctions.isoTime;
  }
  const stream = options.destination ?? process.stdout;
  return options.format === 'text' ? pino(base, createTextStream(stream)) : pino(base, stream);
}

function createTextStream(out: NodeJS.WritableStream): { write(line: string): void } {
  return {
    write(line: string): void {
      try {
        const record = JSON.parse(line) as Record<string, unknown>;
        const { time, level, msg, ...rest } = record;
        const stamp = typeof time === 'string' ? time : JSON.stringify(time);
        const name = LEVEL_NAMES[Number(level)] ?? String(level);
        const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
        const text = typeof msg === 'string' ? msg : JSON.stringify(msg ?? '');
        out.write(`${stamp} ${name} ${text}${extra}\n`);
      } catch {
        out.write(line);
      }
    },
  };
}

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** A logger that drops everything: the embedding default. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}
