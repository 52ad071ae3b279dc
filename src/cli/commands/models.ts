import type { Command } from 'commander';
import type { CliContext } from './index.js';
import { out } from '../io.js';

/**
 * `agentic models`: the provider probe (each configured provider's model list, no tokens
 * spent), then each tier's chain with its default (`none usable` when no model's provider
 * answered) and the models routing skips because their provider does not list them. `--json`
 * prints the probe result as the service's `GET /api/models/probe` does.
 */
export function registerModels(program: Command, context: CliContext): void {
  program
    .command('models')
    .description('probe the LLM providers and show the tier fallback chains')
    .option('--json', 'print the probe result as JSON')
    .action(async (options: { json?: boolean }) => {
      const [{ createLlmService }, { loadConfig }] = await Promise.all([
        import('../../llm/llm-service.js'),
        import('../../config/load-config.js'),
      ]);
      const service = createLlmService(loadConfig(context.env).llm);
      try {
        const probe = await service.probe();
        if (options.json === true) {
          out(JSON.stringify(probe, null, 2));
          return;
        }
        for (const name of probe.available_providers) {
          const models = probe.models[name] ?? [];
          out(`✓ ${name}: ${models.length} model${models.length === 1 ? '' : 's'}`);
        }
        for (const name of probe.unavailable_providers) {
          out(`✗ ${name}: ${probe.unavailable_reasons[name] ?? 'unavailable'}`);
        }
        for (const [tier, chain] of Object.entries(service.chains)) {
          const chosen = probe.tier_defaults[tier];
          const shown = chain.map((id) => (id === chosen ? `[${id}]` : id)).join(' → ');
          out(`tier ${tier}: ${shown}${chosen === undefined ? ' (none usable)' : ''}`);
          for (const { model, reason } of probe.skipped_models[tier] ?? []) {
            out(`  skipped ${model}: ${reason}`);
          }
        }
      } finally {
        await service.close();
      }
    });
}
