import { InvalidArgumentError, type Command } from 'commander';
import { WRITTEN_MODEL_ID } from '../../llm/model-id.js';
import type { CliContext } from './index.js';
import { CliError, err, out } from '../io.js';

interface ChatOptions {
  tier?: number;
  model?: string;
  system?: string;
  temperature?: number;
  llm?: boolean;
}

const INTERRUPTED_EXIT = 130;

/**
 * `agentic chat [--tier N | --model id] "message"`: streams the answer to stdout
 * as it arrives (the model that answered and the usage on stderr). Ctrl-C aborts the request.
 */
export function registerChat(program: Command, context: CliContext): void {
  program
    .command('chat <message...>')
    .description('ask a model; the answer streams to the terminal')
    .option('-t, --tier <n>', 'model tier 1-5 (its fallback chain is tried in order)', parseTier)
    .option(
      '-m, --model <id>',
      'a model instead of a tier: provider:model, or a name a configured provider lists',
      parseModel,
    )
    .option('-s, --system <text>', 'system prompt')
    .option('--temperature <t>', 'sampling temperature 0-2', parseTemperature)
    .option('--no-llm', 'deterministic placeholder answer (sets AGENTIC_NO_LLM=1)')
    .action(async (words: string[], options: ChatOptions) => {
      if (options.tier !== undefined && options.model !== undefined) {
        throw new CliError('give --tier or --model, not both');
      }
      const env = { ...context.env };
      if (options.llm === false) env.AGENTIC_NO_LLM = '1';
      const { loadConfig } = await import('../../config/load-config.js');
      const config = loadConfig(env);
      const [{ createLlmService }, { createNoLlmClient }] = await Promise.all([
        import('../../llm/llm-service.js'),
        import('../../llm/no-llm.js'),
      ]);
      const service = createLlmService(config.llm);
      const client = config.noLlm ? createNoLlmClient() : service.router;
      const controller = new AbortController();
      const onSignal = (): void => controller.abort(new Error('interrupted'));
      process.once('SIGINT', onSignal);
      let streamed = false;
      try {
        const answer = await client.complete({
          tier: options.tier ?? (options.model === undefined ? 2 : 0),
          ...(options.model === undefined ? {} : { model: options.model }),
          system: options.system ?? '',
          prompt: words.join(' '),
          ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
          signal: controller.signal,
          onDelta: (text) => {
            streamed = true;
            process.stdout.write(text);
          },
          onRoute: (model) => err(`→ ${model}`),
        });
        if (!streamed) process.stdout.write(answer.text);
        out('');
        const { input, output, total } = answer.tokensUsed;
        err(`${answer.model} · ${input} in, ${output} out, ${total} tokens`);
      } catch (error) {
        if (controller.signal.aborted) {
          out('');
          err('interrupted');
          process.exitCode = INTERRUPTED_EXIT;
          return;
        }
        throw error;
      } finally {
        process.off('SIGINT', onSignal);
        await service.close();
      }
    });
}

function parseTier(text: string): number {
  const tier = Number(text);
  if (!Number.isInteger(tier) || tier < 1 || tier > 5) {
    throw new InvalidArgumentError('a tier is 1 to 5');
  }
  return tier;
}

function parseModel(text: string): string {
  if (!WRITTEN_MODEL_ID.test(text)) {
    throw new InvalidArgumentError(
      'expected a provider:model id or a model name (e.g. openai:gpt-4.1-mini, gpt-4o-mini)',
    );
  }
  return text;
}

function parseTemperature(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || value > 2) {
    throw new InvalidArgumentError('a temperature is 0 to 2');
  }
  return value;
}
