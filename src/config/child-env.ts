/** Variables a `shell` child may inherit: enough to find programs and speak a locale. */
const INHERITED = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR'] as const;

/** Names that look like credentials; never passed on, whatever the list above says. */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i;

/**
 * The environment of tool child processes (spec, Safety controls 5): the few variables of
 * {@link INHERITED} that are set, never a key, token or secret, never an `AGENTIC_*` setting.
 * Built from an allowlist rather than by stripping, so a credential under an unexpected name
 * does not leak either. PATH defaults to the system directories.
 */
export function childProcessEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = env[name];
    if (value !== undefined && !SECRET_NAME.test(name)) out[name] = value;
  }
  out.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return out;
}
