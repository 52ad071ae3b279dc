/**
 * The tier router: an {@link LlmClient} that answers a request with the first model of its
 * candidates that works. Candidates are the step's pinned model, or the tier's chain. Models
 * whose provider has no credentials and models whose circuit is open are skipped; after a probe
 * (`learnProbe`), so are a chain's models that their provider does not list (when its list
 * names every model it serves), and every model of a provider that could not be reached
 * (provider-circuits.ts) until its cool-down or a probe that reaches it; a failure
 * moves on to the next candidate, except after part of a streamed answer went out (a second
 * model would repeat it). A 429 with a short Retry-After is waited out once on the same model.
 * Each provider has a cap on requests in flight.
 */
import { CircuitBreaker, type BreakerState, type BreakerTransition } from './circuit-breaker.js';
import { InFlightLimiter } from './in-flight-limiter.js';
import { LlmError, withSpentTokens, type LlmErrorKind } from './llm-error.js';
import { parseModelId } from './model-id.js';
import { callCostUsd, type PriceTable } from './prices.js';
import type { TierChains } from './model-chains.js';
import type { ModelResolver } from './model-resolver.js';
import { authoritativeListings, unlistedReason, type ProviderAnswer } from './probe.js';
import { createProviderCircuits, withoutPrefix } from './provider-circuits.js';
import { exhausted } from './router-errors.js';
import {
  addUsage,
  spentTokens,
  type ChatMessage,
  type LlmClient,
  type LlmRequest,
  type LlmResponse,
  type Provider,
  type TokenUsage,
} from './types.js';

/** One provider call as the router saw it (metrics); not called for calls the run aborted. */
export interface LlmCallReport {
  provider: string;
  /** The `provider:model` id of the candidate tried. */
  model: string;
  /** `success`, or the failure's {@link LlmErrorKind}. */
  outcome: 'success' | LlmErrorKind;
  durationMs: number;
  /**
   * Tokens of a successful call, or those a failed call had spent (a stream cut after its usage
   * chunk); with their cost (`costUsd`: null when the model has no price).
   */
  usage?: TokenUsage;
}

/** What the router needs of the provider set. */
export interface ProviderLookup {
  get(name: string): Provider | undefined;
  /** Why a provider is not configured (the variable to set). */
  missing(name: string): string | undefined;
}

export interface RouterOptions {
  providers: ProviderLookup;
  chains: TierChains;
  /** Consecutive failures that open a model's circuit. @default 3 */
  breakerThreshold?: number;
  /** Milliseconds an open circuit waits before one half-open trial. @default 60000 */
  breakerCooldownMs?: number;
  /** Longest Retry-After waited out on the same model, in ms. @default 10000 */
  retryAfterMaxMs?: number;
  /** Requests in flight at once per provider. @default 16 */
  maxInFlight?: number;
  /** Epoch ms. @default Date.now */
  now?: () => number;
  /** Abortable wait (tests record the Retry-After waits). @default a timer */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Told of every provider call (metrics). @default none */
  onCall?: (report: LlmCallReport) => void;
  /**
   * Prices each call's tokens (`tokensUsed.costUsd`, src/llm/prices.ts).
   * @default none: the tokens carry no cost, which reads as unknown
   */
  prices?: PriceTable;
  /** Circuit states shared with other instances (Redis). @default each process its own */
  breakerSharing?: BreakerSharing;
  /**
   * Turns a request's `model` as written (a bare name too) into the `provider:model` to call.
   * @default ids are taken as written
   */
  resolver?: ModelResolver;
  /**
   * Brings the probe's lists up to date before a chain skips a model as unlisted (a model pulled
   * since the last probe). @default the lists of the last probe, however old
   */
  refreshListings?: () => Promise<void>;
}

export { LLM_VARIABLES_HINT } from './router-errors.js';

/** How circuit transitions travel between the instances of a deployment. */
export interface BreakerSharing {
  /** A model's circuit opened or closed here. Never throws. */
  publish(model: string, transition: BreakerTransition): void;
  /** Applies other instances' transitions (and the states known now); returns unsubscribe. */
  subscribe(apply: (model: string, transition: BreakerTransition) => void): () => void;
}

export interface LlmRouter extends LlmClient {
  /** The models a request would try, in order (the pin, or the tier's chain). */
  candidates(tier: number, model?: string): readonly string[];
  /** A model's circuit state. */
  breakerState(model: string): BreakerState;
  /** Milliseconds until a model's open circuit lets a trial call through (0 unless open). */
  breakerRetryInMs(model: string): number;
  /** Every model that has a circuit so far (it was tried), with its state. */
  breakerStates(): { model: string; state: BreakerState }[];
  /** A provider's circuit (connections that could not be made). */
  providerState(provider: string): BreakerState;
  /**
   * Takes a finished probe's answers: a chain then skips the models a provider whose list names
   * every model does not list, and providers it could not reach are skipped until their
   * cool-down (or a probe that reaches them).
   */
  learnProbe(answers: readonly ProviderAnswer[]): void;
}

