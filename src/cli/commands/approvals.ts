import { InvalidArgumentError, type Command } from 'commander';
import type { ApprovalDecisionRequest } from '../../generated/api/approval-decision-request.js';
import type { ApprovalsResponse } from '../../generated/api/approvals-response.js';
import type { CliContext } from './index.js';
import { CliError, out } from '../io.js';
import {
  createServiceClient,
  DEFAULT_SERVICE_URL,
  detailOf,
  parseServiceUrl,
  type ServiceClient,
} from '../service-client.js';

interface ServiceOptions {
  url: string;
}

/** Adds `--url` to a subcommand. */
function withUrl(command: Command): Command {
  return command.option(
    '-u, --url <url>',
    'the service (its API key from AGENTIC_API_KEY)',
    parseServiceUrl,
    DEFAULT_SERVICE_URL,
  );
}

/** A positive number option (an integer with `integer`). */
function parsePositive(integer: boolean): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (!(value > 0) || (integer && !Number.isInteger(value))) {
      throw new InvalidArgumentError(integer ? 'a positive integer' : 'a positive number');
    }
    return value;
  };
}

/**
 * `agentic approvals list | approve <call_id> | deny <call_id> | answer <call_id> <json> | raise
 * <call_id> --tokens N --usd X`: the tool calls a running service holds for a person
 * (AGENTIC_APPROVAL_PROVIDER=http), the questions of its human steps and its runs paused at their
 * budget (docs/budgets.md), through `GET /api/approvals` and `POST /api/approvals/{call_id}`.
 */
export function registerApprovals(program: Command, context: CliContext): void {
  const client = async (options: ServiceOptions): Promise<ServiceClient> => {
    const { loadConfig } = await import('../../config/load-config.js');
    return createServiceClient(options.url, loadConfig(context.env).apiKey);
  };
  const approvals = program
    .command('approvals')
    .description(
      "list, approve or deny the tool calls a running service holds for approval; answer its human steps' questions",
    );

  withUrl(approvals.command('list').description('the tool calls waiting, oldest first'))
    .option('--json', 'print the answer of GET /api/approvals')
    .action(async (options: ServiceOptions & { json?: boolean }) => {
      const service = await client(options);
      const { status, body } = await service.request('GET', '/api/approvals');
      if (status !== 200) throw new CliError(`${service.url}: HTTP ${status}: ${detailOf(body)}`);
      const listing = body as ApprovalsResponse;
      if (options.json === true) {
        out(JSON.stringify(listing, null, 2));
        return;
      }
      if (listing.approvals.length === 0) {
        out(
          listing.provider === 'http'
            ? 'no tool call waits for approval'
            : `no tool call waits for approval: the service's approval provider is ${listing.provider}, which decides without a person`,
        );
        return;
      }
      const rows = [
        ['CALL', 'RUN', 'WORKFLOW', 'STEP', 'TOOL', 'EXPIRES'],
        ...listing.approvals.map((call) => [
          call.call_id,
          call.run_id,
          call.workflow,
          call.step,
          call.tool_name,
          call.expires_at ?? '-',
        ]),
      ];
      const widths = rows[0]!.map((_, column) =>
        Math.max(...rows.map((row) => row[column]?.length ?? 0)),
      );
      for (const row of rows) {
        out(
          row
            .map((cell, column) =>
              column === row.length - 1 ? cell : cell.padEnd(widths[column]!),
            )
            .join('  '),
        );
      }
    });

  withUrl(
    approvals
      .command('answer <call_id> <json>')
      .description(
        "answer a human step's question with a JSON object matching its schema (agentic approvals list --json shows the prompt and schema)",
      ),
  ).action(async (callId: string, json: string, options: ServiceOptions) => {
    let answer: unknown;
    try {
      answer = JSON.parse(json);
    } catch (error) {
      throw new CliError(`the answer is not JSON: ${error instanceof Error ? error.message : ''}`);
    }
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
      throw new CliError('the answer must be a JSON object, e.g. \'{"approved": true}\'');
    }
    const service = await client(options);
    const request: ApprovalDecisionRequest = { answer: answer as Record<string, unknown> };
    const { status, body } = await service.request(
      'POST',
      `/api/approvals/${encodeURIComponent(callId)}`,
      request,
    );
    if (status === 200) {
      out(`answered ${callId}`);
      return;
    }
    if (status === 404) {
      throw new CliError(
        `no question waits for an answer with id ${callId} at ${service.url} (agentic approvals list shows the waiting ones)`,
      );
    }
    throw new CliError(
      status === 409 || status === 422
        ? detailOf(body)
        : `${service.url}: HTTP ${status}: ${detailOf(body)}`,
    );
  });

  withUrl(
    approvals
      .command('raise <call_id>')
      .description(
        'raise the budget of a run paused at it (kind budget in agentic approvals list): each limit given must be above what the run has spent',
      ),
  )
    .option('--tokens <n>', 'the new max_tokens', parsePositive(true))
    .option('--usd <x>', 'the new max_cost_usd (US dollars)', parsePositive(false))
    .action(async (callId: string, options: ServiceOptions & { tokens?: number; usd?: number }) => {
      if (options.tokens === undefined && options.usd === undefined) {
        throw new CliError('give the new limit: --tokens <n> and/or --usd <x>');
      }
      const service = await client(options);
      const request: ApprovalDecisionRequest = {
        budget: {
          ...(options.tokens === undefined ? {} : { max_tokens: options.tokens }),
          ...(options.usd === undefined ? {} : { max_cost_usd: options.usd }),
        },
      };
      const { status, body } = await service.request(
        'POST',
        `/api/approvals/${encodeURIComponent(callId)}`,
        request,
      );
      if (status === 200) {
        out(`raised ${callId}: the run goes on`);
        return;
      }
      if (status === 404) {
        throw new CliError(
          `no run waits for its budget with id ${callId} at ${service.url} (agentic approvals list shows the waiting ones)`,
        );
      }
      throw new CliError(
        status === 409 || status === 422
          ? detailOf(body)
          : `${service.url}: HTTP ${status}: ${detailOf(body)}`,
      );
    });

  for (const decision of ['approve', 'deny'] as const) {
    withUrl(
      approvals
        .command(`${decision} <call_id>`)
        .description(`${decision} a waiting tool call (its id from agentic approvals list)`),
    )
      .option('--reason <text>', 'why, recorded with the decision')
      .action(async (callId: string, options: ServiceOptions & { reason?: string }) => {
        const service = await client(options);
        const request: ApprovalDecisionRequest = {
          decision,
          ...(options.reason === undefined ? {} : { reason: options.reason }),
        };
        const { status, body } = await service.request(
          'POST',
          `/api/approvals/${encodeURIComponent(callId)}`,
          request,
        );
        if (status === 200) {
          out(`${decision === 'approve' ? 'approved' : 'denied'} ${callId}`);
          return;
        }
        if (status === 404) {
          throw new CliError(
            `no tool call waits for approval with id ${callId} at ${service.url} (agentic approvals list shows the waiting ones)`,
          );
        }
        if (status === 409) throw new CliError(detailOf(body));
        throw new CliError(`${service.url}: HTTP ${status}: ${detailOf(body)}`);
      });
  }
}
