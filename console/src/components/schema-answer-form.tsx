/**
 * A form generated from a JSON Schema (a human step's question): string, number, integer,
 * boolean, enum, and objects of those (a fieldset each). Anything else is a JSON text area.
 * The value is built from what was entered (empty optional fields left out); the service checks
 * it against the schema and its 422 is shown by the caller.
 */
import { useState } from 'preact/hooks';

type Schema = Record<string, unknown>;

const asSchema = (value: unknown): Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Schema) : {};

const propertiesOf = (schema: Schema): [string, Schema][] =>
  Object.entries(asSchema(schema.properties)).map(([name, sub]) => [name, asSchema(sub)]);

const requiredOf = (schema: Schema): string[] =>
  Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [];

type Raw = Record<string, unknown>;

function initialRaw(schema: Schema): Raw {
  const raw: Raw = {};
  for (const [name, sub] of propertiesOf(schema)) {
    if (sub.type === 'object' && sub.properties !== undefined) raw[name] = initialRaw(sub);
    else if (sub.default !== undefined)
      raw[name] =
        sub.type === 'boolean'
          ? sub.default
          : typeof sub.default === 'string'
            ? sub.default
            : JSON.stringify(sub.default);
    else raw[name] = sub.type === 'boolean' ? false : '';
  }
  return raw;
}

/** What was entered, typed by the schema; throws on text that is not the JSON a field needs. */
function valueOf(schema: Schema, raw: Raw): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const required = requiredOf(schema);
  for (const [name, sub] of propertiesOf(schema)) {
    const entered = raw[name];
    if (sub.type === 'object' && sub.properties !== undefined) {
      out[name] = valueOf(sub, asSchema(entered));
      continue;
    }
    if (sub.type === 'boolean') {
      out[name] = entered === true;
      continue;
    }
    const text = typeof entered === 'string' ? entered : '';
    if (text === '') {
      if (required.includes(name) && (sub.type === 'string' || sub.type === undefined))
        out[name] = '';
      continue;
    }
    if (sub.type === 'number' || sub.type === 'integer') out[name] = Number(text);
    else if (Array.isArray(sub.enum)) {
      out[name] = sub.enum.find((option) => String(option) === text) ?? text;
    } else if (sub.type === 'string') out[name] = text;
    else {
      try {
        out[name] = JSON.parse(text);
      } catch {
        throw new Error(`${name}: not valid JSON`);
      }
    }
  }
  return out;
}

interface FieldsProps {
  schema: Schema;
  raw: Raw;
  idPrefix: string;
  onChange: (raw: Raw) => void;
}

function Fields({ schema, raw, idPrefix, onChange }: FieldsProps) {
  const required = requiredOf(schema);
  return (
    <>
      {propertiesOf(schema).map(([name, sub]) => {
        const id = `${idPrefix}-${name}`;
        const title = typeof sub.title === 'string' ? sub.title : name;
        const description = typeof sub.description === 'string' ? sub.description : undefined;
        const mark = required.includes(name) ? ' (required)' : '';
        const set = (value: unknown): void => onChange({ ...raw, [name]: value });
        const hint =
          description === undefined ? null : (
            <p class="hint" id={`${id}-hint`}>
              {description}
            </p>
          );
        const described = description === undefined ? undefined : `${id}-hint`;
        if (sub.type === 'object' && sub.properties !== undefined) {
          return (
            <fieldset key={name}>
              <legend>
                {title}
                {mark}
              </legend>
              {hint}
              <Fields schema={sub} raw={asSchema(raw[name])} idPrefix={id} onChange={set} />
            </fieldset>
          );
        }
        if (sub.type === 'boolean') {
          return (
            <div key={name}>
              <label class="check-row" for={id}>
                <input
                  id={id}
                  type="checkbox"
                  checked={raw[name] === true}
                  aria-describedby={described}
                  onChange={(event) => set(event.currentTarget.checked)}
                />
                {title}
                {mark}
              </label>
              {hint}
            </div>
          );
        }
        const text = typeof raw[name] === 'string' ? raw[name] : '';
        let control;
        if (Array.isArray(sub.enum)) {
          control = (
            <select
              id={id}
              value={text}
              aria-describedby={described}
              onChange={(event) => set(event.currentTarget.value)}
            >
              <option value="">(none)</option>
              {sub.enum.map((option) => (
                <option key={String(option)} value={String(option)}>
                  {String(option)}
                </option>
              ))}
            </select>
          );
        } else if (sub.type === 'number' || sub.type === 'integer') {
          control = (
            <input
              id={id}
              type="number"
              step={sub.type === 'integer' ? '1' : 'any'}
              value={text}
              aria-describedby={described}
              onInput={(event) => set(event.currentTarget.value)}
            />
          );
        } else if (sub.type === 'string') {
          control = (
            <input
              id={id}
              type="text"
              value={text}
              aria-describedby={described}
              onInput={(event) => set(event.currentTarget.value)}
            />
          );
        } else {
          control = (
            <textarea
              id={id}
              value={text}
              aria-describedby={described}
              onInput={(event) => set(event.currentTarget.value)}
            />
          );
        }
        return (
          <div key={name}>
            <label for={id}>
              {title}
              {mark}
            </label>
            {hint}
            {control}
          </div>
        );
      })}
    </>
  );
}

export interface SchemaAnswerFormProps {
  schema: Record<string, unknown>;
  /** Unique per form on the page (ids of its fields). */
  idPrefix: string;
  submitLabel: string;
  busy: boolean;
  onSubmit: (value: Record<string, unknown>) => void;
}

export function SchemaAnswerForm({
  schema,
  idPrefix,
  submitLabel,
  busy,
  onSubmit,
}: SchemaAnswerFormProps) {
  const [raw, setRaw] = useState<Raw>(() => initialRaw(schema));
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const plain = propertiesOf(schema).length === 0;
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        try {
          const value = plain
            ? (JSON.parse(
                typeof raw.__json === 'string' && raw.__json !== '' ? raw.__json : '{}',
              ) as Record<string, unknown>)
            : valueOf(schema, raw);
          setProblem(undefined);
          onSubmit(value);
        } catch (error) {
          setProblem(error instanceof Error ? error.message : String(error));
        }
      }}
    >
      {plain ? (
        <>
          <label for={`${idPrefix}-json`}>Answer (JSON)</label>
          <textarea
            id={`${idPrefix}-json`}
            value={typeof raw.__json === 'string' ? raw.__json : ''}
            onInput={(event) => setRaw({ __json: event.currentTarget.value })}
          />
        </>
      ) : (
        <Fields schema={schema} raw={raw} idPrefix={idPrefix} onChange={setRaw} />
      )}
      {problem === undefined ? null : (
        <p class="field-error" role="alert">
          {problem}
        </p>
      )}
      <div class="row" style="margin-top:0.6rem">
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
