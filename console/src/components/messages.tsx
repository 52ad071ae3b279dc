import { JsonView } from './json-view';

interface ToolCall {
  name: string;
  args: unknown;
}

function toolCalls(message: Record<string, unknown>): ToolCall[] {
  const calls = message.tool_calls;
  if (!Array.isArray(calls)) return [];
  return calls.map((call: unknown) => {
    if (typeof call !== 'object' || call === null) return { name: '?', args: call };
    const record = call as Record<string, unknown>;
    const fn = (record.function ?? record) as Record<string, unknown>;
    const name = typeof fn.name === 'string' ? fn.name : '?';
    return { name, args: fn.arguments ?? fn.input ?? fn.args };
  });
}

/** A step's conversation: each message's role and content, and the tool calls it made. */
export function Messages({ messages }: { messages: readonly unknown[] }) {
  return (
    <ol class="messages">
      {messages.map((message, index) => {
        if (typeof message !== 'object' || message === null) {
          return (
            <li key={index}>
              <JsonView value={message} label={`message ${index + 1}`} />
            </li>
          );
        }
        const record = message as Record<string, unknown>;
        const role = typeof record.role === 'string' ? record.role : 'message';
        const calls = toolCalls(record);
        return (
          <li key={index}>
            <strong>{role}</strong>
            {typeof record.name === 'string' ? <span class="hint"> {record.name}</span> : null}
            {record.content === undefined ||
            record.content === null ||
            record.content === '' ? null : (
              <JsonView value={record.content} label={`${role} message ${index + 1}`} />
            )}
            {calls.length > 0 ? (
              <ul aria-label="Tool calls">
                {calls.map((call, i) => (
                  <li key={i}>
                    tool call <code>{call.name}</code>
                    <JsonView value={call.args} label={`arguments of ${call.name}`} />
                  </li>
                ))}
              </ul>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}
