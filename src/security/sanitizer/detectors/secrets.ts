import { detector, type Detector } from '../detector.js';
import { fold } from '../fold.js';
import { FINDING_CATEGORIES as C, SEVERITIES as S } from '../types.js';

/**
 * A free-text `name = value` secret is only reported when the value looks like one: not a
 * reference (`${…}`, `{{…}}`, `<…>`, `%…%`, `os.environ[…]`, `settings.SECRET`, an
 * UPPER_CASE variable name, a type name), and either mixing letters and digits or long.
 */
export function looksLikeSecretValue(value: string): boolean {
  if (value.length < 6) return false;
  if (/^[$<%{[(@*]|^\[REDACTED|\(|^(?:null|none|undefined|true|false|nil|string|str)$/i.test(value))
    return false;
  if (/^[A-Z][A-Z0-9_]*$/.test(value)) return false;
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value)) return false;
  if (/^(.)\1+$/.test(value) || /^x+$/i.test(value)) return false;
  const letters = /[A-Za-z]/.test(value);
  const digits = /\d/.test(value);
  return (letters && digits) || (value.length >= 16 && /[^A-Za-z]/.test(value));
}

/** Credentials and key shapes. Specific shapes come first: overlapping spans keep the first. */
export const SECRET_DETECTORS: readonly Detector[] = [
  detector(
    'private_key_block',
    C.PRIVATE_KEY,
    S.CRITICAL,
    /-----BEGIN (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,16384}?-----END (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----)?/g,
    { prefilter: (t) => t.includes('PRIVATE KEY') },
  ),
  detector('putty_private_key', C.PRIVATE_KEY, S.CRITICAL, /PuTTY-User-Key-File-\d: /g, {
    prefilter: (t) => t.includes('PuTTY'),
  }),
  detector('aws_access_key_id', C.SECRET, S.HIGH, /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g),
  detector(
    'aws_secret_access_key',
    C.CREDENTIAL,
    S.HIGH,
    /\baws[\w.-]{0,20}?(?:secret|private)[\w.-]{0,20}?["']?\s{0,4}[:=]\s{0,4}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/dgi,
    { group: 1 },
  ),
  detector('github_token', C.SECRET, S.HIGH, /\bgh[oprsu]_[A-Za-z0-9]{36,255}\b/g),
  detector('github_fine_grained_pat', C.SECRET, S.HIGH, /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g),
  detector(
    'anthropic_api_key',
    C.SECRET,
    S.HIGH,
    /\bsk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{20,200}/g,
  ),
  detector(
    'openai_api_key',
    C.SECRET,
    S.HIGH,
    /\bsk-(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_-]{0,200}\d)(?=[A-Za-z0-9_-]{0,200}[A-Za-z])[A-Za-z0-9_-]{20,200}/g,
    { validate: (m) => !m[0].startsWith('sk-ant-') },
  ),
  detector('google_api_key', C.SECRET, S.HIGH, /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g),
  detector('google_oauth_client_secret', C.SECRET, S.HIGH, /\bGOCSPX-[A-Za-z0-9_-]{28}/g),
  detector(
    'slack_token',
    C.SECRET,
    S.HIGH,
    /\bxox[abposr]-(?:[A-Za-z0-9]{1,60}-){1,6}[A-Za-z0-9]{4,80}/g,
  ),
  detector(
    'slack_webhook_url',
    C.SECRET,
    S.HIGH,
    /https:\/\/hooks\.slack\.com\/(?:services|workflows)\/[A-Za-z0-9/_-]{20,200}/g,
  ),
  detector(
    'stripe_secret_key',
    C.SECRET,
    S.HIGH,
    /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,200}\b/g,
  ),
  detector('stripe_webhook_secret', C.SECRET, S.HIGH, /\bwhsec_[A-Za-z0-9]{24,200}\b/g),
  detector(
    'jwt',
    C.CREDENTIAL,
    S.HIGH,
    /\beyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{0,4096}/g,
  ),
  detector(
    'bearer_token',
    C.CREDENTIAL,
    S.HIGH,
    /\bbearer\s{1,4}((?=[A-Za-z0-9._~+/-]{0,500}\d)[A-Za-z0-9._~+/-]{16,500}=*)/dgi,
    { group: 1 },
  ),
  detector(
    'connection_string_password',
    C.CONNECTION_STRING,
    S.HIGH,
    /\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver|oracle|cockroachdb|clickhouse|snowflake|jdbc:[a-z]{2,20}|ftps?|sftp|smtps?|ldaps?|nats|kafka|couchbases?|neo4j(?:\+s)?):\/\/[^\s:/@'"`]{0,256}:([^\s@'"`/]{1,256})@/dgi,
    { group: 1, prefilter: (t) => t.includes('://') },
  ),
  detector(
    'connection_string_password_kv',
    C.CONNECTION_STRING,
    S.HIGH,
    /(?:^|;)\s{0,4}(?:password|pwd)\s{0,4}=\s{0,4}([^;'"\s]{1,256})/dgim,
    // Only inside `key=value;` lists (ADO/JDBC style); a lone `password=` is the next rule's.
    { group: 1, prefilter: (t) => t.includes(';') && t.includes('=') },
  ),
  detector(
    'key_value_secret',
    C.CREDENTIAL,
    S.HIGH,
    /(?<![A-Za-z0-9])(?:pass(?:word|wd|phrase)|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|(?:secret|signing|encryption|master|license)[_-]?key|client[_-]?secret|auth[_-]?token|credentials?)["']?\s{0,4}(?::|=|:=|=>)\s{0,4}["'`]?([^\s"'`,;)}\]]{6,256})/dgi,
    {
      group: 1,
      validate: (m) => looksLikeSecretValue(m[1] ?? ''),
    },
  ),
];

/**
 * The secret detectors anchored on a word (`password=`, `bearer`, `aws_secret...=`) rather
 * than a key shape: they run when the word gate passes, the others when the shape gate does.
 */
export const WORD_ANCHORED_SECRETS: ReadonlySet<Detector> = new Set(
  SECRET_DETECTORS.filter((d) =>
    [
      'aws_secret_access_key',
      'bearer_token',
      'connection_string_password_kv',
      'key_value_secret',
    ].includes(d.name),
  ),
);

/** JSON property names whose string values are secrets whatever they look like. */
const SECRET_KEY_EXACT = new Set([
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'secret',
  'token',
  'apikey',
  'xapikey',
  'authorization',
  'credential',
  'credentials',
  'privatekey',
  'clientsecret',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'authtoken',
  'sessiontoken',
  'bearertoken',
  'secretkey',
  'secretaccesskey',
  'awssecretaccesskey',
]);
const SECRET_KEY_SUFFIX =
  /(?:password|passwd|passphrase|secret|apikey|accesstoken|authtoken|privatekey|secretkey)$/;

/**
 * Every secret name holds, once lower-cased and stripped to `[a-z0-9]`, one of `pass`,
 * `pwd`, `secret`, `token`, `key`, `authorization`, `credential`. On an ASCII key those
 * letters may only be separated by the characters the stripping drops (`[\W_]`). A key this
 * does not match (and that has no non-ASCII character, which lower-casing could turn into
 * ASCII) is not a secret name: most keys are decided here without allocating.
 */
const SECRET_KEY_HINT = new RegExp(
  `[^\\x00-\\x7F]|${['pass', 'pwd', 'secret', 'token', 'key', 'authorization', 'credential']
    .map((word) => word.split('').join('[\\W_]*'))
    .join('|')}`,
  'i',
);

/** True when a JSON property with this name holds a secret. */
export function isSecretKeyName(key: string): boolean {
  if (key.length > 64 || !SECRET_KEY_HINT.test(key)) return false;
  // A key with anything but printable ASCII is folded first, so `ｐａｓｓｗｏｒｄ` or `pass\u200Bword` is `password`.
  const plain = /[^ -~]/.test(key) ? fold(key).text : key;
  const name = plain.toLowerCase().replace(/[^a-z0-9]/g, '');
  return SECRET_KEY_EXACT.has(name) || SECRET_KEY_SUFFIX.test(name);
}

/** Placeholders and references a secret-named field may legitimately hold. */
export function isSecretPlaceholder(value: string): boolean {
  const v = value.trim();
  return (
    v.length < 4 ||
    /^(?:\$\{?|\{\{|<|%|\[REDACTED|env:|secret:|vault:|\*+$|x+$|changeme$|null$|none$|undefined$)/i.test(
      v,
    )
  );
}
