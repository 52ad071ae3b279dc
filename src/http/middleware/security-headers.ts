import type { Middleware } from 'koa';

export interface SecurityHeadersOptions {
  /**
   * Content-Security-Policy value, or `false` for none. The default allows only same-origin
   * resources (scripts, styles, workers, WebSocket) plus inline styles and `data:`/`blob:`
   * images and workers, which the locally served Swagger UI and ReDoc need.
   */
  contentSecurityPolicy?: string | false;
}

const DEFAULT_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self' ws: wss:",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Standard response hardening headers, set before the route runs (errors get them too). */
export function securityHeaders(options: SecurityHeadersOptions = {}): Middleware {
  const csp = options.contentSecurityPolicy ?? DEFAULT_CSP;
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
    ctx.set('X-DNS-Prefetch-Control', 'off');
    ctx.set('X-Permitted-Cross-Domain-Policies', 'none');
    ctx.set('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=()');
    if (csp !== false) ctx.set('Content-Security-Policy', csp);
    if (ctx.secure) ctx.set('Strict-Transport-Security', 'max-age=15552000; includeSubDomains');
    await next();
  };
}
