/**
 * Models: the tier chains with each model's circuit breaker and each provider's connection
 * circuit (`GET /api/models/tiers`, refreshed every 5 s), and the provider probe
 * (`GET /api/models/probe`: which providers answered, their models, each tier's default).
 */
import type { ModelProbeResponse } from '../../../src/generated/api/model-probe-response';
import type { ModelTiersResponse } from '../../../src/generated/api/model-tiers-response';
import { useApi } from '../api';
import { ErrorNote } from '../components/error-note';
import { formatMs, StateBadge, usePolling } from '../components/run-facts';

export function ModelsPage() {
  const tiers = useApi<ModelTiersResponse>('/api/models/tiers');
  usePolling(tiers.reload, 5000);
  const probe = useApi<ModelProbeResponse>('/api/models/probe');
  const defaults = probe.data?.tier_defaults ?? {};
  const skipped = probe.data?.skipped_models ?? {};
  return (
    <section aria-labelledby="models-title">
      <h1 id="models-title">Models</h1>
      <h2>Tier chains</h2>
      <p class="hint">
        Each tier tries its models in this order; a model whose circuit is open is skipped until its
        cool-down ends.
      </p>
      <ErrorNote error={tiers.error} />
      <div class="card-list" role="list" aria-label="Tier chains">
        {(tiers.data?.tiers ?? []).map((tier) => (
          <section
            key={tier.tier}
            class="panel"
            role="listitem"
            aria-labelledby={`tier-${tier.tier}`}
          >
            <h3 id={`tier-${tier.tier}`} style="margin:0">
              Tier {tier.tier}
            </h3>
            {defaults[tier.tier] === undefined ? null : (
              <p class="hint">Default now: {defaults[tier.tier]}</p>
            )}
            <ol class="chain" aria-label={`Tier ${tier.tier} chain`}>
              {tier.models.map((m) => {
                const skip = skipped[tier.tier]?.find((s) => s.model === m.model);
                return (
                  <li key={m.model}>
                    <code>{m.model}</code> <StateBadge state={m.circuit} />
                    {m.circuit === 'open' ? ` retry in ${formatMs(m.retry_in_ms) ?? ''}` : ''}
                    {skip === undefined ? '' : ` (skipped: ${skip.reason})`}
                  </li>
                );
              })}
            </ol>
          </section>
        ))}
      </div>
      <h2>Providers</h2>
      <ErrorNote error={probe.error} />
      {probe.loading && probe.data === undefined ? (
        <p aria-live="polite">Probing the providers…</p>
      ) : null}
      <div class="table-wrap" tabIndex={0} role="region" aria-label="Providers">
        <table class="data">
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Probe</th>
              <th scope="col">Circuit</th>
              <th scope="col">Models or reason</th>
            </tr>
          </thead>
          <tbody>
            {providerNames(probe.data, tiers.data).map((name) => {
              const available = probe.data?.available_providers.includes(name) === true;
              const circuit = tiers.data?.providers.find((p) => p.provider === name)?.circuit;
              return (
                <tr key={name}>
                  <td>{name}</td>
                  <td>
                    {probe.data === undefined ? (
                      ''
                    ) : (
                      <StateBadge state={available ? 'available' : 'unavailable'} />
                    )}
                  </td>
                  <td>{circuit === undefined ? '' : <StateBadge state={circuit} />}</td>
                  <td>
                    {available
                      ? (probe.data?.models[name] ?? []).join(', ')
                      : (probe.data?.unavailable_reasons[name] ?? '')}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <div class="row" style="margin-top:0.6rem">
        <button type="button" class="secondary" onClick={probe.reload} disabled={probe.loading}>
          Probe again
        </button>
      </div>
    </section>
  );
}

function providerNames(
  probe: ModelProbeResponse | undefined,
  tiers: ModelTiersResponse | undefined,
): string[] {
  const names = [
    ...(probe?.available_providers ?? []),
    ...(probe?.unavailable_providers ?? []),
    ...(tiers?.providers.map((p) => p.provider) ?? []),
  ];
  return [...new Set(names)];
}
