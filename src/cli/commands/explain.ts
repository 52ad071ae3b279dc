import type { Command } from 'commander';
import type { RunExplanationResponse } from '../../generated/api/run-explanation-response.js';
import type { CliContext } from './index.js';
import { CliError, out } from '../io.js';
import {
  createServiceClient,
  DEFAULT_SERVICE_URL,
  detailOf,
  parseServiceUrl,
} from '../service-client.js';

/** The explanation for a person: the run's sentence, then each step's waits on its own line. */
export function explanationText(answer: RunExplanationResponse): string[] {
  const lines = [answer.message];
  const width = Math.max(0, ...answer.steps.map((step) => step.step.length));
  for (const step of answer.steps) {
    const said = step.waits.map((wait) => wait.message).join('; ');
    // Each wait's message is a whole sentence (it says the state); a step without one shows it.
    lines.push(`  ${step.step.padEnd(width)}  ${said === '' ? step.status : said}`);
  }
  return lines;
}

/**
 * `agentic explain <run_id>`: why a run of a running service is not moving, through `GET
 * /api/runs/{run_id}/explain` (active runs live in the service; ended ones are explained from
 * their run files there too).
 */
export function registerExplain(program: Command, context: CliContext): void {
  program
    .command('explain <run_id>')
    .description("why a run isn't moving: what each unfinished step waits for (a running service)")
    .option(
      '-u, --url <url>',
      'the service (its API key from AGENTIC_API_KEY)',
      parseServiceUrl,
      DEFAULT_SERVICE_URL,
    )
    .option('--json', 'print the answer of GET /api/runs/{run_id}/explain')
    .action(async (runId: string, options: { url: string; json?: boolean }) => {
      const { loadConfig } = await import('../../config/load-config.js');
      const service = createServiceClient(options.url, loadConfig(context.env).apiKey);
      const { status, body } = await service.request(
        'GET',
        `/api/runs/${encodeURIComponent(runId)}/explain`,
      );
      if (status === 404) throw new CliError(`no run ${runId} at ${service.url}`);
      if (status !== 200) throw new CliError(`${service.url}: HTTP ${status}: ${detailOf(body)}`);
      const answer = body as RunExplanationResponse;
      if (options.json === true) {
        out(JSON.stringify(answer, null, 2));
        return;
      }
      for (const line of explanationText(answer)) out(line);
    });
}