/** The request carries its own fault: the breaker does not count it against the model. */
const REQUEST_FAULTS = new Set(['invalid_request', 'context_length']);

/**
 * Creates the tier router: an {@link LlmClient} over `options.providers` and `options.chains`
 * with a circuit breaker per model, Retry-After handling and a per-provider in-flight cap (see
 * the module comment for the order of decisions). Rejects with an `LlmError` naming every model
 * tried, or an `llm_not_configured` AppError when nothing could be tried.
 */
export function createLlmRouter(options: RouterOptions): LlmRouter {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? abortableSleep;
  const retryAfterMaxMs = options.retryAfterMaxMs ?? 10_000;
  const breakers = new Map<string, CircuitBreaker>();
  const limiters = new Map<string, InFlightLimiter>();
  const reach = createProviderCircuits({
    threshold: options.breakerThreshold ?? 3,
    cooldownMs: options.breakerCooldownMs ?? 60_000,
    now,
  });
  /** The last probe's lists, of the providers whose list names every model they serve. */
  let listings: ReadonlyMap<string, readonly string[]> = new Map();

  const breakerOf = (model: string): CircuitBreaker => {
    let breaker = breakers.get(model);
    if (breaker === undefined) {
      const sharing = options.breakerSharing;
      breaker = new CircuitBreaker({
        threshold: options.breakerThreshold ?? 3,
        cooldownMs: options.breakerCooldownMs ?? 60_000,
        now,
        ...(sharing === undefined
          ? {}
          : { onTransition: (transition) => sharing.publish(model, transition) }),
      });
      breakers.set(model, breaker);
    }
    return breaker;
  };
  const limiterOf = (provider: string): InFlightLimiter => {
    let limiter = limiters.get(provider);
    if (limiter === undefined) {
      limiter = new InFlightLimiter(options.maxInFlight ?? 16);
      limiters.set(provider, limiter);
    }
    return limiter;
  };

  options.breakerSharing?.subscribe((model, transition) => breakerOf(model).adopt(transition));

  function candidates(tier: number, model?: string): readonly string[] {
    if (model !== undefined) return [options.resolver?.known(model) ?? model];
    return options.chains[String(tier)] ?? [];
  }

  async function complete(request: LlmRequest): Promise<LlmResponse> {
    // A pin that resolves to nothing fails here, before any provider is asked.
    const list =
      request.model === undefined || options.resolver === undefined
        ? candidates(request.tier, request.model)
        : [await options.resolver.resolve(request.model)];
    const skipped: string[] = [];
    /** Providers skipped for the probe's findings (unlisted models, no connection). */
    const unusable = new Set<string>();
    let missingProvider = false;
    let lastError: unknown;
    let streamed = false;
    // Tokens the failed candidate calls reported before failing: the request spent them too.
    let spent: TokenUsage | null = null;
    const onDelta =
      request.onDelta === undefined
        ? undefined
        : (text: string): void => {
            streamed = true;
            request.onDelta?.(text);
          };
    // A pin is asked even when unlisted: the provider's own answer says more than our skip.
    const unlisted = (id: string): string | undefined =>
      request.model === undefined ? unlistedReason(id, listings) : undefined;
    if (options.refreshListings !== undefined && list.some((id) => unlisted(id) !== undefined)) {
      await options.refreshListings();
    }
    for (const id of list) {
      const ref = parseModelId(id);
      if (ref === undefined) {
        skipped.push(`${id}: not a provider:model id`);
        continue;
      }
      const provider = options.providers.get(ref.provider);
      if (provider === undefined) {
        skipped.push(`${id}: ${options.providers.missing(ref.provider) ?? 'unknown provider'}`);
        missingProvider = true;
        continue;
      }
      const notListed = unlisted(id);
      if (notListed !== undefined) {
        skipped.push(`${id}: ${notListed}`);
        unusable.add(ref.provider);
        continue;
      }
      const reachable = reach.acquire(ref.provider);
      if (!reachable.ok) {
        skipped.push(`${id}: ${reachable.reason}`);
        unusable.add(ref.provider);
        continue;
      }
      const breaker = breakerOf(id);
      if (!breaker.tryAcquire()) {
        reach.released(ref.provider);
        skipped.push(`${id}: circuit open (retry in ${Math.ceil(breaker.retryInMs() / 1000)} s)`);
        continue;
      }
      request.onRoute?.(id);
      let waitedRetryAfter = false;
      for (;;) {
        const startedAt = now();
        const attempt = request.onAttempt?.(id);
        try {
          const result = await callProvider(provider, ref.model, request, onDelta);
          breaker.succeeded();
          reach.reached(ref.provider);
          const answeredBy = `${ref.provider}:${result.model}`;
          const usage = priced(result.usage, id, answeredBy);
          options.onCall?.({
            provider: ref.provider,
            model: id,
            outcome: 'success',
            durationMs: now() - startedAt,
            usage,
          });
          const response: LlmResponse = {
            text: result.text,
            model: answeredBy,
            tokensUsed: usage,
            finishReason: result.finishReason,
            toolCalls: result.toolCalls,
          };
          attempt?.({ response });
          return spent === null
            ? response
            : { ...response, tokensUsed: addUsage(spent, usage) ?? usage };
        } catch (error) {
          attempt?.({ error });
          if (request.signal.aborted) {
            breaker.released();
            reach.released(ref.provider);
            // What the cancelled call had spent, priced like any other call's tokens.
            if (error instanceof LlmError && error.spentTokens !== null) {
              error.spentTokens = priced(error.spentTokens, id);
            }
            throw error;
          }
          lastError = error;
          const spentHere = spentTokens(error);
          const spentPriced = spentHere === null ? null : priced(spentHere, id);
          spent = addUsage(spent, spentPriced);
          const kind = error instanceof LlmError ? error.kind : 'transient';
          options.onCall?.({
            provider: ref.provider,
            model: id,
            outcome: kind,
            durationMs: now() - startedAt,
            ...(spentPriced === null ? {} : { usage: spentPriced }),
          });
          const wait = error instanceof LlmError ? error.retryAfterMs : undefined;
          if (error instanceof LlmError && error.unreachable) {
            reach.unreachable(ref.provider, withoutPrefix(ref.provider, error.message));
          } else reach.reached(ref.provider);
          if (
            kind === 'rate_limited' &&
            !waitedRetryAfter &&
            !streamed &&
            wait !== undefined &&
            wait <= retryAfterMaxMs
          ) {
            waitedRetryAfter = true;
            await sleep(wait, request.signal);
            continue;
          }
          if (REQUEST_FAULTS.has(kind)) breaker.released();
          else breaker.failed();
          skipped.push(`${id}: ${error instanceof Error ? error.message : String(error)}`);
          break;
        }
      }
      if (streamed) break;
    }
    const error = exhausted(request, list, skipped, lastError, missingProvider, {
      unusable,
      listings,
    });
    throw spent === null ? error : withSpentTokens(error, spent);
  }

  /**
   * `usage` with its cost: at the price of the id asked for (the table's keys are the ids the
   * chains name), else of the one that answered (a dated snapshot a table may list).
   */
  function priced(usage: TokenUsage, asked: string, answeredBy?: string): TokenUsage {
    const prices = options.prices;
    if (prices === undefined) return usage;
    const costUsd =
      callCostUsd(prices, asked, usage) ??
      (answeredBy === undefined || answeredBy === asked
        ? null
        : callCostUsd(prices, answeredBy, usage));
    return { ...usage, costUsd };
  }

  async function callProvider(
    provider: Provider,
    model: string,
    request: LlmRequest,
    onDelta: ((text: string) => void) | undefined,
  ): ReturnType<Provider['chat']> {
    const limiter = limiterOf(provider.name);
    await limiter.acquire(request.signal);
    try {
      return await provider.chat({
        model,
        messages: messagesOf(request),
        signal: request.signal,
        ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
        ...(request.maxTokens === undefined ? {} : { maxTokens: request.maxTokens }),
        ...(request.tools === undefined ? {} : { tools: request.tools }),
        ...(request.json === undefined ? {} : { json: request.json }),
        ...(onDelta === undefined ? {} : { onDelta }),
      });
    } finally {
      limiter.release();
    }
  }

  return {
    complete,
    candidates,
    breakerState: (model) => breakerOf(model).current(),
    breakerRetryInMs: (model) => breakers.get(model)?.retryInMs() ?? 0,
    breakerStates: () =>
      [...breakers].map(([model, breaker]) => ({ model, state: breaker.current() })),
    providerState: (provider) => reach.state(provider),
    learnProbe(answers) {
      listings = authoritativeListings(answers);
      reach.learn(answers);
    },
  };
}

function messagesOf(request: LlmRequest): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (request.system !== '') messages.push({ role: 'system', content: request.system });
  if (request.messages !== undefined) messages.push(...request.messages);
  else messages.push({ role: 'user', content: request.prompt });
  return messages;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
