import Koa from 'koa';
import { loadConfig, packageVersion } from './config/index.js';
import { ConfigError } from './errors.js';
import { createLogger } from './log.js';

function main(): void {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const log = createLogger({ format: config.logFormat, level: config.logLevel });
  const app = new Koa();
  app.use((ctx) => {
    if (ctx.method === 'GET' && ctx.path === '/api/health') {
      ctx.body = { status: 'ok', version: packageVersion };
      return;
    }
    ctx.status = 404;
    ctx.body = { detail: 'Not Found' };
  });
  app.listen(config.port, config.host, () => {
    log.info({ host: config.host, port: config.port }, 'agentic-runtime listening');
  });
}

main();
