import type { Middleware } from 'koa';
import type { Config } from '../../config/index.js';
import { AppError, ERROR_CODES } from '../../errors.js';
import type { Logger } from '../../log.js';
import {
  CLASSIFICATIONS,
  SanitizerDepthError,
  sanitize,
  type SanitizationResult,
} from '../../security/index.js';
import { takeRawBody, type RequestBody } from './body.js';

export interface SanitizerOptions {
  /** The sanitizer to run; tests pass a failing one to exercise fail-closed/fail-open. */
  sanitize?: (value: unknown, raw: string | Uint8Array | undefined) => SanitizationResult;
}

/** Koa state written by this middleware (`ctx.state.sanitization`). */
export interface SanitizationState {
  sanitization?: SanitizationResult;
}

/**
 * Runs the sanitization pipeline on every parsed request body (`ctx.request.body`, set by
 * the body parser for any content type) before any route sees it:
 * - `blocked` → 400 `{detail}` naming the categories (never the matched text);
 * - `redacted` → the body is replaced by the cleaned copy, header `X-Sanitization: redacted`;
 * - `requires_approval` → proceeds (cleaned copy, redactions applied), logged at warn with
 *   pattern names and locations, header `X-Sanitization: requires_approval`;
 * - `clean` → untouched.
 * The result is kept on `ctx.state.sanitization`. If the sanitizer itself throws, the
 * request fails closed (500) unless AGENTIC_SANITIZER_FAIL_OPEN=1, which lets it through
 * unsanitized with an error log. Bodies nested deeper than the sanitizer walks are a 400
 * in both modes.
 */
/** What {@link SanitizeBody} made of a body: the body routes see and the classification. */
export interface SanitizedBody {
  /** The body to go on with: the cleaned copy when something was redacted. */
  body: unknown;
  /** Undefined when the sanitizer failed and AGENTIC_SANITIZER_FAIL_OPEN let the body through. */
  result: SanitizationResult | undefined;
  /** The `X-Sanitization` header value, when the body was changed or flagged. */
  header: string | undefined;
}

/**
 * The policy of {@link createSanitizer} for one parsed body, without Koa: throws the same
 * 400/500 AppErrors, logs the same lines. The MCP server (src/http/mcp) runs a tool call's
 * arguments through it, so they are sanitized exactly as a `POST /api/run` body is.
 */
export type SanitizeBody = (body: unknown, raw: string | Uint8Array | undefined) => SanitizedBody;

export function createBodySanitizer(
  config: Config,
  logger: Logger,
  opts: SanitizerOptions = {},
): SanitizeBody {
  const run =
    opts.sanitize ??
    ((value: unknown, raw: string | Uint8Array | undefined) =>
      sanitize(value, raw === undefined ? {} : { raw }));
  return (body, raw) => {
    let result: SanitizationResult;
    try {
      result = run(body, raw);
    } catch (error) {
      if (error instanceof SanitizerDepthError) {
        throw new AppError(ERROR_CODES.BAD_REQUEST, 'Request body is nested too deeply', {
          status: 400,
        });
      }
      if (config.sanitizerFailOpen) {
        logger.error({ err: error }, 'sanitizer failed; request let through (fail-open)');
        return { body, result: undefined, header: undefined };
      }
      throw new AppError(ERROR_CODES.INTERNAL, 'Sanitizer failed', { status: 500, cause: error });
    }
    const summary = result.findings.map((f) => ({
      category: f.category,
      pattern_name: f.pattern_name,
      location: f.location,
      severity: f.severity,
    }));
    switch (result.classification) {
      case CLASSIFICATIONS.BLOCKED: {
        const categories = [...new Set(result.findings.map((f) => f.category))].sort();
        logger.info({ findings: summary, input_hash: result.input_hash }, 'request blocked');
        throw new AppError(
          ERROR_CODES.BLOCKED,
          `Request blocked by sanitization policy: ${categories.join(', ')}`,
          { status: 400 },
        );
      }
      case CLASSIFICATIONS.REQUIRES_APPROVAL:
        logger.warn(
          { findings: summary, input_hash: result.input_hash },
          'request flagged for review',
        );
        return { body: result.cleaned_value, result, header: result.classification };
      case CLASSIFICATIONS.REDACTED:
        logger.info({ findings: summary, input_hash: result.input_hash }, 'request redacted');
        return { body: result.cleaned_value, result, header: result.classification };
      case CLASSIFICATIONS.CLEAN:
        return { body, result, header: undefined };
      default: {
        const exhaustive: never = result.classification;
        throw new Error(`unknown classification ${String(exhaustive)}`);
      }
    }
  };
}

export function createSanitizer(
  config: Config,
  logger: Logger,
  opts: SanitizerOptions = {},
): Middleware {
  const sanitizeBody = createBodySanitizer(config, logger, opts);
  return async (ctx, next) => {
    const body: unknown = ctx.request.body;
    // The raw bytes (from createBodyParser; a raw string from another parser) must not outlive
    // this point: routes only ever see the cleaned body.
    const raw = takeRawBody(ctx.request) ?? ctx.request.rawBody;
    delete ctx.request.rawBody;
    if (body === undefined) {
      await next();
      return;
    }
    const sanitized = sanitizeBody(body, raw);
    if (sanitized.result !== undefined) {
      (ctx.state as SanitizationState).sanitization = sanitized.result;
    }
    if (sanitized.body !== body) ctx.request.body = sanitized.body as RequestBody;
    if (sanitized.header !== undefined) ctx.set('X-Sanitization', sanitized.header);
    await next();
  };
}
