/**
 * `agentic-runtime/http`: the HTTP service as a library, so an application serves the API (REST,
 * WebSocket, SSE, the UI) for a runtime it made itself, with its own agents and LLM client.
 *
 * ```ts
 * import { createRuntime } from 'agentic-runtime';
 * import { createLogger, loadConfig, startServer } from 'agentic-runtime/http';
 *
 * const config = loadConfig(process.env); // AGENTIC_PORT, AGENTIC_API_KEY, … as for `npm start`
 * const runtime = createRuntime({
 *   workflowsDir: config.workflowsDir,
 *   runsDir: config.runsDir,
 *   agents: { lookup_customer },
 *   llm: myLlmClient,
 * });
 * const server = await startServer({ config, runtime, logger: createLogger({ level: 'info' }) });
 * console.log(server.url); // … later: await server.close() (closes the runtime too)
 * ```
 *
 * @packageDocumentation
 */

/** Starts the service (Koa app, WebSocket hub, run history) on `config.host:config.port`. */
export { startServer, type RunningServer, type ServerOptions } from './server.js';
export type { AgenticApp } from './app.js';
/** The service configuration from an environment record (docs/configuration.md). */
export { loadConfig, type Config } from '../config/index.js';
/** The service's pino logger (credentials redacted); `format: 'text'` for one line per record. */
export { createLogger, type Logger, type LogOptions } from '../log.js';
