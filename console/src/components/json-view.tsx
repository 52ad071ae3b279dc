/** A value as indented JSON (strings as they are). */
export function JsonView({ value, label }: { value: unknown; label: string }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return (
    <pre aria-label={label} tabIndex={0}>
      {text}
    </pre>
  );
}
