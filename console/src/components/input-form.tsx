import type { InputDescriptor } from '../../../src/generated/api/dag-response';

/** What a field holds while edited: text for most types, a boolean for checkboxes. */
export type FieldValue = string | boolean;

/** The form's starting values: each input's default, as the field shows it. */
export function initialValues(inputs: readonly InputDescriptor[]): Record<string, FieldValue> {
  const values: Record<string, FieldValue> = {};
  for (const input of inputs) values[input.name] = toField(input, input.default);
  return values;
}

/** A value (a default, a dataset sample's) as the field of `input` shows it. */
export function toField(input: InputDescriptor, value: unknown): FieldValue {
  if (input.type === 'boolean' && input.enum === null) return value === true;
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  // Numbers and booleans print as themselves; objects and arrays as indented JSON.
  return JSON.stringify(value, null, 2);
}

/**
 * The form's values as `input_data`: numbers parsed, JSON fields parsed, empty optional fields
 * left out (the workflow's default applies). Returns the problems instead when a field does not
 * parse; the service checks the rest (422 naming each input).
 */
export function toInputData(
  inputs: readonly InputDescriptor[],
  values: Readonly<Record<string, FieldValue>>,
): { data: Record<string, unknown> } | { problems: string[] } {
  const data: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const input of inputs) {
    const raw = values[input.name];
    if (typeof raw === 'boolean') {
      data[input.name] = raw;
      continue;
    }
    const text = raw ?? '';
    if (text.trim() === '' && input.type !== 'string') {
      if (input.required) problems.push(`${input.name}: required`);
      continue;
    }
    if (text === '' && !input.required) continue;
    switch (input.type) {
      case 'string':
        data[input.name] = text;
        break;
      case 'integer':
      case 'number': {
        const number = Number(text);
        if (!Number.isFinite(number) || (input.type === 'integer' && !Number.isInteger(number))) {
          problems.push(
            `${input.name}: not ${input.type === 'integer' ? 'an integer' : 'a number'}`,
          );
        } else {
          data[input.name] = number;
        }
        break;
      }
      case 'boolean':
        data[input.name] = text === 'true';
        break;
      case 'object':
      case 'array':
        try {
          data[input.name] = JSON.parse(text) as unknown;
        } catch {
          problems.push(`${input.name}: not valid JSON`);
        }
        break;
      default: {
        const never: never = input.type;
        throw new Error(`unknown input type ${String(never)}`);
      }
    }
  }
  return problems.length > 0 ? { problems } : { data };
}

interface InputFieldsProps {
  inputs: readonly InputDescriptor[];
  values: Readonly<Record<string, FieldValue>>;
  onChange: (name: string, value: FieldValue) => void;
}

/** One labelled field per workflow input, from its type, enum and default. */
export function InputFields({ inputs, values, onChange }: InputFieldsProps) {
  if (inputs.length === 0) return <p class="hint">This workflow takes no inputs.</p>;
  return (
    <>
      {inputs.map((input) => {
        const id = `input-${input.name}`;
        const hintId = `${id}-hint`;
        const value = values[input.name];
        const hint = [input.description, `${input.type}${input.required ? ', required' : ''}`]
          .filter(Boolean)
          .join(' · ');
        const common = { id, name: input.name, 'aria-describedby': hintId };
        let field;
        if (input.enum !== null) {
          field = (
            <select
              {...common}
              required={input.required}
              value={String(value ?? '')}
              onChange={(event) => onChange(input.name, event.currentTarget.value)}
            >
              {input.required ? null : <option value="">(default)</option>}
              {input.enum.map((option) => (
                <option key={String(option)} value={String(option)}>
                  {String(option)}
                </option>
              ))}
            </select>
          );
        } else if (input.type === 'boolean') {
          field = (
            <input
              {...common}
              type="checkbox"
              checked={value === true}
              onChange={(event) => onChange(input.name, event.currentTarget.checked)}
            />
          );
        } else if (
          input.type === 'object' ||
          input.type === 'array' ||
          // A text input drops line breaks from its value: multi-line text gets a text area.
          (input.type === 'string' && (String(value ?? '').includes('\n') || multiLine(input)))
        ) {
          field = (
            <textarea
              {...common}
              required={input.required}
              spellcheck={false}
              value={String(value ?? '')}
              onInput={(event) => onChange(input.name, event.currentTarget.value)}
            />
          );
        } else if (input.type === 'string') {
          field = (
            <input
              {...common}
              type="text"
              required={input.required}
              value={String(value ?? '')}
              onInput={(event) => onChange(input.name, event.currentTarget.value)}
            />
          );
        } else {
          field = (
            <input
              {...common}
              type="number"
              step={input.type === 'integer' ? 1 : 'any'}
              required={input.required}
              value={String(value ?? '')}
              onInput={(event) => onChange(input.name, event.currentTarget.value)}
            />
          );
        }
        return (
          <div class="field" key={input.name}>
            <label for={id}>
              {input.name}
              {input.required ? ' *' : ''}
            </label>
            {field}
            <p class="hint" id={hintId}>
              {hint}
            </p>
          </div>
        );
      })}
    </>
  );
}

function multiLine(input: InputDescriptor): boolean {
  return typeof input.default === 'string' && input.default.includes('\n');
}
